//! What the proxy keeps beside the lock for one server,
//! `.toolreg/servers/NAME.json`: the definitions as pinned (so a change can
//! be shown in words, not only as a new fingerprint) and the definitions
//! last listed for every withheld tool (what `toolreg mcp review` shows and
//! `toolreg mcp accept` pins), and the agent config entries `toolreg link
//! --proxy` replaced. The lock's fingerprints stay the authority:
//! a stored definition is used only when it hashes to its fingerprint.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// The directory of the per-server files.
pub const DIR: &str = ".toolreg/servers";

/// The stored definitions of one server.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Store {
    /// Call name → the `Tool` object as pinned.
    #[serde(default)]
    pub pinned: BTreeMap<String, Value>,
    /// Call name → the `Tool` object last listed, for withheld tools.
    #[serde(default)]
    pub pending: BTreeMap<String, Value>,
    /// Agent config file → its entry for this server as it was before
    /// `toolreg link --proxy` (what `unlink --proxy` puts back).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub linked: BTreeMap<String, Value>,
}

/// A server name usable as a file name and in a lock: 1–64 of `a-z`,
/// `0-9`, `-`, `_`, `.`, not starting with `.`. `given` says where it was
/// given (`--pin`, `--proxy`, `NAME`), for the usage error.
pub fn check_name(given: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "{given} {name}: a server name is 1 to 64 of a-z, 0-9, `-`, `_` and `.`, not starting with `.`"
        )))
    }
}

fn path(root: &Path, name: &str) -> PathBuf {
    root.join(DIR).join(format!("{name}.json"))
}

impl Store {
    /// The store of `name` (empty when there is none, or it is unreadable:
    /// it only ever adds words to what the lock decides).
    pub fn load(root: &Path, name: &str) -> Store {
        std::fs::read(path(root, name))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Write it (via a temporary file and rename).
    pub fn save(&self, root: &Path, name: &str) -> Result<()> {
        let file = path(root, name);
        let dir = root.join(DIR);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("could not create", &dir, e))?;
        let tmp = dir.join(format!(".{name}.json.tmp"));
        let text = serde_json::to_vec_pretty(self).unwrap_or_default();
        std::fs::write(&tmp, text).map_err(|e| Error::io("could not write", &tmp, e))?;
        std::fs::rename(&tmp, &file).map_err(|e| Error::io("could not write", &file, e))
    }
}
