//! `toolreg mcp serve [--project DIR] [--tools a,b] [--http ADDR]
//! [--log-file F]`: the process an agent's config launches. It decides
//! which pins may be served ([`admitted`], offline: toolreg.lock, the
//! installed files, toolreg.toml and the record of what the registry said
//! last, never the registry), reads how tools
//! run (`[policy] allow` for code-running kinds, `[runtime]` for
//! interpreters), and hands the rest to `toolreg-mcp`. Any refusal exits 1
//! before anything is served, naming the pin and the fix.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolreg_core::ExecutionKind;
use toolreg_mcp::{Catalog, Listen, Log, Pin, Runtimes, ServeHandler, Settings};

use super::Context;
use crate::admission::offline;
use crate::error::{Error, Result};
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

/// Which pins may be served: the one place that decides. The pins `only`
/// selects (by registry or call name; all when empty) must pass the offline
/// admission steps ([`offline::admit_selected`], as `toolreg verify
/// --offline` runs them: kind allowed by `[policy] allow`, not withheld and
/// its findings accepted as the registry last said, the builder
/// `require_provenance` wants, the installed files and definition
/// fingerprint as pinned). The registry is never asked. Pinned skills are
/// admitted but not served: agents read them from their skills folders.
pub fn admitted(root: &Path, only: &[String]) -> Result<Vec<Pin>> {
    Ok(
        offline::admit_selected(root, "serve the project's tools", only)?
            .into_iter()
            // A skill is instructions an agent reads from its skills
            // folder, not a tool it calls.
            .filter(|a| a.tool.format != toolreg_core::Format::Skill)
            .map(|a| Pin {
                name: a.pin.name,
                version: a.pin.version.to_string(),
                dir: a.dir,
                tool: *a.tool,
            })
            .collect(),
    )
}

/// How tools run: the code-running kinds `[policy] allow` lists, and the
/// interpreters `[runtime]` names (a bare name is looked up on `PATH`, a
/// relative path is taken from the project directory).
fn settings(root: &Path, log: Log) -> Result<Settings> {
    let project = Project::load(root)?;
    let run_code = match &project {
        Some(p) => p
            .policy()
            .allow
            .iter()
            .flat_map(|k| k.allow.iter().copied())
            .filter(|k| matches!(k, ExecutionKind::Function | ExecutionKind::Script))
            .collect(),
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
