//! The read cache: the answers of the hot read routes, kept in memory so that
//! a repeated `GET /api/v1/tools/{name}`, `GET /api/v1/tools/{name}/{version}`
//! or bundle download costs a map lookup instead of a database round trip.
//!
//! What is kept, in two parts each bounded by bytes (a new entry that is
//! not read again goes first; an entry read since the last eviction sweep
//! stays). The answers share one budget, so the routes the traffic uses get
//! all of it (a fixed third each left the budget of an unused route idle):
//! - **tool answers**: the JSON body of the tool summary, by normalized name;
//! - **version answers**: the JSON body of one version, by normalized name
//!   and version key (build metadata ignored, as the lookup does);
//! - **download targets**: what a download needs to know about a version
//!   (ids, digest, size, blocked and quarantined state), by the same key;
//!
//! and, in a budget of their own,
//! - **bundles**: the bytes of small bundles, by digest. Content-addressed
//!   bytes never change, so these are never stale.
//!
//! # Staleness
//!
//! - A write on this server (publish, yank, unyank, owners, tier change,
//!   download counts flushed) invalidates what it touched **after it
//!   commits**, so a client reads its own writes.
//! - A write on another replica that has a change-log row (publish, yank,
//!   unyank, block, unblock, quarantine, unquarantine) invalidates the
//!   tool's entries here when [`ReadCache::apply_changes`] sees the row;
//!   `serve` polls the log every 100 ms.
//! - What changes without a change-log row (download counts, owners changed
//!   on another replica, an owner's tier shown in the tool summary) may lag
//!   by at most [`TIME_TO_LIVE`].
//!
//! # Fill races
//!
//! A reader that read the database just before a write committed must not
//! put its stale answer in the cache after the writer invalidated it. Every
//! invalidation first bumps [`ReadCache`]'s epoch; a reader notes the epoch
//! before it reads the database ([`ReadCache::epoch`]) and, after inserting,
//! removes its entry again if the epoch moved meanwhile. Either the reader's
//! check sees the bump, or its insert came before the writer's removal.

use std::hash::Hash;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use quick_cache::sync::Cache;
use quick_cache::{Equivalent, Weighter};

use crate::models::version::HasState;

/// How long an entry may live without being invalidated: the bound on how
/// stale a download count, or an owner change made on another replica, can
/// be.
pub const TIME_TO_LIVE: Duration = Duration::from_secs(10);

/// Largest bundle kept in memory.
pub const MAX_CACHED_BUNDLE: usize = 256 * 1024;

/// What a download needs to know about a version.
#[derive(Debug, Clone)]
pub struct DownloadTarget {
    pub tool_id: i64,
    pub version_id: i64,
    /// The version as published.
    pub version: String,
    pub sha256: String,
    pub size: i64,
    /// What the download answers (served, or 403 naming why not).
    pub state: crate::models::VersionState,
}

impl From<crate::models::version::VersionTarget> for DownloadTarget {
    fn from(v: crate::models::version::VersionTarget) -> DownloadTarget {
        DownloadTarget {
            tool_id: v.tool_id,
            version_id: v.id,
            state: v.state(),
            version: v.version,
            sha256: v.sha256,
            size: v.size,
        }
    }
}

impl DownloadTarget {
    /// The target of a version row.
    pub fn of(v: &crate::models::VersionRow) -> DownloadTarget {
        DownloadTarget {
            tool_id: v.tool_id,
            version_id: v.id,
            version: v.version.clone(),
            sha256: v.sha256.clone(),
            size: v.size,
            state: v.state(),
        }
    }
}

/// A version entry's key: normalized tool name and version key.
type VersionKey = (String, String);

/// Which answer an entry of the answer part is.
#[derive(Clone, PartialEq, Eq, Hash)]
enum AnswerKey {
    Tool(String),
    Version(VersionKey),
    Download(VersionKey),
}

/// An entry of the answer part: an encoded body or a download target.
#[derive(Clone)]
enum Answer {
    Body(Bytes),
    Target(Arc<DownloadTarget>),
}

/// What one entry costs beyond the bytes its key and value point to: the
/// cache's slot (hash, links) and the allocator's rounding of each heap
/// allocation.
const ENTRY_OVERHEAD: usize = 64;

/// An entry's weight in bytes: the `K` key and `V` value themselves in the
/// cache's slot, the `heap` bytes they point to, and [`ENTRY_OVERHEAD`].
fn entry_weight<K, V>(heap: usize) -> usize {
    std::mem::size_of::<K>() + std::mem::size_of::<Stamped<V>>() + heap + ENTRY_OVERHEAD
}

/// An answer's [`entry_weight`]. A download target is small, so its fixed
/// parts are most of it (~380 bytes each).
fn answer_weight(key: &AnswerKey, answer: &Answer) -> usize {
    let key = match key {
        AnswerKey::Tool(name) => name.len(),
        AnswerKey::Version((name, v)) | AnswerKey::Download((name, v)) => name.len() + v.len(),
    };
    let value = match answer {
        Answer::Body(body) => body.len(),
        Answer::Target(t) => {
            // The `Arc`'s allocation: its two counts and the target.
            2 * std::mem::size_of::<usize>()
                + std::mem::size_of::<DownloadTarget>()
                + t.version.len()
                + t.sha256.len()
                + t.state.reason_len()
        }
    };
    entry_weight::<AnswerKey, Answer>(key + value)
}

/// Memory budget of each part of the cache.
#[derive(Debug, Clone, Copy)]
pub struct CacheSizes {
    /// Tool and version answers and download targets, in bytes.
    pub answers: u64,
    /// Bundle bytes.
    pub bundles: u64,
}

impl CacheSizes {
    /// Split `mib` MiB between answers and bundles: half each, with the
    /// bundles' half at most [`MAX_BUNDLES_MIB`] and the rest for answers.
    /// A cached answer saves a database query, a cached bundle only a
    /// read of bytes, so a budget larger than the default goes to the
    /// answers. 0 turns the cache off.
    pub fn from_mib(mib: u64) -> CacheSizes {
        let bytes = mib * 1024 * 1024;
        let bundles = (bytes / 2).min(MAX_BUNDLES_MIB * 1024 * 1024);
        CacheSizes {
            answers: bytes - bundles,
            bundles,
        }
    }
}

/// A value and when it was put in the cache.
#[derive(Clone)]
struct Stamped<V> {
    at: Instant,
    value: V,
}

/// Weighs an entry in bytes: its key and value plus a rough overhead.
struct ByteWeight<K, V>(fn(&K, &V) -> usize);

impl<K, V> Clone for ByteWeight<K, V> {
    fn clone(&self) -> Self {
        ByteWeight(self.0)
    }
}

impl<K, V> Weighter<K, Stamped<V>> for ByteWeight<K, V> {
    fn weight(&self, key: &K, value: &Stamped<V>) -> u64 {
        u64::try_from((self.0)(key, &value.value)).unwrap_or(u64::MAX)
    }
}

/// One part of the read cache: entries bounded by their summed weight in
/// bytes, each served for at most its time to live ([`TIME_TO_LIVE`]) after
/// it was put in.
///
/// quick_cache keeps each shard's entries in a slab under a lock, with
/// CLOCK-style eviction (S3-FIFO): a hit takes the shard's read lock and
/// sets a bit, and an insert into a full shard evicts in place. When most
/// reads miss (a registry much larger than the cache, read at random),
/// every miss is an insert and an eviction, and this stays cheap; moka,
/// used before, rehashed its lock-free table again and again as evictions
/// left tombstones in it.
struct Part<K, V> {
    entries: Cache<K, Stamped<V>, ByteWeight<K, V>>,
    ttl: Duration,
}

impl<K: Eq + Hash, V: Clone> Part<K, V> {
    /// `capacity` bytes of entries weighed by `weigh`, of `typical` bytes
    /// each (to size the hash tables), served for `ttl`.
    fn new(capacity: u64, typical: u64, ttl: Duration, weigh: fn(&K, &V) -> usize) -> Part<K, V> {
        let items = usize::try_from(capacity / typical.max(1)).unwrap_or(usize::MAX);
        Part {
            entries: Cache::with_weighter(items.max(16), capacity, ByteWeight(weigh)),
            ttl,
        }
    }

    fn get<Q: Hash + Equivalent<K> + ?Sized>(&self, key: &Q) -> Option<V> {
        self.entries
            .get(key)
            .filter(|e| e.at.elapsed() < self.ttl)
            .map(|e| e.value)
    }

    fn insert(&self, key: K, value: V) {
        let at = Instant::now();
        self.entries.insert(key, Stamped { at, value });
    }

    fn remove<Q: Hash + Equivalent<K> + ?Sized>(&self, key: &Q) {
        self.entries.remove(key);
    }

    fn clear(&self) {
        self.entries.clear();
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    /// The summed weight of the entries, in bytes.
    #[cfg(test)]
    fn weight(&self) -> u64 {
        self.entries.weight()
    }
}

/// The cache shared by all workers of one server process.
pub struct ReadCache {
    enabled: bool,
    epoch: AtomicU64,
    /// The newest change-log sequence number applied (-1: not following).
    followed: AtomicI64,
    /// Tool and version answers and download targets, in one budget.
    answers: Part<AnswerKey, Answer>,
    bundles: Part<String, Bytes>,
}

impl std::fmt::Debug for ReadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadCache")
            .field("enabled", &self.enabled)
            .field("answers", &self.answers.len())
            .field("bundles", &self.bundles.len())
            .finish()
    }
}

impl Default for ReadCache {
    fn default() -> Self {
        ReadCache::new(CacheSizes::from_mib(DEFAULT_MIB))
    }
}

/// The default memory budget on SQLite, in MiB (`--cache-mib`). A miss
/// there is a read of a page of a local file, cheap next to the memory.
pub const DEFAULT_MIB: u64 = 32;

/// The default memory budget on PostgreSQL, in MiB: a miss there is a round
/// trip to another process and its CPU, so the answers get 80 MiB, the
/// summaries of ~70,000 tools (~1.2 KB each as weighed): as much as keeps
/// a 100,000-tool registry's server within its 256 MiB goal.
pub const DEFAULT_MIB_POSTGRES: u64 = 96;

/// The most the bundles' part takes of any budget, in MiB.
pub const MAX_BUNDLES_MIB: u64 = 16;

/// The default budget for a backend (`--cache-mib` when not given).
pub fn default_mib(backend: crate::db::Backend) -> u64 {
    match backend {
        crate::db::Backend::Sqlite => DEFAULT_MIB,
        crate::db::Backend::Postgres => DEFAULT_MIB_POSTGRES,
    }
}

impl ReadCache {
    pub fn new(sizes: CacheSizes) -> ReadCache {
        ReadCache {
            enabled: sizes.answers > 0 || sizes.bundles > 0,
            epoch: AtomicU64::new(0),
            followed: AtomicI64::new(-1),
            answers: Part::new(sizes.answers, 512, TIME_TO_LIVE, answer_weight),
            // quick_cache splits a budget into shards of at least 32 typical
            // entries, and an entry must fit in its shard: typical bundles
            // of 32 KiB let the largest kept bundle (256 KiB) into a shard
            // of any budget (the least is 1 MiB: `--cache-mib 1`).
            bundles: Part::new(
                sizes.bundles,
                MAX_CACHED_BUNDLE as u64 / 8,
                TIME_TO_LIVE,
                |k: &String, v: &Bytes| entry_weight::<String, Bytes>(k.len() + v.len()),
            ),
        }
    }

    /// The epoch to note before reading the database for a fill.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// Undo a fill made from a read that started at `epoch`, if anything
    /// was invalidated since.
    fn settle<K: Eq + Hash, V: Clone>(&self, part: &Part<K, V>, key: &K, epoch: u64) {
        if self.epoch.load(Ordering::SeqCst) != epoch {
            part.remove(key);
        }
    }

    fn body(&self, key: &AnswerKey) -> Option<Bytes> {
        match self.answers.get(key)? {
            Answer::Body(body) => Some(body),
            Answer::Target(_) => None,
        }
    }

    /// Put an answer in, then undo it if a write invalidated since `epoch`.
    fn put_answer(&self, key: AnswerKey, answer: Answer, epoch: u64) {
        if !self.enabled {
            return;
        }
        self.answers.insert(key.clone(), answer);
        self.settle(&self.answers, &key, epoch);
    }

    pub fn tool(&self, name: &str) -> Option<Bytes> {
        self.body(&AnswerKey::Tool(tool_key(name)))
    }

    pub fn put_tool(&self, name: &str, body: Bytes, epoch: u64) {
        self.put_answer(AnswerKey::Tool(tool_key(name)), Answer::Body(body), epoch);
    }

    pub fn version(&self, name: &str, version: &str) -> Option<Bytes> {
        self.body(&AnswerKey::Version(version_cache_key(name, version)?))
    }

    pub fn put_version(&self, name: &str, version: &str, body: Bytes, epoch: u64) {
        if let Some(key) = version_cache_key(name, version) {
            self.put_answer(AnswerKey::Version(key), Answer::Body(body), epoch);
        }
    }

    pub fn download(&self, name: &str, version: &str) -> Option<Arc<DownloadTarget>> {
        let key = AnswerKey::Download(version_cache_key(name, version)?);
        match self.answers.get(&key)? {
            Answer::Target(target) => Some(target),
            Answer::Body(_) => None,
        }
    }

    pub fn put_download(&self, name: &str, target: Arc<DownloadTarget>, epoch: u64) {
        if let Some(key) = version_cache_key(name, &target.version) {
            self.put_answer(AnswerKey::Download(key), Answer::Target(target), epoch);
        }
    }

    /// A cached bundle's bytes.
    pub fn bundle(&self, sha256: &str) -> Option<Bytes> {
        self.bundles.get(sha256)
    }

    /// Keep a bundle's bytes if it is small enough. Bytes under a digest
    /// never change, so no epoch is needed.
    pub fn put_bundle(&self, sha256: &str, bytes: Bytes) {
        if self.enabled && bytes.len() <= MAX_CACHED_BUNDLE {
            self.bundles.insert(sha256.to_string(), bytes);
        }
    }

    /// Forget the tool summary of `name` (its owners, latest version or
    /// counts changed).
    pub fn invalidate_tool(&self, name: &str) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        self.answers.remove(&AnswerKey::Tool(tool_key(name)));
    }

    /// Forget the tool summary of `name` and everything about `version`.
    pub fn invalidate_version(&self, name: &str, version: &str) {
        self.forget(name, version, true);
    }

    /// Forget the answers that show download counts of `version` (the
    /// tool summary and the version), keeping its download target.
    pub fn invalidate_counts(&self, name: &str, version: &str) {
        self.forget(name, version, false);
    }

    fn forget(&self, name: &str, version: &str, download_target: bool) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        self.answers.remove(&AnswerKey::Tool(tool_key(name)));
        if let Some(key) = version_cache_key(name, version) {
            self.answers.remove(&AnswerKey::Version(key.clone()));
            if download_target {
                self.answers.remove(&AnswerKey::Download(key));
            }
        }
    }

    /// Forget every answer (a tier change can touch any tool its publisher
    /// owns). Bundles stay: their bytes cannot change.
    pub fn invalidate_answers(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        self.answers.clear();
    }

    /// Apply change-log rows (`(tool name, version)`) read from the database.
    pub fn apply_changes<'a>(&self, changes: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (tool, version) in changes {
            self.invalidate_version(tool, version);
        }
    }

    /// Record that every change up to `seq` has been applied.
    pub fn set_followed(&self, seq: i64) {
        self.followed.store(seq, Ordering::SeqCst);
    }

    /// The newest change-log sequence number applied, if the log is followed.
    pub fn followed(&self) -> Option<i64> {
        Some(self.followed.load(Ordering::SeqCst)).filter(|s| *s >= 0)
    }
}

fn tool_key(name: &str) -> String {
    toolreg_core::name::normalize(name)
}

/// The key of a version entry, or `None` for text that is no SemVer version
/// (never cached: it can only be a 404).
fn version_cache_key(name: &str, version: &str) -> Option<VersionKey> {
    Some((tool_key(name), crate::models::version::lookup_key(version)?))
}

#[cfg(test)]
mod tests;
