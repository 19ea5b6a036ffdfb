//! SHA-256 digests as lowercase hex, the form used in bundle addresses
//! (`bundles/sha256/<hex>`), `X-Checksum-Sha256` and `toolreg.lock`.

use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// True if `s` looks like a lowercase hex SHA-256 digest (64 hex digits).
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Incremental hasher for streamed bodies.
#[derive(Default)]
pub struct Sha256Hasher(Sha256);

impl Sha256Hasher {
    /// A fresh hasher.
    pub fn new() -> Self {
        Self::default()
    }
    /// Feed more bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    /// The digest of everything fed, as lowercase hex.
    pub fn finish_hex(self) -> String {
        hex::encode(self.0.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(is_sha256_hex(&sha256_hex(b"")));
        assert!(!is_sha256_hex("ABC"));
    }
}
