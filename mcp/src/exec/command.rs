//! Matimo `command` tools: `execution.command` and `execution.args`, run
//! without a shell. Each argv element is filled on its own, so an argument
//! value is always exactly one element (a value starting with `-` or
//! holding spaces is never split or read as something else); an element
//! that is exactly a left-out parameter is dropped. The working directory
//! is the installed tool's directory (or `execution.cwd` inside it); the
//! environment is the serving process's plus `execution.env`. The timeout
//! (`timeout_ms`, or Matimo's `timeout` in milliseconds; 30 s by default)
//! kills the whole process group. stdout, up to 1 MiB, is the answer; a
//! non-zero exit is an error with the exit code and an excerpt of stderr.
//!
//! Refused when the server starts (every call then says why): `shell:
//! true`, and a parameter in `command` (the caller would choose the
//! program).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use toolreg_core::Tool;

use super::process::{self, Ended};
use super::template::{as_text, declared_params, Whole};
use super::{excerpt, timeout_of, Call, Refusal, Reply};

/// The most stdout a command's answer keeps.
pub const STDOUT_CAP: usize = 1024 * 1024;

/// A command tool, ready to run.
#[derive(Debug)]
pub struct CommandPlan {
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: PathBuf,
    timeout: Duration,
}

impl CommandPlan {
    /// From the tool's execution detail; `dir` is its installed directory.
    pub fn new(tool: &Tool, dir: &Path) -> Result<Self, String> {
        let detail = &tool.execution.detail;
        let command = detail
            .get("command")
            .and_then(Value::as_str)
            .ok_or("the definition has no `execution.command`")?
            .to_string();
        if detail.get("shell").and_then(Value::as_bool) == Some(true) {
            return Err("`execution.shell: true` is not served: toolreg runs commands without a shell, so a value can never be read as shell syntax".into());
        }
        let params = declared_params(&tool.parameters);
        if let Some(p) = toolreg_core::validate::single_brace_placeholders(&command)
            .into_iter()
            .find(|p| params.iter().any(|d| d == p))
        {
            return Err(format!("`execution.command` contains the parameter {{{p}}}: the caller would choose the program to run, so this tool is not served"));
        }
        let args = match detail.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.iter().map(as_text).collect(),
            Some(_) => return Err("`execution.args` must be a list".into()),
        };
        let env = match detail.get("env") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), as_text(v))).collect(),
            Some(_) => return Err("`execution.env` must be a mapping of names to values".into()),
        };
        let cwd = match detail.get("cwd").and_then(Value::as_str) {
            None | Some(".") | Some("./") => dir.to_path_buf(),
            Some(rel) => {
                let rel = toolreg_core::validate::relative_file_path(rel)
                    .map_err(|why| format!("`execution.cwd` {why}"))?;
                dir.join(rel)
            }
        };
        Ok(CommandPlan {
            command,
            args,
            env,
            cwd,
            timeout: timeout_of(detail, 30_000),
        })
    }

    /// Run one call.
    pub async fn run(&self, call: &Call<'_>) -> Result<Reply, Refusal> {
        let fill = call.fill();
        let program = fill.text(&self.command, str::to_string)?;
        let mut args: Vec<OsString> = Vec::with_capacity(self.args.len());
        for a in &self.args {
            match fill.whole(a) {
                Some(Whole::Given(v)) => args.push(as_text(v).into()),
                Some(Whole::Absent) => {}
                None => args.push(fill.text(a, str::to_string)?.into()),
            }
        }
        let mut env = Vec::with_capacity(self.env.len());
        for (k, v) in &self.env {
            env.push((k.clone(), fill.text(v, str::to_string)?));
        }
        let done = process::run(process::Spec {
            program: program.clone().into(),
            args,
            cwd: self.cwd.clone(),
            env,
            stdin: Vec::new(),
            timeout: self.timeout,
            stdout_cap: STDOUT_CAP,
        })
        .await
        .map_err(|e| {
            Refusal::new(
                format!("could not start `{program}`: {e}"),
                "error: could not start the command",
            )
        })?;
        finish(done, self.timeout, "the command", call)
    }
}

/// The reply for a finished process (a command, or a runtime running a
/// tool's code): stdout as the answer, or why there is none.
pub(super) fn finish(
    done: process::Finished,
    timeout: Duration,
    what: &str,
    call: &Call<'_>,
) -> Result<Reply, Refusal> {
    let stderr = String::from_utf8_lossy(&done.stderr);
    match done.ended {
        Ended::TimedOut => Err(Refusal::new(
            format!(
                "timed out after {} ms; {what} and every process it started were killed",
                timeout.as_millis()
            ),
            "error: timeout",
        )),
        Ended::OverCap => Err(Refusal::new(
            format!("{what} wrote more than {} bytes to stdout, the cap; it was stopped and nothing is returned", STDOUT_CAP),
            "error: output over the cap",
        )),
        Ended::Exited(status) if !status.success() => {
            let how = match status.code() {
                Some(code) => format!("exited with code {code}"),
                None => {
                    use std::os::unix::process::ExitStatusExt;
                    format!("was killed by signal {}", status.signal().unwrap_or(0))
                }
            };
            let outcome = match status.code() {
                Some(code) => format!("error: exit code {code}"),
                None => "error: killed by a signal".to_string(),
            };
            Err(Refusal::new(
                format!("{what} {how}; stderr: {}", excerpt(&stderr, 2048)),
                outcome,
            ))
        }
        Ended::Exited(_) => {
            let text = String::from_utf8_lossy(&done.stdout).into_owned();
            let json = if call.output.has_schema() {
                serde_json::from_str(text.trim()).ok()
            } else {
                None
            };
            call.output.reply(text, json, call.protocol)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolreg_core::ToolFiles;

    fn command_tool(execution: &str) -> Tool {
        let mut files = ToolFiles::new();
        files.insert(
            "definition.yaml",
            format!("name: run_it\nversion: '1.0.0'\ndescription: Run it.\nparameters:\n  prog:\n    type: string\n    required: true\n    description: A value.\nexecution:\n{execution}"),
        );
        toolreg_core::load(&files).unwrap().tool
    }

    #[test]
    fn a_shell_or_a_caller_chosen_program_is_not_served() {
        let dir = Path::new("/tmp");
        let err = CommandPlan::new(
            &command_tool(
                "  type: command\n  command: 'sh'\n  args: ['-c', '{prog}']\n  shell: true\n",
            ),
            dir,
        )
        .unwrap_err();
        assert!(err.contains("shell: true"), "{err}");
        let err = CommandPlan::new(&command_tool("  type: command\n  command: '{prog}'\n"), dir)
            .unwrap_err();
        assert!(err.contains("the caller would choose the program"), "{err}");
        let err = CommandPlan::new(
            &command_tool("  type: command\n  command: 'ls'\n  args: ['{prog}']\n  cwd: '../up'\n"),
            dir,
        )
        .unwrap_err();
        assert!(err.contains("execution.cwd"), "{err}");
        let ok = CommandPlan::new(
            &command_tool(
                "  type: command\n  command: 'echo'\n  args: ['{prog}']\n  timeout: 250\n",
            ),
            dir,
        )
        .unwrap();
        assert_eq!(ok.timeout, Duration::from_millis(250));
        assert_eq!(ok.cwd, dir);
    }
}
