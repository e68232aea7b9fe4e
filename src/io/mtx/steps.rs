//! The entry lines of a Matrix Market file parsed a step at a time (a few
//! MiB, each cut at a line end) and handed to a sink ([`Take`]): the
//! straight-into-CSR reader's arrays and stored entries
//! ([`super::compressed`]), and the handle reader's list of entries. On two
//! threads a file of known length is cut in two halves, each read through a
//! reader of its own and parsed into a sink of its own.

use crate::error::CooError;
use crate::io::fastparse::{self, Spec, Stop};
use crate::io::text::{self, Entries};
use std::path::Path;

/// The entry lines of a file, and how to read them.
#[derive(Clone, Copy)]
pub(super) struct Text<'a> {
    pub(super) path: &'a Path,
    pub(super) spec: &'a Spec<'a>,
    pub(super) step: usize,
    pub(super) threads: usize,
    /// Bytes of the file (the entry lines) to read in two halves on two
    /// threads; `None`: read on from the reader at hand.
    pub(super) split: Option<[u64; 2]>,
}

/// Fill `buf` from `f` up to `limit` bytes; true at the end of `f`.
pub(super) fn read(
    path: &Path,
    f: &mut dyn std::io::Read,
    buf: &mut Vec<u8>,
    limit: usize,
) -> Result<bool, CooError> {
    let io = crate::io::fsutil::io_error(path, "read");
    crate::io::fsutil::read_up_to(f, buf, limit, "a piece of the file", &io)
}

/// Where [`Text::steps`] puts the parsed entries.
pub(super) trait Take {
    /// How many more entries there may be (a guess for the parser's room).
    fn left(&self) -> u64;
    /// Take `e`'s entries after those taken; false to decline.
    fn take(&mut self, e: &Entries) -> bool;
}

impl Text<'_> {
    /// The entry lines of `f`, whose first bytes are in `buf` (from a line
    /// start; `end`: all of them), parsed `step` bytes at a time on up to
    /// `threads` threads and handed to `w`; false to decline (the caller
    /// then reads the file by another path, which names any problem).
    pub(super) fn steps(
        &self,
        f: &mut dyn std::io::Read,
        mut buf: Vec<u8>,
        mut end: bool,
        w: &mut (impl Take + ?Sized),
    ) -> Result<bool, CooError> {
        let mut parts: Vec<Entries> = Vec::new();
        loop {
            let cut = match end {
                true => buf.len(),
                false => match buf.iter().rposition(|&b| b == b'\n') {
                    Some(i) => i + 1,
                    None => return Ok(false), // a line longer than a step
                },
            };
            let text = &buf[..cut];
            let parsed =
                fastparse::parse_parts(text, self.spec, Some(w.left()), self.threads, &mut parts);
            let used = match parsed {
                Ok(used) => used,
                Err(Stop::Unsure) => return Ok(false),
                Err(Stop::Failed(err)) => return Err(text::in_file(self.path, err)),
            };
            if !parts[..used].iter().all(|e| w.take(e)) {
                return Ok(false);
            }
            if end {
                return Ok(true);
            }
            buf.drain(..cut);
            end = read(self.path, f, &mut buf, self.step)?;
        }
    }

    /// Bytes `range` of the file (the entry lines) cut in two at a line end
    /// near the middle, each half read through a reader of its own and
    /// parsed on a thread of its own into its own of `into`, as
    /// [`Text::steps`] does; false to decline.
    pub(super) fn halves(
        &self,
        range: [u64; 2],
        into: [&mut (dyn Take + Send); 2],
    ) -> Result<bool, CooError> {
        use std::io::{Read, Seek, SeekFrom};
        let path = self.path;
        let io = crate::io::fsutil::io_error(path, "read");
        let open_at = |at: u64| -> Result<std::fs::File, CooError> {
            let mut f = std::fs::File::open(path).map_err(&io)?;
            f.seek(SeekFrom::Start(at)).map_err(&io)?;
            Ok(f)
        };
        let mid = range[0] + (range[1] - range[0]) / 2;
        let mut window = Vec::new();
        read(path, &mut open_at(mid)?.take(1 << 16), &mut window, 1 << 16)?;
        let Some(cut) = window.iter().position(|&b| b == b'\n') else {
            return Ok(false);
        };
        let cut = mid + cut as u64 + 1;
        let one = Text {
            threads: 1,
            split: None,
            ..*self
        };
        let [first, second] = into;
        let halves = vec![(range[0], cut, first), (cut, range[1], second)];
        let done = crate::threads::run(halves, |_, (from, to, w)| {
            let mut f = open_at(from)?.take(to - from);
            let mut buf = Vec::new();
            let end = read(path, &mut f, &mut buf, self.step)?;
            one.steps(&mut f, buf, end, w)
        });
        let mut taken = true;
        for d in done {
            taken &= d?;
        }
        Ok(taken)
    }
}
