//! Files on disk, for every format: reading a whole file without aborting
//! on a failed allocation, and writing through a temporary file that takes
//! the final name only once complete.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::CooError;

/// The `Io` error for `path`.
pub(crate) fn io_error(path: &Path) -> impl Fn(std::io::Error) -> CooError + '_ {
    move |e| CooError::Io(format!("{}: {e}", path.display()))
}

/// Read the whole file at `path`.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, CooError> {
    use std::io::Read;
    let io = io_error(path);
    let mut f = File::open(path).map_err(&io)?;
    let len = f.metadata().map_err(&io)?.len();
    let len = usize::try_from(len).map_err(|_| CooError::Alloc {
        bytes: usize::MAX,
        what: "the file's contents",
    })?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(len).map_err(|_| CooError::Alloc {
        bytes: len,
        what: "the file's contents",
    })?;
    f.read_to_end(&mut buf).map_err(io)?;
    Ok(buf)
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
        let f = File::create(&tmp).map_err(io_error(path))?;
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
        let io = io_error(&self.path);
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
    f.write_all(bytes).map_err(io_error(path))?;
    f.commit(false)
}
