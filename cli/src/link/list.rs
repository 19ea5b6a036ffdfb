//! `toolreg link --list`: which agent configs exist, whether this
//! project's entry is in each and current, and how every MCP server entry
//! runs — through toolreg (`mcp serve`, or `mcp proxy` with its pins) or
//! directly, unpinned.

use std::path::Path;

use serde_json::Value;

use super::clients::{self, ClientId, Dirs};
use super::{expected_entry, parse, proxy, Place};
use crate::commands::Context;
use crate::error::Result;
use crate::lock::Lockfile;
use crate::output;

/// `link --list`: every agent config that exists, whether this project's
/// entry is in it and current, and how each of its MCP servers runs:
/// through toolreg (serve, or proxy with its pins) or directly, unpinned.
pub(super) fn run(ctx: &Context, root: &Path, dirs: &Dirs, name: &str) -> Result<i32> {
    let lock = Lockfile::load(root).ok().flatten();
    let mut rows = Vec::new();
    for id in ClientId::ALL {
        let client = clients::client(id);
        for &scope in client.scopes() {
            let Some((path, place)) = client.file(scope, root, dirs, name) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let mut servers = Vec::new();
            let status = match parse(client.dialect, &text) {
                Err(c) => format!("unreadable ({}:{}: {})", c.line, c.column, c.message),
                Ok(doc) => {
                    for (server, entry) in entries(&place, &doc) {
                        let (runs, detail) =
                            proxy::describe(&client, &server, entry, lock.as_ref());
                        servers.push((server, runs, detail));
                    }
                    match place.get(&doc, name) {
                        None => "absent".to_string(),
                        Some(found) => match expected_entry(&client, root, name, &place) {
                            Ok(e) if &e == found => "current".to_string(),
                            Ok(_) => format!(
                                "stale (run `toolreg link {id}{}`)",
                                if scope == client.scopes()[0] {
                                    String::new()
                                } else {
                                    format!(" --scope {}", scope.as_str())
                                }
                            ),
                            Err(e) => format!("present (can't compare: {e})"),
                        },
                    }
                }
            };
            rows.push((id, scope, path, status, servers));
        }
    }
    if ctx.json {
        let items: Vec<Value> = rows
            .iter()
            .map(|(id, scope, path, status, servers)| {
                let servers: Vec<Value> = servers
                    .iter()
                    .map(|(n, runs, detail)| serde_json::json!({"name": n, "runs": runs, "detail": detail}))
                    .collect();
                serde_json::json!({
                    "client": id.as_str(), "scope": scope.as_str(),
                    "file": path.display().to_string(),
                    "status": status.split(' ').next().unwrap_or_default(),
                    "detail": status,
                    "servers": servers,
                })
            })
            .collect();
        output::json(&Value::Array(items));
        return Ok(0);
    }
    if rows.is_empty() {
        crate::outln!(
            "no agent config found (toolreg looks for the files of {})",
            ClientId::ALL.map(|c| c.as_str()).join(", ")
        );
    }
    for (id, scope, path, status, servers) in rows {
        crate::outln!(
            "{:<15} {:<8} {:<8} {}",
            id.as_str(),
            scope.as_str(),
            status.split(' ').next().unwrap_or_default(),
            path.display()
        );
        if status.contains(' ') {
            crate::outln!("{:<33}{status}", "");
        }
        for (server, runs, detail) in servers {
            crate::outln!("  {server:<22} {runs:<8} {detail}");
        }
    }
    Ok(0)
}

/// Every MCP server entry of a config document, with its name.
fn entries<'a>(place: &Place, doc: &'a Value) -> Vec<(String, &'a Value)> {
    let named = |items: Option<&'a Value>| -> Vec<(String, &'a Value)> {
        items
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|i| {
                let n = i.get("name").and_then(Value::as_str).unwrap_or("(no name)");
                (n.to_string(), i)
            })
            .collect()
    };
    match place {
        Place::Map { path } => path
            .iter()
            .try_fold(doc, |at, k| at.get(k))
            .and_then(Value::as_object)
            .map(|o| o.iter().map(|(k, v)| (k.clone(), v)).collect())
            .unwrap_or_default(),
        Place::List { key } => named(doc.get(key)),
        Place::File => named(doc.get("mcpServers")),
    }
}
