//! Publisher tiers: `PUT /api/v1/publishers/{login}/tier` (admins only).
//!
//! The change itself — the tier, the versions it blocks or unblocks, their
//! change-log and audit rows — is [`crate::models::tier::set_tier`], the same
//! function `toolreg-server admin set-tier` calls.

use actix_web::{put, web};
use serde::Serialize;
use serde_json::Value;
use toolreg_core::Tier;

use crate::app::AppState;
use crate::auth::Auth;
use crate::error::{bad_request, AppResult, ProblemBody};
use crate::models::tier::{self, Actor, TierChange, VersionRef};

/// Body of `PUT /api/v1/publishers/{login}/tier`.
#[derive(Debug, utoipa::ToSchema)]
#[allow(dead_code)] // documents the body for OpenAPI; parsed by `parse_body`
pub struct TierRequest {
    /// `untrusted`, `verified` or `trusted`.
    tier: String,
}

/// 200 answer: the publisher's new tier and the versions it blocked or unblocked.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TierChanged {
    pub login: String,
    pub tier: String,
    pub blocked: Vec<VersionRef>,
    pub unblocked: Vec<VersionRef>,
}

impl From<TierChange> for TierChanged {
    fn from(c: TierChange) -> Self {
        TierChanged {
            login: c.login,
            tier: c.to.to_string(),
            blocked: c.blocked,
            unblocked: c.unblocked,
        }
    }
}

/// The tier from the body `{"tier": "..."}`; every other shape is a 400 naming the field.
fn parse_body(body: &[u8]) -> AppResult<Tier> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        bad_request(format!(
            r#"the body is not JSON ({e}); send {{"tier": "untrusted"|"verified"|"trusted"}}"#
        ))
    })?;
    let Value::Object(fields) = value else {
        return Err(bad_request(
            r#"the body must be a JSON object: {"tier": "untrusted"|"verified"|"trusted"}"#,
        ));
    };
    if let Some(other) = fields.keys().find(|k| k.as_str() != "tier") {
        return Err(bad_request(format!(
            "{other}: unknown field; the body has only `tier`"
        )));
    }
    match fields.get("tier") {
        None => Err(bad_request(
            r#"tier: missing; send {"tier": "untrusted"|"verified"|"trusted"}"#,
        )),
        Some(Value::String(s)) => s
            .parse()
            .map_err(|e: String| bad_request(format!("tier: {e}"))),
        Some(other) => Err(bad_request(format!(
            "tier: expected a string (untrusted, verified or trusted), got {other}"
        ))),
    }
}

/// Change a publisher's tier. Versions whose execution kind the new tier may
/// not publish become blocked, and blocked ones the new tier allows are
/// unblocked, in the same transaction (and audited).
#[utoipa::path(tag = "publishers", security(("bearer" = [])),
    params(("login" = String, Path, description = "the publisher's login")),
    request_body(content = TierRequest, content_type = "application/json"),
    responses(
        (status = 200, body = TierChanged),
        (status = 400, description = "bad body; the detail names the field", body = ProblemBody),
        (status = 401, body = ProblemBody),
        (status = 403, description = "not an admin, an agent token, or no `admin` scope", body = ProblemBody),
        (status = 404, description = "no such publisher", body = ProblemBody)))]
#[put("/api/v1/publishers/{login}/tier")]
pub async fn set_tier(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<String>,
    body: web::Bytes,
) -> AppResult<web::Json<TierChanged>> {
    auth.require_admin("change a publisher's tier")?;
    let to = parse_body(&body)?;
    let login = path.into_inner();
    let policy = state.policy.clone();
    let (change, after) = state
        .db
        .write(move |conn| {
            let actor = Actor {
                login: Some(&auth.user.login),
                token_id: Some(auth.token.id),
                via: "api",
            };
            tier::set_tier(conn, &policy, &login, to, actor)
        })
        .await?;
    // Owners' tiers show in every summary of their tools, and blocks change
    // versions: rare enough to forget every cached answer.
    after.apply(&state.cache);
    tracing::info!(login = %change.login, from = %change.from, to = %change.to,
                   blocked = change.blocked.len(), unblocked = change.unblocked.len(), "publisher tier changed");
    Ok(web::Json(change.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_checked_field_by_field() {
        assert_eq!(
            parse_body(br#"{"tier": "verified"}"#).unwrap(),
            Tier::Verified
        );
        for (body, needle) in [
            (&b"nope"[..], "not JSON"),
            (br#"["verified"]"#, "JSON object"),
            (br#"{}"#, "tier: missing"),
            (br#"{"tier": "gold"}"#, "tier: unknown tier `gold`"),
            (br#"{"tier": 3}"#, "tier: expected a string"),
            (
                br#"{"tier": "trusted", "admin": true}"#,
                "admin: unknown field",
            ),
        ] {
            let err = parse_body(body).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
    }
}
