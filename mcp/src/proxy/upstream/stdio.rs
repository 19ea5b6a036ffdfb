//! A stdio upstream: the server as a child process, one JSON-RPC message
//! per line each way ([`frame`]). Its stderr is the proxy's stderr.

use std::process::Stdio as Piped;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::super::frame::{self, Frame};
use super::super::session::{write_lines, Shared};
use super::super::Ended;
use crate::error::{Error, Result};

pub(in crate::proxy) struct Stdio {
    child: Child,
    pipes: Option<(ChildStdin, ChildStdout)>,
    reader: Option<JoinHandle<()>>,
    writer: Option<JoinHandle<()>>,
}

impl Stdio {
    pub(super) fn start(argv: &[String]) -> Result<Stdio> {
        let Some((program, args)) = argv.split_first() else {
            return Err(Error::Transport(
                "no server command: give it after `--`".into(),
            ));
        };
        let mut child = Command::new(program)
            .args(args)
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .stderr(Piped::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| Error::io(format!("could not start `{program}`"), e))?;
        let (Some(child_in), Some(child_out)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Error::Transport("the server's stdio was not piped".into()));
        };
        Ok(Stdio {
            child,
            pipes: Some((child_in, child_out)),
            reader: None,
            writer: None,
        })
    }

    pub(super) fn spawn(&mut self, shared: Arc<Shared>, rx: mpsc::UnboundedReceiver<Vec<u8>>) {
        if let Some((child_in, child_out)) = self.pipes.take() {
            self.writer = Some(tokio::spawn(write_lines(rx, child_in)));
            self.reader = Some(tokio::spawn(read(shared, child_out)));
        }
    }

    pub(super) fn stop_reading(&mut self) {
        if let Some(r) = self.reader.take() {
            r.abort();
        }
    }

    pub(super) fn stop_writing(&mut self) {
        // Dropping the writer closes the child's stdin.
        if let Some(w) = self.writer.take() {
            w.abort();
        }
    }

    /// How the child ended (it closed its stdout).
    pub(super) async fn exit_status(&mut self) -> String {
        match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            Ok(Err(e)) => format!("its status is unknown: {e}"),
            Err(_) => {
                let _ = self.child.kill().await;
                "it closed its stdout and was stopped".into()
            }
        }
    }

    pub(super) async fn close(mut self, agent_closed: bool) {
        if agent_closed {
            // Its stdin is closed now: give it a moment to leave.
            if tokio::time::timeout(Duration::from_secs(2), self.child.wait())
                .await
                .is_err()
            {
                let _ = self.child.kill().await;
            }
        } else {
            let _ = self.child.kill().await;
        }
    }
}

async fn read<R: AsyncRead + Unpin>(shared: Arc<Shared>, out: R) {
    let mut r = BufReader::new(out);
    loop {
        match frame::read(&mut r, shared.config.max_message).await {
            Ok(Frame::Line(line)) => shared.from_upstream(line),
            Ok(Frame::TooLong(n)) => {
                shared.end(Ended::TooLong(n));
                return;
            }
            Ok(Frame::End) | Err(_) => {
                shared.end(Ended::UpstreamExited(String::new()));
                return;
            }
        }
    }
}
