//! The fast path for what solvers assemble: matrices of whole-byte values
//! whose row count is at most about twice the triplet count, with fewer
//! than 2^32 triplets and columns. The coordinates are read once per pass
//! in their own integer type (no per-element dispatch), the triplets are
//! bucketed by row (a counting sort), each row's `(column << 32 | triplet)`
//! keys are sorted, and runs of equal columns are combined in place. The
//! result is exactly the general path's (same order, same arithmetic, same
//! errors: any triplet that is not plainly in bounds sends the whole call
//! back to the general path, which reports it).

use super::combine::Combine;
use super::plan::Plan;
use super::read::{CoordArrays, IndexType, Reader};
use super::{counted_from, AssembleOptions, Duplicates, Triplets};
use crate::aligned::AlignedBuf;
use crate::coo::Coo;
use crate::element::encode::store_element;
use crate::element::size;
use crate::element::types::{Encoding, TypeInfo};
use crate::error::{CooError, Coords};

type Assembled = Result<(Coo<'static>, Option<Plan>), CooError>;

/// The fast path's answer, or `None` when it does not apply (the caller
/// then takes the general path).
pub(super) fn try_assemble(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    ty: &'static TypeInfo,
    reader: &Reader<'_>,
) -> Option<Assembled> {
    let &[rows, cols] = t.shape else {
        return None;
    };
    let fits = t.shape.len() == 2
        && t.values.is_some()
        && !ty.is_sub_byte()
        && (t.n as u64) < u32::MAX as u64
        && cols <= u32::MAX as u64
        && rows as u128 <= t.n as u128 * 2 + 4096;
    if !fits {
        return None;
    }
    macro_rules! with_reader {
        ($get:expr) => {{
            let get = $get;
            match t.coords {
                CoordArrays::Interleaved(b) => {
                    run(t, o, ty, reader, |i| (get(b, 2 * i), get(b, 2 * i + 1)))
                }
                CoordArrays::PerDim(a) => run(t, o, ty, reader, |i| (get(a[0], i), get(a[1], i))),
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

/// `read(i)` gives triplet `i`'s (row, column) as written.
fn run(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    ty: &'static TypeInfo,
    reader: &Reader<'_>,
    read: impl Fn(usize) -> (i64, i64) + Sync,
) -> Option<Assembled> {
    let (rows, cols) = (t.shape[0] as i64, t.shape[1] as i64);
    let b = i64::from(t.base);
    // Unsigned coordinates are never "negative": a uint64 above i64::MAX
    // reads as negative here and fails the bounds check below.
    let unsigned = matches!(t.index_type, IndexType::U32 | IndexType::U64);
    // Pass 1: check, and count the triplets of each row. A triplet the
    // fast path does not simply keep or skip goes to the general path.
    let mut end: Vec<u32> = Vec::new();
    end.try_reserve_exact(rows as usize + 1).ok()?;
    end.resize(rows as usize + 1, 0);
    let mut kept = 0usize;
    for i in 0..t.n {
        let (r, c) = read(i);
        // Dimension by dimension, as the general path checks: a negative
        // coordinate skips the triplet only if no earlier one is out of
        // bounds.
        let mut skip = false;
        for (x, extent) in [(r, rows), (c, cols)] {
            if x < 0 && !unsigned && o.skip_negative {
                skip = true;
                break;
            }
            if x - b < 0 || x - b >= extent {
                return None;
            }
        }
        if skip {
            continue;
        }
        end[(r - b) as usize + 1] += 1;
        kept += 1;
    }
    for r in 0..rows as usize {
        end[r + 1] += end[r];
    }
    // Pass 2: scatter (column << 32 | triplet) keys into their rows.
    let mut keys: Vec<u64> = Vec::new();
    if keys.try_reserve_exact(kept).is_err() {
        return Some(Err(alloc(kept * 8)));
    }
    keys.resize(kept, 0);
    for i in 0..t.n {
        let (r, c) = read(i);
        if r < 0 || c < 0 {
            continue; // skipped (every other coordinate was checked above)
        }
        let r = (r - b) as usize;
        keys[end[r] as usize] = ((c - b) as u64) << 32 | i as u64;
        end[r] += 1;
    }
    // end[r] is now the end of row r.
    sort_rows(&mut keys, &end[..rows as usize], o.threads);
    Some(combine_rows(t, o, ty, reader, &keys, &end[..rows as usize]))
}

fn alloc(bytes: usize) -> CooError {
    CooError::Alloc {
        bytes,
        what: "assembly",
    }
}

/// Sort each row's keys (rows cut into runs of about equal size shared
/// over `threads` scoped threads). Keys are distinct, so any sort gives the
/// same order: by column, ties in triplet order.
fn sort_rows(keys: &mut [u64], ends: &[u32], threads: usize) {
    let sort = |keys: &mut [u64], base: usize, ends: &[u32]| {
        let mut begin = base;
        for &e in ends {
            let e = e as usize;
            if e - begin > 1 {
                keys[begin - base..e - base].sort_unstable();
            }
            begin = e;
        }
    };
    let threads = threads
        .clamp(1, 64)
        .min(keys.len().div_ceil(1 << 16))
        .max(1);
    if threads == 1 {
        sort(keys, 0, ends);
        return;
    }
    let total = keys.len();
    let mut cuts = vec![0usize];
    for k in 1..threads {
        let goal = (total * k / threads) as u32;
        cuts.push(ends.partition_point(|&e| e <= goal));
    }
    cuts.push(ends.len());
    let all_started = std::thread::scope(|scope| {
        let mut rest: &mut [u64] = keys;
        let mut consumed = 0usize;
        let mut all_started = true;
        for c in cuts.windows(2) {
            if c[1] <= c[0] {
                continue;
            }
            let base = consumed;
            let stop = ends[c[1] - 1] as usize;
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(stop - base);
            rest = tail;
            consumed = stop;
            let ends = &ends[c[0]..c[1]];
            all_started &= std::thread::Builder::new()
                .spawn_scoped(scope, move || sort(mine, base, ends))
                .is_ok();
        }
        all_started
    });
    if !all_started {
        // A run whose thread could not start is still unsorted: sort every
        // row here (rows already sorted cost one pass).
        sort(keys, 0, ends);
    }
}

/// Walk the sorted rows, combine each run of equal columns, and write the
/// canonical buffers and the plan.
fn combine_rows(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    ty: &'static TypeInfo,
    reader: &Reader<'_>,
    keys: &[u64],
    ends: &[u32],
) -> Assembled {
    let col = |k: u64| k >> 32;
    let tri = |k: u64| (k & 0xFFFF_FFFF) as usize;
    // Entries: one per run of equal columns within a row.
    let mut upper = 0usize;
    let mut dup: Option<(usize, usize, u64, u64)> = None;
    let mut begin = 0usize;
    for (r, &e) in ends.iter().enumerate() {
        let row = &keys[begin..e as usize];
        for (k, &key) in row.iter().enumerate() {
            if k == 0 || col(row[k - 1]) != col(key) {
                upper += 1;
            } else if o.duplicates == Duplicates::Error {
                let first = tri(row[k - 1]);
                // Only the second member of a run names it: the lowest wins.
                let second_of_run = k < 2 || col(row[k - 2]) != col(key);
                if second_of_run && dup.is_none_or(|d| tri(key) < d.0) {
                    dup = Some((tri(key), first, r as u64, col(key)));
                }
            }
        }
        begin = e as usize;
    }
    if let Some((second, first, r, c)) = dup {
        let b = u64::from(t.base);
        return Err(CooError::TripletDuplicate(format!(
            "triplet {} duplicates triplet {} at {}{}; pass a duplicate policy (SUM, FIRST, \
             LAST, MIN, MAX) to combine them",
            second as u64 + b,
            first as u64 + b,
            Coords(vec![r + b, c + b]),
            counted_from(t.base)
        )));
    }
    let mut indices = AlignedBuf::zeroed(
        upper.checked_mul(16).ok_or_else(|| alloc(usize::MAX))?,
        "the assembled indices",
    )?;
    let mut values = AlignedBuf::zeroed(
        size::to_usize(size::values_bytes(ty, upper as u64)?, "the values")?,
        "the assembled values",
    )?;
    let mut plan = match o.skip_plan {
        true => None,
        false => Some(Plan::new(t.n, ty, o.duplicates, true, t.base)?),
    };
    let combine = Combine::new(ty, o.duplicates, t.values, t.base);
    let src = t.values.unwrap_or(&[]);
    let f64_sum = ty.encoding == Encoding::F64 && o.duplicates == Duplicates::Sum;
    let mut members: Vec<usize> = Vec::new();
    let mut nnz = 0usize;
    let (idx_out, val_out) = (indices.as_bytes_mut(), values.as_bytes_mut());
    let mut begin = 0usize;
    for (r, &e) in ends.iter().enumerate() {
        let row = &keys[begin..e as usize];
        begin = e as usize;
        let mut k = 0;
        while k < row.len() {
            let c = col(row[k]);
            let mut stop = k + 1;
            while stop < row.len() && col(row[stop]) == c {
                stop += 1;
            }
            members.clear();
            members.extend(row[k..stop].iter().map(|&key| tri(key)));
            k = stop;
            let value = if f64_sum {
                let v = |i: usize| {
                    f64::from_le_bytes(src[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
                };
                let mut s = v(members[0]);
                for &i in &members[1..] {
                    s += v(i);
                }
                let mut st = [0u8; 16];
                st[..8].copy_from_slice(&s.to_le_bytes());
                st
            } else {
                combine.group(&members, reader)?
            };
            if o.drop_zeros && combine.is_zero(&value) {
                continue;
            }
            idx_out[nnz * 16..nnz * 16 + 8].copy_from_slice(&(r as u64).to_le_bytes());
            idx_out[nnz * 16 + 8..nnz * 16 + 16].copy_from_slice(&c.to_le_bytes());
            store_element(ty, val_out, nnz, &value);
            if let Some(p) = plan.as_mut() {
                p.map_group(&members)?;
            }
            nnz += 1;
        }
    }
    indices.truncate(nnz * 16);
    values.truncate(size::values_bytes(ty, nnz as u64)? as usize);
    let coo = Coo::from_owned(ty.tag, t.shape, true, values, indices)?;
    Ok((coo, plan))
}
