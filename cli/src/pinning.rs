//! Keeping `toolreg.lock` in step with `toolreg.toml`: resolving new pins
//! through the registry (which skips yanked, blocked and quarantined
//! versions) and admitting them ([`crate::admission::Gate`]), and listing
//! what makes a lock out of date.

use semver::VersionReq;

use crate::admission::Gate;
use crate::error::Result;
use crate::lock::{LockedTool, Lockfile};

/// Why `lock` does not match the requirements (empty when it is up to date).
pub fn out_of_date(requirements: &[(String, VersionReq)], lock: &Lockfile) -> Vec<String> {
    let mut reasons = Vec::new();
    for (name, req) in requirements {
        match lock.get(name) {
            None => reasons.push(format!("{name} is in toolreg.toml but not in toolreg.lock")),
            Some(t) if !req.matches(&t.version) => reasons.push(format!(
                "{name}: toolreg.lock pins {}, which does not satisfy \"{req}\" in toolreg.toml",
                t.version
            )),
            Some(_) => {}
        }
    }
    for t in lock.tools() {
        if !requirements.iter().any(|(n, _)| n == &t.name) {
            reasons.push(format!(
                "{} {} is in toolreg.lock but no longer in toolreg.toml",
                t.name, t.version
            ));
        }
    }
    reasons
}

/// A change made to the lock, for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockChange {
    Added(LockedTool),
    Updated {
        from: Box<LockedTool>,
        to: LockedTool,
    },
    Removed(LockedTool),
}

impl std::fmt::Display for LockChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockChange::Added(t) => {
                write!(f, "locking {} {}", t.name, t.version)?;
                accepted_suffix(f, t)
            }
            LockChange::Updated { from, to }
                if from.version == to.version && from.sha256 != to.sha256 =>
            {
                write!(f, "re-locking {} {} (digest changed)", to.name, to.version)
            }
            LockChange::Updated { from, to } if from.version == to.version => {
                write!(f, "re-locking {} {}", to.name, to.version)?;
                accepted_suffix(f, to)
            }
            LockChange::Updated { from, to } => {
                write!(f, "updating {} {} -> {}", to.name, from.version, to.version)?;
                accepted_suffix(f, to)
            }
            LockChange::Removed(t) => write!(f, "removing {} {}", t.name, t.version),
        }
    }
}

/// ` (accepting findings P3, P4)` when the pin carries accepted findings.
fn accepted_suffix(f: &mut std::fmt::Formatter<'_>, t: &LockedTool) -> std::fmt::Result {
    if t.accepted_findings.is_empty() {
        return Ok(());
    }
    let rules: Vec<&str> = t.accepted_findings.iter().map(|r| r.as_str()).collect();
    write!(f, " (accepting findings {})", rules.join(", "))
}

/// Bring `lock` in step with `requirements`: keep entries that still satisfy
/// their requirement (unless named in `refresh`), resolve and admit the
/// rest (steps 1–5), drop the ones no longer required. `refresh = Some(&[])`
/// means "refresh everything".
pub fn sync(
    gate: &mut Gate<'_>,
    requirements: &[(String, VersionReq)],
    lock: &mut Lockfile,
    refresh: Option<&[String]>,
) -> Result<Vec<LockChange>> {
    let mut changes = Vec::new();
    for (name, req) in requirements {
        let forced = match refresh {
            None => false,
            Some([]) => true,
            Some(names) => names.iter().any(|n| n == name),
        };
        let current = lock.get(name).cloned();
        if let Some(t) = &current {
            if !forced && req.matches(&t.version) {
                continue;
            }
        }
        let mut new = gate.resolve(name, req, current.as_ref())?;
        // The same bundle defines the same tool: keep its recorded fingerprint.
        if let Some(old) = &current {
            if new.definition.is_none() && old.version == new.version && old.sha256 == new.sha256 {
                new.definition = old.definition.clone();
            }
        }
        match current {
            None => changes.push(LockChange::Added(new.clone())),
            Some(old) if old != new => changes.push(LockChange::Updated {
                from: Box::new(old),
                to: new.clone(),
            }),
            Some(_) => {}
        }
        lock.upsert(new);
    }
    let stale: Vec<String> = lock
        .tools()
        .iter()
        .filter(|t| !requirements.iter().any(|(n, _)| n == &t.name))
        .map(|t| t.name.clone())
        .collect();
    for name in stale {
        if let Some(t) = lock.remove(&name) {
            changes.push(LockChange::Removed(t));
        }
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, v: &str) -> LockedTool {
        LockedTool::example(name, v)
    }

    #[test]
    fn out_of_date_lists_every_difference() {
        let mut lock = Lockfile::default();
        lock.upsert(t("a", "1.0.0"));
        lock.upsert(t("b", "1.0.0"));
        lock.upsert(t("gone", "0.1.0"));
        let reqs = vec![
            ("a".to_string(), VersionReq::parse("^1").unwrap()),
            ("b".to_string(), VersionReq::parse("^2").unwrap()),
            ("new".to_string(), VersionReq::parse("*").unwrap()),
        ];
        let reasons = out_of_date(&reqs, &lock);
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(reasons
            .iter()
            .any(|r| r.contains("b: toolreg.lock pins 1.0.0") && r.contains("^2")));
        assert!(reasons
            .iter()
            .any(|r| r.contains("new is in toolreg.toml but not in toolreg.lock")));
        assert!(reasons
            .iter()
            .any(|r| r.contains("gone 0.1.0 is in toolreg.lock but no longer")));
        assert!(out_of_date(&reqs[..1], &{
            let mut l = Lockfile::default();
            l.upsert(t("a", "1.4.0"));
            l
        })
        .is_empty());
    }

    #[test]
    fn sync_without_network_keeps_satisfied_pins_and_drops_stale_ones() {
        // Nothing needs resolving, so the (unreachable) registry is never asked.
        let client = crate::client::Client::new("http://127.0.0.1:9", None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let project = crate::project::Project::new_in(dir.path());
        let mut lock = Lockfile::default();
        lock.upsert(t("a", "1.0.0"));
        lock.upsert(t("gone", "0.1.0"));
        let reqs = vec![("a".to_string(), VersionReq::parse("^1").unwrap())];
        let mut gate = Gate::new(&client, &project, &lock, dir.path(), false).unwrap();
        let changes = sync(&mut gate, &reqs, &mut lock, None).unwrap();
        assert_eq!(changes, vec![LockChange::Removed(t("gone", "0.1.0"))]);
        assert_eq!(lock.tools().len(), 1);
        // A requirement the pin no longer satisfies must be resolved: that fails with the URL.
        let reqs = vec![("a".to_string(), VersionReq::parse("^2").unwrap())];
        let err = sync(&mut gate, &reqs, &mut lock, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("127.0.0.1:9"), "{err}");
    }
}
