//! `function` and `script` tools: the tool's own code, run in a child
//! process by an interpreter the project names under `[runtime]` in
//! toolreg.toml, and only when `[policy] allow` lists the kind. Which
//! runtime runs what:
//!
//! | tool | code | runtime | called as |
//! |---|---|---|---|
//! | Matimo `function` | `code:` a `.js`/`.mjs`/`.cjs` file | node (else deno) | its default export, `fn(params, {})` |
//! | Matimo `function` | `code:` a `.ts`/`.mts` file | deno | its default export, `fn(params, {})` |
//! | Matimo `script` | inline `code:` (a function expression) | node (else deno) | `fn(params, {})` |
//! | Shinkai | `tool.ts` | deno | `run(config, params)` |
//! | Shinkai | `tool.py` | python | `run(CONFIG, INPUTS)`, awaited if async |
//!
//! Each call is one process (its own process group, killed at the
//! timeout: `timeout_ms`, or Matimo's `timeout` in milliseconds, 30 s by
//! default) that gets `{"params", "config"}` as JSON on stdin and writes the
//! result as JSON on stdout. A Shinkai tool's configuration values are read
//! from environment variables named like its configuration keys. deno runs
//! with `--allow-net --allow-env --allow-read=<the tool's directory>` and
//! nothing more; a Python tool's declared dependencies are not installed.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{json, Map, Value};
use toolreg_core::{ExecutionKind, Format, Tool};

use super::{timeout_of, Call, PlanContext, Refusal, Reply};

/// The interpreters `[runtime]` names.
#[derive(Debug, Clone, Default)]
pub struct Runtimes {
    /// node, for JavaScript.
    pub node: Option<PathBuf>,
    /// deno, for TypeScript (and JavaScript when there is no node).
    pub deno: Option<PathBuf>,
    /// python, for Shinkai `tool.py`.
    pub python: Option<PathBuf>,
}

/// The launcher scripts, written once into a private temporary directory
/// the first time a runtime tool is planned.
#[derive(Debug, Default)]
pub struct Launchers {
    dir: OnceLock<Result<tempfile::TempDir, String>>,
}

const LAUNCH_JS: &str = include_str!("launch/launch.mjs");
const LAUNCH_PY: &str = include_str!("launch/launch.py");

impl Launchers {
    fn path(&self, name: &str) -> Result<PathBuf, String> {
        let dir = self.dir.get_or_init(|| {
            let dir = tempfile::Builder::new()
                .prefix("toolreg-mcp-")
                .tempdir()
                .map_err(|e| format!("could not create the launcher directory: {e}"))?;
            for (file, text) in [("launch.mjs", LAUNCH_JS), ("launch.py", LAUNCH_PY)] {
                std::fs::write(dir.path().join(file), text)
                    .map_err(|e| format!("could not write the launcher {file}: {e}"))?;
            }
            Ok(dir)
        });
        match dir {
            Ok(d) => Ok(d.path().join(name)),
            Err(e) => Err(e.clone()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    Node,
    Deno,
    Python,
}

impl Runner {
    fn name(self) -> &'static str {
        match self {
            Runner::Node => "node",
            Runner::Deno => "deno",
            Runner::Python => "python",
        }
    }
}

/// One configuration value a Shinkai tool reads, from the environment.
#[derive(Debug)]
struct ConfigKey {
    name: String,
    required: bool,
    number: bool,
}

/// A function or script tool with its runtime, ready to run.
#[derive(Debug)]
pub struct RuntimePlan {
    program: PathBuf,
    args: Vec<OsString>,
    dir: PathBuf,
    timeout: Duration,
    config: Vec<ConfigKey>,
}

impl RuntimePlan {
    /// The plan, or why the tool can't run here (the policy doesn't allow
    /// its kind, no runtime for its code is configured).
    pub fn new(tool: &Tool, cx: &PlanContext) -> Result<Self, String> {
        let kind = tool.execution.kind;
        if !cx.run_code.contains(&kind) {
            return Err(format!("this is a `{kind}` tool: it runs code from its bundle, which `toolreg mcp serve` runs only when toolreg.toml's [policy] allow lists \"{kind}\" (and [runtime] names an interpreter for it)"));
        }
        let detail = &tool.execution.detail;
        let (choices, mode, target): (&[Runner], &str, OsString) = match (tool.format, kind) {
            (Format::Shinkai, _) => {
                let file = detail
                    .get("code_file")
                    .and_then(Value::as_str)
                    .ok_or("the Shinkai tool has no tool.ts or tool.py")?;
                let path = cx.dir.join(file).into_os_string();
                if file.ends_with(".py") {
                    (&[Runner::Python], "python", path)
                } else {
                    (&[Runner::Deno], "shinkai", path)
                }
            }
            (_, ExecutionKind::Script) => {
                let code = detail
                    .get("code")
                    .and_then(Value::as_str)
                    .ok_or("the script tool has no `execution.code`")?;
                (&[Runner::Node, Runner::Deno], "matimo-script", code.into())
            }
            _ => {
                let code = detail
                    .get("code")
                    .and_then(Value::as_str)
                    .ok_or("the function tool has no `execution.code`")?;
                let rel = toolreg_core::validate::relative_file_path(code)
                    .map_err(|why| format!("`execution.code` {why}"))?;
                let runners: &[Runner] = match Path::new(&rel).extension().and_then(|e| e.to_str()) {
                    Some("js" | "mjs" | "cjs") => &[Runner::Node, Runner::Deno],
                    Some("ts" | "mts") => &[Runner::Deno],
                    _ => return Err(format!("`execution.code` `{code}` is neither JavaScript nor TypeScript; no runtime runs it")),
                };
                (
                    runners,
                    "matimo-function",
                    cx.dir.join(rel).into_os_string(),
                )
            }
        };
        let (runner, program) = choices
            .iter()
            .find_map(|r| runtime_path(cx.runtimes, *r).map(|p| (*r, p.to_path_buf())))
            .ok_or_else(|| {
                let names: Vec<&str> = choices.iter().map(|r| r.name()).collect();
                format!(
                    "this `{kind}` tool needs a {} runtime: name it under [runtime] in toolreg.toml, like `{} = \"/usr/bin/{}\"`",
                    names.join(" or "),
                    names[0],
                    names[0]
                )
            })?;
        let mut args: Vec<OsString> = Vec::new();
        match runner {
            Runner::Python => {
                args.push(cx.launchers.path("launch.py")?.into_os_string());
                args.push(target);
            }
            Runner::Node => {
                args.push(cx.launchers.path("launch.mjs")?.into_os_string());
                args.push(mode.into());
                args.push(target);
            }
            Runner::Deno => {
                let mut read = OsString::from("--allow-read=");
                read.push(cx.dir);
                args.extend([
                    "run".into(),
                    "--quiet".into(),
                    "--no-prompt".into(),
                    "--allow-net".into(),
                    "--allow-env".into(),
                    read,
                ]);
                args.push(cx.launchers.path("launch.mjs")?.into_os_string());
                args.push(mode.into());
                args.push(target);
            }
        }
        Ok(RuntimePlan {
            program,
            args,
            dir: cx.dir.to_path_buf(),
            timeout: timeout_of(detail, 30_000),
            config: config_keys(tool),
        })
    }

    /// Run one call.
    pub async fn run(&self, call: &Call<'_>) -> Result<Reply, Refusal> {
        let mut config = Map::new();
        for key in &self.config {
            match (call.env)(&key.name) {
                Some(v) => {
                    let value = if key.number {
                        serde_json::from_str::<Value>(&v).unwrap_or(Value::String(v))
                    } else {
                        Value::String(v)
                    };
                    config.insert(key.name.clone(), value);
                }
                None if key.required => return Err(Refusal::missing_env(&key.name)),
                None => {}
            }
        }
        let input = json!({"params": call.args, "config": config}).to_string();
        let done = super::process::run(super::process::Spec {
            program: self.program.clone().into_os_string(),
            args: self.args.clone(),
            cwd: self.dir.clone(),
            env: Vec::new(),
            stdin: input.into_bytes(),
            timeout: self.timeout,
            stdout_cap: super::command::STDOUT_CAP,
        })
        .await
        .map_err(|e| {
            Refusal::new(
                format!(
                    "could not start the runtime {}: {e}",
                    self.program.display()
                ),
                "error: could not start the runtime",
            )
        })?;
        super::command::finish(done, self.timeout, "the tool's code", call)
    }
}

fn runtime_path(r: &Runtimes, runner: Runner) -> Option<&Path> {
    match runner {
        Runner::Node => r.node.as_deref(),
        Runner::Deno => r.deno.as_deref(),
        Runner::Python => r.python.as_deref(),
    }
}

fn config_keys(tool: &Tool) -> Vec<ConfigKey> {
    let Some(schema) = &tool.config_schema else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, s)| ConfigKey {
                    name: name.clone(),
                    required: required.contains(&name.as_str()) && s.get("default").is_none(),
                    number: matches!(
                        s.get("type").and_then(Value::as_str),
                        Some("number" | "integer" | "boolean")
                    ),
                })
                .collect()
        })
        .unwrap_or_default()
}
