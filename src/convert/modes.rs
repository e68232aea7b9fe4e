//! Copies sorted by a mode order (SPLATT's and TACO's mode-k orderings).

use super::value_type;
use crate::coo::Coo;
use crate::element::decode::copy_element;
use crate::element::encode::store_element;
use crate::error::CooError;

/// A canonical copy of `coo` sorted by the mode order `modes` (a
/// permutation of the dimensions): entries in lexicographic order of their
/// coordinates taken in that order (SPLATT's and TACO's mode-k orderings),
/// coordinates and values carried along. `is_sorted` is set only for the
/// identity order, the one the format's flag means.
///
/// With `threads > 1` the entries are cut into runs sorted by scoped threads
/// and merged (same result).
pub fn sort_by_modes(
    coo: &Coo<'_>,
    modes: &[u32],
    threads: usize,
) -> Result<Coo<'static>, CooError> {
    let rank = coo.shape().len();
    let mut seen = [false; 64];
    if modes.len() != rank
        || modes
            .iter()
            .any(|&m| (m as usize) >= rank || std::mem::replace(&mut seen[m as usize], true))
    {
        return Err(CooError::Argument(format!(
            "mode order {modes:?} is not a permutation of the {rank} dimensions 0..{rank}"
        )));
    }
    if coo.is_permissive() {
        coo.validate()?;
    }
    let ty = value_type(coo, "sorting by modes")?;
    let n = coo.nnz() as usize;
    let alloc = |bytes: usize| CooError::Alloc {
        bytes,
        what: "sorting by modes",
    };
    let mut order: Vec<usize> = Vec::new();
    order
        .try_reserve_exact(n)
        .map_err(|_| alloc(n.saturating_mul(8)))?;
    order.extend(0..n);
    let cmp = |a: &usize, b: &usize| {
        let (ea, eb) = (coo.entry(*a), coo.entry(*b));
        modes
            .iter()
            .map(|&m| ea[m as usize].cmp(&eb[m as usize]))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(b))
    };
    let threads = crate::threads::count(threads, n, 1 << 16).min(crate::threads::MAX_SORT_RUNS);
    if threads == 1 {
        order.sort_unstable_by(cmp);
    } else {
        let per = n.div_ceil(threads);
        crate::threads::run(order.chunks_mut(per).collect(), |_, run| {
            run.sort_unstable_by(cmp)
        });
        // Merge the runs (few: a scan of their heads).
        let runs: Vec<&[usize]> = order.chunks(per).collect();
        let mut heads = vec![0usize; runs.len()];
        let mut merged: Vec<usize> = Vec::new();
        merged
            .try_reserve_exact(n)
            .map_err(|_| alloc(n.saturating_mul(8)))?;
        for _ in 0..n {
            let mut best = usize::MAX;
            for (r, run) in runs.iter().enumerate() {
                if heads[r] < run.len()
                    && (best == usize::MAX || cmp(&run[heads[r]], &runs[best][heads[best]]).is_lt())
                {
                    best = r;
                }
            }
            merged.push(runs[best][heads[best]]);
            heads[best] += 1;
        }
        order = merged;
    }
    let mut indices =
        crate::aligned::AlignedBuf::zeroed(coo.indices_bytes().len(), "the sorted indices")?;
    let mut values = crate::aligned::AlignedBuf::zeroed(coo.values().len(), "the sorted values")?;
    let mut s = [0u8; 16];
    for (k, &e) in order.iter().enumerate() {
        indices.as_bytes_mut()[k * rank * 8..(k + 1) * rank * 8]
            .copy_from_slice(&coo.indices_bytes()[e * rank * 8..(e + 1) * rank * 8]);
        copy_element(ty, coo.values(), e, &mut s);
        store_element(ty, values.as_bytes_mut(), k, &s);
    }
    let identity = modes.iter().enumerate().all(|(d, &m)| m as usize == d);
    Coo::from_owned(coo.type_tag(), coo.shape(), identity, values, indices)
}
