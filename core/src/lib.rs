//! The registry's language: what a tool definition is, how each of the four
//! formats reads into one canonical model, how a tool directory becomes a
//! deterministic bundle, and which publisher tier may publish what.
//!
//! This crate does no network or database I/O; the server and the CLI build
//! on it. The main entry points are:
//!
//! * [`ToolFiles`] — a tool directory in memory (read from disk or unpacked
//!   from a bundle by [`bundle::unpack`]).
//! * [`load`] — detect the format, parse, apply `toolreg.toml`, validate, lint,
//!   and return the canonical [`Tool`] with its warnings and lint findings, or
//!   every problem at once.
//! * [`bundle::pack`] — deterministic `.tar.gz` of a tool directory.
//! * [`export`] — the model as MCP, OpenAI function or Matimo definitions.
//! * [`policy`] — execution kinds, publisher tiers and the policy between them.
//! * [`lint`] — the definition lint: hidden characters, live credentials and
//!   injected instructions in any string of a definition, as [`Finding`]s.
//! * [`fingerprint`] — the definition fingerprint (SHA-256 of the RFC 8785
//!   form of the MCP export), and [`diff`] — what changed between two versions.

#![warn(missing_docs)]

pub mod bundle;
pub mod diff;
pub mod digest;
pub mod error;
pub mod export;
pub mod files;
pub mod fingerprint;
pub mod formats;
pub mod jcs;
pub mod lint;
pub mod manifest;
pub mod model;
pub mod name;
pub mod policy;
pub mod tlog;
pub mod validate;

pub use error::{Error, Problem};
pub use files::ToolFiles;
pub use formats::{load, Loaded};
pub use lint::{Finding, Rule, Severity};
pub use model::{Author, Execution, Format, Hints, Tool};
pub use policy::{ExecutionKind, Policy, Tier};
