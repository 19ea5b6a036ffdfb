//! Running one child process for a call (a `command` tool, or a runtime
//! loading a tool's code): no shell, its own process group, stdin given
//! and closed, stdout and stderr read with caps, and a deadline. At the
//! deadline, past a cap, when the call is abandoned, and after the process
//! exits, the whole group is killed, so nothing a tool forked outlives its
//! call.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;

/// What to run.
pub struct Spec {
    /// The program (looked up on `PATH` when it has no `/`).
    pub program: OsString,
    /// Its arguments, each passed as one argv element.
    pub args: Vec<OsString>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Variables set on top of the serving process's environment.
    pub env: Vec<(String, String)>,
    /// Written to stdin, which is then closed.
    pub stdin: Vec<u8>,
    /// The deadline.
    pub timeout: Duration,
    /// The most stdout bytes kept; more ends the process.
    pub stdout_cap: usize,
}

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited (or was killed by a signal) by itself.
    Exited(ExitStatus),
    /// The deadline passed; the group was killed.
    TimedOut,
    /// stdout passed its cap; the group was killed.
    OverCap,
}

/// A finished process: how it ended and what it wrote.
pub struct Finished {
    pub ended: Ended,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// The most stderr bytes kept (only an excerpt is ever shown).
const STDERR_CAP: usize = 64 * 1024;

/// Kills the process group when dropped: on every way out of [`run`],
/// including the caller abandoning the call.
struct GroupGuard(Option<i32>);

impl GroupGuard {
    fn kill(&self) {
        if let Some(pgid) = self.0 {
            // SAFETY: killpg has no memory-safety preconditions; a group
            // that is already gone answers ESRCH, which is ignored.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Run `spec` to its end. Fails only when the process can't be started.
pub async fn run(spec: Spec) -> std::io::Result<Finished> {
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let guard = GroupGuard(child.id().and_then(|id| i32::try_from(id).ok()));

    let over = Arc::new(Notify::new());
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out_task = tokio::spawn(read_capped(stdout, spec.stdout_cap, Some(over.clone())));
    let err_task = tokio::spawn(read_capped(stderr, STDERR_CAP, None));
    if let Some(mut stdin) = child.stdin.take() {
        let input = spec.stdin;
        tokio::spawn(async move {
            // A process that doesn't read its stdin closes the pipe: fine.
            let _ = stdin.write_all(&input).await;
        });
    }

    let ended = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => Ended::Exited(status),
            Err(e) => return Err(e),
        },
        _ = tokio::time::sleep(spec.timeout) => Ended::TimedOut,
        _ = over.notified() => Ended::OverCap,
    };
    // Whatever the leader left running (or everything, at a deadline or
    // cap) goes now, which also closes the pipes the readers wait on.
    guard.kill();
    if !matches!(ended, Ended::Exited(_)) {
        let _ = child.wait().await;
    }
    let (stdout, _) = out_task.await.unwrap_or_default();
    let (stderr, _) = err_task.await.unwrap_or_default();
    drop(guard);
    Ok(Finished {
        ended,
        stdout,
        stderr,
    })
}

/// Read a pipe to its end, keeping at most `cap` bytes; past the cap,
/// notify `over` (if given) and stop reading.
async fn read_capped<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    cap: usize,
    over: Option<Arc<Notify>>,
) -> (Vec<u8>, bool) {
    let Some(mut pipe) = pipe else {
        return (Vec::new(), false);
    };
    let mut kept = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return (kept, false),
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                if n > room {
                    if let Some(over) = &over {
                        over.notify_one();
                        return (kept, true);
                    }
                }
            }
        }
    }
}
