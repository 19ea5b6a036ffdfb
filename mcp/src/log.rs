//! The server's log: one line per event on stderr (stdout carries protocol
//! messages only), and the same lines appended to a log file when one is
//! given. A `tools/call` line names the tool, the duration and the outcome,
//! never an argument value or a secret: outcomes are short fixed phrases
//! (`ok`, `error: http status 404`, `error: invalid arguments`, ...).

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{Error, Result};

/// Where log lines go. Cheap to clone; lines from concurrent calls never
/// interleave.
#[derive(Clone, Default)]
pub struct Log {
    file: Option<Arc<Mutex<std::fs::File>>>,
    quiet: bool,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log")
            .field("file", &self.file.is_some())
            .finish()
    }
}

impl Log {
    /// Log to stderr only.
    pub fn stderr() -> Self {
        Log::default()
    }

    /// Log nowhere (benchmarks).
    pub fn silent() -> Self {
        Log {
            file: None,
            quiet: true,
        }
    }

    /// Log to stderr and append to `path` (created if missing).
    pub fn with_file(path: &Path) -> Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| Error::io(format!("could not open the log file {}", path.display()), e))?;
        Ok(Log {
            file: Some(Arc::new(Mutex::new(file))),
            quiet: false,
        })
    }

    /// One line: `TIME toolreg mcp: MESSAGE`.
    pub fn line(&self, message: &str) {
        if self.quiet {
            return;
        }
        let stamp = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
        let text = format!("{stamp} toolreg mcp: {message}\n");
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
        if let Some(file) = &self.file {
            if let Ok(mut f) = file.lock() {
                let _ = f.write_all(text.as_bytes());
            }
        }
    }

    /// The line for one `tools/call` (or `prompts/get`): the call name (as
    /// an escaped literal, since a client may send any text), how long it
    /// took, and the outcome phrase.
    pub fn call(&self, method: &str, name: &str, took: Duration, outcome: &str) {
        self.line(&format!(
            "{method} \"{}\" {} ms {outcome}",
            name.escape_debug(),
            took.as_millis()
        ));
    }
}
