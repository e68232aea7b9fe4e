//! The solver's path: a matrix assembled without a plan, with a policy that
//! combines values without arithmetic that can fail (float32 and float64
//! SUM; FIRST and LAST of any whole-byte type; ERROR while nothing repeats;
//! a pattern under any policy).
//! `rank2.rs` has decided the shape fits and reads the coordinates.
//!
//! 0. A read-only scan over 32-bit coordinate arrays (`words_in_order`,
//!    which runs in vector registers) asks whether every triplet is in
//!    bounds, kept and strictly after the one before it. If so, the input
//!    is copied straight into the result: there is nothing else to do. The
//!    scan stops at the first block of triplets that is not. Into a handle
//!    (`CooSink::sorted_words`) there is no scan: per-dimension arrays of
//!    32- or 64-bit coordinates are written into the result a block at a
//!    time and each block checked as written, once the first block is seen
//!    to be in order.
//! 1. Threads over triplet ranges check every coordinate, count each row's
//!    triplets, see whether the input is already strictly sorted (for the
//!    extents the scan leaves to them), how often a triplet's row is near
//!    the one before, and which rows each span of triplets touches.
//! 2. Threads over row ranges (`fold_rows`) read the spans that touch their
//!    rows and place each triplet's column and value into its row's bucket,
//!    in triplet order (reading 32-bit arrays directly when pass 1 found
//!    every coordinate there in bounds and kept). With locality, a short
//!    row's triplet combines with its column's entry when the row has one
//!    already. Scattered triplets on several threads are placed by pass 1's
//!    triplet ranges instead (`place_scattered`), each range after the
//!    earlier ones in every row, so the rows hold the same order.
//! 3. The same threads combine the rows placed whole (a marker per column
//!    says where the column's entry is), sort each row's entries by column
//!    and compact them in place.
//! 4. The same ranges write the result: the canonical COO (`CooSink`), or
//!    the caller's CSR/CSC arrays (`compressed.rs`, through `Sink`). The
//!    canonical COO's values buffer is the values' buckets themselves
//!    (`Sink::scratch`), and its values are left where the rows were
//!    folded (`Sink::placed`).
//!
//! Anything else (an error to report, a repeat under ERROR, a plan, other
//! types or policies, memory that cannot be had) returns `None` before any
//! result exists, and `rank2.rs` takes over with the same triplets: the
//! errors reported are its.
//!
//! What it trusts: the result is sorted and duplicate-free by construction
//! (rows in order, columns sorted and combined within a row) and every
//! coordinate was checked in pass 1, so it is not validated a second time
//! (`Coo::from_built`); debug builds validate it anyway, and
//! `tests/assemble.rs` compares every case with the general path.

use super::combine::{is_zero, sum_f32, sum_f64};
use super::plan::Plan;
use super::read::{IndexType, Word, Words, Words64};
use super::{AssembleOptions, Duplicates, Triplets};
use crate::aligned::{fill, zeroed_vec, AlignedBuf, Unfilled};
use crate::coo::validate::scan::first_sorted_violation;
use crate::coo::Coo;
use crate::element::types::{Encoding, TypeInfo};
use crate::error::CooError;
use crate::hint::{prefetch, prefetch_at};
use crate::threads;
use bytemuck::Pod;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// What an assembly into a handle gives: the handle and, if asked, the
/// plan for re-assembling new values.
pub(super) type Assembled = Result<(Coo<'static>, Option<Plan>), CooError>;

/// Where the kernel's result goes once the triplets are checked, counted
/// and combined: the canonical COO (`CooSink`), or the caller's own CSR or
/// CSC arrays (`compressed.rs`). The input is valid by then: every
/// coordinate in bounds, no repeat under ERROR.
pub(super) trait Sink {
    type Out;
    /// Whether this sink can take values of type `T` (the caller's arrays
    /// aligned for it); checked before any work.
    fn takes<T: Pod>(&self) -> bool;
    /// Strictly sorted input, every triplet kept.
    fn sorted<T: Pod + Send + Sync, A: Fn(usize) -> (usize, usize) + Sync>(
        self,
        s: SortedInput<'_, T, A>,
    ) -> Option<Self::Out>;
    /// Combined rows.
    fn rows<T: Pod + Send + Sync>(self, r: Rows<'_, T>) -> Option<Self::Out>;
    /// Whether the sink takes input that may be sorted through
    /// [`Sink::sorted_words`], checking it as it writes, rather than after
    /// a scan of its own (`words_in_order`).
    const CHECKS_AS_IT_WRITES: bool = false;
    /// Input from per-dimension arrays that may be strictly sorted: the
    /// result written a block at a time, each block checked as written
    /// (every entry in bounds and after the one before); `Err(self)` when
    /// one is not, and nothing of it is kept. Only called when
    /// [`Sink::CHECKS_AS_IT_WRITES`].
    fn sorted_words<T: Pod + Send + Sync, W: Word>(
        self,
        _s: SortedWords<'_, T, W>,
    ) -> Result<Option<Self::Out>, Self>
    where
        Self: Sized,
    {
        Err(self)
    }
    /// Whether the memory [`Sink::scratch`] lends is in huge pages, as the
    /// library's own buckets are, so that scattered triplets may be placed
    /// in it too.
    const HUGE: bool = false;
    /// The sink's own memory as the buckets of `kept` triplets (columns
    /// and values), when the caller allowed that and it has the room and
    /// the alignment; `None`: the kernel allocates its own.
    fn scratch<T: Pod>(&mut self, _kept: usize) -> Option<(&mut [u32], &mut [T])> {
        None
    }
    /// Combined rows, folded in the memory `scratch` lent: part `k`'s
    /// entries are at `parts[k].at` of it (only called after `scratch`
    /// returned `Some`).
    fn placed(self, _p: Placed) -> Option<Self::Out>
    where
        Self: Sized,
    {
        None
    }
}

/// Combined rows left where `Sink::scratch` put them, parts in row order:
/// a part's `entries` columns and values start at `at` of the lent arrays
/// (values `width` bytes each), `per_row` of them in each of its rows.
pub(super) struct Placed {
    pub ty: &'static TypeInfo,
    /// Bytes per value.
    pub width: usize,
    pub parts: Vec<PlacedPart>,
}

pub(super) struct PlacedPart {
    pub at: usize,
    pub entries: usize,
    pub per_row: Vec<u32>,
}

impl Placed {
    /// Each part's items in `bytes` (`width` bytes each, a part's from its
    /// `at`) moved down to follow the part before: never up, as a part
    /// holds at most its triplets.
    pub(super) fn follow(&self, bytes: &mut [u8], width: usize) {
        let mut to = 0usize;
        for q in &self.parts {
            if q.at != to {
                bytes.copy_within(q.at * width..(q.at + q.entries) * width, to * width);
            }
            to += q.entries;
        }
    }
}

/// Strictly sorted input: `at(i)` is triplet `i`'s 0-based (row, column).
pub(super) struct SortedInput<'a, T, A> {
    pub n: usize,
    pub ty: &'static TypeInfo,
    pub shape: &'a [u64],
    pub drop_zeros: bool,
    pub threads: usize,
    pub vals: Values<'a, T>,
    pub at: &'a A,
}

/// Input that may be strictly sorted, from per-dimension arrays of 32- or
/// 64-bit words: triplet `i` is at `rows[i] - base`, `cols[i] - base`, its
/// value `vals[i]`; every triplet kept (no zeros left out). The extents are
/// below `W::EXTENTS_BELOW`.
pub(super) struct SortedWords<'a, T, W> {
    pub ty: &'static TypeInfo,
    pub shape: &'a [u64],
    pub threads: usize,
    pub vals: &'a [T],
    pub rows: &'a [W],
    pub cols: &'a [W],
    pub base: u64,
}

/// Combined rows: part `k` covers rows `cuts[k]..cuts[k + 1]`, with
/// `entries` entries whose columns and values are the first `entries` of
/// `cols` and `vals` (none for a pattern), `per_row[r - cuts[k]]` of them
/// in row `r`, columns increasing within a row.
pub(super) struct Rows<'a, T> {
    pub ty: &'static TypeInfo,
    pub shape: &'a [u64],
    pub cuts: Vec<usize>,
    pub parts: Vec<Part<'a, T>>,
}

pub(super) struct Part<'a, T> {
    pub entries: usize,
    pub per_row: Vec<u32>,
    pub cols: &'a mut [u32],
    pub vals: &'a mut [T],
}

/// The result, or `None` when this path does not apply.
pub(super) fn try_run<R, S: Sink>(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    ty: &'static TypeInfo,
    read: &R,
    arrays: (Option<Words<'_>>, Option<Words64<'_>>),
    sink: S,
) -> Option<S::Out>
where
    R: Fn(usize) -> (i64, i64) + Sync,
{
    if !o.skip_plan {
        return None;
    }
    if t.values.is_none() {
        // A pattern: no values to carry, every stored entry true.
        return kernel::<(), R, S>(t, o, ty, read, arrays, sink, first::<()>);
    }
    // Sub-byte values, and a type with codes the format forbids as data
    // (float8_e8m0): the planning path, which checks every value and names
    // the first forbidden one. This path builds its handle without a
    // second check (`Coo::from_built`), so it takes only values that are
    // all valid data.
    if ty.is_sub_byte() || !ty.forbidden_codes().is_empty() {
        return None;
    }
    let last = o.duplicates == Duplicates::Last;
    macro_rules! keep_one {
        ($w:literal) => {
            kernel::<[u8; $w], R, S>(t, o, ty, read, arrays, sink, keep_one::<[u8; $w]>(last))
        };
    }
    match (ty.encoding, o.duplicates) {
        (Encoding::F64, Duplicates::Sum) => {
            kernel::<f64, R, S>(t, o, ty, read, arrays, sink, sum_f64)
        }
        (Encoding::F32, Duplicates::Sum) => {
            kernel::<f32, R, S>(t, o, ty, read, arrays, sink, sum_f32)
        }
        (_, Duplicates::First | Duplicates::Last | Duplicates::Error) => match ty.lookup_bytes() {
            1 => keep_one!(1),
            2 => keep_one!(2),
            4 => keep_one!(4),
            8 => keep_one!(8),
            16 => keep_one!(16),
            _ => None,
        },
        _ => None,
    }
}

// The functions the kernel hands on (how values combine, where a triplet
// goes, which values are zero) are built here rather than as closures in
// `try_run` or `kernel`: a closure's type carries every type parameter of
// the function it is written in, so the folds and sorted sinks would be
// compiled once per coordinate reader and output even where they read
// neither. Built here, their types depend only on what they read.

/// The first of two duplicates (a pattern's entries are all true).
fn first<T>(a: T, _: T) -> T {
    a
}

/// The first or the last of two duplicates.
fn keep_one<T>(last: bool) -> impl Fn(T, T) -> T + Sync + Copy {
    move |a, b| if last { b } else { a }
}

/// Whether a value is zero (either sign) in `ty`.
fn zero_in<T: Pod>(ty: &'static TypeInfo) -> impl Fn(&T) -> bool + Sync + Copy {
    move |v| zero(ty, v)
}

/// Triplet i's 0-based (row, column) from 32-bit arrays already checked
/// to be in bounds.
fn words_at(w: Words<'_>, b: i64) -> impl Fn(usize) -> (usize, usize) + Sync + '_ {
    move |i| w.zero_based(i, b)
}

/// The same from arrays checked in bounds and kept by pass 1: the bounds
/// are asked again (two compares, no sign or skip cases) so that arrays
/// changed under the call cannot send a write astray.
fn words_kept(
    w: Words<'_>,
    b: i64,
    rows: usize,
    cols: usize,
) -> impl Fn(usize) -> Option<(usize, usize)> + Sync + '_ {
    move |i| {
        let (r, c) = w.zero_based(i, b);
        (r < rows && c < cols).then_some((r, c))
    }
}

/// Triplet i's 0-based (row, column) through the reader, the input known
/// to be in bounds and kept.
fn read_at<R>(read: &R, b: i64) -> impl Fn(usize) -> (usize, usize) + Sync + '_
where
    R: Fn(usize) -> (i64, i64) + Sync,
{
    move |i| {
        let (r, c) = read(i);
        ((r - b) as usize, (c - b) as usize)
    }
}

/// Triplet i's 0-based (row, column) through the reader, or `None` when
/// it is skipped or not plainly in bounds.
fn read_kept<'a, R>(
    read: &'a R,
    keep: &'a Keep,
) -> impl Fn(usize) -> Option<(usize, usize)> + Sync + 'a
where
    R: Fn(usize) -> (i64, i64) + Sync,
{
    move |i| {
        let (r, c) = read(i);
        keep.take(r, c).ok().flatten()
    }
}

/// The triplets' values: the caller's, or none (a pattern, `T = ()`).
#[derive(Clone, Copy)]
pub(super) enum Values<'a, T> {
    Given(&'a [T]),
    Pattern(T),
}

impl<T: Copy> Values<'_, T> {
    #[inline(always)]
    pub(super) fn at(&self, i: usize) -> T {
        match *self {
            Values::Given(v) => v[i],
            Values::Pattern(one) => one,
        }
    }
}

/// Which triplets are kept, as the general path decides it.
struct Keep {
    rows: i64,
    cols: i64,
    base: i64,
    skip_negative: bool,
}

impl Keep {
    /// Triplet `(r, c)` as written: `Ok(Some(0-based))` kept, `Ok(None)`
    /// skipped (a negative coordinate, asked to be skipped, after in-bounds
    /// earlier ones), `Err` not plainly in bounds (the general path reports
    /// it). Unsigned coordinates above `i64::MAX` read as negative but are
    /// never skipped: `skip_negative` is false for unsigned types.
    #[inline(always)]
    fn take(&self, r: i64, c: i64) -> Result<Option<(usize, usize)>, ()> {
        if r < 0 && self.skip_negative {
            return Ok(None);
        }
        if r < self.base || r - self.base >= self.rows {
            return Err(());
        }
        if c < 0 && self.skip_negative {
            return Ok(None);
        }
        if c < self.base || c - self.base >= self.cols {
            return Err(());
        }
        Ok(Some(((r - self.base) as usize, (c - self.base) as usize)))
    }
}

/// What pass 1 saw in one triplet range.
struct Count {
    /// Each row's kept triplets.
    hist: Vec<u32>,
    /// Kept triplets strictly increasing, none skipped.
    sorted: bool,
    /// Kept triplets whose row is within `near_rows` rows of the row of the
    /// kept triplet before them.
    near: usize,
    /// The range's blocks of `SPAN` triplets and the rows each touches.
    spans: Vec<Span>,
    /// Read from the 32-bit arrays, every coordinate in bounds and kept.
    clean: bool,
    first: Option<(usize, usize)>,
    last: Option<(usize, usize)>,
}

/// Triplets `lo..hi` keep rows `min..=max` only (none when `min > max`): a
/// thread placing the triplets of some rows skips the spans that have none.
#[derive(Clone, Copy)]
struct Span {
    lo: usize,
    hi: usize,
    min: usize,
    max: usize,
}

const SPAN: usize = 1 << 16;

fn count<R: Fn(usize) -> (i64, i64)>(
    keep: &Keep,
    read: &R,
    rows: usize,
    near_rows: usize,
    lo: usize,
    hi: usize,
) -> Option<Count> {
    let mut hist: Vec<u32> = zeroed_vec(rows)?;
    let mut spans = Vec::new();
    spans.try_reserve((hi - lo).div_ceil(SPAN)).ok()?;
    let mut sorted = true;
    let mut near = 0usize;
    let (mut first, mut last): (_, Option<(usize, usize)>) = (None, None);
    for at in (lo..hi).step_by(SPAN) {
        let end = (at + SPAN).min(hi);
        let (mut min, mut max) = (usize::MAX, 0);
        for i in at..end {
            let (r, c) = read(i);
            match keep.take(r, c) {
                Err(()) => return None,
                Ok(None) => sorted = false,
                Ok(Some(rc)) => {
                    hist[rc.0] += 1;
                    (min, max) = (min.min(rc.0), max.max(rc.0));
                    match last {
                        Some(p) => {
                            sorted &= p < rc;
                            near += usize::from(p.0.abs_diff(rc.0) <= near_rows);
                        }
                        None => first = Some(rc),
                    }
                    last = Some(rc);
                }
            }
        }
        spans.push(Span {
            lo: at,
            hi: end,
            min,
            max,
        });
    }
    Some(Count {
        hist,
        sorted,
        near,
        spans,
        clean: false,
        first,
        last,
    })
}

/// Pass 1 over 32-bit coordinate arrays, a span at a time with no branch
/// per triplet in its checks (the compiler does them in vector registers),
/// then a plain loop that counts the rows. `None` when a coordinate is out
/// of bounds or skipped (or the extents reach 2^31): `count` then reads the
/// range again and finds out which.
fn count_words(
    keep: &Keep,
    w: Words<'_>,
    rows: usize,
    near_rows: usize,
    lo: usize,
    hi: usize,
) -> Option<Count> {
    if keep.rows >= 1 << 31 || keep.cols >= 1 << 31 || hi > w.rows.len().min(w.cols.len()) {
        return None;
    }
    let (nr, nc, b) = (keep.rows as i32, keep.cols as i32, keep.base as i32);
    let near_rows = near_rows.min(i32::MAX as usize) as u32;
    let mut hist: Vec<u32> = zeroed_vec(rows)?;
    let mut spans = Vec::new();
    spans.try_reserve((hi - lo).div_ceil(SPAN)).ok()?;
    let mut near = 0usize;
    for at in (lo..hi).step_by(SPAN) {
        let end = (at + SPAN).min(hi);
        let (rs, cs) = (&w.rows[at..end], &w.cols[at..end]);
        let (mut bad, mut min, mut max) = (false, i32::MAX, -1i32);
        for (&r, &c) in rs.iter().zip(cs) {
            let (r, c) = ((r as i32).wrapping_sub(b), (c as i32).wrapping_sub(b));
            bad |= (r < 0) | (r >= nr) | (c < 0) | (c >= nc);
            (min, max) = (min.min(r), max.max(r));
        }
        if bad {
            return None;
        }
        // How many triplets are near the one before them (from the span
        // before, for the first of a span after the range's first).
        let from = at.max(lo + 1);
        let (r0, r1) = (&w.rows[from - 1..end - 1], &w.rows[from..end]);
        let close = r0.iter().zip(r1).fold(0u32, |n, (&pr, &r)| {
            n + u32::from((r as i32).wrapping_sub(pr as i32).unsigned_abs() <= near_rows)
        });
        near += close as usize;
        for &r in rs {
            hist[(r as i32).wrapping_sub(b) as usize] += 1;
        }
        spans.push(Span {
            lo: at,
            hi: end,
            min: min as usize,
            max: max as usize,
        });
    }
    // Not sorted: `words_in_order` has already said so of these arrays
    // (its test is the same: every triplet in bounds, kept, and after the
    // one before).
    Some(Count {
        hist,
        sorted: false,
        near,
        spans,
        clean: true,
        first: None,
        last: None,
    })
}

/// Triplets read in blocks of this many by `words_in_order`, and written
/// and checked in blocks of this many by `CooSink::sorted_words` (a block's
/// coordinates, values and result stay in the first-level cache).
const WORD_BLOCK: usize = 1024;

/// The scan's test over 32-bit coordinate arrays: every triplet in
/// bounds, kept, and strictly after the one before it in (row, column)
/// order. In 32-bit signed lanes: extents below 2^31, so every coordinate
/// in bounds is a nonnegative i32 after the base is taken off, and one that
/// is not (negative, at or past the extent, a uint32 of 2^31 and up, or
/// i32::MIN wrapped by the base) fails the bounds test.
struct WordOrder<'a> {
    w: Words<'a>,
    rows: i32,
    cols: i32,
    base: i32,
}

impl<'a> WordOrder<'a> {
    /// `None` for extents of 2^31 and up.
    fn new(keep: &Keep, w: Words<'a>) -> Option<WordOrder<'a>> {
        if keep.rows >= 1 << 31 || keep.cols >= 1 << 31 {
            return None;
        }
        Some(WordOrder {
            w,
            rows: keep.rows as i32,
            cols: keep.cols as i32,
            base: keep.base as i32,
        })
    }

    fn len(&self) -> usize {
        self.w.rows.len().min(self.w.cols.len())
    }

    #[inline(always)]
    fn key(&self, r: u32, c: u32) -> (bool, i32, i32) {
        let (r, c) = (
            (r as i32).wrapping_sub(self.base),
            (c as i32).wrapping_sub(self.base),
        );
        (
            (r < 0) | (r >= self.rows) | (c < 0) | (c >= self.cols),
            r,
            c,
        )
    }

    /// Triplets at..end (at >= 1), each in bounds and after the one before:
    /// no branch inside (each triplet compared with the one before it,
    /// read again rather than carried, so the compiler does the block in
    /// vector registers).
    fn block_ok(&self, at: usize, end: usize) -> bool {
        let w = &self.w;
        let (r0, r1) = (&w.rows[at - 1..end - 1], &w.rows[at..end]);
        let (c0, c1) = (&w.cols[at - 1..end - 1], &w.cols[at..end]);
        let mut bad = false;
        for (((&pr, &pc), &r), &c) in r0.iter().zip(c0).zip(r1).zip(c1) {
            let ((out, r, c), (_, pr, pc)) = (self.key(r, c), self.key(pr, pc));
            bad |= out | !((r > pr) | ((r == pr) & (c > pc)));
        }
        !bad
    }

    /// The triplets of the first block (all, for fewer): the test an
    /// input that is not sorted fails at once, on the calling thread.
    fn first_block_ok(&self) -> bool {
        let n = self.len();
        n == 0
            || (!self.key(self.w.rows[0], self.w.cols[0]).0 && self.block_ok(1, n.min(WORD_BLOCK)))
    }
}

/// Whether every triplet passes the test of [`WordOrder`], block by block.
/// The first block is checked on the calling thread, so input that is not
/// sorted costs no thread; then threads over ranges, each stopping at its
/// first block that fails.
fn words_in_order(keep: &Keep, w: Words<'_>, threads: usize) -> bool {
    let Some(order) = WordOrder::new(keep, w) else {
        return false;
    };
    if !order.first_block_ok() {
        return false;
    }
    let n = order.len();
    let probe = n.min(WORD_BLOCK);
    let range = |k: usize| {
        let (lo, hi) = (n * k / threads, n * (k + 1) / threads);
        (lo.max(probe), hi.max(probe))
    };
    threads::each(threads, |k| {
        let (lo, hi) = range(k);
        (lo..hi)
            .step_by(WORD_BLOCK)
            .all(|at| order.block_ok(at, (at + WORD_BLOCK).min(hi)))
    })
    .into_iter()
    .all(|ok| ok)
}

fn kernel<T, R, S: Sink>(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    ty: &'static TypeInfo,
    read: &R,
    (words, wide): (Option<Words<'_>>, Option<Words64<'_>>),
    mut sink: S,
    combine: impl Fn(T, T) -> T + Sync,
) -> Option<S::Out>
where
    T: Pod + Send + Sync,
    R: Fn(usize) -> (i64, i64) + Sync,
{
    if !sink.takes::<T>() {
        return None;
    }
    let n = t.n;
    let vals = match t.values {
        Some(v) => Values::Given(bytemuck::try_cast_slice::<u8, T>(v).ok()?),
        // `try_run` asks for no values (`T = ()`) for a pattern.
        None if size_of::<T>() == 0 => Values::Pattern(T::zeroed()),
        None => return None,
    };
    if matches!(vals, Values::Given(v) if v.len() != n) {
        return None;
    }
    let (rows, cols) = (t.shape[0] as usize, t.shape[1] as usize);
    let threads = threads::count(o.threads, n, 1 << 16);
    // The markers (4 bytes per column and thread) stay within the budget
    // of 4 bytes per triplet, or 4 MiB.
    if cols as u128 * 4 * threads as u128 > (n as u128 * 4).max(1 << 22) {
        return None;
    }
    let keep = Keep {
        rows: t.shape[0] as i64,
        cols: t.shape[1] as i64,
        base: i64::from(t.base),
        skip_negative: o.skip_negative && matches!(t.index_type, IndexType::I32 | IndexType::I64),
    };
    let zero = zero_in::<T>(ty);
    let range = |k: usize| (n * k / threads, n * (k + 1) / threads);

    // Input already strictly sorted needs no counts: one read-only scan
    // (a block at a time, no branch per triplet) says so, and it goes
    // straight to the sink. It stops at the first block that is not. Pass 1
    // still sees sorted input the scan leaves to it (64-bit or interleaved
    // coordinates, misaligned arrays, extents of 2^31 and up): a scan
    // through the generic reader was measured and gained nothing. `sorted_with!(at)` is that way out, `at(i)`
    // being triplet i's 0-based (row, column).
    macro_rules! sorted_with {
        ($at:expr) => {
            return sink.sorted(SortedInput {
                n,
                ty,
                shape: t.shape,
                drop_zeros: o.drop_zeros,
                threads,
                vals,
                at: $at,
            })
        };
    }
    let b = keep.base;
    // A sink that checks as it writes gets per-dimension arrays of 32- or
    // 64-bit coordinates without the scan (every triplet kept, values
    // given); if a block is not in order, pass 1 follows.
    let given = match vals {
        Values::Given(v) if !o.drop_zeros => Some(v),
        _ => None,
    };
    let below = |limit: u64| t.shape[0] < limit && t.shape[1] < limit;
    if let (true, Some(vals)) = (S::CHECKS_AS_IT_WRITES, given) {
        macro_rules! sorted_words {
            ($w:expr) => {
                sink.sorted_words(SortedWords {
                    ty,
                    shape: t.shape,
                    threads,
                    vals,
                    rows: $w.rows,
                    cols: $w.cols,
                    base: b as u64,
                })
            };
        }
        let done = match (words, wide) {
            (Some(w), _) if below(u32::EXTENTS_BELOW) => sorted_words!(w),
            (_, Some(w)) if below(u64::EXTENTS_BELOW) => sorted_words!(w),
            _ => Err(sink),
        };
        match done {
            Ok(out) => return out,
            Err(back) => sink = back,
        }
    } else if let Some(w) = words.filter(|&w| words_in_order(&keep, w, threads)) {
        // Checked: every coordinate minus the base is in bounds.
        sorted_with!(&words_at(w, b));
    }

    // Pass 1. A triplet is near the one before it when their rows' buckets
    // are likely within 1 MiB (at the average triplets per row).
    let per_row = (n / rows.max(1)).max(1);
    let near_rows = (1usize << 20) / ((4 + size_of::<T>()) * per_row);
    let counts: Vec<Count> = threads::each(threads, |k| {
        let (lo, hi) = range(k);
        words
            .and_then(|w| count_words(&keep, w, rows, near_rows, lo, hi))
            .or_else(|| count(&keep, read, rows, near_rows, lo, hi))
    })
    .into_iter()
    .collect::<Option<_>>()?;
    let ends: Vec<_> = counts.iter().filter_map(|c| c.first.zip(c.last)).collect();
    let sorted = counts.iter().all(|c| c.sorted) && ends.windows(2).all(|w| w[0].1 < w[1].0);
    if sorted {
        drop(counts);
        sorted_with!(&read_at(read, b));
    }

    // Each row's start in the buckets.
    let mut start: Vec<usize> = zeroed_vec(rows + 1)?;
    for r in 0..rows {
        let h: usize = counts.iter().map(|c| c.hist[r] as usize).sum();
        start[r + 1] = start[r] + h;
    }
    let near: usize = counts.iter().map(|c| c.near).sum();
    let clean = counts.iter().all(|c| c.clean);
    let mut hists: Vec<Vec<u32>> = Vec::new();
    hists.try_reserve_exact(counts.len()).ok()?;
    let mut spans = Vec::new();
    spans
        .try_reserve(counts.iter().map(|c| c.spans.len()).sum())
        .ok()?;
    for c in counts {
        spans.extend(c.spans);
        hists.push(c.hist);
    }
    let kept = start[rows];
    // Combine while placing only when the triplets come with locality
    // (such as element by element): each search is then in cache. Scattered
    // triplets would pay a mispredicted branch after each cache miss.
    let search = near >= kept - kept / 8;
    // Scattered triplets on several threads: each places its own range
    // (`place_scattered`, a parallel counting sort, which reads pass 1's
    // counts again), then the row ranges only combine. Threads over row
    // ranges would each read every triplet; on a machine whose memory one
    // thread nearly fills, that was slower than one thread (BENCHMARKS.md,
    // "scattered triplets on two threads").
    // Its cursors (8 bytes per row and thread) stay within the markers'
    // budget: 4 bytes per triplet, or 4 MiB.
    let cursor_bytes = rows as u128 * 8 * hists.len() as u128;
    let placed = !search && hists.len() > 1 && cursor_bytes <= (kept as u128 * 4).max(1 << 22);
    if !placed {
        hists = Vec::new();
    }
    // Passes 2 and 3, on threads over row ranges, in buckets `$bc`/`$bv`
    // of `kept` entries each.
    let cuts = threads::row_cuts(&start, threads);
    let refuse_repeats = o.duplicates == Duplicates::Error;
    let all = cuts.len() == 2;
    macro_rules! fold_with {
        ($parts:expr, $at:expr, $placed:expr) => {
            threads::run($parts, |_, (r0, r1, cs, vs)| {
                fold_rows(
                    &FoldRows {
                        at: $at,
                        vals,
                        start: &start,
                        spans: &spans,
                        all,
                        refuse_repeats,
                        drop_zeros: o.drop_zeros,
                        cols,
                        search,
                        placed: $placed,
                    },
                    r0,
                    r1,
                    cs,
                    vs,
                    &combine,
                    &zero,
                )
            })
        };
    }
    macro_rules! fold_in {
        ($bc:expr, $bv:expr, $placed:expr) => {{
            let (mut crest, mut vrest): (&mut [u32], &mut [T]) = ($bc, $bv);
            let mut parts = Vec::new();
            for c in cuts.windows(2) {
                let len = start[c[1]] - start[c[0]];
                let (cm, ct) = std::mem::take(&mut crest).split_at_mut(len);
                let (vm, vt) = std::mem::take(&mut vrest).split_at_mut(len);
                (crest, vrest) = (ct, vt);
                parts.push((c[0], c[1], cm, vm));
            }
            match words.filter(|_| clean) {
                // Pass 1 checked every coordinate of these arrays: in
                // bounds, kept (`words_kept` asks the bounds again).
                Some(w) => fold_with!(parts, &words_kept(w, b, rows, cols), $placed),
                None => fold_with!(parts, &read_kept(read, &keep), $placed),
            }
            .into_iter()
            .collect::<Option<Vec<_>>>()
        }};
    }
    // Scattered triplets on several threads are placed by pass 1's ranges
    // before the fold.
    macro_rules! place_in {
        ($cs:expr, $vs:expr) => {
            if placed {
                macro_rules! place_with {
                    ($at:expr) => {
                        place_scattered($at, vals, n, &start, &mut hists, $cs, $vs)
                    };
                }
                match words.filter(|_| clean) {
                    Some(w) => place_with!(&words_kept(w, b, rows, cols)),
                    None => place_with!(&read_kept(read, &keep)),
                }?;
            }
        };
    }
    // The buckets: the sink's own arrays when it lends them (then no fresh
    // scratch pages are cleared and the rows' results are not copied), else
    // ours. Triplets with locality take any lent arrays; scattered ones
    // only arrays in huge pages (`Sink::HUGE`), as ours are: into a
    // caller's malloc'd arrays their random writes ran 10-20 % slower (see
    // BENCHMARKS.md).
    if search || S::HUGE {
        if let Some((c, v)) = sink.scratch::<T>(kept) {
            let (c, v) = (&mut c[..kept], &mut v[..kept]);
            place_in!(c, v);
            let combined = fold_in!(c, v, placed)?;
            let parts = combined
                .into_iter()
                .zip(cuts.windows(2))
                .map(|(p, c)| PlacedPart {
                    at: start[c[0]],
                    entries: p.entries,
                    per_row: p.per_row,
                })
                .collect();
            return sink.placed(Placed {
                ty,
                width: size_of::<T>(),
                parts,
            });
        }
    }
    let mut bucket_cols: Vec<u32> = zeroed_vec(kept)?;
    let mut bucket_vals: Vec<T> = zeroed_vec(kept)?;
    place_in!(&mut bucket_cols, &mut bucket_vals);
    drop(hists);
    let combined = fold_in!(&mut bucket_cols, &mut bucket_vals, placed)?;
    sink.rows(Rows {
        ty,
        shape: t.shape,
        cuts,
        parts: combined,
    })
}

/// Whether `v` is zero (either sign) in `ty`; never for a pattern, whose
/// entries are true.
fn zero<T: Pod>(ty: &TypeInfo, v: &T) -> bool {
    if size_of::<T>() == 0 {
        return false;
    }
    let mut s = [0u8; 16];
    s[..size_of::<T>()].copy_from_slice(bytemuck::bytes_of(v));
    is_zero(ty, &s)
}

/// Values of the sorted input that are kept: all, or the nonzero ones.
pub(super) fn kept_sorted<T: Pod, A>(s: &SortedInput<'_, T, A>) -> usize {
    match s.drop_zeros {
        true => (0..s.n).filter(|&i| !zero(s.ty, &s.vals.at(i))).count(),
        false => s.n,
    }
}

/// Whether entry value `v` of the sorted input is left out.
pub(super) fn dropped<T: Pod, A>(s: &SortedInput<'_, T, A>, v: &T) -> bool {
    s.drop_zeros && zero(s.ty, v)
}

/// The canonical COO of a matrix of `shape`. The values' buckets are the
/// handle's values buffer (`lent`, see [`Sink::scratch`]), so the result's
/// values are left where they were combined: no fresh pages are mapped for
/// them, and they are not copied.
pub(super) struct CooSink {
    shape: [u64; 2],
    /// The columns' buckets, and the values buffer (room for a value per
    /// triplet), both in huge pages.
    lent: Option<(Vec<u32>, AlignedBuf)>,
}

impl CooSink {
    pub(super) fn new(shape: [u64; 2]) -> CooSink {
        CooSink { shape, lent: None }
    }
}

impl Sink for CooSink {
    type Out = Assembled;
    const HUGE: bool = true;
    const CHECKS_AS_IT_WRITES: bool = true;

    /// The input, 0-based and widened, and its values, in one pass: threads
    /// over triplet ranges each write theirs a block at a time and check
    /// the block as written ([`write_checked`]); then each range's first
    /// entry is checked against the range before. What is checked is the
    /// result itself, so it is sorted and in bounds whatever the caller's
    /// arrays did meanwhile. Its buffers are not cleared first: every byte
    /// is written (see [`Unfilled`]).
    fn sorted_words<T: Pod + Send + Sync, W: Word>(
        self,
        s: SortedWords<'_, T, W>,
    ) -> Result<Option<Assembled>, CooSink> {
        let n = s.vals.len();
        let shape = [s.shape[0], s.shape[1]];
        // The first block, checked on the calling thread before anything
        // is allocated or started: most input that is not sorted fails it.
        let head = n.min(WORD_BLOCK);
        let mut first: Vec<[u64; 2]> = Vec::new();
        if first.try_reserve_exact(head).is_err() {
            return Ok(None);
        }
        let at = |(r, c): (&W, &W)| [r.less(s.base), c.less(s.base)];
        first.extend(s.rows[..head].iter().zip(&s.cols[..head]).map(at));
        if first_sorted_violation(bytemuck::cast_slice(&first), &shape).is_some() {
            return Err(self);
        }
        drop(first);
        let room = |w: usize| n.checked_mul(w);
        let (Some(ib), Some(vb)) = (room(16), room(size_of::<T>())) else {
            return Ok(None);
        };
        let (Ok(mut indices), Ok(mut values)) = (
            Unfilled::huge(ib, "the assembled indices"),
            Unfilled::huge(vb, "the assembled values"),
        ) else {
            return Ok(None);
        };
        let per = n.div_ceil(s.threads).max(1);
        let (im, vm) = (indices.slots::<[u64; 2]>(), values.slots::<T>());
        let parts: Vec<_> = im.chunks_mut(per).zip(vm.chunks_mut(per)).collect();
        let ends = threads::run(parts, |k, (im, vm)| {
            write_checked(&s, k * per, im, vm, &shape)
        });
        let Some(ends) = ends.into_iter().collect::<Option<Vec<_>>>() else {
            return Err(self);
        };
        let ends: Vec<_> = ends.into_iter().flatten().collect();
        if ends.windows(2).any(|e| e[0][1] >= e[1][0]) {
            return Err(self);
        }
        // SAFETY: every range returned `Some`, which `write_checked` does
        // only once it has written every slot of its indices and values,
        // and the chunks cover all `n` slots of both buffers (their bytes
        // whole: `n` slots of 16 bytes and of `size_of::<T>()`).
        let (indices, values) = unsafe { (indices.filled(), values.filled()) };
        Ok(Some(
            Coo::from_built(s.ty.tag, s.shape, values, indices).map(|c| (c, None)),
        ))
    }

    /// Buckets for `kept` triplets: the columns' of the library's own, the
    /// values' the handle's values buffer. Fresh pages, touched only as
    /// written; none for a pattern, whose values are bits.
    fn scratch<T: Pod>(&mut self, kept: usize) -> Option<(&mut [u32], &mut [T])> {
        if size_of::<T>() == 0 {
            return None;
        }
        let cols = zeroed_vec::<u32>(kept)?;
        let values =
            AlignedBuf::zeroed_huge(kept.checked_mul(size_of::<T>())?, "the assembled values")
                .ok()?;
        let (cols, values) = self.lent.insert((cols, values));
        Some((
            cols,
            bytemuck::try_cast_slice_mut(values.as_bytes_mut()).ok()?,
        ))
    }

    /// The folded rows made the handle: each part's values moved down to
    /// follow the part before (a part's entries are at most its triplets)
    /// and cut to the entries; the indices written from the columns'
    /// buckets, each part on a thread of its own.
    fn placed(mut self, p: Placed) -> Option<Assembled> {
        let (cols, mut values) = self.lent.take()?;
        let nnz: usize = p.parts.iter().map(|q| q.entries).sum();
        let w = p.width;
        p.follow(values.as_bytes_mut(), w);
        values.truncate(nnz * w);
        let mut indices = indices_for(nnz)?;
        let mut out: &mut [[u64; 2]] = bytemuck::cast_slice_mut(indices.as_bytes_mut());
        let mut parts = Vec::with_capacity(p.parts.len());
        let mut row = 0u64;
        for q in &p.parts {
            let (mine, rest) = std::mem::take(&mut out).split_at_mut(q.entries);
            out = rest;
            parts.push((q, row, mine));
            row += q.per_row.len() as u64;
        }
        threads::run(parts, |_, (q, row, mine)| {
            let mut k = 0;
            for (r, &n) in (row..).zip(&q.per_row) {
                for _ in 0..n {
                    mine[k] = [r, u64::from(cols[q.at + k])];
                    k += 1;
                }
            }
        });
        Some(Coo::from_built(p.ty.tag, &self.shape, values, indices).map(|c| (c, None)))
    }

    fn takes<T: Pod>(&self) -> bool {
        true
    }

    fn rows<T: Pod + Send + Sync>(self, r: Rows<'_, T>) -> Option<Assembled> {
        let nnz: usize = r.parts.iter().map(|p| p.entries).sum();
        let mut indices = indices_for(nnz)?;
        let mut values = values_for::<T>(nnz)?;
        {
            let (mut irest, mut vrest): (&mut [u64], &mut [T]) = (
                bytemuck::cast_slice_mut(indices.as_bytes_mut()),
                typed(&mut values),
            );
            let mut parts = Vec::new();
            for (c, part) in r.cuts.windows(2).zip(r.parts) {
                let (im, it) = std::mem::take(&mut irest).split_at_mut(part.entries * 2);
                let mine = vrest.len().min(part.entries); // none for a pattern
                let (vm, vt) = std::mem::take(&mut vrest).split_at_mut(mine);
                (irest, vrest) = (it, vt);
                parts.push((c[0], part, im, vm));
            }
            threads::run(parts, |_, (r0, part, im, vm)| {
                if !vm.is_empty() {
                    vm.copy_from_slice(&part.vals[..part.entries]);
                }
                let mut q = 0usize;
                for (r, &k) in (r0..).zip(&part.per_row) {
                    for &c in &part.cols[q..q + k as usize] {
                        im[2 * q] = r as u64;
                        im[2 * q + 1] = u64::from(c);
                        q += 1;
                    }
                }
            });
        }
        Some(Coo::from_built(r.ty.tag, r.shape, values, indices).map(|c| (c, None)))
    }

    /// The result is the input, 0-based and widened (zeros left out if
    /// asked).
    fn sorted<T: Pod + Send + Sync, A: Fn(usize) -> (usize, usize) + Sync>(
        self,
        s: SortedInput<'_, T, A>,
    ) -> Option<Assembled> {
        let at = |i: usize| {
            let (r, c) = (s.at)(i);
            [r as u64, c as u64]
        };
        let nnz = kept_sorted(&s);
        let mut indices = indices_for(nnz)?;
        let mut values = values_for::<T>(nnz)?;
        let im: &mut [[u64; 2]] = bytemuck::cast_slice_mut(indices.as_bytes_mut());
        let vm: &mut [T] = typed(&mut values);
        if s.drop_zeros {
            let mut q = 0;
            for i in 0..s.n {
                let v = s.vals.at(i);
                if !dropped(&s, &v) {
                    im[q] = at(i);
                    if let Some(out) = vm.get_mut(q) {
                        *out = v;
                    }
                    q += 1;
                }
            }
        } else {
            if let Values::Given(v) = s.vals {
                vm.copy_from_slice(v);
            }
            let per = s.n.div_ceil(s.threads).max(1);
            let parts: Vec<_> = im.chunks_mut(per).collect();
            threads::run(parts, |k, part| {
                for (j, out) in part.iter_mut().enumerate() {
                    *out = at(k * per + j);
                }
            });
        }
        Some(Coo::from_built(s.ty.tag, s.shape, values, indices).map(|c| (c, None)))
    }
}

/// Triplets `lo..lo + im.len()` of `s` into `im` (0-based and widened)
/// and their values into `vm`, a block at a time, each block checked as
/// written: every entry in bounds and after the one before, the block's
/// first after the previous block's last. The range's first and last
/// entries (`None` inside for an empty range), every slot written; or
/// `None` when a block is not in order.
fn write_checked<T: Pod, W: Word>(
    s: &SortedWords<'_, T, W>,
    lo: usize,
    im: &mut [MaybeUninit<[u64; 2]>],
    vm: &mut [MaybeUninit<T>],
    shape: &[u64; 2],
) -> Option<Option<[[u64; 2]; 2]>> {
    let (b, len) = (s.base, im.len());
    let mut ends: Option<[[u64; 2]; 2]> = None;
    for at in (0..len).step_by(WORD_BLOCK) {
        let end = (at + WORD_BLOCK).min(len);
        let (rows, cols) = (&s.rows[lo + at..lo + end], &s.cols[lo + at..lo + end]);
        let out = fill(
            &mut im[at..end],
            rows.iter().zip(cols).map(|(r, c)| [r.less(b), c.less(b)]),
        );
        fill(&mut vm[at..end], s.vals[lo + at..lo + end].iter().copied());
        let (first, last) = (out[0], out[out.len() - 1]);
        if first_sorted_violation(bytemuck::cast_slice(out), shape).is_some()
            || ends.is_some_and(|[_, before]| before >= first)
        {
            return None;
        }
        ends = Some([ends.map_or(first, |e| e[0]), last]);
    }
    Some(ends)
}

/// The result's indices buffer for `nnz` entries, zeroed for the kernel
/// to fill (written whole, in huge pages).
fn indices_for(nnz: usize) -> Option<AlignedBuf> {
    AlignedBuf::zeroed_huge(nnz.checked_mul(16)?, "the assembled indices").ok()
}

/// The result's values buffer for `nnz` entries: zeroed for the kernel to
/// fill, or for a pattern (`T = ()`) bool `true` for each, 8 per byte, the
/// bits past the last entry clear.
fn values_for<T>(nnz: usize) -> Option<AlignedBuf> {
    if size_of::<T>() != 0 {
        return AlignedBuf::zeroed_huge(nnz.checked_mul(size_of::<T>())?, "the assembled values")
            .ok();
    }
    let mut bits = AlignedBuf::zeroed(nnz.div_ceil(8), "the assembled values").ok()?;
    let bytes = bits.as_bytes_mut();
    bytes.fill(0xFF);
    if !nnz.is_multiple_of(8) {
        if let Some(last) = bytes.last_mut() {
            *last = (1u8 << (nnz % 8)) - 1;
        }
    }
    Some(bits)
}

/// The values buffer as `T`s (none for a pattern: its bits are already set).
fn typed<T: Pod>(values: &mut AlignedBuf) -> &mut [T] {
    match size_of::<T>() {
        0 => &mut [],
        _ => bytemuck::cast_slice_mut(values.as_bytes_mut()),
    }
}

/// Rows at most this long (in triplets) are combined as their triplets are
/// placed: each triplet looks for its column among the row's entries so
/// far. Longer rows take every triplet and combine afterwards (a marker per
/// column), so no row costs more than this many compares per triplet.
const SEARCHED: usize = 64;

/// How many triplets ahead scattered placement asks for a bucket slot (and
/// twice that for the row's positions).
const AHEAD: usize = 16;

struct FoldRows<'a, A, T> {
    /// Triplet i's 0-based (row, column), or `None` when it is skipped.
    at: &'a A,
    vals: Values<'a, T>,
    start: &'a [usize],
    spans: &'a [Span],
    /// This range has every row (no triplet to skip).
    all: bool,
    refuse_repeats: bool,
    drop_zeros: bool,
    cols: usize,
    /// Rows up to `SEARCHED` triplets combine while placing.
    search: bool,
    /// Every triplet is in its row's bucket already (`place_scattered`):
    /// the rows only combine.
    placed: bool,
}

/// Rows `r0..r1`: place their triplets in triplet order into `cs`/`vs`
/// (which start at the buckets of row `r0`; already there when
/// `f.placed`), each row's equal columns combined in triplet order, then
/// each row sorted by column and compacted.
fn fold_rows<'a, A, T>(
    f: &FoldRows<'_, A, T>,
    r0: usize,
    r1: usize,
    cs: &'a mut [u32],
    vs: &'a mut [T],
    combine: &impl Fn(T, T) -> T,
    zero: &impl Fn(&T) -> bool,
) -> Option<Part<'a, T>>
where
    T: Pod,
    A: Fn(usize) -> Option<(usize, usize)>,
{
    let mut per_row: Vec<u32> = zeroed_vec(r1 - r0)?;
    if f.placed {
        for (p, w) in per_row.iter_mut().zip(f.start[r0..=r1].windows(2)) {
            *p = (w[1] - w[0]) as u32;
        }
    } else {
        place_rows(f, r0, r1, cs, vs, combine, &mut per_row)?;
    }
    // Each row's equal columns combined in triplet order, then the row
    // sorted by column and compacted.
    let base = f.start[r0];
    let mut marker: Vec<u32> = Vec::new();
    let mut row: Vec<(u32, T)> = Vec::new();
    let mut w = 0usize;
    for r in r0..r1 {
        let (s, e) = (f.start[r] - base, f.start[r + 1] - base);
        let k = per_row[r - r0] as usize;
        row.clear();
        row.try_reserve(k).ok()?;
        if f.search && e - s <= SEARCHED {
            row.extend(
                cs[s..s + k]
                    .iter()
                    .copied()
                    .zip(vs[s..s + k].iter().copied()),
            );
        } else {
            if marker.is_empty() {
                marker = zeroed_vec(f.cols)?;
            }
            for p in s..s + k {
                let c = cs[p];
                match marker[c as usize] {
                    0 => {
                        row.push((c, vs[p]));
                        marker[c as usize] = row.len() as u32;
                    }
                    _ if f.refuse_repeats => return None,
                    m => {
                        let slot = &mut row[m as usize - 1].1;
                        *slot = combine(*slot, vs[p]);
                    }
                }
            }
            for &(c, _) in &row {
                marker[c as usize] = 0;
            }
        }
        sort_by_column(&mut row);
        let before = w;
        for &(c, v) in &row {
            if f.drop_zeros && zero(&v) {
                continue;
            }
            cs[w] = c;
            vs[w] = v;
            w += 1;
        }
        per_row[r - r0] = (w - before) as u32;
    }
    Some(Part {
        entries: w,
        per_row,
        cols: cs,
        vals: vs,
    })
}

/// Rows `r0..r1`'s triplets, in triplet order, into `cs`/`vs` (which start
/// at the buckets of row `r0`), searched rows combining as they go; each
/// row's count into `per_row`.
fn place_rows<A, T>(
    f: &FoldRows<'_, A, T>,
    r0: usize,
    r1: usize,
    cs: &mut [u32],
    vs: &mut [T],
    combine: &impl Fn(T, T) -> T,
    per_row: &mut [u32],
) -> Option<()>
where
    T: Pod,
    A: Fn(usize) -> Option<(usize, usize)>,
{
    let base = f.start[r0];
    // Row r's [first position, next free position] in `cs`/`vs`, relative to
    // row r0's first; the row ends where the next row starts. One array, so
    // a triplet's row costs one cache line. Positions fit in u32: fewer than
    // u32::MAX triplets (`rank2.rs`).
    let mut cur: Vec<[u32; 2]> = zeroed_vec(r1 - r0 + 1)?;
    for (c, &at) in cur.iter_mut().zip(&f.start[r0..=r1]) {
        *c = [(at - base) as u32; 2];
    }
    // Prefetching doubled the misses in flight on one thread (permuted FEM:
    // 391-444 -> 338-363 ms) but made two threads slower (223-255 ->
    // 294-300 ms: their misses already overlap, and the prefetches are
    // issued for every triplet each thread reads, its rows or not).
    let ahead = !f.search && f.all;
    // One triplet placed (`continue` skips it; `return None` declines).
    macro_rules! place {
        ($i:expr) => {{
            let i = $i;
            let Some((r, c)) = (f.at)(i) else {
                continue;
            };
            if !f.all && !(r0..r1).contains(&r) {
                continue;
            }
            let [s, k] = cur[r - r0];
            let e = cur[r - r0 + 1][0];
            let (s, k, e) = (s as usize, k as usize, e as usize);
            let c = c as u32;
            let v = f.vals.at(i);
            // Where the triplet goes: its column's entry in the row (searched
            // rows), or the row's next free position. The value is then
            // chosen without a branch on whether the column repeated.
            let j = match f.search && e - s <= SEARCHED {
                true => cs[s..k].iter().position(|&x| x == c).map_or(k, |p| s + p),
                false => k,
            };
            let repeat = j < k;
            if repeat && f.refuse_repeats {
                return None;
            }
            if !repeat && k >= e {
                return None; // the caller's triplets changed under us
            }
            let old = vs[j];
            vs[j] = std::hint::select_unpredictable(repeat, combine(old, v), v);
            cs[j] = c;
            cur[r - r0][1] = k as u32 + u32::from(!repeat);
        }};
    }
    for sp in f.spans {
        if !f.all && (sp.min >= r1 || sp.max < r0) {
            continue;
        }
        if ahead {
            for i in sp.lo..sp.hi {
                ask_ahead(f.at, &cur, r0, i, sp.hi, |&[_, k]| {
                    if let Some(x) = cs.get(k as usize) {
                        prefetch(x);
                    }
                    if let Some(x) = vs.get(k as usize) {
                        prefetch(x);
                    }
                });
                place!(i);
            }
        } else {
            for i in sp.lo..sp.hi {
                place!(i);
            }
        }
    }
    for (p, w) in per_row.iter_mut().zip(cur.windows(2)) {
        *p = w[0][1] - w[0][0];
    }
    Some(())
}

/// The buckets while several threads place triplets into them at once
/// (`place_scattered`): each slot is written by one thread only.
struct Slots<'a, T> {
    cols: *mut u32,
    vals: *mut T,
    len: usize,
    _buckets: PhantomData<&'a mut [T]>,
}

// SAFETY: the pointers come from slices borrowed mutably for 'a, so nothing
// else reaches the buckets meanwhile; the threads that share a `Slots` write
// only through `put`, whose contract keeps them at slots no other thread
// touches. T is Send (the values move between threads).
unsafe impl<T: Send> Sync for Slots<'_, T> {}

impl<'a, T> Slots<'a, T> {
    fn new(cols: &'a mut [u32], vals: &'a mut [T]) -> Self {
        Slots {
            len: cols.len().min(vals.len()),
            cols: cols.as_mut_ptr(),
            vals: vals.as_mut_ptr(),
            _buckets: PhantomData,
        }
    }

    /// Column `c` and value `v` into slot `p`; `None` (nothing written)
    /// past the buckets.
    ///
    /// # Safety
    /// While the `Slots` is shared, no other thread writes slot `p`.
    #[inline(always)]
    unsafe fn put(&self, p: usize, c: u32, v: T) -> Option<()> {
        if p >= self.len {
            return None;
        }
        // SAFETY: `p` is inside both buckets (`len` is the shorter), which
        // live for 'a, and per this function's contract this thread alone
        // writes slot `p`; nothing reads the buckets until the threads end.
        unsafe {
            self.cols.add(p).write(c);
            self.vals.add(p).write(v);
        }
        Some(())
    }

    /// Ask for slot `p`'s lines (any `p`: a prefetch never faults).
    #[inline(always)]
    fn ask(&self, p: usize) {
        prefetch_at(self.cols.wrapping_add(p));
        prefetch_at(self.vals.wrapping_add(p));
    }
}

/// Pass 2 for scattered triplets on several threads, a parallel counting
/// sort: thread k places its own range of pass 1 (whose row counts are
/// `hists[k]`) into each row's bucket after the earlier ranges' triplets of
/// that row, so every row holds its triplets in triplet order, as one
/// thread would place them. Each thread reads its triplets once; threads
/// over row ranges would each read them all. The ranges are pass 1's
/// (`n` triplets split evenly); `hists` becomes each range's first slot per
/// row. `None` when a range's triplets no longer give pass 1's counts (the
/// caller changed them): then nothing may be trusted.
fn place_scattered<A, T>(
    at: &A,
    vals: Values<'_, T>,
    n: usize,
    start: &[usize],
    hists: &mut [Vec<u32>],
    cs: &mut [u32],
    vs: &mut [T],
) -> Option<()>
where
    T: Pod + Send + Sync,
    A: Fn(usize) -> Option<(usize, usize)> + Sync,
{
    let threads = hists.len();
    let rows = start.len() - 1;
    let kept = start[rows];
    if hists.iter().any(|h| h.len() != rows) || cs.len() < kept || vs.len() < kept {
        return None;
    }
    // Each range's first slot in each row (positions fit in u32: fewer than
    // u32::MAX triplets, `rank2.rs`). The ranges' counts of a row must fill
    // its bucket exactly: then the ranges' slots partition the buckets.
    for r in 0..rows {
        let mut next = start[r] as u32;
        for h in hists.iter_mut() {
            (h[r], next) = (next, next.checked_add(h[r])?);
        }
        if next as usize != start[r + 1] {
            return None;
        }
    }
    let hists: &[Vec<u32>] = hists;
    let slots = Slots::new(cs, vs);
    let done = threads::each(threads, |k| {
        let (lo, hi) = (n * k / threads, n * (k + 1) / threads);
        // Row r's [next slot, end of this range's slots].
        let mut cur: Vec<[u32; 2]> = zeroed_vec(rows)?;
        for (r, c) in cur.iter_mut().enumerate() {
            let end = hists.get(k + 1).map_or(start[r + 1] as u32, |h| h[r]);
            *c = [hists[k][r], end];
        }
        for i in lo..hi {
            ask_ahead(at, &cur, 0, i, hi, |&[p, _]| slots.ask(p as usize));
            let Some((r, c)) = (at)(i) else {
                continue;
            };
            let slot = cur.get_mut(r)?;
            if slot[0] >= slot[1] {
                return None; // more than pass 1 counted
            }
            // SAFETY: this range's slots of row r are hists[k][r]..end, and
            // `slot[0]` stays below `end`: the ranges' slots of a row
            // partition the row's bucket (`start[r]..start[r + 1]`), and the
            // rows' buckets partition `cs`/`vs`, so no other thread writes
            // this slot.
            unsafe { slots.put(slot[0] as usize, c as u32, vals.at(i)) }?;
            slot[0] += 1;
        }
        // Fewer than pass 1 counted would leave slots unwritten.
        cur.iter().all(|&[p, end]| p == end).then_some(())
    });
    done.into_iter().collect()
}

/// Scattered placement (one thread over all rows, or each thread over its
/// own triplet range): ask for the row cursor of the triplet `2 * AHEAD`
/// after `i` (`cur`, rows from `r0`), and `slot` for the one `AHEAD` after
/// (whose cursor is in cache by then: `slot` asks for the bucket slot it
/// names), so that more misses are in flight than the CPU finds by itself.
#[inline(always)]
fn ask_ahead<A>(at: &A, cur: &[[u32; 2]], r0: usize, i: usize, hi: usize, slot: impl Fn(&[u32; 2]))
where
    A: Fn(usize) -> Option<(usize, usize)>,
{
    let row = |i: usize| at(i).and_then(|(r, _)| cur.get(r.wrapping_sub(r0)));
    if let Some(x) = (i + 2 * AHEAD < hi).then(|| row(i + 2 * AHEAD)).flatten() {
        prefetch(x);
    }
    if let Some(c) = (i + AHEAD < hi).then(|| row(i + AHEAD)).flatten() {
        slot(c);
    }
}

/// A row's entries (distinct columns) in column order: insertion sort for
/// the short rows solvers have, the library sort for long ones.
fn sort_by_column<T: Copy>(row: &mut [(u32, T)]) {
    if row.len() > 32 {
        row.sort_unstable_by_key(|e| e.0);
        return;
    }
    for i in 1..row.len() {
        let x = row[i];
        let mut j = i;
        while j > 0 && row[j - 1].0 > x.0 {
            row[j] = row[j - 1];
            j -= 1;
        }
        row[j] = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass path takes sorted per-dimension arrays of 32- and
    /// 64-bit words in either base, on 1 to 3 threads, and gives the
    /// triplets 0-based with their values; a repeat, or a coordinate below
    /// the base, in a later block gives the sink back (for pass 1), with
    /// nothing built.
    #[test]
    fn sorted_words_take_32_and_64_bit_arrays_in_either_base() {
        let ty = crate::element::types::type_info(0x04).unwrap(); // float64
        let n = 140_003usize;
        let shape = [(n / 5 + 1) as u64, 5];
        let vals: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 7.0).collect();
        let want: Vec<u64> = (0..n as u64).flat_map(|i| [i / 5, i % 5]).collect();
        for base in [0u64, 1] {
            for broken in [None, Some((100_000, 0)), Some((130_001, 1))] {
                let mut r64: Vec<u64> = (0..n as u64).map(|i| i / 5 + base).collect();
                let mut c64: Vec<u64> = (0..n as u64).map(|i| i % 5 + base).collect();
                match broken {
                    Some((at, 0)) => (r64[at], c64[at]) = (r64[at - 1], c64[at - 1]),
                    Some((at, _)) => c64[at] = base.wrapping_sub(1),
                    None => {}
                }
                let r32: Vec<u32> = r64.iter().map(|&x| x as u32).collect();
                let c32: Vec<u32> = c64.iter().map(|&x| x as u32).collect();
                for threads in 1..=3 {
                    let what = format!("base {base}, {broken:?}, {threads} threads");
                    macro_rules! input {
                        ($rows:expr, $cols:expr) => {
                            SortedWords {
                                ty,
                                shape: &shape,
                                threads,
                                vals: &vals,
                                rows: $rows,
                                cols: $cols,
                                base,
                            }
                        };
                    }
                    for got in [
                        CooSink::new(shape).sorted_words(input!(&r32, &c32)),
                        CooSink::new(shape).sorted_words(input!(&r64, &c64)),
                    ] {
                        match (got, broken) {
                            (Ok(Some(Ok((coo, None)))), None) => {
                                assert_eq!(coo.indices(), want.as_slice(), "{what}");
                                assert_eq!(coo.values(), bytemuck::cast_slice::<f64, u8>(&vals));
                            }
                            (Err(_), Some(_)) => {}
                            (got, _) => panic!("{what}: {:?}", got.is_ok()),
                        }
                    }
                }
            }
        }
    }

    /// `words_in_order` against a plain loop over the same triplets, on 1
    /// to 3 threads: sorted input of several blocks, broken once (a repeat,
    /// a step back, a coordinate out of bounds or negative) at every block
    /// edge, range seam and end, in both bases.
    #[test]
    fn the_sorted_scan_agrees_with_a_plain_loop() {
        let n = 5000usize;
        let (rows, cols) = (700i64, 9i64);
        let oracle = |r: &[u32], c: &[u32], base: i64| {
            let at = |i: usize| (r[i] as i32 as i64 - base, c[i] as i32 as i64 - base);
            (0..n).all(|i| {
                let (x, y) = at(i);
                (0..rows).contains(&x) && (0..cols).contains(&y) && (i == 0 || at(i - 1) < (x, y))
            })
        };
        let mut places = vec![0, 1, n / 3, n / 2, 2 * n / 3, n - 1];
        for edge in [1024, 2048, 3072, 4096] {
            places.extend([edge - 1, edge, edge + 1]);
        }
        for base in [0i64, 1] {
            let keep = Keep {
                rows,
                cols,
                base,
                skip_negative: false,
            };
            // Triplet i at (i / 8, i % 8): sorted, in bounds.
            let r0: Vec<u32> = (0..n).map(|i| (i / 8) as u32 + base as u32).collect();
            let c0: Vec<u32> = (0..n).map(|i| (i % 8) as u32 + base as u32).collect();
            for &p in &places {
                for how in 0..5 {
                    let (mut r, mut c) = (r0.clone(), c0.clone());
                    match how {
                        0 => {}
                        1 if p > 0 => (r[p], c[p]) = (r[p - 1], c[p - 1]),
                        2 if p > 0 => (r[p], c[p]) = (r[p - 1], c[p - 1].wrapping_sub(1)),
                        3 => c[p] = (cols + base) as u32,
                        4 => r[p] = (-1i32 + base as i32 - 1) as u32,
                        _ => continue,
                    }
                    let want = oracle(&r, &c, base);
                    for threads in 1..=3 {
                        let w = Words { rows: &r, cols: &c };
                        assert_eq!(
                            words_in_order(&keep, w, threads),
                            want,
                            "break {how} at {p}, base {base}, {threads} threads"
                        );
                    }
                }
            }
        }
    }

    /// `place_scattered` against a stable counting sort (the oracle) on 1
    /// to 4 ranges, with skipped triplets; and it declines, writing no slot
    /// past its buckets, when a range's triplets do not give its counts.
    #[test]
    fn scattered_placement_is_a_stable_counting_sort() {
        let (n, rows) = (10_000usize, 97usize);
        // Triplet i: row (i * 7919) % rows, column i; every 13th skipped.
        let at = |i: usize| (!i.is_multiple_of(13)).then_some(((i * 7919) % rows, i));
        let vals: Vec<u64> = (0..n as u64).map(|i| i * 3 + 1).collect();
        let mut want: Vec<(u32, u64)> = Vec::new();
        for r in 0..rows {
            for (i, &v) in vals.iter().enumerate() {
                if at(i).is_some_and(|(ri, _)| ri == r) {
                    want.push((i as u32, v));
                }
            }
        }
        let kept = want.len();
        let hist_of = |lo: usize, hi: usize| {
            let mut h = vec![0u32; rows];
            for (r, _) in (lo..hi).filter_map(at) {
                h[r] += 1;
            }
            h
        };
        let mut start = vec![0usize; rows + 1];
        let all = hist_of(0, n);
        for r in 0..rows {
            start[r + 1] = start[r] + all[r] as usize;
        }
        for threads in 1..=4 {
            let ranges = || (0..threads).map(|k| (n * k / threads, n * (k + 1) / threads));
            let mut hists: Vec<Vec<u32>> = ranges().map(|(lo, hi)| hist_of(lo, hi)).collect();
            let (mut cs, mut vs) = (vec![0u32; kept], vec![0u64; kept]);
            let v = Values::Given(&vals[..]);
            assert!(place_scattered(&at, v, n, &start, &mut hists, &mut cs, &mut vs).is_some());
            let got: Vec<(u32, u64)> = cs.iter().copied().zip(vs.iter().copied()).collect();
            assert_eq!(got, want, "{threads} threads");
            // A range's count one too high (a slot left unwritten) or one
            // too low (one triplet too many for its slots): declined.
            for (k, delta) in [(0usize, 1i64), (threads - 1, -1)] {
                let mut hists: Vec<Vec<u32>> = ranges().map(|(lo, hi)| hist_of(lo, hi)).collect();
                let r = hists[k].iter().position(|&x| x > 0).unwrap();
                hists[k][r] = (i64::from(hists[k][r]) + delta) as u32;
                let other = (r + 1) % rows;
                hists[k][other] = (i64::from(hists[k][other]) - delta) as u32;
                let (mut cs, mut vs) = (vec![0u32; kept], vec![0u64; kept]);
                let v = Values::Given(&vals[..]);
                let got = place_scattered(&at, v, n, &start, &mut hists, &mut cs, &mut vs);
                assert!(got.is_none(), "{threads} threads, range {k} off by {delta}");
            }
        }
    }
}
