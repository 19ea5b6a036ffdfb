//! The tool page, `GET /tools/{name}` (its latest version) and
//! `GET /tools/{name}/{version}`: what the version is and does, how it
//! runs and who published it, its parameters, README, exports and every
//! version of the tool.

use askama::Template;
use toolreg_api::{EncodablePublisher, EncodableTool};
use toolreg_core::lint::Finding;
use toolreg_core::policy::Tier;

use super::skill::SkillView;
use super::version::{
    execution_detail, exports, format_exports, pin_snippet, ExportView, FormatExport,
};
use super::{date_only, downloads_label, license_label, plural, size_label, tool_url, version_url};
use crate::models::version::HasState;
use crate::web::assets::{Assets, ASSETS};
use crate::web::catalog::VersionDetail;
use crate::web::html::{self, SafeHtml};
use crate::web::params::{self, ParamRow};
use crate::web::query;

/// `GET /tools/{name}` and `GET /tools/{name}/{version}`.
#[derive(Template)]
#[template(path = "web/tool.html")]
pub struct ToolPage {
    pub assets: &'static Assets,
    pub t: ToolView,
}

pub struct ToolView {
    /// The CI run that published this version, with links where the
    /// issuer is GitHub Actions or GitLab.com.
    pub provenance: Option<ProvenanceView>,
    pub name: String,
    pub version: String,
    pub version_is_stable: bool,
    pub is_latest: bool,
    pub latest_version: String,
    pub latest_url: Option<String>,
    pub title: Option<String>,
    pub description: String,
    pub meta_description: String,
    pub call_name: String,
    pub pin: String,
    pub tier: &'static str,
    pub required_tier: &'static str,
    pub execution: &'static str,
    pub execution_explained: &'static str,
    pub execution_detail: Option<String>,
    pub runs_code: bool,
    pub format: &'static str,
    pub definition_file: String,
    pub license: String,
    pub publisher: String,
    pub published_at: String,
    pub published_date: String,
    pub size: String,
    pub sha256: String,
    /// The definition fingerprint (empty when the version has none stored).
    pub definition_sha256: String,
    pub bundle_url: String,
    pub version_downloads: String,
    pub tool_downloads: String,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: String,
    /// The owners' deprecation of this version, with a link to the successor.
    pub deprecation: Option<DeprecationView>,
    pub params: Vec<ParamRow>,
    pub params_cut: bool,
    pub result: Vec<ParamRow>,
    pub readme: SafeHtml,
    /// The definition and code are not shown (the version is blocked).
    pub contents_withheld: bool,
    pub exports: Vec<ExportView>,
    /// Every export format with its loss report; empty for a blocked
    /// version, whose definition is withheld.
    pub format_exports: Vec<FormatExport>,
    pub versions: Vec<VersionLine>,
    /// Set when the table lists only the newest of the tool's versions:
    /// how many there are in all, and where the API lists every one.
    pub versions_cut: Option<(i64, String)>,
    pub owners: Vec<EncodablePublisher>,
    pub keywords: Vec<Link>,
    pub links: Vec<Link>,
    pub authors: Vec<String>,
    /// The definition lint's findings on this version (empty when clean).
    pub findings: Vec<FindingView>,
    /// `2 lint findings (P3, P4)`, for the badge's title: the flags and
    /// blocks, not notes; empty when none.
    pub findings_summary: String,
    /// An Agent Skill's `SKILL.md` (rendered and raw) and files.
    pub skill: Option<SkillView>,
}

/// A version's deprecation as the page shows it.
pub struct DeprecationView {
    pub message: String,
    /// The successor's name and page.
    pub successor: Option<(String, String)>,
    /// The requirement it was set for (`<2.0.0`), if not the whole tool.
    pub req: Option<String>,
}

impl DeprecationView {
    fn of(d: &toolreg_api::EncodableDeprecation) -> DeprecationView {
        DeprecationView {
            message: d.message.clone(),
            successor: d.successor.as_ref().map(|s| (s.clone(), tool_url(s))),
            req: d.req.clone(),
        }
    }
}

/// A version's provenance as the page shows it.
pub struct ProvenanceView {
    pub issuer: String,
    pub repository: String,
    pub workflow: String,
    pub git_ref: String,
    pub sha: String,
    pub run_id: String,
    pub repository_url: Option<String>,
    pub commit_url: Option<String>,
    pub run_url: Option<String>,
}

impl ProvenanceView {
    /// Links are built only for the two hosted issuers, and only from
    /// values of the shapes they issue (path-safe repository, hex commit,
    /// numeric run), so a claim can't point a link elsewhere.
    fn of(p: &toolreg_api::Provenance) -> ProvenanceView {
        let safe_repo = !p.repository.is_empty()
            && !p.repository.contains("..")
            && p.repository
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'));
        let safe_sha = !p.sha.is_empty() && p.sha.chars().all(|c| c.is_ascii_hexdigit());
        let safe_run = !p.run_id.is_empty() && p.run_id.chars().all(|c| c.is_ascii_digit());
        let (base, commit, run) = match p.issuer.as_str() {
            toolreg_trustpub::GITHUB_ISSUER => ("https://github.com", "commit", "actions/runs"),
            toolreg_trustpub::GITLAB_ISSUER => ("https://gitlab.com", "-/commit", "-/pipelines"),
            _ => ("", "", ""),
        };
        let repo_url = (!base.is_empty() && safe_repo).then(|| format!("{base}/{}", p.repository));
        ProvenanceView {
            issuer: p.issuer.clone(),
            repository: p.repository.clone(),
            workflow: p.workflow.clone(),
            git_ref: p.git_ref.clone(),
            sha: p.sha.clone(),
            run_id: p.run_id.clone(),
            commit_url: repo_url
                .as_ref()
                .filter(|_| safe_sha)
                .map(|r| format!("{r}/{commit}/{}", p.sha)),
            run_url: repo_url
                .as_ref()
                .filter(|_| safe_run)
                .map(|r| format!("{r}/{run}/{}", p.run_id)),
            repository_url: repo_url,
        }
    }
}

pub struct VersionLine {
    pub version: String,
    pub url: String,
    /// The diff page from the next older version, if there is one.
    pub diff_url: Option<String>,
    pub current: bool,
    pub published_at: String,
    pub published_date: String,
    pub publisher: String,
    pub execution: &'static str,
    pub downloads: i64,
    pub yanked: bool,
    pub blocked: bool,
    pub deprecated: bool,
}

pub struct Link {
    pub label: String,
    pub url: String,
}

/// One lint finding in the findings panel (every field is escaped by the
/// template).
pub struct FindingView {
    pub rule: &'static str,
    /// True for a note: a sign the lint could not judge, not a flag.
    pub note: bool,
    /// What the rule means, in one plain sentence.
    pub meaning: &'static str,
    /// What was found.
    pub message: String,
    /// Where: an RFC 6901 pointer into the definition (`/` for the root).
    pub pointer: String,
    /// The hit in context, invisible characters as `\u{…}` escapes.
    pub excerpt: String,
}

impl FindingView {
    fn new(f: &Finding) -> Self {
        FindingView {
            rule: f.rule.as_str(),
            note: f.is_note(),
            meaning: f.rule.meaning(),
            message: f.message.clone(),
            pointer: if f.pointer.is_empty() {
                "/".to_string()
            } else {
                f.pointer.clone()
            },
            excerpt: f.excerpt.clone(),
        }
    }
}

impl ToolPage {
    pub fn new(summary: &EncodableTool, detail: &VersionDetail, required_tier: Tier) -> Self {
        ToolPage {
            assets: &ASSETS,
            t: ToolView::new(summary, detail, required_tier),
        }
    }
}

impl ToolView {
    fn new(summary: &EncodableTool, detail: &VersionDetail, required_tier: Tier) -> Self {
        let tool = &detail.tool;
        let row = &detail.version;
        let name = summary.name.clone();
        let version = row.version.clone();
        let semver = detail.semver();
        let latest_version = summary.latest_version.clone().unwrap_or_default();
        let is_latest = version == latest_version;
        let (params, params_cut) = params::rows(&tool.parameters);
        let result = tool
            .result
            .as_ref()
            .map(|r| params::rows(r).0)
            .unwrap_or_default();
        let readme = detail.readme.clone();
        // A version whose contents may not be served shows neither its
        // definition (in any format) nor the code or command it runs.
        let contents_withheld = !detail.state().contents_served();
        let mut links = Vec::new();
        for (label, url) in [
            ("Homepage", &tool.homepage),
            ("Repository", &tool.repository),
        ] {
            if let Some(u) = url.as_deref().filter(|u| html::is_web_url(u)) {
                links.push(Link {
                    label: label.to_string(),
                    url: u.to_string(),
                });
            }
        }
        let keywords = tool
            .keywords
            .iter()
            .map(|k| Link {
                label: k.clone(),
                url: query::keyword_url(k),
            })
            .collect();
        let authors = tool
            .authors
            .iter()
            .map(|a| match (&a.organization, &a.email) {
                (Some(o), _) => format!("{} ({o})", a.name),
                (None, Some(e)) => format!("{} <{e}>", a.name),
                (None, None) => a.name.clone(),
            })
            .collect();
        let versions = summary
            .versions
            .iter()
            .enumerate()
            .map(|(i, v)| VersionLine {
                version: v.version.clone(),
                url: version_url(&name, &v.version),
                // Newest first: the previous version is the next one listed.
                diff_url: summary
                    .versions
                    .get(i + 1)
                    .filter(|prev| prev.state().contents_served() && v.state().contents_served())
                    .map(|prev| super::diff_url(&name, &prev.version, &v.version)),
                current: v.version == row.version,
                published_at: v.published_at.clone(),
                published_date: date_only(&v.published_at),
                publisher: v.publisher.clone(),
                execution: v.execution.as_str(),
                downloads: v.downloads,
                yanked: v.yanked,
                blocked: v.blocked,
                deprecated: v.deprecation().is_some(),
            })
            .collect();
        let description = if tool.description.trim().is_empty() {
            "No description.".to_string()
        } else {
            tool.description.clone()
        };
        let findings: Vec<FindingView> = row.findings.iter().map(FindingView::new).collect();
        let flags: Vec<&FindingView> = findings.iter().filter(|f| !f.note).collect();
        let findings_summary = if flags.is_empty() {
            String::new()
        } else {
            let mut rules: Vec<&str> = flags.iter().map(|f| f.rule).collect();
            rules.sort_unstable();
            rules.dedup();
            format!(
                "{} lint {} ({})",
                flags.len(),
                plural(flags.len() as u64, "finding", "findings"),
                rules.join(", ")
            )
        };
        ToolView {
            skill: SkillView::of(detail),
            provenance: row.provenance.as_ref().map(ProvenanceView::of),
            findings,
            findings_summary,
            meta_description: description.chars().take(160).collect(),
            title: tool.title.clone().filter(|t| !t.is_empty() && *t != name),
            description,
            call_name: tool.call_name.clone(),
            pin: semver
                .as_ref()
                .map(|v| pin_snippet(&name, v))
                .unwrap_or_else(|| format!("toolreg add {name}@={version}")),
            version_is_stable: semver.as_ref().is_none_or(|v| v.pre.is_empty()),
            is_latest,
            latest_url: (!is_latest).then(|| tool_url(&name)),
            latest_version,
            tier: row.publisher.tier.as_str(),
            required_tier: required_tier.as_str(),
            execution: row.execution.as_str(),
            execution_explained: row.execution.explain(),
            execution_detail: if contents_withheld {
                None
            } else {
                execution_detail(row.execution, &tool.execution.detail)
            },
            runs_code: row.execution.runs_bundle_code(),
            format: row.format.as_str(),
            definition_file: tool.definition_file.clone(),
            license: license_label(tool.license.as_deref()),
            publisher: row.publisher.login.clone(),
            published_at: row.published_at.clone(),
            published_date: date_only(&row.published_at),
            size: size_label(u64::try_from(row.size).unwrap_or(0)),
            sha256: row.sha256.clone(),
            definition_sha256: row.definition_sha256.clone().unwrap_or_default(),
            bundle_url: format!("/api/v1/tools/{name}/{version}/download"),
            version_downloads: downloads_label(u64::try_from(row.downloads).unwrap_or(0)),
            tool_downloads: format!(
                "{} (all versions)",
                downloads_label(u64::try_from(summary.downloads).unwrap_or(0))
            ),
            yanked: row.yanked,
            deprecation: row.deprecation().as_ref().map(DeprecationView::of),
            blocked: row.blocked,
            blocked_reason: row.blocked_reason.clone().unwrap_or_else(|| {
                format!(
                    "Its publisher's tier no longer allows publishing `{}` tools.",
                    row.execution
                )
            }),
            params,
            params_cut,
            result,
            readme,
            exports: if contents_withheld {
                Vec::new()
            } else {
                exports(detail, &name, &version)
            },
            format_exports: if contents_withheld {
                Vec::new()
            } else {
                format_exports(detail, &name, &version)
            },
            contents_withheld,
            versions_cut: (summary.versions_total > summary.versions.len() as i64).then(|| {
                (
                    summary.versions_total,
                    format!("/api/v1/tools/{name}/versions"),
                )
            }),
            versions,
            owners: summary.owners.clone(),
            keywords,
            links,
            authors,
            name,
            version,
        }
    }
}

#[cfg(test)]
mod provenance_tests {
    use super::ProvenanceView;

    fn provenance(issuer: &str, repository: &str, sha: &str, run: &str) -> toolreg_api::Provenance {
        toolreg_api::Provenance {
            issuer: issuer.into(),
            repository: repository.into(),
            workflow: "release.yml".into(),
            git_ref: "refs/tags/v1".into(),
            sha: sha.into(),
            run_id: run.into(),
            ..Default::default()
        }
    }

    #[test]
    fn hosted_issuers_get_links_built_from_safe_values_only() {
        let gh = ProvenanceView::of(&provenance(
            toolreg_trustpub::GITHUB_ISSUER,
            "acme/tools",
            "abc123",
            "42",
        ));
        assert_eq!(
            gh.repository_url.as_deref(),
            Some("https://github.com/acme/tools")
        );
        assert_eq!(
            gh.commit_url.as_deref(),
            Some("https://github.com/acme/tools/commit/abc123")
        );
        assert_eq!(
            gh.run_url.as_deref(),
            Some("https://github.com/acme/tools/actions/runs/42")
        );
        let gl = ProvenanceView::of(&provenance(
            toolreg_trustpub::GITLAB_ISSUER,
            "g/p",
            "abc",
            "7",
        ));
        assert_eq!(
            gl.run_url.as_deref(),
            Some("https://gitlab.com/g/p/-/pipelines/7")
        );
        assert_eq!(
            gl.commit_url.as_deref(),
            Some("https://gitlab.com/g/p/-/commit/abc")
        );
        let odd = ProvenanceView::of(&provenance(
            toolreg_trustpub::GITHUB_ISSUER,
            "a/../evil?x",
            "zz",
            "1 2",
        ));
        assert_eq!(
            (odd.repository_url, odd.commit_url, odd.run_url),
            (None, None, None)
        );
        let elsewhere = ProvenanceView::of(&provenance("https://ci.example", "a/b", "ab", "1"));
        assert_eq!(elsewhere.repository_url, None);
    }
}
