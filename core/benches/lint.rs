//! Lint throughput: every valid definition of the corpus (`../shared/corpus`,
//! or the checked-in fixtures when it is absent) is loaded once, then the
//! lint runs on it in the loop. Criterion reports definitions per second.
//!
//! * `parsed` — [`toolreg_core::lint::check_parsed`] on the parsed
//!   document and the `toolreg.toml` text: what `load` adds to a publish
//!   (it parses the definition once, for itself and the lint).
//! * `from bytes` — [`toolreg_core::lint::check`], which parses the
//!   definition as published again (YAML for Matimo): a rescan of stored
//!   versions.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use toolreg_core::lint;

struct Case {
    rel: String,
    tool: toolreg_core::Tool,
    files: toolreg_core::ToolFiles,
    ctx: lint::Context,
    doc: Option<serde_json::Value>,
    manifest: Option<String>,
}

fn corpus_tools() -> Vec<Case> {
    let (root, broken) = match common::corpus() {
        Some(root) => {
            let broken = common::known_broken(&root)
                .into_iter()
                .map(|(p, _)| p)
                .collect::<Vec<_>>();
            (root, broken)
        }
        None => (
            common::fixtures(),
            vec!["matimo/github-provider/definition.yaml".to_string()],
        ),
    };
    common::definition_files(&root)
        .into_iter()
        .filter(|rel| !broken.contains(rel))
        .map(|rel| {
            let files = common::complete_tool_dir(&root, &rel);
            let tool = toolreg_core::load(&files)
                .expect("every benchmarked definition is valid")
                .tool;
            Case {
                ctx: lint::Context::of(&tool),
                doc: lint::parse_definition(tool.format, &tool.original),
                manifest: files
                    .get("toolreg.toml")
                    .map(|m| String::from_utf8_lossy(m).into_owned()),
                rel,
                tool,
                files,
            }
        })
        .collect()
}

fn parsed(c: &Case) -> Vec<lint::Finding> {
    lint::check_parsed(&c.ctx, c.doc.as_ref(), c.manifest.as_deref())
}

fn bench_lint(c: &mut Criterion) {
    let all = corpus_tools();
    let mut group = c.benchmark_group("lint");
    group.throughput(Throughput::Elements(all.len() as u64));
    group.bench_function(format!("parsed, corpus ({} definitions)", all.len()), |b| {
        b.iter(|| {
            for case in &all {
                black_box(parsed(black_box(case)));
            }
        })
    });
    group.bench_function(
        format!("from bytes, corpus ({} definitions)", all.len()),
        |b| {
            b.iter(|| {
                for case in &all {
                    black_box(lint::check(black_box(&case.tool), black_box(&case.files)));
                }
            })
        },
    );
    // The first lint after the automata were released (`lint::release_unused`
    // twice: unused for a whole period): every pattern is compiled again.
    // What the first publish after a quiet period pays.
    if let Some(first) = all.first() {
        group.throughput(Throughput::Elements(1));
        group.bench_function("parsed, one definition after a release", |b| {
            b.iter(|| {
                lint::release_unused();
                lint::release_unused();
                black_box(parsed(black_box(first)))
            })
        });
    }
    // Per format, to see where the time goes.
    for format in ["matimo", "shinkai", "mcp", "prompt"] {
        let subset: Vec<&Case> = all.iter().filter(|c| c.rel.starts_with(format)).collect();
        if subset.is_empty() {
            continue;
        }
        group.throughput(Throughput::Elements(subset.len() as u64));
        group.bench_function(
            format!("parsed, {format} ({} definitions)", subset.len()),
            |b| {
                b.iter(|| {
                    for case in &subset {
                        black_box(parsed(black_box(case)));
                    }
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench_lint);
criterion_main!(benches);
