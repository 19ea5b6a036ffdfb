//! The transparency log's endpoints: the signed checkpoint, the
//! public key, and inclusion and consistency proofs.

use actix_web::http::header;
use actix_web::{get, web, HttpResponse};
use serde::Deserialize;
use toolreg_core::tlog;
use utoipa::IntoParams;

use crate::app::AppState;
use crate::error::{bad_request, not_found, AppResult, ProblemBody};
use crate::models::{ToolRow, VersionRow};
use crate::transparency::store::{self, DbHashes};
use crate::views::{ConsistencyProof, InclusionProof};

/// The latest signed checkpoint, a C2SP signed note:
/// `<origin>\n<size>\n<base64 root>\n\n— <origin> <base64 key id + signature>\n`.
/// While records are being added a new one is signed at least once a second.
#[utoipa::path(tag = "log", responses((status = 200, content_type = "text/plain", body = String)))]
#[get("/api/v1/log/checkpoint")]
pub async fn checkpoint(state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let (_, note) = state.log.checkpoint(&state.db).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(note))
}

/// The log's public key in note verifier form `<origin>+<hex key id>+<base64 key>`.
#[utoipa::path(tag = "log", responses((status = 200, content_type = "text/plain", body = String)))]
#[get("/api/v1/log/key")]
pub async fn key(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .body(format!("{}\n", state.log.verifier_key()))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct ProofQuery {
    /// Tree size to prove inclusion in (default: the latest checkpoint's).
    #[param(value_type = Option<u64>)]
    pub size: Option<String>,
}

/// Inclusion of a version's record in the tree of `size` records. 400 when
/// `size` is beyond the log or does not contain the record; 404 for an
/// unknown tool or version.
#[utoipa::path(tag = "log", params(("name" = String, Path), ("version" = String, Path), ProofQuery),
    responses((status = 200, body = InclusionProof), (status = 400, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[get("/api/v1/log/proof/{name}/{version}")]
pub async fn proof(
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    query: web::Query<ProofQuery>,
) -> AppResult<web::Json<InclusionProof>> {
    let (name, version) = path.into_inner();
    let size = match tree_size("size", query.size.as_deref())? {
        Some(size) => size,
        None => state.log.checkpoint(&state.db).await?.0.size,
    };
    let answer = state
        .db
        .read(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let v = VersionRow::require(conn, tool.id, &tool.name, &version)?;
            let entry = store::entry_for_version(conn, v.id)?
                .ok_or_else(|| not_found(format!("`{}` version {} has no record in the log", tool.name, v.version)))?;
            let index = entry.idx as u64;
            let log_size = store::size(conn)?;
            if size > log_size {
                return Err(bad_request(format!("size: the log has {log_size} records, not {size}")));
            }
            if index >= size {
                return Err(bad_request(format!(
                    "size: the record of `{}` {} has index {index}, so it is not in the tree of size {size}; ask for a later checkpoint",
                    tool.name, v.version
                )));
            }
            let proof = tlog::prove_inclusion(size, index, &mut DbHashes(conn))?;
            Ok(InclusionProof { index, size, record: entry.record, proof: proof.iter().map(|h| h.to_base64()).collect() })
        })
        .await?;
    Ok(web::Json(answer))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct ConsistencyQuery {
    /// The older tree size.
    #[param(value_type = u64)]
    pub from: Option<String>,
    /// The newer tree size (default: the latest checkpoint's).
    #[param(value_type = Option<u64>)]
    pub to: Option<String>,
}

/// The proof that the tree of `from` records is a prefix of the tree of `to`
/// records. 400 when `from > to` or `to` is beyond the log.
#[utoipa::path(tag = "log", params(ConsistencyQuery),
    responses((status = 200, body = ConsistencyProof), (status = 400, body = ProblemBody)))]
#[get("/api/v1/log/consistency")]
pub async fn consistency(
    state: web::Data<AppState>,
    query: web::Query<ConsistencyQuery>,
) -> AppResult<web::Json<ConsistencyProof>> {
    let from = tree_size("from", query.from.as_deref())?
        .ok_or_else(|| bad_request("from: the older tree size is required (`?from=M&to=N`)"))?;
    let to = match tree_size("to", query.to.as_deref())? {
        Some(to) => to,
        None => state.log.checkpoint(&state.db).await?.0.size,
    };
    if from > to {
        return Err(bad_request(format!(
            "from ({from}) must not be larger than to ({to})"
        )));
    }
    let hashes = state
        .db
        .read(move |conn| {
            let log_size = store::size(conn)?;
            if to > log_size {
                return Err(bad_request(format!(
                    "to: the log has {log_size} records, not {to}"
                )));
            }
            tlog::prove_consistency(from, to, &mut DbHashes(conn))
        })
        .await?;
    Ok(web::Json(ConsistencyProof {
        proof: hashes.iter().map(|h| h.to_base64()).collect(),
    }))
}

/// A tree size from the query string; the error names the parameter.
fn tree_size(param: &str, value: Option<&str>) -> AppResult<Option<u64>> {
    value
        .map(|v| {
            v.parse::<u64>().map_err(|_| {
                bad_request(format!(
                    "{param}: `{v}` is not a tree size (a whole number of records)"
                ))
            })
        })
        .transpose()
}
