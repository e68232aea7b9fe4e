//! A Matrix Market file read straight into the consumer's CSR or CSC
//! arrays (scipy's `mmread(f).tocsr()`): the same lines, checks, policies,
//! mirror images and errors as [`read_mtx_file`](super::read_mtx_file)
//! followed by a compressed export, but the parsed entries are assembled
//! into the caller's arrays, with no canonical handle (24 bytes per entry)
//! in between.
//!
//! The entry count is known only once duplicates are combined, so the
//! caller gives room, as for an assembly into CSR: [`mtx_file_size`] reads
//! the banner and the size line and says how much always suffices.

use super::steps::{read, Take, Text};
use super::{
    head, parsed_file, type_tag, values_of, Again, Head, MtxField, MtxHeader, MtxSymmetry, PIECE,
};
use crate::aligned::AlignedBuf;
use crate::assemble::{IndexType, Narrow, ROOM_HINT};
use crate::convert::{assemble_compressed, export_into, CompressedOut, Format};
use crate::coo::Coo;
use crate::error::CooError;
use crate::io::fastparse::Spec;
use crate::io::gzip::QUIET;
use crate::io::text::{self, Entries, TextOptions};
use std::path::Path;

/// What a file's banner and size line say about its compressed form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MtxSize {
    /// The banner; `stored` is the count the size line declares.
    pub header: MtxHeader,
    pub rows: u64,
    pub cols: u64,
    /// The type the values are read into (the options' value type, or the
    /// file's own).
    pub type_tag: u8,
    /// The most entries the read can give: the stored ones, and as many
    /// mirror images when the file is mirrored. Room for these always
    /// suffices.
    pub most: u64,
}

/// The first bytes of a file read to find its banner and size line; a
/// file whose comments run longer is read whole.
const HEAD: usize = 1 << 20;

/// The banner and size line of the Matrix Market file at `path`, and the
/// room a compressed read of it with options `o` needs (see [`MtxSize`]).
/// Only the head of the file is read (decompressed, when gzip).
pub fn mtx_file_size(path: &Path, o: &TextOptions) -> Result<MtxSize, CooError> {
    let in_file = |e| text::in_file(path, e);
    let io = crate::io::fsutil::io_error(path, "read");
    let mut f = crate::io::gzip::open_text(path, QUIET)?.reader;
    let mut buf = Vec::new();
    let end = crate::io::fsutil::read_up_to(&mut f, &mut buf, HEAD, "the file's head", &io)?;
    let mut tok = Vec::new();
    let h = match head(&buf, &mut tok) {
        Ok(h) => h,
        // A head longer than HEAD bytes: the whole text, which also names
        // the problem when there is one.
        Err(_) if !end => {
            drop(tok);
            drop(f);
            let all = text::read_text_file(path, QUIET)?;
            let mut tok = Vec::new();
            let h = head(&all, &mut tok).map_err(in_file)?;
            return size_of(h.h, h.rows, h.cols, h.declared, o);
        }
        Err(e) => return Err(in_file(e)),
    };
    size_of(h.h, h.rows, h.cols, h.declared, o)
}

fn size_of(
    h: MtxHeader,
    rows: u64,
    cols: u64,
    declared: u64,
    o: &TextOptions,
) -> Result<MtxSize, CooError> {
    let mirrored = h.symmetry != MtxSymmetry::General && !o.keep_triangular;
    let most = match mirrored {
        true => declared.checked_mul(2).ok_or_else(|| CooError::Overflow {
            what: format!("{declared} entries and their mirror images"),
        })?,
        false => declared,
    };
    Ok(MtxSize {
        header: MtxHeader {
            stored: declared,
            ..h
        },
        rows,
        cols,
        type_tag: o.value_type.unwrap_or(type_tag(h.field)),
        most,
    })
}

/// Read the Matrix Market file at `path` as [`read_mtx_file`](super::read_mtx_file)
/// does, into `out` as a CSR or CSC export of that tensor would be: the
/// entry count and the banner. `out`'s offsets are exactly (rows or
/// columns) + 1; its indices and values need room for the entries only
/// (what [`mtx_file_size`] reports always suffices), and nothing past them
/// is written. A pattern file's values may be empty: then none are written.
pub fn read_mtx_file_compressed(
    path: &Path,
    o: &TextOptions,
    out: CompressedOut<'_>,
) -> Result<(u64, MtxHeader), CooError> {
    let in_file = |e| text::in_file(path, e);
    let mut out = out;
    if let Some(done) = in_order(path, o, Dest::Compressed(&mut out), STEP)? {
        return Ok(done);
    }
    let again = Again::new(path);
    let p = parsed_file(path, o, PIECE, None, &again)?;
    let h = p.header();
    let most = p.e.n as u64;
    let tag = type_tag(p.h.field);
    let room = |e| room_for_file(e, most);
    let write_values = p.h.field != MtxField::Pattern || !out.values.is_empty();
    if o.value_type.is_some_and(|t| t != tag) {
        // Values in another type are checked after duplicates combine, on
        // the canonical tensor: that path, then its export.
        let threads = o.assemble.threads;
        let (coo, h) = super::finish(p, o, |k| again.line_of(k)).map_err(in_file)?;
        let nnz = export_into(&coo, out, write_values, threads).map_err(room)?;
        return Ok((nnz, h));
    }
    let t = text::triplets_of(&p.e, &p.shape, tag, p.h.field == MtxField::Pattern);
    let mut ao = o.assemble;
    ao.skip_plan = true;
    match assemble_compressed(&t, &ao, out) {
        Ok((nnz, _)) => Ok((nnz, h)),
        Err(e) => {
            let e = text::duplicate_lines(e, p.item_line(|k| again.line_of(k)));
            Err(in_file(room_for_file(e, most)))
        }
    }
}

/// A mirrored `symmetric` file whose lower triangle is in row order, read
/// into a handle (what [`read_mtx_file`](super::read_mtx_file) gives) the
/// way [`in_order`] reads it into CSR: the stored entries kept and counted,
/// then each with its mirror image placed at its row's next place, as its
/// (row, column) pair and value straight in the handle's buffers. No parsed
/// list of images, no assembly, no CSR in between. The result is sorted,
/// duplicate-free and in bounds by construction: every row holds its
/// stored entries (columns up to the row, increasing, as the keeping
/// checked) and then the images landing in it (columns above the row,
/// from later rows in order), and the parser checked the extents. It is
/// not validated again, except in debug builds (`Coo::from_built`), where
/// every test that reads such a file checks it. `Ok(None)` for any other
/// file, or anything [`in_order`] declines: the caller's general path
/// reads it and names any problem.
pub(super) fn symmetric_handle(
    path: &Path,
    o: &TextOptions,
) -> Result<Option<(Coo<'static>, MtxHeader)>, CooError> {
    if o.keep_triangular || o.assemble.drop_zeros {
        return Ok(None);
    }
    let Ok(size) = mtx_file_size(path, o) else {
        return Ok(None);
    };
    let h = size.header;
    let n = size.rows;
    if h.array
        || h.symmetry != MtxSymmetry::Symmetric
        || !matches!(h.field, MtxField::Real | MtxField::Integer)
        || n != size.cols
    {
        return Ok(None);
    }
    // Room for the most entries the file can give: fresh pages, touched
    // only as written. Memory this path cannot have: the general path
    // decides (it needs more, and says so).
    let bytes = |k: u64, w: u64| usize::try_from(k.checked_mul(w)?).ok();
    let (Some(pairs), Some(words)) = (bytes(size.most, 16), bytes(size.most, 8)) else {
        return Ok(None);
    };
    let buffers = (
        AlignedBuf::zeroed(pairs, "the coordinates"),
        AlignedBuf::zeroed(words, "the values"),
    );
    let (Ok(mut coords), Ok(mut values)) = buffers else {
        return Ok(None);
    };
    let (Ok(c), Ok(v)) = (
        bytemuck::try_cast_slice_mut::<u8, [u64; 2]>(coords.as_bytes_mut()),
        bytemuck::try_cast_slice_mut::<u8, u64>(values.as_bytes_mut()),
    ) else {
        return Ok(None);
    };
    let into = Dest::Pairs {
        coords: c,
        values: v,
    };
    let Some((nnz, header)) = in_order(path, o, into, STEP)? else {
        return Ok(None);
    };
    // At most `size.most` entries were placed: these products fit.
    let nnz = nnz as usize;
    coords.truncate(nnz * 16);
    values.truncate(nnz * 8);
    let coo = Coo::from_built(size.type_tag, &[n, n], values, coords)?;
    Ok(Some((coo, header)))
}

/// Where [`in_order`] writes a file's entries.
enum Dest<'a, 'o> {
    /// The caller's CSR or CSC arrays.
    Compressed(&'a mut CompressedOut<'o>),
    /// A handle's buffers, room for the most entries the file can give:
    /// each entry's (row, column) and its value, in row order. Only a
    /// mirrored `symmetric` file is read so; any other declines.
    Pairs {
        coords: &'a mut [[u64; 2]],
        values: &'a mut [u64],
    },
}

/// The bytes [`in_order`] reads and parses at a time: a file not in order
/// is found out within its first step, and a step's parsed entries (about
/// 24 bytes per 30 of text: 0.8 MB) stay in a core's cache (2 MiB of L2
/// here) until they are written out. Measured against 4 MiB steps: the
/// symmetric file into a handle 3 % faster, the direct reads the same.
const STEP: usize = 1 << 20;

/// A general `real` or `integer` file whose entry lines come in `out`'s
/// order (row by row with columns increasing for CSR, column by column
/// for CSC), read `step` bytes at a time and written straight into `out`:
/// no parsed copy of the whole file and no assembly. Entries in strictly
/// increasing order have no duplicates to combine, so every duplicate
/// policy gives them as they are, which is what the general path gives.
///
/// `Ok(None)`, with nothing to report, sends the caller to the general
/// path, which reads the file again and names any problem: another kind
/// of file, a value type or zero dropping asked for, an entry not after
/// the one before it (found within the first step for a file in another
/// order), a count that differs from the size line, anything the fast
/// parser is unsure of, output arrays that are short or misaligned. Until
/// then only entries already seen are written, and the general path's
/// result holds at least as many: nothing past its result is written.
fn in_order(
    path: &Path,
    o: &TextOptions,
    out: Dest<'_, '_>,
    step: usize,
) -> Result<Option<(u64, MtxHeader)>, CooError> {
    if o.assemble.drop_zeros {
        return Ok(None);
    }
    let file = crate::io::gzip::open_text(path, QUIET)?;
    let mut f = file.reader;
    let mut buf = Vec::new();
    // The banner and size line: from the first 64 KiB (at least 4 KiB).
    let mut end = read(path, &mut *f, &mut buf, step.clamp(1 << 12, 1 << 16))?;
    let mut tok = Vec::new();
    let Ok(Head {
        h,
        rows,
        cols,
        declared,
        lines,
        ..
    }) = head(&buf, &mut tok)
    else {
        return Ok(None);
    };
    let start = buf.len() - lines.rest().len();
    drop(tok);
    let tag = type_tag(h.field);
    // A symmetric file kept triangular is read as stored, as a general one.
    let symmetric = h.symmetry == MtxSymmetry::Symmetric;
    let mirror = symmetric && !o.keep_triangular;
    let fits = (h.symmetry == MtxSymmetry::General || symmetric)
        && matches!(h.field, MtxField::Real | MtxField::Integer)
        && !h.array
        && o.value_type.is_none_or(|t| t == tag)
        // The size line ends inside what was read.
        && (end || buf[..start].ends_with(b"\n"));
    if !fits {
        return Ok(None);
    }
    let Ok(n) = usize::try_from(declared) else {
        return Ok(None);
    };
    let spec = Spec {
        rank: 2,
        extents: Some(&[rows, cols]),
        values: values_of(h.field),
        comment: b'%',
    };
    let threads = o.assemble.threads;
    let header = MtxHeader {
        stored: declared,
        ..h
    };
    // Two threads, each with a half of the text (cut at a line end) from a
    // reader of its own, when there are at least two steps of it.
    let split = match file.len {
        Some(len)
            if threads >= 2 && !end && len.saturating_sub(start as u64) >= 2 * step as u64 =>
        {
            Some([start as u64, len])
        }
        _ => {
            buf.drain(..start);
            if !end {
                end = read(path, &mut *f, &mut buf, step)?;
            }
            None
        }
    };
    let text = Text {
        path,
        spec: &spec,
        step,
        threads,
        split,
    };
    if mirror {
        let m = Mirrored {
            text,
            shape: [rows, cols],
            declared: n,
            tag,
        };
        return Ok(m.read(&mut *f, buf, end, out)?.map(|nnz| (nnz, header)));
    }
    let Dest::Compressed(out) = out else {
        return Ok(None);
    };
    let Some(mut w) = Writer::new(out, [rows, cols], n, tag) else {
        return Ok(None);
    };
    let taken = match split {
        Some(range) => {
            // No memory for the second half: the general path decides.
            let Ok(mut arrays) = Arrays::like(&w) else {
                return Ok(None);
            };
            let mut second = arrays.writer(&w);
            text.halves(range, [&mut w, &mut second])? && w.append(&second, threads)
        }
        None => text.steps(&mut *f, buf, end, &mut w)?,
    };
    Ok((taken && w.finish()).then_some((w.n as u64, header)))
}

/// A symmetric file's lower triangle, strictly increasing in the arrays'
/// order (row by row for CSR, column by column for CSC), read as
/// [`in_order`] reads a general file, each entry written with its mirror
/// image. The stored entries are kept (16 bytes each) and counted per row
/// (or column); then each goes to its place and its image to the image's.
/// In that order every row comes out sorted: for CSR, row r's stored
/// entries (columns up to r) are read before the entries of later rows
/// whose images land in row r (columns above r, increasing); for CSC the
/// images (rows below c, from earlier columns) come first, then the
/// column's own. Stored entries below the diagonal and their images are
/// all distinct: nothing to combine. On two threads each half of the text
/// is read, parsed, kept and counted on a thread of its own; the counts
/// are then summed, and the order checked where the halves meet. Declines
/// (`None`) as [`in_order`].
struct Mirrored<'a> {
    text: Text<'a>,
    shape: [u64; 2],
    declared: usize,
    tag: u8,
}

/// A stored entry as [`Mirrored`] keeps it: (major, minor) in one word
/// (major in the high half: words order as the pairs do), the value in
/// the other. The size of a handle's (row, column) pair, in whose room it
/// may be kept.
type Kept = [u64; 2];

fn kept(major: u32, minor: u32, value: u64) -> Kept {
    [(u64::from(major) << 32) | u64::from(minor), value]
}

/// (major, minor, value) of a kept entry.
#[inline(always)]
fn parts(e: Kept) -> (u32, u32, u64) {
    ((e[0] >> 32) as u32, e[0] as u32, e[1])
}

impl Mirrored<'_> {
    fn read(
        &self,
        f: &mut dyn std::io::Read,
        buf: Vec<u8>,
        end: bool,
        out: Dest<'_, '_>,
    ) -> Result<Option<u64>, CooError> {
        let n = self.shape[0];
        if n != self.shape[1] || n > 1 << 32 {
            return Ok(None);
        }
        let csc = match &out {
            Dest::Compressed(out) => {
                let w = out.index_type.width() as u64;
                let offsets = n.checked_add(1).and_then(|k| k.checked_mul(w));
                if offsets != Some(out.offsets.len() as u64) {
                    return Ok(None);
                }
                out.format == Format::Csc
            }
            Dest::Pairs { .. } => false,
        };
        let out = match out {
            Dest::Pairs { coords, values } if self.text.split.is_none() => {
                return self.in_place(f, buf, end, coords, values);
            }
            out => out,
        };
        // Memory this path cannot have: the general path decides (it needs
        // more, and says so). The second half's counts only when there is
        // a second half.
        let second = if self.text.split.is_some() { n } else { 0 };
        let (Some(mut a), Some(mut b)) = (
            Stored::new(csc, self.declared, n as usize, List::Own(Vec::new())),
            Stored::new(csc, self.declared, second as usize, List::Own(Vec::new())),
        ) else {
            return Ok(None);
        };
        let taken = match self.text.split {
            Some(range) => self.text.halves(range, [&mut a, &mut b])?,
            None => self.text.steps(f, buf, end, &mut a)?,
        };
        // Both halves' lengths are of vectors in memory: no overflow.
        let (sa, sb) = (a.list.as_slice(), b.list.as_slice());
        if !taken || sa.len() + sb.len() != self.declared {
            return Ok(None);
        }
        // The second half's first entry after the first half's last.
        if let (Some(x), Some(y)) = (sa.last(), sb.first()) {
            if y[0] <= x[0] {
                return Ok(None);
            }
        }
        let mut count = std::mem::take(&mut a.count);
        for (c, d) in count.iter_mut().zip(&b.count) {
            *c += d;
        }
        b.count = Vec::new();
        // Sums of counts of at most 2 * declared entries: no overflow.
        let nnz: u64 = count.iter().sum();
        let kept = sa.len() + sb.len();
        let threads = crate::threads::count(self.text.threads, kept, 1 << 12).min(2);
        let s = Scatter {
            stored: [sa, sb],
            csc,
            threads,
        };
        let nnz_at = nnz as usize;
        let out = match out {
            Dest::Compressed(out) => out,
            Dest::Pairs { coords, values } => {
                // Read in halves on two threads (in one piece, `read` went
                // to `in_place`).
                if nnz_at > coords.len() || nnz_at > values.len() {
                    return Ok(None);
                }
                let at = starts(&mut count, |_, _| {});
                s.place_all(&mut count, at, &mut coords[..nnz_at], &mut values[..nnz_at]);
                return Ok(Some(nnz));
            }
        };
        let Some(ty) = crate::element::types::type_info(self.tag) else {
            return Ok(None);
        };
        let w = out.index_type.width();
        let base = u64::from(out.base);
        if !room_for(out, ty, nnz, n) {
            return Ok(None);
        }
        let Ok(values) = bytemuck::try_cast_slice_mut::<u8, u64>(&mut out.values[..nnz_at * 8])
        else {
            return Ok(None);
        };
        let (offsets, indices) = (&mut *out.offsets, &mut out.indices[..nnz_at * w]);
        let done = match out.index_type {
            IndexType::I32 => s.run::<i32>(&mut count, base, offsets, indices, values),
            IndexType::U32 => s.run::<u32>(&mut count, base, offsets, indices, values),
            IndexType::I64 => s.run::<i64>(&mut count, base, offsets, indices, values),
            IndexType::U64 => s.run::<u64>(&mut count, base, offsets, indices, values),
        };
        Ok(done.then_some(nnz))
    }

    /// A file read in one piece into a handle's `coords` and `values`
    /// (room for twice the declared count, as [`Dest::Pairs`] has), its
    /// stored entries kept in the second half of `coords`' room rather
    /// than a list of their own (no more memory than the handle's), then
    /// each placed with its image in the first part. Placing never writes
    /// past the entry it reads: stored entry k, the j-th of row r, is read
    /// at `declared + k` (k = the stored entries of rows before r, plus j)
    /// and goes to `offsets[r] + j` (the entries and images of rows before
    /// r, plus j), as the row's own entries come before the images landing
    /// in it (those come from later rows); the images before row r number
    /// at most the stored entries, `declared`. An image goes to an earlier
    /// row still. `Take` checked what this needs: every entry on or below
    /// the diagonal, each after the one before, `declared` of them.
    fn in_place(
        &self,
        f: &mut dyn std::io::Read,
        buf: Vec<u8>,
        end: bool,
        coords: &mut [[u64; 2]],
        values: &mut [u64],
    ) -> Result<Option<u64>, CooError> {
        let d = self.declared;
        let Ok(n) = usize::try_from(self.shape[0]) else {
            return Ok(None);
        };
        let Some(room) = coords.get_mut(d..).and_then(|r| r.get_mut(..d)) else {
            return Ok(None);
        };
        let lent = List::Lent { room, len: 0 };
        let Some(mut a) = Stored::new(false, d, n, lent) else {
            return Ok(None);
        };
        if !self.text.steps(f, buf, end, &mut a)? || a.list.as_slice().len() != d {
            return Ok(None);
        }
        let mut cursor = a.count;
        // Sums of counts of at most 2 * declared entries: no overflow.
        let nnz = cursor.iter().sum::<u64>() as usize;
        if nnz > coords.len() || nnz > values.len() {
            return Ok(None);
        }
        starts(&mut cursor, |_, _| {});
        // The handle's fresh pages about to be written, mapped in one call
        // each (from `d` on the coordinates' are mapped already: they hold
        // the stored entries).
        crate::aligned::populate(bytemuck::cast_slice_mut(&mut coords[..nnz.min(d)]));
        crate::aligned::populate(bytemuck::cast_slice_mut(&mut values[..nnz]));
        for k in d..2 * d {
            let (major, minor, value) = parts(coords[k]);
            let mut put = |major: u32, minor: u32| {
                if let Some(c) = cursor.get_mut(major as usize) {
                    let p = *c as usize;
                    debug_assert!(p <= k, "entry {k} placed at {p}, past it");
                    coords[p] = [u64::from(major), u64::from(minor)];
                    values[p] = value;
                    *c += 1;
                }
            };
            put(major, minor);
            if major != minor {
                put(minor, major);
            }
        }
        Ok(Some(nnz as u64))
    }
}

/// Where [`Stored`] keeps the entries: a list of its own, or room lent to
/// it (`len` of it used).
enum List<'a> {
    Own(Vec<Kept>),
    Lent { room: &'a mut [Kept], len: usize },
}

impl List<'_> {
    fn as_slice(&self) -> &[Kept] {
        match self {
            List::Own(v) => v,
            List::Lent { room, len } => &room[..*len],
        }
    }

    /// Room for `n` more entries; false when it cannot be had.
    fn reserve(&mut self, n: usize) -> bool {
        match self {
            List::Own(v) => v.try_reserve(n).is_ok(),
            List::Lent { room, len } => n <= room.len() - *len,
        }
    }

    /// After [`List::reserve`] made room for it.
    #[inline(always)]
    fn push(&mut self, e: Kept) {
        match self {
            List::Own(v) => v.push(e),
            List::Lent { room, len } => {
                room[*len] = e;
                *len += 1;
            }
        }
    }
}

/// A symmetric file's stored entries (or one half of them) as [`Mirrored`]
/// keeps them, with each row's count of entries and images.
struct Stored<'a> {
    csc: bool,
    declared: usize,
    /// In the file's order.
    list: List<'a>,
    count: Vec<u64>,
    last: (u64, u64),
}

impl<'a> Stored<'a> {
    /// Nothing kept yet (in `list`, empty), `n` counts at 0; `None`
    /// without the memory.
    fn new(csc: bool, declared: usize, n: usize, list: List<'a>) -> Option<Stored<'a>> {
        Some(Stored {
            csc,
            declared,
            list,
            count: crate::aligned::zeroed_vec(n)?,
            last: (0, 0),
        })
    }
}

impl Take for Stored<'_> {
    fn left(&self) -> u64 {
        (self.declared - self.list.as_slice().len()) as u64
    }

    /// Declines an entry above the diagonal, one not after the one before
    /// it, more than the size line's count, or memory it cannot have.
    fn take(&mut self, e: &Entries) -> bool {
        let had = self.list.as_slice().len();
        if e.n > self.declared - had || !self.list.reserve(e.n) {
            return false;
        }
        for (k, (c, &v)) in e.coords.chunks_exact(2).zip(&e.values).enumerate() {
            let (r, col) = (c[0], c[1]);
            let (ma, mi) = if self.csc { (col, r) } else { (r, col) };
            if r < col || (had + k > 0 && (ma, mi) <= self.last) {
                return false;
            }
            self.last = (ma, mi);
            // Below n <= 2^32 (the parser checked the extents).
            self.list.push(kept(ma as u32, mi as u32, v));
            self.count[ma as usize] += 1;
            if ma != mi {
                self.count[mi as usize] += 1;
            }
        }
        true
    }
}

/// The stored entries of a symmetric file and their mirror images placed
/// in the output (see [`Mirrored`]).
struct Scatter<'a> {
    /// The two halves' entries (the second may be empty), in the file's
    /// order.
    stored: [&'a [Kept]; 2],
    csc: bool,
    /// 1 or 2.
    threads: usize,
}

/// Each row's count in `count` turned into its first place (the sum of the
/// counts before it), handed to `each` with the row as it is found; the sum
/// of all.
fn starts(count: &mut [u64], mut each: impl FnMut(usize, u64)) -> u64 {
    let mut at = 0u64;
    for (r, c) in count.iter_mut().enumerate() {
        (at, *c) = (at + *c, at);
        each(r, *c);
    }
    at
}

/// Where [`place`] writes each entry's index (its value goes beside it).
trait Slots: Send + Sized {
    /// Entry `p` is in row (or column) `major` at index `minor`.
    fn set(&mut self, p: usize, major: u32, minor: u32);
    /// The slots before `at`, and those from `at` on (counted from 0).
    fn split_at(self, at: usize) -> (Self, Self);
    /// The slots' memory when it and the values beside it are the
    /// library's own fresh memory (a handle's buffers), whose pages
    /// [`place`] then has mapped in one call before writing them; `None`
    /// for a caller's arrays, which may be mapped already (asking again
    /// costs more than it saves).
    fn fresh(&mut self) -> Option<&mut [u8]>;
}

/// Compressed indices: each entry's minor index plus `base`, as `I`.
struct Narrowed<'a, I> {
    indices: &'a mut [I],
    base: u64,
}

impl<I: bytemuck::Pod + Narrow + Send> Slots for Narrowed<'_, I> {
    #[inline(always)]
    fn set(&mut self, p: usize, _major: u32, minor: u32) {
        self.indices[p] = I::narrow(u64::from(minor) + self.base);
    }

    fn split_at(self, at: usize) -> (Self, Self) {
        let (a, b) = self.indices.split_at_mut(at);
        let base = self.base;
        (Narrowed { indices: a, base }, Narrowed { indices: b, base })
    }

    fn fresh(&mut self) -> Option<&mut [u8]> {
        None
    }
}

/// A handle's coordinates, row-major (`Mirrored` reads into them as CSR):
/// each entry's (row, column).
impl Slots for &mut [[u64; 2]] {
    #[inline(always)]
    fn set(&mut self, p: usize, major: u32, minor: u32) {
        self[p] = [u64::from(major), u64::from(minor)];
    }

    fn split_at(self, at: usize) -> (Self, Self) {
        self.split_at_mut(at)
    }

    fn fresh(&mut self) -> Option<&mut [u8]> {
        Some(bytemuck::cast_slice_mut(self))
    }
}

impl Scatter<'_> {
    /// The offsets (plus `base`) from `count`, and every stored entry and
    /// its mirror image placed (see [`Scatter::place_all`]). False when the
    /// arrays do not cast to `I`.
    fn run<I: bytemuck::Pod + Narrow + Send>(
        &self,
        count: &mut [u64],
        base: u64,
        offsets: &mut [u8],
        indices: &mut [u8],
        values: &mut [u64],
    ) -> bool {
        let (Ok(offsets), Ok(indices)) = (
            bytemuck::try_cast_slice_mut::<u8, I>(offsets),
            bytemuck::try_cast_slice_mut::<u8, I>(indices),
        ) else {
            return false;
        };
        // One pass: each row's offset is written as its start is found.
        let at = starts(count, |r, start| {
            if let Some(o) = offsets.get_mut(r) {
                *o = I::narrow(start + base);
            }
        });
        if let Some(o) = offsets.last_mut() {
            *o = I::narrow(at + base);
        }
        self.place_all(count, at, Narrowed { indices, base }, values);
        true
    }

    /// Every stored entry and its mirror image at its row's next place
    /// (`count`: each row's first place, [`starts`] of `at` in all); on two
    /// threads each places the rows of one half of the output. Each row's
    /// entries are placed in the file's order either way, which is the
    /// row's sorted order.
    fn place_all<S: Slots>(&self, count: &mut [u64], at: u64, slots: S, values: &mut [u64]) {
        if self.threads < 2 {
            place(self.stored, 0, count, 0, slots, values);
            return;
        }
        // The first row of the second half: where half the entries start.
        let split = count.partition_point(|&start| start < at / 2);
        let first = count.get(split).map_or(at, |&p| p);
        let (c0, c1) = count.split_at_mut(split);
        let (i0, i1) = slots.split_at(first as usize);
        let (v0, v1) = values.split_at_mut(first as usize);
        // The entries that can land in each half: for CSR an entry's image
        // row is at most its own (rows of the second half come from the
        // entries of majors from `split` on); for CSC at least its own.
        let [a, b] = self.stored;
        let from = |s: &[Kept]| s.partition_point(|e| (parts(*e).0 as usize) < split);
        let (fa, fb) = (from(a), from(b));
        let (s0, s1) = match self.csc {
            false => (self.stored, [&a[fa..], &b[fb..]]),
            true => ([&a[..fa], &b[..fb]], self.stored),
        };
        let halves = vec![(s0, 0, c0, 0, i0, v0), (s1, split, c1, first, i1, v1)];
        crate::threads::run(halves, |_, (stored, lo, cursor, at, slots, val)| {
            place(stored, lo, cursor, at, slots, val)
        });
    }
}

/// The entries of `stored` (its two parts in turn) and their images whose
/// rows are `lo` up to `lo + cursor.len()`, at their rows' next places
/// (`cursor`, positions from `at` on, as in `slots` and `values`).
fn place<S: Slots>(
    stored: [&[Kept]; 2],
    lo: usize,
    cursor: &mut [u64],
    at: u64,
    mut slots: S,
    values: &mut [u64],
) {
    if let Some(bytes) = slots.fresh() {
        crate::aligned::populate(bytes);
        crate::aligned::populate(bytemuck::cast_slice_mut(values));
    }
    let mut put = |major: u32, minor: u32, v: u64| {
        if let Some(c) = (major as usize)
            .checked_sub(lo)
            .and_then(|r| cursor.get_mut(r))
        {
            let p = (*c - at) as usize;
            slots.set(p, major, minor);
            values[p] = v;
            *c += 1;
        }
    };
    for part in stored {
        for &e in part {
            let (major, minor, value) = parts(e);
            put(major, minor, value);
            if major != minor {
                put(minor, major, value);
            }
        }
    }
}

/// The second half's arrays (see [`Text::halves`]): zeroed memory, of which only
/// what is written is ever touched.
struct Arrays {
    offsets: crate::aligned::AlignedBuf,
    indices: crate::aligned::AlignedBuf,
    values: crate::aligned::AlignedBuf,
}

impl Arrays {
    /// Room for as many offsets, indices and values as `w` has.
    fn like(w: &Writer<'_>) -> Result<Arrays, CooError> {
        use crate::aligned::AlignedBuf;
        Ok(Arrays {
            offsets: AlignedBuf::zeroed(w.offsets.len(), "the second half's offsets")?,
            indices: AlignedBuf::zeroed(w.indices.len(), "the second half's indices")?,
            values: AlignedBuf::zeroed(w.values.len() * 8, "the second half's values")?,
        })
    }

    /// A writer of `w`'s kind into these arrays, its offsets counted from 0.
    fn writer<'a>(&'a mut self, w: &Writer<'_>) -> Writer<'a> {
        Writer {
            index_type: w.index_type,
            csc: w.csc,
            base: w.base,
            offset_base: 0,
            offsets: self.offsets.as_bytes_mut(),
            indices: self.indices.as_bytes_mut(),
            values: bytemuck::cast_slice_mut(self.values.as_bytes_mut()),
            n: 0,
            majors_done: 0,
            first: (0, 0),
            last: (0, 0),
        }
    }
}

/// The caller's compressed arrays as [`in_order`] fills them.
struct Writer<'o> {
    index_type: IndexType,
    csc: bool,
    /// Added to indices; `offset_base` to offsets.
    base: u64,
    offset_base: u64,
    offsets: &'o mut [u8],
    indices: &'o mut [u8],
    values: &'o mut [u64],
    /// Entries written; offsets written (majors up to the last entry's).
    n: usize,
    majors_done: usize,
    /// The first and last entries written, (major, minor).
    first: (u64, u64),
    last: (u64, u64),
}

impl<'o> Writer<'o> {
    /// `out` ready for `most` entries of a `shape` matrix whose values are
    /// 8-byte words of type `tag`, or `None` where the general path must
    /// decide (it gives the error, or works with what this path cannot).
    fn new(out: &'o mut CompressedOut<'_>, shape: [u64; 2], most: usize, tag: u8) -> Option<Self> {
        let csc = out.format == Format::Csc;
        let [major, minor] = if csc { [shape[1], shape[0]] } else { shape };
        let w = out.index_type.width();
        let ty = crate::element::types::type_info(tag)?;
        let b = u64::from(out.base);
        let offsets_len = usize::try_from(major)
            .ok()?
            .checked_add(1)?
            .checked_mul(w)?;
        if out.offsets.len() != offsets_len || !room_for(out, ty, most as u64, minor) {
            return None;
        }
        let offsets = &mut *out.offsets;
        let indices = &mut out.indices[..most * w];
        let values = bytemuck::try_cast_slice_mut(&mut out.values[..most * 8]).ok()?;
        let aligned = match w {
            4 => {
                bytemuck::try_cast_slice::<u8, u32>(offsets).is_ok()
                    && bytemuck::try_cast_slice::<u8, u32>(indices).is_ok()
            }
            _ => {
                bytemuck::try_cast_slice::<u8, u64>(offsets).is_ok()
                    && bytemuck::try_cast_slice::<u8, u64>(indices).is_ok()
            }
        };
        aligned.then_some(Writer {
            index_type: out.index_type,
            csc,
            base: b,
            offset_base: b,
            offsets,
            indices,
            values,
            n: 0,
            majors_done: 0,
            first: (0, 0),
            last: (0, 0),
        })
    }

    /// The most entries room was made for (the size line's count).
    fn room(&self) -> usize {
        self.values.len()
    }

    fn take_as<I: bytemuck::Pod + Narrow>(&mut self, e: &Entries) -> bool {
        // Checked in `new`: both cast.
        let (Ok(offsets), Ok(indices)) = (
            bytemuck::try_cast_slice_mut::<u8, I>(self.offsets),
            bytemuck::try_cast_slice_mut::<u8, I>(self.indices),
        ) else {
            return false;
        };
        if e.n > indices.len() - self.n {
            return false;
        }
        let (b, ob, csc) = (self.base, self.offset_base, self.csc);
        let (mut n, mut done, mut last) = (self.n, self.majors_done, self.last);
        let mut ok = true;
        for (c, &v) in e.coords.chunks_exact(2).zip(&e.values) {
            let (ma, mi) = if csc { (c[1], c[0]) } else { (c[0], c[1]) };
            if n > 0 && (ma, mi) <= last {
                ok = false;
                break;
            }
            if n == 0 {
                self.first = (ma, mi);
            }
            // ma < major (the parser checked the extents): its offset and
            // those of the empty majors before it.
            let ma_at = ma as usize;
            while done <= ma_at {
                offsets[done] = I::narrow(n as u64 + ob);
                done += 1;
            }
            indices[n] = I::narrow(mi + b);
            self.values[n] = v;
            n += 1;
            last = (ma, mi);
        }
        (self.n, self.majors_done, self.last) = (n, done, last);
        ok
    }

    /// `s`'s entries (written with offsets counted from 0) after these,
    /// copied on up to `threads` threads: false when its first is not after
    /// the last of these, or room lacks.
    fn append(&mut self, s: &Writer<'_>, threads: usize) -> bool {
        if s.n == 0 {
            return true;
        }
        if (self.n > 0 && s.first <= self.last) || s.n > self.room() - self.n {
            return false;
        }
        let w = self.index_type.width();
        let add = self.n as u64 + self.offset_base;
        // The offsets of the majors after these entries' last, up to `s`'s
        // last (those up to its first major are 0 in `s`).
        for m in self.majors_done..s.majors_done {
            let at = m * w..(m + 1) * w;
            let v = match w {
                4 => u64::from(u32::from_le_bytes(
                    s.offsets[at.clone()].try_into().unwrap_or([0; 4]),
                )),
                _ => u64::from_le_bytes(s.offsets[at.clone()].try_into().unwrap_or([0; 8])),
            };
            self.offsets[at].copy_from_slice(&(v + add).to_le_bytes()[..w]);
        }
        let (from, to) = (self.n, self.n + s.n);
        use crate::threads::copy;
        copy(
            &mut self.indices[from * w..to * w],
            &s.indices[..s.n * w],
            threads,
        );
        copy(&mut self.values[from..to], &s.values[..s.n], threads);
        if self.n == 0 {
            self.first = s.first;
        }
        self.n = to;
        self.majors_done = self.majors_done.max(s.majors_done);
        self.last = s.last;
        true
    }

    /// The offsets after the last entry's major; false when fewer entries
    /// were written than room was made for (the size line's count).
    fn finish(&mut self) -> bool {
        if self.n != self.room() {
            return false;
        }
        let n = self.n as u64 + self.offset_base;
        match self.index_type {
            IndexType::I32 => fill::<i32>(self.offsets, self.majors_done, n),
            IndexType::U32 => fill::<u32>(self.offsets, self.majors_done, n),
            IndexType::I64 => fill::<i64>(self.offsets, self.majors_done, n),
            IndexType::U64 => fill::<u64>(self.offsets, self.majors_done, n),
        }
        true
    }
}

impl Take for Writer<'_> {
    fn left(&self) -> u64 {
        (self.room() - self.n) as u64
    }

    /// Write `e`'s entries after those already written; false when one is
    /// not after the one before it, or there are more than room was made
    /// for.
    fn take(&mut self, e: &Entries) -> bool {
        match self.index_type {
            IndexType::I32 => self.take_as::<i32>(e),
            IndexType::U32 => self.take_as::<u32>(e),
            IndexType::I64 => self.take_as::<i64>(e),
            IndexType::U64 => self.take_as::<u64>(e),
        }
    }
}

/// Whether `out` takes `nnz` entries of type `ty` whose minor indices are
/// below `minor`: the indices and the last offset fit its index type, and
/// its indices and values have room (the general path gives the error
/// when not).
fn room_for(
    out: &CompressedOut<'_>,
    ty: &crate::element::types::TypeInfo,
    nnz: u64,
    minor: u64,
) -> bool {
    let (b, max) = (u64::from(out.base), out.index_type.max());
    // compressed_room checks the last offset (nnz + base, without
    // overflow) against the index type.
    (nnz == 0 || minor == 0 || minor - 1 + b <= max)
        && crate::assemble::compressed_room(
            ty,
            nnz,
            out.base,
            out.format.name(),
            out.index_type,
            out.indices.len(),
            Some(out.values.len()),
        )
        .is_ok()
}

/// `offsets[from..]` (bytes of `I`) = `v`.
fn fill<I: bytemuck::Pod + Narrow>(offsets: &mut [u8], from: usize, v: u64) {
    if let Ok(o) = bytemuck::try_cast_slice_mut::<u8, I>(offsets) {
        o[from..].fill(I::narrow(v));
    }
}

/// A lack of room said as a file reader's caller needs it: room for every
/// entry the file gives always suffices.
fn room_for_file(e: CooError, most: u64) -> CooError {
    match e {
        CooError::BufferTooSmall {
            what,
            got,
            needed,
            why,
        } => CooError::BufferTooSmall {
            what,
            got,
            needed,
            why: why.replace(
                ROOM_HINT,
                &format!(
                    "room for the {most} entries the file gives, mirror images included, \
                     always suffices"
                ),
            ),
        },
        other => other,
    }
}

impl MtxSize {
    /// The bytes of a `format` read with `index_type` indices: offsets
    /// exactly, indices and values for the most entries (always enough).
    pub fn room(
        &self,
        format: crate::convert::Format,
        index_type: crate::assemble::IndexType,
    ) -> Result<crate::convert::CompressedSizes, CooError> {
        let ty = crate::element::types::type_info(self.type_tag).ok_or(CooError::OutOfRange {
            what: "value type",
            value: u64::from(self.type_tag),
            allowed: "the tag of a real or integer element type".into(),
        })?;
        crate::convert::compressed_sizes_of(
            [self.rows, self.cols],
            self.most,
            ty,
            format,
            index_type,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::Duplicates;

    fn rng(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// A file of `n` distinct random entries of a `rows` x `cols` matrix
    /// (general), or of a square matrix's lower triangle (symmetric, now
    /// and then with an entry above the diagonal), in row order, column
    /// order or neither, sometimes with one entry moved or repeated; its
    /// text and its entries.
    fn file(s: &mut u64, n: usize, integer: bool, symmetric: bool) -> (String, Vec<(u64, u64)>) {
        let (rows, cols) = (1 + rng(s) % 300, 1 + rng(s) % 300);
        let cols = if symmetric { rows } else { cols };
        let mut keys: Vec<(u64, u64)> = (0..n)
            .map(|_| {
                let (r, c) = (rng(s) % rows, rng(s) % cols);
                match symmetric && r < c && !rng(s).is_multiple_of(64) {
                    true => (c, r),
                    false => (r, c),
                }
            })
            .collect();
        let order = rng(s) % 3;
        match order {
            0 => keys.sort_unstable(),
            1 => keys.sort_unstable_by_key(|&(r, c)| (c, r)),
            _ => {}
        }
        keys.dedup();
        if keys.len() > 2 && rng(s).is_multiple_of(4) {
            // One entry repeated or moved: out of order from there on.
            let (a, b) = (
                (rng(s) as usize) % keys.len(),
                (rng(s) as usize) % keys.len(),
            );
            keys[a] = keys[b];
        }
        let field = if integer { "integer" } else { "real" };
        let sym = if symmetric { "symmetric" } else { "general" };
        let mut t = format!("%%MatrixMarket matrix coordinate {field} {sym}\n% c\n");
        t += &format!("{rows} {cols} {}\n", keys.len());
        for &(r, c) in &keys {
            let v = rng(s) % 2001;
            match integer {
                true => t += &format!("{} {} {}\n", r + 1, c + 1, v as i64 - 1000),
                false => t += &format!("{} {} {}\n", r + 1, c + 1, (v as f64 - 1000.0) / 7.0),
            }
        }
        (t, keys)
    }

    /// 8-byte-aligned arrays (as the caller's malloc gives) of `sizes`
    /// bytes, every byte 0xAB.
    fn words_for(sizes: [u64; 3]) -> [Vec<u64>; 3] {
        sizes.map(|b| vec![0xABAB_ABAB_ABAB_ABABu64; (b as usize).div_ceil(8)])
    }

    /// `words` as the output arrays of `sizes` bytes.
    fn arrays(
        words: &mut [Vec<u64>; 3],
        sizes: [u64; 3],
        format: Format,
        index_type: IndexType,
        base: u8,
    ) -> CompressedOut<'_> {
        let [wo, wi, wv] = words;
        CompressedOut {
            format,
            index_type,
            base,
            offsets: &mut bytemuck::cast_slice_mut(wo)[..sizes[0] as usize],
            indices: &mut bytemuck::cast_slice_mut(wi)[..sizes[1] as usize],
            values: &mut bytemuck::cast_slice_mut(wv)[..sizes[2] as usize],
        }
    }

    /// `in_order` writes what the handle reader's export gives (600 random
    /// files), for every
    /// index type, base, format and step (files of many steps), on 1 and
    /// 2 threads (a file of at least two steps in two halves), general and
    /// symmetric files (mirrored, or kept triangular); it takes every file
    /// in its format's order (a mirrored one: its lower triangle) and
    /// declines every other one.
    #[test]
    fn a_file_in_order_is_written_as_its_handle_exports() {
        use crate::convert::export_compressed;
        let dir = std::env::temp_dir().join(format!("hurray_in_order_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.mtx");
        let mut s = 77u64;
        let its = [
            IndexType::I32,
            IndexType::U32,
            IndexType::I64,
            IndexType::U64,
        ];
        let (mut taken, mut declined, mut mirrors) = (0, 0, 0);
        for round in 0..600 {
            let n = match round % 7 {
                0 => 20_000,
                1 => 400 + (rng(&mut s) % 2000) as usize,
                _ => (rng(&mut s) % 60) as usize,
            };
            let symmetric = round % 3 == 2;
            let (text, keys) = file(&mut s, n, round % 4 == 1, symmetric);
            std::fs::write(&path, &text).unwrap();
            let mut o = TextOptions::default();
            o.assemble.duplicates = [Duplicates::Sum, Duplicates::Error][round % 2];
            o.assemble.threads = 1 + (rng(&mut s) % 2) as usize;
            o.keep_triangular = rng(&mut s).is_multiple_of(4);
            let mirrored = symmetric && !o.keep_triangular;
            let format = [Format::Csr, Format::Csc][(rng(&mut s) % 2) as usize];
            let it = its[(rng(&mut s) % 4) as usize];
            let base = (rng(&mut s) % 2) as u8;
            let want = super::super::read_mtx_file(&path, &o).map(|(coo, h)| {
                let sz = crate::convert::compressed_sizes(&coo, format, it).unwrap();
                let mut a = [sz.offsets, sz.indices, sz.values].map(|n| vec![0u8; n as usize]);
                let [off, idx, val] = &mut a;
                export_compressed(&coo, format, it, base, off, idx, val, 1).unwrap();
                (a, coo.nnz(), h)
            });
            let step = [64usize, 300, 1 << 12, STEP][(rng(&mut s) % 4) as usize];
            let room = mtx_file_size(&path, &o).unwrap().room(format, it).unwrap();
            // 8-byte aligned arrays, as the caller's malloc gives.
            let sizes = [room.offsets, room.indices, room.values];
            let mut words = words_for(sizes);
            let mut out = arrays(&mut words, sizes, format, it, base);
            let major = |&(r, c): &(u64, u64)| {
                if format == Format::Csc {
                    (c, r)
                } else {
                    (r, c)
                }
            };
            let in_its_order = keys.windows(2).all(|w| major(&w[0]) < major(&w[1]))
                && (!mirrored || keys.iter().all(|&(r, c)| r >= c));
            match in_order(&path, &o, Dest::Compressed(&mut out), step).unwrap() {
                Some((nnz, h)) => {
                    taken += 1;
                    mirrors += usize::from(mirrored);
                    assert!(in_its_order, "round {round}: taken out of order\n{text}");
                    let (a, wn, wh) = want.as_ref().unwrap();
                    assert_eq!((nnz, h), (*wn, *wh), "round {round}");
                    assert_eq!(out.offsets, &a[0][..], "round {round}: offsets\n{text}");
                    assert_eq!(&out.indices[..a[1].len()], &a[1][..], "round {round}");
                    assert_eq!(&out.values[..a[2].len()], &a[2][..], "round {round}");
                    assert!(out.indices[a[1].len()..].iter().all(|&b| b == 0xAB));
                    assert!(out.values[a[2].len()..].iter().all(|&b| b == 0xAB));
                }
                None => {
                    declined += 1;
                    assert!(!in_its_order, "round {round}: declined\n{text}");
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            taken > 120 && declined > 200 && mirrors > 25,
            "{taken} taken ({mirrors} mirrored), {declined} declined"
        );
    }

    /// Two threads cut the text at the first line end from its middle
    /// byte: a file whose two halves are each in order, but the second
    /// starts before the first ends (the same entries again), is declined
    /// there; with the second half after the first it is taken. The same
    /// for a symmetric file's lower triangle, mirrored.
    #[test]
    fn an_order_broken_where_the_halves_meet_is_seen() {
        let dir = std::env::temp_dir().join(format!("hurray_halves_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.mtx");
        // Rows 11 on, columns 1-10: below the diagonal of a 100 x 100 matrix.
        let lines = |rows: std::ops::Range<u64>| -> String {
            rows.map(|r| format!("{} {} {}.5\n", r / 10 + 11, r % 10 + 1, r))
                .collect()
        };
        for symmetric in [false, true] {
            for (second, taken) in [(0..400, false), (401..801, true)] {
                // The first half ends with a longer line, into which the
                // middle byte falls: the cut is where the second half starts.
                let body = lines(0..400) + "51 1 1234567890.25\n" + &lines(second.clone());
                let kind = ["general", "symmetric"][usize::from(symmetric)];
                let text =
                    format!("%%MatrixMarket matrix coordinate real {kind}\n100 100 801\n{body}");
                std::fs::write(&path, &text).unwrap();
                let mut o = TextOptions::default();
                o.assemble.threads = 2;
                let nnz = if symmetric { 2 * 801 } else { 801 };
                let sizes = [101 * 4, nnz * 4, nnz * 8];
                let mut words = words_for(sizes);
                let mut out = arrays(&mut words, sizes, Format::Csr, IndexType::I32, 0);
                let got = in_order(&path, &o, Dest::Compressed(&mut out), 64).unwrap();
                assert_eq!(got.is_some(), taken, "{kind} {second:?}");
                if let Some((n, _)) = got {
                    assert_eq!(n, nnz);
                    let offsets: &[i32] = bytemuck::cast_slice(out.offsets);
                    assert_eq!(offsets[100] as u64, nnz, "{kind}");
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `symmetric_handle` takes exactly the files it is for (a mirrored
    /// symmetric real or integer file in row order), giving every entry
    /// and its image; any other file is left to the general reader.
    #[test]
    fn the_symmetric_handle_reader_takes_what_it_is_for() {
        let dir = std::env::temp_dir().join(format!("hurray_symh_unit_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.mtx");
        // Rows 1-40, each with its diagonal and column 1: 40 + 39 stored,
        // 40 + 2 * 39 after mirroring.
        let mut lines = String::new();
        for r in 1..=40 {
            if r > 1 {
                lines += &format!("{r} 1 {r}.5\n");
            }
            lines += &format!("{r} {r} {r}.5\n");
        }
        let stored = lines.lines().count();
        let file = |kind: &str, body: &str| {
            let n = body.lines().count();
            format!("%%MatrixMarket matrix coordinate {kind}\n40 40 {n}\n{body}")
        };
        let cases = [
            (
                file("real symmetric", &lines),
                TextOptions::default(),
                Some(40 + 2 * 39),
            ),
            (
                file("integer symmetric", &lines.replace(".5", "")),
                TextOptions::default(),
                Some(118),
            ),
            (file("real general", &lines), TextOptions::default(), None),
            (
                file("real symmetric", &(lines.clone() + "3 7 1.0\n")),
                TextOptions::default(),
                None,
            ),
            (
                file("real symmetric", &lines),
                TextOptions {
                    keep_triangular: true,
                    ..Default::default()
                },
                None,
            ),
        ];
        assert_eq!(stored, 79);
        for (k, (text, o, want)) in cases.iter().enumerate() {
            std::fs::write(&path, text).unwrap();
            let got = symmetric_handle(&path, o)
                .unwrap()
                .map(|(coo, _)| coo.nnz());
            assert_eq!(got, *want, "case {k}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A mirrored symmetric file large enough for two threads to place
    /// its entries (each the rows of one half of the output) gives the
    /// handle's export, for CSR and CSC, every index type and base, read
    /// in one piece or in two halves; and, for CSR, the handle's own
    /// coordinates and values when read into a handle's buffers. The
    /// handle is the in-memory reader's (no path of this file's).
    #[test]
    fn a_symmetric_file_placed_on_two_threads_is_its_handles_export() {
        use crate::convert::export_compressed;
        let dir = std::env::temp_dir().join(format!("hurray_sym2_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.mtx");
        let mut s = 991u64;
        for round in 0..16 {
            let format = [Format::Csr, Format::Csc][round % 2];
            let it = [
                IndexType::I32,
                IndexType::U32,
                IndexType::I64,
                IndexType::U64,
            ][round / 2 % 4];
            let base = (round / 8) as u8;
            // A third of a 300 x 300 lower triangle (15k entries: two
            // threads), in the format's order.
            let m = 300u64;
            let mut keys = Vec::new();
            for a in 0..m {
                for b in 0..m {
                    let (r, c) = if format == Format::Csc {
                        (b, a)
                    } else {
                        (a, b)
                    };
                    if r >= c && rng(&mut s).is_multiple_of(3) {
                        keys.push((r, c));
                    }
                }
            }
            let mut text = format!(
                "%%MatrixMarket matrix coordinate real symmetric\n{m} {m} {}\n",
                keys.len()
            );
            for &(r, c) in &keys {
                text += &format!("{} {} {}.25\n", r + 1, c + 1, rng(&mut s) % 1000);
            }
            std::fs::write(&path, &text).unwrap();
            let mut o = TextOptions::default();
            o.assemble.threads = 2;
            let (coo, h) = super::super::read_mtx(text.as_bytes(), &o).unwrap();
            let sz = crate::convert::compressed_sizes(&coo, format, it).unwrap();
            let mut a = [sz.offsets, sz.indices, sz.values].map(|n| vec![0u8; n as usize]);
            let [off, idx, val] = &mut a;
            export_compressed(&coo, format, it, base, off, idx, val, 1).unwrap();
            let room = mtx_file_size(&path, &o).unwrap().room(format, it).unwrap();
            let sizes = [room.offsets, room.indices, room.values];
            let mut words = words_for(sizes);
            let mut out = arrays(&mut words, sizes, format, it, base);
            // Half the rounds in 4 KiB steps: each half of the text read,
            // kept and counted on a thread of its own.
            let step = [STEP, 1 << 12][round / 2 % 2];
            let (nnz, gh) = in_order(&path, &o, Dest::Compressed(&mut out), step)
                .unwrap()
                .expect("taken");
            assert_eq!((nnz, gh), (coo.nnz(), h), "round {round}");
            assert_eq!(out.offsets, &a[0][..], "round {round}");
            assert_eq!(&out.indices[..a[1].len()], &a[1][..], "round {round}");
            assert_eq!(&out.values[..a[2].len()], &a[2][..], "round {round}");
            if format == Format::Csr {
                // Room for every stored entry and its image; the values
                // past the entries stay as they were.
                let most = 2 * keys.len();
                let mut coords = vec![[7u64; 2]; most];
                let mut values = vec![7u64; most];
                let into = Dest::Pairs {
                    coords: &mut coords,
                    values: &mut values,
                };
                let (nnz, gh) = in_order(&path, &o, into, step).unwrap().expect("taken");
                let n = nnz as usize;
                assert_eq!((nnz, gh), (coo.nnz(), h), "round {round}");
                assert_eq!(coords[..n].as_flattened(), coo.indices(), "round {round}");
                let want: &[u64] = bytemuck::cast_slice(coo.values());
                assert_eq!(&values[..n], want, "round {round}");
                assert!(values[n..].iter().all(|&v| v == 7), "round {round}");
                // In one piece the stored entries were kept in the second
                // half of the coordinates' room; in halves, in lists.
                let untouched = coords[n..].iter().all(|&c| c == [7; 2]);
                assert_eq!(untouched, step != STEP, "round {round}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
