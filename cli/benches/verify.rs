//! `toolreg verify` over 100 installed pins: a project whose toolreg.lock
//! pins 100 tools, each installed from a bundle of a real corpus definition
//! (`../shared/corpus`, or core's checked-in fixtures when it is absent)
//! under its own registry name. Measured three times: the offline checks
//! themselves (every file hashed against the manifest, every definition
//! loaded and its fingerprint recomputed, the policy and the record of what
//! the registry said), and the `toolreg verify` process end to end, with
//! `--offline` and without (asking a registry that can't be reached).

mod pins;

use std::process::Command;

use criterion::{criterion_group, criterion_main, Criterion};
use toolreg_cli::admission::offline;
use toolreg_cli::admission::record::Record;
use toolreg_cli::admission::Policy;
use toolreg_cli::install;
use toolreg_cli::lock::Lockfile;

const PINS: usize = 100;

fn bench(c: &mut Criterion) {
    let project = pins::project(PINS);
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
