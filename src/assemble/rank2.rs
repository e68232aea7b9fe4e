//! Matrices whose row count is at most about twice the triplet count, with
//! fewer than 2^32 triplets and columns. The coordinates are read in their
//! own integer type (no per-element dispatch) and handed first to the
//! solver's path (`buckets.rs`: no plan; patterns go no further than it);
//! what it declines takes the planning path below, for whole-byte values.
//! The coordinates are read once per pass
//! in their own integer type (no per-element dispatch), the triplets are
//! bucketed by row (a counting sort), each row's `(column << 32 | triplet)`
//! keys are sorted, and runs of equal columns are combined in place. The
//! result is exactly the general path's (same order, same arithmetic, same
//! errors: any triplet that is not plainly in bounds sends the whole call
//! back to the general path, which reports it).

use super::buckets::Assembled;
use super::combine::{sum_f64, Combine};
use super::plan::{Plan, PlanPiece};
use super::read::{CoordArrays, IndexType, Reader, Words, Words64};
use super::{AssembleOptions, Duplicates, Triplets};
use crate::aligned::{zeroed_vec, AlignedBuf};
use crate::coo::Coo;
use crate::element::encode::store_element;
use crate::element::size;
use crate::element::types::{Encoding, TypeInfo};
use crate::error::{CooError, Coords};

/// The fast path's answer, or `None` when it does not apply (the caller
/// then takes the general path).
pub(super) fn try_assemble(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    ty: &'static TypeInfo,
    reader: &Reader<'_>,
) -> Option<Assembled> {
    struct Job<'a, 'b> {
        t: &'a Triplets<'b>,
        o: &'a AssembleOptions,
        ty: &'static TypeInfo,
        reader: &'a Reader<'b>,
    }
    impl WithRead for Job<'_, '_> {
        type Out = Assembled;
        fn call<R: Fn(usize) -> (i64, i64) + Sync>(
            self,
            read: R,
            words: Option<Words<'_>>,
            wide: Option<Words64<'_>>,
        ) -> Option<Assembled> {
            run(self.t, self.o, self.ty, self.reader, read, words, wide)
        }
    }
    if !fits(t, ty, t.shape) {
        return None;
    }
    with_read(t, false, Job { t, o, ty, reader })
}

/// Whether the rank-2 paths take `t`, whose major extent is `shape[0]`.
pub(super) fn fits(t: &Triplets<'_>, ty: &TypeInfo, shape: &[u64]) -> bool {
    let &[rows, cols] = shape else {
        return false;
    };
    // Patterns go only as far as the row buckets (`buckets.rs`).
    (!ty.is_sub_byte() || t.values.is_none())
        && (t.n as u64) < u32::MAX as u64
        && cols <= u32::MAX as u64
        && rows as u128 <= t.n as u128 * 2 + 4096
}

/// What runs with the triplets' coordinates read in their own integer type
/// (and, for 32-bit coordinates in two arrays, the arrays themselves).
pub(super) trait WithRead {
    type Out;
    fn call<R: Fn(usize) -> (i64, i64) + Sync>(
        self,
        read: R,
        words: Option<Words<'_>>,
        wide: Option<Words64<'_>>,
    ) -> Option<Self::Out>;
}

/// Run `job` with `read(i)`: triplet `i`'s (row, column) as written, or
/// (column, row) when `transposed` (a CSC result is the CSR of the
/// transpose). One reader per index type and layout; the transposition is
/// which dimension is read first, not another reader.
pub(super) fn with_read<J: WithRead>(t: &Triplets<'_>, transposed: bool, job: J) -> Option<J::Out> {
    let (d0, d1) = if transposed { (1, 0) } else { (0, 1) };
    macro_rules! with_reader {
        ($get:expr) => {{
            let get = $get;
            match t.coords {
                CoordArrays::Interleaved(b) => job.call(
                    move |i| (get(b, 2 * i + d0), get(b, 2 * i + d1)),
                    None,
                    None,
                ),
                CoordArrays::PerDim(a) => {
                    let (x, y) = (*a.get(d0)?, *a.get(d1)?);
                    let (words, wide) = (Words::of(t, x, y), Words64::of(t, x, y));
                    job.call(move |i| (get(x, i), get(y, i)), words, wide)
                }
            }
        }};
    }
    match t.index_type {
        IndexType::I32 => with_reader!(|b: &[u8], k: usize| i64::from(i32::from_le_bytes(
            b[k * 4..k * 4 + 4].try_into().unwrap_or([0; 4])
        ))),
        IndexType::U32 => with_reader!(|b: &[u8], k: usize| i64::from(u32::from_le_bytes(
            b[k * 4..k * 4 + 4].try_into().unwrap_or([0; 4])
        ))),
        IndexType::I64 => with_reader!(|b: &[u8], k: usize| i64::from_le_bytes(
            b[k * 8..k * 8 + 8].try_into().unwrap_or([0; 8])
        )),
        // Values above i64::MAX are out of bounds anyway: they read as
        // negative here, which sends the call to the general path.
        IndexType::U64 => with_reader!(|b: &[u8], k: usize| u64::from_le_bytes(
            b[k * 8..k * 8 + 8].try_into().unwrap_or([0; 8])
        ) as i64),
    }
}

/// `read(i)` gives triplet `i`'s (row, column) as written; `words` the
/// same coordinates as arrays, when they are 32-bit.
fn run(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    ty: &'static TypeInfo,
    reader: &Reader<'_>,
    read: impl Fn(usize) -> (i64, i64) + Sync,
    words: Option<Words<'_>>,
    wide: Option<Words64<'_>>,
) -> Option<Assembled> {
    if let Some(done) = super::buckets::try_run(
        t,
        o,
        ty,
        &read,
        (words, wide),
        super::buckets::CooSink::new([t.shape[0], t.shape[1]]),
    ) {
        return Some(done);
    }
    t.values?;
    let rows = t.shape[0] as usize;
    let (rows_i, cols_i) = (t.shape[0] as i64, t.shape[1] as i64);
    let b = i64::from(t.base);
    // Unsigned coordinates are never "negative": a uint64 above i64::MAX
    // reads as negative here and fails the bounds check below.
    let unsigned = matches!(t.index_type, IndexType::U32 | IndexType::U64);
    let threads = crate::threads::count(o.threads, t.n, 1 << 16);

    // Pass 1, threads over triplet ranges: check, and count each row's
    // triplets. A triplet the fast path does not simply keep or skip sends
    // the call to the general path.
    let count = |lo: usize, hi: usize| -> Option<Vec<u32>> {
        let mut hist: Vec<u32> = Vec::new();
        hist.try_reserve_exact(rows).ok()?;
        hist.resize(rows, 0);
        for i in lo..hi {
            let (r, c) = read(i);
            // Dimension by dimension, as the general path checks: a
            // negative coordinate skips the triplet only if no earlier one
            // is out of bounds.
            let mut skip = false;
            for (x, extent) in [(r, rows_i), (c, cols_i)] {
                if x < 0 && !unsigned && o.skip_negative {
                    skip = true;
                    break;
                }
                if x - b < 0 || x - b >= extent {
                    return None;
                }
            }
            if !skip {
                hist[(r - b) as usize] += 1;
            }
        }
        Some(hist)
    };
    let hists = crate::threads::each(threads, |k| {
        count(t.n * k / threads, t.n * (k + 1) / threads)
    });
    let hists: Vec<Vec<u32>> = hists.into_iter().collect::<Option<_>>()?;
    let mut start: Vec<usize> = Vec::new();
    start.try_reserve_exact(rows + 1).ok()?;
    start.push(0);
    for r in 0..rows {
        let here: usize = hists.iter().map(|h| h[r] as usize).sum();
        start.push(start[r] + here);
    }
    drop(hists);
    let kept = start[rows];

    let cuts = crate::threads::row_cuts(&start, threads);
    // Whether pass 2 asks ahead: on one thread, when the triplets are
    // scattered (more than one in eight sampled neighbours over 1 MiB of
    // keys apart).
    let ask = threads == 1 && {
        let (mut far, mut all) = (0usize, 0usize);
        let slot = |i: usize| {
            let (r, c) = read(i);
            // Pass 1 checked every kept row; `get` all the same.
            (r >= 0 && c >= 0)
                .then(|| start.get((r - b) as usize).copied())
                .flatten()
        };
        for s in 0..SAMPLE_RUNS {
            let lo = t.n / SAMPLE_RUNS * s;
            let mut prev = None;
            for i in lo..(lo + SAMPLE_TRIPLETS).min(t.n) {
                if let Some(x) = slot(i) {
                    if let Some(p) = prev {
                        all += 1;
                        far += usize::from(x.abs_diff(p) > FAR_KEYS);
                    }
                    prev = Some(x);
                }
            }
        }
        far * 8 > all
    };

    // Pass 2, threads over row ranges: each scans every triplet and places
    // (column << 32 | triplet) keys of its own rows in triplet order, sorts
    // each row, and counts the entries (and, for ERROR, finds its lowest
    // duplicate). Keys are distinct, so the rows' order is by column, ties
    // in triplet order. (Placing by pass 1's triplet ranges instead, as the
    // solver's path does on threads, measured no faster here: see
    // BENCHMARKS.md.)
    // Fresh zeroed pages, cleared as the threads first write them (every
    // slot is written: `scan` checks that each row was filled).
    let Some(mut keys) = zeroed_vec::<u64>(kept) else {
        return Some(Err(alloc(kept * 8)));
    };
    // Rows r0..r1's triplets into their buckets (`slice` starts at row
    // r0's), scanning every triplet; `None` when the triplets no longer give
    // pass 1's counts (the caller changed them).
    let scan = |r0: usize, r1: usize, slice: &mut [u64]| -> Option<()> {
        let base = start[r0];
        let mut cursor: Vec<usize> = Vec::new();
        cursor.try_reserve_exact(r1 - r0).ok()?;
        cursor.extend(start[r0..r1].iter().map(|&s| s - base));
        // Triplet i's row within the range and its column, if it is kept
        // and in the range.
        let mine = |i: usize| -> Option<(usize, u64)> {
            let (r, c) = read(i);
            if r < 0 || c < 0 {
                return None; // skipped: every other coordinate was checked
            }
            let r = (r - b) as usize;
            (r >= r0 && r < r1).then(|| (r - r0, (c - b) as u64))
        };
        // Scattered triplets on one thread (every row its own): ask for
        // the row cursor of the triplet 2 * AHEAD_TRIPLETS on and the slot
        // of the one AHEAD_TRIPLETS on, as the solver's path does. Threads
        // that each scan every triplet do not (measured slower there on
        // the solver's path), nor do triplets in element order (the asking
        // cost them 5-8 %).
        for i in 0..t.n {
            if ask {
                if let Some(x) = (i + 2 * AHEAD_TRIPLETS < t.n)
                    .then(|| mine(i + 2 * AHEAD_TRIPLETS))
                    .flatten()
                    .and_then(|(q, _)| cursor.get(q))
                {
                    crate::hint::prefetch(x);
                }
                if let Some(x) = (i + AHEAD_TRIPLETS < t.n)
                    .then(|| mine(i + AHEAD_TRIPLETS))
                    .flatten()
                    .and_then(|(q, _)| slice.get(cursor[q]))
                {
                    crate::hint::prefetch(x);
                }
            }
            if let Some((q, c)) = mine(i) {
                let at = cursor.get_mut(q)?;
                *slice.get_mut(*at)? = c << 32 | i as u64;
                *at += 1;
            }
        }
        // Each row filled exactly its slots (no more, which would have run
        // into the next row's, and no fewer).
        let ends = start[r0 + 1..=r1].iter().map(|&s| s - base);
        cursor.iter().copied().eq(ends).then_some(())
    };
    let place = |r0: usize, r1: usize, slice: &mut [u64]| -> Option<RowsDone> {
        let base = start[r0];
        scan(r0, r1, slice)?;
        let mut done = RowsDone::default();
        for r in r0..r1 {
            let row = &mut slice[start[r] - base..start[r + 1] - base];
            row.sort_unstable();
            for k in 0..row.len() {
                if k == 0 || col(row[k - 1]) != col(row[k]) {
                    done.entries += 1;
                } else if k < 2 || col(row[k - 2]) != col(row[k]) {
                    // The second triplet of a run names the duplicate.
                    let d = (tri(row[k]), tri(row[k - 1]), r as u64, col(row[k]));
                    if done.dup.is_none_or(|x| d.0 < x.0) {
                        done.dup = Some(d);
                    }
                }
            }
        }
        Some(done)
    };
    let done: Vec<RowsDone> = split_rows(&mut keys, &start, &cuts, &place)
        .into_iter()
        .collect::<Option<_>>()?;
    if o.duplicates == Duplicates::Error {
        if let Some((second, first, r, c)) = done.iter().filter_map(|d| d.dup).min() {
            let b = u64::from(t.base);
            return Some(Err(CooError::TripletDuplicate {
                second: second as u64,
                first: first as u64,
                coords: Coords(vec![r + b, c + b]),
                base: t.base,
            }));
        }
    }
    Some(combine_rows(t, o, ty, reader, &keys, &start, &cuts, &done))
}

/// How many rows ahead the combine asks for the values it will read.
const AHEAD_ROWS: usize = 2;

/// How many triplets ahead pass 2 asks for the slot it will write (and
/// twice that, for the row's cursor).
const AHEAD_TRIPLETS: usize = 16;

/// Pass 2's locality sample: runs, triplets per run, and how many keys
/// apart (1 MiB) two neighbours' slots are far.
const SAMPLE_RUNS: usize = 16;
const SAMPLE_TRIPLETS: usize = 256;
const FAR_KEYS: usize = (1 << 20) / 8;

fn col(k: u64) -> u64 {
    k >> 32
}

fn tri(k: u64) -> usize {
    (k & 0xFFFF_FFFF) as usize
}

/// What pass 2 found in one range of rows.
#[derive(Clone, Copy, Debug, Default)]
struct RowsDone {
    /// Entries: runs of equal columns.
    entries: usize,
    /// (second triplet, first triplet, row, column) of the lowest duplicate.
    dup: Option<(usize, usize, u64, u64)>,
}

fn alloc(bytes: usize) -> CooError {
    CooError::Alloc {
        bytes,
        what: "assembly",
    }
}

/// Run `job(r0, r1, keys of rows r0..r1)` for each range of `cuts`, one per
/// thread (disjoint slices of `keys`); the answers in row order.
fn split_rows<R: Send>(
    keys: &mut [u64],
    start: &[usize],
    cuts: &[usize],
    job: &(impl Fn(usize, usize, &mut [u64]) -> R + Sync),
) -> Vec<R> {
    let mut rest: &mut [u64] = keys;
    let mut parts = Vec::new();
    for c in cuts.windows(2) {
        let (r0, r1) = (c[0], c[1]);
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(start[r1] - start[r0]);
        rest = tail;
        parts.push((r0, r1, mine));
    }
    crate::threads::run(parts, |_, (r0, r1, mine)| job(r0, r1, mine))
}

/// One row range's share of the output: its entries' coordinates and
/// values (already in their final places unless zeros were dropped) and
/// its piece of the plan.
struct Piece {
    written: usize,
    plan: Option<PlanPiece>,
}

/// Combine each run of equal columns, over the same row ranges as pass 2,
/// each range writing its own part of the output and of the plan.
#[allow(clippy::too_many_arguments)] // the passes' shared state
fn combine_rows(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    ty: &'static TypeInfo,
    reader: &Reader<'_>,
    keys: &[u64],
    start: &[usize],
    cuts: &[usize],
    done: &[RowsDone],
) -> Assembled {
    let upper: usize = done.iter().map(|d| d.entries).sum();
    let w = ty.lookup_bytes();
    let mut indices = AlignedBuf::zeroed(
        upper.checked_mul(16).ok_or_else(|| alloc(usize::MAX))?,
        "the assembled indices",
    )?;
    let mut values = AlignedBuf::zeroed(
        size::to_usize(size::values_bytes(ty, upper as u64)?, "the values")?,
        "the assembled values",
    )?;
    let combine = Combine::new(ty, o.duplicates, t.values, t.base);
    let src = t.values.unwrap_or(&[]);
    let f64_sum = ty.encoding == Encoding::F64 && o.duplicates == Duplicates::Sum;
    let want_plan = !o.skip_plan;
    let work =
        |r0: usize, r1: usize, idx_out: &mut [u8], val_out: &mut [u8]| -> Result<Piece, CooError> {
            // At most every triplet of the range (SUM, MIN, MAX), one per
            // entry otherwise; an end per entry (`idx_out` has room for
            // each). Reserved once: growing them as entries come would copy
            // them over and over.
            let entries = idx_out.len() / 16;
            let most = match o.duplicates {
                Duplicates::First | Duplicates::Error | Duplicates::Last => entries,
                _ => start[r1] - start[r0],
            };
            let mut piece = Piece {
                written: 0,
                plan: match want_plan {
                    true => Some(PlanPiece::with_room(t.n, most, entries)?),
                    false => None,
                },
            };
            let mut members: Vec<usize> = Vec::new();
            let mut n = 0usize;
            for r in r0..r1 {
                let row = &keys[start[r]..start[r + 1]];
                // The values of a row a few rows on: scattered triplets
                // read each from anywhere, and the CPU alone keeps too few
                // of those reads in flight.
                if let Some(ahead) = start.get(r + AHEAD_ROWS + 1) {
                    for &key in &keys[start[r + AHEAD_ROWS]..*ahead] {
                        if let Some(x) = src.get(tri(key) * w) {
                            crate::hint::prefetch(x);
                        }
                    }
                }
                let mut k = 0;
                while k < row.len() {
                    let c = col(row[k]);
                    let mut stop = k + 1;
                    while stop < row.len() && col(row[stop]) == c {
                        stop += 1;
                    }
                    let run = &row[k..stop];
                    k = stop;
                    let value = if f64_sum {
                        let v = |key: u64| {
                            let i = tri(key);
                            f64::from_le_bytes(src[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
                        };
                        let mut s = v(run[0]);
                        for &key in &run[1..] {
                            s = sum_f64(s, v(key));
                        }
                        let mut st = [0u8; 16];
                        st[..8].copy_from_slice(&s.to_le_bytes());
                        st
                    } else {
                        members.clear();
                        members.extend(run.iter().map(|&key| tri(key)));
                        combine.group(&members, reader)?
                    };
                    if o.drop_zeros && combine.is_zero(&value) {
                        continue;
                    }
                    idx_out[n * 16..n * 16 + 8].copy_from_slice(&(r as u64).to_le_bytes());
                    idx_out[n * 16 + 8..n * 16 + 16].copy_from_slice(&c.to_le_bytes());
                    store_element(ty, val_out, n, &value);
                    if let Some(p) = piece.plan.as_mut() {
                        let kept: &[u64] = match o.duplicates {
                            Duplicates::First | Duplicates::Error => &run[..1],
                            Duplicates::Last => &run[run.len() - 1..],
                            _ => run,
                        };
                        p.push(kept.iter().map(|&key| tri(key) as u64))?;
                    }
                    n += 1;
                }
            }
            piece.written = n;
            Ok(piece)
        };
    // Each range's output slices: its entries' share of the buffers.
    let pieces: Vec<Piece> = {
        let (mut idx_rest, mut val_rest): (&mut [u8], &mut [u8]) =
            (indices.as_bytes_mut(), values.as_bytes_mut());
        let mut parts = Vec::new();
        for (c, d) in cuts.windows(2).zip(done) {
            let (i, it) = std::mem::take(&mut idx_rest).split_at_mut(d.entries * 16);
            let (v, vt) = std::mem::take(&mut val_rest).split_at_mut(d.entries * w);
            idx_rest = it;
            val_rest = vt;
            parts.push((c[0], c[1], i, v));
        }
        // In row order: the first range with an error reports it.
        crate::threads::run(parts, |_, (r0, r1, i, v)| work(r0, r1, i, v))
            .into_iter()
            .collect::<Result<Vec<Piece>, CooError>>()?
    };
    // Close the gaps dropped zeros left, and join the plan's pieces.
    let mut nnz = 0usize;
    let mut at = 0usize;
    for (piece, d) in pieces.iter().zip(done) {
        if at != nnz {
            indices
                .as_bytes_mut()
                .copy_within(at * 16..(at + piece.written) * 16, nnz * 16);
            values
                .as_bytes_mut()
                .copy_within(at * w..(at + piece.written) * w, nnz * w);
        }
        nnz += piece.written;
        at += d.entries;
    }
    let plan = match want_plan {
        true => {
            let parts: Vec<PlanPiece> = pieces.into_iter().filter_map(|p| p.plan).collect();
            Some(Plan::joined(t.n, ty, o.duplicates, t.base, parts)?)
        }
        false => None,
    };
    indices.truncate(nnz * 16);
    values.truncate(size::values_bytes(ty, nnz as u64)? as usize);
    let coo = Coo::from_owned(ty.tag, t.shape, true, values, indices)?;
    Ok((coo, plan.map(|p| p.finish_on(o.threads))))
}
