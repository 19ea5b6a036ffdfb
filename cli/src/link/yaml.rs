//! Editing YAML agent configs in place (goose `config.yaml`, Continue
//! `config.yaml`): the entry's own lines are replaced, added or removed,
//! and every other line (other entries, comments, blank lines) stays as
//! it was. Two shapes are edited: a child of a top-level block mapping
//! (goose `extensions:`) and an item of a top-level block sequence whose
//! `name` is the entry's (Continue `mcpServers:`). Anything else, like the
//! same data in flow style, is refused rather than rewritten; and the
//! caller checks that the result reads back as exactly the intended change.

use serde_json::Value;

use super::{Corrupt, Place};

/// The document's JSON form.
pub fn parse(text: &str) -> Result<Value, Corrupt> {
    serde_saphyr::from_str::<Value>(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line() as usize, l.column() as usize))
            .unwrap_or((1, 1));
        let message = e.to_string();
        let message = message.lines().next().unwrap_or_default().to_string();
        Corrupt {
            line,
            column,
            message: format!("not valid YAML: {message}"),
        }
    })
}

/// A whole document as YAML text.
pub fn render(doc: &Value) -> String {
    serde_saphyr::to_string(doc).unwrap_or_default()
}

/// `text` with the entry `name` at `place` set to `entry` (or removed).
pub fn edit(
    text: &str,
    place: &Place,
    name: &str,
    entry: Option<&Value>,
) -> Result<String, String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let (key, is_list) = match place {
        Place::Map { path } if path.len() == 1 => (path[0], false),
        Place::List { key } => (*key, true),
        _ => return Err("only a top-level mapping or list of servers is edited in YAML".into()),
    };
    let Some(at) = top_key(&lines, key) else {
        let Some(e) = entry else {
            return Ok(text.to_string());
        };
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{key}:\n"));
        let block = if is_list {
            item_lines(e, 2)
        } else {
            child_lines(name, e, 2)
        };
        for l in block {
            out.push_str(&l);
            out.push('\n');
        }
        return Ok(out);
    };
    // `key: {}` or `key: []`: an empty flow collection, written as a block.
    let rest = lines[at][key.len() + 1..].trim();
    match rest {
        "" => {}
        "{}" | "[]" => lines[at] = format!("{key}:"),
        r if r.starts_with('#') => {}
        _ => {
            return Err(format!(
                "`{key}` is written in flow style; toolreg edits it only as a block (one entry per line)"
            ))
        }
    }
    let end = block_end(&lines, at, is_list);
    let children: Vec<usize> = (at + 1..end).filter(|&i| is_content(&lines[i])).collect();
    let indent = children.first().map(|&i| indent_of(&lines[i])).unwrap_or(2);
    // The lines of each entry: (first line, end), without trailing blanks or
    // comments at the entry's own level.
    let starts: Vec<usize> = children
        .iter()
        .copied()
        .filter(|&i| {
            indent_of(&lines[i]) == indent && (!is_list || lines[i].trim_start().starts_with('-'))
        })
        .collect();
    let spans: Vec<(usize, usize)> = starts
        .iter()
        .enumerate()
        .map(|(n, &s)| {
            let next = starts.get(n + 1).copied().unwrap_or(end);
            let mut e = next;
            while e > s + 1 && !is_content_at_least(&lines[e - 1], indent + 1) {
                e -= 1;
            }
            (s, e)
        })
        .collect();
    let found = if is_list {
        let doc = parse(text).map_err(|c| c.message)?;
        let items = doc
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if items.len() != spans.len() {
            return Err(format!(
                "`{key}` has items toolreg can't tell apart line by line"
            ));
        }
        items
            .iter()
            .position(|i| i.get("name").and_then(Value::as_str) == Some(name))
            .map(|k| spans[k])
    } else {
        spans
            .iter()
            .copied()
            .find(|&(s, _)| mapping_key(&lines[s]) == Some(name))
    };
    let new_block = entry.map(|e| {
        if is_list {
            item_lines(e, indent_for_list(&lines, &starts, at))
        } else {
            child_lines(name, e, indent)
        }
    });
    match (found, new_block) {
        (Some((s, e)), Some(block)) => {
            lines.splice(s..e, block);
        }
        (Some((s, e)), None) => {
            lines.drain(s..e);
        }
        (None, Some(block)) => {
            let after = spans.last().map(|&(_, e)| e).unwrap_or(at + 1);
            lines.splice(after..after, block);
        }
        (None, None) => return Ok(text.to_string()),
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Not blank and not a comment.
fn is_content(line: &str) -> bool {
    let t = line.trim_start();
    !t.is_empty() && !t.starts_with('#')
}

/// Not blank, and (a comment or not) indented at least `min`.
fn is_content_at_least(line: &str, min: usize) -> bool {
    !line.trim().is_empty() && indent_of(line) >= min
}

/// The line of the top-level key `key:`.
fn top_key(lines: &[String], key: &str) -> Option<usize> {
    lines.iter().position(|l| {
        l.strip_prefix(key)
            .and_then(|r| r.strip_prefix(':'))
            .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
    })
}

/// The line after the block of the top-level key at `at`: the next line
/// at column 0 that is content (or, for a list, not one of its items).
fn block_end(lines: &[String], at: usize, is_list: bool) -> usize {
    let mut i = at + 1;
    while i < lines.len() {
        let l = &lines[i];
        let top = !l.trim().is_empty() && indent_of(l) == 0;
        let own_item = is_list && l.starts_with('-');
        if top && !own_item && (is_content(l) || next_content_is_top(lines, i)) {
            break;
        }
        i += 1;
    }
    i
}

/// Whether the next content line after `i` is at column 0 and not an item:
/// then a column-0 comment at `i` belongs to what follows.
fn next_content_is_top(lines: &[String], i: usize) -> bool {
    lines[i + 1..]
        .iter()
        .find(|l| is_content(l))
        .is_none_or(|l| indent_of(l) == 0 && !l.starts_with('-'))
}

/// The key of a mapping line `key:` (plain or quoted).
fn mapping_key(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let (key, rest) = if let Some(q) = t.strip_prefix('"') {
        let end = q.find('"')?;
        (&q[..end], &q[end + 1..])
    } else if let Some(q) = t.strip_prefix('\'') {
        let end = q.find('\'')?;
        (&q[..end], &q[end + 1..])
    } else {
        let end = t.find(':')?;
        (&t[..end], &t[end..])
    };
    rest.starts_with(':').then_some(key.trim_end())
}

fn indent_for_list(lines: &[String], starts: &[usize], at: usize) -> usize {
    starts
        .first()
        .map(|&i| indent_of(&lines[i]))
        .unwrap_or_else(|| if at < lines.len() { 2 } else { 0 })
}

/// `name:` and the entry's fields below it, at `indent`.
fn child_lines(name: &str, entry: &Value, indent: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    let key = render(&Value::String(name.to_string()));
    let mut out = vec![format!("{pad}{}:", key.trim_end())];
    for l in render(entry).lines() {
        out.push(format!("{pad}  {l}"));
    }
    out
}

/// `- ` and the entry's fields, as a list item at `indent`.
fn item_lines(entry: &Value, indent: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    render(entry)
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{pad}- {l}")
            } else {
                format!("{pad}  {l}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const GOOSE: &str = "# goose settings\nGOOSE_PROVIDER: anthropic\nextensions:\n  developer:\n    bundled: true\n    enabled: true # keep on\n    name: developer\n    type: builtin\n\n# the model\nGOOSE_MODEL: claude\n";

    #[test]
    fn a_mapping_child_is_added_replaced_and_removed_alone() {
        let place = Place::Map {
            path: vec!["extensions"],
        };
        let entry = json!({"name": "toolreg", "type": "stdio", "cmd": "/bin/toolreg", "args": ["mcp", "serve", "--project", "/a b"], "enabled": true});
        let added = edit(GOOSE, &place, "toolreg", Some(&entry)).unwrap();
        let doc = parse(&added).unwrap();
        assert_eq!(doc["extensions"]["toolreg"], entry, "{added}");
        assert_eq!(doc["GOOSE_MODEL"], "claude");
        for keep in ["# goose settings", "# keep on", "# the model"] {
            assert!(added.contains(keep), "{added}");
        }
        let changed = json!({"name": "toolreg", "cmd": "/x"});
        let replaced = edit(&added, &place, "toolreg", Some(&changed)).unwrap();
        assert_eq!(parse(&replaced).unwrap()["extensions"]["toolreg"], changed);
        assert_eq!(edit(&replaced, &place, "toolreg", None).unwrap(), GOOSE);
    }

    #[test]
    fn a_list_item_is_found_by_name() {
        let text = "name: mine\nmcpServers:\n  - name: other\n    command: npx\n\n  # ours next\nmodels: []\n";
        let place = Place::List { key: "mcpServers" };
        let entry = json!({"name": "toolreg", "command": "/bin/toolreg", "args": ["mcp"]});
        let added = edit(text, &place, "toolreg", Some(&entry)).unwrap();
        let doc = parse(&added).unwrap();
        assert_eq!(doc["mcpServers"][1], entry, "{added}");
        assert_eq!(doc["mcpServers"][0]["name"], "other");
        assert_eq!(doc["models"], json!([]));
        let removed = edit(&added, &place, "toolreg", None).unwrap();
        assert_eq!(parse(&removed).unwrap(), parse(text).unwrap());
        // a column-0 list, and an absent key
        let flat = "mcpServers:\n- name: toolreg\n  command: old\nother: 1\n";
        let fixed = edit(flat, &place, "toolreg", Some(&entry)).unwrap();
        assert_eq!(
            parse(&fixed).unwrap()["mcpServers"],
            json!([entry]),
            "{fixed}"
        );
        let fresh = edit("a: 1\n", &place, "toolreg", Some(&entry)).unwrap();
        assert_eq!(
            parse(&fresh).unwrap()["mcpServers"],
            json!([entry]),
            "{fresh}"
        );
    }

    #[test]
    fn flow_style_is_refused_and_errors_have_a_line() {
        let place = Place::Map {
            path: vec!["extensions"],
        };
        assert!(edit("extensions: {a: {b: 1}}\n", &place, "t", Some(&json!({}))).is_err());
        let empty = edit("extensions: {}\n", &place, "t", Some(&json!({"x": 1}))).unwrap();
        assert_eq!(
            parse(&empty).unwrap(),
            json!({"extensions": {"t": {"x": 1}}})
        );
        let err = parse("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(err.line >= 2, "{err:?}");
    }
}
