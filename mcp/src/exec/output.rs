//! A tool's answer as an MCP result: the answer text as content, and, when
//! the tool declares an `outputSchema`, the parsed JSON as
//! `structuredContent`, checked against that schema first (a client drops
//! or refuses structured content that does not match it). Before protocol
//! 2026-07-28 an output schema whose root is not an object is served
//! wrapped as `{"result": …}` (see the MCP export), so the value is sent
//! wrapped the same way.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Value};
use toolreg_core::export::McpProtocol;

use super::{excerpt, Refusal, Reply};

/// How a tool's answers become structured content.
#[derive(Default)]
pub struct Output {
    validator: Option<jsonschema::Validator>,
    wrapped_before_latest: bool,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output")
            .field("schema", &self.validator.is_some())
            .field("wrapped_before_latest", &self.wrapped_before_latest)
            .finish()
    }
}

impl Output {
    /// From a tool's MCP export (newest protocol): its `outputSchema`, if
    /// any. Fails when the schema can't be compiled without fetching
    /// anything.
    pub fn new(export: &Value) -> Result<Output, String> {
        let Some(schema) = export.get("outputSchema") else {
            return Ok(Output::default());
        };
        let validator = super::super::arguments::compile(schema)
            .map_err(|e| format!("its outputSchema can't be used to check answers: {e}"))?;
        Ok(Output {
            validator: Some(validator),
            wrapped_before_latest: schema.get("type").and_then(Value::as_str) != Some("object"),
        })
    }

    /// Whether the tool declares an output schema.
    pub fn has_schema(&self) -> bool {
        self.validator.is_some()
    }

    /// The reply for an answer: `text` as content; with an output schema,
    /// `json` (the answer parsed, when it is JSON) as structured content.
    pub fn reply(
        &self,
        text: String,
        json: Option<Value>,
        protocol: McpProtocol,
    ) -> Result<Reply, Refusal> {
        let Some(validator) = &self.validator else {
            return Ok(Reply::ok(CallToolResult::success(vec![
                ContentBlock::text(text),
            ])));
        };
        let Some(value) = json else {
            return Err(Refusal::new(
                format!(
                    "the tool declares an outputSchema but its answer is not JSON: {}",
                    excerpt(&text, 1024)
                ),
                "error: answer is not JSON",
            ));
        };
        if let Some(e) = validator.iter_errors(&value).next() {
            let at = e.instance_path().as_str().to_string();
            return Err(Refusal::new(
                format!(
                    "the answer does not match the tool's outputSchema ({}: {e}): {}",
                    if at.is_empty() { "/" } else { &at },
                    excerpt(&text, 1024)
                ),
                "error: answer does not match outputSchema",
            ));
        }
        let structured = if self.wrapped_before_latest && protocol < McpProtocol::LATEST {
            json!({ "result": value })
        } else {
            value
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(structured);
        Ok(Reply::ok(result))
    }
}
