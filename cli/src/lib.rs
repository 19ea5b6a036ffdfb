//! The `toolreg` command line as a library: argument definitions
//! ([`args`]), one module per command ([`commands`]), and the pieces they
//! share — user config, the registry client, the project's `toolreg.toml`,
//! `toolreg.lock`, verified installs, the admission of pins
//! ([`admission`]), and pinned skills in agents' skills folders
//! ([`skills`]). `main.rs` only parses and reports.

pub mod admission;
pub mod args;
pub mod changes;
pub mod client;
pub mod commands;
pub mod config;
pub mod error;
pub mod install;
pub mod link;
pub mod lock;
pub mod oidc;
pub mod output;
pub mod pinning;
pub mod project;
pub mod provenance;
pub mod skills;
pub mod transparency;

pub use error::{Error, Result};
