//! The crate's one error type, and [`Problem`]: one validation finding with
//! the field path it concerns and, where obvious, how to fix it.

use serde::{Deserialize, Serialize};

/// One thing wrong (or worth a warning) in a tool definition or bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// Field path inside the definition (`parameters.a.type`, `version`) or
    /// a file name inside the bundle (`tool.ts`). Empty for the whole file.
    pub path: String,
    /// What is wrong, as a sentence.
    pub message: String,
    /// How to fix it, when that is obvious.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fix: Option<String>,
}

impl Problem {
    /// A problem at `path` (a field path or file name; empty for the whole file).
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            path: path.into(),
            message: message.into(),
            fix: None,
        }
    }

    /// Add how to fix it.
    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)?;
        } else {
            write!(f, "{}: {}", self.path, self.message)?;
        }
        if let Some(fix) = &self.fix {
            write!(f, " (fix: {fix})")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong in `toolreg-core`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The definition was read but is not valid: every problem found, at once.
    #[error("invalid tool definition: {}", summarize(.0))]
    Invalid(Vec<Problem>),

    /// The bundle (tar.gz) is malformed or breaks a rule (absolute path,
    /// `..`, link, duplicate entry, non-UTF-8 name, ...).
    #[error("bad bundle: {0}")]
    Bundle(String),

    /// The bundle exceeds a size or count limit. `limit` names the limit.
    #[error("bundle too large: {what} exceeds the limit of {limit}")]
    TooLarge {
        /// What was too large (`the unpacked bundle`, `the number of entries`).
        what: String,
        /// The limit, named as in [`crate::bundle::Limits`] (`max_unpacked = 67108864 bytes`).
        limit: String,
    },

    /// Reading a tool directory from disk failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory concerned.
        path: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A transparency-log proof was asked for with sizes or indexes that
    /// make no sense (index beyond the tree, `from` larger than `to`, ...).
    #[error("invalid log request: {0}")]
    LogRequest(String),
    /// An inclusion proof does not lead to the expected root.
    #[error("inclusion proof does not verify: {0}")]
    LogInclusion(String),
    /// A consistency proof does not connect the two trees: the log forked
    /// or was rolled back.
    #[error("consistency proof does not verify: {0}")]
    LogConsistency(String),
    /// A signed note, key or checkpoint is malformed (names the part).
    #[error("malformed {what}: {reason}")]
    LogMalformed {
        /// What was being read (`signed note`, `verifier key`, `checkpoint`).
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// No signature on the note verifies with the given key.
    #[error("signature does not verify: {0}")]
    LogSignature(String),
    /// The log's hash store is missing hashes or answered the wrong number of them.
    #[error("log storage: {0}")]
    LogStorage(String),

    /// An export that the tool's format cannot be expressed in.
    #[error("cannot export as {format}: {reason}")]
    Export {
        /// The export target (`matimo`, ...).
        format: String,
        /// Why the tool can't be expressed in it.
        reason: String,
    },
}

fn summarize(problems: &[Problem]) -> String {
    match problems {
        [] => "no details".to_string(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}

impl Error {
    /// The validation problems, if this is [`Error::Invalid`].
    pub fn problems(&self) -> &[Problem] {
        match self {
            Error::Invalid(p) => p,
            _ => &[],
        }
    }
}
