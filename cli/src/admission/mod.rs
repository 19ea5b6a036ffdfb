//! Admission: the one place that decides whether a pin may be written,
//! installed or handed to an agent. `add`, `update`, `install`, `verify`,
//! `export` and an MCP server run the same steps, in this order:
//!
//! 1. **Kind**: `[policy] allow` lists the pin's execution kind.
//! 2. **Not withheld**: the registry has not quarantined or blocked the
//!    version (its reason is the error). A version its owners deprecated
//!    is advice here: `add`, `update` and `install` pin it with a warning
//!    naming the successor, or refuse it under `[policy] deny_deprecated`.
//! 3. **Findings accepted**: every lint rule the registry found on the
//!    version is accepted by the lock (or, when pinning, by
//!    `--accept-findings` or `[policy] accept_findings`).
//! 4. **Provenance**: a version with provenance has a signed attestation
//!    that says so, its builder is the one the lock records, and
//!    `[policy] require_provenance` gets a builder from a repository it
//!    accepts.
//! 5. **Log inclusion**: the version's record is in the registry's signed
//!    transparency log, consistent with the checkpoint the lock keeps.
//! 6. **Bundle digest**: the bundle is the sha256 the lock pins.
//! 7. **Definition fingerprint**: the definition is the one the lock pins
//!    (and, when first recorded, the one the registry recorded at publish).
//! 8. **Files unchanged**: every installed file is as it was unpacked.
//!
//! The [`online`] steps ask the registry: 2 and 3 use its answer now, 4
//! verifies attestations, 5 fetches proofs. The [`offline`] steps need
//! none: 2 and 3 use the record of what the registry said last
//! ([`record`], written by the commands that asked), 4 uses the builder the
//! lock records, 5 is skipped (it was checked when the pin was written), and
//! 6–8 compare the installed files with the lock. A step that fails stops
//! the pin there; nothing is written.

pub mod findings;
pub mod offline;
pub mod online;
pub mod policy;
pub mod provenance;
pub mod record;

pub use offline::{admit_project, Admitted};
pub use online::Gate;
pub use policy::Policy;
