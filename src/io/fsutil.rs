//! Files on disk, for every format: reading a whole file without aborting
//! on a failed allocation, and writing through a temporary file that takes
//! the final name only once complete; the messages say which path, whether
//! it was being read or written, and the system's reason in words.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::CooError;

/// The system's reason in words, without the "(os error N)" that Rust's
/// `io::Error` appends (the number says nothing the words do not).
pub fn reason(e: &std::io::Error) -> String {
    let m = e.to_string();
    match m.rfind(" (os error ") {
        Some(k) if m.ends_with(')') => m[..k].to_string(),
        _ => m,
    }
}

/// The `Io` error for `path` while `doing` ("reading", "writing"):
/// "out.mtx: cannot write: Permission denied".
pub(crate) fn io_error<'p>(
    path: &'p Path,
    doing: &'static str,
) -> impl Fn(std::io::Error) -> CooError + 'p {
    move |e| {
        CooError::Io(format!(
            "{}: cannot {doing}: {}",
            path.display(),
            reason(&e)
        ))
    }
}

/// Read from `r` onto the end of `buf` until it holds `limit` bytes or
/// `r` ends (then `true`), growing `buf` fallibly (a failed allocation is
/// an `Alloc` error naming `what`, never an abort).
pub(crate) fn read_up_to(
    r: &mut dyn Read,
    buf: &mut Vec<u8>,
    limit: usize,
    what: &'static str,
    io: &dyn Fn(std::io::Error) -> CooError,
) -> Result<bool, CooError> {
    while buf.len() < limit {
        if buf.len() == buf.capacity() {
            let more = buf.len().max(1 << 16).min(limit - buf.len());
            buf.try_reserve(more).map_err(|_| CooError::Alloc {
                bytes: buf.len().saturating_add(more),
                what,
            })?;
        }
        let room = (buf.capacity().min(limit) - buf.len()) as u64;
        match r.take(room).read_to_end(buf) {
            // Short of the room: the end of the input.
            Ok(n) if (n as u64) < room => return Ok(true),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    Ok(false)
}

/// Read all of `r` (see [`read_up_to`]); `hint` is the expected length.
pub(crate) fn read_all(
    mut r: impl Read,
    hint: usize,
    what: &'static str,
    io: impl Fn(std::io::Error) -> CooError,
) -> Result<Vec<u8>, CooError> {
    let mut buf: Vec<u8> = Vec::new();
    buf.try_reserve(hint)
        .map_err(|_| CooError::Alloc { bytes: hint, what })?;
    read_up_to(&mut r, &mut buf, usize::MAX, what, &io)?;
    Ok(buf)
}

/// Read the whole file at `path`.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, CooError> {
    let io = io_error(path, "read");
    let f = File::open(path).map_err(&io)?;
    let len = f.metadata().map_err(&io)?.len();
    let len = usize::try_from(len).map_err(|_| CooError::Alloc {
        bytes: usize::MAX,
        what: "the file's contents",
    })?;
    read_all(f, len.saturating_add(1), "the file's contents", io)
}

/// A file being written under a temporary name (`.NAME.PID-N.tmp` beside
/// the target). `commit` renames it into place; dropping it uncommitted
/// removes it, so an interrupted or failed write never leaves a file under
/// the target name (and never replaces an older one).
pub(crate) struct AtomicFile {
    out: Option<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
    /// Set once the rename has put the file under its name; until then,
    /// whatever failed (flush, fsync, rename), `Drop` removes the temporary.
    renamed: bool,
}

impl AtomicFile {
    /// Create the temporary file for `path`.
    pub(crate) fn create(path: &Path) -> Result<AtomicFile, CooError> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let name = path
            .file_name()
            .ok_or_else(|| CooError::Io(format!("{}: not a file name", path.display())))?;
        let mut tmp_name = OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(
            ".{}-{}.tmp",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = path.with_file_name(tmp_name);
        let f = File::create(&tmp).map_err(io_error(path, "write"))?;
        Ok(AtomicFile {
            out: Some(BufWriter::with_capacity(1 << 20, f)),
            tmp,
            path: path.to_path_buf(),
            renamed: false,
        })
    }

    /// The target path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Flush, optionally fsync (file, then directory after the rename), and
    /// rename into place.
    pub(crate) fn commit(mut self, sync: bool) -> Result<(), CooError> {
        let io = io_error(&self.path, "write");
        let Some(out) = self.out.take() else {
            return Err(CooError::Io(format!(
                "{}: already committed",
                self.path.display()
            )));
        };
        // Any `?` below returns with `renamed` false: `Drop` then removes the
        // temporary file (the header promises that a failed write leaves
        // nothing behind).
        let f = out.into_inner().map_err(|e| io(e.into_error()))?;
        if sync {
            f.sync_all().map_err(&io)?;
        }
        drop(f);
        std::fs::rename(&self.tmp, &self.path).map_err(&io)?;
        self.renamed = true;
        if sync {
            let dir = match self.path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            // Makes the rename itself durable; not every file system lets a
            // directory be opened or synced, and the data is safe already.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.out {
            Some(o) => o.write(buf),
            None => Err(std::io::Error::other("already committed")),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match &mut self.out {
            Some(o) => o.write_all(buf),
            None => Err(std::io::Error::other("already committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.out {
            Some(o) => o.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Close the file (if still open) before removing it.
        drop(self.out.take());
        if !self.renamed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Write `bytes` to `path` through an `AtomicFile`, without fsync
/// (durability against power loss is the caller's choice, as with scipy).
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CooError> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes).map_err(io_error(path, "write"))?;
    f.commit(false)
}
