//! The agent project's `toolreg.toml`: `[registry] url` (and `log_key`,
//! `mcp_protocol`), the pinned
//! requirements under `[tools]` and the consumer policy: `[policy] allow`
//! (the execution kinds this project may install), `[policy]
//! accept_findings` (the lint rules whose findings it accepts on a pinned
//! version) and `[policy] require_provenance` (versions must come from CI
//! through trusted publishing). Read and written with toml_edit so comments
//! and formatting survive.

use std::path::{Path, PathBuf};

use semver::VersionReq;
use toml_edit::{value, DocumentMut, Item, Table};
use toolreg_core::lint::Rule;
use toolreg_core::ExecutionKind;

use crate::error::{Error, Result};

/// File name of the project manifest.
pub const FILE: &str = "toolreg.toml";

/// The consumer policy: which execution kinds this project may install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerPolicy {
    pub allow: Vec<ExecutionKind>,
    /// Where the rule is written, `toolreg.toml:12`, for messages.
    pub location: String,
    /// The rule's text, `allow = ["http", "prompt"]`.
    pub line: String,
}

impl ConsumerPolicy {
    /// `Err` with the policy line when `kind` is not allowed.
    pub fn check(&self, name: &str, version: &str, kind: ExecutionKind) -> Result<()> {
        if self.allow.contains(&kind) {
            Ok(())
        } else {
            Err(Error::Policy {
                name: name.to_string(),
                version: version.to_string(),
                kind: kind.to_string(),
                location: self.location.clone(),
                line: self.line.clone(),
            })
        }
    }
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

impl FindingsPolicy {
    /// True when every rule of `rules` is accepted.
    pub fn accepts_all(&self, rules: &[Rule]) -> bool {
        rules.iter().all(|r| self.accept.contains(r))
    }
}

/// `[policy] require_provenance`: `true` for every tool, or a list of the
/// tools whose versions must carry verified provenance (published from CI
/// through trusted publishing, with a signed attestation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvenancePolicy {
    /// Every tool.
    pub all: bool,
    /// Normalized names of the tools it applies to (when not `all`).
    pub tools: Vec<String>,
    /// Where the rule is written, `toolreg.toml:12`, for messages.
    pub location: String,
    /// The rule's text, `require_provenance = true`.
    pub line: String,
}

impl ProvenancePolicy {
    /// Whether versions of `name` must carry verified provenance.
    pub fn requires(&self, name: &str) -> bool {
        self.all || self.tools.contains(&toolreg_core::name::normalize(name))
    }
}

/// An agent project's `toolreg.toml`, with its formatting.
#[derive(Debug, Clone)]
pub struct Project {
    path: PathBuf,
    text: String,
    doc: DocumentMut,
}

impl Project {
    /// Read `dir/toolreg.toml`; `Ok(None)` when it does not exist.
    pub fn load(dir: &Path) -> Result<Option<Self>> {
        let path = dir.join(FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&path, text).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("could not read", &path, e)),
        }
    }

    /// Read `dir/toolreg.toml`, failing clearly when it does not exist.
    pub fn require(dir: &Path) -> Result<Self> {
        Self::load(dir)?.ok_or_else(|| Error::Project {
            path: dir.join(FILE).display().to_string(),
            message: "no toolreg.toml here; run `toolreg add NAME` to create one".into(),
        })
    }

    /// A project that is not on disk yet (written by [`Project::save`]).
    pub fn new_in(dir: &Path) -> Self {
        Project {
            path: dir.join(FILE),
            text: String::new(),
            doc: DocumentMut::new(),
        }
    }

    pub fn parse(path: &Path, text: String) -> Result<Self> {
        let doc = text.parse::<DocumentMut>().map_err(|e| Error::Project {
            path: path.display().to_string(),
            message: format!("not valid TOML: {}", e.to_string().trim()),
        })?;
        let project = Project {
            path: path.to_path_buf(),
            text,
            doc,
        };
        // Surface malformed sections now rather than halfway through a command.
        project.requirements()?;
        project.policy()?;
        project.findings_policy()?;
        project.provenance_policy()?;
        project.registry_url()?;
        Ok(project)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, message: impl Into<String>) -> Error {
        Error::Project {
            path: self.path.display().to_string(),
            message: message.into(),
        }
    }

    /// `[registry] url`, if set.
    pub fn registry_url(&self) -> Result<Option<String>> {
        match self.doc.get("registry").and_then(|r| r.get("url")) {
            None => Ok(None),
            Some(item) => item
                .as_str()
                .map(|s| Some(s.to_string()))
                .ok_or_else(|| self.err("`registry.url` must be a string")),
        }
    }

    /// `[registry] mcp_protocol`: the MCP protocol version `toolreg export
    /// --format mcp` shapes tools for when `--protocol` isn't given.
    pub fn mcp_protocol(&self) -> Result<Option<toolreg_core::export::McpProtocol>> {
        match self.doc.get("registry").and_then(|r| r.get("mcp_protocol")) {
            None => Ok(None),
            Some(item) => {
                let text = item
                    .as_str()
                    .ok_or_else(|| self.err("`registry.mcp_protocol` must be a string"))?;
                text.parse()
                    .map(Some)
                    .map_err(|e: String| self.err(format!("`registry.mcp_protocol`: {e}")))
            }
        }
    }

    /// `[registry] log_key`: the registry's transparency-log key, if pinned.
    pub fn log_key(&self) -> Result<Option<String>> {
        match self.doc.get("registry").and_then(|r| r.get("log_key")) {
            None => Ok(None),
            Some(item) => item
                .as_str()
                .map(|s| Some(s.to_string()))
                .ok_or_else(|| self.err("`registry.log_key` must be a string")),
        }
    }

    /// Pin `[registry] log_key`, keeping every other line as it was.
    pub fn set_log_key(&mut self, key: &str) {
        if !self.doc.contains_key("registry") {
            self.doc["registry"] = Item::Table(Table::new());
        }
        if let Some(table) = self.doc["registry"].as_table_like_mut() {
            table.insert("log_key", value(key));
        }
    }

    /// Every `[tools]` entry: registry name and requirement, in file order.
    pub fn requirements(&self) -> Result<Vec<(String, VersionReq)>> {
        let Some(tools) = self.doc.get("tools") else {
            return Ok(Vec::new());
        };
        let table = tools
            .as_table_like()
            .ok_or_else(|| self.err("`tools` must be a table of NAME = \"REQ\""))?;
        let mut out = Vec::new();
        for (name, item) in table.iter() {
            let text = item.as_str().ok_or_else(|| {
                self.err(format!(
                    "`tools.{name}` must be a version requirement string like \"^1.2\""
                ))
            })?;
            let req = VersionReq::parse(text).map_err(|e| {
                self.err(format!(
                    "`tools.{name}` = \"{text}\" is not a SemVer requirement: {e}"
                ))
            })?;
            out.push((name.to_string(), req));
        }
        Ok(out)
    }

    /// The requirement for one tool, if pinned.
    pub fn requirement(&self, name: &str) -> Result<Option<VersionReq>> {
        Ok(self
            .requirements()?
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, r)| r))
    }

    /// Set `[tools] name = "req"`, keeping every other line as it was.
    pub fn set_requirement(&mut self, name: &str, req: &str) {
        if !self.doc.contains_key("tools") {
            self.doc["tools"] = Item::Table(Table::new());
        }
        if let Some(table) = self.doc["tools"].as_table_like_mut() {
            match table.get_mut(name) {
                Some(item) if item.is_value() => {
                    // Keep the entry's surrounding whitespace and comments.
                    let decor = item.as_value().map(|v| v.decor().clone());
                    *item = value(req);
                    if let (Some(decor), Some(v)) = (decor, item.as_value_mut()) {
                        *v.decor_mut() = decor;
                    }
                }
                _ => {
                    table.insert(name, value(req));
                }
            }
        }
    }

    /// `[policy] allow`, when the project restricts execution kinds.
    pub fn policy(&self) -> Result<Option<ConsumerPolicy>> {
        let Some(policy) = self.doc.get("policy") else {
            return Ok(None);
        };
        let Some(allow) = policy.get("allow") else {
            return Ok(None);
        };
        let array = allow
            .as_array()
            .ok_or_else(|| self.err("`policy.allow` must be an array of execution kinds"))?;
        let mut kinds = Vec::new();
        for v in array.iter() {
            let s = v.as_str().ok_or_else(|| {
                self.err("`policy.allow` must be an array of execution kind strings")
            })?;
            kinds.push(
                s.parse::<ExecutionKind>()
                    .map_err(|e| self.err(format!("`policy.allow`: {e}")))?,
            );
        }
        let (lineno, line) = self.find_policy_line();
        Ok(Some(ConsumerPolicy {
            allow: kinds,
            location: self.location(lineno),
            line,
        }))
    }

    /// `[policy] accept_findings`, when the project accepts some lint rules.
    pub fn findings_policy(&self) -> Result<Option<FindingsPolicy>> {
        let Some(item) = self
            .doc
            .get("policy")
            .and_then(|p| p.get("accept_findings"))
        else {
            return Ok(None);
        };
        let what = "`policy.accept_findings` must be an array of lint rule ids like [\"P4\"]";
        let array = item.as_array().ok_or_else(|| self.err(what))?;
        let mut accept = Vec::new();
        for v in array.iter() {
            let s = v.as_str().ok_or_else(|| self.err(what))?;
            accept.push(
                s.parse::<Rule>()
                    .map_err(|e| self.err(format!("`policy.accept_findings`: {e}")))?,
            );
        }
        accept.sort();
        accept.dedup();
        let (lineno, _) = self.find_line_in_policy("accept_findings");
        Ok(Some(FindingsPolicy {
            accept,
            location: self.location(lineno),
        }))
    }

    /// `toolreg.toml:LINE`, for messages.
    fn location(&self, lineno: usize) -> String {
        format!(
            "{}:{lineno}",
            self.path
                .file_name()
                .and_then(|f| f.to_str())
                .unwrap_or(FILE)
        )
    }

    /// `[policy] require_provenance` (`true`, or a list of tool names), if
    /// it requires anything.
    pub fn provenance_policy(&self) -> Result<Option<ProvenancePolicy>> {
        let Some(item) = self
            .doc
            .get("policy")
            .and_then(|p| p.get("require_provenance"))
        else {
            return Ok(None);
        };
        let bad =
            || self.err("`policy.require_provenance` must be true, false or a list of tool names");
        let (all, tools) = if let Some(b) = item.as_bool() {
            (b, Vec::new())
        } else if let Some(array) = item.as_array() {
            let mut tools = Vec::new();
            for v in array.iter() {
                let name = v.as_str().ok_or_else(bad)?;
                tools.push(toolreg_core::name::normalize(name));
            }
            (false, tools)
        } else {
            return Err(bad());
        };
        if !all && tools.is_empty() {
            return Ok(None);
        }
        let (lineno, line) = self.find_policy_key_line("require_provenance");
        Ok(Some(ProvenancePolicy {
            all,
            tools,
            location: format!(
                "{}:{lineno}",
                self.path
                    .file_name()
                    .and_then(|f| f.to_str())
                    .unwrap_or(FILE)
            ),
            line,
        }))
    }

    /// 1-based line number and text of `KEY = ...` inside `[policy]` (or
    /// `policy.KEY = ...`).
    fn find_policy_key_line(&self, key: &str) -> (usize, String) {
        let mut in_policy = false;
        for (i, raw) in self.text.lines().enumerate() {
            let line = raw.trim();
            if line.starts_with('[') {
                in_policy = line.trim_start_matches('[').trim_end_matches(']').trim() == "policy";
                continue;
            }
            let is_key = |rest: &str| rest.trim_start().starts_with('=');
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

    /// 1-based line number and text of `allow = ...` inside `[policy]`.
    fn find_policy_line(&self) -> (usize, String) {
        self.find_line_in_policy("allow")
    }

    /// 1-based line number and text of `key = ...` inside `[policy]`.
    fn find_line_in_policy(&self, key: &str) -> (usize, String) {
        let mut in_policy = false;
        let is_key = |rest: &str| rest.trim_start().starts_with('=');
        for (i, raw) in self.text.lines().enumerate() {
            let line = raw.trim();
            if line.starts_with('[') {
                in_policy = line.trim_start_matches('[').trim_end_matches(']').trim() == "policy";
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

    /// The document as it will be written.
    pub fn render(&self) -> String {
        self.doc.to_string()
    }

    /// Write the file back.
    pub fn save(&mut self) -> Result<()> {
        let text = self.render();
        std::fs::write(&self.path, &text)
            .map_err(|e| Error::io("could not write", &self.path, e))?;
        self.text = text;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"# My agent's tools
[registry]
url = "http://127.0.0.1:9999"   # local registry

[tools]
# search first
web-search   = "^1.2"   # keep aligned
calculator = "=1.0.0"

[policy]
allow = ["http", "prompt", "schema"]   # no code
"#;

    fn project(text: &str) -> Project {
        Project::parse(Path::new("toolreg.toml"), text.to_string()).unwrap()
    }

    #[test]
    fn reads_registry_requirements_and_policy() {
        let p = project(SAMPLE);
        assert_eq!(
            p.registry_url().unwrap().as_deref(),
            Some("http://127.0.0.1:9999")
        );
        let reqs = p.requirements().unwrap();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].0, "web-search");
        assert_eq!(reqs[0].1.to_string(), "^1.2");
        let policy = p.policy().unwrap().unwrap();
        assert_eq!(
            policy.allow,
            vec![
                ExecutionKind::Http,
                ExecutionKind::Prompt,
                ExecutionKind::Schema
            ]
        );
        assert_eq!(policy.location, "toolreg.toml:11");
        assert!(policy.line.starts_with("allow = [\"http\""));
    }

    #[test]
    fn add_preserves_comments_and_formatting() {
        let mut p = project(SAMPLE);
        p.set_requirement("github-create-issue", "^0.1.0");
        p.set_requirement("web-search", "^1.3");
        let out = p.render();
        // every original comment and odd alignment is still there
        for keep in [
            "# My agent's tools",
            "# local registry",
            "# search first",
            "# keep aligned",
            "# no code",
            "calculator = \"=1.0.0\"",
            "web-search   = \"^1.3\"   # keep aligned",
        ] {
            assert!(out.contains(keep), "lost `{keep}` in:\n{out}");
        }
        assert!(out.contains("github-create-issue = \"^0.1.0\""), "{out}");
        // the new entry lands in [tools], not after [policy]
        let tools_at = out.find("[tools]").unwrap();
        let policy_at = out.find("[policy]").unwrap();
        let new_at = out.find("github-create-issue").unwrap();
        assert!(tools_at < new_at && new_at < policy_at, "{out}");
        assert_eq!(
            project(&out)
                .requirement("web-search")
                .unwrap()
                .unwrap()
                .to_string(),
            "^1.3"
        );
    }

    #[test]
    fn creates_a_tools_table_in_an_empty_project() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = Project::new_in(dir.path());
        p.set_requirement("calculator", "^1.0.0");
        p.save().unwrap();
        let again = Project::require(dir.path()).unwrap();
        assert_eq!(again.requirements().unwrap()[0].0, "calculator");
    }

    #[test]
    fn malformed_sections_name_the_field() {
        let err = Project::parse(
            Path::new("toolreg.toml"),
            "[tools]\nx = \"not a req!\"\n".into(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("tools.x"), "{err}");
        let err = Project::parse(
            Path::new("toolreg.toml"),
            "[policy]\nallow = [\"teleport\"]\n".into(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("policy.allow") && err.to_string().contains("teleport"),
            "{err}"
        );
        let err = Project::parse(Path::new("toolreg.toml"), "[tools\n".into()).unwrap_err();
        assert!(err.to_string().contains("not valid TOML"), "{err}");
    }

    #[test]
    fn policy_refusal_names_tool_kind_and_line() {
        let p = project(SAMPLE);
        let policy = p.policy().unwrap().unwrap();
        assert!(policy
            .check("web-search", "1.2.0", ExecutionKind::Http)
            .is_ok());
        let err = policy
            .check("calculator", "1.0.0", ExecutionKind::Function)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("calculator") && err.contains("`function`"),
            "{err}"
        );
        assert!(
            err.contains("toolreg.toml:11") && err.contains("allow = [\"http\""),
            "{err}"
        );
    }

    #[test]
    fn reads_accept_findings_and_names_bad_rules() {
        assert_eq!(project(SAMPLE).findings_policy().unwrap(), None);
        let p =
            project("[policy]\nallow = [\"http\"]\naccept_findings = [\"p4\", \"P3\", \"P4\"]\n");
        let fp = p.findings_policy().unwrap().unwrap();
        assert_eq!(fp.accept, vec![Rule::P3, Rule::P4]);
        assert_eq!(fp.location, "toolreg.toml:3");
        assert!(fp.accepts_all(&[Rule::P4]) && !fp.accepts_all(&[Rule::P4, Rule::P7]));
        // `allow` is still found on its own line.
        assert_eq!(p.policy().unwrap().unwrap().location, "toolreg.toml:2");
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
            let err = Project::parse(Path::new("toolreg.toml"), text.into())
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("policy.accept_findings") && err.contains(needle),
                "{err}"
            );
        }
    }

    #[test]
    fn reads_require_provenance_for_all_or_some_tools() {
        assert_eq!(project(SAMPLE).provenance_policy().unwrap(), None);
        let p = project("[tools]\nx = \"^1\"\n\n[policy]\nrequire_provenance = true   # CI only\n")
            .provenance_policy()
            .unwrap()
            .unwrap();
        assert!(p.requires("anything") && p.all);
        assert_eq!(p.location, "toolreg.toml:5");
        assert_eq!(p.line, "require_provenance = true   # CI only");
        let p = project("[policy]\nrequire_provenance = [\"web_search\"]\n")
            .provenance_policy()
            .unwrap()
            .unwrap();
        assert!(p.requires("web-search") && !p.requires("calculator"));
        assert_eq!(
            project("[policy]\nrequire_provenance = false\n")
                .provenance_policy()
                .unwrap(),
            None
        );
        let err = Project::parse(
            Path::new("toolreg.toml"),
            "[policy]\nrequire_provenance = \"yes\"\n".into(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("policy.require_provenance"), "{err}");
    }

    #[test]
    fn reads_the_mcp_protocol() {
        use toolreg_core::export::McpProtocol;
        assert_eq!(project(SAMPLE).mcp_protocol().unwrap(), None);
        let p = project("[registry]\nmcp_protocol = \"2025-11-25\"\n");
        assert_eq!(p.mcp_protocol().unwrap(), Some(McpProtocol::V2025_11_25));
        let err = project("[registry]\nmcp_protocol = \"2024-11-05\"\n")
            .mcp_protocol()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("toolreg.toml")
                && err.contains("registry.mcp_protocol")
                && err.contains("2025-06-18, 2025-11-25, 2026-07-28"),
            "{err}"
        );
        let err = project("[registry]\nmcp_protocol = 20251125\n")
            .mcp_protocol()
            .unwrap_err()
            .to_string();
        assert!(err.contains("must be a string"), "{err}");
    }
}
