//! Exports for agent APIs: Anthropic tools, Gemini function declarations,
//! MCP per protocol version and OpenAI strict mode — each conversion rule
//! and its loss report, the refusals, and every corpus and fixture tool in
//! every target. With `TOOLREG_EXPORT_DIR` set, the corpus exports are also
//! written there (`<target>/<tool>.json`) for the SDK checks in
//! `scripts/sdk-check/`.

mod common;

use std::path::Path;

use serde_json::{json, Value};
use toolreg_core::export::{
    convert, export, export_with, to_anthropic, to_gemini, to_gemini_json_schema, to_mcp,
    to_mcp_for, to_openai, to_openai_strict, ExportFormat, ExportOptions, ExportWarning,
    McpProtocol,
};
use toolreg_core::{load, Error, Tool, ToolFiles};

/// An MCP tool with this `tool.json` body.
fn mcp_tool(doc: Value) -> Tool {
    let mut files = ToolFiles::new();
    files.insert("tool.json", serde_json::to_vec(&doc).unwrap());
    files.insert(
        "toolreg.toml",
        "[tool]\nname = \"test-tool\"\nversion = \"1.0.0\"\nlicense = \"MIT\"\n",
    );
    load(&files).unwrap_or_else(|e| panic!("{e}")).tool
}

fn with_params(params: Value) -> Tool {
    mcp_tool(json!({"name": "t", "description": "d", "inputSchema": params}))
}

fn has(warnings: &[ExportWarning], pointer: &str, keyword: &str) -> bool {
    warnings
        .iter()
        .any(|w| w.pointer == pointer && w.keyword == keyword)
}

fn corpus_and_fixture_tools() -> Vec<(String, Tool)> {
    let mut out = Vec::new();
    let mut roots = vec![("fixture", common::fixtures(), Vec::new())];
    if let Some(root) = common::corpus() {
        let broken: Vec<String> = common::known_broken(&root)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        roots.push(("corpus", root, broken));
    }
    for (kind, root, skip) in roots {
        for rel in common::definition_files(&root) {
            if skip.contains(&rel)
                || rel == "matimo/github-provider/definition.yaml"
                || rel.starts_with("mcp/lists/")
            {
                continue;
            }
            let tool = load(&common::complete_tool_dir(&root, &rel))
                .unwrap_or_else(|e| panic!("{rel}: {e}"))
                .tool;
            let slug = format!(
                "{kind}-{}",
                rel.rsplit_once('/').map_or(rel.as_str(), |(d, _)| d)
            )
            .replace('/', "-");
            out.push((slug, tool));
        }
    }
    out
}

/// Every keyword a Gemini `Schema` has (JSON spelling).
const GEMINI_KEYWORDS: [&str; 22] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "minimum",
    "maximum",
];

fn assert_gemini_schema(s: &Value, at: &str) {
    let obj = s
        .as_object()
        .unwrap_or_else(|| panic!("{at}: not an object"));
    for (k, v) in obj {
        assert!(
            GEMINI_KEYWORDS.contains(&k.as_str()),
            "{at}: `{k}` in {s:#}"
        );
        match k.as_str() {
            "type" => assert!(
                ["string", "number", "integer", "boolean", "array", "object", "null"]
                    .contains(&v.as_str().unwrap()),
                "{at}: {v}"
            ),
            "enum" => assert!(v.as_array().unwrap().iter().all(Value::is_string), "{at}"),
            "properties" => {
                for (name, p) in v.as_object().unwrap() {
                    assert_gemini_schema(p, &format!("{at}/properties/{name}"));
                }
            }
            "items" => assert_gemini_schema(v, &format!("{at}/items")),
            "anyOf" => {
                for (i, b) in v.as_array().unwrap().iter().enumerate() {
                    assert_gemini_schema(b, &format!("{at}/anyOf/{i}"));
                }
            }
            _ => {}
        }
    }
}

/// Every object in a strict schema closes its properties and requires all.
fn assert_strict_objects(s: &Value, at: &str) {
    match s {
        Value::Object(obj) => {
            if let Some(Value::Object(props)) = obj.get("properties") {
                assert_eq!(obj["additionalProperties"], false, "{at}");
                let names: Vec<&String> = props.keys().collect();
                let required: Vec<&str> = obj["required"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                assert_eq!(names.len(), required.len(), "{at}");
                for n in names {
                    assert!(required.contains(&n.as_str()), "{at}: {n} not required");
                }
            }
            for (k, v) in obj {
                match (k.as_str(), v) {
                    ("enum" | "const", _) => {}
                    ("properties" | "$defs" | "definitions", Value::Object(m)) => {
                        for (name, s) in m {
                            assert_strict_objects(s, &format!("{at}/{k}/{name}"));
                        }
                    }
                    _ => assert_strict_objects(v, &format!("{at}/{k}")),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| assert_strict_objects(v, at)),
        _ => {}
    }
}

fn write(dir: &Path, target: &str, slug: &str, value: &Value) {
    let d = dir.join(target);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join(format!("{slug}.json")),
        serde_json::to_vec_pretty(value).unwrap(),
    )
    .unwrap();
}

#[test]
fn every_corpus_tool_exports_to_every_target() {
    let out_dir = std::env::var_os("TOOLREG_EXPORT_DIR").map(std::path::PathBuf::from);
    let tools = corpus_and_fixture_tools();
    // The fixtures alone (no corpus checked out) are about 20 tools.
    assert!(tools.len() >= 20, "{}", tools.len());
    let mut strict_ok = 0;
    for (slug, tool) in &tools {
        // Anthropic: the parameters unchanged unless composed at the root.
        let a = to_anthropic(tool);
        assert_eq!(a.value["input_schema"]["type"], "object", "{slug}");
        for kw in ["allOf", "anyOf", "oneOf"] {
            assert!(a.value["input_schema"].get(kw).is_none(), "{slug}");
        }
        if tool.parameters.get("oneOf").is_none() {
            assert_eq!(a.value["input_schema"], tool.parameters, "{slug}");
            assert!(a.warnings.iter().all(|w| w.pointer == "/name"), "{slug}");
        }

        // Gemini: only keywords Gemini's Schema has, no `$ref` left.
        let g = to_gemini(tool);
        if let Some(p) = g.value.get("parameters") {
            assert_eq!(p["type"], "object", "{slug}");
            assert_gemini_schema(p, &format!("{slug}:/parameters"));
        } else {
            assert!(
                g.value["name"].is_string() && g.value.as_object().unwrap().len() == 2,
                "{slug}: {:#}",
                g.value
            );
        }
        let gj = to_gemini_json_schema(tool);
        assert_eq!(
            gj.value["parameters_json_schema"], tool.parameters,
            "{slug}"
        );

        // MCP: the newest protocol is `to_mcp`; older ones have object outputs.
        let latest = to_mcp_for(tool, McpProtocol::LATEST);
        assert_eq!(latest.value, to_mcp(tool), "{slug}");
        assert!(latest.warnings.is_empty(), "{slug}");
        for p in [McpProtocol::V2025_06_18, McpProtocol::V2025_11_25] {
            let m = to_mcp_for(tool, p);
            if let Some(o) = m.value.get("outputSchema") {
                assert_eq!(o["type"], "object", "{slug} {p}");
            }
            if p == McpProtocol::V2025_06_18 {
                assert!(m.value.get("icons").is_none(), "{slug}");
            }
        }

        // OpenAI strict: accepted and closed, or refused with a reason.
        match to_openai_strict(tool) {
            Ok(s) => {
                strict_ok += 1;
                assert_eq!(s.value["function"]["strict"], true);
                assert_strict_objects(&s.value["function"]["parameters"], slug);
                if let Some(dir) = &out_dir {
                    write(dir, "openai-strict", slug, &s.value);
                }
            }
            Err(e) => {
                assert!(matches!(e, Error::Export { .. }), "{slug}: {e}");
                assert!(e.to_string().contains("/inputSchema"), "{slug}: {e}");
            }
        }

        if let Some(dir) = &out_dir {
            write(dir, "anthropic", slug, &a.value);
            write(dir, "gemini", slug, &g.value);
            write(dir, "gemini-json-schema", slug, &gj.value);
            write(dir, "openai", slug, &to_openai(tool));
            for p in McpProtocol::ALL {
                write(dir, &format!("mcp-{p}"), slug, &to_mcp_for(tool, p).value);
            }
        }
    }
    assert!(strict_ok >= 10, "only {strict_ok} tools pass strict mode");
    eprintln!(
        "{} tools exported; {strict_ok} accepted by OpenAI strict mode",
        tools.len()
    );
}

#[test]
fn default_exports_are_unchanged() {
    let t = with_params(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    let mcp = export(&t, ExportFormat::Mcp).unwrap();
    assert_eq!(mcp.body, serde_json::to_string_pretty(&to_mcp(&t)).unwrap());
    assert!(mcp.warnings.is_empty());
    let latest = export_with(
        &t,
        ExportFormat::Mcp,
        ExportOptions {
            protocol: McpProtocol::V2026_07_28,
            strict: false,
        },
    )
    .unwrap();
    assert_eq!(latest, mcp);
    let openai = export(&t, ExportFormat::Openai).unwrap();
    assert_eq!(
        openai.body,
        serde_json::to_string_pretty(&to_openai(&t)).unwrap()
    );
    assert!(openai.body.find("strict").is_none());
}

#[test]
fn bad_format_and_protocol_ids_are_refused() {
    let e = "claude".parse::<ExportFormat>().unwrap_err();
    assert!(e.contains("anthropic, gemini, gemini-json-schema"), "{e}");
    let e = "2025-03-26".parse::<McpProtocol>().unwrap_err();
    assert!(e.contains("2025-06-18, 2025-11-25, 2026-07-28"), "{e}");
    assert_eq!(
        "gemini-json-schema".parse::<ExportFormat>(),
        Ok(ExportFormat::GeminiJsonSchema)
    );
    let t = with_params(json!({"type": "object"}));
    let e = convert(&t, ExportFormat::Native, ExportOptions::default()).unwrap_err();
    assert!(e.to_string().contains("native"), "{e}");
}

#[test]
fn anthropic_folds_top_level_composition() {
    let t = with_params(json!({"type": "object", "oneOf": [
        {"properties": {"id": {"type": "string"}}, "required": ["id"]},
        {"properties": {"name": {"type": "string"}}, "required": ["name"]}
    ]}));
    let a = to_anthropic(&t);
    assert_eq!(
        a.value,
        json!({"name": "t", "description": "d", "input_schema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "name": {"type": "string"}}
        }})
    );
    assert!(
        has(&a.warnings, "/inputSchema", "oneOf"),
        "{:?}",
        a.warnings
    );

    let dotted = mcp_tool(json!({"name": "repo.get", "inputSchema": {"type": "object"}}));
    let a = to_anthropic(&dotted);
    assert_eq!(a.value["name"], "repo_get");
    assert!(has(&a.warnings, "/name", "name"));
}

#[test]
fn gemini_converts_what_it_can_and_reports_the_rest() {
    let t = with_params(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "due": {"type": ["string", "null"], "format": "date-time", "description": "when"},
            "state": {"type": "string", "enum": ["open", "closed"]},
            "count": {"type": "integer", "minimum": 1, "exclusiveMaximum": 100},
            "level": {"enum": [1, 2, null]},
            "kind": {"const": "issue"},
            "owner": {"$ref": "#/$defs/user"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "word": {"type": "string", "examples": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
        },
        "required": ["state"],
        "additionalProperties": false,
        "$defs": {"user": {"type": "object", "properties": {"login": {"type": "string"}}}}
    }));
    let g = to_gemini(&t);
    let p = &g.value["parameters"];
    let props = &p["properties"];
    assert_eq!(
        props["due"],
        json!({"type": "string", "nullable": true, "format": "date-time", "description": "when"})
    );
    assert_eq!(
        props["state"],
        json!({"type": "string", "enum": ["open", "closed"]})
    );
    assert_eq!(props["count"], json!({"type": "integer", "minimum": 1}));
    assert_eq!(
        props["level"],
        json!({"enum": ["1", "2"], "nullable": true})
    );
    assert_eq!(props["kind"], json!({"enum": ["issue"]}));
    assert_eq!(
        props["owner"],
        json!({"type": "object", "properties": {"login": {"type": "string"}}})
    );
    assert_eq!(props["labels"], json!({"type": "object"}));
    assert_eq!(
        props["either"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
    assert_eq!(props["maybe"], json!({"type": "string", "nullable": true}));
    assert_eq!(props["word"], json!({"type": "string", "example": "a"}));
    assert_eq!(
        props["tags"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(p["required"], json!(["state"]));
    assert!(p.get("$defs").is_none() && p.get("$schema").is_none());
    assert_gemini_schema(p, "/parameters");

    let w = &g.warnings;
    for (pointer, keyword) in [
        ("/inputSchema", "$schema"),
        ("/inputSchema", "additionalProperties"),
        ("/inputSchema/properties/count", "exclusiveMaximum"),
        ("/inputSchema/properties/level", "enum"),
        ("/inputSchema/properties/labels", "additionalProperties"),
        ("/inputSchema/properties/either", "oneOf"),
        ("/inputSchema/properties/word", "examples"),
        ("/inputSchema/properties/tags", "uniqueItems"),
    ] {
        assert!(
            has(w, pointer, keyword),
            "no warning for {pointer} {keyword}: {w:#?}"
        );
    }
    assert_eq!(w.len(), 8, "{w:#?}");
    for x in w {
        assert!(!x.to_string().is_empty());
    }
}

#[test]
fn gemini_bounds_recursive_refs_and_omits_empty_parameters() {
    let t = with_params(json!({
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"type": "object", "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
        }}}
    }));
    let g = to_gemini(&t);
    let tree = &g.value["parameters"]["properties"]["tree"];
    assert_eq!(tree["properties"]["name"]["type"], "string");
    // The recursion stops at the second visit of the same definition.
    let inner = &tree["properties"]["children"]["items"];
    assert_eq!(*inner, json!({}), "{:#}", g.value);
    assert!(has(
        &g.warnings,
        "/inputSchema/$defs/node/properties/children/items",
        "$ref"
    ));

    // A shared definition used many times is inlined each time but reported once.
    let mut props = serde_json::Map::new();
    for i in 0..5 {
        props.insert(format!("p{i}"), json!({"$ref": "#/$defs/x"}));
    }
    let t = with_params(json!({"type": "object", "properties": props,
        "$defs": {"x": {"type": "string", "not": {"const": ""}}}}));
    let g = to_gemini(&t);
    assert_eq!(
        g.value["parameters"]["properties"]["p4"],
        json!({"type": "string"})
    );
    assert_eq!(g.warnings.len(), 1, "{:#?}", g.warnings);
    assert!(has(&g.warnings, "/inputSchema/$defs/x", "not"));

    // No parameters: no `parameters` at all.
    let t = with_params(json!({"type": "object", "properties": {}}));
    let g = to_gemini(&t);
    assert_eq!(g.value, json!({"name": "t", "description": "d"}));
    assert!(g.warnings.is_empty());
    // The JSON Schema variant is lossless.
    let gj = to_gemini_json_schema(&t);
    assert_eq!(gj.value["parameters_json_schema"], t.parameters);
    assert!(gj.warnings.is_empty());
}

fn array_output_tool() -> Tool {
    mcp_tool(json!({
        "name": "list_users",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/user"},
            "$defs": {"user": {"type": "object", "properties": {"id": {"type": "string"}}}}
        },
        "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png"}]
    }))
}

#[test]
fn mcp_protocols_wrap_outputs_and_drop_missing_fields() {
    let t = array_output_tool();
    let latest = to_mcp_for(&t, McpProtocol::V2026_07_28);
    assert_eq!(latest.value["outputSchema"]["type"], "array");
    assert!(latest.value["icons"].is_array());
    assert!(latest.warnings.is_empty());

    let m = to_mcp_for(&t, McpProtocol::V2025_11_25);
    let out = &m.value["outputSchema"];
    assert_eq!(out["type"], "object");
    assert_eq!(out["required"], json!(["result"]));
    assert_eq!(
        out["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let result = &out["properties"]["result"];
    assert_eq!(result["type"], "array");
    assert!(result.get("$schema").is_none());
    assert_eq!(result["items"]["$ref"], "#/properties/result/$defs/user");
    // The rewritten reference resolves inside the wrapped schema.
    assert!(jsonschema::is_valid(out, &json!({"result": [{"id": "1"}]})));
    assert!(!jsonschema::is_valid(out, &json!({"result": [{"id": 1}]})));
    assert!(m.value["icons"].is_array(), "2025-11-25 has icons");
    assert!(has(&m.warnings, "/outputSchema", "type"));
    assert_eq!(m.warnings.len(), 1);

    let old = to_mcp_for(&t, McpProtocol::V2025_06_18);
    assert!(old.value.get("icons").is_none());
    assert_eq!(old.value["outputSchema"], m.value["outputSchema"]);
    assert!(has(&old.warnings, "/icons", "icons"));
    assert!(has(&old.warnings, "/outputSchema", "type"));

    // An object output passes unchanged.
    let t = mcp_tool(json!({"name": "x", "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"n": {"type": "number"}}}}));
    let m = to_mcp_for(&t, McpProtocol::V2025_06_18);
    assert_eq!(m.value, to_mcp(&t));
    assert!(m.warnings.is_empty());
    // The body served for a protocol is the converted value.
    let e = export_with(
        &array_output_tool(),
        ExportFormat::Mcp,
        ExportOptions {
            protocol: McpProtocol::V2025_11_25,
            strict: false,
        },
    )
    .unwrap();
    let body: Value = serde_json::from_str(&e.body).unwrap();
    assert_eq!(body["outputSchema"]["type"], "object");
    assert_eq!(e.warnings.len(), 1);
}

#[test]
fn openai_strict_converts_optional_properties() {
    let t = with_params(json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "t"},
            "state": {"type": "string", "enum": ["open", "closed"], "default": "open"},
            "due": {"type": "string", "format": "date-time"},
            "url": {"type": "string", "format": "uri"},
            "owner": {"$ref": "#/$defs/user"},
            "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
            "kind": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
        },
        "required": ["title", "owner"],
        "$defs": {"user": {"type": "object", "properties": {"login": {"type": "string"}}, "required": ["login"]}}
    }));
    let s = to_openai_strict(&t).unwrap();
    let f = &s.value["function"];
    assert_eq!(f["strict"], true);
    let p = &f["parameters"];
    assert_eq!(p["additionalProperties"], false);
    assert_eq!(
        p["required"],
        json!(["title", "state", "due", "url", "owner", "labels", "kind"])
    );
    assert_eq!(
        p["properties"]["title"],
        json!({"type": "string", "description": "t"})
    );
    assert_eq!(
        p["properties"]["state"],
        json!({"type": ["string", "null"], "enum": ["open", "closed", null]})
    );
    assert_eq!(
        p["properties"]["due"],
        json!({"type": ["string", "null"], "format": "date-time"})
    );
    assert_eq!(p["properties"]["url"], json!({"type": ["string", "null"]}));
    assert_eq!(p["properties"]["owner"], json!({"$ref": "#/$defs/user"}));
    assert_eq!(
        p["properties"]["kind"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
    );
    assert_eq!(p["$defs"]["user"]["additionalProperties"], false);
    assert_strict_objects(p, "/");
    let w = &s.warnings;
    for (pointer, keyword) in [
        ("/inputSchema/properties/state", "required"),
        ("/inputSchema/properties/state", "default"),
        ("/inputSchema/properties/url", "format"),
        ("/inputSchema/properties/kind", "oneOf"),
    ] {
        assert!(
            has(w, pointer, keyword),
            "no warning for {pointer} {keyword}: {w:#?}"
        );
    }
    assert!(!has(w, "/inputSchema/properties/title", "required"));

    // `--strict` through `export_with`.
    let e = export_with(
        &t,
        ExportFormat::Openai,
        ExportOptions {
            strict: true,
            ..Default::default()
        },
    )
    .unwrap();
    let body: Value = serde_json::from_str(&e.body).unwrap();
    assert_eq!(body, s.value);
}

#[test]
fn openai_strict_refuses_what_it_cannot_express() {
    for (params, needle) in [
        (
            json!({"type": "object", "properties": {"q": {"type": "string", "minLength": 1}}}),
            "/inputSchema/properties/q: `minLength`",
        ),
        (
            json!({"type": "object", "properties": {"meta": {"type": "object"}}}),
            "/inputSchema/properties/meta: an object without declared properties",
        ),
        (
            json!({"type": "object", "additionalProperties": true, "properties": {"a": {"type": "string"}}}),
            "/inputSchema/additionalProperties",
        ),
        (
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}}),
            "/inputSchema/properties/a/$ref",
        ),
        (
            json!({"type": "object", "properties": {"a": {"description": "anything"}}}),
            "/inputSchema/properties/a: the schema has no `type`",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "array", "prefixItems": [{"type": "string"}]}}}),
            "/inputSchema/properties/a: `prefixItems`",
        ),
    ] {
        let t = with_params(params.clone());
        let e = to_openai_strict(&t).unwrap_err();
        assert!(matches!(e, Error::Export { .. }));
        let msg = e.to_string();
        assert!(msg.contains("openai (strict)"), "{msg}");
        assert!(msg.contains(needle), "{params}: {msg}");
        // The plain export still works.
        assert!(convert(&t, ExportFormat::Openai, ExportOptions::default()).is_ok());
    }
    // Ten levels of nesting is the limit.
    let mut deep = json!({"type": "string"});
    for _ in 0..12 {
        deep = json!({"type": "object", "properties": {"x": deep}, "required": ["x"]});
    }
    let e = to_openai_strict(&with_params(deep)).unwrap_err();
    assert!(e.to_string().contains("10 levels"), "{e}");
}

#[test]
fn gemini_inlining_is_bounded_for_shared_definitions() {
    // Each definition uses the next one ten times: inlining it all would
    // write 10^24 schemas.
    let mut defs = serde_json::Map::new();
    for i in 0..24 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        let props: serde_json::Map<String, Value> =
            (0..10).map(|k| (format!("p{k}"), next.clone())).collect();
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": props}),
        );
    }
    defs.insert("d24".into(), json!({"type": "string"}));
    let t = with_params(json!({"type": "object",
        "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs}));
    let g = to_gemini(&t);
    let written = serde_json::to_string(&g.value).unwrap().len();
    assert!(written < 2_000_000, "{written} bytes");
    assert!(
        g.warnings.iter().any(|w| w.message.contains("larger than")),
        "{:#?}",
        g.warnings
    );
    assert_gemini_schema(&g.value["parameters"], "/parameters");
}
