//! A segment's doc store opened for one pass over it without the index's
//! memory map.
//!
//! Building a segment's hit records ([`super::Records`]) reads its whole doc
//! store once. Read through tantivy's memory map, those pages stay mapped
//! into the process, and counted in its resident memory, for as long as the
//! segment lives, though nothing reads most of them again (~24 MiB of a
//! 100,000-tool index). Read with positioned reads (`pread`) they are the
//! page cache's alone. An index held in memory (tests) has no files and
//! uses its own store reader, and so do platforms other than Unix.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use tantivy::directory::footer::Footer;
use tantivy::directory::{FileHandle, FileSlice, OwnedBytes};
use tantivy::store::StoreReader;
use tantivy::{HasLen, SegmentReader};

/// The doc store of `segment` for a pass: from its file in `dir` when the
/// index is on disk, else (or when the file cannot be opened, e.g. deleted
/// after a merge while an older searcher still reads the segment) the
/// segment's own reader.
pub(crate) fn open_for_pass(
    segment: &SegmentReader,
    dir: Option<&Path>,
) -> io::Result<StoreReader> {
    #[cfg(unix)]
    if let Some(dir) = dir {
        let path = dir.join(format!("{}.store", segment.segment_id().uuid_string()));
        if let Ok(file) = File::open(&path) {
            let handle = PositionedFile::new(file)?;
            // The file as the index's directory wrote it: the store, then
            // the directory's footer (version and checksum).
            let (_, store) = Footer::extract_footer(FileSlice::new(Arc::new(handle)))?;
            return StoreReader::open(store, 1);
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    segment.get_store_reader(1).map_err(io::Error::other)
}

/// A file read with positioned reads, one buffer per read.
#[cfg(unix)]
#[derive(Debug)]
struct PositionedFile {
    file: File,
    len: usize,
}

#[cfg(unix)]
impl PositionedFile {
    fn new(file: File) -> io::Result<Self> {
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::other("the doc store is larger than memory can address"))?;
        Ok(PositionedFile { file, len })
    }
}

#[cfg(unix)]
impl HasLen for PositionedFile {
    fn len(&self) -> usize {
        self.len
    }
}

#[cfg(unix)]
impl FileHandle for PositionedFile {
    fn read_bytes(&self, range: Range<usize>) -> io::Result<OwnedBytes> {
        if range.start > range.end || range.end > self.len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("read of {range:?} past the doc store's {} bytes", self.len),
            ));
        }
        let mut buf = vec![0u8; range.len()];
        std::os::unix::fs::FileExt::read_exact_at(&self.file, &mut buf, range.start as u64)?;
        Ok(OwnedBytes::new(buf))
    }
}
