//! Editing JSON agent configs in place (VS Code's and Zed's allow comments
//! and trailing commas, so every JSON config is read as JSONC): the
//! concrete syntax tree keeps comments, whitespace and key order, and only
//! the entry's own property is replaced, added or removed.

use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::Value;

use super::{Corrupt, Place};

/// The document's JSON form.
pub fn parse(text: &str) -> Result<Value, Corrupt> {
    jsonc_parser::parse_to_serde_value::<Value>(text, &ParseOptions::default()).map_err(|e| {
        Corrupt {
            line: e.line_display(),
            column: e.column_display(),
            message: format!("not valid JSON: {}", e.kind()),
        }
    })
}

/// `text` with the entry `name` at `place` set to `entry` (or removed).
pub fn edit(
    text: &str,
    place: &Place,
    name: &str,
    entry: Option<&Value>,
) -> Result<String, String> {
    let root = CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| e.to_string())?;
    if root.value().is_some_and(|v| v.as_object().is_none()) {
        return Err("the file's top level is not a JSON object".into());
    }
    match place {
        Place::Map { path } => {
            let Some(obj) = container(&root, path, entry.is_some())? else {
                return Ok(text.to_string());
            };
            match (obj.get(name), entry) {
                (Some(prop), Some(e)) => prop.set_value(input(e)),
                (None, Some(e)) => {
                    obj.append(name, input(e));
                }
                (Some(prop), None) => prop.remove(),
                (None, None) => {}
            }
        }
        Place::List { key } => {
            let root_obj = root.object_value_or_set();
            let list = match root_obj.get(key) {
                Some(prop) => prop
                    .array_value()
                    .ok_or_else(|| format!("`{key}` is not a list"))?,
                None if entry.is_some() => root_obj.array_value_or_set(key),
                None => return Ok(text.to_string()),
            };
            let found = list.elements().into_iter().find(|el| {
                el.to_serde_value()
                    .and_then(|v| v.get("name").and_then(Value::as_str).map(|n| n == name))
                    .unwrap_or(false)
            });
            match (found, entry) {
                (Some(el), Some(e)) => {
                    el.as_object()
                        .ok_or("the entry is not an object")?
                        .replace_with(input(e));
                }
                (None, Some(e)) => {
                    list.append(input(e));
                }
                (Some(el), None) => el.remove(),
                (None, None) => {}
            }
        }
        Place::File => return Err("a whole-file entry is not JSON".into()),
    }
    Ok(root.to_string())
}

/// The object at `path`, created when `create` (`None` when it is missing
/// and need not be).
fn container(root: &CstRootNode, path: &[&str], create: bool) -> Result<Option<CstObject>, String> {
    let mut obj = match root.object_value() {
        Some(o) => o,
        None if create => root.object_value_or_set(),
        None => return Ok(None),
    };
    for key in path {
        obj = match obj.get(key) {
            Some(prop) => prop
                .object_value()
                .ok_or_else(|| format!("`{key}` is not a JSON object"))?,
            None if create => obj.object_value_or_set(key),
            None => return Ok(None),
        };
    }
    Ok(Some(obj))
}

/// A JSON value as the syntax tree's input.
fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const VSCODE: &str = r#"{
  // my servers
  "servers": {
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}, // keep me
  },
  "inputs": [],
}
"#;

    #[test]
    fn sets_replaces_and_removes_keeping_comments_and_order() {
        let place = Place::Map {
            path: vec!["servers"],
        };
        let entry = json!({"type": "stdio", "command": "/bin/toolreg", "args": ["mcp", "serve"]});
        let added = edit(VSCODE, &place, "toolreg", Some(&entry)).unwrap();
        assert!(
            added.contains("// my servers") && added.contains("// keep me"),
            "{added}"
        );
        assert!(added.find("\"github\"").unwrap() < added.find("\"toolreg\"").unwrap());
        assert!(added.find("\"servers\"").unwrap() < added.find("\"inputs\"").unwrap());
        let doc = parse(&added).unwrap();
        assert_eq!(doc["servers"]["toolreg"], entry);
        assert_eq!(doc["servers"]["github"]["type"], "http");
        let changed = json!({"type": "stdio", "command": "/usr/bin/toolreg", "args": []});
        let replaced = edit(&added, &place, "toolreg", Some(&changed)).unwrap();
        assert_eq!(parse(&replaced).unwrap()["servers"]["toolreg"], changed);
        let removed = edit(&replaced, &place, "toolreg", None).unwrap();
        assert_eq!(parse(&removed).unwrap(), parse(VSCODE).unwrap());
        assert!(removed.contains("// keep me"));
    }

    #[test]
    fn creates_the_file_and_names_the_line_of_an_error() {
        let place = Place::Map {
            path: vec!["mcpServers"],
        };
        let made = edit("", &place, "toolreg", Some(&json!({"command": "x"}))).unwrap();
        assert_eq!(
            parse(&made).unwrap(),
            json!({"mcpServers": {"toolreg": {"command": "x"}}})
        );
        let err = parse("{\n  \"mcpServers\": {\n    \"a\": \n  }\n}").unwrap_err();
        assert_eq!((err.line, err.column), (4, 3), "{err:?}");
        assert!(edit("[1]", &place, "t", Some(&json!({}))).is_err());
    }
}
