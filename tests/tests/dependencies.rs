//! The CLI must not link the server's frameworks: actix-web, diesel,
//! tantivy, or utoipa (which only the server's `toolreg-api/openapi` uses).

#[test]
fn the_cli_does_not_depend_on_server_frameworks() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .current_dir(toolreg_e2e::workspace_root())
        .args([
            "tree",
            "-p",
            "toolreg",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .output()
        .expect("run cargo tree");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("toolreg-core") && stdout.contains("toolreg-api"),
        "the tree looks wrong:\n{stdout}"
    );
    for forbidden in ["actix-web", "diesel", "tantivy", "utoipa"] {
        let hits: Vec<&str> = stdout
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(forbidden))
            .collect();
        assert!(hits.is_empty(), "toolreg depends on {forbidden}: {hits:?}");
    }
}
