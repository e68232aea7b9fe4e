//! Cutting a tensor into shards along dimension 0.

use super::{gather, ShardBox};
use crate::coo::Coo;
use crate::error::CooError;

/// How `partition` chooses the row blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split<'b> {
    /// `n` blocks of (nearly) equal row counts: block k holds rows
    /// `k * rows / n` to `(k + 1) * rows / n`.
    EqualRows(usize),
    /// `n` blocks of (nearly) equal entry counts, cut between rows (a row
    /// is never split, so a heavy row makes its block heavier).
    BalancedNnz(usize),
    /// The caller's `n + 1` boundaries: 0, then non-decreasing, ending at
    /// the row extent; block k holds rows `b[k]` to `b[k + 1]`.
    Boundaries(&'b [u64]),
}

/// The most shards one call makes.
pub const MAX_PARTS: usize = 1 << 20;

/// Cut `coo` into shards along dimension 0, as `split` says. Shard k holds
/// the entries of its rows with coordinates local to its block (row minus
/// the block's first row), in their original order (so a sorted tensor
/// gives sorted shards), as a library-owned, validated tensor whose shard
/// box places it in `coo`'s parent: `coo` itself, or `coo`'s own parent
/// when it is a shard already (offsets add up). Empty blocks give empty
/// shards.
pub fn partition(coo: &Coo<'_>, split: Split<'_>) -> Result<Vec<Coo<'static>>, CooError> {
    if coo.is_permissive() {
        coo.validate()?;
    }
    let rows = coo.shape()[0];
    let bounds = boundaries(coo, split, rows)?;
    let parts = bounds.len() - 1;
    let n = coo.nnz() as usize;
    let r = coo.shape().len();
    // The block of each entry, then the entries of each block in order.
    let block_of = |row: u64| bounds[..parts].partition_point(|&b| b <= row) - 1;
    let mut counts = vec![0usize; parts];
    for i in 0..n {
        counts[block_of(coo.entry(i)[0])] += 1;
    }
    let mut picks: Vec<Vec<usize>> = Vec::new();
    picks
        .try_reserve_exact(parts)
        .map_err(|_| alloc(parts * 24))?;
    for &c in &counts {
        let mut v = Vec::new();
        v.try_reserve_exact(c).map_err(|_| alloc(c * 8))?;
        picks.push(v);
    }
    for i in 0..n {
        picks[block_of(coo.entry(i)[0])].push(i);
    }
    let (parent, base) = match coo.shard() {
        Some(b) => (b.parent_shape.clone(), b.offset.clone()),
        None => (coo.shape().to_vec(), vec![0; r]),
    };
    let mut out = Vec::new();
    out.try_reserve_exact(parts)
        .map_err(|_| alloc(parts * 256))?;
    for k in 0..parts {
        let (lo, hi) = (bounds[k], bounds[k + 1]);
        let mut shape = coo.shape().to_vec();
        shape[0] = hi - lo;
        let t = gather(
            coo,
            &shape,
            picks[k].len(),
            coo.is_sorted(),
            |j| (coo, picks[k][j]),
            |t, i, c| {
                c.copy_from_slice(t.entry(i));
                c[0] -= lo;
            },
            "partition",
        )?;
        let mut offset = base.clone();
        offset[0] += lo;
        out.push(t.with_shard(ShardBox {
            parent_shape: parent.clone(),
            offset,
        })?);
    }
    Ok(out)
}

fn alloc(bytes: usize) -> CooError {
    CooError::Alloc {
        bytes,
        what: "the partition",
    }
}

fn count_arg(n: usize) -> Result<usize, CooError> {
    if n == 0 || n > MAX_PARTS {
        return Err(CooError::Argument(format!(
            "a partition has 1 to {MAX_PARTS} parts, not {n}"
        )));
    }
    Ok(n)
}

/// The `parts + 1` row boundaries `split` means for `rows` rows.
fn boundaries(coo: &Coo<'_>, split: Split<'_>, rows: u64) -> Result<Vec<u64>, CooError> {
    Ok(match split {
        Split::EqualRows(p) => {
            let p = count_arg(p)?;
            (0..=p)
                .map(|k| (u128::from(rows) * k as u128 / p as u128) as u64)
                .collect()
        }
        Split::BalancedNnz(p) => {
            let p = count_arg(p)?;
            let n = coo.nnz() as usize;
            let mut lead: Vec<u64> = Vec::new();
            lead.try_reserve_exact(n).map_err(|_| alloc(n * 8))?;
            lead.extend((0..n).map(|i| coo.entry(i)[0]));
            if !coo.is_sorted() {
                lead.sort_unstable();
            }
            let mut b = vec![0u64; p + 1];
            for (k, slot) in b.iter_mut().enumerate().take(p).skip(1) {
                // Block k starts at the row of entry k * n / p.
                *slot = lead.get(k * n / p).copied().unwrap_or(rows);
            }
            b[p] = rows;
            b
        }
        Split::Boundaries(b) => {
            count_arg(b.len().saturating_sub(1))?;
            let last = b[b.len() - 1];
            if b[0] != 0 || last != rows || b.windows(2).any(|w| w[0] > w[1]) {
                return Err(CooError::Argument(format!(
                    "partition boundaries must start at 0, never decrease and end at the row \
                     extent {rows}; got {:?}{}",
                    &b[..b.len().min(8)],
                    if b.len() > 8 { " ..." } else { "" }
                )));
            }
            b.to_vec()
        }
    })
}

/// Rows `lo..hi` of a tensor that claims to be sorted, as a validated
/// shard, reading only those rows' entries (and the one before them): the
/// entries are found by binary search, copied with rows made local, and
/// checked (bounds, order, duplicates); the entry before the block must
/// come before the block's first. When every row block of a tensor is read
/// this way (one per rank), the whole tensor is checked, each part once,
/// and no reader touched another's entries.
///
/// `coo` may be permissive (structure checked only): this is how a part of
/// a large file is read without validating the rest.
pub fn row_block(coo: &Coo<'_>, lo: u64, hi: u64) -> Result<Coo<'static>, CooError> {
    let rows = coo.shape()[0];
    if lo > hi || hi > rows {
        return Err(CooError::Argument(format!(
            "row block {lo} to {hi} is not inside the tensor's {rows} rows"
        )));
    }
    if !coo.is_sorted() {
        return Err(CooError::Argument(
            "reading a row block needs a sorted tensor (is_sorted set): the rows of an unsorted \
             one may be anywhere, so the whole tensor would have to be read"
                .into(),
        ));
    }
    let n = coo.nnz() as usize;
    // The first entry whose row is at least `row`.
    let first = |row: u64| {
        let (mut a, mut b) = (0usize, n);
        while a < b {
            let m = a + (b - a) / 2;
            if coo.entry(m)[0] < row {
                a = m + 1;
            } else {
                b = m;
            }
        }
        a
    };
    let (k_lo, k_hi) = (first(lo), first(hi));
    if k_lo > k_hi {
        return Err(CooError::Argument(format!(
            "rows {lo} to {hi}: a binary search over the entries puts row {lo} at entry {k_lo}, \
             after row {hi} at entry {k_hi}: the tensor is not sorted as it claims"
        )));
    }
    if k_lo > 0 && k_lo < n && coo.entry(k_lo - 1) >= coo.entry(k_lo) {
        return Err(CooError::NotSorted {
            entry: k_lo as u64,
            prev: k_lo as u64 - 1,
            coords: coo.entry(k_lo).into(),
            prev_coords: coo.entry(k_lo - 1).into(),
        });
    }
    let mut shape = coo.shape().to_vec();
    shape[0] = hi - lo;
    let t = gather(
        coo,
        &shape,
        k_hi - k_lo,
        true,
        |j| (coo, k_lo + j),
        |t, i, c| {
            c.copy_from_slice(t.entry(i));
            // A row below the block (a file that lied about its order)
            // wraps to a huge row and is refused as out of bounds.
            c[0] = c[0].wrapping_sub(lo);
        },
        "a row block",
    )
    .map_err(|e| renumber(e, k_lo as u64, lo))?;
    let (parent, base) = match coo.shard() {
        Some(b) => (b.parent_shape.clone(), b.offset.clone()),
        None => (coo.shape().to_vec(), vec![0; shape.len()]),
    };
    let mut offset = base;
    offset[0] += lo;
    t.with_shard(ShardBox {
        parent_shape: parent,
        offset,
    })
}

/// An error about the block's entry k as one about the tensor's entry
/// `k + first`, its coordinates the tensor's (row + `lo`).
fn renumber(e: CooError, first: u64, lo: u64) -> CooError {
    let global = |mut c: crate::error::Coords| {
        if let Some(r) = c.0.first_mut() {
            *r = r.wrapping_add(lo);
        }
        c
    };
    match e {
        CooError::NotSorted {
            entry,
            prev,
            coords,
            prev_coords,
        } => CooError::NotSorted {
            entry: entry + first,
            prev: prev + first,
            coords: global(coords),
            prev_coords: global(prev_coords),
        },
        CooError::Duplicate {
            entry,
            first: f,
            coords,
        } => CooError::Duplicate {
            entry: entry + first,
            first: f + first,
            coords: global(coords),
        },
        CooError::OutOfBounds {
            entry,
            dim,
            coord,
            extent,
            coords,
        } => CooError::OutOfBounds {
            entry: entry + first,
            dim,
            coord: if dim == 0 {
                coord.wrapping_add(lo)
            } else {
                coord
            },
            extent,
            coords: global(coords),
        },
        e => e,
    }
}
