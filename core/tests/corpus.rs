//! Every real definition in the corpus (`../shared/corpus`) and in the
//! checked-in fixtures is handled right: valid ones load (with a
//! `toolreg.toml` where the format lacks a name or version), known-broken
//! ones are refused with their reason, non-SemVer versions are refused with
//! a fix, and each format maps to its execution kind.

mod common;

use std::path::Path;

use toolreg_core::{load, Error, ExecutionKind, Format};

fn expected_kind(rel: &str) -> ExecutionKind {
    match rel {
        "matimo/calculator/definition.yaml"
        | "matimo/execute/definition.yaml"
        | "matimo/notion_create_page/definition.yaml"
        | "matimo/postgres-execute-sql/definition.yaml" => ExecutionKind::Function,
        "matimo/valid-tool/definition.yaml" => ExecutionKind::Command,
        r if r.starts_with("matimo/") => ExecutionKind::Http,
        r if r.starts_with("shinkai/") => ExecutionKind::Function,
        r if r.starts_with("mcp/") => ExecutionKind::Schema,
        r if r.starts_with("prompt/") => ExecutionKind::Prompt,
        r => panic!("no expectation for {r}"),
    }
}

fn check_valid_files(root: &Path) -> usize {
    let broken: Vec<String> = common::known_broken(root)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    let mut n = 0;
    for rel in common::definition_files(root) {
        if broken.contains(&rel) {
            continue;
        }
        let files = common::complete_tool_dir(root, &rel);
        let loaded = match load(&files) {
            Ok(l) => l,
            Err(e) => panic!("{rel} should load, got: {e}\n{:#?}", e.problems()),
        };
        let tool = &loaded.tool;
        assert_eq!(tool.execution.kind, expected_kind(&rel), "{rel}");
        assert!(
            toolreg_core::name::is_valid(&tool.registry_name),
            "{rel}: {}",
            tool.registry_name
        );
        assert!(!tool.call_name.is_empty(), "{rel}");
        assert_eq!(
            tool.original,
            std::fs::read(root.join(&rel)).unwrap(),
            "{rel}: original must be byte-for-byte"
        );
        assert_eq!(tool.parameters["type"], "object", "{rel}");
        let expected_format = match rel.split('/').next().unwrap() {
            "matimo" => Format::Matimo,
            "shinkai" => Format::Shinkai,
            "mcp" => Format::Mcp,
            _ => Format::Prompt,
        };
        assert_eq!(tool.format, expected_format, "{rel}");
        n += 1;
    }
    n
}

fn check_known_broken(root: &Path) {
    let broken = common::known_broken(root);
    assert!(!broken.is_empty());
    for (rel, _reason) in broken {
        let files = common::complete_tool_dir(root, &rel);
        let err = load(&files).expect_err(&rel);
        let Error::Invalid(problems) = &err else {
            panic!("{rel}: expected Invalid, got {err}")
        };
        let text = err.to_string();
        if rel.starts_with("matimo/") {
            assert!(
                text.contains("not a tool: a provider definition"),
                "{rel}: {text}"
            );
            assert_eq!(problems[0].path, "type");
        } else {
            assert!(
                text.contains(
                    "a tools/list result with 1 tool, not one Tool; use `toolreg import`"
                ),
                "{rel}: {text}"
            );
        }
    }
}

#[test]
fn every_valid_corpus_file_loads() {
    let Some(root) = common::corpus() else { return };
    let n = check_valid_files(&root);
    assert!(n >= 30, "only {n} files checked");
}

#[test]
fn every_valid_fixture_loads() {
    let root = common::fixtures();
    // The fixtures have no KNOWN_BROKEN.txt; they share the corpus's list.
    let n = check_valid_files_with(
        &root,
        &[
            "matimo/github-provider/definition.yaml",
            "mcp/lists/spec-tools-list-with-cursor-and-ttl.json",
        ],
    );
    assert_eq!(n, 10 + 12);
}

fn check_valid_files_with(root: &Path, broken: &[&str]) -> usize {
    let mut n = 0;
    for rel in common::definition_files(root) {
        if broken.contains(&rel.as_str()) {
            continue;
        }
        let files = common::complete_tool_dir(root, &rel);
        let loaded = load(&files).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(loaded.tool.execution.kind, expected_kind(&rel), "{rel}");
        n += 1;
    }
    n
}

#[test]
fn known_broken_corpus_files_are_refused_with_their_reason() {
    let Some(root) = common::corpus() else { return };
    check_known_broken(&root);
}

#[test]
fn known_broken_fixtures_are_refused_with_their_reason() {
    let root = common::fixtures();
    for rel in [
        "matimo/github-provider/definition.yaml",
        "mcp/lists/spec-tools-list-with-cursor-and-ttl.json",
    ] {
        let err = load(&common::complete_tool_dir(&root, rel)).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("not a tool: a provider definition")
                || text.contains("a tools/list result with 1 tool"),
            "{text}"
        );
    }
}

#[test]
fn non_semver_versions_need_a_toolreg_toml() {
    let Some(root) = common::corpus() else { return };
    for (rel, raw) in [
        ("shinkai/stagehand-generic/metadata.json", "`1`"),
        ("prompt/tone-rewriter/prompt.json", "`3`"),
    ] {
        let files = common::tool_dir(&root, rel);
        let err = load(&files).unwrap_err();
        let problems = err.problems();
        assert_eq!(problems.len(), 1, "{rel}: {problems:?}");
        let p = &problems[0];
        assert_eq!(p.path, "version", "{rel}");
        assert!(p.message.contains(raw), "{rel}: {}", p.message);
        let fix = p.fix.as_deref().unwrap();
        assert!(
            fix.contains("1.0.0") && fix.contains("[tool].version") && fix.contains("toolreg.toml"),
            "{fix}"
        );

        let mut files = files;
        files.insert("toolreg.toml", "[tool]\nversion = \"2.1.0\"\n");
        let loaded = load(&files).unwrap();
        assert_eq!(loaded.tool.version.to_string(), "2.1.0");
    }
}

#[test]
fn shinkai_display_names_need_a_toolreg_name() {
    let Some(root) = common::corpus() else { return };
    let files = common::tool_dir(&root, "shinkai/twitter-post/metadata.json");
    let err = load(&files).unwrap_err();
    let p = &err.problems()[0];
    assert_eq!(p.path, "name");
    assert!(p.message.contains("X/Twitter Post"), "{}", p.message);
    assert!(p.fix.as_deref().unwrap().contains("[tool].name"));
    assert!(p.fix.as_deref().unwrap().contains("x-twitter-post"));
}

#[test]
fn shinkai_registry_names_come_from_id_and_titles_from_name() {
    let Some(root) = common::corpus() else { return };
    let tool = load(&common::complete_tool_dir(
        &root,
        "shinkai/coin-flip/metadata.json",
    ))
    .unwrap()
    .tool;
    assert_eq!(tool.registry_name, "coin-flip");
    assert_eq!(tool.call_name, "coin-flip");
    assert_eq!(tool.title.as_deref(), Some("Coin Flip Tool"));
    assert_eq!(tool.execution.detail["code_file"], "tool.ts");

    let tool = load(&common::complete_tool_dir(
        &root,
        "shinkai/audio-to-text/metadata.json",
    ))
    .unwrap()
    .tool;
    assert_eq!(tool.registry_name, "audio-to-text-transcription");
    assert_eq!(tool.homepage, None, "empty homePage is no homepage");
    assert!(
        tool.extensions.contains_key("homePage"),
        "unknown keys are kept"
    );
    assert!(tool.extensions.contains_key("runner"));

    let tool = load(&common::complete_tool_dir(
        &root,
        "shinkai/linear-create-issue/metadata.json",
    ))
    .unwrap()
    .tool;
    assert!(tool.extensions.contains_key("sql_tables"));
    assert!(tool.extensions.contains_key("output_arg"));
    assert_eq!(
        tool.config_schema.as_ref().unwrap()["required"][0],
        "LINEAR_API_KEY"
    );

    let tool = load(&common::complete_tool_dir(
        &root,
        "shinkai/email-responder/metadata.json",
    ))
    .unwrap()
    .tool;
    assert_eq!(tool.dependencies.len(), 5);

    let tool = load(&common::complete_tool_dir(
        &root,
        "shinkai/hacker-news/metadata.json",
    ))
    .unwrap();
    assert_eq!(tool.tool.license.as_deref(), Some("MIT"));
    assert!(!tool.warnings.iter().any(|w| w.path == "license"));

    let loaded = load(&common::complete_tool_dir(
        &root,
        "shinkai/dev-github/metadata.json",
    ))
    .unwrap();
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.path == "result.properties.data.type"),
        "{:?}",
        loaded.warnings
    );
    assert_eq!(loaded.tool.auth.len(), 1);
}

#[test]
fn prompt_variables_become_parameters() {
    let Some(root) = common::corpus() else { return };
    let tool = load(&common::complete_tool_dir(
        &root,
        "prompt/tone-rewriter/prompt.json",
    ))
    .unwrap()
    .tool;
    let props = &tool.parameters["properties"];
    assert_eq!(props["message"]["type"], "string");
    assert_eq!(props["tones"]["type"], "array");
    assert_eq!(props["tones"]["items"]["enum"][1], "formal");
    assert_eq!(props["tones"]["default"][0], "friendly");
    assert_eq!(tool.registry_name, "tone-rewriter");
    assert!(tool.icons[0]["src"]
        .as_str()
        .unwrap()
        .starts_with("data:image/png;base64,"));

    let tool = load(&common::complete_tool_dir(
        &root,
        "prompt/summarize-text/prompt.json",
    ))
    .unwrap()
    .tool;
    assert_eq!(
        tool.parameters["properties"]["language"]["enum"][0],
        "English"
    );
    assert_eq!(tool.parameters["properties"]["length"]["default"], "3");
    assert_eq!(tool.registry_name, "summarize-text");
    assert_eq!(tool.title.as_deref(), Some("Summarize Text"));
    assert_eq!(tool.authors[0].email.as_deref(), Some("ada@example.com"));
    assert_eq!(tool.model_params.as_ref().unwrap()["max_tokens"], 512);
    assert!(tool.template.as_deref().unwrap().contains("{{length}}"));

    let tool = load(&common::complete_tool_dir(
        &root,
        "prompt/ticket-triage/prompt.json",
    ))
    .unwrap()
    .tool;
    assert_eq!(tool.result.as_ref().unwrap()["enum"][0], "urgent");
    assert!(tool.extensions.contains_key("usage_notes"));
}
