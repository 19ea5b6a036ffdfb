//! `GET /api/v1/tools/{name}/{version}/attestation`: what the registry
//! attests of a version — name, version, bundle digest, definition
//! fingerprint and, for a version
//! published through trusted publishing, the CI run it came from — signed
//! with the transparency log's key as a note, so a client holding the
//! pinned log key checks it offline (`toolreg` does when it pins or
//! installs a version with provenance).
//!
//! The note's text is `toolreg attestation v1`, a newline, the statement's
//! RFC 8785 (JCS) JSON and a newline; Ed25519 signatures are deterministic,
//! so every replica sharing the key answers the same bytes.

use actix_web::{get, web};

use crate::app::AppState;
use crate::error::{internal, AppResult, ProblemBody};
use crate::models::{ToolRow, VersionRow};
use crate::views::{Attestation, AttestationStatement, ATTESTATION_HEADER};

/// The version's signed attestation.
#[utoipa::path(tag = "tools", params(("name" = String, Path), ("version" = String, Path, description = "exact SemVer version")),
    responses((status = 200, body = Attestation), (status = 404, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/{version}/attestation")]
pub async fn attestation(
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> AppResult<web::Json<Attestation>> {
    let (name, version) = path.into_inner();
    let statement = state
        .db
        .read(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let v = VersionRow::require(conn, tool.id, &tool.name, &version)?;
            let provenance = VersionRow::provenance(conn, v.id)?;
            Ok(AttestationStatement {
                name: tool.name,
                version: v.version,
                sha256: v.sha256,
                definition_sha256: v.definition_sha256.clone(),
                provenance,
            })
        })
        .await?;
    let value = serde_json::to_value(&statement)
        .map_err(|e| internal(format!("cannot encode the attestation: {e}")))?;
    let text = format!(
        "{ATTESTATION_HEADER}\n{}\n",
        toolreg_core::jcs::to_string(&value)
    );
    let note = state.log.sign_note(&text)?;
    Ok(web::Json(Attestation { statement, note }))
}
