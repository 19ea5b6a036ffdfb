//! The API's JSON shapes (docs/api.md). They are defined once, in the
//! `toolreg-api` crate that the CLI reads them with; the models build them
//! (`From<&User>`, `From<&Token>`, `models::tool_summary`) and the search
//! engine builds `SearchAnswer`; the controllers send them.

pub use toolreg_api::{
    Attestation, AttestationStatement, ChangesFollowed, ConsistencyProof, CreatedToken,
    DeprecationChange, DeprecationRequest, EncodableDeprecation, EncodableProblem,
    EncodablePublisher, EncodableReport, EncodableToken, EncodableTool, EncodableTrustedPublisher,
    EncodableVersion, EncodableVersionSummary, Health, InclusionProof, Me, NewTokenRequest,
    NewTrustedPublisherRequest, OidcExchangeRequest, OidcExchanged, OwnerInvitation,
    OwnerInvitations, Owners, OwnersChange, Provenance, PublishedVersion, QuarantineState,
    ReasonRequest, ReportPage, Resolved, SearchAnswer, TokenList, TrustedPublisherList,
    VersionDiff, VersionPage, YankState, ATTESTATION_HEADER, TOOL_VERSIONS_LISTED,
};
