//! The parts of a tool page that describe one version: its definition in
//! every export format (and what each format loses), how it runs, and the
//! command that pins it.

use serde_json::Value;
use toolreg_core::export::{
    convert, export, ExportFormat, ExportOptions, ExportWarning, McpProtocol,
};
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
    let tool = &detail.tool;
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

/// One row of the exports panel: a format (with its options), the
/// definition endpoint serving it, and what the conversion loses for this
/// tool — or why the tool can't be exported in it.
pub struct FormatExport {
    pub label: String,
    /// The id the API and `toolreg export --format` take.
    pub format: &'static str,
    pub url: String,
    /// Why the format refuses this tool; `None` when it can be exported.
    pub refused: Option<String>,
    /// What the conversion dropped or changed (empty when nothing was).
    pub warnings: Vec<ExportWarning>,
}

/// Every export format, each MCP protocol version (newest first) and OpenAI
/// with and without strict mode, converted once to learn its loss report.
/// The bodies are not kept: the page links to the definition endpoint.
pub(super) fn format_exports(
    detail: &VersionDetail,
    name: &str,
    version: &str,
) -> Vec<FormatExport> {
    let tool = &detail.tool;
    let api = format!("/api/v1/tools/{name}/{version}/definition");
    let mut targets: Vec<(String, ExportFormat, ExportOptions, String)> = Vec::new();
    for protocol in McpProtocol::ALL.into_iter().rev() {
        let options = ExportOptions {
            protocol,
            ..ExportOptions::default()
        };
        let (label, query) = if protocol == McpProtocol::LATEST {
            (
                format!("MCP tool, protocol {protocol} (the default)"),
                "format=mcp".to_string(),
            )
        } else {
            (
                format!("MCP tool, protocol {protocol}"),
                format!("format=mcp&protocol={protocol}"),
            )
        };
        targets.push((label, ExportFormat::Mcp, options, query));
    }
    let strict = ExportOptions {
        strict: true,
        ..ExportOptions::default()
    };
    let plain = ExportOptions::default();
    for (label, format, options, query) in [
        (
            "OpenAI function",
            ExportFormat::Openai,
            plain,
            "format=openai",
        ),
        (
            "OpenAI function, strict mode",
            ExportFormat::Openai,
            strict,
            "format=openai&strict=true",
        ),
        (
            "Anthropic tool",
            ExportFormat::Anthropic,
            plain,
            "format=anthropic",
        ),
        (
            "Gemini function declaration",
            ExportFormat::Gemini,
            plain,
            "format=gemini",
        ),
        (
            "Gemini function declaration, JSON Schema parameters",
            ExportFormat::GeminiJsonSchema,
            plain,
            "format=gemini-json-schema",
        ),
        (
            "Matimo definition (YAML)",
            ExportFormat::Matimo,
            plain,
            "format=matimo",
        ),
    ] {
        targets.push((label.to_string(), format, options, query.to_string()));
    }
    let mut out: Vec<FormatExport> = targets
        .into_iter()
        .map(|(label, format, options, query)| {
            let (refused, warnings) = match convert(tool, format, options) {
                Ok(c) => (None, c.warnings),
                Err(e) => (Some(e.to_string()), Vec::new()),
            };
            FormatExport {
                label,
                format: format.as_str(),
                url: format!("{api}?{query}"),
                refused,
                warnings,
            }
        })
        .collect();
    // The original document: nothing converted, nothing lost.
    out.push(FormatExport {
        label: format!("Original definition ({})", tool.definition_file),
        format: ExportFormat::Native.as_str(),
        url: format!("{api}?format=native"),
        refused: None,
        warnings: Vec::new(),
    });
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
