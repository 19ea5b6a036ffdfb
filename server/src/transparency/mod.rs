//! The transparency log: every publish appends the record
//! `toolreg <name> <version> sha256:<hex>` to an append-only Merkle log in
//! the same database transaction that makes the version visible, and the
//! log's state is published as a checkpoint signed with the registry's
//! Ed25519 key, so clients can check that a pinned digest is the one the
//! registry committed to, for everyone, forever.
//!
//! * [`store`] — the log's tables and the append done by publish.
//! * [`LogService`] — the signing key and the checkpoint cache.
//! * [`verify_log`] — the `toolreg-server verify` checks of the log.
//!
//! Checkpoints are signed on demand: a request for the checkpoint answers
//! the cached one if the log has not grown, or if it was signed less than a
//! second ago; otherwise it computes the root of the current size, signs it
//! and caches it. So while records are being added, a new checkpoint is
//! available at least once a second, and a quiet log signs nothing.
//! Replicas sharing the key sign identical notes (Ed25519 is deterministic).

pub mod store;

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use toolreg_core::tlog::{self, Checkpoint, Signer};

use crate::db::{Db, DbConnection};
use crate::error::{internal, AppResult};
use crate::models::version::VersionRecord;

/// How long a signed checkpoint is answered while newer records exist.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(1);

/// The name of the generated key file inside the data directory.
pub const KEY_FILE: &str = "log-key";

/// Where the log's signing key comes from (the `serve` options).
#[derive(Debug, Clone, Default)]
pub struct KeySource {
    /// The key itself (`PRIVATE+KEY+<origin>+<id>+<base64>`), e.g. from `TOOLREG_LOG_KEY`.
    pub key: Option<String>,
    /// A file holding the key (`--log-key-file`); default `<data>/log-key`.
    pub key_file: Option<PathBuf>,
    /// The log's origin (`--log-origin`); default: the key's name, or for a
    /// new key `<listen address>/log`.
    pub origin: Option<String>,
}

/// Load the signing key, or generate one into `<data>/log-key` (mode 0600)
/// on first start.
pub fn load_signer(source: &KeySource, data_dir: &Path, listen: SocketAddr) -> AppResult<Signer> {
    let signer = if let Some(key) = &source.key {
        Signer::from_key_string(key)
            .map_err(|e| internal(format!("TOOLREG_LOG_KEY / --log-key: {e}")))?
    } else {
        let path = source
            .key_file
            .clone()
            .unwrap_or_else(|| data_dir.join(KEY_FILE));
        if path.exists() {
            let text = std::fs::read_to_string(&path).map_err(|e| {
                internal(format!("cannot read the log key {}: {e}", path.display()))
            })?;
            Signer::from_key_string(&text)
                .map_err(|e| internal(format!("the log key {}: {e}", path.display())))?
        } else if source.key_file.is_some() {
            return Err(internal(format!(
                "the log key file {} does not exist; remove --log-key-file to generate a key in the data directory",
                path.display()
            )));
        } else {
            let origin = source
                .origin
                .clone()
                .unwrap_or_else(|| format!("{listen}/log"));
            let signer = Signer::from_seed(&origin, rand::random::<[u8; 32]>())
                .map_err(|e| internal(format!("--log-origin: {e}")))?;
            write_key_file(&path, &signer.to_key_string())?;
            tracing::info!(path = %path.display(), key = %signer.verifier_key(), "generated the transparency log key; back it up");
            signer
        }
    };
    if let Some(origin) = &source.origin {
        if origin != signer.name() {
            return Err(internal(format!(
                "the log key is for the origin `{}` but --log-origin is `{origin}`; the origin is part of the key, so keep `{}` or make a new key",
                signer.name(),
                signer.name()
            )));
        }
    }
    Ok(signer)
}

/// A new random signing key for `origin`: its private `PRIVATE+KEY+...`
/// line and its public verifier key (`toolreg-server log-key`).
pub fn generate_key(origin: &str) -> AppResult<(String, String)> {
    let signer = Signer::from_seed(origin, rand::random::<[u8; 32]>())
        .map_err(|e| internal(format!("--origin: {e}")))?;
    Ok((signer.to_key_string(), signer.verifier_key()))
}

fn write_key_file(path: &Path, key: &str) -> AppResult<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| internal(format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .map_err(|e| internal(format!("cannot create the log key {}: {e}", path.display())))?;
    file.write_all(format!("{key}\n").as_bytes())
        .and_then(|_| file.sync_all())
        .map_err(|e| internal(format!("cannot write the log key {}: {e}", path.display())))
}

struct Signed {
    checkpoint: Checkpoint,
    note: String,
    at: Instant,
}

/// The log's signing key and its latest signed checkpoint.
#[derive(Clone)]
pub struct LogService {
    signer: Arc<Signer>,
    latest: Arc<Mutex<Option<Arc<Signed>>>>,
}

impl LogService {
    /// A service signing with `signer`.
    pub fn new(signer: Signer) -> LogService {
        LogService {
            signer: Arc::new(signer),
            latest: Arc::new(Mutex::new(None)),
        }
    }

    /// A service with a fresh random key named `toolreg.local/log`, for
    /// embedding and tests; `serve` always replaces it with the configured key.
    pub fn ephemeral() -> LogService {
        // Not a request path: runs once when the state is built, and the
        // constant name is a valid key name.
        let signer = Signer::from_seed("toolreg.local/log", rand::random::<[u8; 32]>())
            .expect("the constant log origin is a valid key name");
        LogService::new(signer)
    }

    /// The verifier key string served at `GET /api/v1/log/key`.
    pub fn verifier_key(&self) -> String {
        self.signer.verifier_key()
    }

    /// Sign `text` (ending in a newline) as a note with the log's key: what
    /// the registry attests besides checkpoints (version attestations).
    pub fn sign_note(&self, text: &str) -> AppResult<String> {
        Ok(self.signer.sign(text)?)
    }

    /// The log's origin.
    pub fn origin(&self) -> &str {
        self.signer.name()
    }

    /// The latest checkpoint and its signed note (see the module docs for
    /// when a new one is signed).
    pub async fn checkpoint(&self, db: &Db) -> AppResult<(Checkpoint, String)> {
        let size = db.read(store::size).await?;
        let cached = self
            .latest
            .lock()
            .map_err(|_| internal("checkpoint cache poisoned"))?
            .clone();
        if let Some(signed) = &cached {
            if signed.checkpoint.size == size
                || (signed.checkpoint.size < size && signed.at.elapsed() < CHECKPOINT_INTERVAL)
            {
                return Ok((signed.checkpoint.clone(), signed.note.clone()));
            }
        }
        let root = db.read(move |conn| store::root(conn, size)).await?;
        let checkpoint = Checkpoint {
            origin: self.signer.name().to_string(),
            size,
            root,
        };
        let note = checkpoint.sign(&self.signer)?;
        let signed = Arc::new(Signed {
            checkpoint: checkpoint.clone(),
            note: note.clone(),
            at: Instant::now(),
        });
        let mut latest = self
            .latest
            .lock()
            .map_err(|_| internal("checkpoint cache poisoned"))?;
        // Keep the larger of two racing signatures.
        if latest
            .as_ref()
            .is_none_or(|l| l.checkpoint.size <= size || l.at.elapsed() >= CHECKPOINT_INTERVAL)
        {
            *latest = Some(signed);
        }
        Ok((checkpoint, note))
    }
}

/// One problem `verify` found in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogProblem(pub String);

/// The `verify` checks of the log: indexes are dense from 0, every record is
/// the text of its version's (name, version, sha256) and hashes to its leaf,
/// every version has exactly one record, and the root recomputed from the
/// records equals the root read from the stored subtree hashes. Returns the
/// problems (empty when all is well) and the log size.
pub fn verify_log(conn: &mut DbConnection) -> AppResult<(Vec<LogProblem>, u64)> {
    let mut problems = Vec::new();
    let entries = store::all_entries(conn)?;
    let versions = VersionRecord::all(conn)?;
    let by_id: std::collections::HashMap<i64, &VersionRecord> =
        versions.iter().map(|v| (v.id, v)).collect();

    let mut memory = tlog::MemoryHashes::new();
    let mut logged = std::collections::HashSet::new();
    for (expected, entry) in entries.iter().enumerate() {
        if entry.idx != expected as i64 {
            problems.push(LogProblem(format!(
                "log index {expected} is missing (next record has index {})",
                entry.idx
            )));
            break;
        }
        let leaf = tlog::leaf_hash(entry.record.as_bytes());
        if leaf.0.as_slice() != entry.leaf_hash.as_slice() {
            problems.push(LogProblem(format!(
                "log record {} does not hash to its stored leaf hash",
                entry.idx
            )));
        }
        memory.append(leaf)?;
        logged.insert(entry.version_id);
        match by_id.get(&entry.version_id) {
            None => problems.push(LogProblem(format!(
                "log record {} names a version that does not exist",
                entry.idx
            ))),
            Some(VersionRecord {
                tool: name,
                version,
                sha256,
                ..
            }) => {
                let want = tlog::record(name, version, sha256);
                if entry.record != want {
                    problems.push(LogProblem(format!(
                        "{name}@{version} sha256:{sha256}: log record {} says {:?}",
                        entry.idx,
                        entry.record.trim_end()
                    )));
                }
            }
        }
    }
    for VersionRecord {
        id,
        tool: name,
        version,
        sha256,
    } in &versions
    {
        if !logged.contains(id) {
            problems.push(LogProblem(format!(
                "{name}@{version} sha256:{sha256}: no log record"
            )));
        }
    }
    let size = memory.size();
    let recomputed = tlog::tree_hash(size, &mut memory)?;
    match store::root(conn, size) {
        Ok(stored) if stored == recomputed => {}
        Ok(stored) => problems.push(LogProblem(format!(
            "the root of the {size} records is {recomputed}, but the stored hashes give {stored}"
        ))),
        Err(e) => problems.push(LogProblem(format!(
            "the stored hashes cannot give the root of {size} records: {e}"
        ))),
    }
    Ok((problems, size))
}
