//! Handlers under `/api/v1/tools`: publish, metadata, download, definition
//! export, attestation, version diffs, yank, deprecation, owners, reports
//! and quarantine.

pub mod attestation;
pub mod definition;
pub mod deprecation;
pub mod diff;
pub mod download;
pub mod metadata;
pub mod owners;
pub mod publish;
pub mod quarantine;
pub mod yank;
