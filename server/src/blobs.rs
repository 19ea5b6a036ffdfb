//! Bundle blobs in object storage (local files or S3), content-addressed at
//! `bundles/sha256/<hex>`. A blob alone is never visible: the version row is.

use std::sync::Arc;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::TryStreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::signer::Signer;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutPayload};

use crate::error::{internal, AppError, AppResult};

/// Where bundles live under the store's root.
pub const BUNDLE_PREFIX: &str = "bundles/sha256";

/// The marker object [`BlobStore::ping`] looks up (outside the bundles'
/// prefix, so `gc` and `verify` never see it).
const PING_PATH: &str = "healthz";

/// The blob store shared by all requests.
#[derive(Clone)]
pub struct BlobStore {
    store: Arc<dyn ObjectStore>,
    /// The bundles' directory when the store is local files, for
    /// [`BlobStore::read_small_bundle`].
    local_bundles: Option<std::path::PathBuf>,
    /// The same store as a URL signer (S3 only), for presigned downloads.
    signer: Option<Arc<dyn Signer>>,
    description: String,
}

impl std::fmt::Debug for BlobStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.description)
    }
}

/// The object path of a bundle with digest `sha256`.
pub fn bundle_path(sha256: &str) -> Path {
    Path::from(format!("{BUNDLE_PREFIX}/{sha256}"))
}

impl BlobStore {
    /// Open `file://DIR` (created if missing) or `s3://bucket[/prefix]`. S3 is
    /// configured from the standard `AWS_*` environment variables.
    pub fn open(url: &str) -> AppResult<BlobStore> {
        BlobStore::open_with(url, std::iter::empty())
    }

    /// [`BlobStore::open`] with extra S3 settings (`aws_endpoint`,
    /// `aws_allow_http`, ...) applied over the environment.
    pub fn open_with(
        url: &str,
        s3_options: impl IntoIterator<Item = (String, String)>,
    ) -> AppResult<BlobStore> {
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = match rest.split_once('/') {
                Some((b, p)) => (b, p.trim_matches('/')),
                None => (rest, ""),
            };
            if bucket.is_empty() {
                return Err(internal(format!(
                    "storage URL `{url}` names no bucket (expected s3://bucket[/prefix])"
                )));
            }
            let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
            for (key, value) in s3_options {
                let key: AmazonS3ConfigKey = key
                    .parse()
                    .map_err(|e| internal(format!("unknown S3 option `{key}`: {e}")))?;
                builder = builder.with_config(key, value);
            }
            // Custom endpoints (MinIO, moto, ...) want path-style requests.
            builder = builder.with_virtual_hosted_style_request(false);
            let s3 = builder
                .build()
                .map_err(|e| internal(format!("cannot configure S3 storage `{url}`: {e}")))?;
            let (store, signer): (Arc<dyn ObjectStore>, Arc<dyn Signer>) = if prefix.is_empty() {
                let s3 = Arc::new(s3);
                (s3.clone(), s3)
            } else {
                let prefixed = Arc::new(PrefixStore::new(s3, prefix));
                (prefixed.clone(), prefixed)
            };
            Ok(BlobStore {
                store,
                local_bundles: None,
                signer: Some(signer),
                description: url.to_string(),
            })
        } else {
            let dir = url.strip_prefix("file://").unwrap_or(url);
            std::fs::create_dir_all(dir)
                .map_err(|e| internal(format!("cannot create storage directory {dir}: {e}")))?;
            let fs = LocalFileSystem::new_with_prefix(dir)
                .map_err(|e| internal(format!("cannot open storage directory {dir}: {e}")))?;
            let local_bundles = fs
                .path_to_filesystem(&Path::from(BUNDLE_PREFIX))
                .map_err(|e| internal(format!("cannot open storage directory {dir}: {e}")))?;
            Ok(BlobStore {
                store: Arc::new(fs),
                local_bundles: Some(local_bundles),
                signer: None,
                description: url.to_string(),
            })
        }
    }

    /// Store a bundle under its digest. Idempotent: the same digest is the
    /// same bytes. An existing blob is written again on purpose, which
    /// refreshes its age so `gc` cannot collect it while this publish commits.
    ///
    /// Returns once the blob is durable, before the version that points at
    /// it commits: an S3 `PUT` answers after the object is stored; a local
    /// file (written to a temporary name and renamed) is flushed to the
    /// disk with its directory entry (`fsync` of both), which the object
    /// store's local files do not do themselves.
    pub async fn put_bundle(&self, sha256: &str, bytes: Bytes) -> AppResult<()> {
        self.store
            .put(&bundle_path(sha256), PutPayload::from(bytes))
            .await?;
        if let Some(dir) = &self.local_bundles {
            let (dir, file) = (dir.clone(), dir.join(sha256));
            tokio::task::spawn_blocking(move || sync_file_and_entry(&file, &dir))
                .await
                .map_err(|e| internal(format!("the flush of blob {sha256} did not run: {e}")))?
                .map_err(|e| internal(format!("cannot flush blob {sha256} to the disk: {e}")))?;
        }
        Ok(())
    }

    /// A bundle's bytes as a stream, or `None` if the blob is missing.
    pub async fn get_bundle(
        &self,
        sha256: &str,
    ) -> AppResult<Option<BoxStream<'static, object_store::Result<Bytes>>>> {
        match self.store.get(&bundle_path(sha256)).await {
            Ok(result) => Ok(Some(result.into_stream())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(AppError::Storage(e)),
        }
    }

    /// True if the store can hand out presigned URLs (S3).
    pub fn can_presign(&self) -> bool {
        self.signer.is_some()
    }

    /// A URL that fetches the bundle straight from S3 for `expires_in`, or
    /// `None` when the store cannot presign (local files).
    pub async fn presigned_bundle_url(
        &self,
        sha256: &str,
        expires_in: std::time::Duration,
    ) -> AppResult<Option<object_store::signer::Url>> {
        match &self.signer {
            Some(signer) => Ok(Some(
                signer
                    .signed_url(
                        object_store::signer::Method::GET,
                        &bundle_path(sha256),
                        expires_in,
                    )
                    .await?,
            )),
            None => Ok(None),
        }
    }

    /// A bundle's bytes in memory, or `None` if the blob is missing.
    pub async fn read_bundle(&self, sha256: &str) -> AppResult<Option<Bytes>> {
        match self.store.get(&bundle_path(sha256)).await {
            Ok(result) => Ok(Some(result.bytes().await?)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(AppError::Storage(e)),
        }
    }

    /// A small bundle's bytes (the caller knows from the version row that
    /// it is at most `read_cache::MAX_CACHED_BUNDLE`), or `None` if the blob
    /// is missing. From local files, a bundle that the operating system has
    /// in its page cache is read right here on the calling thread, as a
    /// SQLite lookup is ([`crate::db::Db::lookup`]): that takes a few
    /// microseconds, less than the two trips through the blocking pool that
    /// [`BlobStore::read_bundle`] makes (one to open the file, one to read
    /// it). A bundle that would have to come from the disk is read on the
    /// blocking pool in one trip, so a cold disk never stalls an HTTP
    /// worker. S3 reads are network requests and go through `read_bundle`.
    pub async fn read_small_bundle(&self, sha256: &str) -> AppResult<Option<Bytes>> {
        let dir = match &self.local_bundles {
            Some(dir) if toolreg_core::digest::is_sha256_hex(sha256) => dir,
            _ => return self.read_bundle(sha256).await,
        };
        let path = dir.join(sha256);
        let read = match read_if_cached(&path) {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => {
                let from_disk = path.clone();
                actix_web::web::block(move || std::fs::read(from_disk)).await?
            }
            Err(e) => Err(e),
        };
        match read {
            Ok(bytes) => Ok(Some(Bytes::from(bytes))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(internal(format!(
                "cannot read bundle blob {}: {e}",
                path.display()
            ))),
        }
    }

    /// Every stored bundle blob.
    pub async fn list_bundles(&self) -> AppResult<Vec<ObjectMeta>> {
        let prefix = Path::from(BUNDLE_PREFIX);
        Ok(self.store.list(Some(&prefix)).try_collect().await?)
    }

    /// Every object in the store but the health check's marker (tests use
    /// it to prove nothing was stored).
    pub async fn list_all(&self) -> AppResult<Vec<ObjectMeta>> {
        let all: Vec<ObjectMeta> = self.store.list(None).try_collect().await?;
        Ok(all
            .into_iter()
            .filter(|m| m.location.as_ref() != PING_PATH)
            .collect())
    }

    pub async fn delete(&self, path: &Path) -> AppResult<()> {
        self.store.delete(path).await?;
        Ok(())
    }

    /// Check the store answers: the metadata of one small marker object,
    /// written when it is missing (a missing bucket fails that write, where
    /// a lookup alone could not tell it from a missing key). A listing, even
    /// of one entry, asks S3 for a page of up to 1,000 keys, and an S3
    /// server may scan the bucket's keys to make it (moto does), on every
    /// health check.
    pub async fn ping(&self) -> AppResult<()> {
        let path = Path::from(PING_PATH);
        match self.store.head(&path).await {
            Ok(_) => Ok(()),
            Err(object_store::Error::NotFound { .. }) => {
                self.store
                    .put(&path, PutPayload::from_static(b"ok\n"))
                    .await?;
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The digest from a bundle path, if it is one.
pub fn digest_of(path: &Path) -> Option<&str> {
    let s = path.as_ref();
    let hex = s.strip_prefix(BUNDLE_PREFIX)?.strip_prefix('/')?;
    toolreg_core::digest::is_sha256_hex(hex).then_some(hex)
}

/// The whole file at `path` if every byte of it is in the page cache, read
/// with `preadv2(RWF_NOWAIT)`, which fails with `EAGAIN` instead of waiting
/// for the disk; `Ok(None)` when some of it is not (or the kernel cannot
/// tell), so the caller reads it where waiting is allowed.
#[cfg(target_os = "linux")]
fn read_if_cached(path: &std::path::Path) -> std::io::Result<Option<Vec<u8>>> {
    use rustix::io::{preadv2, Errno, ReadWriteFlags};
    let file = std::fs::File::open(path)?;
    let len = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX);
    if len > crate::read_cache::MAX_CACHED_BUNDLE {
        return Ok(None);
    }
    // One byte more than the file's size: a file that grew since the
    // `stat` shows as a read that filled the buffer.
    let mut bytes = vec![0; len + 1];
    let mut done = 0;
    while done <= len {
        let slice = &mut [std::io::IoSliceMut::new(&mut bytes[done..])];
        match preadv2(&file, slice, done as u64, ReadWriteFlags::NOWAIT) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(Errno::AGAIN | Errno::NOSYS | Errno::OPNOTSUPP | Errno::INVAL) => return Ok(None),
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if done != len {
        return Ok(None);
    }
    bytes.truncate(len);
    Ok(Some(bytes))
}

/// Flush a file just renamed into `dir`, and `dir` itself (which holds the
/// new name), to the disk.
fn sync_file_and_entry(file: &std::path::Path, dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::File::open(file)?.sync_data()?;
    std::fs::File::open(dir)?.sync_all()
}

/// Without `RWF_NOWAIT`, every read goes to the blocking pool.
#[cfg(not(target_os = "linux"))]
fn read_if_cached(_path: &std::path::Path) -> std::io::Result<Option<Vec<u8>>> {
    Ok(None)
}
