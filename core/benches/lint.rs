//! Lint throughput: every valid definition of the corpus (`../shared/corpus`,
//! or the checked-in fixtures when it is absent) is loaded once, then
//! [`toolreg_core::lint::check`] runs on it in the loop — the same call
//! `load` makes, including parsing the definition as published (YAML for
//! Matimo) and `toolreg.toml`. Criterion reports definitions per second.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

fn corpus_tools() -> Vec<(String, toolreg_core::Tool, toolreg_core::ToolFiles)> {
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
            (rel, tool, files)
        })
        .collect()
}

fn bench_lint(c: &mut Criterion) {
    let all = corpus_tools();
    let mut group = c.benchmark_group("lint");
    group.throughput(Throughput::Elements(all.len() as u64));
    group.bench_function(format!("corpus ({} definitions)", all.len()), |b| {
        b.iter(|| {
            for (_, tool, files) in &all {
                black_box(toolreg_core::lint::check(black_box(tool), black_box(files)));
            }
        })
    });
    // Per format, to see where the time goes (Matimo pays for YAML).
    for format in ["matimo", "shinkai", "mcp", "prompt"] {
        let subset: Vec<_> = all
            .iter()
            .filter(|(rel, ..)| rel.starts_with(format))
            .collect();
        if subset.is_empty() {
            continue;
        }
        group.throughput(Throughput::Elements(subset.len() as u64));
        group.bench_function(format!("{format} ({} definitions)", subset.len()), |b| {
            b.iter(|| {
                for (_, tool, files) in &subset {
                    black_box(toolreg_core::lint::check(black_box(tool), black_box(files)));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_lint);
criterion_main!(benches);
