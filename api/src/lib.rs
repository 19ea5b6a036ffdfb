//! The JSON of the toolreg HTTP API (docs/api.md): the answers the server
//! sends and the CLI reads, the request bodies they exchange, and the
//! paging parameters every paginated list takes ([`PageQuery`]), defined
//! once for all of them.
//!
//! Every type serializes to exactly the bytes the server sends, field order
//! included. Reading is lenient where a newer server may say more: unknown
//! fields are ignored, and a missing optional field reads as `None`.
//!
//! With the `openapi` feature every type also derives `utoipa::ToSchema`,
//! for the server's OpenAPI document; the CLI leaves it off and links no
//! web framework.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolreg_core::{ExecutionKind, Format, Problem, Tier};

mod page;
mod reports;
mod search;
mod skills;
mod trust;

pub use page::{Page, PageError, PageQuery};
pub use reports::{EncodableReport, QuarantineState, ReasonRequest, ReportPage};
pub use search::{FacetCounts, SearchAnswer, SearchFacets, SearchHighlights, SearchHit};
pub use skills::{
    SkillFrontmatter, SkillIndex, SkillIndexEntry, SkillIndexExtension, DISCOVERY_SCHEMA,
};
pub use trust::{
    Attestation, AttestationStatement, EncodableTrustedPublisher, NewTrustedPublisherRequest,
    OidcExchangeRequest, OidcExchanged, Provenance, TrustedPublisherList, ATTESTATION_HEADER,
};

/// A validation finding: a warning on publish, or one entry of a
/// problem+json `errors` list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EncodableProblem {
    /// Field path inside the definition, or a file name in the bundle;
    /// empty for the whole file.
    pub path: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl From<&Problem> for EncodableProblem {
    fn from(p: &Problem) -> Self {
        EncodableProblem {
            path: p.path.clone(),
            message: p.message.clone(),
            fix: p.fix.clone(),
        }
    }
}

impl fmt::Display for EncodableProblem {
    /// `path: message (fix: ...)`, without the path when it is empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)?;
        } else {
            write!(f, "{}: {}", self.path, self.message)?;
        }
        if let Some(fix) = &self.fix {
            write!(f, " (fix: {fix})")?;
        }
        Ok(())
    }
}

/// An error answer, `application/problem+json` (RFC 9457). `kind` is the
/// `type` URI ending in the problem's slug (`not-found`, `blocked`, ...).
/// The server always sends `type`, `title`, `status` and `detail`; a reader
/// takes what is there, since an error may come from a proxy in between.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProblemBody {
    #[serde(rename = "type", default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub kind: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub title: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub status: u16,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub detail: String,
    /// Every problem found in an invalid tool definition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<EncodableProblem>>,
    /// For `tier-forbidden`: the execution kind refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<String>,
    /// For `tier-forbidden`: the lowest tier that may publish it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_tier: Option<String>,
    /// For `tier-forbidden`: the tier the request published with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher_tier: Option<String>,
}

/// 201 answer to a publish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PublishedVersion {
    pub name: String,
    pub version: String,
    pub sha256: String,
    pub size: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub format: Format,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub execution: ExecutionKind,
    /// The tier the version was published with.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub tier: Tier,
    pub publisher: String,
    pub warnings: Vec<EncodableProblem>,
    /// The version's record's index in the transparency log.
    pub log_index: i64,
}

/// An owner or publisher: login and tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EncodablePublisher {
    pub login: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub tier: Tier,
}

/// One version in a tool's version list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EncodableVersionSummary {
    pub version: String,
    pub sha256: String,
    pub size: i64,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    /// Withheld by the registry's administrators until lifted.
    #[serde(default)]
    pub quarantined: bool,
    #[serde(default)]
    pub quarantine_reason: Option<String>,
    /// The owners' deprecation of the version (advice: it is still served
    /// and resolved); null when it is not deprecated.
    #[serde(default)]
    pub deprecated: Option<EncodableDeprecation>,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub execution: ExecutionKind,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub format: Format,
    pub published_at: String,
    pub publisher: String,
    pub downloads: i64,
}

/// `GET /api/v1/tools/{name}`: the listing fields of the latest version
/// (the highest neither yanked nor blocked, else the highest), owners,
/// downloads and every version, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EncodableTool {
    pub name: String,
    pub call_name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub keywords: Vec<String>,
    pub license: Option<String>,
    pub homepage: Option<String>,
    pub repository: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub format: Option<Format>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub execution: Option<ExecutionKind>,
    pub latest_version: Option<String>,
    /// The deprecation of `latest_version`, the version the tool is listed
    /// under (null when it is not deprecated).
    #[serde(default)]
    pub deprecated: Option<EncodableDeprecation>,
    pub downloads: i64,
    pub created_at: String,
    pub updated_at: String,
    pub owners: Vec<EncodablePublisher>,
    /// The newest versions by SemVer, at most [`TOOL_VERSIONS_LISTED`];
    /// `GET /api/v1/tools/{name}/versions` pages through all of them.
    pub versions: Vec<EncodableVersionSummary>,
    /// How many versions the tool has (yanked and blocked ones too).
    #[serde(default)]
    pub versions_total: i64,
}

/// How many versions a tool's summary lists, newest first.
pub const TOOL_VERSIONS_LISTED: i64 = 100;

/// `GET /api/v1/tools/{name}/versions`: one page of a tool's versions,
/// newest first by SemVer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VersionPage {
    pub name: String,
    pub versions: Vec<EncodableVersionSummary>,
    /// How many versions the tool has in all.
    pub total: i64,
    pub page: i64,
    pub per_page: i64,
}

/// `GET /api/v1/tools/{name}/{version}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EncodableVersion {
    pub name: String,
    pub version: String,
    pub sha256: String,
    /// The definition fingerprint: `sha256:` + the SHA-256 of the RFC 8785
    /// (JCS) form of the version's MCP export (null only for a version
    /// published before fingerprints were stored, until the server fills it).
    #[serde(default)]
    pub definition_sha256: Option<String>,
    pub size: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub format: Format,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub execution: ExecutionKind,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    /// Withheld by the registry's administrators until lifted: while it is,
    /// `manifest` is null and `definition` and `readme` are empty.
    #[serde(default)]
    pub quarantined: bool,
    #[serde(default)]
    pub quarantine_reason: Option<String>,
    /// The owners' deprecation of the version (advice: it is still served
    /// and resolved); null when it is not deprecated.
    #[serde(default)]
    pub deprecated: Option<EncodableDeprecation>,
    pub published_at: String,
    pub downloads: i64,
    /// The publisher, with the tier the version was published with.
    pub publisher: EncodablePublisher,
    /// The canonical tool model (`toolreg_core::Tool`) as JSON; null while
    /// the version is blocked, whose contents are withheld.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub manifest: Value,
    pub definition_file: String,
    /// The definition file as published; null while the version is blocked.
    pub definition: Option<String>,
    pub readme: Option<String>,
    /// The version's record's index in the transparency log (null for none).
    pub log_index: Option<i64>,
    /// What the definition lint flagged when the version was published
    /// (`[]` when clean).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub findings: Vec<toolreg_core::lint::Finding>,
    /// The CI run that published the version through trusted publishing;
    /// null for a version published with a user's token.
    #[serde(default)]
    pub provenance: Option<Provenance>,
    /// An Agent Skill's `SKILL.md` frontmatter (null for other formats, and
    /// while the version's contents are withheld).
    #[serde(default)]
    pub skill: Option<SkillFrontmatter>,
}

/// `GET /api/v1/tools/{name}/diff?from=A&to=B`: what changed in the
/// definition an agent's model reads (the MCP export) from version `from`
/// to version `to`, each change with a severity, and the lint findings `to`
/// has that `from` did not (by rule and pointer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VersionDiff {
    pub from: String,
    pub to: String,
    /// `{pointer, kind: added|removed|changed, old, new, severity: high|medium|low}`,
    /// in document order.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub changes: Vec<toolreg_core::diff::DefinitionChange>,
    /// Findings of `to` whose rule and pointer `from` did not have.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub new_findings: Vec<toolreg_core::lint::Finding>,
}

impl VersionDiff {
    /// The highest severity of any change (`None` when nothing changed).
    pub fn highest(&self) -> Option<toolreg_core::diff::ChangeSeverity> {
        self.changes.iter().map(|c| c.severity).max()
    }
}

/// `GET /api/v1/resolve/{name}`: the highest version matching a
/// requirement that is neither yanked nor blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Resolved {
    pub name: String,
    pub version: String,
    pub sha256: String,
    pub size: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub format: Format,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub execution: ExecutionKind,
    pub download_url: String,
}

/// An owner's deprecation of a version: advice not to choose it any more,
/// with why and, optionally, the tool to use instead. A deprecated version
/// is still downloaded, resolved and served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EncodableDeprecation {
    /// Why, in at most 500 characters.
    pub message: String,
    /// An existing tool to use instead.
    #[serde(default)]
    pub successor: Option<String>,
    /// The SemVer requirement the deprecation was set for (`<2.0.0`); null
    /// when it was set for the whole tool.
    #[serde(default)]
    pub req: Option<String>,
}

/// Body of `PUT /api/v1/tools/{name}/deprecation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeprecationRequest {
    /// Why, in 1 to 500 characters.
    pub message: String,
    /// An existing tool to use instead (not the tool itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<String>,
    /// Deprecate only the versions matching this SemVer requirement
    /// (default: every version of the tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub req: Option<String>,
}

/// Answer to `PUT` and `DELETE /api/v1/tools/{name}/deprecation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeprecationChange {
    pub name: String,
    /// The deprecation set (null when it was lifted).
    pub deprecated: Option<EncodableDeprecation>,
    /// The versions the request applied to, newest first (those already in
    /// the state asked for included).
    pub versions: Vec<String>,
    /// How many of them changed.
    pub changed: usize,
}

/// Answer to yank and unyank.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct YankState {
    pub name: String,
    pub version: String,
    pub yanked: bool,
}

/// `GET/PUT/DELETE /api/v1/tools/{name}/owners`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Owners {
    pub owners: Vec<EncodablePublisher>,
    /// Pending invitations: only in answers to an owner's change of owners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invitations: Option<Vec<OwnerInvitation>>,
}

/// An invitation to become an owner of a tool: the invitee becomes an
/// owner when they accept it, before `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OwnerInvitation {
    pub tool: String,
    pub invitee: String,
    pub inviter: String,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339: after this, accepting answers 410 `invitation-expired`.
    pub expires_at: String,
    pub expired: bool,
}

/// `GET /api/v1/me/invitations`, `GET /api/v1/tools/{name}/owners/invitations`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OwnerInvitations {
    pub invitations: Vec<OwnerInvitation>,
}

/// Body of `PUT/DELETE /api/v1/tools/{name}/owners`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OwnersChange {
    pub logins: Vec<String>,
}

/// Body of `POST /api/v1/tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewTokenRequest {
    pub name: String,
    /// Default: all scopes. `publish` is shorthand for `publish-new` and `publish-update`.
    pub scopes: Option<Vec<String>>,
    /// RFC 3339 time after which the token stops working.
    pub expires_at: Option<String>,
    /// An agent token always publishes as `untrusted`.
    pub agent: Option<bool>,
}

/// A token as listed (never with its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EncodableToken {
    pub id: i64,
    pub name: String,
    pub scopes: Vec<String>,
    pub agent: bool,
    pub expires_at: Option<String>,
    pub created_at: String,
    pub last_used_at: Option<String>,
}

/// 201 answer to `POST /api/v1/tokens`: the only time `token` is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedToken {
    pub id: i64,
    pub name: String,
    pub token: String,
    pub scopes: Vec<String>,
    pub agent: bool,
    pub expires_at: Option<String>,
    pub created_at: String,
}

/// `GET /api/v1/tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenList {
    pub tokens: Vec<EncodableToken>,
}

/// `GET /api/v1/me`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Me {
    pub login: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub tier: Tier,
    pub admin: bool,
}

/// `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Health {
    pub status: String,
    pub database: String,
    pub storage: String,
    /// The change log's newest sequence number, and the newest one this
    /// process has applied to its read cache (null until it follows the
    /// log). Equal numbers mean every committed change is reflected here.
    pub changes: ChangesFollowed,
}

/// How far this process follows the change log (in `Health`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChangesFollowed {
    pub latest: Option<i64>,
    pub applied: Option<i64>,
}

/// `GET /api/v1/log/proof/{name}/{version}`: an inclusion proof.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InclusionProof {
    /// The record's index in the log.
    pub index: u64,
    /// The tree size the proof is for.
    pub size: u64,
    /// The record: `toolreg <name> <version> sha256:<hex>\n`.
    pub record: String,
    /// Base64 hashes, leaf side first (RFC 9162 audit path).
    pub proof: Vec<String>,
}

/// `GET /api/v1/log/consistency`: a consistency proof.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConsistencyProof {
    /// Base64 hashes (RFC 9162 `PROOF(from, D[to])`).
    pub proof: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_ignored_and_missing_options_are_none() {
        let me: Me =
            serde_json::from_str(r#"{"login":"alice","tier":"trusted","admin":true,"new":1}"#)
                .unwrap();
        assert_eq!(me.tier, Tier::Trusted);
        let problem: ProblemBody = serde_json::from_str(
            r#"{"type":"https://toolreg.dev/problems/not-found","title":"Not found","status":404,"detail":"no"}"#,
        )
        .unwrap();
        assert_eq!(problem.errors, None);
        assert_eq!(problem.status, 404);
    }

    #[test]
    fn problems_serialize_without_an_absent_fix() {
        let p = EncodableProblem {
            path: "version".into(),
            message: "is not SemVer".into(),
            fix: None,
        };
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"path":"version","message":"is not SemVer"}"#
        );
        assert_eq!(p.to_string(), "version: is not SemVer");
    }

    #[test]
    fn an_unknown_enum_value_is_an_error() {
        let err = serde_json::from_str::<EncodablePublisher>(r#"{"login":"a","tier":"root"}"#)
            .unwrap_err();
        assert!(err.to_string().contains("root"), "{err}");
    }
}
