//! Definition fingerprints of versions published before they were stored,
//! filled in at start-up from the stored canonical manifests.

use diesel::prelude::*;

use crate::db::DbConnection;
use crate::error::AppResult;
use crate::schema::{version_contents, versions};

/// Fill in the definition fingerprint of up to `limit` versions with an id
/// above `after` that have none (published before fingerprints were
/// stored), computed from each version's stored canonical manifest exactly
/// as publish computes it; returns the last id looked at (`None` when there
/// were none left). Call inside a write transaction, with `after` the id
/// returned, until `None`. Only rows whose column is NULL are read, so a
/// second run finds nothing to do. A manifest that no longer reads is left
/// NULL and logged (the version is still served; it shows no fingerprint).
pub fn fill_fingerprints(
    conn: &mut DbConnection,
    after: i64,
    limit: i64,
) -> AppResult<Option<(i64, usize)>> {
    let rows: Vec<(i64, String, String)> = crate::on_backend!(conn, |c| versions::table
        .inner_join(version_contents::table)
        .filter(versions::definition_sha256.is_null())
        .filter(versions::id.gt(after))
        .order(versions::id.asc())
        .limit(limit)
        .select((
            versions::id,
            version_contents::manifest,
            version_contents::definition,
        ))
        .load(c))?;
    let Some(last) = rows.last().map(|r| r.0) else {
        return Ok(None);
    };
    let mut filled = 0;
    for (id, manifest, definition) in rows {
        let mut tool: toolreg_core::Tool = match serde_json::from_str(&manifest) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(version_id = id, error = %e,
                    "the stored manifest does not read: its definition fingerprint is left unset");
                continue;
            }
        };
        tool.original = definition.into_bytes();
        let fingerprint = toolreg_core::fingerprint::of_tool(&tool);
        diesel::update(
            versions::table
                .find(id)
                .filter(versions::definition_sha256.is_null()),
        )
        .set(versions::definition_sha256.eq(&fingerprint))
        .execute(conn)?;
        filled += 1;
    }
    Ok(Some((last, filled)))
}
