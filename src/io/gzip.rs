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
    CooError::Io(format!("the gzip data does not decompress: {}", reason(&e)))
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

/// Told how far a file's reading has got: (bytes of the file read, its
/// length); for gzip, bytes of the compressed file.
pub type Report<'a> = &'a dyn Fn(u64, u64);

/// A report that goes nowhere.
pub(crate) const QUIET: Report<'static> = &|_, _| {};

/// A text file opened for reading, with its length when that is the length
/// of the text (not for gzip, whose text is longer than the file).
pub(crate) struct TextFile<'a> {
    pub(crate) reader: Box<dyn Read + 'a>,
    pub(crate) len: Option<u64>,
}

/// A file that reports how much of it has been read.
struct Counted<'a> {
    f: File,
    done: u64,
    len: u64,
    report: Report<'a>,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.f.read(buf)?;
        self.done += n as u64;
        (self.report)(self.done, self.len);
        Ok(n)
    }
}

/// Open the text file at `path`, decompressing as it is read when it is
/// gzip, and telling `report` how far the reading has got.
pub(crate) fn open_text<'a>(path: &Path, report: Report<'a>) -> Result<TextFile<'a>, CooError> {
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
    let f = Counted {
        f,
        done: 0,
        len,
        report,
    };
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
pub(crate) fn read_text_file(path: &Path, report: Report<'_>) -> Result<Vec<u8>, CooError> {
    let t = open_text(path, report)?;
    let hint = t
        .len
        .map_or(1 << 20, |n| usize::try_from(n).unwrap_or(usize::MAX))
        .saturating_add(1);
    read_all(t.reader, hint, "the file's text", io_error(path, "read"))
}
