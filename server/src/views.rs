//! Response (and request) shapes of the HTTP API, as docs/api.md fixes them.

use chrono::{NaiveDateTime, SecondsFormat};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// RFC 3339 UTC text of a stored time.
pub fn rfc3339(t: &NaiveDateTime) -> String {
    t.and_utc().to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// A validation finding (warnings on publish).
#[derive(Debug, Serialize, ToSchema)]
pub struct EncodableProblem {
    pub path: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl From<&toolreg_core::Problem> for EncodableProblem {
    fn from(p: &toolreg_core::Problem) -> Self {
        EncodableProblem {
            path: p.path.clone(),
            message: p.message.clone(),
            fix: p.fix.clone(),
        }
    }
}

/// 201 answer to a publish.
#[derive(Debug, Serialize, ToSchema)]
pub struct PublishedVersion {
    pub name: String,
    pub version: String,
    pub sha256: String,
    pub size: i64,
    pub format: String,
    pub execution: String,
    /// The tier the version was published with.
    pub tier: String,
    pub publisher: String,
    pub warnings: Vec<EncodableProblem>,
    /// The version's record's index in the transparency log.
    pub log_index: i64,
}

/// An owner or publisher: login and tier.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EncodablePublisher {
    pub login: String,
    pub tier: String,
}

impl EncodablePublisher {
    /// A user with their tier as it is now.
    pub fn of(user: &crate::models::User) -> EncodablePublisher {
        EncodablePublisher {
            login: user.login.clone(),
            tier: user.tier().to_string(),
        }
    }
}

/// One version in a tool's version list.
#[derive(Debug, Serialize, ToSchema)]
pub struct EncodableVersionSummary {
    pub version: String,
    pub sha256: String,
    pub size: i64,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    pub execution: String,
    pub format: String,
    pub published_at: String,
    pub publisher: String,
    pub downloads: i64,
}

/// `GET /api/v1/tools/{name}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EncodableTool {
    pub name: String,
    pub call_name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub keywords: Vec<String>,
    pub license: Option<String>,
    pub homepage: Option<String>,
    pub repository: Option<String>,
    pub format: Option<String>,
    pub execution: Option<String>,
    pub latest_version: Option<String>,
    pub downloads: i64,
    pub created_at: String,
    pub updated_at: String,
    pub owners: Vec<EncodablePublisher>,
    pub versions: Vec<EncodableVersionSummary>,
}

/// `GET /api/v1/tools/{name}/{version}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EncodableVersion {
    pub name: String,
    pub version: String,
    pub sha256: String,
    pub size: i64,
    pub format: String,
    pub execution: String,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    pub published_at: String,
    pub downloads: i64,
    pub publisher: EncodablePublisher,
    /// The canonical tool model (toolreg_core::Tool) as JSON.
    #[schema(value_type = Object)]
    pub manifest: Value,
    pub definition_file: String,
    pub definition: String,
    pub readme: Option<String>,
    /// The version's record's index in the transparency log (null for none).
    pub log_index: Option<i64>,
}

/// `GET /api/v1/resolve/{name}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Resolved {
    pub name: String,
    pub version: String,
    pub sha256: String,
    pub size: i64,
    pub format: String,
    pub execution: String,
    pub download_url: String,
}

/// Answer to yank and unyank.
#[derive(Debug, Serialize, ToSchema)]
pub struct YankState {
    pub name: String,
    pub version: String,
    pub yanked: bool,
}

/// `GET/PUT/DELETE /api/v1/tools/{name}/owners`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Owners {
    pub owners: Vec<EncodablePublisher>,
}

/// Body of `PUT/DELETE /api/v1/tools/{name}/owners`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct OwnersChange {
    pub logins: Vec<String>,
}

/// Body of `POST /api/v1/tokens`.
#[derive(Debug, Deserialize, ToSchema)]
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
#[derive(Debug, Serialize, ToSchema)]
pub struct EncodableToken {
    pub id: i64,
    pub name: String,
    pub scopes: Vec<String>,
    pub agent: bool,
    pub expires_at: Option<String>,
    pub created_at: String,
    pub last_used_at: Option<String>,
}

impl From<&crate::models::Token> for EncodableToken {
    fn from(t: &crate::models::Token) -> Self {
        EncodableToken {
            id: t.id,
            name: t.name.clone(),
            scopes: t
                .scopes()
                .into_iter()
                .map(|s| s.as_str().to_string())
                .collect(),
            agent: t.agent,
            expires_at: t.expires_at.as_ref().map(rfc3339),
            created_at: rfc3339(&t.created_at),
            last_used_at: t.last_used_at.as_ref().map(rfc3339),
        }
    }
}

/// 201 answer to `POST /api/v1/tokens`: the only time `token` is shown.
#[derive(Debug, Serialize, ToSchema)]
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
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenList {
    pub tokens: Vec<EncodableToken>,
}

/// `GET /api/v1/me`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    pub login: String,
    pub tier: String,
    pub admin: bool,
}

/// `GET /healthz`.
#[derive(Debug, Serialize, ToSchema)]
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
#[derive(Debug, Serialize, ToSchema)]
pub struct ChangesFollowed {
    pub latest: Option<i64>,
    pub applied: Option<i64>,
}
