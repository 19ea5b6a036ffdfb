//! The fourth admission step: who built the version.
//!
//! A version published from CI through trusted publishing has provenance
//! (the repository, workflow and run), attested by the registry with its
//! log key ([`crate::provenance::open`] checks the signature). The builder
//! — issuer, repository and workflow — is part of the pin: the lock records
//! it (`provenance = {…}`), a later answer of the registry must name the
//! same one, `update` asks before it moves a pin to a version built
//! elsewhere or published by hand ([`change`]), and `[policy]
//! require_provenance` refuses a version without a builder, or one built by
//! a repository it does not list ([`required`]).

use toolreg_api::Provenance;

use super::policy::Policy;
use crate::error::{Error, Result};
use crate::lock::{Builder, LockedTool};

/// Refuse `pin` with builder `builder` (the registry's, verified; or, with
/// `offline`, the one toolreg.lock records) when `[policy]
/// require_provenance` covers it and the builder is missing or from a
/// repository it does not accept.
pub fn required(
    pin: &LockedTool,
    builder: Option<&Builder>,
    policy: &Policy,
    offline: bool,
) -> Result<()> {
    let Some(rule) = policy.provenance_for(&pin.name) else {
        return Ok(());
    };
    let (name, version) = (pin.name.clone(), pin.version.to_string());
    let (location, line) = (rule.location.clone(), rule.line.clone());
    match builder {
        None if offline => Err(Error::NoRecordedProvenance {
            name,
            version,
            location,
            line,
        }),
        None => Err(Error::NoProvenance {
            name,
            version,
            location,
            line,
        }),
        Some(b) if !rule.accepts_repository(&b.repository) => Err(Error::ProvenanceRefused {
            name,
            version,
            builder: b.to_string(),
            location,
            line,
        }),
        Some(_) => Ok(()),
    }
}

/// The registry's answer about a pinned version must name the builder the
/// lock records (a version's provenance never changes; a registry that
/// says otherwise is not serving what was pinned).
pub fn matches_lock(pin: &LockedTool, claimed: Option<&Provenance>) -> Result<()> {
    let Some(recorded) = &pin.provenance else {
        return Ok(());
    };
    let message = match claimed {
        None => format!(
            "toolreg.lock records it built by {recorded}, but the registry now says it has no provenance"
        ),
        Some(c) if Builder::of(c) != *recorded => format!(
            "toolreg.lock records it built by {recorded}, but the registry now says {}",
            Builder::of(c)
        ),
        Some(_) => return Ok(()),
    };
    Err(Error::Attestation {
        name: pin.name.clone(),
        version: pin.version.to_string(),
        message,
    })
}

/// A pin moving to a version with another builder: from CI to a version
/// published by hand, or to another issuer, repository or workflow. Moving
/// from a version published by hand to one built in CI is not a change of
/// builder to ask about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuilderChange {
    pub from: Builder,
    /// `None`: published by hand.
    pub to: Option<Builder>,
}

/// The change of builder between a pin's versions, if it needs a yes.
pub fn change(from: Option<&Builder>, to: Option<&Builder>) -> Option<BuilderChange> {
    let from = from?;
    if to == Some(from) {
        return None;
    }
    Some(BuilderChange {
        from: from.clone(),
        to: to.cloned(),
    })
}

impl std::fmt::Display for BuilderChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.to {
            Some(to) => write!(f, "built by {} -> built by {to}", self.from),
            None => write!(
                f,
                "built by {} -> published by hand (no provenance)",
                self.from
            ),
        }
    }
}

impl BuilderChange {
    /// The `--json` form: `{"from": {...}, "to": {...}|null, "severity": "high"}`.
    pub fn to_json(&self) -> serde_json::Value {
        let b = |b: &Builder| serde_json::json!({"issuer": b.issuer, "repository": b.repository, "workflow": b.workflow});
        serde_json::json!({
            "from": b(&self.from),
            "to": self.to.as_ref().map(b),
            "severity": "high",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::policy::ProvenancePolicy;

    fn builder(repo: &str) -> Builder {
        Builder {
            issuer: "https://token.actions.githubusercontent.com".into(),
            repository: repo.into(),
            workflow: "release.yml".into(),
        }
    }

    fn pin(provenance: Option<Builder>) -> LockedTool {
        LockedTool {
            provenance,
            ..LockedTool::example("ci-tool", "1.1.0")
        }
    }

    fn requiring(repositories: &[&str]) -> Policy {
        Policy {
            provenance: Some(ProvenancePolicy {
                all: true,
                tools: Vec::new(),
                repositories: repositories.iter().map(|r| r.to_string()).collect(),
                location: "toolreg.toml:5".into(),
                line: "require_provenance = { repositories = [\"acme/tools\"] }".into(),
            }),
            ..Policy::default()
        }
    }

    #[test]
    fn the_policy_needs_a_builder_from_a_listed_repository() {
        let p = pin(None);
        let acme = builder("acme/tools");
        assert!(required(&p, None, &Policy::default(), false).is_ok());
        assert!(required(&p, Some(&acme), &requiring(&["acme/tools"]), false).is_ok());
        let err = required(&p, None, &requiring(&[]), false).unwrap_err();
        assert!(matches!(err, Error::NoProvenance { .. }), "{err}");
        let err = required(&p, None, &requiring(&[]), true).unwrap_err();
        assert!(
            err.to_string()
                .contains("toolreg.lock records no provenance for ci-tool 1.1.0"),
            "{err}"
        );
        let err = required(
            &p,
            Some(&builder("mallory/tools")),
            &requiring(&["acme/tools"]),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("built by mallory/tools (release.yml") && err.contains("toolreg.toml:5"),
            "{err}"
        );
    }

    #[test]
    fn a_registry_naming_another_builder_than_the_lock_is_refused() {
        let provenance = |repo: &str| Provenance {
            issuer: "https://token.actions.githubusercontent.com".into(),
            repository: repo.into(),
            workflow: "release.yml".into(),
            git_ref: "refs/tags/v1.1.0".into(),
            sha: "0123".into(),
            run_id: "4242".into(),
            ..Default::default()
        };
        let p = pin(Some(builder("acme/tools")));
        assert!(matches_lock(&p, Some(&provenance("acme/tools"))).is_ok());
        assert!(matches_lock(&pin(None), None).is_ok());
        let err = matches_lock(&p, Some(&provenance("other/tools")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("now says other/tools"), "{err}");
        let err = matches_lock(&p, None).unwrap_err().to_string();
        assert!(err.contains("has no provenance"), "{err}");
    }

    #[test]
    fn leaving_ci_or_the_repository_is_a_change_of_builder() {
        let acme = builder("acme/tools");
        assert_eq!(change(None, Some(&acme)), None);
        assert_eq!(change(None, None), None);
        assert_eq!(change(Some(&acme), Some(&acme.clone())), None);
        let by_hand = change(Some(&acme), None).unwrap();
        assert!(
            by_hand.to_string().contains("published by hand"),
            "{by_hand}"
        );
        let mut other_workflow = acme.clone();
        other_workflow.workflow = "manual.yml".into();
        let moved = change(Some(&acme), Some(&other_workflow)).unwrap();
        assert!(moved.to_string().contains("manual.yml"), "{moved}");
        assert_eq!(moved.to_json()["severity"], "high");
    }
}
