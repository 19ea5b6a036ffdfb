//! The fixed set of tools a server serves, prepared once at start: each
//! pin's MCP export for every protocol version (as the MCP SDK's `Tool`,
//! checked to serialize to exactly the export, so a listed tool always has
//! the pinned fingerprint), its compiled input schema, how its answers
//! become structured content, and how it runs (its [`Plan`]). Two pins
//! exporting one call name are refused, naming both. The order is the
//! order the pins were given in, for every listing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{JsonObject, Prompt, Tool as McpTool};
use serde_json::Value;
use toolreg_core::export::{to_mcp, to_mcp_for, McpProtocol};
use toolreg_core::{fingerprint, ExecutionKind, Tool};

use crate::arguments;
use crate::error::{Error, Result};
use crate::exec::template::declared_params;
use crate::exec::{Call, EnvLookup, Launchers, Output, Plan, PlanContext, Reply, Runtimes};
use crate::log::Log;

/// One admitted pin, installed and checked, to be served.
#[derive(Debug, Clone)]
pub struct Pin {
    /// The registry name.
    pub name: String,
    /// The pinned version.
    pub version: String,
    /// The installed directory (`.toolreg/tools/NAME/VERSION`).
    pub dir: PathBuf,
    /// The tool as loaded from the installed files.
    pub tool: Tool,
}

/// How a server runs tools.
#[derive(Clone)]
pub struct Settings {
    /// The code-running kinds (`function`, `script`) the project's
    /// `[policy] allow` lists; tools of other code-running kinds answer
    /// every call with what is missing.
    pub run_code: Vec<ExecutionKind>,
    /// The interpreters `[runtime]` names.
    pub runtimes: Runtimes,
    /// Where call lines go.
    pub log: Log,
    /// Where environment placeholders (credentials) are read.
    pub env: Arc<EnvLookup>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            run_code: Vec::new(),
            runtimes: Runtimes::default(),
            log: Log::stderr(),
            env: Arc::new(|name: &str| std::env::var(name).ok()),
        }
    }
}

/// One served tool.
pub struct Entry {
    label: String,
    tool: Tool,
    params: Vec<String>,
    input: jsonschema::Validator,
    output: Output,
    plan: Plan,
}

impl Entry {
    /// `NAME VERSION` of the pin.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The tool.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// The definition fingerprint of what is listed at the newest protocol.
    pub fn fingerprint(&self) -> String {
        fingerprint::of_tool(&self.tool)
    }
}

/// The served tools.
pub struct Catalog {
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
    /// The `tools/list` answer for each protocol of [`McpProtocol::ALL`].
    lists: Vec<Arc<Vec<McpTool>>>,
    prompts: Arc<Vec<Prompt>>,
    settings: Settings,
    // The launcher scripts the plans run; removed when the catalog goes.
    _launchers: Launchers,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field(
                "tools",
                &self.entries.iter().map(|e| &e.label).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Catalog {
    /// Prepare `pins` for serving, in the order given.
    pub fn new(pins: Vec<Pin>, settings: Settings) -> Result<Catalog> {
        let launchers = Launchers::default();
        let mut entries: Vec<Entry> = Vec::with_capacity(pins.len());
        let mut index = HashMap::with_capacity(pins.len());
        let mut lists: Vec<Vec<McpTool>> =
            vec![Vec::with_capacity(pins.len()); McpProtocol::ALL.len()];
        let mut prompts = Vec::new();
        for pin in pins {
            let label = format!("{} {}", pin.name, pin.version);
            let unservable = |reason: String| Error::Unservable {
                pin: label.clone(),
                reason,
            };
            let call_name = pin.tool.call_name.clone();
            if let Some(&i) = index.get(&call_name) {
                let first: &Entry = &entries[i];
                return Err(Error::DuplicateName {
                    call_name,
                    first: first.label.clone(),
                    second: label,
                });
            }
            // The newest export first; an older protocol's export that is
            // the same document shares its SDK tool.
            let export = to_mcp(&pin.tool);
            let newest = as_sdk_tool(&export, McpProtocol::LATEST).map_err(unservable)?;
            for (i, protocol) in McpProtocol::ALL.into_iter().enumerate() {
                let tool = if protocol == McpProtocol::LATEST {
                    newest.clone()
                } else {
                    let older = to_mcp_for(&pin.tool, protocol).value;
                    if older == export {
                        newest.clone()
                    } else {
                        as_sdk_tool(&older, protocol).map_err(unservable)?
                    }
                };
                lists[i].push(tool);
            }
            let input = arguments::compile(&pin.tool.parameters).map_err(|e| {
                unservable(format!(
                    "its inputSchema can't be compiled without fetching anything: {e}"
                ))
            })?;
            let output = Output::new(&export).map_err(unservable)?;
            let plan = Plan::new(
                &pin.tool,
                &PlanContext {
                    dir: &pin.dir,
                    run_code: &settings.run_code,
                    runtimes: &settings.runtimes,
                    launchers: &launchers,
                },
            );
            if pin.tool.execution.kind == ExecutionKind::Prompt {
                prompts.push(crate::exec::prompt::as_prompt(&pin.tool));
            }
            index.insert(call_name, entries.len());
            entries.push(Entry {
                label,
                params: declared_params(&pin.tool.parameters),
                tool: pin.tool,
                input,
                output,
                plan,
            });
        }
        Ok(Catalog {
            entries,
            index,
            lists: lists.into_iter().map(Arc::new).collect(),
            prompts: Arc::new(prompts),
            settings,
            _launchers: launchers,
        })
    }

    /// Every served tool, in order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The tool exported under `call_name`.
    pub fn get(&self, call_name: &str) -> Option<&Entry> {
        self.index.get(call_name).map(|&i| &self.entries[i])
    }

    /// The `tools/list` answer for a protocol version.
    pub fn tools(&self, protocol: McpProtocol) -> Arc<Vec<McpTool>> {
        let i = McpProtocol::ALL
            .iter()
            .position(|p| *p == protocol)
            .unwrap_or(McpProtocol::ALL.len() - 1);
        self.lists[i].clone()
    }

    /// The prompt tools, as MCP prompts.
    pub fn prompts(&self) -> Arc<Vec<Prompt>> {
        self.prompts.clone()
    }

    /// Render a prompt tool for `prompts/get`: its arguments (strings) read
    /// into their declared types and checked against the input schema.
    /// `None` when no prompt tool has that name.
    pub fn prompt(
        &self,
        call_name: &str,
        args: Option<JsonObject>,
    ) -> Option<std::result::Result<(String, String), crate::exec::Refusal>> {
        let entry = self.get(call_name)?;
        let Plan::Prompt(plan) = &entry.plan else {
            return None;
        };
        let started = Instant::now();
        let args =
            crate::exec::prompt::typed_arguments(&entry.tool.parameters, &args.unwrap_or_default());
        let result = arguments::check(&entry.input, &Value::Object(args.clone()))
            .map(|()| (entry.tool.description.clone(), plan.render(&args)));
        let outcome = match &result {
            Ok(_) => "ok",
            Err(r) => r.outcome.as_str(),
        };
        self.settings
            .log
            .call("prompts/get", call_name, started.elapsed(), outcome);
        Some(result)
    }

    /// The log.
    pub fn log(&self) -> &Log {
        &self.settings.log
    }

    /// Call a tool: check the arguments against its input schema, then run
    /// it, and log one line. `None` when no tool has that name.
    pub async fn call(
        &self,
        call_name: &str,
        args: Option<JsonObject>,
        protocol: McpProtocol,
    ) -> Option<Reply> {
        let entry = self.get(call_name)?;
        let started = Instant::now();
        let args = args.unwrap_or_default();
        let reply = match arguments::check(&entry.input, &Value::Object(args.clone())) {
            Err(refusal) => Reply::from(refusal),
            Ok(()) => {
                entry
                    .plan
                    .run(&Call {
                        args: &args,
                        params: &entry.params,
                        protocol,
                        output: &entry.output,
                        env: &self.settings.env,
                    })
                    .await
            }
        };
        self.settings
            .log
            .call("tools/call", call_name, started.elapsed(), &reply.outcome);
        Some(reply)
    }
}

/// The export as the MCP SDK's `Tool`, refused when the SDK's type would
/// change it (a field it doesn't have, a value it reads differently): the
/// listed tool must hash to the export's fingerprint.
fn as_sdk_tool(export: &Value, protocol: McpProtocol) -> std::result::Result<McpTool, String> {
    let tool: McpTool = serde_json::from_value(export.clone()).map_err(|e| {
        format!("its MCP export for protocol {protocol} is not an MCP Tool the SDK can carry: {e}")
    })?;
    // The same JSON document (key order aside), hence the same fingerprint.
    let back = serde_json::to_value(&tool).unwrap_or(Value::Null);
    if back != *export {
        let d = toolreg_core::diff::between("export", "served", export, &back);
        let at = d
            .changes
            .first()
            .map(|c| c.pointer.clone())
            .unwrap_or_else(|| "/".into());
        return Err(format!("its MCP export for protocol {protocol} would be changed at {at} by the MCP SDK's Tool type, so the listed tool would not be the pinned one"));
    }
    Ok(tool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolreg_core::ToolFiles;

    fn mcp_tool(json: &str) -> Tool {
        let mut files = ToolFiles::new();
        files.insert("tool.json", json.to_string());
        files.insert(
            "toolreg.toml",
            "[tool]\nname = \"some-tool\"\nversion = \"1.0.0\"\n",
        );
        toolreg_core::load(&files).unwrap().tool
    }

    fn pin(name: &str, tool: Tool) -> Pin {
        Pin {
            name: name.into(),
            version: "1.0.0".into(),
            dir: std::env::temp_dir(),
            tool,
        }
    }

    const WEATHER: &str = r#"{"name": "get_weather", "description": "Weather for a city",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}"#;

    #[test]
    fn two_pins_under_one_call_name_are_refused_naming_both() {
        let err = Catalog::new(
            vec![pin("a", mcp_tool(WEATHER)), pin("b", mcp_tool(WEATHER))],
            Settings::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("a 1.0.0 and b 1.0.0 both export the tool `get_weather`"),
            "{err}"
        );
    }

    #[test]
    fn the_listing_is_the_export_for_each_protocol_in_pin_order() {
        let other = WEATHER.replace("get_weather", "get_time");
        let catalog = Catalog::new(
            vec![pin("w", mcp_tool(WEATHER)), pin("t", mcp_tool(&other))],
            Settings::default(),
        )
        .unwrap();
        for protocol in McpProtocol::ALL {
            let listed = catalog.tools(protocol);
            let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
            assert_eq!(names, ["get_weather", "get_time"]);
            let tool = &catalog.entries()[0].tool;
            assert_eq!(
                fingerprint::of_mcp(&serde_json::to_value(&listed[0]).unwrap()),
                fingerprint::of_mcp(&to_mcp_for(tool, protocol).value)
            );
        }
        assert_eq!(
            catalog.entries()[0].fingerprint(),
            fingerprint::of_tool(&catalog.entries()[0].tool)
        );
    }

    #[test]
    fn an_export_the_sdk_type_would_change_is_refused() {
        let with_icon = WEATHER.replace(
            "\"description\"",
            "\"icons\": [{\"src\": \"https://example.com/i.png\", \"shape\": \"round\"}], \"description\"",
        );
        let err = Catalog::new(vec![pin("w", mcp_tool(&with_icon))], Settings::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("w 1.0.0") && err.contains("/icons"), "{err}");
    }
}
