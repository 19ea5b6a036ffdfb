//! `toolreg mcp proxy --pin NAME [--record] [--strict] [--project DIR]
//! (--url URL | -- CMD ARGS…)`: run a third-party MCP server (a command
//! over stdio, or a Streamable HTTP endpoint) behind toolreg, letting only
//! the tool definitions pinned in toolreg.lock's `[[server]]` entry `NAME`
//! through (see `toolreg_mcp::proxy`). This side reads the pins, reports
//! every withheld tool on stderr in `toolreg update`'s words (the change
//! summary, one line per change with its severity, the new lint findings),
//! and stores what `--record` pins and what is pending review.
//!
//! `toolreg mcp review NAME` and `toolreg mcp accept NAME [TOOL…]` are in
//! [`review`].

pub mod review;
pub mod store;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolreg_api::VersionDiff;
use toolreg_core::fingerprint;
use toolreg_mcp::proxy::{self, Config, Hooks, Pins, Status, Verdict};

use super::Context;
use crate::error::{Error, Result};
use crate::lock::{Launch, LockedServer, Lockfile};
use crate::output;
use store::Store;

/// `toolreg mcp proxy`.
pub fn run(
    ctx: &Context,
    project: Option<&Path>,
    name: &str,
    record: bool,
    strict: bool,
    launch: Launch,
) -> Result<i32> {
    store::check_name("--pin", name)?;
    if let Launch::Url(url) = &launch {
        proxy::check_url(url).map_err(|e| Error::Usage(e.to_string()))?;
    }
    let root = ctx.path(project);
    let lock = Lockfile::load(&root)?.unwrap_or_default();
    match lock.server(name) {
        None if !record => output::status(format!(
            "toolreg mcp proxy: toolreg.lock pins no server {name}: every tool it lists is withheld; run it once with --record to pin them (trust on first use)"
        )),
        Some(s) if s.launch != launch => output::status(format!(
            "toolreg mcp proxy: {name} was pinned running `{}`; it now runs `{}` (the pins still apply{})",
            s.launch,
            launch,
            if record { "; --record keeps the new command" } else { "" }
        )),
        _ => {}
    }
    let pins = pins_of(lock.server(name), &Store::load(&root, name));
    let hooks = Arc::new(Recorder {
        root: root.clone(),
        name: name.to_string(),
        launch: launch.clone(),
    });
    let ended = proxy::run(
        Config {
            server: name.to_string(),
            launch: match launch {
                Launch::Command(argv) => proxy::Launch::Command(argv),
                Launch::Url(url) => proxy::Launch::Url(url),
            },
            pins,
            record,
            strict,
            max_message: proxy::frame::MAX_MESSAGE,
        },
        hooks,
    )?;
    // The session printed why it ended, if it was not the agent's doing.
    Ok(if ended == proxy::Ended::AgentClosed {
        0
    } else {
        1
    })
}

/// The pins of a lock entry, with the stored definitions that still hash
/// to their fingerprints.
pub fn pins_of(server: Option<&LockedServer>, store: &Store) -> Pins {
    let Some(s) = server else {
        return Pins::default();
    };
    let definitions = store
        .pinned
        .iter()
        .filter(|(tool, def)| s.tools.get(*tool) == Some(&fingerprint::of_mcp(def)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Pins {
        tools: s.tools.clone(),
        accepted: s.accepted_findings.clone(),
        definitions,
    }
}

/// Writes what the proxy checks: pins recorded, definitions pending review,
/// and the report on stderr.
struct Recorder {
    root: PathBuf,
    name: String,
    launch: Launch,
}

impl Hooks for Recorder {
    fn checked(&self, pins: &Pins, verdicts: &[Verdict]) -> std::result::Result<(), String> {
        for v in verdicts.iter().filter(|v| !v.status.passes()) {
            output::status(report(&self.name, pins, v));
        }
        self.store(verdicts).map_err(|e| e.to_string())
    }
}

impl Recorder {
    fn store(&self, verdicts: &[Verdict]) -> Result<()> {
        let mut store = Store::load(&self.root, &self.name);
        for v in verdicts {
            if v.recorded {
                store.pinned.insert(v.name.clone(), v.definition.clone());
            }
            if v.status.passes() {
                store.pending.remove(&v.name);
            } else if v.status != Status::Invalid {
                store.pending.insert(v.name.clone(), v.definition.clone());
            }
        }
        let recorded: Vec<&Verdict> = verdicts.iter().filter(|v| v.recorded).collect();
        if !recorded.is_empty() {
            let mut lock = Lockfile::load(&self.root)?.unwrap_or_default();
            let mut entry = lock.server(&self.name).cloned().unwrap_or(LockedServer {
                name: self.name.clone(),
                launch: self.launch.clone(),
                tools: Default::default(),
                accepted_findings: Default::default(),
            });
            entry.launch = self.launch.clone();
            for v in &recorded {
                entry.tools.insert(v.name.clone(), v.fingerprint.clone());
                output::status(format!(
                    "toolreg mcp proxy: pinned {} of {} ({})",
                    v.name, self.name, v.fingerprint
                ));
            }
            lock.upsert_server(entry);
            lock.save(&self.root)?;
        }
        store.save(&self.root, &self.name)
    }
}

/// A withheld tool in `toolreg update`'s words: what happened, the change
/// summary and one line per change, the findings.
pub fn report(server: &str, pins: &Pins, v: &Verdict) -> String {
    let name = &v.name;
    let mut out = match v.status {
        Status::Pass => return String::new(),
        Status::Changed => format!("withheld {name} of {server}: its definition changed since it was pinned (pinned {}, listed {})", pins.tools.get(name).map(String::as_str).unwrap_or("?"), v.fingerprint),
        Status::Unpinned => format!("withheld {name} of {server}: it is not pinned (listed {}); see `toolreg mcp review {server}`", v.fingerprint),
        Status::Blocked => format!("withheld {name} of {server}: its definition hits block rule(s) {}; it can't be pinned or accepted", proxy::check::rules(v.findings.iter().filter(|f| f.is_block()))),
        Status::Flagged => format!("withheld {name} of {server}: lint flags not accepted ({}); read them with `toolreg mcp review {server}`, then `toolreg mcp accept {server} {name}`", proxy::check::rules(v.unaccepted_flags(pins))),
        Status::Invalid => format!("withheld {name} of {server}: a listed tool without a string `name`"),
    };
    out.insert_str(0, "toolreg mcp proxy: ");
    out.push('\n');
    out.push_str(&details(v));
    out.trim_end().to_string()
}

/// The change summary and lines (for a changed tool whose pinned definition
/// is known), then every block and flag finding.
pub fn details(v: &Verdict) -> String {
    let mut out = String::new();
    if let Some(d) = &v.diff {
        let vd = VersionDiff {
            from: d.from.clone(),
            to: d.to.clone(),
            changes: d.changes.clone(),
            new_findings: d
                .new_findings
                .iter()
                .filter_map(|f| serde_json::from_value(f.clone()).ok())
                .collect(),
        };
        out.push_str(&format!("  {}\n", super::update::summary(&vd)));
        for c in &vd.changes {
            out.push_str(&crate::changes::render(c, true));
        }
    } else if v.status == Status::Changed {
        out.push_str("  the changes can't be shown: the pinned definition is not stored here\n");
    }
    for f in &v.findings {
        out.push_str(&format!(
            "    {:<6}  {:<4} at {}: {}\n",
            f.severity.as_str(),
            f.rule.as_str(),
            if f.pointer.is_empty() {
                "/"
            } else {
                &f.pointer
            },
            f.message
        ));
    }
    out
}
