//! Deterministic packing and limited unpacking of tool bundles (DESIGN §5).

use std::path::Path;

use crate::error::Error;
use crate::files::ToolFiles;

/// Limits enforced when a bundle is unpacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted compressed bundle (default 10 MiB).
    pub max_compressed: u64,
    /// Largest total unpacked size (default 64 MiB).
    pub max_unpacked: u64,
    /// Most entries in the tar (default 2,000).
    pub max_entries: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_compressed: 10 * 1024 * 1024, max_unpacked: 64 * 1024 * 1024, max_entries: 2000 }
    }
}

/// Pack a tool directory into a deterministic `.tar.gz`.
pub fn pack(files: &ToolFiles) -> Result<Vec<u8>, Error> {
    let _ = files;
    Err(Error::Bundle("not implemented yet".into()))
}

/// Read a directory and pack it (see [`pack`]).
pub fn pack_dir(dir: &Path) -> Result<Vec<u8>, Error> {
    pack(&ToolFiles::read_dir(dir)?)
}

/// Unpack a bundle within `limits`, refusing anything DESIGN §5 forbids.
pub fn unpack(bytes: &[u8], limits: &Limits) -> Result<ToolFiles, Error> {
    let _ = (bytes, limits);
    Err(Error::Bundle("not implemented yet".into()))
}
