//! Migrations on a registry that already holds data: a database is built at
//! the schema before the `version_contents` migration (2026-11-24) with
//! versions as the server of that schema wrote them — canonical manifests of
//! real corpus tools, definitions, READMEs, bundles in the blob store — then
//! the real `toolreg-server migrate` runs, and the real server must answer
//! every version exactly as the stored texts say: tool summary fields (now
//! read from `versions.summary`), the version's manifest, definition and
//! README (now in `version_contents`), the definition export, search (the
//! index is built from the migrated rows) and `verify` (digests unchanged).
//! The tools get their stored summaries (`tool_summaries`, 2026-11-25) from
//! the server at start-up, and the summaries checked are those rows; the
//! versions get their definition fingerprints (`versions.definition_sha256`,
//! NULL after the 2026-11-26 migration) at start-up too, computed from the
//! stored manifests, and a second start rewrites none of them.
//! Runs on SQLite + files and on PostgreSQL + S3.
//!
//! Summaries stored before `tool_summaries.listed_version_id` (2026-11-27)
//! existed get the version their tool is listed under at start-up too, and
//! the summary, search and the web index then list the tool under it.

mod common;

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use diesel::prelude::*;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness};
use serde_json::Value;
use toolreg_core::ToolFiles;
use toolreg_server::blobs::BlobStore;
use toolreg_server::db::{POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS};

use common::{corpus_dir, registry_with, BundleBuilder, TestApp};
use toolreg_core::Tier;
use toolreg_test_support::{both_backends, eventually, ServerProcess, Services};

/// The first migration this test leaves for `toolreg-server migrate`.
const SPLIT: &str = "20261124000000";

/// One version as the old server stored it.
struct OldVersion {
    name: &'static str,
    version: &'static str,
    manifest: Value,
    definition_file: String,
    definition: String,
    readme: Option<String>,
    bundle: Vec<u8>,
    sha256: String,
    /// The definition fingerprint publish would have stored.
    fingerprint: String,
}

fn old_version(corpus: &str, name: &'static str, version: &'static str) -> OldVersion {
    let mut files = ToolFiles::read_dir(&corpus_dir(corpus)).expect("read corpus dir");
    files.insert(
        "toolreg.toml",
        format!("[tool]\nname = \"{name}\"\nversion = \"{version}\"\n"),
    );
    let tool = toolreg_core::load(&files).expect("corpus tool loads").tool;
    let bundle = toolreg_core::bundle::pack(&files).expect("pack");
    OldVersion {
        name,
        version,
        manifest: serde_json::to_value(&tool).expect("manifest"),
        definition_file: tool.definition_file.clone(),
        definition: tool.original_text(),
        readme: files
            .get("README.md")
            .map(|b| String::from_utf8_lossy(b).into_owned()),
        sha256: toolreg_core::digest::sha256_hex(&bundle),
        fingerprint: toolreg_core::fingerprint::of_tool(&tool),
        bundle,
    }
}

fn corpus_versions() -> Vec<OldVersion> {
    vec![
        // Matimo, with a README in the bundle.
        old_version("matimo/slack_send_channel_message", "slack-post", "1.0.0"),
        // MCP, keywords from no toolreg.toml: an empty list.
        old_version("mcp/github-create_issue", "gh-create-issue", "0.3.1"),
        // The prompt format.
        old_version("prompt/sql-from-question", "sql-from-question", "2.0.0"),
    ]
}

/// Every migration before [`SPLIT`], as the old server ran them.
fn migrate_before_split<DB: diesel::backend::Backend>(
    conn: &mut impl MigrationHarness<DB>,
    source: EmbeddedMigrations,
) {
    let pending = conn.pending_migrations(source).expect("list migrations");
    let mut ran = 0;
    for migration in pending {
        if migration.name().version().to_string().as_str() >= SPLIT {
            continue;
        }
        conn.run_migration(&migration).expect("old migration");
        ran += 1;
    }
    assert!(ran >= 3, "the migrations before {SPLIT} ran");
}

/// The rows the old publish path wrote, in the old `versions` layout.
fn old_rows(versions: &[OldVersion]) -> Vec<String> {
    let at = "'2026-11-01 10:00:00'";
    let q = |s: &str| s.replace('\'', "''");
    let mut sql = vec![format!(
        "INSERT INTO users (id, login, tier, is_admin, created_at) VALUES (1, 'alice', 'trusted', FALSE, {at})"
    )];
    for (i, v) in versions.iter().enumerate() {
        let id = i + 1;
        sql.push(format!(
            "INSERT INTO tools (id, name, normalized_name, created_at, updated_at, downloads) \
             VALUES ({id}, '{name}', '{name}', {at}, {at}, {d})",
            name = v.name,
            d = 10 * id
        ));
        sql.push(format!(
            "INSERT INTO tool_owners (tool_id, user_id, created_at) VALUES ({id}, 1, {at})"
        ));
        sql.push(format!(
            "INSERT INTO changes (seq, tool_id, tool_name, version, kind, created_at) \
             VALUES ({id}, {id}, '{name}', '{ver}', 'publish', {at})",
            name = v.name,
            ver = v.version
        ));
        sql.push(format!(
            "INSERT INTO versions (id, tool_id, version, version_key, sha256, size, format, execution, \
             manifest, definition_file, definition, readme, publisher_id, token_id, publisher_tier, \
             yanked, blocked, blocked_reason, downloads, published_at) VALUES ({id}, {id}, '{ver}', '{ver}', \
             '{sha}', {size}, '{format}', '{exec}', '{manifest}', '{file}', '{definition}', {readme}, 1, NULL, \
             'trusted', FALSE, FALSE, NULL, {d}, {at})",
            ver = v.version,
            sha = v.sha256,
            size = v.bundle.len(),
            format = v.manifest["format"].as_str().expect("format"),
            exec = v.manifest["execution"]["kind"].as_str().expect("kind"),
            manifest = q(&v.manifest.to_string()),
            file = q(&v.definition_file),
            definition = q(&v.definition),
            readme = v
                .readme
                .as_deref()
                .map(|r| format!("'{}'", q(r)))
                .unwrap_or_else(|| "NULL".into()),
            d = 10 * id
        ));
    }
    sql
}

fn execute_all<C>(conn: &mut C, statements: &[String])
where
    C: diesel::Connection,
    diesel::query_builder::SqlQuery: diesel::query_dsl::methods::ExecuteDsl<C>,
{
    for statement in statements {
        diesel::sql_query(statement)
            .execute(conn)
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
}

fn get(client: &reqwest::blocking::Client, server: &ServerProcess, path: &str) -> Value {
    let res = client.get(server.api(path)).send().expect("GET");
    assert_eq!(res.status().as_u16(), 200, "GET {path}");
    res.json().expect("JSON body")
}

/// Rows of `tool_summaries`.
fn count_summaries<C>(conn: &mut C) -> i64
where
    C: diesel::Connection,
    diesel::query_builder::SqlQuery: diesel::query_dsl::methods::LoadQuery<'static, C, Count>,
{
    diesel::sql_query("SELECT COUNT(*) AS n FROM tool_summaries")
        .get_result::<Count>(conn)
        .expect("count tool_summaries")
        .n
}

/// `versions.definition_sha256` of every version, in id order.
fn stored_fingerprints<C>(conn: &mut C) -> Vec<Option<String>>
where
    C: diesel::Connection,
    diesel::query_builder::SqlQuery: diesel::query_dsl::methods::LoadQuery<'static, C, Fingerprint>,
{
    diesel::sql_query("SELECT definition_sha256 FROM versions ORDER BY id")
        .load::<Fingerprint>(conn)
        .expect("read fingerprints")
        .into_iter()
        .map(|f| f.definition_sha256)
        .collect()
}

#[derive(QueryableByName)]
struct Fingerprint {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    definition_sha256: Option<String>,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// Migrate with the real binary, serve, and compare every answer with the
/// texts the old rows held. The old tools have no stored summary: the
/// server stores them at start-up (`stored_summaries` counts them), and the
/// answers below are read from those rows.
fn check_migrated(
    data: &Path,
    env: &[(String, String)],
    versions: &[OldVersion],
    stored_summaries: &dyn Fn() -> i64,
    fingerprints: &dyn Fn() -> Vec<Option<String>>,
) {
    let out = registry_with(data, env).run(&["migrate"]);
    assert!(
        out.status.success(),
        "migrate: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stored_summaries(), 0, "the migration stores no summaries");
    assert_eq!(
        fingerprints(),
        vec![None; versions.len()],
        "the migration adds the fingerprint column empty"
    );
    let server = registry_with(data, env).serve(&[]);
    eventually(
        Duration::from_secs(10),
        "the old tools' summaries are stored",
        || (stored_summaries() == versions.len() as i64).then_some(()),
    );
    let client = reqwest::blocking::Client::new();
    for (i, v) in versions.iter().enumerate() {
        let m = &v.manifest;
        let tool = get(&client, &server, &format!("/api/v1/tools/{}", v.name));
        assert_eq!(tool["call_name"], m["call_name"], "{}", v.name);
        assert_eq!(
            tool["title"],
            m.get("title").cloned().unwrap_or(Value::Null)
        );
        assert_eq!(tool["description"], m["description"]);
        assert_eq!(tool["keywords"], m["keywords"]);
        assert_eq!(
            tool["license"],
            m.get("license").cloned().unwrap_or(Value::Null)
        );
        assert_eq!(
            tool["homepage"],
            m.get("homepage").cloned().unwrap_or(Value::Null)
        );
        assert_eq!(tool["latest_version"], v.version);
        assert_eq!(tool["downloads"], 10 * (i as i64 + 1));
        assert_eq!(tool["owners"][0]["login"], "alice");
        assert_eq!(tool["versions"][0]["sha256"], v.sha256.as_str());

        let version = get(
            &client,
            &server,
            &format!("/api/v1/tools/{}/{}", v.name, v.version),
        );
        assert_eq!(&version["manifest"], m, "{}", v.name);
        assert_eq!(version["definition_file"], v.definition_file.as_str());
        assert_eq!(
            version["definition_sha256"],
            v.fingerprint.as_str(),
            "{}: the fingerprint filled in at start-up is the one publish computes",
            v.name
        );
        assert_eq!(version["definition"], v.definition.as_str());
        assert_eq!(
            version["readme"],
            v.readme.clone().map(Value::from).unwrap_or(Value::Null)
        );

        let native = client
            .get(server.api(&format!(
                "/api/v1/tools/{}/{}/definition",
                v.name, v.version
            )))
            .send()
            .expect("GET definition");
        assert_eq!(native.status().as_u16(), 200);
        assert_eq!(native.text().expect("body"), v.definition);

        // The index follows the change log from the migrated rows.
        let query = format!("/api/v1/search?q={}", v.name.replace('-', "+"));
        let (hit, _) = eventually(Duration::from_secs(5), "search finds the tool", || {
            let hits = get(&client, &server, &query);
            hits["hits"]
                .as_array()
                .and_then(|h| h.iter().find(|h| h["name"] == v.name))
                .cloned()
        });
        assert_eq!(hit["keywords"], m["keywords"]);
        assert_eq!(hit["description"], m["description"]);
        assert_eq!(hit["definition_sha256"], v.fingerprint.as_str());
    }
    drop(server);
    let filled: Vec<Option<String>> = versions
        .iter()
        .map(|v| Some(v.fingerprint.clone()))
        .collect();
    assert_eq!(fingerprints(), filled);
    // A second start finds nothing to fill and leaves every fingerprint as it was.
    let server = registry_with(data, env).serve(&[]);
    let version = get(
        &client,
        &server,
        &format!("/api/v1/tools/{}/{}", versions[0].name, versions[0].version),
    );
    assert_eq!(
        version["definition_sha256"],
        versions[0].fingerprint.as_str()
    );
    drop(server);
    assert_eq!(fingerprints(), filled);
    let verify = registry_with(data, env).run(&["verify"]);
    assert!(
        verify.status.success(),
        "verify after the migration: {}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
}

async fn store_bundles(storage: &str, options: Vec<(String, String)>, versions: &[OldVersion]) {
    let blobs = BlobStore::open_with(storage, options).expect("blob store");
    for v in versions {
        blobs
            .put_bundle(&v.sha256, Bytes::from(v.bundle.clone()))
            .await
            .expect("store bundle");
    }
}

#[actix_web::test]
async fn sqlite_registry_with_data_migrates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let versions = corpus_versions();
    {
        let path = dir.path().join("toolreg.db");
        let mut conn =
            diesel::SqliteConnection::establish(&path.display().to_string()).expect("sqlite");
        migrate_before_split(&mut conn, SQLITE_MIGRATIONS);
        execute_all(&mut conn, &old_rows(&versions));
    }
    let storage = format!("file://{}", dir.path().join("objects").display());
    store_bundles(&storage, vec![], &versions).await;
    let data = dir.path().to_path_buf();
    actix_web::web::block(move || {
        let db = data.join("toolreg.db").display().to_string();
        let summaries =
            || count_summaries(&mut diesel::SqliteConnection::establish(&db).expect("sqlite"));
        let fingerprints =
            || stored_fingerprints(&mut diesel::SqliteConnection::establish(&db).expect("sqlite"));
        check_migrated(&data, &[], &versions, &summaries, &fingerprints);
        // The large texts left `versions`, and every row was rewritten
        // compactly (no page kept per old multi-KB row).
        let mut conn =
            diesel::SqliteConnection::establish(&data.join("toolreg.db").display().to_string())
                .expect("sqlite");
        #[derive(QueryableByName)]
        struct Name {
            #[diesel(sql_type = diesel::sql_types::Text)]
            name: String,
        }
        let columns: Vec<String> =
            diesel::sql_query("SELECT name FROM pragma_table_info('versions')")
                .load::<Name>(&mut conn)
                .expect("table_info")
                .into_iter()
                .map(|n| n.name)
                .collect();
        assert!(columns.contains(&"summary".to_string()), "{columns:?}");
        // The server filled in the SemVer order of the migrated versions.
        let unordered: i64 = toolreg_server::schema::versions::table
            .filter(toolreg_server::schema::versions::version_order.eq(""))
            .count()
            .get_result(&mut conn)
            .expect("count unordered versions");
        assert_eq!(unordered, 0, "versions without a stored order");
        for gone in ["manifest", "definition_file", "definition", "readme"] {
            assert!(!columns.contains(&gone.to_string()), "{columns:?}");
        }
    })
    .await
    .expect("check");
}

#[actix_web::test]
async fn postgres_registry_with_data_migrates() {
    // `Services` talks to S3 with a blocking client: not on the test's executor.
    let prepared = actix_web::web::block(|| {
        let services = Services::postgres_and_s3()?;
        let versions = corpus_versions();
        let env = services.env();
        let url = services.database_url().expect("database url");
        let mut conn = toolreg_server::db::connect_postgres(&url).expect("postgres");
        migrate_before_split(&mut conn, POSTGRES_MIGRATIONS);
        execute_all(&mut conn, &old_rows(&versions));
        // The identity sequences, as the old inserts would have moved them.
        for table in ["users", "tools", "versions", "changes"] {
            diesel::sql_query(format!(
                "SELECT setval(pg_get_serial_sequence('{table}', '{id}'), (SELECT MAX({id}) FROM {table}))",
                id = if table == "changes" { "seq" } else { "id" }
            ))
            .execute(&mut conn)
            .expect("setval");
        }
        Some((services, env, versions))
    })
    .await
    .expect("prepare");
    let Some((services, env, versions)) = prepared else {
        return;
    };
    let storage = services.storage_url().expect("storage");
    store_bundles(&storage, services.s3_options(), &versions).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().to_path_buf();
    actix_web::web::block(move || {
        let url = services.database_url().expect("database url");
        let summaries =
            || count_summaries(&mut toolreg_server::db::connect_postgres(&url).expect("postgres"));
        let fingerprints = || {
            stored_fingerprints(&mut toolreg_server::db::connect_postgres(&url).expect("postgres"))
        };
        check_migrated(&data, &env, &versions, &summaries, &fingerprints);
        drop(services);
    })
    .await
    .expect("check");
}

/// The listed version id of every stored summary, by tool id.
async fn listed_ids(app: &TestApp) -> Vec<(i64, Option<i64>)> {
    use toolreg_server::schema::tool_summaries;
    app.state
        .db
        .read(|conn| {
            Ok(tool_summaries::table
                .order(tool_summaries::tool_id.asc())
                .select((tool_summaries::tool_id, tool_summaries::listed_version_id))
                .load::<(i64, Option<i64>)>(conn)?)
        })
        .await
        .expect("read the listed versions")
}

/// A registry whose summaries were stored before the listed version was:
/// the column is dropped and its migration forgotten, then the real
/// `migrate` adds it back empty and the real `serve` fills it in.
async fn summaries_without_a_listed_version_get_it_at_start(app: TestApp) {
    let alice = app.user("alice", Tier::Verified).await;
    let admin = app.admin("root", Tier::Trusted).await;
    for (name, version) in [
        ("listing", "1.0.0"),
        ("listing", "2.0.0"),
        ("held", "1.0.0"),
        ("held", "1.1.0"),
    ] {
        app.publish_ok(&alice, BundleBuilder::http(name, version).pack())
            .await;
    }
    let yank = app
        .client
        .delete(app.api("/api/v1/tools/listing/2.0.0/yank"))
        .bearer_auth(&alice)
        .send()
        .await
        .expect("yank");
    assert_eq!(yank.status(), 200);
    let held = app
        .client
        .put(app.api("/api/v1/tools/held/1.1.0/quarantine"))
        .bearer_auth(&admin)
        .json(&serde_json::json!({"reason": "reads SSH keys"}))
        .send()
        .await
        .expect("quarantine");
    assert_eq!(held.status(), 200);
    let listed = listed_ids(&app).await;
    assert!(
        listed.iter().all(|(_, id)| id.is_some()),
        "every write stores the listed version: {listed:?}"
    );

    // As the server before the column left them.
    app.state
        .db
        .write(|conn| {
            diesel::sql_query("ALTER TABLE tool_summaries DROP COLUMN listed_version_id")
                .execute(conn)?;
            diesel::sql_query(
                "DELETE FROM __diesel_schema_migrations WHERE version = '20261127000000'",
            )
            .execute(conn)?;
            Ok(())
        })
        .await
        .expect("undo the migration");
    let out = app.binary(&["migrate"]);
    assert!(
        out.status.success(),
        "migrate: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let empty: Vec<(i64, Option<i64>)> = listed.iter().map(|(t, _)| (*t, None)).collect();
    assert_eq!(
        listed_ids(&app).await,
        empty,
        "the migration adds the column empty"
    );

    let registry = app.registry().clone();
    let server = actix_web::web::block(move || registry.serve(&[]))
        .await
        .expect("serve");
    let started = std::time::Instant::now();
    while listed_ids(&app).await != listed {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the listed versions were not filled in: {:?}",
            listed_ids(&app).await
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    let client = reqwest::Client::new();
    let get = |path: String| {
        let client = client.clone();
        async move {
            let res = client.get(path).send().await.expect("GET");
            assert_eq!(res.status(), 200);
            res.json::<Value>().await.expect("JSON")
        }
    };
    for name in ["listing", "held"] {
        let tool = get(server.api(&format!("/api/v1/tools/{name}"))).await;
        assert_eq!(tool["latest_version"], "1.0.0", "{name}: {tool:#}");
    }
    let started = std::time::Instant::now();
    loop {
        let hits = get(server.api("/api/v1/search?q=&sort=name")).await;
        let listed: Vec<(String, String)> = hits["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|h| (h["name"].to_string(), h["version"].to_string()))
            .collect();
        let want = vec![
            ("\"held\"".to_string(), "\"1.0.0\"".to_string()),
            ("\"listing\"".to_string(), "\"1.0.0\"".to_string()),
        ];
        if listed == want {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "search lists {listed:?}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    drop(server);
}

both_backends!(async TestApp::start => summaries_without_a_listed_version_get_it_at_start);
