//! `toolreg verify [--against FILE|-] [--offline]`: check every pin with
//! the offline admission steps ([`crate::admission::offline`]): its kind
//! allowed, not withheld by the registry and its findings accepted (as the
//! registry said last), the builder `require_provenance` wants recorded in
//! the lock, and installed exactly as toolreg.lock pins it — each file
//! against the file manifest written at install, and the definition
//! fingerprint recomputed from the files on disk — naming every edited,
//! added or removed file; and every copy of an installed skill in a
//! linked agent's skills folder ([`crate::skills`]), file by file.
//!
//! First (unless `--offline`) it asks the registry what it says about each
//! pinned version now and records it (`.toolreg/state.json`), so a version
//! quarantined since it was pinned is reported with the reason; when the
//! registry can't be reached it says so and uses the record as it was.
//!
//! With `--against`, it then compares an MCP `tools/list` answer (what a
//! running MCP server offers an agent) with the pins by call name: a tool
//! whose definition differs from the pinned one is shown as a diff with
//! severities, a listed tool that is not pinned is reported, and identical
//! tools pass. Any drift, difference or unpinned tool exits 1.

use std::path::Path;

use serde_json::{json, Value};
use toolreg_core::diff::{self, DefinitionChange, Diff};
use toolreg_core::{fingerprint, Problem};

use super::Context;
use crate::admission::offline::{self, Admitted, PinCheck};
use crate::admission::online;
use crate::admission::record::Record;
use crate::admission::Policy;
use crate::error::{Error, Result};
use crate::install::{self, Drift, State};
use crate::lock::{self, LockedTool, Lockfile};
use crate::output;
use crate::project::Project;
use crate::skills::{self, CopyCheck, CopyState};

pub fn run(ctx: &Context, against: Option<&Path>, offline: bool) -> Result<i32> {
    let lock = require_lock(ctx, "verify")?;
    let (policy, record, warning) = policy_and_record(ctx, &lock, offline)?;
    let checks = offline::check(&ctx.cwd, &policy, &lock, &record)?;
    let code = match against {
        None => {
            let copies = crate::skills::check(&ctx.cwd, &lock)?;
            report_local(ctx, checks, &copies)?
        }
        Some(path) => {
            let admitted = offline::admit(checks, "compare a tool list with the pins")?;
            let listed = read_tools_list(ctx, path)?;
            report_live(ctx, &admitted, &listed)?
        }
    };
    if let Some(w) = warning {
        output::status(w);
    }
    Ok(code)
}

/// The project's `[policy]` (none without a toolreg.toml) and the record of
/// what the registry says about the pins: asked now and recorded, unless
/// `offline`. When the registry can't be reached, the record is used as it
/// was, with the warning to print if the command succeeds (an error's
/// first line stays the error).
pub fn policy_and_record(
    ctx: &Context,
    lock: &Lockfile,
    offline: bool,
) -> Result<(Policy, Record, Option<String>)> {
    let policy = match Project::load(&ctx.cwd)? {
        Some(p) => p.policy().clone(),
        None => Policy::default(),
    };
    let mut record = Record::load(&ctx.cwd)?;
    let mut warning = None;
    if !offline {
        warning = online::refresh(&mut record, lock);
        record.save(&ctx.cwd, lock)?;
    }
    Ok((policy, record, warning))
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

/// `ok`, `not_installed`, `drifted`, or `refused` (installed intact, but a
/// step before the files refused it).
fn status(c: &PinCheck) -> &'static str {
    match &c.state {
        State::Intact { .. } if !c.refused.is_empty() => "refused",
        State::Intact { .. } => "ok",
        State::NotInstalled => "not_installed",
        State::Drifted(_) => "drifted",
    }
}

fn report_local(ctx: &Context, checks: Vec<PinCheck>, copies: &[CopyCheck]) -> Result<i32> {
    let bad = checks.iter().filter(|c| status(c) != "ok").count();
    let bad_copies = copies
        .iter()
        .filter(|c| !matches!(c.state, CopyState::Intact))
        .count();
    if ctx.json {
        let tools: Vec<Value> = checks
            .iter()
            .map(|c| {
                let (definition, drift) = match &c.state {
                    State::Intact { definition, .. } => (Some(definition.clone()), vec![]),
                    State::NotInstalled => (None, vec![]),
                    State::Drifted(d) => (None, d.iter().map(drift_json).collect()),
                };
                json!({
                    "name": c.pin.name,
                    "version": c.pin.version.to_string(),
                    "status": status(c),
                    "definition": definition,
                    "pinned_definition": c.pin.definition,
                    "path": install::tool_dir(Path::new(""), &c.pin).display().to_string(),
                    "drift": drift,
                    "refused": c.refused.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "registry": c.standing.as_ref().map(|s| json!({
                        "checked_at": s.checked_at,
                        "state": s.withheld.as_ref().map_or("listed", |w| w.as_str()),
                        "reason": s.withheld.as_ref().map(|w| w.reason()),
                        "findings": s.findings,
                    })),
                })
            })
            .collect();
        let ok = bad == 0 && bad_copies == 0;
        output::json(&json!({"ok": ok, "tools": tools, "skills": skills_json(&ctx.cwd, copies)}));
        return Ok(if ok { 0 } else { 1 });
    }
    for c in &checks {
        let (t, s) = (&c.pin, &c.state);
        match s {
            State::Intact { definition, .. } if c.refused.is_empty() => {
                crate::outln!("ok       {} {}  {definition}", t.name, t.version)
            }
            State::Intact { .. } => crate::outln!("refused  {} {}", t.name, t.version),
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
        for e in &c.refused {
            crate::outln!("    {e}");
        }
    }
    print_copies(&ctx.cwd, copies);
    let total = checks.len();
    if bad == 0 && bad_copies == 0 {
        crate::outln!("all {total} pinned tool(s) match toolreg.lock");
        return Ok(0);
    }
    // A refusal (a quarantine, a policy) is the error; drift is summed up.
    if let Some(e) = checks
        .into_iter()
        .find_map(|c| c.refused.into_iter().next())
    {
        return Err(e);
    }
    if bad == 0 {
        return Err(Error::Drift {
            summary: format!(
                "{bad_copies} {} in agents' skills folders {} toolreg.lock: {}; run `toolreg install` to repair {}",
                if bad_copies == 1 { "skill copy" } else { "skill copies" },
                if bad_copies == 1 { "does not match" } else { "do not match" },
                copy_problems(&ctx.cwd, copies).join(", "),
                if bad_copies == 1 { "it" } else { "them" },
            ),
            details: Vec::new(),
        });
    }
    Err(Error::Drift {
        summary: format!(
            "{bad} of {total} pinned tool(s) do not match toolreg.lock; run `toolreg install` to repair them"
        ),
        details: Vec::new(),
    })
}

/// Each file of a drifted skill copy (`edited .claude/skills/x/SKILL.md`),
/// and each missing copy.
fn copy_problems(root: &Path, copies: &[CopyCheck]) -> Vec<String> {
    let mut out = Vec::new();
    for c in copies {
        match &c.state {
            CopyState::Intact => {}
            CopyState::Missing => out.push(format!("missing {}", skills::shown(root, &c.path))),
            CopyState::Drifted(drift) => out.extend(drift.iter().map(|d| {
                format!(
                    "{} {}",
                    d.kind(),
                    skills::shown(root, &c.path.join(d.path().unwrap_or_default()))
                )
            })),
        }
    }
    out
}

/// The installed skills' copies in linked agents' skills folders.
fn print_copies(root: &Path, copies: &[CopyCheck]) {
    for c in copies {
        let at = skills::shown(root, &c.path);
        match &c.state {
            CopyState::Intact => {
                crate::outln!(
                    "ok       skill {} {} in {at} ({})",
                    c.pin,
                    c.version,
                    c.agent
                )
            }
            CopyState::Missing => crate::outln!(
                "missing  skill {} {} in {at} ({}; run `toolreg install`)",
                c.pin,
                c.version,
                c.agent
            ),
            CopyState::Drifted(drift) => {
                crate::outln!(
                    "drifted  skill {} {} in {at} ({})",
                    c.pin,
                    c.version,
                    c.agent
                );
                for d in drift {
                    let file = c.path.join(d.path().unwrap_or_default());
                    crate::outln!("    {:<8} {}", d.kind(), skills::shown(root, &file));
                }
            }
        }
    }
}

fn skills_json(root: &Path, copies: &[CopyCheck]) -> Value {
    copies
        .iter()
        .map(|c| {
            let (status, drift) = match &c.state {
                CopyState::Intact => ("ok", Vec::new()),
                CopyState::Missing => ("missing", Vec::new()),
                CopyState::Drifted(d) => ("drifted", d.iter().map(drift_json).collect()),
            };
            json!({
                "name": c.pin, "version": c.version, "agent": c.agent,
                "path": skills::shown(root, &c.path), "status": status, "drift": drift,
            })
        })
        .collect()
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

fn pins(admitted: &[Admitted]) -> Vec<Pin> {
    admitted
        .iter()
        .map(|a| Pin {
            tool: a.pin.clone(),
            call_name: a.tool.call_name.clone(),
            export: toolreg_core::export::to_mcp(&a.tool),
            // The lock's fingerprint, which the installed files were just
            // checked to have.
            definition: a.definition.clone(),
        })
        .collect()
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

fn report_live(ctx: &Context, admitted: &[Admitted], listed: &[Value]) -> Result<i32> {
    let pins = pins(admitted);
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
fn print_change(c: &DefinitionChange) {
    crate::out!("{}", crate::changes::render(c, true));
}
