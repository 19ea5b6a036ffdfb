//! Handlers under `/api/v1/tools`: publish, metadata, download, definition
//! export, version diffs, yank and owners.

pub mod definition;
pub mod diff;
pub mod download;
pub mod metadata;
pub mod owners;
pub mod publish;
pub mod yank;
