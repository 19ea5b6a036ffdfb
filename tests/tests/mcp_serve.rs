//! `toolreg mcp serve` through real MCP clients run as processes: the MCP
//! Python SDK's `ClientSession` (over `stdio_client`, with both the
//! `initialize` handshake and the 2026-07-28 `server/discover`, and over
//! the Streamable HTTP client) and the TypeScript SDK's `Client`. The
//! project pins tools of every execution kind from a real registry, which is
//! stopped before anything is served: serving never asks it anything.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolreg_core::export::{to_mcp_for, McpProtocol};
use toolreg_core::fingerprint;
use toolreg_e2e::mcp::{write, Sdk, Upstream, Workspace};
use toolreg_e2e::{bin, copy_dir, corpus_tool, write_tool_manifest};

const TOKEN: &str = "upstream-secret-4711";

/// A project with one pin of each kind, installed, its registry stopped.
struct Project {
    ws: Workspace,
    upstream: Upstream,
    pidfile: PathBuf,
}

fn matimo(dir: &Path, text: &str) {
    write(&dir.join("definition.yaml"), text);
}

/// The tools of the project, written into `root`: (registry name, dir).
fn tools(root: &Path, upstream: &Upstream) -> Vec<(&'static str, PathBuf)> {
    let port = upstream.port;
    let echo = root.join("echo-issue");
    matimo(
        &echo,
        &format!(
            r#"name: echo_issue
version: '1.0.0'
description: Open an issue in the local test tracker.
parameters:
  owner:
    type: string
    required: true
    description: Account that owns the repository.
  repo:
    type: string
    required: true
    description: Repository name.
  title:
    type: string
    required: true
    description: Issue title.
  labels:
    type: array
    required: false
    description: Labels for the issue.
  note:
    type: string
    required: false
    description: A note carried in a header.
execution:
  type: http
  method: POST
  url: 'http://127.0.0.1:{port}/repos/{{owner}}/{{repo}}/issues'
  headers:
    Authorization: 'Bearer {{E2E_UPSTREAM_TOKEN}}'
    X-Note: '{{note}}'
  body:
    title: '{{title}}'
    labels: '{{labels}}'
  timeout: 5000
output_schema:
  type: object
  properties:
    number: {{ type: integer }}
    url: {{ type: string }}
  required: [number]
"#
        ),
    );
    let get = |name: &str, path: &str, what: &str| {
        let dir = root.join(name.replace('_', "-"));
        matimo(
            &dir,
            &format!(
                r#"name: {name}
version: '1.0.0'
description: {what}
parameters:
  q:
    type: string
    required: false
    description: Unused.
execution:
  type: http
  method: GET
  url: 'http://127.0.0.1:{port}{path}'
  timeout: 5000
"#
            ),
        );
        dir
    };
    let big = get("big_answer", "/big", "Fetch a very long answer.");
    let missing = get(
        "missing_answer",
        "/missing",
        "Fetch a page that is not there.",
    );
    let looping = get("loop_answer", "/loop", "Fetch a page that moved to itself.");
    let print = root.join("print-args");
    matimo(
        &print,
        r#"name: print_args
version: '1.0.0'
description: Print each argument on a line of its own.
parameters:
  first:
    type: string
    required: true
    description: The first argument.
  second:
    type: string
    required: false
    description: The second argument.
execution:
  type: command
  command: printf
  args: ['%s|\n', '{first}', '{second}']
  timeout: 5000
"#,
    );
    let hang = root.join("hang");
    matimo(
        &hang,
        r#"name: hang
version: '1.0.0'
description: Start a background sleeper and wait for it.
parameters:
  label:
    type: string
    required: false
    description: Unused.
execution:
  type: command
  command: sh
  args: ['-c', 'sleep 60 & echo $! > "$1"; wait', 'hang', '{E2E_PIDFILE}']
  timeout: 1000
"#,
    );
    let double = root.join("double");
    matimo(
        &double,
        r#"name: double
version: '1.0.0'
description: Double a number.
parameters:
  n:
    type: number
    required: true
    description: The number.
execution:
  type: function
  code: './double.js'
output_schema:
  type: object
  properties:
    doubled: { type: number }
  required: [doubled]
"#,
    );
    write(
        &double.join("double.js"),
        "export default async function (params) {\n  console.log('noise on stdout goes to stderr');\n  return { doubled: params.n * 2 };\n}\n",
    );
    let shinkai = root.join("arxiv-search");
    copy_dir(&corpus_tool("shinkai/arxiv-search"), &shinkai);
    write(
        &shinkai.join("tool.py"),
        "class CONFIG:\n    pass\n\nclass INPUTS:\n    query: str\n    max_results: int = 10\n\nclass OUTPUT:\n    papers: list\n    total_results: int\n\nasync def run(c: CONFIG, p: INPUTS) -> OUTPUT:\n    print('searching', p.query)\n    out = OUTPUT()\n    out.papers = [{'id': '2401.00001', 'title': p.query.upper(), 'authors': [], 'categories': []}]\n    out.total_results = p.max_results\n    return out\n",
    );
    let prompt = root.join("summarize-text");
    copy_dir(&corpus_tool("prompt/summarize-text"), &prompt);
    let schema = root.join("create-issue");
    copy_dir(&corpus_tool("mcp/github-create_issue"), &schema);
    write_tool_manifest(&schema, "github-create-issue", "1.0.0");
    vec![
        ("echo-issue", echo),
        ("big-answer", big),
        ("missing-answer", missing),
        ("loop-answer", looping),
        ("arxiv-search", shinkai),
        ("print-args", print),
        ("hang", hang),
        ("double", double),
        ("summarize-text", prompt),
        ("github-create-issue", schema),
    ]
}

fn project() -> Project {
    let upstream = Upstream::start();
    let mut ws = Workspace::start();
    for (name, dir) in tools(ws.root(), &upstream) {
        ws.publish_and_add(name, &dir);
    }
    ws.install_and_stop_registry();
    Project {
        pidfile: ws.root().join("hang.pid"),
        upstream,
        ws,
    }
}

impl Project {
    fn serve(&self) -> Vec<String> {
        vec![
            bin("toolreg").display().to_string(),
            "mcp".into(),
            "serve".into(),
            "--project".into(),
            self.ws.agent.display().to_string(),
        ]
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("E2E_UPSTREAM_TOKEN", TOKEN.to_string()),
            ("E2E_PIDFILE", self.pidfile.display().to_string()),
            ("HOME", self.ws.user.home.path().display().to_string()),
        ]
    }

    fn python(&self, sdk: &Sdk, lifecycle: &str, plan: Value) -> toolreg_e2e::mcp::ClientRun {
        let serve = self.serve();
        let args: Vec<&str> = serve.iter().map(String::as_str).collect();
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let run = sdk.python_stdio(lifecycle, &args, &env, &plan);
        assert_eq!(run.code, 0, "client failed:\n{}", run.stderr);
        run
    }

    /// Call name → (pinned fingerprint, the tool as installed).
    fn pins(&self) -> HashMap<String, (String, toolreg_core::Tool)> {
        let lock: toml::Value =
            toml::from_str(&std::fs::read_to_string(self.ws.agent.join("toolreg.lock")).unwrap())
                .unwrap();
        lock["tool"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let name = t["name"].as_str().unwrap();
                let dir = self
                    .ws
                    .agent
                    .join(".toolreg/tools")
                    .join(name)
                    .join(t["version"].as_str().unwrap());
                let files = toolreg_core::ToolFiles::read_dir(&dir).unwrap();
                let tool = toolreg_core::load(&files).unwrap().tool;
                let definition = t["definition"].as_str().unwrap().to_string();
                (tool.call_name.clone(), (definition, tool))
            })
            .collect()
    }
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// Assert an `isError` result whose text contains `needle`.
#[track_caller]
fn refused(result: &Value, needle: &str) {
    assert!(is_error(result), "not an error: {result}");
    assert!(
        text_of(result).contains(needle),
        "no `{needle}` in {result}"
    );
}

#[test]
fn every_client_lists_the_pins_as_exported_for_its_protocol_and_newest_is_the_locked_fingerprint() {
    let Some(sdk) = Sdk::find() else { return };
    let p = project();
    let pins = p.pins();
    let list = json!({"steps": [{"op": "list_tools"}, {"op": "list_tools"}]});

    // 2026-07-28 (server/discover): each listed tool hashes to toolreg.lock's definition
    let modern = p.python(&sdk, "discover", list.clone());
    assert_eq!(modern.out["protocol"], "2026-07-28");
    let tools = modern.step(0)["tools"].as_array().unwrap();
    assert_eq!(tools.len(), pins.len(), "{tools:?}");
    for t in tools {
        let name = t["name"].as_str().unwrap();
        assert_eq!(fingerprint::of_mcp(t), pins[name].0, "{name}");
    }
    assert_eq!(modern.step(0)["sdk_count"], json!(pins.len()));
    // stable order, and no listChanged: the set is fixed for the session
    assert_eq!(modern.step(0)["tools"], modern.step(1)["tools"]);
    assert_eq!(
        modern.out["capabilities"]["tools"].get("listChanged"),
        None,
        "{}",
        modern.out
    );

    // 2025-11-25 (initialize): that version's export of the same definitions
    let legacy = p.python(&sdk, "initialize", list.clone());
    assert_eq!(legacy.out["protocol"], "2025-11-25");
    let names: Vec<&str> = legacy.step(0)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let modern_names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, modern_names);
    for t in legacy.step(0)["tools"].as_array().unwrap() {
        let tool = &pins[t["name"].as_str().unwrap()].1;
        let expected = to_mcp_for(tool, McpProtocol::V2025_11_25).value;
        assert_eq!(
            fingerprint::of_mcp(t),
            fingerprint::of_mcp(&expected),
            "{t}"
        );
    }

    // the TypeScript SDK negotiates 2025-11-25 and parses every tool with its ToolSchema
    let serve = p.serve();
    let args: Vec<&str> = serve.iter().map(String::as_str).collect();
    let ts_plan = json!({"steps": [
        {"op": "list_tools"},
        {"op": "call", "name": "print_args", "args": {"first": "from TypeScript"}},
        {"op": "call", "name": "print_args", "args": {"first": 1}},
        {"op": "get_prompt", "name": "summarize-text", "args": {"text": "T."}},
    ]});
    let ts = sdk.node_stdio(&args, &[], &ts_plan);
    assert_eq!(ts.code, 0, "{}", ts.stderr);
    assert_eq!(ts.out["protocol"], "2025-11-25");
    assert_eq!(ts.step(0)["tools"], legacy.step(0)["tools"]);
    assert_eq!(ts.step(0)["sdk_count"], json!(pins.len()));
    assert_eq!(text_of(ts.step(1)), "from TypeScript|\n");
    refused(ts.step(2), "arguments.first: 1 is not of type \"string\"");
    assert_eq!(
        ts.step(3)["messages"][0]["content"]["text"],
        "Summarize the following text in 3 sentences, in English:\n\nT."
    );

    // Streamable HTTP on loopback, both lifecycles
    let mut child = std::process::Command::new(bin("toolreg"))
        .args([
            "mcp",
            "serve",
            "--project",
            p.ws.agent.to_str().unwrap(),
            "--http",
            "127.0.0.1:0",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let url = read_url(child.stderr.take().unwrap());
    // a browser page (any Origin) and a name that is not loopback (DNS
    // rebinding) are turned away
    let probe = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}"#;
    let http = reqwest::blocking::Client::new();
    for (header, value) in [("Origin", "https://evil.example"), ("Host", "evil.example")] {
        let answer = http
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header(header, value)
            .body(probe)
            .send()
            .unwrap();
        assert_eq!(answer.status().as_u16(), 403, "{header}: {value}");
    }
    for (lifecycle, protocol) in [("initialize", "2025-11-25"), ("discover", "2026-07-28")] {
        let run = sdk.python_http(lifecycle, &url, &json!({"steps": [{"op": "list_tools"}, {"op": "call", "name": "print_args", "args": {"first": "over http"}}]}));
        assert_eq!(run.out["protocol"], protocol, "{}", run.stderr);
        assert_eq!(run.step(0)["tools"].as_array().unwrap().len(), pins.len());
        assert_eq!(text_of(run.step(1)), "over http|\n");
    }
    let _ = child.kill();
    let _ = child.wait();
    // nothing but loopback
    let refused =
        p.ws.user
            .run(&p.ws.agent, &["mcp", "serve", "--http", "0.0.0.0:8808"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("not a loopback address"),
        "{}",
        refused.stderr
    );
}

/// The announced `http://…/mcp` URL from the server's stderr.
fn read_url(stderr: std::process::ChildStderr) -> String {
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(stderr).lines();
    let line = lines.next().expect("serve announced nothing").unwrap();
    // keep draining, so the server never blocks on a full pipe
    std::thread::spawn(move || for _ in lines {});
    let at = line
        .find("http://")
        .unwrap_or_else(|| panic!("no URL in {line}"));
    line[at..].split_whitespace().next().unwrap().to_string()
}

#[test]
fn each_kind_runs_as_its_definition_says_and_bad_arguments_run_nothing() {
    let Some(sdk) = Sdk::find() else { return };
    let p = project();
    let run = p.python(
        &sdk,
        "discover",
        json!({"steps": [
            {"op": "call", "name": "echo_issue", "args": {"owner": "acme", "repo": "widgets", "title": "Ünïcode title", "labels": ["bug", "p1"]}},
            {"op": "call", "name": "print_args", "args": {"first": "one", "second": "two words"}},
            {"op": "call", "name": "summarize-text", "args": {"text": "A long text.", "length": "1"}},
            {"op": "get_prompt", "name": "summarize-text", "args": {"text": "Short.", "language": "French"}},
            {"op": "list_prompts"},
            {"op": "call", "name": "create_issue", "args": {"owner": "a", "repo": "b", "title": "c"}},
            {"op": "call", "name": "echo_issue", "args": {"owner": 5, "title": "t"}},
            {"op": "call", "name": "missing_answer", "args": {}},
            {"op": "call", "name": "double", "args": {"n": 21}},
            {"op": "get_prompt", "name": "summarize-text", "args": {"length": "7"}},
        ]}),
    );
    // http: method, substituted URL, header from the environment, JSON body
    let sent = p.upstream.received();
    assert_eq!(sent.len(), 2, "{sent:?}");
    let issue = &sent[0];
    assert_eq!(issue.method, "POST");
    assert_eq!(issue.target, "/repos/acme/widgets/issues");
    assert_eq!(
        issue.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    // a left-out optional header is not sent at all
    assert_eq!(issue.header("x-note"), None);
    let body: Value = serde_json::from_slice(&issue.body).unwrap();
    assert_eq!(
        body,
        json!({"title": "Ünïcode title", "labels": ["bug", "p1"]})
    );
    let answer = run.step(0);
    assert!(!is_error(answer), "{answer}");
    assert_eq!(
        answer["structuredContent"],
        json!({"number": 7, "url": "http://example.test/issues/7"})
    );
    // command: argv elements as given, no shell
    assert_eq!(text_of(run.step(1)), "one|\ntwo words|\n");
    // prompt: the rendered text, as a tool and as an MCP prompt
    assert_eq!(
        text_of(run.step(2)),
        "Summarize the following text in 1 sentences, in English:\n\nA long text."
    );
    assert_eq!(
        run.step(3)["messages"][0]["content"]["text"],
        "Summarize the following text in 3 sentences, in French:\n\nShort."
    );
    assert_eq!(run.step(4)["prompts"][0]["name"], "summarize-text");
    // schema: a declaration only
    assert!(is_error(run.step(5)));
    assert_eq!(
        text_of(run.step(5)),
        "definition only: this tool has no execution; its server must provide it"
    );
    // bad arguments: refused naming each field, nothing sent
    refused(run.step(6), "arguments.owner: 5 is not of type \"string\"");
    refused(run.step(6), "\"repo\" is a required property");
    // non-2xx: the status and an excerpt of the body
    refused(run.step(7), "HTTP 404 Not Found: no such thing here");
    // function: needs [policy] allow and [runtime]
    refused(run.step(8), "[policy] allow lists \"function\"");
    // a prompt's arguments are checked too
    assert!(
        run.step(9)["error"]
            .as_str()
            .unwrap_or_default()
            .contains("7"),
        "{}",
        run.step(9)
    );

    // one log line per call on stderr, never an argument value or secret
    for line in [
        "tools/call \"echo_issue\"",
        "ms ok",
        "error: invalid arguments",
        "error: http status 404",
        "error: definition only",
    ] {
        assert!(run.stderr.contains(line), "no `{line}` in:\n{}", run.stderr);
    }
    for secret in [TOKEN, "Ünïcode", "two words", "A long text"] {
        assert!(
            !run.stderr.contains(secret),
            "`{secret}` leaked into the log:\n{}",
            run.stderr
        );
    }

    // a missing credential: refused naming the variable, nothing sent
    let serve = p.serve();
    let args: Vec<&str> = serve.iter().map(String::as_str).collect();
    let no_token = sdk.python_stdio(
        "discover",
        &args,
        &[],
        &json!({"steps": [{"op": "call", "name": "echo_issue", "args": {"owner": "a", "repo": "b", "title": "c"}}]}),
    );
    refused(no_token.step(0), "E2E_UPSTREAM_TOKEN is not set");
    assert_eq!(p.upstream.received().len(), 2);

    // with [policy] allow and [runtime], the function runs under node
    let toml_path = p.ws.agent.join("toolreg.toml");
    let mut text = std::fs::read_to_string(&toml_path).unwrap();
    text.push_str("\n[policy]\nallow = [\"http\", \"command\", \"prompt\", \"schema\", \"function\"]\n\n[runtime]\nnode = \"node\"\npython = \"python3\"\n");
    std::fs::write(&toml_path, text).unwrap();
    let code = p.python(
        &sdk,
        "discover",
        json!({"steps": [
            {"op": "call", "name": "double", "args": {"n": 21}},
            {"op": "call", "name": "arxiv-search", "args": {"query": "llm"}},
        ]}),
    );
    // Shinkai tool.py under python: run(CONFIG, INPUTS), the class default kept
    let papers = code.step(1);
    assert!(!is_error(papers), "{papers}\n{}", code.stderr);
    assert_eq!(papers["structuredContent"]["total_results"], 10);
    assert_eq!(papers["structuredContent"]["papers"][0]["title"], "LLM");
    let doubled = code.step(0);
    assert!(!is_error(doubled), "{doubled}\n{}", code.stderr);
    // the tool's console output did not reach the answer (nor the protocol)
    assert_eq!(doubled["structuredContent"], json!({"doubled": 42}));
    assert_eq!(text_of(doubled), r#"{"doubled":42}"#);
}

#[test]
fn hostile_arguments_change_nothing_they_should_not() {
    let Some(sdk) = Sdk::find() else { return };
    let p = project();
    let issue = |owner: &str| json!({"op": "call", "name": "echo_issue", "args": {"owner": owner, "repo": "r", "title": "t"}});
    let run = p.python(
        &sdk,
        "discover",
        json!({"steps": [
            issue("../../admin"),
            issue("a?b=1"),
            issue("a#frag"),
            issue("user@evil.example"),
            issue("line\nbreak"),
            issue(".."),
            {"op": "call", "name": "echo_issue", "args": {"owner": "o", "repo": "r", "title": "t", "note": "x\r\nX-Evil: 1"}},
            {"op": "call", "name": "print_args", "args": {"first": "-n --version", "second": "; rm -rf /"}},
            {"op": "call", "name": "big_answer", "args": {}},
            {"op": "call", "name": "loop_answer", "args": {}},
        ]}),
    );
    let targets: Vec<String> = p
        .upstream
        .received()
        .iter()
        .map(|r| r.target.clone())
        .collect();
    // each value stays one path segment, percent-encoded; `..` is refused
    assert_eq!(
        targets[..5],
        [
            "/repos/..%2F..%2Fadmin/r/issues",
            "/repos/a%3Fb%3D1/r/issues",
            "/repos/a%23frag/r/issues",
            "/repos/user%40evil.example/r/issues",
            "/repos/line%0Abreak/r/issues",
        ]
    );
    for i in 0..5 {
        assert!(!is_error(run.step(i)), "{}", run.step(i));
    }
    refused(run.step(5), "would change where the request goes");
    // a header value with CR/LF is refused, nothing sent
    refused(run.step(6), "line break");
    // an argv element starting with `-` stays one argument
    assert_eq!(text_of(run.step(7)), "-n --version|\n; rm -rf /|\n");
    // a response over the cap
    refused(run.step(8), "larger than the 10 MiB cap");
    // redirects are followed at most 5 times
    refused(run.step(9), "more than 5 redirects");
    // `..`, the CR/LF header: never sent; big_answer was asked once, the loop 6 times
    assert_eq!(targets.len(), 12, "{targets:?}");
    assert_eq!(targets[5], "/big");
    assert!(targets[6..].iter().all(|t| t == "/loop"), "{targets:?}");
}

#[test]
fn a_hung_command_is_killed_with_its_process_group_while_another_call_succeeds() {
    let Some(sdk) = Sdk::find() else { return };
    let p = project();
    let log = p.ws.root().join("serve.log");
    let mut serve = p.serve();
    serve.extend(["--log-file".to_string(), log.display().to_string()]);
    let args: Vec<&str> = serve.iter().map(String::as_str).collect();
    let env = p.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let run = sdk.python_stdio(
        "discover",
        &args,
        &env,
        &json!({"steps": [
            {"op": "concurrent", "calls": [
                {"name": "hang", "args": {}},
                {"name": "print_args", "args": {"first": "quick"}},
            ]},
            {"op": "call", "name": "print_args", "args": {"first": "still serving"}},
        ]}),
    );
    let finished = run.step(0)["finished"].as_array().unwrap();
    assert_eq!(finished[0]["name"], "print_args", "{finished:?}");
    assert_eq!(text_of(&finished[0]), "quick|\n");
    let hung = &finished[1];
    refused(hung, "timed out after 1000 ms");
    let waited = hung["elapsed_ms"].as_u64().unwrap();
    assert!((1000..10_000).contains(&waited), "{waited}");
    assert_eq!(text_of(run.step(1)), "still serving|\n");
    // the sleeper it forked went with it
    let pid = std::fs::read_to_string(&p.pidfile).unwrap();
    let stat = Path::new("/proc").join(pid.trim()).join("stat");
    let gone = (0..40).any(|_| {
        let alive = std::fs::read_to_string(&stat)
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false);
        if alive {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        !alive
    });
    assert!(gone, "the forked sleeper {pid} outlived its call");
    // --log-file has the same lines as stderr
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("tools/call \"hang\"") && logged.contains("error: timeout"),
        "{logged}"
    );
    assert!(logged.contains("serving 10 tool(s)"), "{logged}");
}

#[test]
fn serve_refuses_to_start_on_drift_duplicates_or_policy_naming_the_pin_and_the_fix() {
    let p = project();
    // an edited installed file
    let def =
        p.ws.agent
            .join(".toolreg/tools/print-args/1.0.0/definition.yaml");
    let text = std::fs::read_to_string(&def).unwrap();
    std::fs::write(
        &def,
        text.replace("Print each argument", "Print every argument"),
    )
    .unwrap();
    let run = p.ws.user.run(&p.ws.agent, &["mcp", "serve"]);
    let run = run.fails_with(&["print-args 1.0.0", "toolreg install"]);
    assert!(
        run.stdout.is_empty(),
        "stdout must carry protocol only: {}",
        run.stdout
    );
    // --tools serves a subset, which the edit does not touch
    let ok = p.ws.user.run_with_stdin(
        &p.ws.agent,
        &["mcp", "serve", "--tools", "echo-issue,create_issue"],
        "",
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stderr.contains("serving 2 tool(s)"), "{}", ok.stderr);
    let unknown =
        p.ws.user
            .run(&p.ws.agent, &["mcp", "serve", "--tools", "nope"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("--tools nope"),
        "{}",
        unknown.stderr
    );

    // a kind the project's policy does not allow
    let toml_path = p.ws.agent.join("toolreg.toml");
    let mut text = std::fs::read_to_string(&toml_path).unwrap();
    text.push_str("\n[policy]\nallow = [\"http\", \"prompt\", \"schema\", \"function\"]\n");
    std::fs::write(&toml_path, text).unwrap();
    p.ws.user
        .run(&p.ws.agent, &["mcp", "serve", "--tools", "hang"])
        .fails_with(&["hang 1.0.0", "`command`", "toolreg.toml:"]);

    // a runtime that is not there
    let mut text = std::fs::read_to_string(&toml_path).unwrap();
    text.push_str("\n[runtime]\nnode = \"/nonexistent/node\"\n");
    std::fs::write(&toml_path, text).unwrap();
    p.ws.user
        .run(&p.ws.agent, &["mcp", "serve", "--tools", "echo-issue"])
        .fails_with(&[
            "toolreg.toml",
            "[runtime] node = \"/nonexistent/node\"",
            "no such executable",
        ]);
}

#[test]
fn two_pins_exporting_one_tool_name_are_refused_naming_both() {
    let mut ws = Workspace::start();
    for (name, rel) in [
        ("weather-a", "mcp/spec-with-default-2020-12-input-schema"),
        ("weather-b", "mcp/spec-with-explicit-draft-07-input-schema"),
    ] {
        let dir = ws.root().join(name);
        copy_dir(&corpus_tool(rel), &dir);
        write_tool_manifest(&dir, name, "1.0.0");
        ws.publish_and_add(name, &dir);
    }
    ws.install_and_stop_registry();
    let run = ws.user.run(&ws.agent, &["mcp", "serve"]).fails_with(&[
        "weather-a 1.0.0",
        "weather-b 1.0.0",
        "both export the tool",
    ]);
    assert!(run.stdout.is_empty());
}
