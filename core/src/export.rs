//! Exports of the canonical model: MCP Tool JSON, OpenAI function-calling
//! JSON, Matimo YAML, or the original document (`native`).

use serde_json::Value;

use crate::error::Error;
use crate::model::Tool;

/// Target of `GET .../definition?format=` and `toolreg export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Mcp,
    Openai,
    Matimo,
    Native,
}

impl std::str::FromStr for ExportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "mcp" => Ok(ExportFormat::Mcp),
            "openai" => Ok(ExportFormat::Openai),
            "matimo" => Ok(ExportFormat::Matimo),
            "native" => Ok(ExportFormat::Native),
            _ => Err(format!("unknown export format `{s}` (expected one of mcp, openai, matimo, native)")),
        }
    }
}

/// An exported definition: its bytes and media type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub content_type: &'static str,
    pub body: String,
}

/// The tool as an MCP `Tool` object (call name, title, description, inputSchema, ...).
pub fn to_mcp(tool: &Tool) -> Value {
    let _ = tool;
    Value::Null
}

/// The tool as `{"type":"function","function":{name,description,parameters}}`.
pub fn to_openai(tool: &Tool) -> Value {
    let _ = tool;
    Value::Null
}

/// Export in any [`ExportFormat`]. Matimo needs an execution block, so
/// `schema` and `prompt` tools fail with that reason.
pub fn export(tool: &Tool, format: ExportFormat) -> Result<Exported, Error> {
    let _ = (tool, format);
    Err(Error::Export { format: "?".into(), reason: "not implemented yet".into() })
}
