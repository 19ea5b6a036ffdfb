//! Exports of the canonical model: MCP `Tool` JSON (per protocol version),
//! OpenAI function-calling JSON (plain or strict), Anthropic Messages API
//! tools, Gemini function declarations (Gemini `Schema` or raw JSON Schema),
//! Matimo YAML, or the original document (`native`).
//!
//! Exports always use the tool's **call name** (what an agent calls), or the
//! nearest name the target API accepts. A conversion that has to drop or
//! change something returns it in [`Converted::warnings`], each naming the
//! place as a JSON Pointer into the tool's MCP export (newest protocol):
//! `/inputSchema/properties/due` is the `due` parameter's schema.

mod anthropic;
mod gemini;
mod matimo;
mod mcp;
mod openai;
mod schema;

use serde::Serialize;
use serde_json::Value;

use crate::error::Error;
use crate::model::{Format, Tool};

pub use anthropic::to_anthropic;
pub use gemini::{gemini_function_name, to_gemini, to_gemini_json_schema};
pub use matimo::to_matimo;
pub use mcp::{to_mcp, to_mcp_for};
pub use openai::{openai_function_name, to_openai, to_openai_strict};

/// Target of `GET .../definition?format=` and `toolreg export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// MCP `Tool` JSON.
    Mcp,
    /// OpenAI function-calling JSON.
    Openai,
    /// Anthropic Messages API tool JSON.
    Anthropic,
    /// Gemini `FunctionDeclaration` with a Gemini `Schema`.
    Gemini,
    /// Gemini `FunctionDeclaration` with `parameters_json_schema`.
    GeminiJsonSchema,
    /// Matimo definition YAML.
    Matimo,
    /// The original definition, byte for byte.
    Native,
}

impl ExportFormat {
    /// Every format, in the order the API lists them.
    pub const ALL: [ExportFormat; 7] = [
        ExportFormat::Mcp,
        ExportFormat::Openai,
        ExportFormat::Matimo,
        ExportFormat::Native,
        ExportFormat::Anthropic,
        ExportFormat::Gemini,
        ExportFormat::GeminiJsonSchema,
    ];

    /// The id used in the API (`mcp`, `openai`, `anthropic`, `gemini`,
    /// `gemini-json-schema`, `matimo`, `native`).
    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Mcp => "mcp",
            ExportFormat::Openai => "openai",
            ExportFormat::Anthropic => "anthropic",
            ExportFormat::Gemini => "gemini",
            ExportFormat::GeminiJsonSchema => "gemini-json-schema",
            ExportFormat::Matimo => "matimo",
            ExportFormat::Native => "native",
        }
    }
}

impl std::fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ExportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ExportFormat::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                let ids: Vec<&str> = ExportFormat::ALL.iter().map(|f| f.as_str()).collect();
                format!(
                    "unknown export format `{s}` (expected one of {})",
                    ids.join(", ")
                )
            })
    }
}

/// An MCP protocol version an MCP export can be shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum McpProtocol {
    /// 2025-06-18: no tool icons; `outputSchema` must be `type: object`.
    V2025_06_18,
    /// 2025-11-25: `outputSchema` must be `type: object`.
    V2025_11_25,
    /// 2026-07-28, the newest.
    #[default]
    V2026_07_28,
}

impl McpProtocol {
    /// Every version, oldest first.
    pub const ALL: [McpProtocol; 3] = [
        McpProtocol::V2025_06_18,
        McpProtocol::V2025_11_25,
        McpProtocol::V2026_07_28,
    ];
    /// The newest version, the default.
    pub const LATEST: McpProtocol = McpProtocol::V2026_07_28;

    /// The version's date string.
    pub fn as_str(self) -> &'static str {
        match self {
            McpProtocol::V2025_06_18 => "2025-06-18",
            McpProtocol::V2025_11_25 => "2025-11-25",
            McpProtocol::V2026_07_28 => "2026-07-28",
        }
    }
}

impl std::fmt::Display for McpProtocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for McpProtocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        McpProtocol::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                let ids: Vec<&str> = McpProtocol::ALL.iter().map(|p| p.as_str()).collect();
                format!(
                    "unknown MCP protocol version `{s}` (expected one of {})",
                    ids.join(", ")
                )
            })
    }
}

/// Options of an export: the MCP protocol version (for `mcp`) and OpenAI
/// strict mode (for `openai`). Other formats ignore them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExportOptions {
    /// The MCP protocol version (default: the newest).
    pub protocol: McpProtocol,
    /// OpenAI strict mode.
    pub strict: bool,
}

/// One thing an export dropped or changed to fit its target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExportWarning {
    /// Where: a JSON Pointer into the tool's MCP export (`/inputSchema/...`,
    /// `/outputSchema`, `/icons`, `/name`).
    pub pointer: String,
    /// The keyword, field or property concerned (may be empty for a whole
    /// schema).
    pub keyword: String,
    /// What happened to it, and why.
    pub message: String,
}

impl std::fmt::Display for ExportWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.keyword.is_empty() {
            write!(f, "{}: {}", self.pointer, self.message)
        } else {
            write!(f, "{} `{}`: {}", self.pointer, self.keyword, self.message)
        }
    }
}

/// A converted definition and its loss report.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// The definition in the target's shape.
    pub value: Value,
    /// What was dropped or changed (empty when nothing was).
    pub warnings: Vec<ExportWarning>,
}

/// An exported definition: its bytes, media type and loss report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// Media type (`application/json`, `application/yaml`).
    pub content_type: &'static str,
    /// The exported document.
    pub body: String,
    /// What the conversion dropped or changed.
    pub warnings: Vec<ExportWarning>,
}

/// Media type of JSON exports.
pub const JSON: &str = "application/json";
/// Media type of YAML exports.
pub const YAML: &str = "application/yaml";
/// Media type of a skill's `SKILL.md`.
pub const MARKDOWN: &str = "text/markdown; charset=utf-8";

/// The tool converted to a JSON-shaped format (`mcp`, `openai`,
/// `anthropic`, `gemini`, `gemini-json-schema`; `matimo` gives the document
/// [`export`] writes as YAML). Fails for `native` (the original document is
/// not a converted value), for `matimo` without an execution block, and for
/// a strict OpenAI export the schema can't follow.
pub fn convert(
    tool: &Tool,
    format: ExportFormat,
    options: ExportOptions,
) -> Result<Converted, Error> {
    let plain = |value| Converted {
        value,
        warnings: Vec::new(),
    };
    refuse_skill(tool, format)?;
    match format {
        ExportFormat::Mcp => Ok(to_mcp_for(tool, options.protocol)),
        ExportFormat::Openai if options.strict => to_openai_strict(tool),
        ExportFormat::Openai => Ok(Converted {
            value: to_openai(tool),
            warnings: openai::openai_warnings(tool),
        }),
        ExportFormat::Anthropic => Ok(to_anthropic(tool)),
        ExportFormat::Gemini => Ok(to_gemini(tool)),
        ExportFormat::GeminiJsonSchema => Ok(to_gemini_json_schema(tool)),
        ExportFormat::Matimo => to_matimo(tool).map(plain),
        ExportFormat::Native => Err(Error::Export {
            format: "native".into(),
            reason: "the original definition is a document, not a converted value".into(),
        }),
    }
}

/// A skill is instructions an agent reads, not a function it calls: it has
/// no parameters to convert, so only its own `SKILL.md` (`native`) exports.
fn refuse_skill(tool: &Tool, format: ExportFormat) -> Result<(), Error> {
    if tool.format == Format::Skill && format != ExportFormat::Native {
        return Err(Error::Export {
            format: format.as_str().into(),
            reason: format!(
                "`{}` is an Agent Skill, not a function definition: it is instructions an agent reads \
                 (SKILL.md), with no parameters to call it with, so it has no {} tool definition; \
                 install it as a skill, or export `native` for its SKILL.md",
                tool.registry_name,
                format.as_str()
            ),
        });
    }
    Ok(())
}

/// Export in any [`ExportFormat`] with the default options (the newest MCP
/// protocol, OpenAI without strict mode).
pub fn export(tool: &Tool, format: ExportFormat) -> Result<Exported, Error> {
    export_with(tool, format, ExportOptions::default())
}

/// Export in any [`ExportFormat`]: JSON formats as pretty-printed JSON,
/// Matimo as YAML (it needs an execution block, so `schema` and `prompt`
/// tools fail with that reason), and `native` as the original definition,
/// byte for byte, with its format's media type.
pub fn export_with(
    tool: &Tool,
    format: ExportFormat,
    options: ExportOptions,
) -> Result<Exported, Error> {
    refuse_skill(tool, format)?;
    match format {
        ExportFormat::Matimo => {
            let doc = to_matimo(tool)?;
            let body = serde_saphyr::to_string(&doc).map_err(|e| Error::Export {
                format: "matimo".into(),
                reason: e.to_string(),
            })?;
            Ok(Exported {
                content_type: YAML,
                body,
                warnings: Vec::new(),
            })
        }
        ExportFormat::Native => {
            let body = String::from_utf8(tool.original.clone()).map_err(|_| Error::Export {
                format: "native".into(),
                reason: "the original definition is not UTF-8 text".into(),
            })?;
            let content_type = match tool.format {
                Format::Matimo => YAML,
                Format::Shinkai | Format::Mcp | Format::Prompt => JSON,
                Format::Skill => MARKDOWN,
            };
            Ok(Exported {
                content_type,
                body,
                warnings: Vec::new(),
            })
        }
        _ => {
            let converted = convert(tool, format, options)?;
            let body =
                serde_json::to_string_pretty(&converted.value).map_err(|e| Error::Export {
                    format: format.as_str().into(),
                    reason: e.to_string(),
                })?;
            Ok(Exported {
                content_type: JSON,
                body,
                warnings: converted.warnings,
            })
        }
    }
}

/// The most bytes [`warnings_header`] writes: HTTP clients refuse large
/// header sections (Node's default limit is 16 KiB for all headers).
pub const WARNINGS_HEADER_MAX: usize = 8 * 1024;

/// The warnings as one line of JSON with every non-ASCII character escaped
/// (`\uXXXX`), fit for an HTTP header value. When they don't fit in
/// [`WARNINGS_HEADER_MAX`] bytes, the first ones that fit are kept and a last
/// entry (pointer `/`, empty keyword) says how many were left out.
pub fn warnings_header(warnings: &[ExportWarning]) -> String {
    let items: Vec<String> = warnings
        .iter()
        .map(|w| ascii_json(&serde_json::to_string(w).unwrap_or_default()))
        .collect();
    // Room for the brackets and the note about the rest.
    let budget = WARNINGS_HEADER_MAX - 160;
    let mut out = String::from("[");
    let mut kept = 0;
    for item in &items {
        if out.len() + item.len() + 1 > budget {
            break;
        }
        if kept > 0 {
            out.push(',');
        }
        out.push_str(item);
        kept += 1;
    }
    if kept < items.len() {
        let note = ExportWarning {
            pointer: "/".into(),
            keyword: String::new(),
            message: format!(
                "{} more warnings left out of this header; `toolreg export` prints them all",
                items.len() - kept
            ),
        };
        if kept > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(&note).unwrap_or_default());
    }
    out.push(']');
    out
}

/// JSON text with every non-ASCII character written as `\uXXXX` escapes
/// (they can only occur inside strings, where the escape means the same).
fn ascii_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for f in ExportFormat::ALL {
            assert_eq!(f.as_str().parse::<ExportFormat>(), Ok(f));
        }
        for p in McpProtocol::ALL {
            assert_eq!(p.as_str().parse::<McpProtocol>(), Ok(p));
        }
        assert_eq!(McpProtocol::default(), McpProtocol::LATEST);
        let e = "2024-11-05".parse::<McpProtocol>().unwrap_err();
        assert!(e.contains("2025-06-18, 2025-11-25, 2026-07-28"), "{e}");
    }

    #[test]
    fn header_is_ascii_json() {
        let w = vec![ExportWarning {
            pointer: "/inputSchema/properties/größe".into(),
            keyword: "🙂".into(),
            message: "x".into(),
        }];
        let h = warnings_header(&w);
        assert!(h.is_ascii(), "{h}");
        let back: Value = serde_json::from_str(&h).unwrap();
        assert_eq!(back[0]["pointer"], "/inputSchema/properties/größe");
        assert_eq!(back[0]["keyword"], "🙂");
        assert_eq!(warnings_header(&[]), "[]");
    }

    #[test]
    fn header_is_capped() {
        let one = ExportWarning {
            pointer: "/inputSchema/properties/p".into(),
            keyword: "not".into(),
            message: "x".repeat(100),
        };
        let h = warnings_header(&vec![one; 500]);
        assert!(h.len() <= WARNINGS_HEADER_MAX, "{}", h.len());
        let back: Vec<Value> = serde_json::from_str(&h).unwrap();
        let last = back.last().unwrap();
        assert!(last["message"]
            .as_str()
            .unwrap()
            .contains("more warnings left out"));
        assert!(back.len() > 10);
    }
}
