//! Deprecation: an owner's advice that a tool's versions — all of them, or
//! those matching a SemVer requirement such as `<2.0.0` — should no longer
//! be chosen, with a message saying why and, optionally, an existing tool to
//! use instead (the successor).
//!
//! A deprecation is advice, not a state: a deprecated version is downloaded,
//! resolved and served exactly as before, and it may be yanked, blocked or
//! quarantined as well (`crate::models::version::state`, where every surface
//! reads it through `HasState::deprecation`). What it changes is what a user
//! is told when choosing: the version and tool JSON, search hits (filtered
//! by `deprecated=`, ranked below equal matches), the web pages, and the
//! CLI's `info`, `outdated`, `add` and `update`.
//!
//! It lives on each version's row (`versions.deprecation`, JSON), so every
//! read that already loads the row sees it without another query. It
//! applies to the versions that exist when it is set: a version published
//! later is not deprecated until the owners say so again. [`set`] is the one
//! writer: in one transaction it updates the rows of the matching versions
//! and calls `state_change::record` (one audit entry, the tool's stored
//! summary, one change-log row per changed version, which every replica's
//! cache and search index follow).
//!
//! The message is text an agent may read, so it is checked like any other:
//! at most [`MAX_MESSAGE_CHARS`] characters, and the definition lint must
//! find nothing that blocks ([`check_message`]).

use diesel::prelude::*;
use semver::{Version, VersionReq};
use serde_json::{json, Value};
use toolreg_api::{DeprecationChange, EncodableDeprecation};
use toolreg_core::lint;

use crate::db::{DbConnection, MAX_IN_LIST};
use crate::error::{bad_request, AppError, AppResult};
use crate::models::change::ChangeLogKind;
use crate::models::state_change::{self, AfterCommit, StateChange};
use crate::models::tier::Actor;
use crate::models::version::state::deprecation_of;
use crate::models::{NewAudit, ToolRow};
use crate::schema::versions;

/// The most characters a deprecation message may have.
pub const MAX_MESSAGE_CHARS: usize = 500;

/// What a `PUT .../deprecation` asks for, validated except for the
/// successor's existence (which needs the database: [`resolve_successor`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub message: String,
    pub successor: Option<String>,
    pub req: Option<VersionReq>,
}

/// Read the body `{"message", "successor"?, "req"?}`: unknown fields,
/// wrong types, an empty or too long message, control characters and a
/// requirement that is not SemVer are each a 400 naming the field.
pub fn parse_request(body: &[u8]) -> AppResult<Request> {
    let shape = r#"send {"message": "...", "successor": "other-tool", "req": "<2.0.0"} (successor and req are optional)"#;
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| bad_request(format!("the body is not JSON ({e}); {shape}")))?;
    let Value::Object(fields) = value else {
        return Err(bad_request(format!(
            "the body must be a JSON object: {shape}"
        )));
    };
    if let Some(other) = fields
        .keys()
        .find(|k| !matches!(k.as_str(), "message" | "successor" | "req"))
    {
        return Err(bad_request(format!(
            "{other}: unknown field; the body has `message`, `successor` and `req`"
        )));
    }
    let text = |field: &str| -> AppResult<Option<String>> {
        match fields.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(_) => Err(bad_request(format!("{field}: must be a string"))),
        }
    };
    let message =
        text("message")?.ok_or_else(|| bad_request(format!("message: is required; {shape}")))?;
    let message = check_length(message)?;
    let successor = text("successor")?;
    if successor.as_deref() == Some("") {
        return Err(bad_request(
            "successor: must not be empty (leave it out for no successor)",
        ));
    }
    let req = text("req")?.map(|r| parse_req(&r)).transpose()?;
    Ok(Request {
        message,
        successor,
        req,
    })
}

/// A deprecation's requirement (`req`), or a 400 naming it.
pub fn parse_req(req: &str) -> AppResult<VersionReq> {
    let req = req.trim();
    if req.is_empty() {
        return Err(bad_request(
            "req: must not be empty (leave it out for every version)",
        ));
    }
    VersionReq::parse(req).map_err(|e| {
        bad_request(format!(
            "req: `{}` is not a SemVer requirement ({e}); for example `<2.0.0` or `=1.4.2`",
            req.chars().take(80).collect::<String>()
        ))
    })
}

fn check_length(message: String) -> AppResult<String> {
    let chars = message.chars().count();
    if chars == 0 {
        return Err(bad_request(format!(
            "message: must not be empty (1 to {MAX_MESSAGE_CHARS} characters)"
        )));
    }
    if chars > MAX_MESSAGE_CHARS {
        return Err(bad_request(format!(
            "message: is {chars} characters long; at most {MAX_MESSAGE_CHARS} are allowed"
        )));
    }
    if message
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r')
    {
        return Err(bad_request(
            "message: must not contain control characters (line breaks and tabs are fine)",
        ));
    }
    Ok(message)
}

/// Lint the message of a deprecation of `tool` as text an agent reads: a
/// finding of a block rule (hidden characters, a live credential, an
/// instruction to the model, …) refuses it with 422 naming the rule, the
/// field and the excerpt. Flags and notes are let through.
pub fn check_message(tool: &str, message: &str) -> AppResult<()> {
    let ctx = lint::Context {
        own_names: vec![lint::prose::normalize_tool_name(tool)],
        ..lint::Context::default()
    };
    let findings = lint::check_parsed(&ctx, Some(&json!({ "message": message })), None);
    let errors = lint::block_problems(&findings);
    match errors.first() {
        None => Ok(()),
        Some(first) => Err(AppError::InvalidDefinition {
            detail: format!("message: refused by the definition lint: {first}"),
            errors,
        }),
    }
}

/// The canonical name of the successor `name` of `tool`: it must be another
/// tool of the registry (422 naming `successor` otherwise).
pub fn resolve_successor(conn: &mut DbConnection, tool: &ToolRow, name: &str) -> AppResult<String> {
    let Some(successor) = ToolRow::by_name(conn, name)? else {
        return Err(AppError::Unprocessable(format!(
            "successor: there is no tool named `{}` in this registry",
            name.chars().take(80).collect::<String>()
        )));
    };
    if successor.id == tool.id {
        return Err(AppError::Unprocessable(format!(
            "successor: `{}` is the tool being deprecated; name another tool or leave it out",
            tool.name
        )));
    }
    Ok(successor.name)
}

/// Deprecate the versions of `tool` matching `req` (every version when
/// `None`) with `deprecation`, or lift their deprecation (`None`); call
/// inside a write transaction. Versions already in the state asked for are
/// left as they are; when none changes nothing is written. A requirement
/// that matches no version is a 422 naming `req`.
pub fn set(
    conn: &mut DbConnection,
    tool: &ToolRow,
    deprecation: Option<&EncodableDeprecation>,
    req: Option<&VersionReq>,
    actor: &Actor<'_>,
) -> AppResult<(DeprecationChange, AfterCommit)> {
    let rows: Vec<(i64, String, Option<String>)> = crate::on_backend!(conn, |c| versions::table
        .filter(versions::tool_id.eq(tool.id))
        .order((versions::version_order.desc(), versions::id.desc()))
        .select((versions::id, versions::version, versions::deprecation))
        .load(c))?;
    let matching: Vec<(i64, String, Option<String>)> = rows
        .into_iter()
        .filter(|(_, v, _)| match req {
            None => true,
            Some(req) => Version::parse(v).is_ok_and(|v| req.matches(&v)),
        })
        .collect();
    if let (Some(req), true) = (req, matching.is_empty()) {
        return Err(AppError::Unprocessable(format!(
            "req: `{req}` matches none of the versions of `{}` (pre-releases match only a \
             requirement that names one, as in Cargo)",
            tool.name
        )));
    }
    let stored = deprecation
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| crate::error::internal(format!("deprecation does not encode: {e}")))?;
    let changed: Vec<(i64, String)> = matching
        .iter()
        .filter(|(_, _, now)| deprecation_of(now.as_deref()).as_ref() != deprecation)
        .map(|(id, v, _)| (*id, v.clone()))
        .collect();
    let answer = DeprecationChange {
        name: tool.name.clone(),
        deprecated: deprecation.cloned(),
        versions: matching.into_iter().map(|(_, v, _)| v).collect(),
        changed: changed.len(),
    };
    if changed.is_empty() {
        return Ok((answer, AfterCommit::nothing()));
    }
    let ids: Vec<i64> = changed.iter().map(|(id, _)| *id).collect();
    for chunk in ids.chunks(MAX_IN_LIST) {
        diesel::update(versions::table.filter(versions::id.eq_any(chunk)))
            .set(versions::deprecation.eq(stored.as_deref()))
            .execute(conn)?;
    }
    let kind = if deprecation.is_some() {
        ChangeLogKind::Deprecate
    } else {
        ChangeLogKind::Undeprecate
    };
    let names: Vec<&str> = changed.iter().map(|(_, v)| v.as_str()).collect();
    let mut audit = NewAudit::new(kind.as_str());
    audit.actor = actor.login;
    audit.token_id = actor.token_id;
    audit.tool = Some(&tool.name);
    audit.detail = match deprecation {
        Some(d) => json!({"message": d.message, "successor": d.successor, "req": d.req,
                          "versions": names, "via": actor.via}),
        None => json!({"req": req.map(ToString::to_string), "versions": names,
                       "via": actor.via}),
    };
    let mut change = StateChange::new().audit(audit);
    for (_, version) in &changed {
        change = change.version(tool.id, &tool.name, version, kind);
    }
    let after = state_change::record(conn, change)?;
    Ok((answer, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> String {
        parse_request(body.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn bad_bodies_name_the_field() {
        assert!(err("[]").contains("JSON object"));
        assert!(err(r#"{"msg":"x"}"#).starts_with("msg: unknown field"));
        assert!(err(r#"{}"#).starts_with("message: is required"));
        assert!(err(r#"{"message":"  "}"#).starts_with("message: must not be empty"));
        assert!(err(r#"{"message":7}"#).starts_with("message: must be a string"));
        let long = format!(r#"{{"message":"{}"}}"#, "é".repeat(501));
        assert!(err(&long).starts_with("message: is 501 characters long; at most 500"));
        assert!(err(r#"{"message":"a\u0007b"}"#).starts_with("message: must not contain"));
        assert!(err(r#"{"message":"m","successor":""}"#).starts_with("successor:"));
        assert!(err(r#"{"message":"m","req":"two"}"#).starts_with("req: `two` is not"));
        assert!(err(r#"{"message":"m","req":""}"#).starts_with("req: must not be empty"));
    }

    #[test]
    fn a_good_body_reads_with_its_requirement() {
        let r =
            parse_request(br#"{"message":" old ","successor":"calc-v2","req":"<2.0.0"}"#).unwrap();
        assert_eq!(r.message, "old");
        assert_eq!(r.successor.as_deref(), Some("calc-v2"));
        assert_eq!(r.req.map(|r| r.to_string()).as_deref(), Some("<2.0.0"));
        let long = "x".repeat(MAX_MESSAGE_CHARS);
        assert!(parse_request(format!(r#"{{"message":"{long}"}}"#).as_bytes()).is_ok());
    }

    #[test]
    fn the_lint_refuses_a_poisoned_message_naming_the_rule() {
        assert!(check_message("calc", "Use calc-v2 instead; this one is unmaintained.").is_ok());
        let hidden = "Use calc-v2.\u{E0049}\u{E0067}\u{E006E}\u{E006F}\u{E0072}\u{E0065}";
        let e = check_message("calc", hidden).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("message: refused by the definition lint"),
            "{text}"
        );
        match e {
            AppError::InvalidDefinition { errors, .. } => {
                assert!(
                    errors.iter().any(|p| p.path.contains("message")),
                    "{errors:?}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
