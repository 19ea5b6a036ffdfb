//! The API's JSON shapes (docs/api.md). They are defined once, in the
//! `toolreg-api` crate that the CLI reads them with; the models build them
//! (`From<&User>`, `From<&Token>`, `models::tool_summary`) and the search
//! engine builds `SearchAnswer`; the controllers send them.

pub use toolreg_api::{
    ChangesFollowed, ConsistencyProof, CreatedToken, EncodableProblem, EncodablePublisher,
    EncodableToken, EncodableTool, EncodableVersion, EncodableVersionSummary, Health,
    InclusionProof, Me, NewTokenRequest, Owners, OwnersChange, PublishedVersion, Resolved,
    SearchAnswer, TokenList, VersionDiff, YankState,
};
