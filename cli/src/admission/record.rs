//! What the registry last said about each pinned version, kept in
//! `.toolreg/state.json` so that checks made without the registry (`verify
//! --offline`, `export` when the registry can't be reached, an MCP server
//! starting) still refuse a version the registry withholds.
//!
//! Commands that ask the registry about installed pins (`install`,
//! `verify`, `export`) record, per pin, when they asked, whether the
//! version is quarantined or blocked (with the reason) and the lint rules it
//! carries now. The file is not the lock: the lock says what the project
//! pins and stays the same from one run to the next; this says what the
//! registry thinks of it, and changes whenever it does. Entries are for
//! the exact bundle (name, version, sha256); entries for pins no longer in
//! the lock are dropped when it is written.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolreg_api::EncodableVersion;
use toolreg_core::lint::Rule;

use crate::error::{Error, Result};
use crate::lock::{LockedTool, Lockfile};

/// The record's path, relative to the project.
pub const FILE: &str = ".toolreg/state.json";

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Format version, 1.
    #[serde(default = "one")]
    version: u32,
    /// One entry per pin asked about, sorted by name.
    #[serde(default)]
    pins: Vec<Standing>,
}

fn one() -> u32 {
    1
}

impl Default for Record {
    fn default() -> Self {
        Record {
            version: 1,
            pins: Vec::new(),
        }
    }
}

/// What the registry said about one pinned bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Standing {
    pub name: String,
    pub version: String,
    pub sha256: String,
    /// When it was asked (RFC 3339, UTC).
    pub checked_at: String,
    /// Set when the registry withholds the version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<Withheld>,
    /// The lint rules the version carried then (sorted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Rule>,
}

/// Why the registry withholds a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "lowercase", deny_unknown_fields)]
pub enum Withheld {
    /// Its administrators quarantined it.
    Quarantined { reason: String },
    /// Its publisher's tier no longer allows its execution kind.
    Blocked { reason: String },
}

impl Withheld {
    /// What the version JSON says, if the version is withheld.
    pub fn of(version: &EncodableVersion) -> Option<Withheld> {
        if version.quarantined {
            Some(Withheld::Quarantined {
                reason: version.quarantine_reason.clone().unwrap_or_default(),
            })
        } else if version.blocked {
            Some(Withheld::Blocked {
                reason: version
                    .blocked_reason
                    .clone()
                    .unwrap_or_else(|| "its publisher's tier does not allow its kind".into()),
            })
        } else {
            None
        }
    }

    /// `quarantined` or `blocked`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Withheld::Quarantined { .. } => "quarantined",
            Withheld::Blocked { .. } => "blocked",
        }
    }

    /// The registry's reason.
    pub fn reason(&self) -> &str {
        match self {
            Withheld::Quarantined { reason } | Withheld::Blocked { reason } => reason,
        }
    }

    /// The refusal of `pin` for it; `as_of` names when the registry said so
    /// when the refusal comes from the record rather than from the registry.
    pub fn refusal(&self, pin: &LockedTool, as_of: Option<&str>) -> Error {
        let version = pin.version.to_string();
        let when = as_of
            .map(|at| format!(" (as the registry said at {at})"))
            .unwrap_or_default();
        match self {
            Withheld::Quarantined { reason } => Error::Quarantined {
                name: pin.name.clone(),
                detail: format!(
                    "version {version} is quarantined by the registry's administrators: {reason}{when}"
                ),
                url: format!(
                    "{}/api/v1/tools/{}/{version}",
                    pin.registry.trim_end_matches('/'),
                    pin.name
                ),
            },
            Withheld::Blocked { reason } => Error::Blocked {
                name: pin.name.clone(),
                version,
                reason: format!("{reason}{when}"),
            },
        }
    }
}

impl Record {
    /// Read the record of the project at `root`; empty when there is none.
    /// A record that can't be read is an error naming it (delete it; the
    /// next `toolreg verify` with the registry reachable writes it again).
    pub fn load(root: &Path) -> Result<Record> {
        let path = root.join(FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Record::default()),
            Err(e) => return Err(Error::io("could not read", &path, e)),
        };
        let record: Record = serde_json::from_slice(&bytes).map_err(|e| Error::Lock {
            path: path.display().to_string(),
            message: format!(
                "{e}; delete it and run `toolreg verify` with the registry reachable to record its answers again"
            ),
        })?;
        if record.version != 1 {
            return Err(Error::Lock {
                path: path.display().to_string(),
                message: format!(
                    "format version {} is not supported (expected 1)",
                    record.version
                ),
            });
        }
        Ok(record)
    }

    /// What the registry last said about `pin`'s bundle, if it was asked.
    pub fn get(&self, pin: &LockedTool) -> Option<&Standing> {
        self.pins.iter().find(|s| is_for(s, pin))
    }

    /// Record what the registry says now about `pin`'s bundle.
    pub fn learn(&mut self, pin: &LockedTool, withheld: Option<Withheld>, findings: Vec<Rule>) {
        let version = pin.version.to_string();
        self.pins
            .retain(|s| !(s.name == pin.name && s.version == version));
        self.pins.push(Standing {
            name: pin.name.clone(),
            version,
            sha256: pin.sha256.clone(),
            checked_at: now(),
            withheld,
            findings,
        });
        self.pins.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Write the record beside the installed tools, keeping only the pins
    /// of `lock`; nothing is written when that changes nothing.
    pub fn save(&mut self, root: &Path, lock: &Lockfile) -> Result<Option<PathBuf>> {
        self.pins
            .retain(|s| lock.tools().iter().any(|t| is_for(s, t)));
        let path = root.join(FILE);
        let before = Record::load(root).unwrap_or_default();
        if before == *self {
            return Ok(None);
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("could not create", dir, e))?;
        }
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).map_err(|e| Error::io("could not write", &tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io("could not write", &path, e))?;
        Ok(Some(path))
    }
}

/// True when `s` is about the bundle `t` pins.
fn is_for(s: &Standing, t: &LockedTool) -> bool {
    s.name == t.name && s.version == t.version.to_string() && s.sha256 == t.sha256
}

/// The current time, RFC 3339 in UTC to the second.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(name: &str) -> LockedTool {
        LockedTool::example(name, "1.0.0")
    }

    #[test]
    fn learns_saves_and_forgets_pins_that_left_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let mut lock = Lockfile::default();
        lock.upsert(pin("a"));
        lock.upsert(pin("b"));
        let mut record = Record::load(dir.path()).unwrap();
        assert_eq!(record, Record::default());
        // Nothing learnt: nothing written.
        assert_eq!(record.save(dir.path(), &lock).unwrap(), None);
        assert!(!dir.path().join(".toolreg").exists());
        let why = Withheld::Quarantined {
            reason: "sends the SSH key".into(),
        };
        record.learn(&pin("b"), Some(why.clone()), vec![Rule::P4]);
        record.learn(&pin("a"), None, Vec::new());
        record.save(dir.path(), &lock).unwrap().unwrap();
        let again = Record::load(dir.path()).unwrap();
        assert_eq!(again, record);
        let b = again.get(&pin("b")).unwrap();
        assert_eq!(
            (b.withheld.as_ref(), b.findings.as_slice()),
            (Some(&why), &[Rule::P4][..])
        );
        // Another bundle of the same version is not the one asked about.
        let mut other = pin("b");
        other.sha256 = "cd".repeat(32);
        assert!(again.get(&other).is_none());
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert!(text.contains("\"state\": \"quarantined\""), "{text}");
        lock.remove("b");
        let mut again = again;
        again.save(dir.path(), &lock).unwrap();
        assert!(Record::load(dir.path()).unwrap().get(&pin("b")).is_none());
    }

    #[test]
    fn refusals_name_the_reason_and_when_it_was_said() {
        let q = Withheld::Quarantined {
            reason: "exfiltrates".into(),
        };
        let text = q
            .refusal(&pin("a"), Some("2026-01-02T03:04:05Z"))
            .to_string();
        assert!(
            text.contains("a: version 1.0.0 is quarantined")
                && text.contains("exfiltrates")
                && text.contains("2026-01-02T03:04:05Z"),
            "{text}"
        );
        let b = Withheld::Blocked {
            reason: "a `command` tool needs tier `verified`".into(),
        };
        let text = b.refusal(&pin("a"), None).to_string();
        assert!(
            text.contains("a 1.0.0 is blocked by the registry: a `command`"),
            "{text}"
        );
    }

    #[test]
    fn a_corrupt_record_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".toolreg")).unwrap();
        std::fs::write(dir.path().join(FILE), "{not json").unwrap();
        let err = Record::load(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(".toolreg/state.json") && err.contains("delete it"),
            "{err}"
        );
        std::fs::write(dir.path().join(FILE), "{\"version\": 9}").unwrap();
        let err = Record::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("format version 9"), "{err}");
    }
}
