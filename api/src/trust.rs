//! Trust in a version: where it came from (the provenance trusted
//! publishing records), the trusted publishers that may publish it from CI,
//! the exchange of a CI job's ID token, and the registry's signed
//! attestation of a version.

use serde::{Deserialize, Serialize};

/// Where a version published through trusted publishing came from: the
/// claims of the CI job's OpenID Connect ID token.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Provenance {
    /// The ID token's issuer (`https://token.actions.githubusercontent.com`, ...).
    pub issuer: String,
    /// `org/repo` (GitHub) or `group/project` (GitLab).
    pub repository: String,
    /// The provider's immutable repository ID (GitHub `repository_id`,
    /// GitLab `project_id`), when the ID token carried one. Absent from
    /// provenance recorded before the registry kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_id: Option<String>,
    /// The provider's immutable owner ID (GitHub `repository_owner_id`,
    /// GitLab `namespace_id`), when the ID token carried one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<String>,
    /// The workflow file (GitHub) or CI configuration path (GitLab).
    pub workflow: String,
    /// The git ref the run built (`refs/tags/v1.2.0`).
    #[serde(rename = "ref")]
    pub git_ref: String,
    /// The commit the run built.
    pub sha: String,
    /// The CI run (GitHub `run_id`, GitLab `pipeline_id`).
    pub run_id: String,
}

/// A tool's trusted publisher: a CI identity whose ID tokens may be
/// exchanged for a token that publishes new versions of the tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EncodableTrustedPublisher {
    pub id: i64,
    pub issuer: String,
    pub repository: String,
    /// The repository's immutable ID at the provider, once known (given
    /// when it was added, or recorded by the first exchange). A token for
    /// a repository of the same name but another ID is refused.
    pub repository_id: Option<String>,
    /// The repository owner's immutable ID at the provider, once known.
    pub owner_id: Option<String>,
    pub workflow: String,
    pub environment: Option<String>,
    /// The owner who added it.
    pub created_by: String,
    pub created_at: String,
}

/// `POST /api/v1/tools/{name}/trusted-publishers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewTrustedPublisherRequest {
    pub issuer: String,
    pub repository: String,
    pub workflow: String,
    #[serde(default)]
    pub environment: Option<String>,
    /// The repository's immutable ID (GitHub `repository_id`, GitLab
    /// `project_id`); without it, the first exchange records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_id: Option<String>,
    /// The owner's immutable ID (GitHub `repository_owner_id`, GitLab
    /// `namespace_id`); without it, the first exchange records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<String>,
}

/// `GET /api/v1/tools/{name}/trusted-publishers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TrustedPublisherList {
    pub trusted_publishers: Vec<EncodableTrustedPublisher>,
}

/// `POST /api/v1/oidc/exchange`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OidcExchangeRequest {
    /// The CI job's OpenID Connect ID token (a JWT).
    pub token: String,
    /// The tools the job publishes (`toolreg publish` sends the one it
    /// publishes). Each must have a trusted publisher matching the job, and
    /// the token publishes these only. Without it, the token covers every
    /// matched tool, which must then all be set up by one owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

/// The answer of `POST /api/v1/oidc/exchange`: a token that publishes new
/// versions of `tools` only, until `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OidcExchanged {
    pub token: String,
    pub expires_at: String,
    pub tools: Vec<String>,
}

/// What the registry attests of a version, signed with its transparency
/// log's key (`GET /api/v1/tools/{name}/{version}/attestation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttestationStatement {
    pub name: String,
    pub version: String,
    /// The bundle's SHA-256, hex.
    pub sha256: String,
    /// The definition fingerprint, when the registry stores one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition_sha256: Option<String>,
    pub provenance: Option<Provenance>,
}

/// `GET /api/v1/tools/{name}/{version}/attestation`: the statement, and
/// the signed note whose text is [`ATTESTATION_HEADER`] followed by the
/// statement's RFC 8785 (JCS) JSON and a newline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Attestation {
    pub statement: AttestationStatement,
    pub note: String,
}

/// The first line of an attestation note's text.
pub const ATTESTATION_HEADER: &str = "toolreg attestation v1";
