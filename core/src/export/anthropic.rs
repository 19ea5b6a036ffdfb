//! Anthropic export: the tool as an entry of the Messages API's `tools`
//! list, `{"name","description","input_schema"}`.

use serde_json::json;

use super::openai::openai_function_name;
use super::schema::{fold_root_composition, LossReport};
use super::Converted;
use crate::model::Tool;

/// The tool as an Anthropic Messages API tool. `input_schema` is the
/// parameters' JSON Schema as it is, except that a top-level `allOf`,
/// `anyOf` or `oneOf` (which the API refuses at the root) is folded into
/// one object schema and reported. The name follows the API's
/// `^[a-zA-Z0-9_-]{1,64}$` (other characters become `_`; reported).
pub fn to_anthropic(tool: &Tool) -> Converted {
    let mut report = LossReport::default();
    let name = openai_function_name(&tool.call_name);
    if name != tool.call_name {
        report.warn(
            "/name",
            "name",
            format!(
                "Anthropic tool names match ^[a-zA-Z0-9_-]{{1,64}}$; `{}` is exported as `{name}`",
                tool.call_name
            ),
        );
    }
    let input_schema = fold_root_composition(&tool.parameters, "/inputSchema", &mut report);
    Converted {
        value: json!({
            "name": name,
            "description": tool.description,
            "input_schema": input_schema,
        }),
        warnings: report.warnings,
    }
}
