//! The crate's one error type: what keeps a set of tools from being served
//! (two tools under one call name, a definition the MCP types can't carry,
//! a listen address off loopback) and what ends a server (I/O, transport).
//! A failed tool call is not an error here: it is an `isError` result.

/// Everything that can stop `toolreg-mcp` from serving.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Two served tools export the same call name.
    #[error("{first} and {second} both export the tool `{call_name}`; an agent could not tell them apart, so nothing is served (remove one of them, or serve a subset with --tools)")]
    DuplicateName {
        /// The call name both export.
        call_name: String,
        /// The first pin (`NAME VERSION`).
        first: String,
        /// The second pin (`NAME VERSION`).
        second: String,
    },

    /// A tool's MCP export can't be served as is (the MCP SDK's types would
    /// change it, so the listed tool would not be the pinned one).
    #[error("{pin}: {reason}")]
    Unservable {
        /// The pin (`NAME VERSION`).
        pin: String,
        /// Why, naming the field.
        reason: String,
    },

    /// The Streamable HTTP address is not a loopback address.
    #[error("{0}")]
    Address(String),

    /// A proxy's upstream URL can't be used.
    #[error("--url {url}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// Why, in words.
        reason: String,
    },

    /// Reading, writing or listening failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done (`could not listen on 127.0.0.1:8080`).
        what: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// The MCP session could not be started or ended abnormally.
    #[error("MCP transport: {0}")]
    Transport(String),
}

impl Error {
    /// An I/O error with what was being done.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}

/// This crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
