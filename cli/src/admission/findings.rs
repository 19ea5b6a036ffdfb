//! The third admission step: a version's lint findings must be accepted.
//!
//! The registry lints every definition at publish (and again after a rules
//! update). A version it flagged is pinned only when the project accepts
//! every rule found on it: `--accept-findings` (all of them, for the
//! versions pinned by that run) or `[policy] accept_findings`. The rules
//! accepted are recorded with the pin, and [`check_pin`] holds an existing
//! pin to them against what the registry says now ([`recorded`] against
//! what it said last, offline).

use std::collections::BTreeSet;

use toolreg_core::lint::{Finding, Rule};

use super::policy::{FindingsPolicy, Policy};
use crate::error::{Error, Result};
use crate::lock::LockedTool;

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
    pub fn of(policy: &Policy, flag: bool) -> Self {
        Acceptance {
            all: flag,
            policy: policy.accept_findings.clone(),
        }
    }
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

/// One finding as a line for people: rule, what it means, where, excerpt
/// (or "excerpt withheld" when the registry withholds the version's text).
pub fn describe(f: &Finding) -> String {
    let at = if f.pointer.is_empty() {
        "/"
    } else {
        &f.pointer
    };
    let note = if f.is_note() { " (note)" } else { "" };
    let excerpt = if f.excerpt.is_empty() {
        "(excerpt withheld)".to_string()
    } else {
        format!("`{}`", f.excerpt)
    };
    format!("{}{note} at {at}: {} {excerpt}", f.rule, f.rule.meaning())
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

/// Offline: the rules the registry last reported for a pin's version
/// (`rules`, from [`super::record`]) must each be accepted by the lock or by
/// `[policy] accept_findings`.
pub fn recorded(pin: &LockedTool, rules: &[Rule], policy: &Policy, checked_at: &str) -> Result<()> {
    let missing: Vec<String> = rules
        .iter()
        .filter(|r| !pin.accepted_findings.contains(r) && !policy.accepts(**r))
        .map(|r| r.to_string())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::Findings {
        name: pin.name.clone(),
        version: pin.version.to_string(),
        hint: format!(
            "the registry flagged it after it was pinned (as it said at {checked_at}); to accept, run `toolreg update {} --accept-findings` or list them in `[policy] accept_findings`",
            pin.name
        ),
        rules: missing,
        details: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, v: &str) -> LockedTool {
        LockedTool::example(name, v)
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
    fn recorded_rules_must_be_accepted_by_the_lock_or_the_policy() {
        let mut pin = t("a", "1.0.0");
        pin.accepted_findings = vec![Rule::P4];
        let none = Policy::default();
        let at = "2026-01-01T00:00:00Z";
        assert!(recorded(&pin, &[Rule::P4], &none, at).is_ok());
        let text = recorded(&pin, &[Rule::P4, Rule::P7], &none, at)
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("a 1.0.0") && text.contains("(P7)") && text.contains(at),
            "{text}"
        );
        let p7 = Policy {
            accept_findings: policy(&[Rule::P7]),
            ..Policy::default()
        };
        assert!(recorded(&pin, &[Rule::P4, Rule::P7], &p7, at).is_ok());
    }
}
