//! The transparency log's data structures, without I/O: the record every
//! publish appends, RFC 6962/9162 Merkle hashing, tree roots and proofs read
//! from stored interior hashes, proof verification, and the C2SP signed note
//! and checkpoint formats the log's state is published in.
//!
//! The layout follows Go's `golang.org/x/mod/sumdb/tlog`: the hash of every
//! *complete* subtree is stored once, at `(level, n)` — level 0 holds the
//! leaf hashes, level `l` index `n` covers leaves `[n·2ˡ, (n+1)·2ˡ)`. A tree
//! of any size is then the combination of at most log₂(size) stored hashes,
//! and a proof touches O(log size) of them; nothing ever recomputes the tree.
//! Appending leaf `n` stores its hash plus one hash for every subtree it
//! completes ([`stored_hashes_for_record`]).
//!
//! Storage is abstracted by [`HashReader`]: the server reads the stored
//! hashes from its database, tests and benchmarks use [`MemoryHashes`].

mod checkpoint;
mod note;
mod tree;
mod verify;

pub use checkpoint::Checkpoint;
pub use note::{key_id, Signer, Verifier};
pub use tree::{
    prove_consistency, prove_inclusion, stored_hashes_for_record, tree_hash, HashReader,
    MemoryHashes, StoredIndex,
};
pub use verify::{root_from_inclusion, verify_consistency, verify_inclusion};

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// Errors of the log are variants of the crate's one error type
/// (`Error::LogRequest`, `LogInclusion`, `LogConsistency`, `LogMalformed`,
/// `LogSignature`, `LogStorage`).
pub use crate::error::Error;

/// A SHA-256 hash in the tree: a leaf hash, an interior node or a root.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Hash(pub [u8; 32]);

impl Hash {
    /// The hash as standard base64 (the form in checkpoints and proofs).
    pub fn to_base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.0)
    }

    /// Read a standard-base64 hash; `what` names it in the error.
    pub fn from_base64(s: &str, what: &'static str) -> Result<Hash, Error> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(s.trim())
            .map_err(|e| Error::LogMalformed {
                what,
                reason: format!("not base64: {e}"),
            })?;
        Hash::from_slice(&bytes, what)
    }

    /// A hash from exactly 32 bytes; `what` names it in the error.
    pub fn from_slice(bytes: &[u8], what: &'static str) -> Result<Hash, Error> {
        let arr: [u8; 32] = bytes.try_into().map_err(|_| Error::LogMalformed {
            what,
            reason: format!("a hash is 32 bytes, got {}", bytes.len()),
        })?;
        Ok(Hash(arr))
    }

    /// Lowercase hex.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl std::fmt::Debug for Hash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Hash({})", self.to_hex())
    }
}

impl std::fmt::Display for Hash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_base64())
    }
}

/// The root of the empty tree: SHA-256 of the empty string (RFC 9162 §2.1.1).
pub fn empty_root() -> Hash {
    Hash(Sha256::digest([]).into())
}

/// RFC 6962 leaf hash: `SHA-256(0x00 || record)`.
pub fn leaf_hash(record: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(record);
    Hash(h.finalize().into())
}

/// RFC 6962 interior node hash: `SHA-256(0x01 || left || right)`.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left.0);
    h.update(right.0);
    Hash(h.finalize().into())
}

/// The log record for one published version:
/// `toolreg <name> <version> sha256:<hex>\n` (`docs/transparency.md`).
pub fn record(name: &str, version: &str, sha256_hex: &str) -> String {
    format!("toolreg {name} {version} sha256:{sha256_hex}\n")
}

/// A log record read back: the tool name, version and bundle digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Registry name of the tool.
    pub name: String,
    /// The version, as published.
    pub version: String,
    /// Lowercase hex SHA-256 of the bundle.
    pub sha256: String,
}

impl Record {
    /// Parse a record's text; anything but exactly the [`record`] form is an error.
    pub fn parse(text: &str) -> Result<Record, Error> {
        let bad = |reason: &str| Error::LogMalformed {
            what: "log record",
            reason: reason.to_string(),
        };
        let line = text
            .strip_suffix('\n')
            .ok_or_else(|| bad("it must end with a newline"))?;
        let mut parts = line.split(' ');
        let (Some("toolreg"), Some(name), Some(version), Some(digest), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(bad("expected `toolreg <name> <version> sha256:<hex>`"));
        };
        let sha256 = digest
            .strip_prefix("sha256:")
            .filter(|h| crate::digest::is_sha256_hex(h))
            .ok_or_else(|| bad("the digest must be `sha256:` and 64 lowercase hex digits"))?;
        if name.is_empty() || version.is_empty() {
            return Err(bad("name and version must not be empty"));
        }
        Ok(Record {
            name: name.to_string(),
            version: version.to_string(),
            sha256: sha256.to_string(),
        })
    }

    /// The record's text.
    pub fn text(&self) -> String {
        record(&self.name, &self.version, &self.sha256)
    }

    /// The record's leaf hash.
    pub fn leaf_hash(&self) -> Hash {
        leaf_hash(self.text().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trips_and_rejects_variants() {
        let digest = "a".repeat(64);
        let text = record("web-search", "1.2.0", &digest);
        assert_eq!(text, format!("toolreg web-search 1.2.0 sha256:{digest}\n"));
        let parsed = Record::parse(&text).unwrap();
        assert_eq!(parsed.text(), text);
        for bad in [
            format!("toolreg web-search 1.2.0 sha256:{digest}"),
            format!("toolreg web-search 1.2.0 sha512:{digest}\n"),
            format!("toolreg web-search  1.2.0 sha256:{digest}\n"),
            format!("toolreg web-search 1.2.0 sha256:{}\n", "A".repeat(64)),
            format!("npm web-search 1.2.0 sha256:{digest}\n"),
            format!("toolreg web-search 1.2.0 sha256:{digest} extra\n"),
        ] {
            assert!(Record::parse(&bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn hash_base64_checks_length() {
        let h = leaf_hash(b"x");
        assert_eq!(Hash::from_base64(&h.to_base64(), "hash").unwrap(), h);
        assert!(Hash::from_base64("AAAA", "hash").is_err());
        assert!(Hash::from_base64("!!", "hash").is_err());
    }
}
