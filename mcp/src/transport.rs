//! Running an MCP server over a transport, for any rmcp `ServerHandler`
//! (`toolreg mcp serve` now, the proxy beside it later): stdio, where the
//! server ends when stdin closes, or Streamable HTTP on a loopback address
//! only — anything else would hand the tools, and the credentials in the
//! serving environment, to the network. The HTTP server also refuses
//! requests whose `Host` is not a loopback name (DNS rebinding) and every
//! browser request (any `Origin` header).

use std::net::SocketAddr;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use rmcp::service::ServerInitializeError;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt};

use crate::error::{Error, Result};
use crate::log::Log;

/// Where a server listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listen {
    /// stdin and stdout (the default; what agents launch).
    Stdio,
    /// Streamable HTTP on this loopback address (port 0: any free port).
    Http(SocketAddr),
}

/// The path the Streamable HTTP endpoint is announced at.
pub const HTTP_PATH: &str = "/mcp";

/// Parse `--http ADDR`: a loopback `IP:PORT` (`127.0.0.1:8808`,
/// `[::1]:8808`, `localhost:8808`), refusing any other address.
pub fn parse_http_addr(text: &str) -> Result<SocketAddr> {
    let text = text.trim();
    let addr: SocketAddr = match text.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}").parse(),
        None => text.parse(),
    }
    .map_err(|_| {
        Error::Address(format!(
            "--http {text}: expected a loopback address with a port, like 127.0.0.1:8808"
        ))
    })?;
    if !addr.ip().is_loopback() {
        return Err(Error::Address(format!(
            "--http {text}: {} is not a loopback address; toolreg serves the project's tools (and the credentials in its environment) only to this machine, so use 127.0.0.1 or [::1]",
            addr.ip()
        )));
    }
    Ok(addr)
}

/// Serve `handler` on `listen` until stdin closes (stdio) or the process is
/// interrupted (HTTP). `ready` is called with a line announcing where the
/// server is, once it accepts clients.
pub fn serve<S>(handler: S, listen: Listen, log: &Log, ready: impl FnOnce(&str)) -> Result<()>
where
    S: ServerHandler + Clone,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("could not start the async runtime", e))?;
    runtime.block_on(async move {
        match listen {
            Listen::Stdio => serve_stdio(handler, ready).await,
            Listen::Http(addr) => serve_http(handler, addr, log, ready).await,
        }
    })
}

async fn serve_stdio<S: ServerHandler>(handler: S, ready: impl FnOnce(&str)) -> Result<()> {
    ready("over stdio");
    let running = match handler.serve(rmcp::transport::stdio_pipes()).await {
        Ok(r) => r,
        // The client went away before it started a session.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(Error::Transport(e.to_string())),
    };
    running
        .waiting()
        .await
        .map_err(|e| Error::Transport(e.to_string()))?;
    Ok(())
}

async fn serve_http<S: ServerHandler + Clone>(
    handler: S,
    addr: SocketAddr,
    log: &Log,
    ready: impl FnOnce(&str),
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::io(format!("could not listen on {addr}"), e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Error::io(format!("could not listen on {addr}"), e))?;
    let config = StreamableHttpServerConfig::default().enforce_origin_validation();
    let service = TowerToHyperService::new(StreamableHttpService::new(
        move || Ok(handler.clone()),
        LocalSessionManager::default().into(),
        config,
    ));
    ready(&format!("on http://{bound}{HTTP_PATH}"));
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    log.line(&format!("could not accept a connection: {e}"));
                    continue;
                }
            },
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let service = service.clone();
        tokio::spawn(async move {
            let _ = Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_accepted() {
        assert_eq!(
            parse_http_addr("127.0.0.1:8808").unwrap(),
            "127.0.0.1:8808".parse().unwrap()
        );
        assert!(parse_http_addr("[::1]:0").is_ok());
        assert!(parse_http_addr("localhost:9").is_ok());
        for bad in [
            "0.0.0.0:8808",
            "192.168.1.5:80",
            "[::]:80",
            "8808",
            "example.com:80",
        ] {
            let err = parse_http_addr(bad).unwrap_err().to_string();
            assert!(
                err.contains("--http") && err.contains("loopback"),
                "{bad}: {err}"
            );
        }
    }
}
