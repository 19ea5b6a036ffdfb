//! The directory an index on disk lives in: tantivy's memory-mapped
//! directory, except that the postings files (`.idx`) are read with
//! positioned reads.
//!
//! A search reads the posting lists of its words. Through the memory map,
//! every page of them that any search read stayed mapped into the process
//! and counted in its resident memory: with searches over many different
//! words of a 100,000-tool index, ~34 MiB, the largest part of the server's
//! peak. Read with `pread` ([`PositionedFile`]), a posting list is copied
//! into a buffer that is freed when the search is done, and the file's
//! pages are the operating system's page cache's alone. The term
//! dictionaries, fast fields, field norms and doc stores stay memory-mapped:
//! they are read where they lie, in small parts, over and over.
//!
//! A postings file opened this way is held open by its segment's readers,
//! so a merge that deletes it does not take it from a search still reading
//! the old segment (as with the memory map).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::directory::error::{
    DeleteError, LockError, OpenDirectoryError, OpenReadError, OpenWriteError,
};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};

use crate::positioned::PositionedFile;

/// The extension of a segment's postings file.
const POSTINGS: &str = "idx";

#[derive(Debug, Clone)]
pub(crate) struct IndexDirectory {
    mapped: MmapDirectory,
    root: PathBuf,
}

impl IndexDirectory {
    pub(crate) fn open(root: &Path) -> Result<Self, OpenDirectoryError> {
        Ok(IndexDirectory {
            mapped: MmapDirectory::open(root)?,
            root: root.to_path_buf(),
        })
    }
}

impl Directory for IndexDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        if path.extension().is_none_or(|e| e != POSTINGS) {
            return self.mapped.get_file_handle(path);
        }
        match PositionedFile::open(&self.root.join(path)) {
            Ok(file) => Ok(Arc::new(file)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(OpenReadError::FileDoesNotExist(path.to_path_buf()))
            }
            Err(e) => Err(OpenReadError::wrap_io_error(e, path.to_path_buf())),
        }
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.mapped.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.mapped.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        self.mapped.open_write(path)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.mapped.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.mapped.atomic_write(path, data)
    }

    fn sync_directory(&self) -> io::Result<()> {
        self.mapped.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.mapped.acquire_lock(lock)
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.mapped.watch(watch_callback)
    }
}
