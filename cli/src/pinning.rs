//! Keeping `toolreg.lock` in step with `toolreg.toml`: resolving new pins
//! through the registry (which skips yanked and blocked versions), applying
//! the project's `[policy]`, and listing what makes a lock out of date.
//!
//! A version the registry's definition lint flagged is pinned only when the
//! project accepts every rule found on it: `--accept-findings` (all of them,
//! for the versions pinned by that run) or `[policy] accept_findings`. The
//! rules accepted are recorded with the pin, and [`check_pin`] holds a pin
//! to them later (the registry can flag a stored version again after a
//! rules update).

use std::collections::BTreeSet;

use semver::VersionReq;
use toolreg_core::lint::{Finding, Rule};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::lock::{LockedTool, Lockfile};
use crate::project::{ConsumerPolicy, FindingsPolicy, Project};

/// How this run may accept a flagged version.
#[derive(Debug, Clone, Default)]
pub struct Acceptance {
    /// `--accept-findings`: every rule found on the versions pinned now.
    pub all: bool,
    /// The project's `[policy] accept_findings`.
    pub policy: Option<FindingsPolicy>,
}

impl Acceptance {
    /// The project's policy, plus `--accept-findings` when `flag`.
    pub fn of(project: &Project, flag: bool) -> Result<Self> {
        Ok(Acceptance {
            all: flag,
            policy: project.findings_policy()?,
        })
    }
}

/// The lint findings the registry holds for `name` `version` that a
/// project must accept: flags (and blocks), not notes.
pub fn registry_findings(client: &Client, name: &str, version: &str) -> Result<Vec<Finding>> {
    let mut findings = client.version(name, version)?.findings;
    findings.retain(|f| !f.is_note());
    Ok(findings)
}

/// The distinct rules of `findings`, sorted.
pub fn rules_of(findings: &[Finding]) -> Vec<Rule> {
    findings
        .iter()
        .map(|f| f.rule)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// One finding as a line for people: rule, what it means, where, excerpt.
pub fn describe(f: &Finding) -> String {
    let at = if f.pointer.is_empty() {
        "/"
    } else {
        &f.pointer
    };
    let note = if f.is_note() { " (note)" } else { "" };
    format!(
        "{}{note} at {at}: {} `{}`",
        f.rule,
        f.rule.meaning(),
        f.excerpt
    )
}

/// The refusal of `name` `version` for its `findings` whose rules are not in `accepted`.
fn refusal(
    name: &str,
    version: &str,
    findings: &[Finding],
    accepted: &[Rule],
    hint: String,
) -> Error {
    let missing: Vec<Rule> = rules_of(findings)
        .into_iter()
        .filter(|r| !accepted.contains(r))
        .collect();
    Error::Findings {
        name: name.to_string(),
        version: version.to_string(),
        rules: missing.iter().map(|r| r.to_string()).collect(),
        hint,
        details: findings
            .iter()
            .filter(|f| missing.contains(&f.rule))
            .map(describe)
            .collect(),
    }
}

/// Decide on the `findings` of a version about to be pinned: the rules to
/// record as accepted, or the refusal naming the version, the rules and how
/// to accept them. `already` are rules accepted for this very version
/// before (kept when it is re-locked).
pub fn accept(
    name: &str,
    version: &str,
    findings: &[Finding],
    acceptance: &Acceptance,
    already: &[Rule],
) -> Result<Vec<Rule>> {
    let rules = rules_of(findings);
    let by_policy = |r: &Rule| {
        acceptance
            .policy
            .as_ref()
            .is_some_and(|p| p.accept.contains(r))
    };
    if acceptance.all || rules.iter().all(|r| already.contains(r) || by_policy(r)) {
        return Ok(rules);
    }
    let rules_text = rules
        .iter()
        .filter(|r| !already.contains(r) && !by_policy(r))
        .map(|r| format!("\"{r}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let policy = match &acceptance.policy {
        Some(p) => format!("add {rules_text} to `accept_findings` ({})", p.location),
        None => format!("set `accept_findings = [{rules_text}]` under [policy] in toolreg.toml"),
    };
    Err(refusal(
        name,
        version,
        findings,
        &rules
            .iter()
            .copied()
            .filter(|r| already.contains(r) || by_policy(r))
            .collect::<Vec<_>>(),
        format!("to accept, run again with --accept-findings or {policy}"),
    ))
}

/// Check an existing pin against the findings the registry now holds for
/// its version. `Ok(None)`: every rule is accepted by the lock. `Ok(Some(rules))`:
/// the project's policy accepts the new rules, to be recorded (never with
/// `locked`, which instead refuses).
pub fn check_pin(
    pin: &LockedTool,
    findings: &[Finding],
    acceptance: &Acceptance,
    locked: bool,
) -> Result<Option<Vec<Rule>>> {
    let version = pin.version.to_string();
    let rules = rules_of(findings);
    if rules.iter().all(|r| pin.accepted_findings.contains(r)) {
        return Ok(None);
    }
    if locked {
        return Err(refusal(
            &pin.name,
            &version,
            findings,
            &pin.accepted_findings,
            format!(
                "toolreg.lock does not accept them for this pin; run `toolreg update {} --accept-findings` \
                 (or list them in `[policy] accept_findings`) and then `toolreg install` without --locked",
                pin.name
            ),
        ));
    }
    let policy_only = Acceptance {
        all: false,
        policy: acceptance.policy.clone(),
    };
    accept(
        &pin.name,
        &version,
        findings,
        &policy_only,
        &pin.accepted_findings,
    )
    .map_err(|e| match e {
        Error::Findings {
            name,
            version,
            rules,
            details,
            ..
        } => Error::Findings {
            hint: format!(
                "the registry flagged it after it was pinned; to accept, run `toolreg update {name} \
                 --accept-findings` or list them in `[policy] accept_findings`"
            ),
            name,
            version,
            rules,
            details,
        },
        other => other,
    })
    .map(Some)
}

/// Resolve `name` within `req` and check the answer against the policy and
/// the findings the registry holds for the version. `previous` is the
/// current pin, whose accepted rules still hold if the same bundle comes back.
pub fn resolve(
    client: &Client,
    name: &str,
    req: &VersionReq,
    policy: Option<&ConsumerPolicy>,
    acceptance: &Acceptance,
    previous: Option<&LockedTool>,
) -> Result<LockedTool> {
    let (r, version) = client.resolve(name, req)?;
    if let Some(policy) = policy {
        policy.check(&r.name, &r.version, r.execution)?;
    }
    let findings = registry_findings(client, &r.name, &r.version)?;
    let already = match previous {
        Some(p) if p.version == version && p.sha256 == r.sha256 => p.accepted_findings.as_slice(),
        _ => &[],
    };
    let accepted_findings = accept(name, &r.version, &findings, acceptance, already)?;
    Ok(LockedTool {
        name: name.to_string(),
        version,
        sha256: r.sha256,
        registry: client.registry().to_string(),
        execution: r.execution,
        definition: None,
        accepted_findings,
    })
}

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
pub enum Change {
    Added(LockedTool),
    Updated { from: LockedTool, to: LockedTool },
    Removed(LockedTool),
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::Added(t) => {
                write!(f, "locking {} {}", t.name, t.version)?;
                accepted_suffix(f, t)
            }
            Change::Updated { from, to }
                if from.version == to.version && from.sha256 != to.sha256 =>
            {
                write!(f, "re-locking {} {} (digest changed)", to.name, to.version)
            }
            Change::Updated { from, to } if from.version == to.version => {
                write!(f, "re-locking {} {}", to.name, to.version)?;
                accepted_suffix(f, to)
            }
            Change::Updated { from, to } => {
                write!(f, "updating {} {} -> {}", to.name, from.version, to.version)?;
                accepted_suffix(f, to)
            }
            Change::Removed(t) => write!(f, "removing {} {}", t.name, t.version),
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
/// their requirement (unless named in `refresh`), resolve the rest, drop the
/// ones no longer required. `refresh = Some(&[])` means "refresh everything".
pub fn sync(
    client: &Client,
    requirements: &[(String, VersionReq)],
    lock: &mut Lockfile,
    policy: Option<&ConsumerPolicy>,
    acceptance: &Acceptance,
    refresh: Option<&[String]>,
) -> Result<Vec<Change>> {
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
        let mut new = resolve(client, name, req, policy, acceptance, current.as_ref())?;
        // The same bundle defines the same tool: keep its recorded fingerprint.
        if let Some(old) = &current {
            if new.definition.is_none() && old.version == new.version && old.sha256 == new.sha256 {
                new.definition = old.definition.clone();
            }
        }
        match current {
            None => changes.push(Change::Added(new.clone())),
            Some(old) if old != new => changes.push(Change::Updated {
                from: old,
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
            changes.push(Change::Removed(t));
        }
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolreg_core::ExecutionKind;

    fn t(name: &str, v: &str) -> LockedTool {
        LockedTool {
            name: name.into(),
            version: v.parse().unwrap(),
            sha256: "0".repeat(64),
            registry: "http://r".into(),
            execution: ExecutionKind::Http,
            definition: None,
            accepted_findings: Vec::new(),
        }
    }

    fn finding(rule: Rule) -> Finding {
        Finding {
            rule,
            severity: toolreg_core::lint::Severity::Flag,
            pointer: "/description".into(),
            start: 0,
            end: 4,
            excerpt: "read ~/.ssh/id_rsa".into(),
            message: "m".into(),
        }
    }

    fn policy(rules: &[Rule]) -> Option<FindingsPolicy> {
        Some(FindingsPolicy {
            accept: rules.to_vec(),
            location: "toolreg.toml:7".into(),
        })
    }

    #[test]
    fn accept_needs_the_flag_the_policy_or_an_earlier_acceptance() {
        let found = [finding(Rule::P4), finding(Rule::P3), finding(Rule::P4)];
        let none = Acceptance::default();
        assert_eq!(accept("t", "1.0.0", &[], &none, &[]).unwrap(), vec![]);
        let err = accept("t", "1.0.0", &found, &none, &[]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("t 1.0.0 is flagged")
                && text.contains("(P3, P4)")
                && text.contains("--accept-findings")
                && text.contains("accept_findings = [\"P3\", \"P4\"]"),
            "{text}"
        );
        assert_eq!(err.details().len(), 3, "{:?}", err.details());
        assert!(
            err.details()[0].contains("sensitive"),
            "{:?}",
            err.details()
        );
        let all = Acceptance {
            all: true,
            policy: None,
        };
        assert_eq!(
            accept("t", "1.0.0", &found, &all, &[]).unwrap(),
            vec![Rule::P3, Rule::P4]
        );
        // The policy accepts P4 only: P3 is still refused, and named alone.
        let some = Acceptance {
            all: false,
            policy: policy(&[Rule::P4]),
        };
        let text = accept("t", "1.0.0", &found, &some, &[])
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("(P3)") && text.contains("toolreg.toml:7"),
            "{text}"
        );
        // ... unless the same version's pin accepted P3 before.
        assert_eq!(
            accept("t", "1.0.0", &found, &some, &[Rule::P3]).unwrap(),
            vec![Rule::P3, Rule::P4]
        );
    }

    #[test]
    fn check_pin_holds_a_pin_to_its_accepted_rules() {
        let mut pin = t("a", "1.0.0");
        pin.accepted_findings = vec![Rule::P4];
        let none = Acceptance::default();
        assert_eq!(
            check_pin(&pin, &[finding(Rule::P4)], &none, true).unwrap(),
            None
        );
        assert_eq!(check_pin(&pin, &[], &none, true).unwrap(), None);
        let more = [finding(Rule::P4), finding(Rule::P7)];
        let text = check_pin(&pin, &more, &none, true).unwrap_err().to_string();
        assert!(
            text.contains("a 1.0.0") && text.contains("(P7)") && text.contains("without --locked"),
            "{text}"
        );
        let p7 = Acceptance {
            all: false,
            policy: policy(&[Rule::P7]),
        };
        // --locked never records, even what the policy accepts.
        assert!(check_pin(&pin, &more, &p7, true).is_err());
        assert_eq!(
            check_pin(&pin, &more, &p7, false).unwrap(),
            Some(vec![Rule::P4, Rule::P7])
        );
        let text = check_pin(&pin, &more, &none, false)
            .unwrap_err()
            .to_string();
        assert!(text.contains("after it was pinned"), "{text}");
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
        let client = Client::new("http://127.0.0.1:9", None).unwrap();
        let mut lock = Lockfile::default();
        lock.upsert(t("a", "1.0.0"));
        lock.upsert(t("gone", "0.1.0"));
        let reqs = vec![("a".to_string(), VersionReq::parse("^1").unwrap())];
        let changes = sync(
            &client,
            &reqs,
            &mut lock,
            None,
            &Acceptance::default(),
            None,
        )
        .unwrap();
        assert_eq!(changes, vec![Change::Removed(t("gone", "0.1.0"))]);
        assert_eq!(lock.tools().len(), 1);
        // A requirement the pin no longer satisfies must be resolved: that fails with the URL.
        let reqs = vec![("a".to_string(), VersionReq::parse("^2").unwrap())];
        let err = sync(
            &client,
            &reqs,
            &mut lock,
            None,
            &Acceptance::default(),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("127.0.0.1:9"), "{err}");
    }
}
