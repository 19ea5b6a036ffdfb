//! `toolreg mcp serve [--project DIR] [--tools a,b] [--http ADDR]
//! [--log-file F]`: the process an agent's config launches. It decides
//! which pins may be served ([`admitted`], offline: toolreg.lock, the
//! installed files and toolreg.toml, never the registry), reads how tools
//! run (`[policy] allow` for code-running kinds, `[runtime]` for
//! interpreters), and hands the rest to `toolreg-mcp`. Any refusal exits 1
//! before anything is served, naming the pin and the fix.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolreg_core::ExecutionKind;
use toolreg_mcp::{Catalog, Listen, Log, Pin, Runtimes, ServeHandler, Settings};

use super::verify::{check_all, refuse_drift};
use super::Context;
use crate::error::{Error, Result};
use crate::install::{self, State};
use crate::lock::{self, LockedTool, Lockfile};
use crate::pinning::{self, Acceptance};
use crate::project::Project;

/// `toolreg mcp serve`.
pub fn serve(
    ctx: &Context,
    project: Option<&Path>,
    tools: &[String],
    http: Option<SocketAddr>,
    log_file: Option<&Path>,
) -> Result<i32> {
    let root = ctx.path(project);
    let log = match log_file {
        Some(f) => Log::with_file(&ctx.path(Some(f)))?,
        None => Log::stderr(),
    };
    let pins = admitted(&root, tools)?;
    let settings = settings(&root, log.clone())?;
    let count = pins.len();
    let catalog = Catalog::new(pins, settings)?;
    let listen = match http {
        Some(addr) => Listen::Http(addr),
        None => Listen::Stdio,
    };
    toolreg_mcp::serve(ServeHandler::new(Arc::new(catalog)), listen, &log, |at| {
        log.line(&format!(
            "serving {count} tool(s) of {} {at}",
            root.display()
        ))
    })?;
    Ok(0)
}

/// Which pins may be served: the one place that decides. Offline, as
/// `toolreg verify` checks them: the project's toolreg.lock; each pin (of
/// `only`, by registry or call name, when given) installed, its files and
/// definition fingerprint as pinned; its execution kind allowed by
/// `[policy] allow`; every rule the definition lint finds in it now
/// accepted in toolreg.lock. `[policy] require_provenance` is enforced
/// where a pin is written (`add`, `update`, `install`), the only place the
/// registry's signed attestation can be checked.
pub fn admitted(root: &Path, only: &[String]) -> Result<Vec<Pin>> {
    let project = Project::load(root)?;
    let lock = Lockfile::load(root)?.ok_or_else(|| Error::Lock {
        path: root.join(lock::FILE).display().to_string(),
        message: "missing: there is nothing pinned to serve; run `toolreg add NAME` and `toolreg install`".into(),
    })?;
    let selected = select(&lock, root, only)?;
    let states = check_all_of(root, &selected)?;
    refuse_drift(&states, "serve the project's tools")?;
    let policy = match &project {
        Some(p) => p.policy()?,
        None => None,
    };
    let mut pins = Vec::with_capacity(states.len());
    for (pin, state) in states {
        let State::Intact { tool, findings, .. } = state else {
            continue;
        };
        let version = pin.version.to_string();
        if let Some(policy) = &policy {
            policy.check(&pin.name, &version, tool.execution.kind)?;
        }
        pinning::check_pin(&pin, &findings, &Acceptance::default(), true)?;
        pins.push(Pin {
            dir: install::tool_dir(root, &pin),
            name: pin.name,
            version,
            tool: *tool,
        });
    }
    Ok(pins)
}

/// The pins of `lock` to serve: all, or those `only` names (registry names,
/// or the call names of installed pins).
fn select(lock: &Lockfile, root: &Path, only: &[String]) -> Result<Vec<LockedTool>> {
    if only.is_empty() {
        return Ok(lock.tools().to_vec());
    }
    let mut out: Vec<LockedTool> = Vec::new();
    for name in only {
        let by_name = lock.tools().iter().find(|t| {
            toolreg_core::name::normalize(&t.name) == toolreg_core::name::normalize(name)
        });
        let found = by_name.cloned().or_else(|| {
            lock.tools()
                .iter()
                .find_map(|t| match install::check(root, t) {
                    Ok(State::Intact { tool, .. }) if tool.call_name == *name => Some(t.clone()),
                    _ => None,
                })
        });
        match found {
            Some(t) if !out.iter().any(|o| o.name == t.name) => out.push(t),
            Some(_) => {}
            None => {
                let pinned: Vec<&str> = lock.tools().iter().map(|t| t.name.as_str()).collect();
                return Err(Error::Usage(format!(
                    "--tools {name}: no pin of toolreg.lock is called that (pinned: {})",
                    pinned.join(", ")
                )));
            }
        }
    }
    // Lock order, whatever order --tools named them in.
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn check_all_of(root: &Path, pins: &[LockedTool]) -> Result<Vec<(LockedTool, State)>> {
    let mut lock = Lockfile::default();
    for p in pins {
        lock.upsert(p.clone());
    }
    check_all(root, &lock)
}

/// How tools run: the code-running kinds `[policy] allow` lists, and the
/// interpreters `[runtime]` names (a bare name is looked up on `PATH`, a
/// relative path is taken from the project directory).
fn settings(root: &Path, log: Log) -> Result<Settings> {
    let project = Project::load(root)?;
    let run_code = match &project {
        Some(p) => p
            .policy()?
            .map(|policy| {
                policy
                    .allow
                    .into_iter()
                    .filter(|k| matches!(k, ExecutionKind::Function | ExecutionKind::Script))
                    .collect()
            })
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let runtimes = match &project {
        Some(p) => runtimes(p, root)?,
        None => Runtimes::default(),
    };
    Ok(Settings {
        run_code,
        runtimes,
        log,
        ..Settings::default()
    })
}

/// `[runtime] node = "…"`, `deno = "…"`, `python = "…"` in toolreg.toml:
/// the interpreters tool code may run with, each resolved to an executable
/// now, so a wrong one is refused before serving.
fn runtimes(project: &Project, root: &Path) -> Result<Runtimes> {
    let err = |message: String| Error::Project {
        path: project.path().display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(project.path())
        .map_err(|e| Error::io("could not read", project.path(), e))?;
    let doc: toml::Table =
        toml::from_str(&text).map_err(|e| err(format!("not valid TOML: {}", e.message())))?;
    let Some(section) = doc.get("runtime") else {
        return Ok(Runtimes::default());
    };
    let table = section
        .as_table()
        .ok_or_else(|| err("`runtime` must be a table like `node = \"/usr/bin/node\"`".into()))?;
    let mut out = Runtimes::default();
    for (key, value) in table {
        let slot = match key.as_str() {
            "node" => &mut out.node,
            "deno" => &mut out.deno,
            "python" => &mut out.python,
            _ => {
                return Err(err(format!(
                    "`runtime.{key}` is not a runtime toolreg knows (node, deno, python)"
                )))
            }
        };
        let program = value
            .as_str()
            .ok_or_else(|| err(format!("`runtime.{key}` must be a program name or path")))?;
        let found = resolve_program(program, root).ok_or_else(|| {
            err(format!("[runtime] {key} = \"{program}\": no such executable (give a path, or a program on PATH)"))
        })?;
        *slot = Some(found);
    }
    Ok(out)
}

fn resolve_program(value: &str, root: &Path) -> Option<PathBuf> {
    let path = Path::new(value);
    let candidate = if value.contains('/') {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            root.join(path)
        }
    } else {
        let dirs = std::env::var_os("PATH")?;
        std::env::split_paths(&dirs)
            .map(|d| d.join(value))
            .find(|p| p.is_file())?
    };
    candidate.is_file().then_some(candidate)
}
