//! Parse + validate throughput: every valid definition of the corpus
//! (`../shared/corpus`, or the checked-in fixtures when it is absent) is
//! read into memory once — with stand-in code files and a `toolreg.toml`
//! where one is needed — then [`toolreg_core::load`]ed in the loop.
//! Criterion reports the throughput in definitions per second.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

fn corpus_tools() -> Vec<(String, toolreg_core::ToolFiles)> {
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
            vec![
                "matimo/github-provider/definition.yaml".to_string(),
                "mcp/lists/spec-tools-list-with-cursor-and-ttl.json".to_string(),
            ],
        ),
    };
    common::definition_files(&root)
        .into_iter()
        .filter(|rel| !broken.contains(rel))
        .map(|rel| {
            let files = common::complete_tool_dir(&root, &rel);
            (rel, files)
        })
        .collect()
}

fn bench_load(c: &mut Criterion) {
    let all = corpus_tools();
    for (_, files) in &all {
        toolreg_core::load(files).expect("every benchmarked definition is valid");
    }
    let tools: Vec<_> = all.iter().map(|(_, f)| f.clone()).collect();
    let mut group = c.benchmark_group("load");
    group.throughput(Throughput::Elements(tools.len() as u64));
    group.bench_function(format!("corpus ({} definitions)", tools.len()), |b| {
        b.iter(|| {
            for files in &tools {
                black_box(toolreg_core::load(black_box(files)).is_ok());
            }
        })
    });
    // Per format, to see where the time goes.
    for format in ["matimo", "shinkai", "mcp", "prompt"] {
        let subset: Vec<_> = all
            .iter()
            .filter(|(rel, _)| rel.starts_with(format))
            .map(|(_, f)| f.clone())
            .collect();
        if subset.is_empty() {
            continue;
        }
        group.throughput(Throughput::Elements(subset.len() as u64));
        group.bench_function(format!("{format} ({} definitions)", subset.len()), |b| {
            b.iter(|| {
                for files in &subset {
                    black_box(toolreg_core::load(black_box(files)).is_ok());
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_load);
criterion_main!(benches);
