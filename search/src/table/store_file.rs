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
use std::path::Path;
use std::sync::Arc;

use tantivy::directory::footer::Footer;
use tantivy::directory::FileSlice;
use tantivy::store::StoreReader;
use tantivy::SegmentReader;

#[cfg(unix)]
use crate::positioned::PositionedFile;

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
