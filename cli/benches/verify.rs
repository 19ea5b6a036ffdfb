//! `toolreg verify` over 100 installed pins: a project whose toolreg.lock
//! pins 100 tools, each installed from a bundle of a real corpus definition
//! (`../shared/corpus`, or core's checked-in fixtures when it is absent)
//! under its own registry name. Measured twice: the check itself (every
//! file hashed against the manifest, every definition loaded and its
//! fingerprint recomputed) and the `toolreg verify` process end to end.

mod pins;

use std::process::Command;

use criterion::{criterion_group, criterion_main, Criterion};
use toolreg_cli::commands::verify;
use toolreg_cli::install;
use toolreg_cli::lock::Lockfile;

const PINS: usize = 100;

fn bench(c: &mut Criterion) {
    let project = pins::project(PINS);
    let root = project.path();
    let lock = Lockfile::load(root).unwrap().unwrap();
    let states = verify::check_all(root, &lock).unwrap();
    assert!(
        states
            .iter()
            .all(|(_, s)| matches!(s, install::State::Intact { .. })),
        "every benchmarked pin is intact"
    );

    let mut group = c.benchmark_group("verify");
    group.sample_size(20);
    group.bench_function(format!("check {PINS} installed pins"), |b| {
        b.iter(|| verify::check_all(root, &lock).unwrap())
    });
    let exe = env!("CARGO_BIN_EXE_toolreg");
    group.bench_function(format!("`toolreg verify` process, {PINS} pins"), |b| {
        b.iter(|| {
            let out = Command::new(exe)
                .arg("verify")
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
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
