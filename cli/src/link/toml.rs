//! Editing TOML agent configs in place (Codex `config.toml`): toml_edit
//! keeps comments, formatting and table order; the entry is its own
//! `[mcp_servers.NAME]` table, replaced, added (after the others) or
//! removed whole.

use serde_json::Value;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table};

use super::{Corrupt, Place};

/// The document's JSON form.
pub fn parse(text: &str) -> Result<Value, Corrupt> {
    let doc: toml::Value = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|s| line_column(text, s.start))
            .unwrap_or((1, 1));
        Corrupt {
            line,
            column,
            message: format!("not valid TOML: {}", e.message().trim()),
        }
    })?;
    serde_json::to_value(doc).map_err(|e| Corrupt {
        line: 1,
        column: 1,
        message: e.to_string(),
    })
}

/// 1-based line and column of byte `offset`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, column)
}

/// `text` with the table `name` at `place` set to `entry` (or removed).
pub fn edit(
    text: &str,
    place: &Place,
    name: &str,
    entry: Option<&Value>,
) -> Result<String, String> {
    let Place::Map { path } = place else {
        return Err("only tables of servers are edited in TOML".into());
    };
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    let mut table: &mut Table = doc.as_table_mut();
    for key in path {
        if !table.contains_key(key) {
            if entry.is_none() {
                return Ok(text.to_string());
            }
            let mut t = Table::new();
            t.set_implicit(true);
            table.insert(key, Item::Table(t));
        }
        table = table
            .get_mut(key)
            .and_then(Item::as_table_mut)
            .ok_or_else(|| format!("`{key}` is not a table"))?;
    }
    match entry {
        Some(e) => {
            let Value::Object(map) = e else {
                return Err("the entry is not a table".into());
            };
            let mut t = Table::new();
            for (k, v) in map {
                t.insert(k, toml_edit::value(to_toml(v)));
            }
            match table.get_mut(name).and_then(Item::as_table_mut) {
                // Keep the table's place and its comments; replace its keys.
                Some(existing) => {
                    existing.clear();
                    for (k, v) in t.iter() {
                        existing.insert(k, v.clone());
                    }
                }
                None => {
                    table.insert(name, Item::Table(t));
                }
            }
        }
        None => {
            table.remove(name);
        }
    }
    Ok(doc.to_string())
}

fn to_toml(v: &Value) -> toml_edit::Value {
    match v {
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or_default().into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            let mut a = Array::new();
            for i in items {
                a.push(to_toml(i));
            }
            toml_edit::Value::Array(a)
        }
        Value::Object(map) => {
            let mut t = InlineTable::new();
            for (k, v) in map {
                t.insert(k, to_toml(v));
            }
            toml_edit::Value::InlineTable(t)
        }
        // TOML has no null; an entry never holds one.
        Value::Null => "".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CODEX: &str = "# my codex\nmodel = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"npx\" # docs server\nargs = [\"-y\", \"docs\"]\n\n[profiles.fast]\nmodel = \"mini\"\n";

    #[test]
    fn adds_replaces_and_removes_one_table() {
        let place = Place::Map {
            path: vec!["mcp_servers"],
        };
        let entry = json!({"command": "/bin/toolreg", "args": ["mcp", "serve"], "enabled_tools": ["a", "b"]});
        let added = edit(CODEX, &place, "toolreg", Some(&entry)).unwrap();
        assert!(
            added.contains("# my codex") && added.contains("# docs server"),
            "{added}"
        );
        assert!(added.contains("[mcp_servers.toolreg]"), "{added}");
        assert_eq!(parse(&added).unwrap()["mcp_servers"]["toolreg"], entry);
        let removed = edit(&added, &place, "toolreg", None).unwrap();
        assert_eq!(removed, CODEX);
        let fresh = edit("", &place, "toolreg", Some(&entry)).unwrap();
        assert!(fresh.starts_with("[mcp_servers.toolreg]"), "{fresh}");
        let err = parse("a = 1\nb = [\n").unwrap_err();
        assert_eq!((err.line, err.column), (2, 6), "{err:?}");
    }
}
