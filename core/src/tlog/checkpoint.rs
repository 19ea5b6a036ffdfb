//! Checkpoints (<https://c2sp.org/tlog-checkpoint>): the log's origin, tree
//! size and root hash, as the text of a signed note:
//!
//! ```text
//! <origin>
//! <size>
//! <base64 root hash>
//! ```

use super::note::{Signer, Verifier};
use super::{Error, Hash};

/// One state of the log: the tree of `size` leaves has root `root`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log's identity (also the signing key's name), e.g. `toolreg.local/log`.
    pub origin: String,
    /// Number of records in the tree.
    pub size: u64,
    /// Root hash of the tree of `size` records.
    pub root: Hash,
}

impl Checkpoint {
    /// The note text.
    pub fn body(&self) -> String {
        format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            self.root.to_base64()
        )
    }

    /// Parse a checkpoint body. Extension lines after the root are allowed
    /// by C2SP and ignored.
    pub fn parse_body(text: &str) -> Result<Checkpoint, Error> {
        let bad = |reason: String| Error::LogMalformed {
            what: "checkpoint",
            reason,
        };
        let body = text
            .strip_suffix('\n')
            .ok_or_else(|| bad("it must end with a newline".to_string()))?;
        let mut lines = body.split('\n');
        let origin = lines.next().unwrap_or_default();
        if origin.is_empty() {
            return Err(bad("the origin line is empty".to_string()));
        }
        let size_line = lines
            .next()
            .ok_or_else(|| bad("the tree size line is missing".to_string()))?;
        let size_ok = !size_line.is_empty()
            && size_line.bytes().all(|b| b.is_ascii_digit())
            && (size_line == "0" || !size_line.starts_with('0'));
        let size: u64 = size_line
            .parse()
            .ok()
            .filter(|_| size_ok)
            .ok_or_else(|| bad(format!("the tree size {size_line:?} is not a number")))?;
        let root_line = lines
            .next()
            .ok_or_else(|| bad("the root hash line is missing".to_string()))?;
        let root = Hash::from_base64(root_line, "checkpoint root hash")?;
        if lines.any(|l| l.is_empty()) {
            return Err(bad("empty extension line".to_string()));
        }
        Ok(Checkpoint {
            origin: origin.to_string(),
            size,
            root,
        })
    }

    /// The signed note for this checkpoint. The signer's name must be the
    /// checkpoint's origin.
    pub fn sign(&self, signer: &Signer) -> Result<String, Error> {
        if signer.name() != self.origin {
            return Err(Error::LogRequest(format!(
                "the key is named {:?} but the checkpoint's origin is {:?}",
                signer.name(),
                self.origin
            )));
        }
        signer.sign(&self.body())
    }

    /// Verify a signed checkpoint note with `verifier` and read it. Its
    /// origin must be the key's name.
    pub fn open(note: &str, verifier: &Verifier) -> Result<Checkpoint, Error> {
        let text = verifier.open(note)?;
        let checkpoint = Checkpoint::parse_body(text)?;
        if checkpoint.origin != verifier.name() {
            return Err(Error::LogSignature(format!(
                "the checkpoint's origin {:?} is not the key's name {:?}",
                checkpoint.origin,
                verifier.name()
            )));
        }
        Ok(checkpoint)
    }
}
