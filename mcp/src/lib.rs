//! `toolreg-mcp`: speaking MCP for toolreg. It takes an already-admitted,
//! fixed set of installed pins ([`Pin`]) and serves them with the official
//! Rust MCP SDK (rmcp): `tools/list` (each tool's MCP export for the
//! negotiated protocol version, see [`protocol`]), `tools/call` (arguments
//! checked against the input schema, then run by execution kind, see
//! [`exec`]) and prompts for prompt tools, over stdio or Streamable HTTP on
//! loopback ([`transport`]), with one log line per call ([`log`]).
//!
//! Which pins may be served is not decided here: the CLI checks the
//! project first (every pin installed and unchanged, its findings accepted,
//! the project's policy) and hands over only what passed.

pub mod arguments;
pub mod catalog;
pub mod error;
pub mod exec;
pub mod log;
pub mod protocol;
pub mod proxy;
pub mod serve;
pub mod transport;

pub use catalog::{Catalog, Pin, Settings};
pub use error::{Error, Result};
pub use exec::Runtimes;
pub use log::Log;
pub use serve::ServeHandler;
pub use transport::{parse_http_addr, serve, Listen};
