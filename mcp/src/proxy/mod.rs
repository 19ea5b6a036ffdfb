//! `toolreg mcp proxy`: an MCP server over stdio to the agent in front of
//! a third-party MCP server (the upstream), run as a child process or
//! reached at a Streamable HTTP URL ([`upstream`]), that lets only its
//! pinned tool definitions through.
//!
//! The proxy forwards JSON-RPC messages as they are, byte for byte, in
//! both directions: requests keep their ids, and results, notifications,
//! progress, cancellation, resources, prompts, server-to-client requests
//! and the negotiated protocol version pass untouched. Two messages are
//! read and changed:
//!
//! * every `tools/list` result from the upstream is checked ([`check`]):
//!   a tool whose fingerprint matches its pin (and whose lint flags were
//!   accepted) is passed through as listed, every other one is left out;
//! * every `tools/call` from the agent names a tool; a call to one that
//!   did not pass the last check is refused with a JSON-RPC error naming
//!   the tool and the reason, and never reaches the upstream.
//!
//! The proxy lists the upstream's tools itself once the session starts and
//! again on every `notifications/tools/list_changed`; calls wait for that
//! check. Malformed JSON and messages over [`frame::MAX_MESSAGE`] are never
//! forwarded. A child process's stderr is the proxy's stderr.

pub mod check;
pub mod frame;
mod session;
mod upstream;

use crate::error::{Error, Result};
pub use check::{Pins, Status, Verdict};

/// What to run and what is pinned.
#[derive(Debug, Clone)]
pub struct Config {
    /// The pinned server's name (in messages and reports).
    pub server: String,
    /// How the upstream is reached.
    pub launch: Launch,
    /// The pins in force when the session starts.
    pub pins: Pins,
    /// Pin tools not pinned yet (trust on first use).
    pub record: bool,
    /// End the session instead of withholding a tool.
    pub strict: bool,
    /// The largest message read either way.
    pub max_message: usize,
}

/// How the upstream is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// A command and its arguments, run as a child process (stdio).
    Command(Vec<String>),
    /// A Streamable HTTP endpoint (`http://` or `https://`).
    Url(String),
}

/// Check a Streamable HTTP endpoint given on the command line: an absolute
/// `http://` or `https://` URL with a host and no credentials in it.
pub fn check_url(url: &str) -> Result<()> {
    upstream::http::endpoint(url).map(|_| ())
}

/// What the proxy tells its caller as checks happen.
pub trait Hooks: Send + Sync + 'static {
    /// Tools whose verdict is new or differs from the one last reported
    /// (`pins`: as they were for that check). Recorded tools are in
    /// `verdicts` with [`Verdict::recorded`]; the caller stores them.
    /// An error is printed, and the session goes on.
    fn checked(&self, pins: &Pins, verdicts: &[Verdict]) -> std::result::Result<(), String>;
}

/// Why a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The agent closed stdin: a normal end.
    AgentClosed,
    /// The upstream closed its stdout or exited (how, as text).
    UpstreamExited(String),
    /// `--strict`: a tool would have been withheld (which, and why).
    Strict(String),
    /// The upstream sent a message over the cap (its size).
    TooLong(usize),
    /// The HTTP upstream could not be reached, refused the session or
    /// answered with something other than MCP (what happened, as text).
    UpstreamFailed(String),
}

impl Ended {
    /// The line the session prints on stderr as it ends (`None` for a
    /// normal end).
    pub fn message(&self, server: &str) -> Option<String> {
        match self {
            Ended::AgentClosed => None,
            Ended::UpstreamExited(how) => Some(format!(
                "the server {server} exited ({how}); the session ends"
            )),
            Ended::Strict(why) => Some(format!(
                "--strict: {why}; the session ends instead of withholding it"
            )),
            Ended::TooLong(n) => Some(format!(
                "the server {server} sent a message of more than {n} bytes (the limit is {} bytes); nothing of it was forwarded and the session ends",
                frame::MAX_MESSAGE
            )),
            Ended::UpstreamFailed(how) => Some(format!(
                "the server {server} failed: {how}; the session ends"
            )),
        }
    }
}

/// Run one proxy session with the agent on `agent_in` and `agent_out`
/// (what [`run`] does over stdio; benchmarks use in-memory pipes), on the
/// caller's tokio runtime.
pub async fn run_on<I, O>(
    config: Config,
    hooks: std::sync::Arc<dyn Hooks>,
    agent_in: I,
    agent_out: O,
) -> Result<Ended>
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    if let Launch::Url(url) = &config.launch {
        check_url(url)?;
    }
    session::run(config, hooks, agent_in, agent_out).await
}

/// Run one proxy session over this process's stdin and stdout until the
/// agent or the upstream ends it.
pub fn run(config: Config, hooks: std::sync::Arc<dyn Hooks>) -> Result<Ended> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("could not start the async runtime", e))?;
    let ended = runtime.block_on(run_on(
        config,
        hooks,
        tokio::io::stdin(),
        tokio::io::stdout(),
    ));
    // The read of stdin blocks a thread until the agent writes or closes
    // it; a session the upstream ended must not wait for that.
    runtime.shutdown_background();
    ended
}
