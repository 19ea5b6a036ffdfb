//! A file of the index read with positioned reads (`pread`) instead of
//! through a memory map.
//!
//! Pages read through tantivy's memory map stay mapped into the process,
//! counted in its resident memory, for as long as the segment lives, though
//! most are not read again soon. Read with positioned reads, the bytes a read
//! needs are copied into a buffer that is freed with it, and the file's pages
//! are the page cache's alone. Used for the doc store read once to build the
//! hit records (`table::store_file`) and for the postings that searches read
//! (`index::directory`).

use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::Path;

use tantivy::directory::{FileHandle, OwnedBytes};
use tantivy::HasLen;

/// A file read with positioned reads, one buffer per read.
#[derive(Debug)]
pub(crate) struct PositionedFile {
    file: File,
    len: usize,
}

impl PositionedFile {
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        Self::new(File::open(path)?)
    }

    pub(crate) fn new(file: File) -> io::Result<Self> {
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::other("the file is larger than memory can address"))?;
        Ok(PositionedFile { file, len })
    }
}

impl HasLen for PositionedFile {
    fn len(&self) -> usize {
        self.len
    }
}

impl FileHandle for PositionedFile {
    fn read_bytes(&self, range: Range<usize>) -> io::Result<OwnedBytes> {
        if range.start > range.end || range.end > self.len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("read of {range:?} past the file's {} bytes", self.len),
            ));
        }
        let mut buf = vec![0u8; range.len()];
        std::os::unix::fs::FileExt::read_exact_at(&self.file, &mut buf, range.start as u64)?;
        Ok(OwnedBytes::new(buf))
    }
}
