//! Execution kinds, publisher tiers, and the policy that says which tier may
//! publish which kind (`docs/architecture.md`, "Trust tiers"). What a bundle
//! can do when it runs decides who may publish it: code-running tools never
//! come from untrusted publishers.
//!
//! [`Policy::admit`] is the one check of a version against the policy —
//! its execution kind, its publisher's tier and its lint findings — made
//! when it is published, when its publisher's tier changes and when a
//! rescan changes its findings: a refusal is a 403 at publish, and a block
//! of a version already out.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::lint::{Finding, Rule};

/// What running a tool version does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionKind {
    /// Loads code from the bundle into a host (Matimo `function`, every Shinkai tool).
    Function,
    /// Runs inline code carried in the definition (Matimo `script`).
    Script,
    /// Runs a local program (Matimo `command`).
    Command,
    /// Calls an HTTP endpoint described in the definition (Matimo `http`).
    Http,
    /// Fills a prompt template for a model (prompt format).
    Prompt,
    /// A declaration only; the implementation runs elsewhere (MCP Tool).
    Schema,
}

impl ExecutionKind {
    /// Every kind.
    pub const ALL: [ExecutionKind; 6] = [
        ExecutionKind::Function,
        ExecutionKind::Script,
        ExecutionKind::Command,
        ExecutionKind::Http,
        ExecutionKind::Prompt,
        ExecutionKind::Schema,
    ];

    /// The kind's id in the API and config (`function`, `script`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionKind::Function => "function",
            ExecutionKind::Script => "script",
            ExecutionKind::Command => "command",
            ExecutionKind::Http => "http",
            ExecutionKind::Prompt => "prompt",
            ExecutionKind::Schema => "schema",
        }
    }

    /// True if running the tool executes code shipped in the bundle or definition.
    pub fn runs_bundle_code(self) -> bool {
        matches!(self, ExecutionKind::Function | ExecutionKind::Script)
    }

    /// True if running the tool executes code on the agent's machine: the
    /// bundle's or the definition's (`function`, `script`), or a local
    /// program (`command`).
    pub fn runs_code(self) -> bool {
        matches!(
            self,
            ExecutionKind::Function | ExecutionKind::Script | ExecutionKind::Command
        )
    }

    /// What running a tool of this kind does, in plain words (for people).
    pub fn explain(self) -> &'static str {
        match self {
            ExecutionKind::Function => "Runs code shipped in the bundle inside the agent's host process or runtime.",
            ExecutionKind::Script => "Runs inline code carried in the definition.",
            ExecutionKind::Command => "Runs a program on the machine where the agent runs.",
            ExecutionKind::Http => "Sends an HTTP request described in the definition; no code from the bundle runs.",
            ExecutionKind::Prompt => "Fills a prompt template and asks a language model; no code runs.",
            ExecutionKind::Schema => "Declares the tool's interface only; the implementation runs elsewhere (an MCP server).",
        }
    }
}

impl fmt::Display for ExecutionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ExecutionKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ExecutionKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                format!("unknown execution kind `{s}` (expected one of function, script, command, http, prompt, schema)")
            })
    }
}

/// A publisher's trust tier, ordered from least to most trusted.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Default for new accounts and for `--agent` tokens.
    #[default]
    Untrusted,
    /// A publisher whose identity was checked.
    Verified,
    /// A publisher allowed to publish code-running tools.
    Trusted,
}

impl Tier {
    /// Every tier, lowest first.
    pub const ALL: [Tier; 3] = [Tier::Untrusted, Tier::Verified, Tier::Trusted];

    /// The tier's id in the API and config.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Untrusted => "untrusted",
            Tier::Verified => "verified",
            Tier::Trusted => "trusted",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Tier {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Tier::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!("unknown tier `{s}` (expected one of untrusted, verified, trusted)")
            })
    }
}

/// Which tier each execution kind needs to be published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    required: BTreeMap<ExecutionKind, Tier>,
}

impl Default for Policy {
    /// `function = trusted`, `script = trusted`, `command = verified`, others `untrusted`.
    fn default() -> Self {
        let mut required = BTreeMap::new();
        required.insert(ExecutionKind::Function, Tier::Trusted);
        required.insert(ExecutionKind::Script, Tier::Trusted);
        required.insert(ExecutionKind::Command, Tier::Verified);
        required.insert(ExecutionKind::Http, Tier::Untrusted);
        required.insert(ExecutionKind::Prompt, Tier::Untrusted);
        required.insert(ExecutionKind::Schema, Tier::Untrusted);
        Policy { required }
    }
}

/// A publish (or an already published version) that the policy forbids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denial {
    /// The kind the version has.
    pub execution: ExecutionKind,
    /// The tier that kind needs.
    pub required: Tier,
    /// The publisher's tier.
    pub publisher_tier: Tier,
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a `{}` tool needs a publisher tier of at least `{}`, but the publisher's tier is `{}`",
            self.execution, self.required, self.publisher_tier
        )
    }
}

/// Why [`Policy::admit`] refuses a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Its execution kind needs a higher tier than its publisher's.
    Tier(Denial),
    /// It runs code and the lint flagged its definition, and its publisher
    /// has the lowest tier (as every agent token does): flagged text in code
    /// nobody vouches for is refused.
    FlaggedCode {
        /// The kind the version has.
        execution: ExecutionKind,
        /// The tier it was checked for.
        publisher_tier: Tier,
        /// The rules found, in order, each once.
        rules: Vec<Rule>,
    },
}

impl Refusal {
    /// The rules of a flagged-code refusal as `P3, P4` (empty for a tier one).
    pub fn rules_text(&self) -> String {
        match self {
            Refusal::Tier(_) => String::new(),
            Refusal::FlaggedCode { rules, .. } => rules
                .iter()
                .map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Tier(denial) => denial.fmt(f),
            Refusal::FlaggedCode {
                execution,
                publisher_tier,
                ..
            } => write!(
                f,
                "the definition has lint findings ({}) and its execution kind `{execution}` runs code; \
                 a publisher of tier `{publisher_tier}` can't publish flagged code",
                self.rules_text()
            ),
        }
    }
}

impl Policy {
    /// May a version of execution kind `kind` with the lint `findings`
    /// come from a publisher of tier `tier` (the effective tier: an agent
    /// token counts as `untrusted`)? The tier check first, then flagged
    /// code.
    pub fn admit(
        &self,
        kind: ExecutionKind,
        tier: Tier,
        findings: &[Finding],
    ) -> Result<(), Refusal> {
        self.check(kind, tier).map_err(Refusal::Tier)?;
        // Notes are shown, never refused: only flags (and blocks) count.
        let flags = || findings.iter().filter(|f| !f.is_note());
        if tier == Tier::Untrusted && kind.runs_code() && flags().next().is_some() {
            let rules: BTreeSet<Rule> = flags().map(|f| f.rule).collect();
            return Err(Refusal::FlaggedCode {
                execution: kind,
                publisher_tier: tier,
                rules: rules.into_iter().collect(),
            });
        }
        Ok(())
    }

    /// The lowest tier allowed to publish `kind`.
    pub fn required_tier(&self, kind: ExecutionKind) -> Tier {
        self.required.get(&kind).copied().unwrap_or(Tier::Trusted)
    }

    /// Override the tier needed for one kind.
    pub fn set(&mut self, kind: ExecutionKind, tier: Tier) {
        self.required.insert(kind, tier);
    }

    /// Parse overrides like `function=trusted,command=verified` (the server's
    /// `--policy` option); kinds not named keep their defaults.
    pub fn with_overrides(mut self, spec: &str) -> Result<Self, String> {
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (kind, tier) = part
                .split_once('=')
                .ok_or_else(|| format!("policy entry `{part}` is not KIND=TIER"))?;
            self.set(kind.trim().parse()?, tier.trim().parse()?);
        }
        Ok(self)
    }

    /// `Ok(())` if a publisher of `tier` may publish (or keep serving) `kind`.
    pub fn check(&self, kind: ExecutionKind, tier: Tier) -> Result<(), Denial> {
        let required = self.required_tier(kind);
        if tier >= required {
            Ok(())
        } else {
            Err(Denial {
                execution: kind,
                required,
                publisher_tier: tier,
            })
        }
    }

    /// Every kind with the tier it needs, in a stable order.
    pub fn entries(&self) -> impl Iterator<Item = (ExecutionKind, Tier)> + '_ {
        ExecutionKind::ALL
            .into_iter()
            .map(|k| (k, self.required_tier(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_design() {
        let p = Policy::default();
        assert!(p.check(ExecutionKind::Function, Tier::Verified).is_err());
        assert!(p.check(ExecutionKind::Function, Tier::Trusted).is_ok());
        assert!(p.check(ExecutionKind::Script, Tier::Verified).is_err());
        assert!(p.check(ExecutionKind::Command, Tier::Untrusted).is_err());
        assert!(p.check(ExecutionKind::Command, Tier::Verified).is_ok());
        for k in [
            ExecutionKind::Http,
            ExecutionKind::Prompt,
            ExecutionKind::Schema,
        ] {
            assert!(p.check(k, Tier::Untrusted).is_ok());
        }
    }

    #[test]
    fn denial_names_kind_required_and_actual_tier() {
        let d = Policy::default()
            .check(ExecutionKind::Function, Tier::Untrusted)
            .unwrap_err();
        let text = d.to_string();
        assert!(
            text.contains("function") && text.contains("trusted") && text.contains("untrusted")
        );
    }

    #[test]
    fn admission_checks_the_tier_then_flagged_code() {
        let flagged = crate::lint::Finding {
            rule: Rule::P3,
            severity: crate::lint::Severity::Flag,
            pointer: "/description".into(),
            start: 0,
            end: 4,
            excerpt: "hide".into(),
            message: "concealment".into(),
        };
        let open = Policy::default()
            .with_overrides("command=untrusted")
            .unwrap();
        assert!(open
            .admit(ExecutionKind::Command, Tier::Untrusted, &[])
            .is_ok());
        let refusal = open
            .admit(
                ExecutionKind::Command,
                Tier::Untrusted,
                std::slice::from_ref(&flagged),
            )
            .unwrap_err();
        assert!(matches!(refusal, Refusal::FlaggedCode { .. }));
        assert!(refusal.to_string().contains("(P3)"), "{refusal}");
        // Flagged text is fine where no code runs, or from a higher tier.
        assert!(open
            .admit(
                ExecutionKind::Http,
                Tier::Untrusted,
                std::slice::from_ref(&flagged)
            )
            .is_ok());
        assert!(open
            .admit(
                ExecutionKind::Command,
                Tier::Verified,
                std::slice::from_ref(&flagged)
            )
            .is_ok());
        // The tier comes first.
        assert!(matches!(
            Policy::default().admit(ExecutionKind::Function, Tier::Untrusted, &[flagged]),
            Err(Refusal::Tier(_))
        ));
    }

    #[test]
    fn overrides_parse_and_reject_garbage() {
        let p = Policy::default()
            .with_overrides("http=verified, command=trusted")
            .unwrap();
        assert_eq!(p.required_tier(ExecutionKind::Http), Tier::Verified);
        assert_eq!(p.required_tier(ExecutionKind::Command), Tier::Trusted);
        assert!(Policy::default().with_overrides("http").is_err());
        assert!(Policy::default()
            .with_overrides("teleport=trusted")
            .is_err());
        assert!(Policy::default().with_overrides("http=godlike").is_err());
    }
}
