//! The pages (askama templates in `server/templates/web/`) and the view
//! models they print, one module per page. Everything here is plain text
//! that askama escapes, except [`SafeHtml`](crate::web::html::SafeHtml)
//! values, which come from `web::html`'s sanitizers.
//!
//! * [`index`]: the home page, the search form; [`results`]: its results region.
//! * [`tool`]: a tool page; [`version`]: the parts of it about one version.
//! * [`skill`]: the part of a tool page about an Agent Skill.
//! * [`diff`]: what changed between two versions.
//! * [`error`]: the error pages.

pub mod diff;
pub mod error;
pub mod index;
pub mod results;
pub mod skill;
pub mod tool;
pub mod version;

pub use diff::{diff_url, DiffPage};
pub use error::ErrorPage;
pub use index::{Filter, FilterOption, IndexPage};
pub use results::{HitView, ResultsFragment, ResultsView};
pub use tool::{Link, ToolPage, ToolView, VersionLine};
pub use version::{pin_snippet, ExportView};

pub fn tool_url(name: &str) -> String {
    format!("/tools/{name}")
}

pub fn version_url(name: &str, version: &str) -> String {
    format!("/tools/{name}/{version}")
}

fn plural<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

fn downloads_label(n: u64) -> String {
    format!("{} {}", thousands(n), plural(n, "download", "downloads"))
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn license_label(license: Option<&str>) -> String {
    license
        .filter(|l| !l.is_empty())
        .unwrap_or("no license given")
        .to_string()
}

fn size_label(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} bytes"),
        b if b < 1024 * 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}

fn date_only(rfc3339: &str) -> String {
    rfc3339.get(..10).unwrap_or(rfc3339).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(downloads_label(1), "1 download");
        assert_eq!(downloads_label(1234567), "1,234,567 downloads");
        assert_eq!(size_label(2048), "2.0 KiB");
        assert_eq!(license_label(None), "no license given");
    }
}
