//! The transparency log's signing key through the real `toolreg-server`
//! binary: generated into `<data>/log-key` (0600) on first start and reused
//! after a restart; given by `TOOLREG_LOG_KEY` or `--log-key-file` so
//! replicas share it; a `--log-origin` that doesn't match the key, or a key
//! file that doesn't exist, stops the server with the reason. Also: two
//! replicas on one PostgreSQL database with one shared key assign dense,
//! unique log indexes to concurrent publishes and sign identical checkpoints.

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};

use common::{registry_with, BundleBuilder};
use reqwest::blocking::Client;
use toolreg_core::tlog::{self, Checkpoint, Signer, Verifier};
use toolreg_test_support::{ServerProcess, Services};

fn key_of(server: &ServerProcess) -> String {
    Client::new()
        .get(server.api("/api/v1/log/key"))
        .send()
        .unwrap()
        .text()
        .unwrap()
        .trim()
        .to_string()
}

fn checkpoint_of(server: &ServerProcess, key: &str) -> (Checkpoint, String) {
    let note = Client::new()
        .get(server.api("/api/v1/log/checkpoint"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    (
        Checkpoint::open(&note, &Verifier::parse(key).unwrap()).expect("checkpoint verifies"),
        note,
    )
}

#[test]
fn a_generated_key_is_private_and_survives_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let first = registry_with(&data, &[]).serve(&["--log-origin", "registry.test/log"]);
    let key = key_of(&first);
    assert!(key.starts_with("registry.test/log+"), "{key}");
    let path = data.join("log-key");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("PRIVATE+KEY+registry.test/log+"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the key file is readable by its owner only");
    }
    drop(first);
    // Restarted (without --log-origin): same key, origin taken from it.
    let second = registry_with(&data, &[]).serve(&[]);
    assert_eq!(key_of(&second), key);
    assert_eq!(checkpoint_of(&second, &key).0.origin, "registry.test/log");
}

#[test]
fn bad_key_configuration_stops_the_server_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let signer = Signer::from_seed("shared.test/log", [9u8; 32]).unwrap();
    let run = |env: &[(&str, &str)], args: &[&str]| {
        let mut cmd = registry_with(&data, &[]).command();
        cmd.args(["serve", "--listen", "127.0.0.1:0"]).args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(
            !out.status.success(),
            "server started with a bad key configuration"
        );
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let key = signer.to_key_string();
    let err = run(
        &[("TOOLREG_LOG_KEY", key.as_str())],
        &["--log-origin", "other.test/log"],
    );
    assert!(
        err.contains("shared.test/log") && err.contains("--log-origin"),
        "{err}"
    );
    let err = run(
        &[(
            "TOOLREG_LOG_KEY",
            "PRIVATE+KEY+shared.test/log+00000000+AAAA",
        )],
        &[],
    );
    assert!(err.contains("TOOLREG_LOG_KEY"), "{err}");
    let missing = tmp.path().join("no-such-key");
    let err = run(&[], &["--log-key-file", missing.to_str().unwrap()]);
    assert!(err.contains("does not exist"), "{err}");
}

fn publish(server: &ServerProcess, token: &str, name: &str, version: &str) -> i64 {
    let res = server.publish(
        &Client::new(),
        token,
        BundleBuilder::http(name, version).pack(),
    );
    assert_eq!(res.status(), 201);
    res.json::<serde_json::Value>().unwrap()["log_index"]
        .as_i64()
        .unwrap()
}

#[test]
fn replicas_sharing_a_key_agree_on_one_log() {
    let Some(services) = Services::postgres_and_s3() else {
        return;
    };
    let signer = Signer::from_seed("replicas.test/log", [5u8; 32]).unwrap();
    let mut env = services.env();
    env.push(("TOOLREG_LOG_KEY".to_string(), signer.to_key_string()));
    let tmp = tempfile::tempdir().unwrap();
    let (data_a, data_b) = (tmp.path().join("a"), tmp.path().join("b"));
    let token = registry_with(&data_a, &env).create_user("alice", "verified", false);
    let a = Arc::new(registry_with(&data_a, &env).serve(&[]));
    let b = Arc::new(registry_with(&data_b, &env).serve(&[]));
    assert_eq!(key_of(&a), signer.verifier_key());
    assert_eq!(key_of(&b), signer.verifier_key());

    // 16 publishes at once, half on each replica.
    let barrier = Arc::new(Barrier::new(16));
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let (server, token, barrier) = (
                if i % 2 == 0 { a.clone() } else { b.clone() },
                token.clone(),
                barrier.clone(),
            );
            std::thread::spawn(move || {
                barrier.wait();
                publish(
                    &server,
                    &token,
                    &format!("replica-tool-{}", i % 4),
                    &format!("1.0.{i}"),
                )
            })
        })
        .collect();
    let indexes: BTreeSet<i64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(indexes, (0..16).collect(), "every index once, none skipped");

    // Both replicas sign the same checkpoint once it covers all 16.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (cp_a, note_a) = checkpoint_of(&a, &signer.verifier_key());
    let (cp_b, note_b) = checkpoint_of(&b, &signer.verifier_key());
    assert_eq!(cp_a.size, 16);
    assert_eq!(cp_b, cp_a);
    assert_eq!(note_a, note_b, "identical notes from both replicas");
    // A proof from B verifies against A's checkpoint.
    let proof: serde_json::Value = Client::new()
        .get(b.api("/api/v1/log/proof/replica-tool-1/1.0.5"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let hashes: Vec<tlog::Hash> = proof["proof"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| tlog::Hash::from_base64(h.as_str().unwrap(), "hash").unwrap())
        .collect();
    let leaf = tlog::leaf_hash(proof["record"].as_str().unwrap().as_bytes());
    tlog::verify_inclusion(
        proof["index"].as_u64().unwrap(),
        16,
        &leaf,
        &hashes,
        &cp_a.root,
    )
    .unwrap();
    let out = registry_with(&data_a, &env).run(&["verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn log_key_prints_a_new_usable_key() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let out = registry_with(&data, &[]).run(&["log-key", "--origin", "keys.test/log"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let private = String::from_utf8(out.stdout).unwrap();
    let signer = Signer::from_key_string(&private).expect("stdout is a signer key");
    assert_eq!(signer.name(), "keys.test/log");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&signer.verifier_key()));
    // The printed key is what a replica serves when given it.
    let env = vec![("TOOLREG_LOG_KEY".to_string(), private.trim().to_string())];
    let server = registry_with(&data, &env).serve(&[]);
    assert_eq!(key_of(&server), signer.verifier_key());
    let bad = registry_with(&data, &[]).run(&["log-key", "--origin", "has space"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--origin"));
}
