//! C2SP signed notes (<https://c2sp.org/signed-note>) with Ed25519 keys, the
//! envelope in which the log's checkpoints are published.
//!
//! A note is UTF-8 text ending in a newline, a blank line, then one line per
//! signature: `— <key name> <base64(key id || signature)>`. The key id is
//! the first 4 bytes of `SHA-256(name || "\n" || 0x01 || public key)`.
//! Keys are written as strings:
//!
//! * verifier key: `<name>+<8 hex digits key id>+<base64(0x01 || public key)>`
//! * signer key:   `PRIVATE+KEY+<name>+<8 hex digits key id>+<base64(0x01 || seed)>`
//!
//! Both are the forms of Go's `golang.org/x/mod/sumdb/note`, so tooling
//! written for Go's checksum database reads them too.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

use super::Error;

/// The algorithm byte for Ed25519 in C2SP signed-note keys.
const ALG_ED25519: u8 = 0x01;
/// The em dash that opens a signature line.
const SIG_PREFIX: &str = "\u{2014} ";
/// At most this many signature lines are read (as in Go's `note.Open`).
const MAX_SIGNATURES: usize = 100;

/// The 4-byte key id of an Ed25519 key named `name` (C2SP signed-note).
pub fn key_id(name: &str, public_key: &[u8; 32]) -> u32 {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update([ALG_ED25519]);
    h.update(public_key);
    let d = h.finalize();
    u32::from_be_bytes([d[0], d[1], d[2], d[3]])
}

fn malformed(what: &'static str, reason: impl Into<String>) -> Error {
    Error::LogMalformed {
        what,
        reason: reason.into(),
    }
}

/// A key name must be non-empty and contain no whitespace and no `+`.
fn check_name(name: &str, what: &'static str) -> Result<(), Error> {
    if name.is_empty() {
        return Err(malformed(what, "the key name is empty"));
    }
    if name.chars().any(|c| c.is_whitespace() || c == '+') {
        return Err(malformed(
            what,
            format!("the key name {name:?} must not contain spaces or `+`"),
        ));
    }
    Ok(())
}

/// Decode `base64(0x01 || 32 bytes)`.
fn decode_key_bytes(s: &str, what: &'static str) -> Result<[u8; 32], Error> {
    let bytes = B64
        .decode(s)
        .map_err(|e| malformed(what, format!("the key is not base64: {e}")))?;
    match bytes.split_first() {
        Some((&ALG_ED25519, rest)) => rest
            .try_into()
            .map_err(|_| malformed(what, "an Ed25519 key is 32 bytes")),
        Some((alg, _)) => Err(malformed(
            what,
            format!("unknown key algorithm {alg:#04x} (only Ed25519, 0x01, is supported)"),
        )),
        None => Err(malformed(what, "the key is empty")),
    }
}

/// Signs notes with an Ed25519 key under a name (the log's origin).
pub struct Signer {
    name: String,
    key: SigningKey,
    id: u32,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signer({}+{:08x})", self.name, self.id)
    }
}

impl Signer {
    /// A signer from a 32-byte Ed25519 seed (the private key).
    pub fn from_seed(name: &str, seed: [u8; 32]) -> Result<Signer, Error> {
        check_name(name, "signer key")?;
        let key = SigningKey::from_bytes(&seed);
        let id = key_id(name, key.verifying_key().as_bytes());
        Ok(Signer {
            name: name.to_string(),
            key,
            id,
        })
    }

    /// Read a `PRIVATE+KEY+<name>+<id>+<base64>` string.
    pub fn from_key_string(s: &str) -> Result<Signer, Error> {
        const WHAT: &str = "signer key";
        let rest = s
            .trim()
            .strip_prefix("PRIVATE+KEY+")
            .ok_or_else(|| malformed(WHAT, "it must start with `PRIVATE+KEY+`"))?;
        let mut parts = rest.splitn(3, '+');
        let (Some(name), Some(id_hex), Some(key)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed(
                WHAT,
                "expected `PRIVATE+KEY+<name>+<key id>+<key>`",
            ));
        };
        let seed = decode_key_bytes(key, WHAT)?;
        let signer = Signer::from_seed(name, seed)?;
        if id_hex != format!("{:08x}", signer.id) {
            return Err(malformed(WHAT, "the key id does not match the key"));
        }
        Ok(signer)
    }

    /// The `PRIVATE+KEY+...` string (secret: store it with mode 0600).
    pub fn to_key_string(&self) -> String {
        let mut bytes = vec![ALG_ED25519];
        bytes.extend_from_slice(&self.key.to_bytes());
        format!(
            "PRIVATE+KEY+{}+{:08x}+{}",
            self.name,
            self.id,
            B64.encode(bytes)
        )
    }

    /// The key name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key id.
    pub fn key_id(&self) -> u32 {
        self.id
    }

    /// The verifier key string `<name>+<id>+<base64(0x01 || public key)>`.
    pub fn verifier_key(&self) -> String {
        let mut bytes = vec![ALG_ED25519];
        bytes.extend_from_slice(self.key.verifying_key().as_bytes());
        format!("{}+{:08x}+{}", self.name, self.id, B64.encode(bytes))
    }

    /// The verifier for this key.
    pub fn verifier(&self) -> Verifier {
        Verifier {
            name: self.name.clone(),
            id: self.id,
            key: self.key.verifying_key(),
        }
    }

    /// Sign `text` (which must end with a newline and contain no blank
    /// line at its end) and return the whole note.
    pub fn sign(&self, text: &str) -> Result<String, Error> {
        check_text(text)?;
        let sig = self.key.sign(text.as_bytes());
        let mut blob = self.id.to_be_bytes().to_vec();
        blob.extend_from_slice(&sig.to_bytes());
        Ok(format!(
            "{text}\n{SIG_PREFIX}{} {}\n",
            self.name,
            B64.encode(blob)
        ))
    }
}

/// The note text must be non-empty, end in a newline and hold no control
/// characters other than newlines.
fn check_text(text: &str) -> Result<(), Error> {
    const WHAT: &str = "signed note";
    if !text.ends_with('\n') {
        return Err(malformed(WHAT, "the text must end with a newline"));
    }
    if text.chars().any(|c| c.is_control() && c != '\n') {
        return Err(malformed(WHAT, "the text holds control characters"));
    }
    Ok(())
}

/// Verifies notes signed by one Ed25519 key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verifier {
    name: String,
    id: u32,
    key: VerifyingKey,
}

impl Verifier {
    /// Read a verifier key string `<name>+<id>+<base64(0x01 || public key)>`.
    pub fn parse(s: &str) -> Result<Verifier, Error> {
        const WHAT: &str = "verifier key";
        let s = s.trim();
        let mut parts = s.splitn(3, '+');
        let (Some(name), Some(id_hex), Some(key)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed(WHAT, "expected `<name>+<key id>+<key>`"));
        };
        check_name(name, WHAT)?;
        if id_hex.len() != 8 || !id_hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(malformed(WHAT, "the key id must be 8 hex digits"));
        }
        let public = decode_key_bytes(key, WHAT)?;
        let id = key_id(name, &public);
        if id_hex.to_ascii_lowercase() != format!("{id:08x}") {
            return Err(malformed(WHAT, "the key id does not match the key"));
        }
        let key = VerifyingKey::from_bytes(&public)
            .map_err(|_| malformed(WHAT, "not a valid Ed25519 public key"))?;
        Ok(Verifier {
            name: name.to_string(),
            id,
            key,
        })
    }

    /// The key name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key id.
    pub fn key_id(&self) -> u32 {
        self.id
    }

    /// The verifier key string.
    pub fn to_key_string(&self) -> String {
        let mut bytes = vec![ALG_ED25519];
        bytes.extend_from_slice(self.key.as_bytes());
        format!("{}+{:08x}+{}", self.name, self.id, B64.encode(bytes))
    }

    /// Check a signed note and return its text (everything before the blank
    /// line). The note must carry a valid signature by this key; signatures
    /// by other keys are ignored, and a signature line that claims this key
    /// but doesn't verify is an error.
    pub fn open<'a>(&self, note: &'a str) -> Result<&'a str, Error> {
        const WHAT: &str = "signed note";
        let split = note
            .rfind("\n\n")
            .ok_or_else(|| malformed(WHAT, "no blank line before the signatures"))?;
        let (text, sigs) = (&note[..split + 1], &note[split + 2..]);
        check_text(text)?;
        if sigs.is_empty() || !sigs.ends_with('\n') {
            return Err(malformed(
                WHAT,
                "the signature block must end with a newline",
            ));
        }
        let mut verified = false;
        let lines: Vec<&str> = sigs[..sigs.len() - 1].split('\n').collect();
        if lines.len() > MAX_SIGNATURES {
            return Err(malformed(WHAT, "too many signatures"));
        }
        for line in lines {
            let rest = line
                .strip_prefix(SIG_PREFIX)
                .ok_or_else(|| malformed(WHAT, "a signature line must start with `— `"))?;
            let (name, b64) = rest
                .split_once(' ')
                .ok_or_else(|| malformed(WHAT, "a signature line is `— <name> <signature>`"))?;
            check_name(name, WHAT)?;
            let blob = B64
                .decode(b64)
                .map_err(|e| malformed(WHAT, format!("a signature is not base64: {e}")))?;
            if blob.len() < 5 {
                return Err(malformed(WHAT, "a signature is too short"));
            }
            let id = u32::from_be_bytes([blob[0], blob[1], blob[2], blob[3]]);
            if name != self.name || id != self.id {
                continue;
            }
            let sig_bytes: [u8; 64] = blob[4..].try_into().map_err(|_| {
                Error::LogSignature(format!("the signature by {name} is not 64 bytes"))
            })?;
            let sig = Signature::from_bytes(&sig_bytes);
            self.key.verify_strict(text.as_bytes(), &sig).map_err(|_| {
                Error::LogSignature(format!(
                    "the signature by {}+{:08x} does not match the text",
                    self.name, self.id
                ))
            })?;
            verified = true;
        }
        if !verified {
            return Err(Error::LogSignature(format!(
                "the note carries no signature by the key {}+{:08x}",
                self.name, self.id
            )));
        }
        Ok(text)
    }
}
