//! `toolreg link CLIENT --proxy NAME [-- CMD… | --url URL]`: put an agent's
//! entry for a third-party MCP server behind `toolreg mcp proxy`. The
//! entry keeps everything it had (environment, working directory,
//! timeouts, the agent's own allow list) and only its launch changes, to
//! `toolreg mcp proxy --pin NAME --project DIR -- CMD…` (or `--url URL`).
//! Without `-- CMD` or `--url`, the server is the one the entry `NAME`
//! already runs. The lock's `[[server]] NAME` records that command (its
//! pins, if any, are kept), and the entry as it was is kept in
//! `.toolreg/servers/NAME.json` so `toolreg unlink CLIENT --proxy NAME`
//! puts it back as it was.
//!
//! Also here: reading how an entry runs its server, for `link --list`.

use std::path::Path;

use serde_json::Value;

use super::clients::{Client, ClientId};
use crate::commands::mcp_proxy::store::{self, Store};
use crate::error::{Error, Result};
use crate::lock::{Launch, LockedServer, Lockfile};

/// The keys an entry names its server's URL with (Gemini `httpUrl`,
/// Windsurf `serverUrl`, goose `uri`, everyone else `url`).
const URL_KEYS: [&str; 4] = ["url", "httpUrl", "serverUrl", "uri"];
/// The keys of an agent's own per-tool allow list.
const ALLOW_KEYS: [&str; 3] = ["enabled_tools", "includeTools", "tools"];

/// How an entry runs its server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    /// `toolreg mcp serve`: the project's pins.
    Serve,
    /// `toolreg mcp proxy --pin NAME` in front of a server.
    Proxy { pin: String, launch: Option<Launch> },
    /// A server run (or reached) directly, with nothing pinned.
    Direct(Launch),
    /// Nothing toolreg can read as a command or a URL.
    Unknown,
}

fn command_key(client: &Client) -> &'static str {
    match client.id {
        ClientId::Goose => "cmd",
        _ => "command",
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The command line (or URL) of an entry as written.
fn launch_of(client: &Client, entry: &Value) -> Option<Launch> {
    let command = entry.get(command_key(client));
    // Zed's older shape: "command": {"path": …, "args": […]}.
    let (program, args) = match command {
        Some(Value::String(p)) => (p.clone(), strings(entry.get("args"))),
        Some(Value::Object(o)) => (o.get("path")?.as_str()?.to_string(), strings(o.get("args"))),
        _ => {
            return URL_KEYS
                .iter()
                .find_map(|k| entry.get(*k).and_then(Value::as_str))
                .map(|u| Launch::Url(u.to_string()))
        }
    };
    let mut argv = vec![program];
    argv.extend(args);
    Some(Launch::Command(argv))
}

/// How `entry` runs its server.
pub fn classify(client: &Client, entry: &Value) -> Runs {
    let Some(launch) = launch_of(client, entry) else {
        return Runs::Unknown;
    };
    let Launch::Command(argv) = &launch else {
        return Runs::Direct(launch);
    };
    let toolreg = Path::new(&argv[0])
        .file_stem()
        .is_some_and(|s| s == "toolreg");
    match argv.get(1..3) {
        Some([mcp, serve]) if toolreg && mcp == "mcp" && serve == "serve" => Runs::Serve,
        Some([mcp, proxy]) if toolreg && mcp == "mcp" && proxy == "proxy" => {
            let rest = &argv[3..];
            let flag = |f: &str| {
                rest.iter()
                    .position(|a| a == f)
                    .and_then(|i| rest.get(i + 1))
            };
            let launch = match (flag("--url"), rest.iter().position(|a| a == "--")) {
                (Some(url), _) => Some(Launch::Url(url.clone())),
                (None, Some(i)) if i + 1 < rest.len() => {
                    Some(Launch::Command(rest[i + 1..].to_vec()))
                }
                _ => None,
            };
            Runs::Proxy {
                pin: flag("--pin").cloned().unwrap_or_default(),
                launch,
            }
        }
        _ => Runs::Direct(launch),
    }
}

/// The arguments of `toolreg` in a proxy entry.
fn proxy_args(root: &Path, name: &str, launch: &Launch) -> Vec<String> {
    let mut args: Vec<String> = ["mcp", "proxy", "--pin", name, "--project"]
        .into_iter()
        .map(str::to_string)
        .collect();
    args.push(root.display().to_string());
    match launch {
        Launch::Url(url) => args.extend(["--url".to_string(), url.clone()]),
        Launch::Command(argv) => {
            args.push("--".into());
            args.extend(argv.iter().cloned());
        }
    }
    args
}

/// What `link --proxy` or `unlink --proxy` will write, and what to record
/// once the config is written.
pub struct Plan {
    /// The entry `NAME` as it should be (`None`: no entry).
    pub entry: Option<Value>,
    /// For link: the lock's server, and the entry as it was when it is
    /// not toolreg's already (`null`: there was none).
    pub record: Option<(Launch, Option<Value>)>,
}

/// `link CLIENT --proxy NAME`: the wrapped entry. `given` is the server
/// from the command line, `present` the entry `NAME` in the config now.
pub fn link(
    client: &Client,
    root: &Path,
    exe: &str,
    name: &str,
    given: Option<Launch>,
    present: Option<&Value>,
) -> Result<Plan> {
    store::check_name("--proxy", name)?;
    let runs = present.map(|p| classify(client, p));
    let launch = match (given, &runs) {
        (Some(l), _) => l,
        (None, Some(Runs::Proxy { launch: Some(l), .. })) => l.clone(),
        (None, Some(Runs::Direct(l))) => l.clone(),
        (None, Some(Runs::Serve)) => {
            return Err(Error::Usage(format!(
                "the entry {name} runs `toolreg mcp serve` (the project's pins): there is nothing to put behind the proxy"
            )))
        }
        (None, Some(_)) => {
            return Err(Error::Usage(format!(
                "the entry {name} has no command or URL toolreg can read; give the server's command after `--`, or --url"
            )))
        }
        (None, None) => {
            return Err(Error::Usage(format!(
                "{} has no entry {name} to put behind the proxy; give the server's command after `--`, or --url",
                client.title
            )))
        }
    };
    match &launch {
        Launch::Command(argv) if argv.is_empty() => {
            return Err(Error::Usage(
                "the server command after `--` is empty".into(),
            ))
        }
        Launch::Url(url) => {
            toolreg_mcp::proxy::check_url(url).map_err(|e| Error::Usage(e.to_string()))?
        }
        Launch::Command(_) => {}
    }
    // The entry as it was, unless it already is toolreg's.
    let original = match runs {
        Some(Runs::Proxy { .. }) => None,
        _ => Some(present.cloned().unwrap_or(Value::Null)),
    };
    if let (Some(o), Launch::Url(_)) = (&original, &launch) {
        let headers = [
            "headers",
            "http_headers",
            "env_http_headers",
            "bearer_token_env_var",
        ]
        .into_iter()
        .find(|k| o.get(*k).is_some_and(|v| !v.is_null()));
        if let Some(k) = headers {
            return Err(Error::Usage(format!(
                "the entry {name} sends `{k}` to its server; toolreg mcp proxy can't pass them on, so it was left as it was"
            )));
        }
    }
    let args = proxy_args(root, name, &launch);
    let mut entry = match present {
        Some(p) => p.clone(),
        None => {
            let mut fresh = client.entry(name, exe, &args, &[]);
            if let Some(o) = fresh.as_object_mut() {
                // The proxy withholds what is not pinned; an empty allow
                // list would hide everything.
                for k in ALLOW_KEYS {
                    o.remove(k);
                }
            }
            fresh
        }
    };
    if let Some(o) = entry.as_object_mut() {
        for k in URL_KEYS.into_iter().chain(["headers"]) {
            o.remove(k);
        }
        if o.contains_key("type") {
            o.insert("type".into(), Value::from("stdio"));
        }
        o.insert(command_key(client).into(), Value::from(exe));
        o.insert("args".into(), Value::from(args));
    }
    Ok(Plan {
        entry: Some(entry),
        record: Some((launch, original)),
    })
}

/// `unlink CLIENT --proxy NAME`: the entry as it was before `link
/// --proxy` (kept beside the lock, or else rebuilt from the lock's
/// command). `Ok(None)`: there is no proxy entry to take back.
pub fn unlink(
    client: &Client,
    root: &Path,
    file: &Path,
    name: &str,
    present: Option<&Value>,
) -> Result<Option<Plan>> {
    store::check_name("--proxy", name)?;
    let Some(present) = present else {
        return Ok(None);
    };
    let Runs::Proxy { launch, .. } = classify(client, present) else {
        return Ok(None);
    };
    if let Some(kept) = Store::load(root, name)
        .linked
        .get(&file.display().to_string())
    {
        return Ok(Some(Plan {
            entry: Some(kept.clone()).filter(|k| !k.is_null()),
            record: None,
        }));
    }
    let lock = Lockfile::load(root)?.unwrap_or_default();
    let launch = lock.server(name).map(|s| s.launch.clone()).or(launch);
    let Some(launch) = launch else {
        return Err(Error::Usage(format!(
            "neither toolreg.lock nor the entry says which server {name} ran; nothing was changed"
        )));
    };
    let mut entry = present.clone();
    if let Some(o) = entry.as_object_mut() {
        match launch {
            Launch::Command(argv) => {
                o.insert(command_key(client).into(), Value::from(argv[0].clone()));
                o.insert("args".into(), Value::from(argv[1..].to_vec()));
            }
            Launch::Url(url) => {
                o.remove(command_key(client));
                o.remove("args");
                let (key, kind) = match client.id {
                    ClientId::Gemini => ("httpUrl", None),
                    ClientId::Windsurf => ("serverUrl", None),
                    ClientId::Goose => ("uri", Some("streamable_http")),
                    ClientId::Continue => ("url", Some("streamable-http")),
                    _ => ("url", Some("http")),
                };
                o.insert(key.into(), Value::from(url));
                if let (Some(kind), true) = (kind, o.contains_key("type")) {
                    o.insert("type".into(), Value::from(kind));
                }
            }
        }
    }
    Ok(Some(Plan {
        entry: Some(entry),
        record: None,
    }))
}

/// After the config was written: the lock's `[[server]]` for `link`
/// (keeping its pins) and the entry as it was, or for `unlink` the kept
/// entry dropped.
pub fn record(root: &Path, file: &Path, name: &str, plan: &Plan) -> Result<()> {
    let mut kept = Store::load(root, name);
    let key = file.display().to_string();
    match &plan.record {
        None => {
            if kept.linked.remove(&key).is_some() {
                kept.save(root, name)?;
            }
        }
        Some((launch, original)) => {
            let mut lock = Lockfile::load(root)?.unwrap_or_default();
            let mut server = lock.server(name).cloned().unwrap_or(LockedServer {
                name: name.to_string(),
                launch: launch.clone(),
                tools: Default::default(),
                accepted_findings: Default::default(),
            });
            if server.launch != *launch {
                crate::outln!(
                    "{name} was pinned running `{}`; toolreg.lock now says `{launch}` (its pins still apply)",
                    server.launch
                );
            }
            server.launch = launch.clone();
            lock.upsert_server(server);
            lock.save(root)?;
            if let Some(o) = original {
                kept.linked.insert(key, o.clone());
                kept.save(root, name)?;
            }
        }
    }
    Ok(())
}

/// How each entry of a config runs its server, in words: a short status
/// (`serve`, `proxy`, `UNPINNED`, `unknown`) and a sentence.
pub fn describe(
    client: &Client,
    name: &str,
    entry: &Value,
    lock: Option<&Lockfile>,
) -> (&'static str, String) {
    match classify(client, entry) {
        Runs::Serve => ("serve", "toolreg mcp serve: the project's pins".into()),
        Runs::Proxy { pin, launch } => {
            let what = launch.map(|l| format!(" in front of `{l}`")).unwrap_or_default();
            let pinned = lock.and_then(|l| l.server(&pin)).map_or(0, |s| s.tools.len());
            let state = match pinned {
                0 => "nothing pinned yet: every tool is withheld until it runs once with --record".to_string(),
                n => format!("{n} tool(s) pinned"),
            };
            ("proxy", format!("toolreg mcp proxy --pin {pin}{what}: {state}"))
        }
        Runs::Direct(launch) => (
            "UNPINNED",
            format!(
                "runs `{launch}` directly, with nothing pinned (put it behind toolreg: toolreg link {} --proxy {name})",
                client.id
            ),
        ),
        Runs::Unknown => ("unknown", "no command or URL toolreg can read".into()),
    }
}
