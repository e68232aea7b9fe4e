//! Point lookups in a sorted tensor without an index: a binary search over
//! the caller's coordinates, in place (no memory of its own).
//!
//! The search is branch-free (each step keeps a half with a conditional
//! move) and asks for the two entries the next step may read while this
//! step's entry is still on its way: on a tensor larger than the caches,
//! each step is a cache miss, and a branchy search both mispredicts half
//! its steps and waits for each miss in turn.

use crate::coo::key::entry;
use crate::hint::{prefetch, select};

/// `a < b`, lexicographically.
#[inline(always)]
fn less<const R: usize>(a: &[u64; R], b: &[u64; R]) -> bool {
    match R {
        1 => a[0] < b[0],
        2 => {
            (u128::from(a[0]) << 64 | u128::from(a[1]))
                < (u128::from(b[0]) << 64 | u128::from(b[1]))
        }
        _ => a < b,
    }
}

fn find_r<const R: usize>(idx: &[u64], q: &[u64]) -> Option<usize> {
    let n = idx.len() / R;
    let mut key = [0u64; R];
    key.copy_from_slice(q);
    if n == 0 {
        return None;
    }
    // Invariant: the first entry not less than `key` (n when none) is in
    // `base..=base + len`.
    let (mut base, mut len) = (0usize, n);
    while len > 1 {
        let half = len / 2;
        let next = (len - half) / 2;
        // The next step reads entry `base + next` or `base + half + next`,
        // both below `base + len <= n`.
        prefetch(&idx[(base + next) * R]);
        prefetch(&idx[(base + half + next) * R]);
        let mid = base + half;
        base = select(less(&entry::<R>(idx, mid), &key), mid as u64, base as u64) as usize;
        len -= half;
    }
    let first = base + usize::from(less(&entry::<R>(idx, base), &key));
    (first < n && entry::<R>(idx, first) == key).then_some(first)
}

/// The entry of sorted, distinct `idx` (rank `rank`, strictly increasing
/// lexicographic order) equal to `q` (of that rank), if any.
pub fn find_sorted(idx: &[u64], rank: usize, q: &[u64]) -> Option<usize> {
    match rank {
        1 => find_r::<1>(idx, q),
        2 => find_r::<2>(idx, q),
        3 => find_r::<3>(idx, q),
        4 => find_r::<4>(idx, q),
        _ => {
            let (mut lo, mut hi) = (0usize, idx.len() / rank);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match idx[mid * rank..(mid + 1) * rank].cmp(q) {
                    std::cmp::Ordering::Less => lo = mid + 1,
                    std::cmp::Ordering::Greater => hi = mid,
                    std::cmp::Ordering::Equal => return Some(mid),
                }
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn finds_what_a_scan_finds() {
        let mut s = 3u64;
        for case in 0..400 {
            let rank = 1 + case % 6;
            let extent = 1 + rng(&mut s) % 6;
            let mut entries: Vec<Vec<u64>> = (0..rng(&mut s) % 300)
                .map(|_| (0..rank).map(|_| rng(&mut s) % extent).collect())
                .collect();
            entries.sort();
            entries.dedup();
            let idx: Vec<u64> = entries.concat();
            for _ in 0..100 {
                let q: Vec<u64> = (0..rank).map(|_| rng(&mut s) % (extent + 1)).collect();
                let want = entries.iter().position(|e| *e == q);
                assert_eq!(find_sorted(&idx, rank, &q), want, "case {case} {q:?}");
            }
            for (i, e) in entries.iter().enumerate() {
                assert_eq!(find_sorted(&idx, rank, e), Some(i), "case {case}");
            }
        }
    }
}
