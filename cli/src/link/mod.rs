//! `toolreg link CLIENT [--scope project|user] [--name N] [--dry-run]`,
//! `toolreg unlink CLIENT` and `toolreg link --list`: the entry that
//! launches `toolreg mcp serve --project <abs path>` in an agent's MCP
//! config ([`clients`] has the table of agents; [`json`], [`toml`] and
//! [`yaml`] edit each format).
//!
//! Every edit keeps the rest of the file as it was (other entries, key
//! order, comments) and is checked by reading the result back: it must be
//! the old document with exactly this entry set or removed, or nothing is
//! written. A second run that would change nothing writes nothing. Before a
//! change, the previous file is kept beside it as `FILE.toolreg.bak`. A
//! file that doesn't parse is refused, naming its line and column.
//! `--dry-run` prints the change as a unified diff. The entry points at the
//! project, not at its pins, so `toolreg update` relinks nothing; the
//! allow lists some agents keep (Codex `enabled_tools`, Gemini
//! `includeTools`, Copilot CLI `tools`) name the pinned tools, and `link
//! --list` shows them as stale when the pins change.

pub mod clients;
pub mod json;
mod list;
pub mod proxy;
pub mod toml;
pub mod yaml;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use clients::{ClientId, Dirs, Scope};

use crate::args::LinkArgs;
use crate::commands::Context;
use crate::error::{Error, Result};
use crate::lock::Launch;
use crate::output;
use clients::{Client, Dialect};

/// What `run` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Link,
    Unlink,
}

/// Where in a config document the entry lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A key `name` of the object at `path` (`mcpServers`, `servers`, ...).
    Map { path: Vec<&'static str> },
    /// An item of the list at `key` whose `name` is `name` (Continue).
    List { key: &'static str },
    /// The whole file is the entry's (a Continue block file).
    File,
}

impl Place {
    /// The entry `name` in `doc`, if there.
    pub fn get<'a>(&self, doc: &'a Value, name: &str) -> Option<&'a Value> {
        match self {
            Place::Map { path } => {
                let mut at = doc;
                for key in path {
                    at = at.get(key)?;
                }
                at.get(name)
            }
            Place::List { key } => doc
                .get(key)?
                .as_array()?
                .iter()
                .find(|item| item.get("name").and_then(Value::as_str) == Some(name)),
            Place::File => (!doc.is_null()).then_some(doc),
        }
    }

    /// `doc` with the entry `name` set to `entry` (or removed for `None`):
    /// what an edit must read back as.
    pub fn apply(&self, doc: &Value, name: &str, entry: Option<&Value>) -> Value {
        let mut out = if doc.is_null() {
            Value::Object(Map::new())
        } else {
            doc.clone()
        };
        match self {
            Place::Map { path } => {
                let mut at = &mut out;
                for key in path {
                    let Some(obj) = at.as_object_mut() else {
                        return out;
                    };
                    at = obj
                        .entry(key.to_string())
                        .or_insert_with(|| Value::Object(Map::new()));
                }
                if let Some(obj) = at.as_object_mut() {
                    match entry {
                        Some(e) => {
                            obj.insert(name.to_string(), e.clone());
                        }
                        None => {
                            obj.remove(name);
                        }
                    }
                }
            }
            Place::List { key } => {
                if let Some(obj) = out.as_object_mut() {
                    let list = obj
                        .entry(key.to_string())
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Some(items) = list.as_array_mut() {
                        let at = items
                            .iter()
                            .position(|i| i.get("name").and_then(Value::as_str) == Some(name));
                        match (at, entry) {
                            (Some(i), Some(e)) => items[i] = e.clone(),
                            (None, Some(e)) => items.push(e.clone()),
                            (Some(i), None) => {
                                items.remove(i);
                            }
                            (None, None) => {}
                        }
                    }
                }
            }
            Place::File => return entry.cloned().unwrap_or(Value::Null),
        }
        out
    }
}

/// A config file that does not parse: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corrupt {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Parse `text` of `dialect` into its JSON form (an empty file is `null`).
pub fn parse(dialect: Dialect, text: &str) -> std::result::Result<Value, Corrupt> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    match dialect {
        Dialect::Json => json::parse(text),
        Dialect::Toml => toml::parse(text),
        Dialect::Yaml => yaml::parse(text),
    }
}

/// `text` with the entry set (or removed), its format kept; `Err` says why
/// it can't be done in place.
fn edit(
    dialect: Dialect,
    text: &str,
    place: &Place,
    name: &str,
    entry: Option<&Value>,
) -> std::result::Result<String, String> {
    match (dialect, place) {
        (_, Place::File) => Ok(match entry {
            Some(doc) => yaml::render(doc),
            None => String::new(),
        }),
        (Dialect::Json, _) => json::edit(text, place, name, entry),
        (Dialect::Toml, _) => toml::edit(text, place, name, entry),
        (Dialect::Yaml, _) => yaml::edit(text, place, name, entry),
    }
}

/// The link run, the unlink run and `link --list`.
pub fn run(ctx: &Context, args: &LinkArgs, action: Action) -> Result<i32> {
    let root = project_root(ctx, args.project.as_deref())?;
    let dirs = Dirs::from_env()
        .ok_or_else(|| Error::Config("cannot tell the home directory (set HOME)".into()))?;
    let name = match &args.proxy {
        Some(server) => server.clone(),
        None => args.name.clone().unwrap_or_else(|| "toolreg".to_string()),
    };
    // A proxied server's name is checked where it is linked (`proxy::link`).
    if args.proxy.is_none() {
        check_name(&name)?;
    }
    if args.list {
        return list::run(ctx, &root, &dirs, &name);
    }
    let Some(id) = args.client else {
        return Err(Error::Usage("name an agent, or use --list".into()));
    };
    if action == Action::Unlink && (args.url.is_some() || !args.command.is_empty()) {
        return Err(Error::Usage(
            "unlink --proxy takes no server: it puts back the entry as it was".into(),
        ));
    }
    let client = clients::client(id);
    let scope = match args.scope {
        Some(s) if !client.scopes().contains(&s) => {
            return Err(Error::Usage(format!(
                "{} has no {} config; use --scope {}",
                client.title,
                s.as_str(),
                client.scopes()[0].as_str()
            )))
        }
        Some(s) => s,
        None => client.scopes()[0],
    };
    let Some((path, place)) = client.file(scope, &root, &dirs, &name) else {
        return Err(Error::Usage(format!(
            "{} has no {} config",
            client.title,
            scope.as_str()
        )));
    };
    let before = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io("could not read", &path, e)),
    };
    let old_text = before.clone().unwrap_or_default();
    let old_doc = parse(client.dialect, &old_text).map_err(|c| corrupt(&path, c))?;
    let present = place.get(&old_doc, &name);
    let what = format!("{} ({}, {})", client.title, scope.as_str(), path.display());
    let plan = match (&args.proxy, action) {
        (None, _) => None,
        (Some(_), _) if place == Place::File => {
            return Err(Error::Usage(format!(
                "{} keeps one server per file in its project config; use --scope user",
                client.title
            )))
        }
        (Some(_), Action::Link) => {
            let given = match (&args.url, args.command.is_empty()) {
                (Some(url), _) => Some(Launch::Url(url.clone())),
                (None, false) => Some(Launch::Command(args.command.clone())),
                (None, true) => None,
            };
            let exe = toolreg_exe()?.display().to_string();
            Some(proxy::link(&client, &root, &exe, &name, given, present)?)
        }
        (Some(_), Action::Unlink) => match proxy::unlink(&client, &root, &path, &name, present)? {
            Some(plan) => Some(plan),
            None => {
                report(
                    ctx,
                    action,
                    &what,
                    &path,
                    "not behind the proxy, nothing to restore",
                    false,
                );
                return Ok(0);
            }
        },
    };
    let expected = match (&plan, action) {
        (Some(plan), _) => plan.entry.clone(),
        (None, Action::Link) => Some(expected_entry(&client, &root, &name, &place)?),
        (None, Action::Unlink) => None,
    };
    if present == expected.as_ref() {
        let state = if expected.is_some() {
            "already linked, nothing to change"
        } else {
            "not linked, nothing to remove"
        };
        if let (Some(plan), false) = (&plan, args.dry_run) {
            proxy::record(&root, &path, &name, plan)?;
        }
        report(ctx, action, &what, &path, state, false);
        skills_folder(ctx, &root, &dirs, &client, scope, action)?;
        return Ok(0);
    }
    let new_text = edit(client.dialect, &old_text, &place, &name, expected.as_ref())
        .map_err(|why| refused(&path, &why))?;
    let wanted = place.apply(&old_doc, &name, expected.as_ref());
    let got = parse(client.dialect, &new_text).map_err(|c| {
        refused(
            &path,
            &format!(
                "the edited file would not parse ({}:{}: {})",
                c.line, c.column, c.message
            ),
        )
    })?;
    if got != wanted {
        return Err(refused(
            &path,
            "the edit would have changed more than toolreg's entry",
        ));
    }
    if args.dry_run {
        print_diff(
            &path,
            &old_text,
            &new_text,
            expected.is_none() && place == Place::File,
        );
        return Ok(0);
    }
    write(
        &path,
        before.as_deref(),
        &new_text,
        expected.is_none() && place == Place::File,
    )?;
    if let Some(plan) = &plan {
        proxy::record(&root, &path, &name, plan)?;
    }
    let state = match (action, &plan) {
        (Action::Link, None) => "linked",
        (Action::Link, Some(_)) => "linked behind toolreg mcp proxy",
        (Action::Unlink, None) => "unlinked",
        (Action::Unlink, Some(_)) => "restored the entry as it was",
    };
    report(ctx, action, &what, &path, state, true);
    skills_folder(ctx, &root, &dirs, &client, scope, action)?;
    Ok(0)
}

/// The agent's skills folder ([`crate::skills`]): `link` records it and
/// places the installed skills there, `unlink` removes what was placed.
fn skills_folder(
    ctx: &Context,
    root: &Path,
    dirs: &Dirs,
    client: &Client,
    scope: Scope,
    action: Action,
) -> Result<()> {
    let Some(folder) = client.skills_folder(scope, root, dirs) else {
        return Ok(());
    };
    let changes = match action {
        Action::Link => {
            let lock = crate::lock::Lockfile::load(root)?;
            crate::skills::link(root, client.id, scope, folder.clone(), lock.as_ref())?
        }
        Action::Unlink => crate::skills::unlink(root, client.id, scope)?,
    };
    if !ctx.json {
        for c in &changes {
            output::status(c.line(root));
        }
        if action == Action::Link {
            output::status(format!(
                "skills: {} reads pinned skills from {}; `toolreg install` keeps them there",
                client.title,
                crate::skills::shown(root, &folder)
            ));
        }
    }
    Ok(())
}

/// The project directory, absolute (the entry must work from anywhere).
fn project_root(ctx: &Context, project: Option<&Path>) -> Result<PathBuf> {
    let dir = ctx.path(project);
    std::fs::canonicalize(&dir)
        .map_err(|e| Error::io("could not find the project directory", &dir, e))
}

fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "--name {name}: use 1 to 64 letters, digits, `-`, `_` or `.` (not first)"
        )))
    }
}

/// The entry (or, for a block file, the whole file) `link` writes for this
/// project.
fn expected_entry(client: &Client, root: &Path, name: &str, place: &Place) -> Result<Value> {
    let exe = toolreg_exe()?;
    let command = exe.display().to_string();
    let args = vec![
        "mcp".to_string(),
        "serve".to_string(),
        "--project".to_string(),
        root.display().to_string(),
    ];
    let tools = if client.has_allow_list() {
        crate::commands::mcp::admitted(root, &[])?
            .into_iter()
            .map(|p| p.tool.call_name)
            .collect()
    } else {
        Vec::new()
    };
    let entry = client.entry(name, &command, &args, &tools);
    Ok(match place {
        Place::File => client.file_document(name, &entry),
        _ => entry,
    })
}

/// This `toolreg`, as the absolute path an agent launches.
fn toolreg_exe() -> Result<PathBuf> {
    std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| {
            Error::io(
                "could not find the toolreg executable",
                Path::new("toolreg"),
                e,
            )
        })
}

fn corrupt(path: &Path, c: Corrupt) -> Error {
    Error::AgentConfig {
        path: format!("{}:{}:{}", path.display(), c.line, c.column),
        message: format!(
            "{}; nothing was written (fix the file, or move it away, and run again)",
            c.message
        ),
    }
}

fn refused(path: &Path, why: &str) -> Error {
    Error::AgentConfig {
        path: path.display().to_string(),
        message: format!("{why}; nothing was written"),
    }
}

fn report(ctx: &Context, action: Action, what: &str, path: &Path, state: &str, changed: bool) {
    if ctx.json {
        output::json(&serde_json::json!({
            "action": match action { Action::Link => "link", Action::Unlink => "unlink" },
            "file": path.display().to_string(),
            "changed": changed,
            "backup": changed.then(|| backup_path(path).display().to_string()),
        }));
    } else {
        crate::outln!("{state}: {what}");
        if changed && backup_path(path).exists() {
            crate::outln!(
                "the previous file is kept as {}",
                backup_path(path).display()
            );
        }
    }
}

fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".toolreg.bak");
    path.with_file_name(name)
}

fn print_diff(path: &Path, old: &str, new: &str, deleted: bool) {
    let shown = path.display().to_string();
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&shown, if deleted { "/dev/null" } else { &shown })
        .to_string();
    crate::out!("{text}");
}

/// Write `text` to `path` (or remove it, for an unlinked block file),
/// keeping `before` as the backup, through a temporary file renamed into
/// place so the agent never reads half a file.
fn write(path: &Path, before: Option<&str>, text: &str, remove: bool) -> Result<()> {
    if let Some(old) = before {
        let backup = backup_path(path);
        std::fs::write(&backup, old)
            .map_err(|e| Error::io("could not write the backup", &backup, e))?;
    }
    if remove {
        return std::fs::remove_file(path).map_err(|e| Error::io("could not remove", path, e));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io("could not create", dir, e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".toolreg-link-")
        .tempfile_in(dir)
        .map_err(|e| Error::io("could not write in", dir, e))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())
        .map_err(|e| Error::io("could not write", tmp.path(), e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path)
        .map_err(|e| Error::io("could not replace", path, e.error))?;
    Ok(())
}
