//! Definition fingerprints and version diffs on real corpus definitions
//! (`../shared/corpus`, or the checked-in fixtures when it is absent): the
//! fingerprint of one tool (MCP export, RFC 8785 form, SHA-256), of a raw
//! tools/list entry, and the diff of two different definitions.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use toolreg_core::{diff, fingerprint, Tool};

fn load(root: &std::path::Path, rel: &str) -> Tool {
    toolreg_core::load(&common::complete_tool_dir(root, rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .tool
}

fn bench(c: &mut Criterion) {
    let (root, a, b) = match common::corpus() {
        Some(root) => (
            root,
            "mcp/github-create_issue/tool.json",
            "mcp/github-issue_write/tool.json",
        ),
        None => (
            common::fixtures(),
            "mcp/github-create_issue/tool.json",
            "matimo/hubspot-get-contact/definition.yaml",
        ),
    };
    let old = load(&root, a);
    let new = load(&root, b);
    let raw = toolreg_core::export::to_mcp(&new);

    let mut group = c.benchmark_group("fingerprint");
    group.bench_function("of_tool (export + JCS + SHA-256)", |bench| {
        bench.iter(|| fingerprint::of_tool(black_box(&old)))
    });
    group.bench_function("of_mcp (a tools/list entry)", |bench| {
        bench.iter(|| fingerprint::of_mcp(black_box(&raw)))
    });
    group.finish();

    let mut group = c.benchmark_group("diff");
    group.bench_function("between_tools (two exports + diff)", |bench| {
        bench.iter(|| diff::between_tools(black_box(&old), black_box(&new)))
    });
    let (d1, d2) = (old.description.clone(), new.description.clone());
    group.bench_function("words (two descriptions)", |bench| {
        bench.iter(|| diff::words(black_box(&d1), black_box(&d2)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
