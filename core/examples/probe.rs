#[path = "../tests/common/mod.rs"]
mod common;
use std::time::Instant;
fn main() {
    let root = common::corpus().unwrap();
    let broken: Vec<String> = common::known_broken(&root)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    let cases: Vec<_> = common::definition_files(&root)
        .into_iter()
        .filter(|r| !broken.contains(r))
        .map(|rel| common::complete_tool_dir(&root, &rel))
        .collect();
    let n = 300;
    let t = Instant::now();
    for _ in 0..n {
        for f in &cases {
            std::hint::black_box(toolreg_core::load(f).ok());
        }
    }
    println!(
        "load: {:.1} us/def",
        t.elapsed().as_secs_f64() * 1e6 / (n as f64 * cases.len() as f64)
    );
}
