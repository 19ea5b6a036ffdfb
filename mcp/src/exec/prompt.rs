//! Prompt tools (the prompt-tool JSON format): the template's `{{variable}}`
//! placeholders filled with the arguments (a left-out one takes its
//! declared default, else stays empty; a list is joined with `, `). As a
//! tool, the rendered text is the answer; the same tools are also served
//! as MCP prompts (`prompts/list`, `prompts/get`), whose arguments arrive
//! as strings and are read back into the declared types (a list from
//! comma-separated text) before the same input-schema check.

use rmcp::model::{Prompt, PromptArgument};
use serde_json::{Map, Value};
use toolreg_core::validate::double_brace_spans;
use toolreg_core::Tool;

use super::{Call, Refusal, Reply};

/// A prompt tool, ready to render.
#[derive(Debug)]
pub struct PromptPlan {
    template: String,
    defaults: Map<String, Value>,
}

impl PromptPlan {
    /// From the tool's template and parameter defaults.
    pub fn new(tool: &Tool) -> Result<Self, String> {
        let template = tool
            .template
            .clone()
            .ok_or("the prompt tool has no template")?;
        let defaults = properties(&tool.parameters)
            .iter()
            .filter_map(|(k, s)| Some((k.clone(), s.get("default")?.clone())))
            .collect();
        Ok(PromptPlan { template, defaults })
    }

    /// The template with every placeholder filled.
    pub fn render(&self, args: &Map<String, Value>) -> String {
        let mut out = String::with_capacity(self.template.len());
        let mut at = 0;
        for (range, name) in double_brace_spans(&self.template) {
            out.push_str(&self.template[at..range.start]);
            at = range.end;
            if let Some(v) = args.get(name).or_else(|| self.defaults.get(name)) {
                out.push_str(&as_prompt_text(v));
            }
        }
        out.push_str(&self.template[at..]);
        out
    }

    /// Run one call: the rendered text.
    pub fn run(&self, call: &Call<'_>) -> Result<Reply, Refusal> {
        Ok(Reply::text(self.render(call.args)))
    }
}

fn as_prompt_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(as_prompt_text)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

fn properties(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The tool as an MCP prompt: its call name, title, description and one
/// argument per parameter.
pub fn as_prompt(tool: &Tool) -> Prompt {
    let required: Vec<&str> = tool
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let arguments = properties(&tool.parameters)
        .iter()
        .map(|(name, schema)| {
            let mut a =
                PromptArgument::new(name.clone()).with_required(required.contains(&name.as_str()));
            if let Some(d) = schema.get("description").and_then(Value::as_str) {
                a = a.with_description(d);
            }
            a
        })
        .collect();
    let mut p = Prompt::new(
        tool.call_name.clone(),
        Some(tool.description.clone()),
        Some(arguments),
    );
    if let Some(t) = &tool.title {
        p = p.with_title(t.clone());
    }
    p
}

/// `prompts/get` arguments (strings) read into the parameters' declared
/// types: `integer`/`number`/`boolean` parsed, `array` split on commas.
/// A string that doesn't parse is kept, so the schema check names it.
pub fn typed_arguments(schema: &Value, args: &Map<String, Value>) -> Map<String, Value> {
    let props = properties(schema);
    args.iter()
        .map(|(k, v)| {
            let ty = props
                .get(k)
                .and_then(|s| s.get("type"))
                .and_then(Value::as_str);
            let typed = match (ty, v) {
                (Some("array"), Value::String(s)) => Value::Array(
                    s.split(',')
                        .map(|p| Value::String(p.trim().to_string()))
                        .filter(|p| p.as_str() != Some(""))
                        .collect(),
                ),
                (Some("integer" | "number" | "boolean"), Value::String(s)) => {
                    serde_json::from_str(s.trim()).unwrap_or_else(|_| v.clone())
                }
                _ => v.clone(),
            };
            (k.clone(), typed)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_with_defaults_and_lists() {
        let plan = PromptPlan {
            template: "Say {{what}} in {{ lang }} to {{who}}.".into(),
            defaults: json!({"lang": "English"}).as_object().cloned().unwrap(),
        };
        let args = json!({"what": "hi", "who": ["a", "b"]});
        assert_eq!(
            plan.render(args.as_object().unwrap()),
            "Say hi in English to a, b."
        );
        let typed = typed_arguments(
            &json!({"properties": {"who": {"type": "array"}, "n": {"type": "integer"}}}),
            json!({"who": "a, b", "n": "3", "x": "y"})
                .as_object()
                .unwrap(),
        );
        assert_eq!(
            Value::Object(typed),
            json!({"who": ["a", "b"], "n": 3, "x": "y"})
        );
    }
}
