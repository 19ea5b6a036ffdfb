//! Property tests: any tool directory survives pack → unpack unchanged and
//! packs to the same bytes twice; name normalization is idempotent and
//! collision-free on its normalized form; a canonical model exported to a
//! format that can hold it (MCP, Matimo) parses back to the same model; and
//! hostile input (random bundle bytes, random definitions) is refused with
//! an error, never a panic.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolreg_core::bundle::{pack, unpack, Limits};
use toolreg_core::export::{export, ExportFormat};
use toolreg_core::name;
use toolreg_core::{load, Tool, ToolFiles};

fn segment() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,11}".prop_filter("not . or ..", |s| s != "." && s != "..")
}

fn rel_path() -> impl Strategy<Value = String> {
    vec(segment(), 1..4).prop_map(|parts| parts.join("/"))
}

fn tool_dir() -> impl Strategy<Value = ToolFiles> {
    btree_map(rel_path(), vec(any::<u8>(), 0..2000), 0..12)
        .prop_filter("a path can't be both a file and a directory", |m| {
            !m.keys()
                .any(|a| m.keys().any(|b| b.starts_with(&format!("{a}/"))))
        })
        // Trailing dots, device names and case-folded twins are refused by
        // both pack and unpack (tested in bundle.rs); round trips are of the rest.
        .prop_filter("names every file system writes as themselves", |m| {
            toolreg_core::bundle::names::check(m.keys().map(String::as_str)).is_ok()
        })
        .prop_map(|m| {
            let mut f = ToolFiles::new();
            for (p, b) in m {
                f.insert(p, b);
            }
            f
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn pack_unpack_round_trips(files in tool_dir()) {
        let bytes = pack(&files).unwrap();
        prop_assert_eq!(&bytes, &pack(&files).unwrap());
        let back = unpack(&bytes, &Limits::default()).unwrap();
        prop_assert_eq!(back, files);
    }

    #[test]
    fn normalize_is_idempotent(s in "\\PC{0,60}") {
        let once = name::normalize(&s);
        prop_assert_eq!(name::normalize(&once), once.clone());
    }

    #[test]
    fn valid_names_are_their_own_normal_form(s in "[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,8}){0,4}") {
        prop_assume!(s.len() >= name::MIN_LEN && s.len() <= name::MAX_LEN);
        prop_assert!(name::is_valid(&s));
        prop_assert_eq!(name::normalize(&s), s.clone());
        prop_assert_eq!(name::derive(&s), s);
    }

    #[test]
    fn random_bytes_never_panic_unpack(bytes in vec(any::<u8>(), 0..4000)) {
        let _ = unpack(&bytes, &Limits::default());
        // A valid gzip header followed by junk, too.
        let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
        gz.extend_from_slice(&bytes);
        let _ = unpack(&gz, &Limits::default());
    }

    #[test]
    fn random_definitions_never_panic_load(text in "\\PC{0,300}", which in 0usize..5) {
        let file = ["definition.yaml", "definition.yml", "metadata.json", "tool.json", "prompt.json"][which];
        let mut f = ToolFiles::new();
        f.insert(file, text.into_bytes());
        let _ = load(&f);
    }
}

// ---- Name normalization is collision-free on its normalized form ----

/// When two registry names name the same tool — written independently of
/// `name::normalize`: the same length, and each character equal ignoring
/// ASCII case, with `-` and `_` the same character.
fn same_tool_name(a: &str, b: &str) -> bool {
    let fold = |c: char| {
        if c == '_' {
            '-'
        } else {
            c.to_ascii_lowercase()
        }
    };
    a.chars().map(fold).eq(b.chars().map(fold))
}

/// A name and a variant of it: some letters' case flipped, some `-`/`_`
/// swapped, and sometimes one character replaced (a different tool).
fn name_pair() -> impl Strategy<Value = (String, String)> {
    (
        "[a-zA-Z0-9_-]{1,24}",
        vec(0u8..6, 24),
        any::<Option<(usize, char)>>(),
    )
        .prop_map(|(a, flips, change)| {
            let mut b: Vec<char> = a
                .chars()
                .zip(flips.iter().chain(std::iter::repeat(&0)))
                .map(|(c, f)| match (c, f) {
                    ('-', 1..=2) => '_',
                    ('_', 1..=2) => '-',
                    (c, 1..=2) if c.is_ascii_lowercase() => c.to_ascii_uppercase(),
                    (c, 1..=2) if c.is_ascii_uppercase() => c.to_ascii_lowercase(),
                    (c, _) => c,
                })
                .collect();
            if let Some((i, c)) = change {
                let i = i % b.len();
                b[i] = c;
            }
            (a, b.into_iter().collect())
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn same_normal_form_iff_same_tool_name((a, b) in name_pair()) {
        prop_assert_eq!(name::normalize(&a) == name::normalize(&b), same_tool_name(&a, &b), "{:?} vs {:?}", a, b);
    }

    #[test]
    fn same_normal_form_iff_same_tool_name_any_text(a in "\\PC{0,12}", b in "\\PC{0,12}") {
        prop_assert_eq!(name::normalize(&a) == name::normalize(&b), same_tool_name(&a, &b));
    }

    #[test]
    fn distinct_valid_registry_names_never_collide(
        a in "[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,8}){0,4}",
        b in "[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,8}){0,4}",
    ) {
        prop_assume!(name::is_valid(&a) && name::is_valid(&b));
        prop_assert_eq!(name::normalize(&a) == name::normalize(&b), a == b);
    }
}

// ---- Canonical model → export → parse gives the same model ----

/// The tool with its original bytes left out (an export is a new document).
fn without_original(mut tool: Tool) -> Tool {
    tool.original.clear();
    tool
}

fn load_one(file: &str, definition: &str, toml: Option<&str>) -> Result<Tool, String> {
    let mut files = ToolFiles::new();
    files.insert(file, definition.as_bytes().to_vec());
    if let Some(t) = toml {
        files.insert("toolreg.toml", t.as_bytes().to_vec());
    }
    load(&files).map(|l| l.tool).map_err(|e| e.to_string())
}

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,40}"
}

/// A JSON Schema for one parameter, of the kinds both MCP and Matimo hold.
fn param_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        (text(), proptest::option::of(vec("[a-z]{1,6}", 1..4))).prop_map(|(d, e)| {
            let mut s = json!({"type": "string", "description": d});
            if let Some(e) = e {
                s["enum"] = json!(e);
            }
            s
        }),
        (text(), proptest::option::of(-1000i64..1000)).prop_map(|(d, default)| {
            let mut s = json!({"type": "number", "description": d});
            if let Some(x) = default {
                s["default"] = json!(x);
            }
            s
        }),
        (text(), any::<Option<bool>>()).prop_map(|(d, default)| {
            let mut s = json!({"type": "boolean", "description": d});
            if let Some(x) = default {
                s["default"] = json!(x);
            }
            s
        }),
        text()
            .prop_map(|d| json!({"type": "array", "description": d, "items": {"type": "string"}})),
    ]
}

/// Parameters: names → (schema, required).
fn params() -> impl Strategy<Value = Vec<(String, Value, bool)>> {
    btree_map(
        "[a-z][a-z0-9_]{0,10}",
        (param_schema(), any::<bool>()),
        0..5,
    )
    .prop_map(|m| m.into_iter().map(|(k, (s, r))| (k, s, r)).collect())
}

fn input_schema(params: &[(String, Value, bool)]) -> Value {
    let mut props = Map::new();
    for (k, s, _) in params {
        props.insert(k.clone(), s.clone());
    }
    let required: Vec<&str> = params
        .iter()
        .filter(|p| p.2)
        .map(|p| p.0.as_str())
        .collect();
    let mut schema = json!({"type": "object", "properties": props});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// An MCP tool.json that uses every field MCP export writes back.
fn mcp_tool() -> impl Strategy<Value = Value> {
    (
        "[A-Za-z0-9_.-]{1,40}",
        proptest::option::of(text()),
        text(),
        params(),
        proptest::option::of(params()),
        (any::<Option<bool>>(), any::<Option<bool>>(), any::<Option<bool>>(), any::<Option<bool>>()),
        any::<bool>(),
        proptest::option::of(btree_map("[a-z]{1,5}", text(), 0..3)),
    )
        .prop_map(|(name, title, description, params, output, hints, icon, meta)| {
            let mut t = json!({"name": name, "description": description, "inputSchema": input_schema(&params)});
            if let Some(title) = title {
                t["title"] = json!(title);
            }
            if let Some(out) = output {
                t["outputSchema"] = input_schema(&out);
            }
            let mut ann = Map::new();
            for (k, v) in [("readOnlyHint", hints.0), ("destructiveHint", hints.1), ("idempotentHint", hints.2), ("openWorldHint", hints.3)] {
                if let Some(b) = v {
                    ann.insert(k.into(), json!(b));
                }
            }
            if !ann.is_empty() {
                t["annotations"] = Value::Object(ann);
            }
            if icon {
                t["icons"] = json!([{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}]);
            }
            if let Some(meta) = meta {
                t["_meta"] = json!(meta);
            }
            t
        })
}

/// A Matimo http tool that uses every field Matimo export writes back.
fn matimo_tool() -> impl Strategy<Value = Value> {
    (
        "[a-z][a-z0-9]{2,10}(-[a-z0-9]{1,6}){0,2}",
        (0u64..100, 0u64..100, 0u64..100),
        text(),
        params(),
        prop_oneof![Just("GET"), Just("POST"), Just("DELETE")],
        proptest::option::of(params()),
        vec("[a-z]{1,8}", 0..4),
        any::<Option<bool>>(),
        any::<bool>(),
    )
        .prop_map(|(name, (ma, mi, pa), description, params, method, output, tags, approval, auth)| {
            let mut p = Map::new();
            for (k, s, r) in &params {
                let mut spec = s.clone();
                spec["required"] = json!(r);
                p.insert(k.clone(), spec);
            }
            let mut t = json!({
                "name": name,
                "version": format!("{ma}.{mi}.{pa}"),
                "description": description,
                "parameters": p,
                "execution": {"type": "http", "method": method, "url": "https://api.example.com/v1/items", "headers": {"Accept": "application/json"}},
            });
            if let Some(out) = output {
                t["output_schema"] = input_schema(&out);
            }
            if !tags.is_empty() {
                t["tags"] = json!(tags);
            }
            if let Some(a) = approval {
                t["requires_approval"] = json!(a);
            }
            if auth {
                t["authentication"] = json!({"type": "bearer", "token_env": "EXAMPLE_TOKEN"});
            }
            t
        })
}

const TOML: &str = "[tool]\nname = \"generated-tool\"\nversion = \"1.2.3\"\nlicense = \"MIT\"\n";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn mcp_export_parses_back_to_the_same_model(doc in mcp_tool()) {
        let first = load_one("tool.json", &doc.to_string(), Some(TOML)).unwrap();
        let exported = export(&first, ExportFormat::Mcp).unwrap().body;
        let again = load_one("tool.json", &exported, Some(TOML)).unwrap();
        prop_assert_eq!(without_original(again.clone()), without_original(first), "export:\n{}", exported);
        // And exporting is a fixed point from then on.
        prop_assert_eq!(export(&again, ExportFormat::Mcp).unwrap().body, exported);
    }

    #[test]
    fn matimo_export_parses_back_to_the_same_model(doc in matimo_tool()) {
        // JSON is YAML, so the generated document is a Matimo definition as is.
        let first = load_one("definition.yaml", &doc.to_string(), None).unwrap();
        let exported = export(&first, ExportFormat::Matimo).unwrap().body;
        let again = load_one("definition.yaml", &exported, None).unwrap();
        prop_assert_eq!(without_original(again.clone()), without_original(first), "export:\n{}", exported);
        prop_assert_eq!(export(&again, ExportFormat::Matimo).unwrap().body, exported);
    }
}
