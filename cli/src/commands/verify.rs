//! `toolreg verify [--against FILE|-]`: check that every pinned tool is
//! installed exactly as toolreg.lock pins it — each file against the file
//! manifest written at install, and the definition fingerprint recomputed
//! from the files on disk — naming every edited, added or removed file.
//!
//! With `--against`, it then compares an MCP `tools/list` answer (what a
//! running MCP server offers an agent) with the pins by call name: a tool
//! whose definition differs from the pinned one is shown as a diff with
//! severities, a listed tool that is not pinned is reported, and identical
//! tools pass. Any drift, difference or unpinned tool exits 1.

use std::path::Path;

use serde_json::{json, Value};
use toolreg_core::diff::{self, Change, Diff};
use toolreg_core::{fingerprint, Problem, Tool};

use super::Context;
use crate::error::{Error, Result};
use crate::install::{self, Drift, State};
use crate::lock::{self, LockedTool, Lockfile};
use crate::output;

pub fn run(ctx: &Context, against: Option<&Path>) -> Result<i32> {
    let lock = require_lock(ctx, "verify")?;
    let states = check_all(&ctx.cwd, &lock)?;
    match against {
        None => report_local(ctx, &states),
        Some(path) => {
            refuse_drift(&states, "compare a tool list with the pins")?;
            let listed = read_tools_list(ctx, path)?;
            report_live(ctx, &states, &listed)
        }
    }
}

/// The project's lock, or an error saying there is nothing to `what`.
pub fn require_lock(ctx: &Context, what: &str) -> Result<Lockfile> {
    Lockfile::load(&ctx.cwd)?.ok_or_else(|| Error::Lock {
        path: ctx.cwd.join(lock::FILE).display().to_string(),
        message: format!(
            "missing: there is nothing pinned to {what}; run `toolreg add NAME` and `toolreg install`"
        ),
    })
}

/// The state on disk of every pin of `lock`, in lock order.
pub fn check_all(root: &Path, lock: &Lockfile) -> Result<Vec<(LockedTool, State)>> {
    lock.tools()
        .iter()
        .map(|t| Ok((t.clone(), install::check(root, t)?)))
        .collect()
}

/// Fail unless every pin is installed and intact, naming every pin that is
/// not and every file that changed; `action` says what is refused.
pub fn refuse_drift(states: &[(LockedTool, State)], action: &str) -> Result<()> {
    if let Some((t, _)) = states
        .iter()
        .find(|(_, s)| matches!(s, State::NotInstalled))
    {
        return Err(Error::Installed(format!(
            "{} {} is pinned but not installed; run `toolreg install` first",
            t.name, t.version
        )));
    }
    let mut details = Vec::new();
    let mut drifted = 0;
    for (t, state) in states {
        if let State::Drifted(drift) = state {
            drifted += 1;
            details.extend(drift_lines(t, drift));
        }
    }
    if drifted == 0 {
        return Ok(());
    }
    Err(Error::Drift {
        summary: format!(
            "refusing to {action}: {drifted} installed tool(s) no longer match toolreg.lock; run `toolreg install` to repair them"
        ),
        details,
    })
}

/// One line per drift of a pin: the file (by its path in the project) and what happened to it.
fn drift_lines(t: &LockedTool, drift: &[Drift]) -> Vec<String> {
    let dir = install::tool_dir(Path::new(""), t);
    drift
        .iter()
        .map(|d| match d.path() {
            Some(p) => format!(
                "{} {}: {} {}",
                t.name,
                t.version,
                d.kind(),
                dir.join(p).display()
            ),
            None => format!("{} {}: {d}", t.name, t.version),
        })
        .collect()
}

fn drift_json(d: &Drift) -> Value {
    match d {
        Drift::Edited(p) | Drift::Added(p) | Drift::Removed(p) => {
            json!({"kind": d.kind(), "path": p})
        }
        Drift::Definition { pinned, actual } => {
            json!({"kind": "definition", "pinned": pinned, "actual": actual})
        }
        Drift::NoManifest | Drift::BadManifest(_) => {
            json!({"kind": "manifest", "message": d.to_string()})
        }
    }
}

fn report_local(ctx: &Context, states: &[(LockedTool, State)]) -> Result<i32> {
    let bad = states
        .iter()
        .filter(|(_, s)| !matches!(s, State::Intact { .. }))
        .count();
    if ctx.json {
        let tools: Vec<Value> = states
            .iter()
            .map(|(t, s)| {
                let (status, definition, drift) = match s {
                    State::Intact { definition, .. } => ("ok", Some(definition.clone()), vec![]),
                    State::NotInstalled => ("not_installed", None, vec![]),
                    State::Drifted(d) => ("drifted", None, d.iter().map(drift_json).collect()),
                };
                json!({
                    "name": t.name,
                    "version": t.version.to_string(),
                    "status": status,
                    "definition": definition,
                    "pinned_definition": t.definition,
                    "path": install::tool_dir(Path::new(""), t).display().to_string(),
                    "drift": drift,
                })
            })
            .collect();
        output::json(&json!({"ok": bad == 0, "tools": tools}));
        return Ok(if bad == 0 { 0 } else { 1 });
    }
    for (t, s) in states {
        match s {
            State::Intact { definition, .. } => {
                crate::outln!("ok       {} {}  {definition}", t.name, t.version)
            }
            State::NotInstalled => crate::outln!(
                "missing  {} {}  (pinned but not installed)",
                t.name,
                t.version
            ),
            State::Drifted(drift) => {
                crate::outln!("drifted  {} {}", t.name, t.version);
                let dir = install::tool_dir(Path::new(""), t);
                for d in drift {
                    match d.path() {
                        Some(p) => crate::outln!("    {:<8} {}", d.kind(), dir.join(p).display()),
                        None => crate::outln!("    {d}"),
                    }
                }
            }
        }
    }
    if bad == 0 {
        crate::outln!("all {} pinned tool(s) match toolreg.lock", states.len());
        return Ok(0);
    }
    Err(Error::Drift {
        summary: format!(
            "{bad} of {} pinned tool(s) do not match toolreg.lock; run `toolreg install` to repair them",
            states.len()
        ),
        details: Vec::new(),
    })
}

/// The tools of a `tools/list` answer read from `path` (`-` for stdin).
fn read_tools_list(ctx: &Context, path: &Path) -> Result<Vec<Value>> {
    let (what, text) = if path == Path::new("-") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| Error::io("could not read", Path::new("<stdin>"), e))?;
        ("<stdin>".to_string(), text)
    } else {
        let file = ctx.path(Some(path));
        let text = std::fs::read_to_string(&file).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                Error::Usage(format!("{} does not exist", file.display()))
            }
            _ => Error::io("could not read", &file, e),
        })?;
        (file.display().to_string(), text)
    };
    let invalid = |path: &str, message: String| Error::Invalid {
        what: format!("{what} (a tools/list answer)"),
        problems: vec![Problem::new(path, message)],
    };
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| invalid("", format!("not valid JSON: {e}")))?;
    if let Some(err) = doc.get("error") {
        return Err(invalid(
            "error",
            format!("the answer is a JSON-RPC error, not a tool list: {err}"),
        ));
    }
    let tools = doc
        .as_array()
        .or_else(|| doc.get("tools").and_then(Value::as_array))
        .or_else(|| {
            doc.get("result")
                .and_then(|r| r.get("tools"))
                .and_then(Value::as_array)
        })
        .ok_or_else(|| {
            invalid(
                "tools",
                "no tools array: expected a tools/list result {\"tools\": [...]}, a JSON-RPC response {\"result\": {\"tools\": [...]}} or an array of tools".into(),
            )
        })?;
    for (i, tool) in tools.iter().enumerate() {
        if !tool.get("name").is_some_and(Value::is_string) {
            return Err(invalid(
                &format!("tools[{i}].name"),
                "is missing or not a string; every tool needs its call name".into(),
            ));
        }
    }
    Ok(tools.clone())
}

/// How one listed (or pinned) tool compares.
enum Live<'a> {
    Same(&'a Pin),
    Changed(&'a Pin, String, Diff),
    NotPinned(String),
    NotListed(&'a Pin),
}

struct Pin {
    tool: LockedTool,
    call_name: String,
    export: Value,
    definition: String,
}

fn pins(states: &[(LockedTool, State)]) -> Vec<Pin> {
    states
        .iter()
        .filter_map(|(t, s)| match s {
            State::Intact {
                tool, definition, ..
            } => Some(pin(t, tool, definition)),
            _ => None,
        })
        .collect()
}

fn pin(t: &LockedTool, tool: &Tool, definition: &str) -> Pin {
    Pin {
        tool: t.clone(),
        call_name: tool.call_name.clone(),
        export: toolreg_core::export::to_mcp(tool),
        // The lock's fingerprint is the pinned one; the installed files
        // were just checked to have it.
        definition: t
            .definition
            .clone()
            .unwrap_or_else(|| definition.to_string()),
    }
}

fn compare<'a>(pins: &'a [Pin], listed: &[Value]) -> Vec<Live<'a>> {
    let mut out = Vec::new();
    for tool in listed {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        match pins.iter().find(|p| p.call_name == name) {
            None => out.push(Live::NotPinned(name.to_string())),
            Some(p) => {
                let live = fingerprint::of_mcp(tool);
                if live == p.definition {
                    out.push(Live::Same(p));
                } else {
                    let d = diff::between(&p.tool.version.to_string(), "live", &p.export, tool);
                    out.push(Live::Changed(p, live, d));
                }
            }
        }
    }
    for p in pins {
        let listed_here = listed
            .iter()
            .any(|t| t.get("name").and_then(Value::as_str) == Some(p.call_name.as_str()));
        if !listed_here {
            out.push(Live::NotListed(p));
        }
    }
    out
}

fn report_live(ctx: &Context, states: &[(LockedTool, State)], listed: &[Value]) -> Result<i32> {
    let pins = pins(states);
    let results = compare(&pins, listed);
    let changed = results
        .iter()
        .filter(|r| matches!(r, Live::Changed(..)))
        .count();
    let unpinned = results
        .iter()
        .filter(|r| matches!(r, Live::NotPinned(_)))
        .count();
    let ok = changed == 0 && unpinned == 0;
    if ctx.json {
        let tools: Vec<Value> = results
            .iter()
            .map(|r| match r {
                Live::Same(p) => json!({
                    "call_name": p.call_name, "status": "ok", "name": p.tool.name,
                    "version": p.tool.version.to_string(), "pinned": p.definition, "live": p.definition,
                }),
                Live::Changed(p, live, d) => json!({
                    "call_name": p.call_name, "status": "changed", "name": p.tool.name,
                    "version": p.tool.version.to_string(), "pinned": p.definition, "live": live,
                    "highest": d.highest(), "diff": d,
                }),
                Live::NotPinned(name) => json!({
                    "call_name": name, "status": "not_pinned", "live": listed
                        .iter()
                        .find(|t| t.get("name").and_then(Value::as_str) == Some(name.as_str()))
                        .map(fingerprint::of_mcp),
                }),
                Live::NotListed(p) => json!({
                    "call_name": p.call_name, "status": "not_listed", "name": p.tool.name,
                    "version": p.tool.version.to_string(), "pinned": p.definition,
                }),
            })
            .collect();
        output::json(&json!({"ok": ok, "tools": tools}));
        return Ok(if ok { 0 } else { 1 });
    }
    for r in &results {
        match r {
            Live::Same(p) => crate::outln!(
                "ok          {}  ({} {})",
                p.call_name,
                p.tool.name,
                p.tool.version
            ),
            Live::Changed(p, live, d) => {
                crate::outln!(
                    "changed     {}  ({} {}; highest severity {}): live {live}, pinned {}",
                    p.call_name,
                    p.tool.name,
                    p.tool.version,
                    d.highest().map(|s| s.as_str()).unwrap_or("low"),
                    p.definition
                );
                for c in &d.changes {
                    print_change(c);
                }
            }
            Live::NotPinned(name) => {
                crate::outln!("not pinned  {name}  (listed by the server, not in toolreg.lock)")
            }
            Live::NotListed(p) => crate::outln!(
                "not listed  {}  ({} {} is pinned; the server does not list it)",
                p.call_name,
                p.tool.name,
                p.tool.version
            ),
        }
    }
    if ok {
        crate::outln!(
            "every listed tool matches its pin ({} tool(s))",
            listed.len()
        );
        return Ok(0);
    }
    Err(Error::Drift {
        summary: format!(
            "the tool list differs from the pins: {changed} changed, {unpinned} not pinned"
        ),
        details: Vec::new(),
    })
}

/// One change with its old and new values.
fn print_change(c: &Change) {
    crate::out!("{}", crate::changes::render(c, true));
}
