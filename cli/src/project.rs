//! The agent project's `toolreg.toml`: `[registry] url` (and `log_key`,
//! `mcp_protocol`), the pinned requirements under `[tools]`, and the
//! consumer policy `[policy]`, read once when the file is loaded
//! ([`crate::admission::Policy`]). Read and written with toml_edit so
//! comments and formatting survive.

use std::path::{Path, PathBuf};

use semver::VersionReq;
use toml_edit::{value, DocumentMut, Item, Table};

use crate::admission::Policy;
use crate::error::{Error, Result};

/// File name of the project manifest.
pub const FILE: &str = "toolreg.toml";

/// An agent project's `toolreg.toml`, with its formatting.
#[derive(Debug, Clone)]
pub struct Project {
    path: PathBuf,
    doc: DocumentMut,
    policy: Policy,
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
            doc: DocumentMut::new(),
            policy: Policy::default(),
        }
    }

    pub fn parse(path: &Path, text: String) -> Result<Self> {
        let doc = text.parse::<DocumentMut>().map_err(|e| Error::Project {
            path: path.display().to_string(),
            message: format!("not valid TOML: {}", e.to_string().trim()),
        })?;
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or(FILE);
        let policy = Policy::read(&doc, &text, file).map_err(|message| Error::Project {
            path: path.display().to_string(),
            message,
        })?;
        let project = Project {
            path: path.to_path_buf(),
            doc,
            policy,
        };
        // Surface malformed sections now rather than halfway through a command.
        project.requirements()?;
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

    /// The project's `[policy]`.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The document as it will be written.
    pub fn render(&self) -> String {
        self.doc.to_string()
    }

    /// Write the file back.
    pub fn save(&mut self) -> Result<()> {
        let text = self.render();
        std::fs::write(&self.path, &text).map_err(|e| Error::io("could not write", &self.path, e))
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
        let allow = p.policy().allow.clone().unwrap();
        assert_eq!(allow.location, "toolreg.toml:11");
        assert!(allow.line.starts_with("allow = [\"http\""));
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
