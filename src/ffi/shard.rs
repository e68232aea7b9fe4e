//! The C ABI for shards (a shard is created by hurray_coo_create with a
//! shard box in its options): translate and look up global coordinates,
//! partition along dimension 0, concatenate.

use super::guard::{guard, handle, live, read_u64s, write_opt};
use super::handle::hand_out;
use super::{hurray_coo, hurray_status};
use crate::coo::check_rank;
use crate::error::CooError;
use crate::shard::{self, Split};

/// hurray_coo_partition mode: parts blocks of (nearly) equal row counts.
pub const HURRAY_PARTITION_EQUAL_ROWS: u32 = 0;
/// hurray_coo_partition mode: parts blocks of (nearly) equal entry
/// counts, cut between rows.
pub const HURRAY_PARTITION_BALANCED_NNZ: u32 = 1;
/// hurray_coo_partition mode: the caller's parts + 1 row boundaries.
pub const HURRAY_PARTITION_BOUNDARIES: u32 = 2;

/// The local coordinates of the parent tensor's coordinates global (rank
/// of them, not NULL) into out_local (rank values, not NULL): global minus
/// the shard's offset, or global itself for a handle that is not a shard.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_RANK_MISMATCH,
/// HURRAY_ERR_OUTSIDE_SHARD (the message names the dimension, the
/// coordinate and the box), HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_to_local(
    coo: *const hurray_coo,
    global: *const u64,
    rank: u32,
    out_local: *mut u64,
) -> hurray_status {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(coo) }?;
        check_rank(rank)?;
        // SAFETY: rank readable coordinates, per the contract.
        let g = unsafe { read_u64s(global, rank, "global") }?;
        let mut local = [0u64; 64];
        h.coo
            .to_local(g.as_slice(), &mut local)
            .map_err(|e| h.err(e))?;
        // SAFETY: rank writable u64 at out_local, per the contract.
        let out = unsafe { super::guard::array_mut(out_local, rank as usize, "out_local") }?;
        out.copy_from_slice(&local[..rank as usize]);
        Ok(())
    })
}

/// hurray_coo_lookup_f64 at the parent tensor's coordinates global (rank
/// of them, not NULL): translated as hurray_coo_to_local does, then looked
/// up. out_value (not NULL) receives the value (0.0 when not stored),
/// out_found (may be NULL) whether it is stored.
///
/// Returns HURRAY_OK, HURRAY_ERR_OUTSIDE_SHARD, and the statuses of
/// hurray_coo_to_local and hurray_coo_lookup_f64.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_lookup_global_f64(
    coo: *const hurray_coo,
    global: *const u64,
    rank: u32,
    out_value: *mut f64,
    out_found: *mut bool,
) -> hurray_status {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { handle(coo) }?;
        check_rank(rank)?;
        if out_value.is_null() {
            return Err(CooError::null("out_value"));
        }
        // SAFETY: rank readable coordinates, per the contract.
        let g = unsafe { read_u64s(global, rank, "global") }?;
        let (v, found) = h
            .coo
            .lookup_global_f64(g.as_slice())
            .map_err(|e| h.err(e))?;
        // SAFETY: non-null / NULL or writable, per the contract.
        unsafe {
            write_opt(out_value, v);
            write_opt(out_found, found);
        }
        Ok(())
    })
}

/// Cut coo into parts shards along dimension 0 (rows), each a new,
/// library-owned, validated handle holding a copy of its rows' entries with
/// coordinates local to its block, in their original order (a sorted
/// tensor gives sorted shards), with a shard box placing it in coo's parent
/// (coo itself, or coo's own parent when coo is a shard: offsets add up).
///
/// mode: HURRAY_PARTITION_EQUAL_ROWS (block k holds rows k * rows / parts
/// to (k + 1) * rows / parts), HURRAY_PARTITION_BALANCED_NNZ (about
/// nnz / parts entries per block, never splitting a row), or
/// HURRAY_PARTITION_BOUNDARIES: boundaries holds parts + 1 row numbers, 0,
/// non-decreasing, ending at the row extent (read during the call; NULL
/// for the other modes is fine). parts: 1 to 1048576. Empty blocks give
/// empty shards.
///
/// out_shards (not NULL): parts slots, each receiving a handle owned by the
/// caller (hurray_coo_free each); all NULL on failure.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_ARGUMENT
/// (mode, parts or boundaries; the message says which), HURRAY_ERR_ALLOC,
/// HURRAY_ERR_UNSUPPORTED_TYPE (a tag accepted only permissively), the
/// validation statuses of a permissive coo, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_partition(
    coo: *const hurray_coo,
    mode: u32,
    parts: u32,
    boundaries: *const u64,
    out_shards: *mut *mut hurray_coo,
) -> hurray_status {
    guard(|| {
        if out_shards.is_null() {
            return Err(CooError::null("out_shards"));
        }
        let n = parts as usize;
        // SAFETY: parts writable pointer slots, per the contract (pointers
        // are plain words: written as usize).
        let slots =
            unsafe { super::guard::array_mut(out_shards.cast::<usize>(), n, "out_shards") }?;
        slots.fill(0);
        // SAFETY: per the contract.
        let h = unsafe { handle(coo) }?;
        let bounds;
        let split = match mode {
            HURRAY_PARTITION_EQUAL_ROWS => Split::EqualRows(n),
            HURRAY_PARTITION_BALANCED_NNZ => Split::BalancedNnz(n),
            HURRAY_PARTITION_BOUNDARIES => {
                // SAFETY: parts + 1 readable u64, per the contract.
                bounds =
                    unsafe { super::guard::array(boundaries, n.saturating_add(1), "boundaries") }?;
                Split::Boundaries(bounds)
            }
            m => {
                return Err(CooError::Argument(format!(
                    "partition mode {m} is not HURRAY_PARTITION_EQUAL_ROWS (0), \
                     HURRAY_PARTITION_BALANCED_NNZ (1) or HURRAY_PARTITION_BOUNDARIES (2)"
                )))
            }
        };
        let shards = shard::partition(&h.coo, split).map_err(|e| h.err(e))?;
        let mut made = Vec::with_capacity(shards.len());
        for s in shards {
            let mut p: *mut hurray_coo = std::ptr::null_mut();
            // SAFETY: `p` is a valid out-pointer.
            let r = unsafe { hand_out(s, h.one_based, &mut p) };
            if let Err(e) = r {
                for q in made {
                    // SAFETY: handles made just above, freed once.
                    unsafe { super::guard::free_handle(q) };
                }
                return Err(e);
            }
            made.push(p);
        }
        for (slot, p) in slots.iter_mut().zip(made) {
            *slot = p as usize;
        }
        Ok(())
    })
}

/// One tensor of the parent shape from n shards (shards: n handles, not
/// NULL, read during the call only): every one a shard of the same parent
/// and element type, their boxes pairwise disjoint (they need not cover the
/// parent). The result holds every entry at its global coordinates, sorted,
/// library-owned and validated; it is not a shard. out (not NULL) receives
/// it, owned by the caller; NULL on failure. Empty boxes (an extent of 0)
/// overlap nothing. Cost: the entries plus O(n log n) for the box check
/// (a sweep; for rank 3 and more, plus the pairs of boxes that share rows
/// and overlap in dimension 1 too), so the n = 1048576 of
/// hurray_coo_partition is fine.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_ARGUMENT
/// (n is 0, a handle is not a shard, types or parent shapes differ),
/// HURRAY_ERR_INVALID_SHAPE (two boxes overlap), HURRAY_ERR_ALLOC,
/// HURRAY_ERR_OVERFLOW, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on shared handles.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_concat(
    shards: *const *const hurray_coo,
    n: u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    guard(|| {
        // SAFETY: `out` NULL or writable, per the contract.
        unsafe { super::guard::write_req(out, std::ptr::null_mut(), "out") }?;
        // SAFETY: n readable pointers, per the contract.
        let ptrs = unsafe { super::guard::array(shards.cast::<usize>(), n as usize, "shards") }?;
        let mut hs = crate::aligned::try_vec(ptrs.len(), "the shard list")?;
        for &p in ptrs {
            // SAFETY: each is a live handle, per the contract.
            hs.push(&unsafe { live(p as *const hurray_coo, "a shard") }?.coo);
        }
        let joined = shard::concat(&hs)?;
        // SAFETY: `out` checked writable above.
        unsafe { hand_out(joined, false, out) }
    })
}
