//! The upstream side of a proxy session, one implementation per way of
//! reaching a third-party MCP server: [`stdio`] runs it as a child process
//! and speaks MCP's stdio framing (one message per line); [`http`] speaks
//! the Streamable HTTP transport to a URL. Both only move JSON-RPC
//! messages as bytes: what the session hands them goes to the server, and
//! every message the server sends goes to [`Shared::from_upstream`], where
//! the checks live, so the checks are the same whichever way the server is
//! reached.

pub(super) mod http;
pub(super) mod sse;
pub(super) mod stdio;

use std::sync::Arc;

use tokio::sync::mpsc;

use super::session::Shared;
use super::{Config, Ended, Launch};
use crate::error::Result;

/// The server of one session.
pub(super) enum Upstream {
    Stdio(stdio::Stdio),
    Http(http::Http),
}

impl Upstream {
    /// Start the child process, or prepare the HTTP client (no request is
    /// sent before the agent's `initialize`).
    pub(super) fn start(config: &Config) -> Result<Upstream> {
        Ok(match &config.launch {
            Launch::Command(argv) => Upstream::Stdio(stdio::Stdio::start(argv)?),
            Launch::Url(url) => Upstream::Http(http::Http::start(url)?),
        })
    }

    /// Start moving messages: what arrives on `rx` goes to the server,
    /// what the server sends goes to `shared`.
    pub(super) fn spawn(&mut self, shared: Arc<Shared>, rx: mpsc::UnboundedReceiver<Vec<u8>>) {
        match self {
            Upstream::Stdio(s) => s.spawn(shared, rx),
            Upstream::Http(h) => h.spawn(shared, rx),
        }
    }

    /// Stop reading from the server (the session has ended).
    pub(super) fn stop_reading(&mut self) {
        match self {
            Upstream::Stdio(s) => s.stop_reading(),
            Upstream::Http(h) => h.stop_reading(),
        }
    }

    /// Stop sending to the server.
    pub(super) fn stop_writing(&mut self) {
        match self {
            Upstream::Stdio(s) => s.stop_writing(),
            Upstream::Http(h) => h.stop_writing(),
        }
    }

    /// `ended`, with what only the upstream knows added (a child's exit
    /// status).
    pub(super) async fn ended(&mut self, ended: Ended) -> Ended {
        match (self, ended) {
            (Upstream::Stdio(s), Ended::UpstreamExited(_)) => {
                Ended::UpstreamExited(s.exit_status().await)
            }
            (_, ended) => ended,
        }
    }

    /// Let the server go: a child gets a moment to leave after its stdin
    /// closes when the agent ended the session (else it is killed); an
    /// HTTP session is deleted.
    pub(super) async fn close(self, agent_closed: bool) {
        match self {
            Upstream::Stdio(s) => s.close(agent_closed).await,
            Upstream::Http(h) => h.close().await,
        }
    }
}
