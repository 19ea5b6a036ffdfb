//! `toolreg verify` over 100 installed pins: a project whose toolreg.lock
//! pins 100 tools, each installed from a bundle of a real corpus definition
//! (`../shared/corpus`, or core's checked-in fixtures when it is absent)
//! under its own registry name. Measured three times: the offline checks
//! themselves (every file hashed against the manifest, every definition
//! loaded and its fingerprint recomputed, the policy and the record of what
//! the registry said), and the `toolreg verify` process end to end, with
//! `--offline` and without (asking a registry that can't be reached).

use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{criterion_group, criterion_main, Criterion};
use toolreg_cli::admission::offline;
use toolreg_cli::admission::record::Record;
use toolreg_cli::admission::Policy;
use toolreg_cli::client::Download;
use toolreg_cli::install;
use toolreg_cli::lock::{LockedTool, Lockfile};
use toolreg_core::ToolFiles;

const PINS: usize = 100;

/// Definition files (MCP and Matimo http/command tools, which need no code files).
fn definitions() -> Vec<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = manifest.join("../../shared/corpus");
    let root = if corpus.is_dir() {
        corpus
    } else {
        manifest.join("../core/tests/fixtures")
    };
    let mut out = Vec::new();
    for (format, file) in [("mcp", "tool.json"), ("matimo", "definition.yaml")] {
        let Ok(entries) = std::fs::read_dir(root.join(format)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path().join(file);
            if path.is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A bundle "downloaded" from memory. (The CLI's one error type carries
/// the detail it prints, so it is large; the lint against returning it from
/// a closure does not matter for a bench.)
#[allow(clippy::result_large_err)]
fn local(bytes: Vec<u8>) -> impl FnOnce() -> toolreg_cli::Result<Download> {
    move || {
        Ok(Download {
            url: "file://bench".into(),
            bytes,
        })
    }
}

/// A project with `PINS` installed pins and their toolreg.lock.
fn project() -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    let mut lock = Lockfile::default();
    let mut usable = Vec::new();
    for path in definitions() {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let bytes = std::fs::read(&path).unwrap();
        usable.push((name, bytes));
    }
    let mut i = 0;
    let mut skipped = 0;
    while lock.tools().len() < PINS {
        assert!(skipped < 1000, "no corpus definition loads");
        let (file, bytes) = &usable[i % usable.len()];
        i += 1;
        let name = format!("bench-tool-{:03}", lock.tools().len());
        let mut files = ToolFiles::new();
        files.insert(file.clone(), bytes.clone());
        let version = if file == "tool.json" {
            "version = \"1.0.0\"\n"
        } else {
            ""
        };
        files.insert(
            "toolreg.toml",
            format!("[tool]\nname = \"{name}\"\nlicense = \"MIT\"\n{version}"),
        );
        let Ok(loaded) = toolreg_core::load(&files) else {
            skipped += 1;
            continue;
        };
        let bundle = toolreg_core::bundle::pack(&files).unwrap();
        let pin = LockedTool {
            name,
            version: loaded.tool.version.clone(),
            sha256: toolreg_core::digest::sha256_hex(&bundle),
            registry: "http://127.0.0.1:1".into(),
            execution: loaded.tool.execution.kind,
            definition: Some(toolreg_core::fingerprint::of_tool(&loaded.tool)),
            accepted_findings: Vec::new(),
            provenance: None,
        };
        install::install(project.path(), &pin, local(bundle)).unwrap();
        lock.upsert(pin);
    }
    lock.save(project.path()).unwrap();
    std::fs::write(project.path().join("toolreg.toml"), "[tools]\n").unwrap();
    project
}

fn bench(c: &mut Criterion) {
    let project = project();
    let root = project.path();
    let lock = Lockfile::load(root).unwrap().unwrap();
    let (policy, record) = (Policy::default(), Record::default());
    let checks = offline::check(root, &policy, &lock, &record).unwrap();
    assert!(
        checks
            .iter()
            .all(|c| matches!(c.state, install::State::Intact { .. }) && c.refused.is_empty()),
        "every benchmarked pin is intact"
    );

    let mut group = c.benchmark_group("verify");
    group.sample_size(20);
    group.bench_function(format!("check {PINS} installed pins"), |b| {
        b.iter(|| offline::check(root, &policy, &lock, &record).unwrap())
    });
    let exe = env!("CARGO_BIN_EXE_toolreg");
    // `--offline`: the checks alone, as an MCP server runs them at start;
    // without it the process first asks the pins' registry (here a port
    // that refuses connections, so the record is used).
    for (what, args) in [
        (
            "`toolreg verify --offline` process",
            &["verify", "--offline"][..],
        ),
        (
            "`toolreg verify` process, registry unreachable",
            &["verify"][..],
        ),
    ] {
        group.bench_function(format!("{what}, {PINS} pins"), |b| {
            b.iter(|| {
                let out = Command::new(exe)
                    .args(args)
                    .current_dir(root)
                    .env("TOOLREG_CONFIG_DIR", root.join(".config"))
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
