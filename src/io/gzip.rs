//! gzip-compressed text (`matrix.mtx.gz`, as SuiteSparse ships its
//! matrices): recognised by its magic bytes whatever the name says, and
//! decompressed as it is read, so a text reader never holds the compressed
//! and the whole decompressed file at once. Concatenated gzip members
//! (what `cat a.gz b.gz` and parallel compressors write) read as one
//! text; each member's CRC-32 and length are checked.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use super::fsutil::{io_error, read_all, reason};
use crate::error::CooError;

/// gzip's magic bytes and its only compression method (deflate).
const MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// Whether `bytes` start as a gzip stream does.
pub(crate) fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The error for gzip data in memory that does not decompress.
fn gzip_error(e: std::io::Error) -> CooError {
    CooError::Io(format!(
        "the gzip data does not decompress: {}",
        reason(&e)
    ))
}

/// The text held in `bytes`: `bytes` themselves, or their decompressed
/// text when they are gzip.
pub(crate) fn text_of(bytes: &[u8]) -> Result<Cow<'_, [u8]>, CooError> {
    if !is_gzip(bytes) {
        return Ok(Cow::Borrowed(bytes));
    }
    let d = MultiGzDecoder::new(bytes);
    let hint = bytes.len().saturating_mul(4);
    read_all(d, hint, "the decompressed text", gzip_error).map(Cow::Owned)
}

/// A text file opened for reading, with its length when that is the length
/// of the text (not for gzip, whose text is longer than the file).
pub(crate) struct TextFile {
    pub(crate) reader: Box<dyn Read>,
    pub(crate) len: Option<u64>,
}

/// Open the text file at `path`, decompressing as it is read when it is
/// gzip.
pub(crate) fn open_text(path: &Path) -> Result<TextFile, CooError> {
    let io = io_error(path, "read");
    let mut f = File::open(path).map_err(&io)?;
    let len = f.metadata().map_err(&io)?.len();
    let mut magic = [0u8; 3];
    let mut got = 0;
    while got < magic.len() {
        match f.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    f.rewind().map_err(&io)?;
    if is_gzip(&magic[..got]) {
        let d = GzipText(MultiGzDecoder::new(BufReader::with_capacity(1 << 20, f)));
        return Ok(TextFile {
            reader: Box::new(d),
            len: None,
        });
    }
    Ok(TextFile {
        reader: Box::new(f),
        len: Some(len),
    })
}

/// A gzip decoder whose errors say that the gzip data is at fault (the
/// caller's `Io` wrapper adds the path).
struct GzipText<R: Read>(MultiGzDecoder<R>);

impl<R: Read> Read for GzipText<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::Interrupted => e,
            kind => std::io::Error::new(
                kind,
                format!("the gzip data does not decompress: {}", reason(&e)),
            ),
        })
    }
}

/// The whole text of the file at `path`, decompressed when it is gzip.
pub(crate) fn read_text_file(path: &Path) -> Result<Vec<u8>, CooError> {
    let t = open_text(path)?;
    let hint = t
        .len
        .map_or(1 << 20, |n| usize::try_from(n).unwrap_or(usize::MAX))
        .saturating_add(1);
    read_all(t.reader, hint, "the file's text", io_error(path, "read"))
}
