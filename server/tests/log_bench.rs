//! Benchmark of proof generation at 1,000,000 records (goal: ≤ 1 ms),
//! run by `bench/tlog.sh` (ignored in the normal test run because filling
//! the store takes a while). The stored hashes of a 1,000,000-leaf tree are
//! computed with the core functions and written straight into a real
//! database through the server's own tables; proofs are then generated the
//! way the endpoints do it (`DbHashes` over a pooled connection) and timed.
//!
//! `TOOLREG_BENCH_LEAVES` changes the number of leaves; `TOOLREG_BENCH_PG=1`
//! also runs it on PostgreSQL (a database made from `TOOLREG_TEST_DATABASE_URL`).

use std::time::{Duration, Instant};

use diesel::prelude::*;
use rand::Rng;
use toolreg_core::tlog::{self, MemoryHashes, StoredIndex};
use toolreg_server::db::{Db, DbConnection};
use toolreg_server::transparency::store::DbHashes;
use toolreg_test_support::Services;

fn leaves() -> u64 {
    std::env::var("TOOLREG_BENCH_LEAVES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

/// Every stored hash of a tree of `n` leaves, computed in memory.
fn stored_hashes(n: u64) -> Vec<(StoredIndex, tlog::Hash)> {
    let mut mem = MemoryHashes::new();
    let mut out = Vec::with_capacity(2 * n as usize);
    for i in 0..n {
        let record = tlog::record(
            &format!("bench-{}", i % 1000),
            &format!("1.0.{i}"),
            &format!("{i:064x}"),
        );
        let leaf = tlog::leaf_hash(record.as_bytes());
        out.extend(tlog::stored_hashes_for_record(i, leaf, &mut mem).unwrap());
        mem.append(leaf).unwrap();
    }
    out
}

fn fill(conn: &mut DbConnection, hashes: &[(StoredIndex, tlog::Hash)], postgres: bool) {
    conn.transaction::<_, diesel::result::Error, _>(|conn| {
        for chunk in hashes.chunks(2000) {
            let values: Vec<String> = chunk
                .iter()
                .map(|(i, h)| {
                    let blob = if postgres {
                        format!("'\\x{}'::bytea", h.to_hex())
                    } else {
                        format!("X'{}'", h.to_hex())
                    };
                    format!("({}, {}, {}, {blob})", i.id(), i.level, i.n)
                })
                .collect();
            diesel::sql_query(format!(
                "INSERT INTO log_hashes (id, level, n, hash) VALUES {}",
                values.join(",")
            ))
            .execute(conn)?;
        }
        Ok(())
    })
    .expect("fill log_hashes");
}

struct Stats {
    mean: Duration,
    p50: Duration,
    p99: Duration,
    max: Duration,
}

fn time(samples: usize, mut f: impl FnMut()) -> Stats {
    let mut times: Vec<Duration> = (0..samples)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    let total: Duration = times.iter().sum();
    Stats {
        mean: total / samples as u32,
        p50: times[samples / 2],
        p99: times[samples * 99 / 100],
        max: times[samples - 1],
    }
}

fn report(what: &str, s: &Stats) {
    println!(
        "{what:<48} mean {:>7.1} µs  p50 {:>7.1} µs  p99 {:>7.1} µs  max {:>7.1} µs",
        s.mean.as_secs_f64() * 1e6,
        s.p50.as_secs_f64() * 1e6,
        s.p99.as_secs_f64() * 1e6,
        s.max.as_secs_f64() * 1e6
    );
}

fn bench(db: &Db, label: &str, hashes: &[(StoredIndex, tlog::Hash)], n: u64) {
    let mut conn = db.conn().unwrap();
    let t = Instant::now();
    fill(&mut conn, hashes, label == "postgres");
    println!(
        "{label}: stored {} hashes for {n} leaves in {:.1} s",
        hashes.len(),
        t.elapsed().as_secs_f64()
    );
    let mut rng = rand::rng();
    let root = tlog::tree_hash(n, &mut DbHashes(&mut conn)).unwrap();

    let inclusion = time(2000, || {
        let index = rng.random_range(0..n);
        let proof = tlog::prove_inclusion(n, index, &mut DbHashes(&mut conn)).unwrap();
        assert!(proof.len() <= 21);
    });
    report(
        &format!("{label}: inclusion proof, tree of {n}"),
        &inclusion,
    );

    // Check some of them really verify (the timing loop doesn't).
    for index in [0, n / 3, n - 1] {
        let proof = tlog::prove_inclusion(n, index, &mut DbHashes(&mut conn)).unwrap();
        let record = tlog::record(
            &format!("bench-{}", index % 1000),
            &format!("1.0.{index}"),
            &format!("{index:064x}"),
        );
        tlog::verify_inclusion(index, n, &tlog::leaf_hash(record.as_bytes()), &proof, &root)
            .unwrap();
    }

    let mut rng = rand::rng();
    let consistency = time(2000, || {
        let from = rng.random_range(1..n);
        tlog::prove_consistency(from, n, &mut DbHashes(&mut conn)).unwrap();
    });
    report(
        &format!("{label}: consistency proof, m → {n}"),
        &consistency,
    );

    let root_time = time(200, || {
        tlog::tree_hash(n, &mut DbHashes(&mut conn)).unwrap();
    });
    report(
        &format!("{label}: checkpoint root, tree of {n}"),
        &root_time,
    );

    assert!(
        inclusion.p50 < Duration::from_millis(1),
        "{label}: median inclusion proof over 1 ms"
    );
    assert!(
        consistency.p50 < Duration::from_millis(1),
        "{label}: median consistency proof over 1 ms"
    );
}

#[test]
#[ignore = "fills a 1,000,000-leaf store; run by bench/tlog.sh"]
fn proofs_at_a_million_records() {
    let n = leaves();
    let t = Instant::now();
    let hashes = stored_hashes(n);
    println!(
        "computed {} stored hashes for {n} leaves in {:.1} s",
        hashes.len(),
        t.elapsed().as_secs_f64()
    );

    // In memory: the cost of the tree arithmetic and hashing alone.
    let mut mem = MemoryHashes::new();
    for i in 0..n {
        let record = tlog::record(
            &format!("bench-{}", i % 1000),
            &format!("1.0.{i}"),
            &format!("{i:064x}"),
        );
        mem.append(tlog::leaf_hash(record.as_bytes())).unwrap();
    }
    let mut rng = rand::rng();
    let s = time(20000, || {
        tlog::prove_inclusion(n, rng.random_range(0..n), &mut mem).unwrap();
    });
    report(&format!("memory: inclusion proof, tree of {n}"), &s);

    let dir = tempfile::tempdir().unwrap();
    let db = Db::connect(&format!(
        "sqlite://{}",
        dir.path().join("bench.db").display()
    ))
    .unwrap();
    db.migrate().unwrap();
    bench(&db, "sqlite", &hashes, n);

    if std::env::var_os("TOOLREG_BENCH_PG").is_some() {
        let services = Services::postgres_only().expect("TOOLREG_BENCH_PG is set: PostgreSQL");
        let db = Db::connect(&services.database_url().expect("a database")).unwrap();
        db.migrate().unwrap();
        bench(&db, "postgres", &hashes, n);
    }
}
