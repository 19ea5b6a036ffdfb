//! The fuzz targets' inputs replayed as ordinary tests (issue 10), and the
//! explicit limits that keep hostile input from hanging the registry or
//! exhausting its memory, each shown answering with a clear error.
//!
//! Every file under `fuzz/seeds/<target>/` and `core/tests/fuzz_regressions/<target>/`
//! goes through the very function the libFuzzer target calls (the target
//! bodies are included from `fuzz/src/targets.rs`), so this runs on the stable
//! toolchain in CI and a crash, once fixed and saved here, can't come back.
//! The Shinkai corpus may not be copied into the repository, so its files are
//! read from `../shared/corpus` (skipped with a message when absent).

mod common;

#[allow(dead_code)]
#[path = "../../fuzz/src/targets.rs"]
mod targets;

use std::fs;
use std::path::{Path, PathBuf};

use toolreg_core::bundle::{pack, unpack, Limits};
use toolreg_core::formats::{load_file, MAX_DEFINITION_BYTES};
use toolreg_core::manifest::{ToolToml, MAX_MANIFEST_BYTES};
use toolreg_core::{load, Error, ToolFiles};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every regular file under `dir`, sorted (none if `dir` is absent).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else if path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Run `body` on `input`, reporting the file by name if it panics.
fn replay(target: &str, body: fn(&[u8]), file: &Path) {
    let bytes = fs::read(file).unwrap();
    if std::panic::catch_unwind(|| body(&bytes)).is_err() {
        panic!("fuzz target {target} panics on {}", file.display());
    }
}

#[test]
fn every_seed_and_saved_crash_replays_without_panic() {
    let dirs = [
        repo().join("fuzz/seeds"),
        repo().join("core/tests/fuzz_regressions"),
    ];
    let mut replayed = 0;
    for (target, body) in targets::CORE_TARGETS {
        for dir in &dirs {
            for file in files_under(&dir.join(target)) {
                replay(target, *body, &file);
                replayed += 1;
            }
        }
    }
    // The committed seeds alone are more than this; fewer means the paths broke.
    assert!(
        replayed >= 50,
        "only {replayed} inputs replayed; are fuzz/seeds and core/tests/fuzz_regressions there?"
    );
}

#[test]
fn every_shinkai_corpus_file_replays_without_panic() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let files: Vec<_> = files_under(&corpus.join("shinkai"))
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "metadata.json"))
        .collect();
    assert!(!files.is_empty());
    for file in files {
        replay("shinkai_json", targets::shinkai_json, &file);
    }
}

/// Every corpus file, of every format, through its target (the corpus is
/// where the Shinkai seeds come from at fuzzing time, too).
#[test]
fn every_corpus_file_replays_through_its_target() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    for file in files_under(&corpus) {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let body: fn(&[u8]) = match name {
            "definition.yaml" | "definition.yml" => targets::matimo_yaml,
            "metadata.json" => targets::shinkai_json,
            "tool.json" => targets::mcp_json,
            "prompt.json" => targets::prompt_json,
            _ => continue,
        };
        replay(name, body, &file);
    }
}

/// Every real Agent Skill's `SKILL.md`, and every Markdown file beside
/// one, through the `skill_md` target.
#[test]
fn every_real_skill_replays_through_its_target() {
    let Some(skills) = toolreg_test_support::skills() else {
        return;
    };
    let files: Vec<_> = files_under(&skills)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "md") && f.parent() != Some(&skills))
        .collect();
    assert!(files.len() > 100, "{} Markdown files", files.len());
    for file in files {
        replay("skill_md", targets::skill_md, &file);
    }
}

/// Markdown's hiding constructs, torn apart and shuffled: what a fuzzer
/// would build from the `skill_md` seeds, run through the target on every
/// test run (the scanner must never slice inside a character or run past
/// the text).
const MARKDOWN_PIECES: &[&str] = &[
    "<!--",
    "-->",
    "[",
    "]",
    "(",
    ")",
    "](",
    "\"",
    "'",
    "`",
    "``",
    "```",
    "~~~",
    "\n",
    "\n\n",
    "\r\n",
    "<span hidden>",
    "</span>",
    "<div style=\"display:none\">",
    "</div>",
    "<script>",
    "<p style='font-size:0'>",
    "<input type=hidden/>",
    "ä",
    "🧑\u{200d}💻",
    "\u{feff}",
    " ",
    "run this",
    "you must",
    "[//]: # ",
    "https://x.test",
    "\\",
    ":",
    "<",
    ">",
    "/",
    "---",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
    #[test]
    fn shuffled_markdown_never_breaks_the_skill_target(
        front in proptest::bool::ANY,
        pieces in proptest::collection::vec(proptest::sample::select(MARKDOWN_PIECES), 0..80),
    ) {
        let mut text = String::new();
        if front {
            text.push_str("---\nname: a-b\ndescription: d\nmetadata:\n  version: \"1\"\n---\n");
        }
        text.extend(pieces);
        targets::skill_md(text.as_bytes());
    }
}

/// Markdown built to make a naive scanner quadratic — backtick runs that
/// never close, `](` with unclosed titles, `<` without `>`, hidden
/// elements without their closing tag — is scanned in linear time: 1 MiB
/// of each takes well under the bound even unoptimized (a quadratic scan
/// takes minutes).
#[test]
fn hostile_markdown_is_scanned_in_linear_time() {
    let mib = 1024 * 1024;
    let mut ticks = String::new();
    let mut n = 1;
    while ticks.len() < mib {
        ticks.push_str(&"`".repeat(n % 300 + 1));
        ticks.push('x');
        n += 1;
    }
    let cases = [
        ("unclosed code spans", ticks),
        ("unclosed link titles", "](x \"".repeat(mib / 5)),
        ("destinations without end", "](".repeat(mib / 2)),
        ("tags without `>`", "<a".repeat(mib / 2)),
        (
            "hidden elements without a close",
            "<b hidden>x\n\n".repeat(mib / 14),
        ),
        (
            "nested hidden elements",
            format!(
                "{}{}",
                "<b hidden>".repeat(mib / 20),
                "</b>".repeat(mib / 8)
            ),
        ),
    ];
    for (what, text) in cases {
        let started = std::time::Instant::now();
        let parts = toolreg_core::lint::markdown::hidden_parts(&text);
        let took = started.elapsed();
        assert!(
            took < std::time::Duration::from_secs(20),
            "{what}: {took:?} for {} parts",
            parts.len()
        );
        // And the whole load, the lint of every part included.
        let skill =
            format!("---\nname: a-b\ndescription: d\nmetadata:\n  version: \"1\"\n---\n{text}");
        let started = std::time::Instant::now();
        let _ = load_file(
            "SKILL.md",
            &skill.as_bytes()[..skill.len().min(MAX_DEFINITION_BYTES)],
        );
        let took = started.elapsed();
        eprintln!("{what}: loaded in {took:?}");
        assert!(
            took < std::time::Duration::from_secs(60),
            "{what}: {took:?}"
        );
    }
}

// ---- Explicit limits: each refuses with an error that names it. ----

/// All problems of a refused definition as one string.
fn refusal(result: Result<toolreg_core::Loaded, Error>) -> String {
    match result {
        Ok(l) => panic!("expected a refusal, loaded {}", l.tool.registry_name),
        Err(Error::Invalid(problems)) => {
            assert!(!problems.is_empty());
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        }
        Err(e) => e.to_string(),
    }
}

const JSON_FORMATS: [&str; 3] = ["metadata.json", "tool.json", "prompt.json"];

#[test]
fn a_yaml_alias_bomb_is_refused_by_the_parser_budget() {
    // "Billion laughs": 9 levels of 10 aliases each would expand to 10^9 nodes.
    let mut yaml = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = format!("*a{}", i - 1);
        yaml.push_str(&format!("a{i}: &a{i} [{}]\n", vec![p; 10].join(", ")));
    }
    let start = std::time::Instant::now();
    let err = refusal(load_file("definition.yaml", yaml.as_bytes()));
    assert!(err.contains("exceeds the parser's limits"), "{err}");
    assert!(err.contains("budget"), "the error names the budget: {err}");
    // Expanded, it would be 10^9 nodes; refused, it takes well under a
    // second in release builds (the fuzz target replays this file with
    // -timeout=2). 10 s leaves room for a debug build on a busy machine.
    assert!(
        start.elapsed().as_secs() < 10,
        "refused only after {:?}",
        start.elapsed()
    );

    // Many aliases of one small anchor are refused too (max_aliases).
    let many = format!("a: &a x\nb: [{}]\n", vec!["*a"; 5000].join(", "));
    let err = refusal(load_file("definition.yaml", many.as_bytes()));
    assert!(err.contains("exceeds the parser's limits"), "{err}");
}

#[test]
fn ten_thousand_deep_nesting_is_refused_in_every_format() {
    let depth = 10_000;
    let yaml = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let err = refusal(load_file("definition.yaml", yaml.as_bytes()));
    assert!(err.contains("recursion limit exceeded"), "{err}");

    // Block style: `- - - … x` nests a sequence per `- `.
    let block_yaml = format!("{}x\n", "- ".repeat(depth));
    let err = refusal(load_file("definition.yaml", block_yaml.as_bytes()));
    assert!(err.contains("exceeds the parser's limits"), "{err}");

    // serde_json's default recursion limit (128) is in force for every JSON format.
    let json = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let objects = format!("{}{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
    for file in JSON_FORMATS {
        for doc in [&json, &objects] {
            let err = refusal(load_file(file, doc.as_bytes()));
            assert!(err.contains("recursion limit exceeded"), "{file}: {err}");
        }
    }
    // Just under the JSON limit still parses (the limit is serde_json's 128, not luck).
    let ok_depth = format!(
        "{{\"name\":\"deep_tool\",\"inputSchema\":{{\"type\":\"object\",\"x\":{}1{}}}}}",
        "[".repeat(120),
        "]".repeat(120)
    );
    let err = refusal(load_file("tool.json", ok_depth.as_bytes()));
    assert!(!err.contains("recursion limit"), "{err}");

    let toml = format!(
        "[tool]\nkeywords = {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let problems = ToolToml::parse(&toml).unwrap_err();
    let err = problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        err.contains("toolreg.toml: is not valid TOML") && err.contains("max recursion depth"),
        "{err}"
    );
    let tables = format!(
        "[tool]\nauthors = {}{}\n",
        "{a=".repeat(depth),
        "}".repeat(depth)
    );
    let err = ToolToml::parse(&tables).unwrap_err()[0].to_string();
    assert!(err.contains("max recursion depth"), "{err}");
}

#[test]
fn a_1e400_number_is_refused_not_turned_into_infinity() {
    for file in JSON_FORMATS {
        let doc = r#"{"name":"big_number","version":"1.0.0","description":"d","inputSchema":{"type":"object","maximum":1e400},"parameters":{"type":"object","maximum":1e400},"metadata":{"prompt_name":"p","parameters":{"temperature":1e400}}}"#;
        let err = refusal(load_file(file, doc.as_bytes()));
        assert!(err.contains("number out of range"), "{file}: {err}");
    }
    let yaml = "name: big-number\nversion: 1.0.0\ndescription: d\nparameters:\n  n:\n    type: number\n    default: 1e400\nexecution:\n  type: http\n  method: GET\n  url: https://example.com\n";
    let err = refusal(load_file("definition.yaml", yaml.as_bytes()));
    assert!(err.contains("non-finite float `1e400` rejected"), "{err}");

    // An unknown key is only a warning, so this is refused for the number alone.
    let toml = "[tool]\nname = \"big-number\"\nversion = \"1.0.0\"\nweight = 1e400\n";
    let err = ToolToml::parse(toml).unwrap_err()[0].to_string();
    assert!(err.contains("toolreg.toml: is not valid TOML"), "{err}");
    eprintln!("{err}");
}

#[test]
fn ten_megabyte_strings_are_refused_by_the_size_caps() {
    let big = "x".repeat(10 * 1024 * 1024);
    let json = format!(
        r#"{{"name":"big_string","description":"{big}","inputSchema":{{"type":"object"}}}}"#
    );
    for file in JSON_FORMATS {
        let err = refusal(load_file(file, json.as_bytes()));
        assert!(
            err.contains(&format!("at most {MAX_DEFINITION_BYTES} bytes")),
            "{file}: {err}"
        );
    }
    let yaml = format!("name: big-string\ndescription: {big}\n");
    let err = refusal(load_file("definition.yaml", yaml.as_bytes()));
    assert!(
        err.contains(&format!("at most {MAX_DEFINITION_BYTES} bytes")),
        "{err}"
    );

    // toolreg.toml beside a definition has its own, smaller cap.
    let mut files = ToolFiles::new();
    files.insert(
        "tool.json",
        br#"{"name":"big_manifest","inputSchema":{"type":"object"}}"#.to_vec(),
    );
    files.insert(
        "toolreg.toml",
        format!("[tool]\nversion = \"1.0.0\"\ndescription = \"{big}\"\n"),
    );
    let err = refusal(load(&files));
    assert!(
        err.contains("toolreg.toml")
            && err.contains(&format!("at most {MAX_MANIFEST_BYTES} bytes")),
        "{err}"
    );

    // A 10 MB file inside a bundle is within the 64 MiB unpacked limit, but
    // a bundle over it is refused by name.
    let mut files = ToolFiles::new();
    files.insert("README.md", big.clone());
    let bundle = pack(&files).unwrap();
    let small = Limits {
        max_unpacked: 1024 * 1024,
        ..Limits::default()
    };
    let err = unpack(&bundle, &small).unwrap_err().to_string();
    assert!(err.contains("max_unpacked"), "{err}");
    assert_eq!(unpack(&bundle, &Limits::default()).unwrap(), files);
}

#[test]
fn a_decompression_bomb_is_refused_by_the_unpacked_limit() {
    // 80 MiB of zeros in one entry compress to ~80 KiB.
    let mut files = ToolFiles::new();
    files.insert("zeros.bin", vec![0u8; 80 * 1024 * 1024]);
    let bundle = pack(&files).unwrap();
    assert!(bundle.len() < 1024 * 1024);
    let err = unpack(&bundle, &Limits::default()).unwrap_err().to_string();
    assert!(err.contains("max_unpacked = 67108864 bytes"), "{err}");
}
