//! The lock's `[[server]]` entries: third-party MCP servers that
//! `toolreg mcp proxy` runs, with the definition fingerprint of every tool
//! they list (`tools = { create_issue = "sha256:…" }`, the fingerprint
//! `toolreg verify --against` computes) and the lint flags accepted on a
//! tool (`accepted_findings = { create_issue = ["P4"] }`). Written by
//! `toolreg mcp proxy --record` and `toolreg mcp accept`, sorted by name.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;
use toolreg_core::lint::Rule;

use super::toml_str;

/// How a server is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// A command and its arguments (a stdio server).
    Command(Vec<String>),
    /// A Streamable HTTP endpoint.
    Url(String),
}

impl std::fmt::Display for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Launch::Command(argv) => f.write_str(&argv.join(" ")),
            Launch::Url(url) => f.write_str(url),
        }
    }
}

/// One pinned server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedServer {
    pub name: String,
    pub launch: Launch,
    /// Call name → definition fingerprint.
    pub tools: BTreeMap<String, String>,
    /// Call name → the lint rules whose flags on it were accepted.
    pub accepted_findings: BTreeMap<String, Vec<Rule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServer {
    name: Spanned<String>,
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    tools: BTreeMap<String, String>,
    #[serde(default)]
    accepted_findings: BTreeMap<String, Vec<String>>,
}

impl RawServer {
    /// Where the entry starts (a byte offset), for messages.
    pub(super) fn start(&self) -> usize {
        self.name.span().start
    }

    /// The entry, checked; `Err` is the message (without file and line).
    pub(super) fn check(self) -> Result<LockedServer, String> {
        let name = self.name.into_inner();
        if name.is_empty() {
            return Err("a [[server]] entry has an empty name".into());
        }
        let launch = match (self.command, self.url) {
            (Some(c), None) if !c.is_empty() => Launch::Command(c),
            (None, Some(u)) => Launch::Url(u),
            _ => {
                return Err(format!(
                    "server {name} needs exactly one of `command` (a non-empty list) or `url`"
                ))
            }
        };
        for (tool, fp) in &self.tools {
            if !toolreg_core::fingerprint::is_fingerprint(fp) {
                return Err(format!(
                    "tools.{tool} of server {name} is not `sha256:` and 64 lowercase hex digits: \"{fp}\""
                ));
            }
        }
        let mut accepted_findings = BTreeMap::new();
        for (tool, ids) in self.accepted_findings {
            let mut rules = ids
                .iter()
                .map(|id| id.parse::<Rule>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("accepted_findings.{tool} of server {name}: {e}"))?;
            rules.sort();
            rules.dedup();
            accepted_findings.insert(tool, rules);
        }
        Ok(LockedServer {
            name,
            launch,
            tools: self.tools,
            accepted_findings,
        })
    }
}

/// A TOML key: bare when it can be, else a basic string.
fn toml_key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_string()
    } else {
        toml_str(k)
    }
}

/// The entry as lock text (starting with a blank line).
pub(super) fn render(s: &LockedServer) -> String {
    let mut out = String::from("\n[[server]]\n");
    out.push_str(&format!("name = {}\n", toml_str(&s.name)));
    match &s.launch {
        Launch::Command(argv) => {
            let items: Vec<String> = argv.iter().map(|a| toml_str(a)).collect();
            out.push_str(&format!("command = [{}]\n", items.join(", ")));
        }
        Launch::Url(url) => out.push_str(&format!("url = {}\n", toml_str(url))),
    }
    let tools: Vec<String> = s
        .tools
        .iter()
        .map(|(k, v)| format!("{} = {}", toml_key(k), toml_str(v)))
        .collect();
    out.push_str(&format!("tools = {{ {} }}\n", tools.join(", ")).replace("{  }", "{}"));
    let accepted: Vec<String> = s
        .accepted_findings
        .iter()
        .filter(|(_, rules)| !rules.is_empty())
        .map(|(k, rules)| {
            let ids: Vec<String> = rules.iter().map(|r| toml_str(r.as_str())).collect();
            format!("{} = [{}]", toml_key(k), ids.join(", "))
        })
        .collect();
    if !accepted.is_empty() {
        out.push_str(&format!(
            "accepted_findings = {{ {} }}\n",
            accepted.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::Lockfile;
    use super::*;
    use std::path::Path;

    fn server() -> LockedServer {
        LockedServer {
            name: "github".into(),
            launch: Launch::Command(vec!["npx".into(), "-y".into(), "@github/mcp@1.4.2".into()]),
            tools: [
                (
                    "list_issues".to_string(),
                    format!("sha256:{}", "a".repeat(64)),
                ),
                (
                    "create issue".to_string(),
                    format!("sha256:{}", "b".repeat(64)),
                ),
            ]
            .into_iter()
            .collect(),
            accepted_findings: [("list_issues".to_string(), vec![Rule::P4])]
                .into_iter()
                .collect(),
        }
    }

    #[test]
    fn servers_round_trip_sorted() {
        let mut lock = Lockfile::default();
        let mut other = server();
        other.name = "alpha".into();
        other.launch = Launch::Url("https://mcp.example.com/mcp".into());
        other.accepted_findings.clear();
        lock.upsert_server(server());
        lock.upsert_server(other);
        let text = lock.render();
        assert!(text.find("\"alpha\"").unwrap() < text.find("\"github\"").unwrap());
        assert!(
            text.contains("tools = { \"create issue\" = \"sha256:bbbb")
                && text.contains("accepted_findings = { list_issues = [\"P4\"] }"),
            "{text}"
        );
        let again = Lockfile::parse(Path::new("toolreg.lock"), &text).unwrap();
        assert_eq!(again, lock);
        assert_eq!(again.server("github").unwrap().tools.len(), 2);
    }

    #[test]
    fn bad_server_entries_name_the_line() {
        let mut lock = Lockfile::default();
        lock.upsert_server(server());
        let text = lock.render();
        let bad = |t: &str| {
            Lockfile::parse(Path::new("toolreg.lock"), t)
                .unwrap_err()
                .to_string()
        };
        let e = bad(&text.replace("sha256:aaaa", "md5:aaaa"));
        assert!(
            e.contains("toolreg.lock:6") && e.contains("tools.list_issues"),
            "{e}"
        );
        let e = bad(&text.replace("command = ", "url = \"x\"\ncommand = "));
        assert!(e.contains("exactly one of"), "{e}");
        let e = bad(&text.replace("[\"P4\"]", "[\"P44\"]"));
        assert!(e.contains("accepted_findings.list_issues"), "{e}");
    }
}
