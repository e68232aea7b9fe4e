//! Point and batch lookups.

use std::ffi::c_void;

use super::guard::{
    apart, array, array_mut, guard, guard_fast, handle, handle_fast, query_fast, read_struct,
    with_query, write_bytes, write_opt,
};
use super::probe::{hurray_lookup_view, lookup_view, Probe};
use super::{hurray_coo, hurray_status, HURRAY_LOOKUP_MAX_BYTES};
use crate::error::CooError;

/// The prologue of both point lookups, in the documented order: the handle,
/// the query (rank checked first), then `out_value` not NULL; then `f` on
/// the handle and the query.
///
/// # Safety
/// `coo` is NULL or live; `index`, when not NULL, holds `rank` coordinates.
#[inline(always)]
unsafe fn point_query(
    coo: *const hurray_coo,
    index: *const u64,
    rank: u32,
    out_value: *const c_void,
    f: impl FnOnce(&hurray_coo, &[u64]) -> Result<(), CooError>,
) -> Result<(), CooError> {
    // SAFETY: forwarded contract.
    let h = unsafe { handle(coo) }?;
    // SAFETY: forwarded contract.
    unsafe {
        with_query(&h.coo, index, rank, |q| {
            if out_value.is_null() {
                return Err(CooError::null("out_value"));
            }
            f(h, q)
        })
    }
}

/// The shortest path of `hurray_coo_lookup_f64` (see `probe.rs`): the
/// handle's probe, once the first lookup has taken it, when it can answer.
///
/// # Safety
/// `coo` is NULL or live; `index`, when not NULL, holds `rank` coordinates.
#[inline(always)]
unsafe fn lookup_f64_probe(
    coo: *const hurray_coo,
    index: *const u64,
    rank: u32,
    out_value: *mut f64,
) -> Option<(f64, bool)> {
    // SAFETY: NULL or live, per the contract.
    let h = unsafe { handle_fast(coo) }?;
    // SAFETY: forwarded contract.
    unsafe { probe_query(h.probe.get()?, index, rank, out_value) }
}

/// `Probe::find` once `index` and `out_value` are checked usable.
///
/// # Safety
/// `p` is the probe of a live handle; `index`, when not NULL, holds `rank`
/// coordinates.
#[inline(always)]
unsafe fn probe_query(
    p: &Probe,
    index: *const u64,
    rank: u32,
    out_value: *mut f64,
) -> Option<(f64, bool)> {
    if out_value.is_null() || index.is_null() || !index.is_aligned() {
        return None;
    }
    // SAFETY: `index` is non-NULL and aligned and, per the contract, holds
    // `rank` coordinates; `p` is the probe of a live handle.
    unsafe { p.find(index, rank) }
}

/// The common case of `hurray_coo_lookup_f64` in few instructions (see
/// `Coo::lookup_f64_fast`): every pointer non-NULL, the query aligned and of
/// the tensor's rank. `None` sends the call down the checked path, which
/// gives the same answer or names what is wrong.
///
/// # Safety
/// `coo` is NULL or live; `index`, when not NULL, holds `rank` coordinates.
#[inline(always)]
unsafe fn lookup_f64_fast(
    coo: *const hurray_coo,
    index: *const u64,
    rank: u32,
    out_value: *mut f64,
) -> Option<(f64, bool)> {
    // SAFETY: NULL or live, per the contract.
    let h = unsafe { handle_fast(coo) }?;
    if out_value.is_null() || rank != h.coo.rank() {
        return None;
    }
    // SAFETY: the contract gives `rank` readable coordinates, and rank
    // equals the tensor's rank (1..=64).
    let q = unsafe { query_fast(index, rank) }?;
    h.coo.lookup_f64_fast(q)
}

/// Look up the element at a coordinate tuple.
///
/// What is found, on every handle: the lowest-numbered entry whose
/// coordinates equal the query (on a validated tensor, the only one). How:
/// through the HURRAY_COO_INDEX index when the handle has one; otherwise a
/// search when the tensor is sorted and was validated at create; a linear
/// scan otherwise. A HURRAY_COO_PERMISSIVE handle's is_sorted is a claim:
/// the first lookup that would rely on it (single or batch, on any thread)
/// checks it once, O(nnz) — about as long as validating the order would
/// have taken — and keeps the answer in the handle (callers that arrive
/// together before it is kept may each check); from then on a search when
/// the entries are strictly increasing and inside the shape, a linear scan
/// when not. Single, indexed and batch lookups therefore agree on every
/// handle, valid or not.
///
/// The search on a sorted handle without an index: the first lookup that
/// searches (single or batch, on any thread) also builds a directory of the
/// entries (one pass over the coordinates and one over the directory; about
/// 2 ns an entry on a current x86 server, 55-66 ms at 30M entries), at most
/// 4 bytes per entry plus 4 (8 per entry beyond 2^32 entries), kept in the
/// handle until hurray_coo_free and shared by every thread; later lookups read two of its offsets and search
/// the few entries between them. When its memory is refused the lookups
/// binary-search the whole tensor instead (the same answers, no error).
///
/// index: rank coordinates (NULL is an error). rank must equal the tensor's
/// rank, and every coordinate must be inside the shape: otherwise an error,
/// not a zero. out_value: receives the element's storage: its little-endian
/// bytes for whole-byte types (2 for float16, 16 for complex128, ...), one
/// byte holding the bit pattern in its low bits for sub-byte types (bool,
/// int4, float6_e2m3, ...), and all-zero bytes when the element is not
/// stored. out_value_bytes is the size of out_value (HURRAY_LOOKUP_MAX_BYTES
/// always suffices). out_found (may be NULL) receives whether the element is
/// stored. On failure the outputs are not written.
///
/// Checked in this order: coo, rank, index, out_value, type interpretable,
/// out_value_bytes, coordinates in bounds.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_RANK_MISMATCH,
/// HURRAY_ERR_UNSUPPORTED_TYPE (tag accepted only in permissive mode),
/// HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
/// HURRAY_ERR_INTERNAL_PANIC.
///
/// Thread safety: safe on a handle shared between threads.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_lookup(
    coo: *const hurray_coo,
    index: *const u64,
    rank: u32,
    out_value: *mut c_void,
    out_value_bytes: usize,
    out_found: *mut bool,
) -> hurray_status {
    guard(|| {
        // SAFETY: per this function's contract.
        unsafe {
            point_query(coo, index, rank, out_value.cast(), |h, query| {
                let coo = &h.coo;
                let mut tmp = [0u8; HURRAY_LOOKUP_MAX_BYTES];
                let avail = out_value_bytes.min(HURRAY_LOOKUP_MAX_BYTES);
                let found = coo.lookup(query, &mut tmp[..avail]).map_err(|e| h.err(e))?;
                let written = coo.type_info().map_or(0, |t| t.lookup_bytes());
                // SAFETY: out_value is non-null and, per the contract,
                // writable for out_value_bytes >= written bytes (checked by
                // lookup above).
                write_bytes(out_value.cast::<u8>(), &tmp[..written]);
                // SAFETY: NULL or writable, per the contract.
                write_opt(out_found, found);
                Ok(())
            })
        }
    })
}

/// Look up the element at a coordinate tuple (found as hurray_coo_lookup
/// finds it) and return it as a double: every real type is converted
/// (float16, bfloat16, the float8 and OCP MX sub-byte floats decoded per OCP,
/// float128 rounded to nearest, 64-bit integers rounded to nearest, int4/int2
/// sign-extended, bool as 0 or 1). NaN and infinities are kept; the
/// float8_e8m0 codes 0x00 and 0xFF, which only a permissive handle can hold,
/// read as NaN. An element that is not stored gives 0.0.
///
/// index, rank, out_found: as hurray_coo_lookup. out_value (not NULL)
/// receives the value. On failure the outputs are not written.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_RANK_MISMATCH,
/// HURRAY_ERR_UNSUPPORTED_TYPE (complex types, and tags accepted only in
/// permissive mode), HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_ERR_INTERNAL_PANIC.
///
/// Thread safety: safe on a handle shared between threads.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_lookup_f64(
    coo: *const hurray_coo,
    index: *const u64,
    rank: u32,
    out_value: *mut f64,
    out_found: *mut bool,
) -> hurray_status {
    // The handle's probe first, in a small frame (a few registers, no
    // stack); everything else in `lookup_f64_general`.
    // SAFETY: per this function's contract.
    unsafe {
        answer_f64(out_value, out_found, || {
            lookup_f64_probe(coo, index, rank, out_value)
        })
        .unwrap_or_else(|| lookup_f64_general(coo, index, rank, out_value, out_found))
    }
}

/// Behind the panic barrier, `find`'s answer written to the outputs and
/// `HURRAY_OK`; `None` when `find` has none (then nothing is written).
///
/// # Safety
/// When `find` answers, `out_value` is non-NULL and writable and
/// `out_found` is NULL or writable.
#[inline(always)]
unsafe fn answer_f64(
    out_value: *mut f64,
    out_found: *mut bool,
    find: impl FnOnce() -> Option<(f64, bool)>,
) -> Option<hurray_status> {
    guard_fast(|| {
        let answer = find()?;
        // SAFETY: per this function's contract.
        unsafe { write_f64_answer(out_value, out_found, answer) };
        Some(())
    })
}

/// `hurray_coo_lookup_f64` when the handle's probe did not answer: on the
/// first lookup the probe is taken and tried; then the general fast path
/// (`lookup_f64_fast`); everything else (and every error) in
/// `lookup_f64_checked`.
///
/// # Safety
/// As `hurray_coo_lookup_f64`.
#[inline(never)]
unsafe fn lookup_f64_general(
    coo: *const hurray_coo,
    index: *const u64,
    rank: u32,
    out_value: *mut f64,
    out_found: *mut bool,
) -> hurray_status {
    // SAFETY: per this function's contract; both paths check out_value
    // non-NULL before they answer.
    unsafe {
        answer_f64(out_value, out_found, || {
            let h = handle_fast(coo)?;
            match h.probe.get() {
                // Taken before: it declined this query in the caller.
                Some(_) => None,
                None => probe_query(
                    h.probe.get_or_init(|| Probe::of(&h.coo)),
                    index,
                    rank,
                    out_value,
                ),
            }
            .or_else(|| lookup_f64_fast(coo, index, rank, out_value))
        })
        .unwrap_or_else(|| lookup_f64_checked(coo, index, rank, out_value, out_found))
    }
}

/// Write a `hurray_coo_lookup_f64` answer to the caller's outputs.
///
/// # Safety
/// `out_value` is non-NULL and writable; `out_found` is NULL or writable.
#[inline(always)]
unsafe fn write_f64_answer(out_value: *mut f64, out_found: *mut bool, (value, found): (f64, bool)) {
    // SAFETY: per this function's contract.
    unsafe {
        write_opt(out_value, value);
        write_opt(out_found, found);
    }
}

/// `hurray_coo_lookup_f64` on its checked path.
///
/// # Safety
/// As `hurray_coo_lookup_f64`.
#[inline(never)]
unsafe fn lookup_f64_checked(
    coo: *const hurray_coo,
    index: *const u64,
    rank: u32,
    out_value: *mut f64,
    out_found: *mut bool,
) -> hurray_status {
    guard(|| {
        // SAFETY: per this function's contract.
        unsafe {
            point_query(coo, index, rank, out_value.cast(), |h, query| {
                let answer = h.coo.lookup_f64(query).map_err(|e| h.err(e))?;
                // SAFETY: out_value was checked non-null by point_query.
                write_f64_answer(out_value, out_found, answer);
                Ok(())
            })
        }
    })
}

/// Look up n coordinate tuples in one call and return each value as a double
/// (the hurray_coo_lookup_f64 conversion; 0.0 when not stored). Each query
/// finds what hurray_coo_lookup_f64 finds, on every handle.
///
/// queries: n * rank coordinates, query k at queries[k*rank .. (k+1)*rank],
/// 8-byte aligned (NULL only when n is 0); rank must equal the tensor's.
/// out_values: n doubles, 8-byte aligned, written. out_found (may be NULL): n
/// bools, set to whether each query is stored. Every query is checked before
/// anything is looked up: the first one outside the shape fails the whole
/// call, and its number is in the message. With an index the queries are
/// looked up in a pipeline, several in flight at once, each at a different
/// step (in any order; on a sorted tensor's HURRAY_COO_INDEX directory, a
/// query's offsets, then its bucket's keys, then its value), and a value is
/// read only for a query that is stored; without one, when the queries are
/// sorted and the tensor is sorted and was validated at create, the queries
/// are merged with the entries instead of each searched. threads: as every
/// threads argument (HURRAY_MAX_THREADS); the queries split, at least 4096
/// per thread. On failure the outputs are unspecified.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_RANK_MISMATCH,
/// HURRAY_ERR_INVALID_ARGUMENT (out_values or out_found sharing memory with
/// each other, with queries or with the handle's indices or values),
/// HURRAY_ERR_MISALIGNED, HURRAY_ERR_OVERFLOW, HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
/// HURRAY_ERR_UNSUPPORTED_TYPE (complex types, tags accepted in permissive
/// mode), HURRAY_ERR_ALLOC (a thread could not be started),
/// HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a handle shared between threads.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_lookup_batch(
    coo: *const hurray_coo,
    queries: *const u64,
    n: usize,
    rank: u32,
    out_values: *mut f64,
    out_found: *mut bool,
    threads: u32,
) -> hurray_status {
    guard(|| {
        // SAFETY: `coo` is NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        let coo = &h.coo;
        if rank != coo.rank() {
            return Err(CooError::RankMismatch {
                got: rank,
                expected: coo.rank(),
            });
        }
        let count = n
            .checked_mul(rank as usize)
            .ok_or_else(|| CooError::Overflow {
                what: format!("the queries: n * rank = {n} * {rank} coordinates"),
            })?;
        // Byte counts for the overlap check; one that overflows is left out
        // of it (0), for the arrays' own checks below to refuse.
        let bytes = |k: usize, w: usize| k.checked_mul(w).unwrap_or(0);
        let found = if out_found.is_null() { 0 } else { n };
        let [indices, values] = h.spans();
        apart(
            &[
                ("queries", queries.cast(), bytes(count, 8)),
                indices,
                values,
            ],
            &[
                ("out_values", out_values.cast_const().cast(), bytes(n, 8)),
                ("out_found", out_found.cast_const().cast(), found),
            ],
        )?;
        // SAFETY: the caller guarantees n * rank readable coordinates, n
        // writable doubles and, when out_found is not NULL, n writable bools
        // (written as 0 or 1 bytes, so no invalid bool is ever read); no two
        // share memory (checked above).
        let (qs, out, found) = unsafe {
            (
                array(queries, count, "queries")?,
                array_mut(out_values, n, "out_values")?,
                if out_found.is_null() {
                    None
                } else {
                    Some(array_mut(out_found.cast::<u8>(), n, "out_found")?)
                },
            )
        };
        coo.lookup_batch_f64(qs, out, found, threads as usize)
            .map_err(|e| h.err(e))
    })
}

/// Fill *out with the read-only view of coo that the inline probe of
/// hurray_coo_probe.h reads (see hurray_lookup_view). On a sorted
/// handle it builds the bucket directory if no lookup has yet (one pass
/// over the coordinates, at most 4 bytes per entry plus 4, kept in the
/// handle; as the first lookup would), and on a HURRAY_COO_PERMISSIVE
/// handle that says it is sorted it checks the claim first (O(nnz), once).
/// The view of any other handle has offset_bytes 0, so every probe through
/// it is the library call: a probe is always correct, and fast where the
/// view says so.
///
/// coo: the handle (not NULL). out: not NULL, out->size set by the caller
/// to sizeof(hurray_lookup_view); written on success, every field.
/// What the view points to is the library's or the handle's, valid until
/// hurray_coo_free(coo), and must not be written.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER (coo or out is NULL),
/// HURRAY_ERR_BUFFER_TOO_SMALL (out->size is smaller than this library's
/// hurray_lookup_view), HURRAY_ERR_INTERNAL_PANIC.
///
/// Thread safety: safe on a handle shared between threads; the view is
/// plain data that any thread may read while the handle lives.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_lookup_view(
    coo: *const hurray_coo,
    out: *mut hurray_lookup_view,
) -> hurray_status {
    guard(|| {
        // SAFETY: `coo` is NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        // SAFETY: NULL or a caller's struct whose first field is its size,
        // per the contract; only that field is read before the size is known.
        let size = unsafe { read_struct(out.cast::<usize>(), "out") }?;
        let need = std::mem::size_of::<hurray_lookup_view>();
        if size < need {
            return Err(CooError::BufferTooSmall {
                what: "out (out->size)",
                got: size,
                needed: need,
                why: ": set out->size to sizeof(hurray_lookup_view)".into(),
            });
        }
        let view = lookup_view(coo, &h.coo, size);
        // SAFETY: non-NULL (read above) and, per its size, writable for a
        // whole hurray_lookup_view.
        unsafe { write_opt(out, view) };
        Ok(())
    })
}
