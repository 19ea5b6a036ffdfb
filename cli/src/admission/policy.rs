//! The project's `[policy]` in toolreg.toml, read once (when the project is
//! loaded) into [`Policy`]:
//!
//! * `allow = ["http", …]`: the execution kinds this project may pin,
//!   install and hand to an agent;
//! * `accept_findings = ["P4", …]`: the lint rules whose findings it
//!   accepts on a pinned version without `--accept-findings`;
//! * `require_provenance`: versions must come from CI through trusted
//!   publishing, with a verified attestation. `true` (every tool), a list of
//!   tool names, or a table `{ tools = [...], repositories = [...] }` that
//!   also names the repositories whose builds it accepts (`org/repo`, or
//!   `org/*` for any repository of an owner; compared without regard to
//!   case, as GitHub and GitLab do);
//! * `deny_deprecated = true`: `add`, `update` and `install` refuse a
//!   version its owners deprecated, naming the successor (without it they
//!   only warn).
//!
//! Each rule keeps where it is written (`toolreg.toml:12`) and its text, so
//! a refusal can quote it.

use toml_edit::{DocumentMut, Item};
use toolreg_core::lint::Rule;
use toolreg_core::ExecutionKind;

use crate::error::{Error, Result};

/// The whole `[policy]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// `allow`, when the project restricts execution kinds.
    pub allow: Option<KindPolicy>,
    /// `accept_findings`, when the project accepts some lint rules.
    pub accept_findings: Option<FindingsPolicy>,
    /// `require_provenance`, when it requires anything.
    pub provenance: Option<ProvenancePolicy>,
    /// Where `deny_deprecated = true` is written (`toolreg.toml:12`), when
    /// it is: deprecated versions are refused instead of warned about.
    pub deny_deprecated: Option<String>,
}

/// `[policy] allow`: which execution kinds this project may install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindPolicy {
    pub allow: Vec<ExecutionKind>,
    /// Where the rule is written, `toolreg.toml:12`, for messages.
    pub location: String,
    /// The rule's text, `allow = ["http", "prompt"]`.
    pub line: String,
}

/// `[policy] accept_findings`: the lint rules whose findings this project
/// accepts on the versions it pins, without `--accept-findings`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingsPolicy {
    /// Sorted, without duplicates.
    pub accept: Vec<Rule>,
    /// Where the rule is written, `toolreg.toml:12`, for messages.
    pub location: String,
}

/// `[policy] require_provenance`: the tools whose versions must carry
/// verified provenance, and the repositories whose builds it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvenancePolicy {
    /// Every tool.
    pub all: bool,
    /// Normalized names of the tools it applies to (when not `all`).
    pub tools: Vec<String>,
    /// `org/repo` or `org/*`, lowercased; empty: any repository.
    pub repositories: Vec<String>,
    /// Where the rule is written, `toolreg.toml:12`, for messages.
    pub location: String,
    /// The rule's text, `require_provenance = true`.
    pub line: String,
}

impl Policy {
    /// Read `[policy]` from a parsed toolreg.toml (`text` is its source, for
    /// line numbers; `file` its name). `Err` is the message, naming the key.
    pub fn read(doc: &DocumentMut, text: &str, file: &str) -> Result<Policy, String> {
        let Some(table) = doc.get("policy") else {
            return Ok(Policy::default());
        };
        let place = |key: &str| {
            let (n, line) = line_of(text, key);
            (format!("{file}:{n}"), line)
        };
        Ok(Policy {
            allow: read_allow(table.get("allow"), &place)?,
            accept_findings: read_findings(table.get("accept_findings"), &place)?,
            provenance: read_provenance(table.get("require_provenance"), &place)?,
            deny_deprecated: match table.get("deny_deprecated") {
                None => None,
                Some(item) => match item.as_bool() {
                    Some(true) => Some(place("deny_deprecated").0),
                    Some(false) => None,
                    None => return Err("`policy.deny_deprecated` must be true or false".into()),
                },
            },
        })
    }

    /// `Err` naming the policy line when `[policy] allow` forbids `kind`.
    pub fn check_kind(&self, name: &str, version: &str, kind: ExecutionKind) -> Result<()> {
        match &self.allow {
            Some(p) if !p.allow.contains(&kind) => Err(Error::Policy {
                name: name.to_string(),
                version: version.to_string(),
                kind: kind.to_string(),
                location: p.location.clone(),
                line: p.line.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// The provenance rule, when it covers the tool `name`.
    pub fn provenance_for(&self, name: &str) -> Option<&ProvenancePolicy> {
        self.provenance.as_ref().filter(|p| p.requires(name))
    }

    /// True when `[policy] accept_findings` accepts `rule`.
    pub fn accepts(&self, rule: Rule) -> bool {
        self.accept_findings
            .as_ref()
            .is_some_and(|p| p.accept.contains(&rule))
    }
}

impl FindingsPolicy {
    /// True when every rule of `rules` is accepted.
    pub fn accepts_all(&self, rules: &[Rule]) -> bool {
        rules.iter().all(|r| self.accept.contains(r))
    }
}

impl ProvenancePolicy {
    /// Whether versions of `name` must carry verified provenance.
    pub fn requires(&self, name: &str) -> bool {
        self.all || self.tools.contains(&toolreg_core::name::normalize(name))
    }

    /// Whether a build from `repository` is accepted.
    pub fn accepts_repository(&self, repository: &str) -> bool {
        let repo = repository.to_lowercase();
        self.repositories.is_empty()
            || self
                .repositories
                .iter()
                .any(|r| match r.strip_suffix("/*") {
                    Some(owner) => repo
                        .strip_prefix(owner)
                        .is_some_and(|rest| rest.starts_with('/')),
                    None => *r == repo,
                })
    }
}

type Place<'a> = &'a dyn Fn(&str) -> (String, String);

fn read_allow(item: Option<&Item>, place: Place<'_>) -> Result<Option<KindPolicy>, String> {
    let Some(item) = item else { return Ok(None) };
    let array = item
        .as_array()
        .ok_or("`policy.allow` must be an array of execution kinds")?;
    let mut kinds = Vec::new();
    for v in array.iter() {
        let s = v
            .as_str()
            .ok_or("`policy.allow` must be an array of execution kind strings")?;
        kinds.push(
            s.parse::<ExecutionKind>()
                .map_err(|e| format!("`policy.allow`: {e}"))?,
        );
    }
    let (location, line) = place("allow");
    Ok(Some(KindPolicy {
        allow: kinds,
        location,
        line,
    }))
}

fn read_findings(item: Option<&Item>, place: Place<'_>) -> Result<Option<FindingsPolicy>, String> {
    let Some(item) = item else { return Ok(None) };
    let what = "`policy.accept_findings` must be an array of lint rule ids like [\"P4\"]";
    let array = item.as_array().ok_or(what)?;
    let mut accept = Vec::new();
    for v in array.iter() {
        let s = v.as_str().ok_or(what)?;
        accept.push(
            s.parse::<Rule>()
                .map_err(|e| format!("`policy.accept_findings`: {e}"))?,
        );
    }
    accept.sort();
    accept.dedup();
    Ok(Some(FindingsPolicy {
        accept,
        location: place("accept_findings").0,
    }))
}

fn read_provenance(
    item: Option<&Item>,
    place: Place<'_>,
) -> Result<Option<ProvenancePolicy>, String> {
    let Some(item) = item else { return Ok(None) };
    let bad = "`policy.require_provenance` must be true, false, a list of tool names, or a table { tools = [...], repositories = [...] }";
    let names = |item: &Item, key: &str| -> Result<Vec<String>, String> {
        let array = item.as_array().ok_or_else(|| {
            format!("`policy.require_provenance.{key}` must be a list of strings")
        })?;
        array
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    format!("`policy.require_provenance.{key}` must be a list of strings")
                })
            })
            .collect()
    };
    let (all, tools, repositories) = if let Some(b) = item.as_bool() {
        (b, Vec::new(), Vec::new())
    } else if item.is_array() {
        let tools = names(item, "tools").map_err(|_| bad.to_string())?;
        (false, tools, Vec::new())
    } else if let Some(table) = item.as_table_like() {
        if let Some((key, _)) = table
            .iter()
            .find(|(k, _)| !matches!(*k, "tools" | "repositories"))
        {
            return Err(format!(
                "`policy.require_provenance.{key}` is not a setting; use `tools` and `repositories`"
            ));
        }
        let tools = match table.get("tools") {
            Some(t) => names(t, "tools")?,
            None => Vec::new(),
        };
        let repositories = match table.get("repositories") {
            Some(r) => names(r, "repositories")?,
            None => Vec::new(),
        };
        for r in &repositories {
            let (owner, name) = r.split_once('/').unwrap_or(("", ""));
            if owner.is_empty() || name.is_empty() || r.chars().any(char::is_whitespace) {
                return Err(format!(
                    "`policy.require_provenance.repositories`: \"{r}\" is not `org/repo` or `org/*`"
                ));
            }
        }
        if table.get("repositories").is_some() && repositories.is_empty() {
            return Err(
                "`policy.require_provenance.repositories` is empty, which would accept no build; list `org/repo` entries or leave it out".into(),
            );
        }
        (table.get("tools").is_none(), tools, repositories)
    } else {
        return Err(bad.into());
    };
    if !all && tools.is_empty() {
        return Ok(None);
    }
    let (location, line) = place("require_provenance");
    Ok(Some(ProvenancePolicy {
        all,
        tools: tools
            .iter()
            .map(|t| toolreg_core::name::normalize(t))
            .collect(),
        repositories: repositories.iter().map(|r| r.to_lowercase()).collect(),
        location,
        line,
    }))
}

/// 1-based line number and text of `KEY = ...` inside `[policy]` (or
/// `policy.KEY = ...`, or the `[policy.KEY]` header); `(0, "[policy] KEY")`
/// when not found.
fn line_of(text: &str, key: &str) -> (usize, String) {
    let mut in_policy = false;
    let is_key = |rest: &str| rest.trim_start().starts_with('=');
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with('[') {
            let header = line.trim_start_matches('[').trim_end_matches(']').trim();
            if header == format!("policy.{key}") {
                return (i + 1, line.to_string());
            }
            in_policy = header == "policy";
            continue;
        }
        if in_policy && line.strip_prefix(key).is_some_and(is_key) {
            return (i + 1, line.to_string());
        }
        if line
            .strip_prefix("policy.")
            .and_then(|l| l.strip_prefix(key))
            .is_some_and(is_key)
        {
            return (i + 1, line.to_string());
        }
    }
    (0, format!("[policy] {key}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> Result<Policy, String> {
        let doc = text.parse::<DocumentMut>().unwrap();
        Policy::read(&doc, text, "toolreg.toml")
    }

    #[test]
    fn reads_allow_and_names_its_line() {
        let p =
            policy("[tools]\n\n[policy]\nallow = [\"http\", \"prompt\", \"schema\"]   # no code\n")
                .unwrap();
        let allow = p.allow.clone().unwrap();
        assert_eq!(
            allow.allow,
            vec![
                ExecutionKind::Http,
                ExecutionKind::Prompt,
                ExecutionKind::Schema
            ]
        );
        assert_eq!(allow.location, "toolreg.toml:4");
        assert!(p.check_kind("w", "1.2.0", ExecutionKind::Http).is_ok());
        let err = p
            .check_kind("calculator", "1.0.0", ExecutionKind::Function)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("calculator")
                && err.contains("`function`")
                && err.contains("toolreg.toml:4")
                && err.contains("allow = [\"http\""),
            "{err}"
        );
        assert_eq!(policy("[tools]\n").unwrap(), Policy::default());
        assert!(Policy::default()
            .check_kind("x", "1.0.0", ExecutionKind::Script)
            .is_ok());
        let err = policy("[policy]\nallow = [\"teleport\"]\n").unwrap_err();
        assert!(
            err.contains("policy.allow") && err.contains("teleport"),
            "{err}"
        );
    }

    #[test]
    fn reads_deny_deprecated_with_its_line() {
        let p = policy("[policy]\nallow = [\"http\"]\ndeny_deprecated = true\n").unwrap();
        assert_eq!(p.deny_deprecated.as_deref(), Some("toolreg.toml:3"));
        let p = policy("[policy]\ndeny_deprecated = false\n").unwrap();
        assert_eq!(p.deny_deprecated, None);
        let err = policy("[policy]\ndeny_deprecated = \"yes\"\n").unwrap_err();
        assert!(err.contains("policy.deny_deprecated"), "{err}");
    }

    #[test]
    fn reads_accept_findings_and_names_bad_rules() {
        let p =
            policy("[policy]\nallow = [\"http\"]\naccept_findings = [\"p4\", \"P3\", \"P4\"]\n")
                .unwrap();
        let fp = p.accept_findings.clone().unwrap();
        assert_eq!(fp.accept, vec![Rule::P3, Rule::P4]);
        assert_eq!(fp.location, "toolreg.toml:3");
        assert!(fp.accepts_all(&[Rule::P4]) && !fp.accepts_all(&[Rule::P4, Rule::P7]));
        assert!(p.accepts(Rule::P3) && !p.accepts(Rule::P7));
        assert_eq!(p.allow.unwrap().location, "toolreg.toml:2");
        for (text, needle) in [
            ("[policy]\naccept_findings = [\"P99\"]\n", "P99"),
            (
                "[policy]\naccept_findings = \"P4\"\n",
                "array of lint rule ids",
            ),
            (
                "[policy]\naccept_findings = [4]\n",
                "array of lint rule ids",
            ),
        ] {
            let err = policy(text).unwrap_err();
            assert!(
                err.contains("policy.accept_findings") && err.contains(needle),
                "{err}"
            );
        }
    }

    #[test]
    fn reads_require_provenance_for_all_or_some_tools() {
        let p = policy("[tools]\nx = \"^1\"\n\n[policy]\nrequire_provenance = true   # CI only\n")
            .unwrap()
            .provenance
            .unwrap();
        assert!(p.requires("anything") && p.all && p.accepts_repository("any/repo"));
        assert_eq!(p.location, "toolreg.toml:5");
        assert_eq!(p.line, "require_provenance = true   # CI only");
        let p = policy("[policy]\nrequire_provenance = [\"web_search\"]\n")
            .unwrap()
            .provenance
            .unwrap();
        assert!(p.requires("web-search") && !p.requires("calculator"));
        assert_eq!(
            policy("[policy]\nrequire_provenance = false\n")
                .unwrap()
                .provenance,
            None
        );
        let err = policy("[policy]\nrequire_provenance = \"yes\"\n").unwrap_err();
        assert!(err.contains("policy.require_provenance"), "{err}");
    }

    #[test]
    fn require_provenance_can_name_the_repositories_it_accepts() {
        let p = policy(
            "[policy]\nrequire_provenance = { repositories = [\"Acme/Tools\", \"corp/*\"] }\n",
        )
        .unwrap()
        .provenance
        .unwrap();
        assert!(p.all && p.requires("x"));
        assert!(p.accepts_repository("acme/tools") && p.accepts_repository("ACME/tools"));
        assert!(p.accepts_repository("corp/a") && p.accepts_repository("corp/sub/b"));
        assert!(!p.accepts_repository("acme/tools-fork") && !p.accepts_repository("corporate/a"));
        assert_eq!(p.location, "toolreg.toml:2");
        // As its own table, for some tools only.
        let p = policy(
            "[tools]\n\n[policy.require_provenance]\ntools = [\"web-search\"]\nrepositories = [\"acme/web\"]\n",
        )
        .unwrap()
        .provenance
        .unwrap();
        assert!(!p.all && p.requires("web_search") && !p.requires("calc"));
        assert_eq!(p.location, "toolreg.toml:3");
        for (text, needle) in [
            (
                "[policy]\nrequire_provenance = { repositories = [] }\n",
                "accept no build",
            ),
            (
                "[policy]\nrequire_provenance = { repositories = [\"acme\"] }\n",
                "\"acme\" is not `org/repo`",
            ),
            (
                "[policy]\nrequire_provenance = { repos = [\"a/b\"] }\n",
                "`policy.require_provenance.repos` is not a setting",
            ),
            (
                "[policy]\nrequire_provenance = { tools = \"x\" }\n",
                "`policy.require_provenance.tools` must be a list",
            ),
        ] {
            let err = policy(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
