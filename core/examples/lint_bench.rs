//! The definition lint measured on real and generated tool definitions:
//! how many poisoned ones it catches and how many ordinary ones it blocks
//! or flags. Run by `bench/lint-bench`; the figures go to
//! `bench/README.md`.
//!
//! Four sets:
//!
//! * the lint benchmark's poisoned definitions (from public security
//!   research): caught = at least one flag or block;
//! * its ordinary definitions (real servers' tools);
//! * the corpus of real tools of every format;
//! * the real Agent Skills (`skills/`), each read whole: frontmatter,
//!   body and text files;
//! * ordinary tools made by the tests' deterministic generator.
//!
//! Each definition is linted the way `toolreg validate` lints it, alone:
//! the registry knows nothing of its siblings. With `--siblings` the
//! definitions of one source server are each other's siblings too (what
//! the registry knows at publish when one owner publishes a server's
//! tools). Options: `--verbose` lists every finding of a caught, flagged
//! or missed definition; `--markdown` prints the table for the README;
//! `--data DIR` adds a set of files in the benchmark's format (each with
//! `tool` and `label`), split by label: other public benchmarks, say.

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use toolreg_core::lint::{self, Finding, Severity};
use toolreg_core::ToolFiles;

/// One definition to lint, with the source server it belongs to.
struct Case {
    name: String,
    poisoned: bool,
    group: String,
    files: ToolFiles,
}

#[derive(Default)]
struct Tally {
    total: usize,
    blocked: usize,
    flagged: usize,
    noted: usize,
    clean: usize,
}

impl Tally {
    fn add(&mut self, fs: &[Finding]) {
        self.total += 1;
        if fs.iter().any(|f| f.severity == Severity::Block) {
            self.blocked += 1;
        } else if fs.iter().any(|f| f.severity == Severity::Flag) {
            self.flagged += 1;
        } else if !fs.is_empty() {
            self.noted += 1;
        } else {
            self.clean += 1;
        }
    }

    fn caught(&self) -> usize {
        self.blocked + self.flagged
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut verbose, mut markdown, mut siblings) = (false, false, false);
    let mut extra: Vec<String> = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--verbose" | "-v" => verbose = true,
            "--markdown" => markdown = true,
            "--siblings" => siblings = true,
            "--data" => match args.next() {
                Some(dir) => extra.push(dir),
                None => usage("--data needs a directory"),
            },
            other => usage(&format!("unknown option `{other}`")),
        }
    }
    let Some(bench) = toolreg_test_support::lint_bench() else {
        return;
    };
    let generated = common::ordinary::generated_tools(240)
        .into_iter()
        .map(|(name, files)| Case {
            poisoned: false,
            group: "generated".into(),
            name,
            files,
        })
        .collect();
    let mut sets: Vec<(String, Vec<Case>)> = vec![
        (
            "lint-bench poisoned".into(),
            bench_set(&bench.join("poisoned")),
        ),
        ("lint-bench benign".into(), bench_set(&bench.join("benign"))),
        ("corpus".into(), corpus_set()),
        ("skills".into(), skills_set()),
        ("generated ordinary".into(), generated),
    ];
    for dir in &extra {
        let (poisoned, benign): (Vec<Case>, Vec<Case>) = bench_set(Path::new(dir))
            .into_iter()
            .partition(|c| c.poisoned);
        sets.push((format!("{dir} poisoned"), poisoned));
        sets.push((format!("{dir} benign"), benign));
    }
    let mut rows = Vec::new();
    for (set, cases) in &sets {
        if cases.is_empty() {
            continue;
        }
        let poisoned = set.ends_with("poisoned");
        let groups = if siblings {
            sibling_names(cases)
        } else {
            BTreeMap::new()
        };
        let mut tally = Tally::default();
        let mut unloadable = 0;
        let mut rules: BTreeMap<String, usize> = BTreeMap::new();
        for case in cases {
            let Some(fs) = lint_case(case, groups.get(&case.group)) else {
                unloadable += 1;
                continue;
            };
            tally.add(&fs);
            let mut seen: Vec<String> = fs.iter().map(|f| f.rule.to_string()).collect();
            seen.sort();
            seen.dedup();
            for r in seen {
                *rules.entry(r).or_default() += 1;
            }
            let caught = fs.iter().any(|f| f.severity != Severity::Note);
            let report = if poisoned {
                verbose || !caught
            } else {
                caught || (verbose && !fs.is_empty())
            };
            if report {
                let what = match (poisoned, caught) {
                    (true, true) => "caught",
                    (true, false) => "MISSED",
                    (false, true) => "FLAGGED",
                    (false, false) => "noted",
                };
                println!("{what}: {}", case.name);
                for f in &fs {
                    println!("    {f}");
                }
            }
        }
        if unloadable > 0 {
            eprintln!("{set}: {unloadable} definitions do not load and are left out");
        }
        let rules = rules
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        rows.push((set.clone(), poisoned, tally, rules));
    }
    println!();
    if markdown {
        println!("| set | definitions | caught (blocked + flagged) | blocked | flagged | noted only | clean |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        for (set, _, t, _) in &rows {
            println!(
                "| {set} | {} | {} | {} | {} | {} | {} |",
                t.total,
                t.caught(),
                t.blocked,
                t.flagged,
                t.noted,
                t.clean
            );
        }
    } else {
        for (set, poisoned, t, rules) in &rows {
            let head = if *poisoned {
                format!("caught {}/{}", t.caught(), t.total)
            } else {
                format!("{} definitions", t.total)
            };
            println!(
                "{set}: {head}: {} blocked, {} flagged, {} noted only, {} clean; rules (definitions): {rules}",
                t.blocked, t.flagged, t.noted, t.clean
            );
        }
    }
}

fn usage(why: &str) -> ! {
    eprintln!("lint_bench: {why} (options: --verbose, --markdown, --siblings, --data DIR)");
    std::process::exit(2);
}

/// Lint one definition alone, or knowing `siblings` (the other call names
/// of its source server).
fn lint_case(case: &Case, siblings: Option<&Vec<String>>) -> Option<Vec<Finding>> {
    let loaded = toolreg_core::load(&case.files).ok()?;
    let Some(siblings) = siblings else {
        return Some(loaded.findings);
    };
    let mut ctx = lint::Context::of(&loaded.tool);
    ctx.know_siblings(siblings.iter().map(String::as_str));
    let doc = lint::parse_definition(loaded.tool.format, &loaded.tool.original);
    let manifest = case
        .files
        .get("toolreg.toml")
        .and_then(|m| std::str::from_utf8(m).ok());
    Some(lint::check_parsed(&ctx, doc.as_ref(), manifest))
}

/// The call names of each group's definitions.
fn sibling_names(cases: &[Case]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for case in cases {
        if let Ok(loaded) = toolreg_core::load(&case.files) {
            out.entry(case.group.clone())
                .or_default()
                .push(loaded.tool.call_name.clone());
        }
    }
    out
}

/// The benchmark's JSON files in `dir`: each an MCP tool under `tool`, made
/// into a tool directory with a `toolreg.toml` giving a registry name and
/// version (the files carry neither).
fn bench_set(dir: &Path) -> Vec<Case> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a readable file");
            let doc: Value = serde_json::from_str(&text).expect("a JSON file");
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("a UTF-8 file name");
            let mut files = ToolFiles::new();
            files.insert(
                "tool.json",
                serde_json::to_vec_pretty(&doc["tool"]).expect("JSON"),
            );
            files.insert(
                "toolreg.toml",
                format!(
                    "[tool]\nname = \"{}\"\nversion = \"1.0.0\"\nlicense = \"MIT\"\n",
                    registry_name(stem)
                ),
            );
            Case {
                poisoned: doc["label"] == "poisoned",
                name: stem.to_string(),
                group: doc["group"].as_str().unwrap_or(stem).to_string(),
                files,
            }
        })
        .collect()
}

/// A valid registry name from a file name: lowercase kebab-case, at most 50
/// characters.
fn registry_name(stem: &str) -> String {
    let mut out = String::new();
    for c in stem.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out
        .chars()
        .rev()
        .take(50)
        .collect::<String>()
        .chars()
        .rev()
        .collect();
    while out.starts_with(|c: char| !c.is_ascii_lowercase()) {
        out.remove(0);
    }
    out.trim_end_matches('-').to_string()
}

/// Every real Agent Skill, read from its folder (so its name is checked
/// against the folder's), with a `toolreg.toml` giving the version.
fn skills_set() -> Vec<Case> {
    let Some(root) = toolreg_test_support::skills() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut dirs: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("SKILL.md").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .filter_map(|dir| {
            let name = dir.file_name()?.to_str()?.to_string();
            let mut files = ToolFiles::read_dir(&dir).ok()?;
            files.insert(
                "toolreg.toml",
                format!("[tool]\nname = \"{name}\"\nversion = \"1.0.0\"\n"),
            );
            Some(Case {
                poisoned: false,
                group: format!("skills/{name}"),
                files,
                name: format!("skills/{name}"),
            })
        })
        .collect()
}

/// Every definition of the corpus that loads (the known-broken ones left
/// out), as one group per format directory.
fn corpus_set() -> Vec<Case> {
    let Some(root) = common::corpus() else {
        return Vec::new();
    };
    let broken: Vec<String> = common::known_broken(&root)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    common::definition_files(&root)
        .into_iter()
        .filter(|rel| !broken.contains(rel))
        .map(|rel| Case {
            poisoned: false,
            group: rel.split('/').take(2).collect::<Vec<_>>().join("/"),
            files: common::complete_tool_dir(&root, &rel),
            name: rel,
        })
        .collect()
}
