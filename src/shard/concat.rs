//! Putting shards back together.

use crate::aligned::try_vec;
use crate::coo::Coo;
use crate::error::CooError;

/// One tensor of the parent shape from `shards` (every one a shard of the
/// same parent, of one element type, their boxes pairwise disjoint; they
/// need not cover the parent): each entry at its global coordinates, in
/// lexicographic order (sorted), validated.
pub fn concat(shards: &[&Coo<'_>]) -> Result<Coo<'static>, CooError> {
    let Some(first) = shards.first() else {
        return Err(CooError::Argument(
            "concatenation needs at least one shard".into(),
        ));
    };
    // Every list below has one item per shard, allocated without aborting.
    let k = shards.len();
    let mut boxes = try_vec(k, "the concatenation's boxes")?;
    for (i, s) in shards.iter().enumerate() {
        boxes.push(s.shard().ok_or_else(|| {
            CooError::Argument(format!("tensor {i} of the concatenation is not a shard"))
        })?);
    }
    let parent = &boxes[0].parent_shape;
    for (k, s) in shards.iter().enumerate() {
        if s.type_tag() != first.type_tag() || &boxes[k].parent_shape != parent {
            return Err(CooError::Argument(format!(
                "shard {k} is a {} shard of a {:?} parent, shard 0 a {} shard of a {:?} parent: \
                 shards of one tensor share type and parent shape",
                s.type_info().map_or("?", |t| t.name()),
                boxes[k].parent_shape,
                first.type_info().map_or("?", |t| t.name()),
                parent
            )));
        }
        if s.is_permissive() {
            s.validate()?;
        }
    }
    // Pairwise disjoint boxes (an overlap would hide a duplicate).
    let mut offsets: Vec<&[u64]> = try_vec(k, "the concatenation's boxes")?;
    offsets.extend(boxes.iter().map(|b| &b.offset[..]));
    let mut shapes: Vec<&[u64]> = try_vec(k, "the concatenation's boxes")?;
    shapes.extend(shards.iter().map(|s| s.shape()));
    if let Some((a, b)) = overlapping_pair(&offsets, &shapes, &mut 0)? {
        return Err(CooError::Shard(format!(
            "the boxes of shards {a} (offset {:?}, shape {:?}) and {b} (offset {:?}, \
             shape {:?}) overlap",
            boxes[a].offset,
            shards[a].shape(),
            boxes[b].offset,
            shards[b].shape()
        )));
    }
    // Shards stacked along dimension 0 (full extent elsewhere), each sorted,
    // concatenate in offset order into a sorted tensor; otherwise sort.
    let mut order: Vec<usize> = try_vec(k, "the concatenation's order")?;
    order.extend(0..k);
    order.sort_by(|&a, &b| boxes[a].offset.cmp(&boxes[b].offset));
    let stacked = shards.iter().zip(&boxes).all(|(s, b)| {
        s.is_sorted() && (1..parent.len()).all(|d| b.offset[d] == 0 && s.shape()[d] == parent[d])
    });
    // Entries are picked straight from their shards into one buffer.
    let total: u64 = shards.iter().map(|s| s.nnz()).sum();
    let n = usize::try_from(total).map_err(|_| CooError::Overflow {
        what: "the concatenation's entry count".into(),
    })?;
    let mut whole = Vec::new();
    whole.try_reserve_exact(n).map_err(|_| CooError::Alloc {
        bytes: n * 16,
        what: "the concatenation",
    })?;
    for &k in &order {
        whole.extend((0..shards[k].nnz() as usize).map(|i| (k, i)));
    }
    let joined = super::gather(
        first,
        parent,
        whole.len(),
        stacked,
        |j| (shards[whole[j].0], whole[j].1),
        |t, i, c| {
            // Every shard has a box (checked above): local plus offset.
            let offset = t.shard().map_or(&[][..], |b| &b.offset[..]);
            for (d, slot) in c.iter_mut().enumerate() {
                *slot = t.entry(i)[d] + offset.get(d).copied().unwrap_or(0);
            }
        },
        "the concatenation",
    )?;
    if stacked {
        Ok(joined)
    } else {
        let identity: Vec<u32> = (0..parent.len() as u32).collect();
        crate::convert::sort_by_modes(&joined, &identity, 1)
    }
}

/// Two boxes (offsets and extents, rank >= 1) that overlap, the lower
/// number first, or `None` when they are pairwise disjoint. A box with an
/// extent of 0 holds nothing and overlaps nothing.
///
/// A sweep along dimension 0: a box is active from its first to past its
/// last row, so two boxes are active together exactly when they overlap in
/// dimension 0, and only those are compared in the other dimensions. Rank
/// 1: any two active boxes overlap. Rank 2: the active boxes are pairwise
/// disjoint in dimension 1 (else the sweep has stopped), kept ordered by
/// their start there, so a new box need only be compared with its two
/// neighbours: O(k log k) for k boxes. Rank 3 and more: a new box is
/// compared with the active boxes that start before it ends in dimension
/// 1, which is O(k log k) for shards cut along dimension 0 (as
/// `partition` cuts them: at most one is active at a time) and grows with
/// the number of boxes that share rows otherwise. `compared` counts the
/// pairs compared (for the tests of that bound).
fn overlapping_pair(
    offsets: &[&[u64]],
    shapes: &[&[u64]],
    compared: &mut u64,
) -> Result<Option<(usize, usize)>, CooError> {
    use std::collections::BTreeSet;
    let rank = shapes.first().map_or(0, |s| s.len());
    let end = |k: usize, d: usize| offsets[k][d] + shapes[k][d];
    let meet =
        |a: usize, b: usize, d: usize| offsets[a][d] < end(b, d) && offsets[b][d] < end(a, d);
    let pair = |a: usize, b: usize| Ok(Some((a.min(b), a.max(b))));
    // (coordinate, 0 = leaves / 1 = enters, box): at one coordinate a box
    // that ends there leaves before one that starts there enters.
    let mut events: Vec<(u64, u8, usize)> =
        try_vec(offsets.len().saturating_mul(2), "the concatenation's sweep")?;
    for k in 0..offsets.len() {
        if shapes[k].contains(&0) {
            continue;
        }
        events.push((offsets[k][0], 1, k));
        events.push((end(k, 0), 0, k));
    }
    events.sort_unstable();
    // Active boxes by (start in dimension 1, box).
    let mut active: BTreeSet<(u64, usize)> = BTreeSet::new();
    let key = |k: usize| (offsets[k].get(1).copied().unwrap_or(0), k);
    for (_, enters, k) in events {
        if enters == 0 {
            active.remove(&key(k));
            continue;
        }
        match rank {
            1 => {
                *compared += 1;
                if let Some(&(_, b)) = active.first() {
                    return pair(k, b);
                }
            }
            2 => {
                let below = active.range(..key(k)).next_back();
                let above = active.range(key(k)..).next();
                for &(_, b) in below.into_iter().chain(above) {
                    *compared += 1;
                    if meet(k, b, 1) {
                        return pair(k, b);
                    }
                }
            }
            _ => {
                for &(_, b) in active.range(..(end(k, 1), 0)) {
                    *compared += 1;
                    if (1..rank).all(|d| meet(k, b, d)) {
                        return pair(k, b);
                    }
                }
            }
        }
        active.insert(key(k));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::overlapping_pair;

    /// Every pair compared (as the check before the sweep did, except that
    /// an empty box, which holds no cell, overlaps nothing): the oracle.
    fn brute(offsets: &[Vec<u64>], shapes: &[Vec<u64>]) -> bool {
        let n = offsets.len();
        let empty = |k: usize| shapes[k].contains(&0);
        (0..n).any(|a| {
            (a + 1..n).any(|b| {
                !empty(a)
                    && !empty(b)
                    && (0..shapes[a].len()).all(|d| {
                        offsets[a][d] < offsets[b][d] + shapes[b][d]
                            && offsets[b][d] < offsets[a][d] + shapes[a][d]
                    })
            })
        })
    }

    #[test]
    fn the_sweep_finds_an_overlap_exactly_when_the_pairwise_check_does() {
        // A small deterministic generator (xorshift), boxes on a 6-cell
        // grid so that overlaps, touching edges and empty boxes all occur.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut seen = [0usize; 2];
        for case in 0..4000 {
            let rank = 1 + case % 4;
            let n = 1 + next(6) as usize;
            let offsets: Vec<Vec<u64>> = (0..n)
                .map(|_| (0..rank).map(|_| next(6)).collect())
                .collect();
            let shapes: Vec<Vec<u64>> = (0..n)
                .map(|_| (0..rank).map(|_| next(4)).collect())
                .collect();
            let o: Vec<&[u64]> = offsets.iter().map(|v| &v[..]).collect();
            let s: Vec<&[u64]> = shapes.iter().map(|v| &v[..]).collect();
            let found = overlapping_pair(&o, &s, &mut 0).unwrap();
            assert_eq!(
                found.is_some(),
                brute(&offsets, &shapes),
                "{offsets:?} {shapes:?}"
            );
            if let Some((a, b)) = found {
                assert!(a < b);
                assert!(brute(
                    &[offsets[a].clone(), offsets[b].clone()],
                    &[shapes[a].clone(), shapes[b].clone()]
                ));
            }
            seen[usize::from(found.is_some())] += 1;
        }
        assert!(seen[0] > 500 && seen[1] > 500, "{seen:?}");
    }

    #[test]
    fn row_blocks_and_a_grid_are_checked_with_a_few_comparisons_per_box() {
        // 2^16 row blocks of a rank-3 parent (as partition cuts them) and a
        // 256 x 256 grid of a matrix: the pairwise check compared about
        // k^2 / 2 = 2^31 pairs; the sweep compares each box with at most two.
        let k = 1usize << 16;
        let rows: Vec<Vec<u64>> = (0..k as u64).map(|r| vec![r, 0, 0]).collect();
        let rshape = vec![vec![1u64, 7, 9]; k];
        let grid: Vec<Vec<u64>> = (0..k as u64)
            .map(|i| vec![i / 256 * 3, i % 256 * 5])
            .collect();
        let gshape = vec![vec![3u64, 5]; k];
        for (offsets, shapes) in [(&rows, &rshape), (&grid, &gshape)] {
            let o: Vec<&[u64]> = offsets.iter().map(|v| &v[..]).collect();
            let s: Vec<&[u64]> = shapes.iter().map(|v| &v[..]).collect();
            let mut compared = 0;
            assert_eq!(overlapping_pair(&o, &s, &mut compared).unwrap(), None);
            assert!(
                compared <= 2 * k as u64,
                "{compared} comparisons for {k} boxes"
            );
        }
        // One overlap among them is found, and named.
        let mut grid = grid;
        grid[40_000][1] += 1;
        let o: Vec<&[u64]> = grid.iter().map(|v| &v[..]).collect();
        let s: Vec<&[u64]> = gshape.iter().map(|v| &v[..]).collect();
        assert_eq!(
            overlapping_pair(&o, &s, &mut 0).unwrap(),
            Some((40_000, 40_001))
        );
    }
}
