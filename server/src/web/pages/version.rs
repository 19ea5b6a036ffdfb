//! The parts of a tool page that describe one version: its definition in
//! every export format, how it runs, and the command that pins it.

use serde_json::Value;
use toolreg_core::export::{export, ExportFormat};
use toolreg_core::policy::ExecutionKind;

use crate::web::catalog::VersionDetail;

/// One export of the definition, shown and offered for download.
pub struct ExportView {
    pub label: String,
    pub body: Option<String>,
    pub unavailable: String,
    pub download_url: String,
    pub file_name: String,
}

pub(super) fn exports(detail: &VersionDetail, name: &str, version: &str) -> Vec<ExportView> {
    let tool = &detail.manifest;
    let api = format!("/api/v1/tools/{name}/{version}/definition");
    let mut out = vec![ExportView {
        label: format!("Original definition ({})", tool.definition_file),
        body: Some(tool.original_text()),
        unavailable: String::new(),
        download_url: format!("{api}?format=native"),
        file_name: tool.definition_file.clone(),
    }];
    for (format, id, label) in [
        (ExportFormat::Mcp, "mcp", "MCP tool (JSON)"),
        (ExportFormat::Openai, "openai", "OpenAI function (JSON)"),
    ] {
        let (body, unavailable) = match export(tool, format) {
            Ok(e) => (Some(e.body), String::new()),
            Err(e) => (None, format!("This export is not available: {e}")),
        };
        out.push(ExportView {
            label: label.to_string(),
            body,
            unavailable,
            download_url: format!("{api}?format={id}"),
            file_name: format!("{name}-{version}.{id}.json"),
        });
    }
    out
}

/// A short, plain description of how the tool runs, from the format's execution detail.
pub(super) fn execution_detail(kind: ExecutionKind, detail: &Value) -> Option<String> {
    let s = |k: &str| detail.get(k).and_then(Value::as_str).map(str::to_string);
    match kind {
        ExecutionKind::Http => {
            let url = s("url")?;
            Some(format!(
                "It sends {} {url}.",
                s("method").unwrap_or_else(|| "GET".into()).to_uppercase()
            ))
        }
        ExecutionKind::Command => {
            let command = s("command")?;
            let args: Vec<String> = detail
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|v| {
                            v.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| v.to_string())
                        })
                        .collect()
                })
                .unwrap_or_default();
            let line = std::iter::once(command)
                .chain(args)
                .collect::<Vec<_>>()
                .join(" ");
            Some(format!("It runs: {line}"))
        }
        ExecutionKind::Function => {
            let file = s("code_file").or_else(|| s("code"))?;
            let runner = s("runner")
                .map(|r| format!(" (runner: {r})"))
                .unwrap_or_default();
            Some(format!("The code it loads is {file}{runner}."))
        }
        ExecutionKind::Script => {
            let code = s("code")?;
            Some(format!(
                "The inline code is {} lines long; read it in the definition below.",
                code.lines().count()
            ))
        }
        ExecutionKind::Prompt | ExecutionKind::Schema => None,
    }
}

/// `toolreg add NAME@^X.Y` (`^0.0.Z` below 0.1, `=V` for a pre-release).
pub fn pin_snippet(name: &str, v: &semver::Version) -> String {
    let req = if !v.pre.is_empty() {
        format!("={v}")
    } else if v.major == 0 && v.minor == 0 {
        format!("^0.0.{}", v.patch)
    } else {
        format!("^{}.{}", v.major, v.minor)
    };
    format!("toolreg add {name}@{req}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_follow_semver_compatibility() {
        let v = |s: &str| semver::Version::parse(s).unwrap();
        assert_eq!(pin_snippet("calc", &v("1.2.3")), "toolreg add calc@^1.2");
        assert_eq!(pin_snippet("calc", &v("0.3.1")), "toolreg add calc@^0.3");
        assert_eq!(pin_snippet("calc", &v("0.0.4")), "toolreg add calc@^0.0.4");
        assert_eq!(
            pin_snippet("calc", &v("2.0.0-beta.1")),
            "toolreg add calc@=2.0.0-beta.1"
        );
    }
}
