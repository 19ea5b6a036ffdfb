//! Lint throughput (placeholder, filled in below).
fn main() {}
