//! The C ABI. Each export converts its arguments (through `guard.rs`), calls
//! the core and maps the result; every body runs inside the panic barrier.
#![allow(non_camel_case_types)]
// Each export's safety contract (what may be NULL, what must stay valid and
// for how long) is written in its doc comment for C readers, who see it in
// the generated header; a Rust-style "# Safety" heading would only add noise
// there.
#![allow(clippy::missing_safety_doc)]

mod consts;
mod descriptor;
mod guard;

use std::ffi::{c_char, c_void};

pub use consts::*;
pub use descriptor::*;
use guard::{array, array_mut, coo_buffers, guard, guard_value, read_u64s, write_opt, write_req};

use crate::coo::{check_rank, Coo, CooParts, Options};
use crate::error::CooError;
use crate::status::{Status, UNKNOWN_STATUS_NAME};
use crate::{size, types};

/// Release callback of a borrowed handle: called exactly once with the
/// release_ctx given at creation. It may run on any thread (the one that
/// calls hurray_coo_free, or the creating thread), so it must be thread-safe.
pub type hurray_release_fn = Option<unsafe extern "C" fn(ctx: *mut c_void)>;

/// An opaque COO tensor handle. Create it with hurray_coo_create (or
/// hurray_coo_create_with_release), release it with hurray_coo_free. It is
/// immutable after creation: every function taking a const hurray_coo * may
/// be called from many threads at once on the same handle.
pub struct hurray_coo {
    // Declared first so it is dropped first: the tensor stops reading the
    // caller's buffers before the release callback runs.
    coo: Coo<'static>,
    /// The descriptor the handle was read from, if any.
    desc: Option<crate::descriptor::Descriptor>,
    _release: Option<Release>,
}

/// Calls the caller's release callback exactly once, when dropped.
struct Release {
    f: unsafe extern "C" fn(*mut c_void),
    ctx: *mut c_void,
}

impl Drop for Release {
    fn drop(&mut self) {
        // SAFETY: the caller supplied this function pointer and context for
        // exactly this call; the contract says it is safe on any thread.
        unsafe { (self.f)(self.ctx) }
    }
}

const KNOWN_FLAGS: u32 = HURRAY_COO_COPY | HURRAY_COO_PERMISSIVE | HURRAY_COO_INDEX;

fn box_handle(h: hurray_coo) -> Result<*mut hurray_coo, CooError> {
    let mut v = Vec::new();
    v.try_reserve_exact(1).map_err(|_| CooError::Alloc {
        bytes: std::mem::size_of::<hurray_coo>(),
        what: "the handle",
    })?;
    v.push(h);
    // A boxed one-element slice has the layout of a Box<hurray_coo>; it is
    // taken back as one in hurray_coo_free.
    Ok(Box::into_raw(v.into_boxed_slice()).cast::<hurray_coo>())
}

/// # Safety
/// `coo` is NULL or a live handle from `hurray_coo_create*`.
unsafe fn handle<'h>(coo: *const hurray_coo) -> Result<&'h hurray_coo, CooError> {
    // SAFETY: non-null handles are live per the C contract.
    unsafe { coo.as_ref() }.ok_or(CooError::null("coo"))
}

/// Create a COO tensor handle and, unless HURRAY_COO_PERMISSIVE is given,
/// validate it completely.
///
/// type_tag: element type (HURRAY type table: 0x01 float16 ... 0x51
/// complex128). rank: 1..=64. shape: rank extents, read during the call only
/// (NULL is an error); no extent may be UINT64_MAX. nnz: number of stored
/// entries. is_sorted: true if the entries are in strictly increasing
/// lexicographic order (then validated, and lookups binary-search).
/// values: nnz packed elements, exactly values_bytes bytes as the type
/// requires (sub-byte types packed LSB-first, padding bits zero). indices:
/// nnz * rank uint64 coordinates, entry i dimension d at indices[i*rank+d],
/// exactly indices_bytes = nnz * rank * 8 bytes. Either buffer may be NULL
/// when its byte count is 0.
///
/// flags: HURRAY_COO_BORROW (0), or any of HURRAY_COO_COPY,
/// HURRAY_COO_PERMISSIVE and HURRAY_COO_INDEX. Borrowed buffers are read in place, never written,
/// and must stay alive and unchanged until hurray_coo_free; non-empty ones
/// must be 64-byte aligned. With HURRAY_COO_COPY the library copies them and
/// the caller may free them when this returns.
///
/// out: receives the new handle, owned by the caller, to be released with
/// hurray_coo_free. On any failure *out is set to NULL.
///
/// Returns HURRAY_OK, or: HURRAY_ERR_NULL_POINTER (out, shape, or a buffer
/// with nonzero size is NULL), HURRAY_ERR_INVALID_FLAGS, HURRAY_ERR_INVALID_TYPE,
/// HURRAY_ERR_INVALID_RANK, HURRAY_ERR_INVALID_SHAPE, HURRAY_ERR_OVERFLOW,
/// HURRAY_ERR_BUFFER_SIZE, HURRAY_ERR_MISALIGNED, HURRAY_ERR_NONZERO_PADDING,
/// HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_ERR_DUPLICATE, HURRAY_ERR_NOT_SORTED,
/// HURRAY_ERR_ALLOC, HURRAY_ERR_INTERNAL_PANIC. The first violation found is
/// described by hurray_last_error_message().
///
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_create(
    type_tag: u8,
    rank: u32,
    shape: *const u64,
    nnz: u64,
    is_sorted: bool,
    values: *const c_void,
    values_bytes: usize,
    indices: *const u64,
    indices_bytes: usize,
    flags: u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    // SAFETY: same contract as hurray_coo_create_with_release, with no callback.
    unsafe {
        hurray_coo_create_with_release(
            type_tag,
            rank,
            shape,
            nnz,
            is_sorted,
            values,
            values_bytes,
            indices,
            indices_bytes,
            flags,
            None,
            std::ptr::null_mut(),
            out,
        )
    }
}

/// Like hurray_coo_create, with a release callback for the caller's buffers
/// (the DLPack deleter model), so that a handle can keep, say, a Julia or
/// Python array alive.
///
/// release (may be NULL: then this is exactly hurray_coo_create) is called
/// exactly once with release_ctx, as soon as the library no longer needs the
/// caller's buffers: when the handle is freed (borrowed handle), before this
/// function returns (HURRAY_COO_COPY, after the copy), or before this
/// function returns when it fails, whatever the failure. It may be called on
/// any thread. release_ctx is passed through untouched and may be NULL.
///
/// Returns the same statuses as hurray_coo_create.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_create_with_release(
    type_tag: u8,
    rank: u32,
    shape: *const u64,
    nnz: u64,
    is_sorted: bool,
    values: *const c_void,
    values_bytes: usize,
    indices: *const u64,
    indices_bytes: usize,
    flags: u32,
    release: hurray_release_fn,
    release_ctx: *mut c_void,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    // Created first so the callback runs exactly once on every path,
    // panics included: moved into the handle on success, dropped otherwise.
    let release = release.map(|f| Release {
        f,
        ctx: release_ctx,
    });
    guard(move || {
        // SAFETY: `out` is NULL or writable, per the contract.
        let opts = unsafe { begin_create(out, flags) }?;
        check_rank(rank)?;
        // SAFETY: rank is 1..=64 and the caller guarantees `rank` readable
        // extents at `shape`; buffer pointers are valid for their byte counts
        // and, unless copied, stay valid and unchanged until free (so 'static
        // is the contract's lifetime: the handle never outlives free).
        let (shape, (values, indices)) = unsafe {
            (
                read_u64s(shape, rank, "shape")?,
                coo_buffers(values, values_bytes, indices, indices_bytes)?,
            )
        };
        let parts = CooParts {
            type_tag,
            shape: shape.as_slice(),
            nnz,
            is_sorted,
            values,
            indices,
        };
        // SAFETY: `out` was checked non-null above.
        unsafe { build_handle(parts, opts, release, None, out) }
    })
}

/// The first steps of every call that creates a handle: `*out` is set to
/// NULL (so it is NULL on any failure that follows), then the flags are
/// checked.
///
/// # Safety
/// `out` is NULL (an error) or writable.
unsafe fn begin_create(out: *mut *mut hurray_coo, flags: u32) -> Result<Options, CooError> {
    // SAFETY: NULL-checked by write_req; writable per this function's contract.
    unsafe { write_req(out, std::ptr::null_mut(), "out")? };
    check_flags(flags)
}

/// The create flags as core options; unknown bits are refused.
fn check_flags(flags: u32) -> Result<Options, CooError> {
    if flags & !KNOWN_FLAGS != 0 {
        return Err(CooError::InvalidFlags {
            flags,
            unknown: flags & !KNOWN_FLAGS,
        });
    }
    Ok(Options {
        copy: flags & HURRAY_COO_COPY != 0,
        permissive: flags & HURRAY_COO_PERMISSIVE != 0,
        index: flags & HURRAY_COO_INDEX != 0,
    })
}

/// Build the tensor and its handle and store it in `*out`. The release
/// guard is kept by a borrowed handle and dropped (so called) otherwise.
///
/// # Safety
/// `out` is non-null and writable.
unsafe fn build_handle(
    parts: CooParts<'_, 'static>,
    opts: Options,
    release: Option<Release>,
    desc: Option<crate::descriptor::Descriptor>,
    out: *mut *mut hurray_coo,
) -> Result<(), CooError> {
    let coo = Coo::new(parts, opts)?;
    let release = if opts.copy { None } else { release };
    let h = box_handle(hurray_coo {
        coo,
        desc,
        _release: release,
    })?;
    // SAFETY: per this function's contract.
    unsafe { write_opt(out, h) };
    Ok(())
}

/// Free a handle created by hurray_coo_create*. NULL is a no-op. Calls the
/// release callback, if one was given, exactly once. Never fails.
///
/// Thread safety: may be called from any thread (e.g. a garbage collector's
/// finalizer thread), but only once per handle, and not while another
/// thread is still using the handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_free(coo: *mut hurray_coo) {
    guard_value((), || {
        if !coo.is_null() {
            // SAFETY: a non-null `coo` came from box_handle (a boxed
            // one-element slice, which has Box<hurray_coo>'s layout) and is
            // freed once, per the contract.
            drop(unsafe { Box::from_raw(coo) });
        }
    })
}

/// Check every rule of the COO specification on a handle, whatever flags it
/// was created with: element type known, rank, shape, exact buffer sizes,
/// alignment of borrowed buffers, zero sub-byte padding, every coordinate in
/// bounds, no duplicate coordinate tuple, and strict lexicographic order when
/// sorted. The first violation (lowest entry number) is described by
/// hurray_last_error_message(), e.g. "entry 17 duplicates entry 3 at (2, 0)".
///
/// coo may not be NULL. Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER,
/// HURRAY_ERR_INVALID_TYPE, HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
/// HURRAY_ERR_DUPLICATE, HURRAY_ERR_NOT_SORTED, HURRAY_ERR_NONZERO_PADDING,
/// HURRAY_ERR_ALLOC (duplicate detection needs about 9, at most 16, bytes per entry),
/// HURRAY_ERR_INTERNAL_PANIC.
///
/// Thread safety: safe on a handle shared between threads.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_validate(coo: *const hurray_coo) -> hurray_status {
    // SAFETY: `coo` is NULL or live, per the contract.
    guard(|| unsafe { handle(coo) }?.coo.validate())
}

/// Look up the element at a coordinate tuple: binary search when the tensor
/// is sorted, a linear scan otherwise.
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
        // SAFETY: `coo` is NULL or live, per the contract.
        let coo = &unsafe { handle(coo) }?.coo;
        let query = read_query(coo, index, rank)?;
        if out_value.is_null() {
            return Err(CooError::null("out_value"));
        }
        let mut tmp = [0u8; HURRAY_LOOKUP_MAX_BYTES];
        let avail = out_value_bytes.min(HURRAY_LOOKUP_MAX_BYTES);
        let found = coo.lookup(query.as_slice(), &mut tmp[..avail])?;
        let written = coo.type_info().map_or(0, |t| t.lookup_bytes());
        // SAFETY: out_value is non-null and, per the contract, writable for
        // out_value_bytes >= written bytes (checked by lookup above).
        unsafe { std::ptr::copy_nonoverlapping(tmp.as_ptr(), out_value.cast::<u8>(), written) };
        // SAFETY: NULL or writable, per the contract.
        unsafe { write_opt(out_found, found) };
        Ok(())
    })
}

/// Look up the element at a coordinate tuple and return it as a double:
/// every real type is converted (float16, bfloat16, the float8 and OCP MX
/// sub-byte floats decoded per OCP, float128 rounded to nearest, 64-bit
/// integers rounded to nearest, int4/int2 sign-extended, bool as 0 or 1).
/// NaN and infinities are kept. An element that is not stored gives 0.0.
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
    guard(|| {
        // SAFETY: `coo` is NULL or live, per the contract.
        let coo = &unsafe { handle(coo) }?.coo;
        let query = read_query(coo, index, rank)?;
        if out_value.is_null() {
            return Err(CooError::null("out_value"));
        }
        let (value, found) = coo.lookup_f64(query.as_slice())?;
        // SAFETY: non-null, and writable per the contract; NULL or writable.
        unsafe {
            write_opt(out_value, value);
            write_opt(out_found, found);
        }
        Ok(())
    })
}

/// Look up n coordinate tuples in one call and return each value as a double
/// (the hurray_coo_lookup_f64 conversion; 0.0 when not stored).
///
/// queries: n * rank coordinates, query k at queries[k*rank .. (k+1)*rank],
/// 8-byte aligned (NULL only when n is 0); rank must equal the tensor's.
/// out_values: n doubles, 8-byte aligned, written. out_found (may be NULL): n
/// bools, set to whether each query is stored. Every query is checked before
/// anything is looked up: the first one outside the shape fails the whole
/// call, and its number is in the message. With the HURRAY_COO_INDEX index
/// the queries are looked up in groups whose memory accesses overlap (in any
/// order); without it, when the tensor and the queries are both sorted, the
/// queries are merged with the entries instead of each searched. threads: 0 or 1 runs in the calling thread; n > 1 splits the
/// queries over at most that many threads (never more than one per 4096
/// queries), started and joined within this call: the library keeps no
/// threads. On failure the outputs are unspecified.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_RANK_MISMATCH,
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
        let coo = &unsafe { handle(coo) }?.coo;
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
        // SAFETY: the caller guarantees n * rank readable coordinates, n
        // writable doubles and, when out_found is not NULL, n writable bools
        // (written as 0 or 1 bytes, so no invalid bool is ever read).
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
    })
}

/// A query's coordinates: the caller's array itself when it is aligned,
/// else a copy. (One per call, on the stack: the size of the copy variant
/// costs nothing, and boxing it would allocate.)
#[allow(clippy::large_enum_variant)]
enum Query<'a> {
    Borrowed(&'a [u64]),
    Copied(guard::Small),
}

impl Query<'_> {
    fn as_slice(&self) -> &[u64] {
        match self {
            Query::Borrowed(q) => q,
            Query::Copied(q) => q.as_slice(),
        }
    }
}

/// Read a query of `rank` coordinates after checking `rank` against the
/// tensor (so that no more than the tensor's rank is ever read). Aligned
/// (the common case) it is read in place; misaligned, copied.
fn read_query<'a>(coo: &Coo<'_>, index: *const u64, rank: u32) -> Result<Query<'a>, CooError> {
    if rank != coo.rank() {
        return Err(CooError::RankMismatch {
            got: rank,
            expected: coo.rank(),
        });
    }
    if index.is_aligned() {
        // SAFETY: the caller guarantees `rank` readable coordinates at
        // `index` for the duration of the call, and rank equals the tensor's
        // rank (1..=64).
        return Ok(Query::Borrowed(unsafe {
            array(index, rank as usize, "index")
        }?));
    }
    // SAFETY: as above; the copy tolerates the misalignment.
    Ok(Query::Copied(unsafe { read_u64s(index, rank, "index") }?))
}

/// The rank of the tensor (1..=64), or 0 when coo is NULL.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_rank(coo: *const hurray_coo) -> u32 {
    // SAFETY: `coo` is NULL or live, per the contract.
    guard_value(0, || unsafe { handle(coo) }.map_or(0, |h| h.coo.rank()))
}

/// The shape: hurray_coo_rank(coo) extents, owned by the handle and valid
/// until hurray_coo_free. NULL when coo is NULL.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_shape(coo: *const hurray_coo) -> *const u64 {
    guard_value(std::ptr::null(), || {
        // SAFETY: `coo` is NULL or live, per the contract.
        unsafe { handle(coo) }.map_or(std::ptr::null(), |h| h.coo.shape().as_ptr())
    })
}

/// The number of stored entries, or 0 when coo is NULL.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_nnz(coo: *const hurray_coo) -> u64 {
    // SAFETY: `coo` is NULL or live, per the contract.
    guard_value(0, || unsafe { handle(coo) }.map_or(0, |h| h.coo.nnz()))
}

/// The element type tag, or 0x00 (never a valid tag) when coo is NULL.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_type_tag(coo: *const hurray_coo) -> u8 {
    // SAFETY: `coo` is NULL or live, per the contract.
    guard_value(0, || unsafe { handle(coo) }.map_or(0, |h| h.coo.type_tag()))
}

/// Whether the tensor declares its entries sorted; false when coo is NULL.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_is_sorted(coo: *const hurray_coo) -> bool {
    // SAFETY: `coo` is NULL or live, per the contract.
    guard_value(false, || {
        unsafe { handle(coo) }.is_ok_and(|h| h.coo.is_sorted())
    })
}

/// The HURRAY_COO_COPY and HURRAY_COO_PERMISSIVE flags the handle was created
/// with, and HURRAY_COO_INDEX when it holds a lookup index (0 for a borrowed,
/// fully validated handle without one, and when coo is NULL).
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_flags(coo: *const hurray_coo) -> u32 {
    guard_value(0, || {
        // SAFETY: `coo` is NULL or live, per the contract.
        unsafe { handle(coo) }.map_or(0, |h| {
            let copy = if h.coo.is_copy() { HURRAY_COO_COPY } else { 0 };
            let lax = if h.coo.is_permissive() {
                HURRAY_COO_PERMISSIVE
            } else {
                0
            };
            let index = if h.coo.has_index() {
                HURRAY_COO_INDEX
            } else {
                0
            };
            copy | lax | index
        })
    })
}

/// Bytes of the lookup index the handle holds (HURRAY_COO_INDEX): about 13
/// bytes per entry, at most 16 per entry plus 256. 0 without an index, and
/// when coo is NULL.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_index_bytes(coo: *const hurray_coo) -> usize {
    // SAFETY: `coo` is NULL or live, per the contract.
    guard_value(0, || {
        unsafe { handle(coo) }.map_or(0, |h| h.coo.index_bytes())
    })
}

/// The values buffer the handle reads (the caller's own memory when borrowed,
/// the library's 64-byte-aligned copy otherwise), valid until hurray_coo_free;
/// read-only. out_bytes (may be NULL) receives its size in bytes. Returns NULL
/// when coo is NULL (then *out_bytes = 0); may return NULL for an empty
/// borrowed buffer.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_values(
    coo: *const hurray_coo,
    out_bytes: *mut usize,
) -> *const c_void {
    // SAFETY: `coo` is NULL or live; out_bytes NULL or writable.
    unsafe { buffer_of(coo, out_bytes, |c| c.values()) }
}

/// The indices buffer (nnz * rank uint64), as hurray_coo_values.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_indices(
    coo: *const hurray_coo,
    out_bytes: *mut usize,
) -> *const u64 {
    // SAFETY: `coo` is NULL or live; out_bytes NULL or writable.
    unsafe { buffer_of(coo, out_bytes, |c| c.indices_bytes()) }.cast()
}

/// # Safety
/// `coo` is NULL or live; `out_bytes` NULL or writable.
unsafe fn buffer_of(
    coo: *const hurray_coo,
    out_bytes: *mut usize,
    pick: impl for<'h> FnOnce(&'h Coo<'static>) -> &'h [u8],
) -> *const c_void {
    let (ptr, len) = guard_value((std::ptr::null(), 0), || {
        // SAFETY: per this function's contract.
        unsafe { handle(coo) }.map_or((std::ptr::null(), 0), |h| {
            let b = pick(&h.coo);
            (b.as_ptr().cast::<c_void>(), b.len())
        })
    });
    // SAFETY: per this function's contract.
    unsafe { write_opt(out_bytes, len) };
    ptr
}

/// The size in bytes of a values buffer holding n elements of type_tag
/// (n * width, ceil(n * bits / 8) for 1-, 2- and 4-bit types,
/// ceil(n / 4) * 3 for 6-bit types), written to *out_bytes.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER (out_bytes), HURRAY_ERR_INVALID_TYPE,
/// HURRAY_ERR_OVERFLOW.
#[no_mangle]
pub unsafe extern "C" fn hurray_type_values_bytes(
    type_tag: u8,
    n: u64,
    out_bytes: *mut u64,
) -> hurray_status {
    guard(|| {
        let class = types::TagClass::of(type_tag);
        let types::TagClass::Known(info) = class else {
            return Err(CooError::InvalidType {
                tag: type_tag,
                class,
                hint: "",
            });
        };
        let need = size::values_bytes(info, n)?;
        // SAFETY: NULL-checked; writable per the contract.
        unsafe { write_req(out_bytes, need, "out_bytes") }
    })
}

/// The specification's name of an element type ("float32", "int4", ...), or
/// "unknown" for any other tag. Never NULL; static storage.
#[no_mangle]
pub extern "C" fn hurray_type_name(type_tag: u8) -> *const c_char {
    guard_value(c"unknown".as_ptr(), || {
        types::type_info(type_tag).map_or(c"unknown".as_ptr(), |t| t.name_c.as_ptr())
    })
}

/// The name of a status code ("HURRAY_OK", "HURRAY_ERR_DUPLICATE", ...), or
/// "HURRAY_ERR_UNKNOWN_STATUS" for a code that is not defined. Never NULL;
/// static storage. Thread safety: safe from any thread.
#[no_mangle]
pub extern "C" fn hurray_status_name(status: hurray_status) -> *const c_char {
    guard_value(UNKNOWN_STATUS_NAME.as_ptr(), || {
        Status::from_code(status)
            .map_or(UNKNOWN_STATUS_NAME, Status::name)
            .as_ptr()
    })
}

/// A description of the most recent failure of a status-returning function
/// on the calling thread: what is wrong and where (entry, dimension, values)
/// and what to do instead. Empty ("") after that thread's last such call
/// succeeded. Never NULL. The string is owned by the library and valid until
/// the next call into the library on the same thread; copy it to keep it.
/// Thread safety: each thread has its own message.
#[no_mangle]
pub extern "C" fn hurray_last_error_message() -> *const c_char {
    guard_value(c"".as_ptr(), guard::last_message_ptr)
}

const fn parse_version(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut v = 0u32;
    while i < b.len() {
        v = v * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    v
}

/// The crate version, as Cargo sets it when the library is built.
pub(crate) const BUILT_VERSION: (u32, u32, u32) = (
    parse_version(env!("CARGO_PKG_VERSION_MAJOR")),
    parse_version(env!("CARGO_PKG_VERSION_MINOR")),
    parse_version(env!("CARGO_PKG_VERSION_PATCH")),
);

/// The library's version at run time, MAJOR * 1000000 + MINOR * 1000 + PATCH;
/// equals HURRAY_COO_VERSION_NUMBER when header and library match.
#[no_mangle]
pub extern "C" fn hurray_coo_version_number() -> u32 {
    guard_value(0, || {
        let (major, minor, patch) = BUILT_VERSION;
        major * 1_000_000 + minor * 1000 + patch
    })
}

/// The library's version as a string, e.g. "0.1.0". Never NULL; static.
#[no_mangle]
pub extern "C" fn hurray_coo_version_string() -> *const c_char {
    guard_value(c"".as_ptr(), || {
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
    })
}

/// The library's ABI version at run time; equals HURRAY_COO_ABI_VERSION when
/// header and library match.
#[no_mangle]
pub extern "C" fn hurray_coo_abi_version() -> u32 {
    guard_value(0, || HURRAY_COO_ABI_VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_version_defines_match_the_crate() {
        assert_eq!(
            (
                HURRAY_COO_VERSION_MAJOR,
                HURRAY_COO_VERSION_MINOR,
                HURRAY_COO_VERSION_PATCH
            ),
            BUILT_VERSION
        );
        assert_eq!(HURRAY_COO_VERSION_NUMBER, hurray_coo_version_number());
        // SAFETY: the library returns a static NUL-terminated string.
        let s = unsafe { std::ffi::CStr::from_ptr(hurray_coo_version_string()) };
        assert_eq!(s.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn type_defines_match_the_type_table() {
        let defines: [(u8, &str); 26] = [
            (HURRAY_TYPE_FLOAT16, "float16"),
            (HURRAY_TYPE_BFLOAT16, "bfloat16"),
            (HURRAY_TYPE_FLOAT32, "float32"),
            (HURRAY_TYPE_FLOAT64, "float64"),
            (HURRAY_TYPE_INT8, "int8"),
            (HURRAY_TYPE_UINT8, "uint8"),
            (HURRAY_TYPE_INT16, "int16"),
            (HURRAY_TYPE_UINT16, "uint16"),
            (HURRAY_TYPE_INT32, "int32"),
            (HURRAY_TYPE_UINT32, "uint32"),
            (HURRAY_TYPE_INT64, "int64"),
            (HURRAY_TYPE_UINT64, "uint64"),
            (HURRAY_TYPE_BOOL, "bool"),
            (HURRAY_TYPE_FLOAT8_E4M3, "float8_e4m3"),
            (HURRAY_TYPE_FLOAT8_E5M2, "float8_e5m2"),
            (HURRAY_TYPE_FLOAT8_E8M0, "float8_e8m0"),
            (HURRAY_TYPE_FLOAT4_E2M1, "float4_e2m1"),
            (HURRAY_TYPE_FLOAT6_E2M3, "float6_e2m3"),
            (HURRAY_TYPE_FLOAT6_E3M2, "float6_e3m2"),
            (HURRAY_TYPE_FLOAT128, "float128"),
            (HURRAY_TYPE_INT4, "int4"),
            (HURRAY_TYPE_UINT4, "uint4"),
            (HURRAY_TYPE_INT2, "int2"),
            (HURRAY_TYPE_UINT2, "uint2"),
            (HURRAY_TYPE_COMPLEX64, "complex64"),
            (HURRAY_TYPE_COMPLEX128, "complex128"),
        ];
        assert_eq!(defines.len(), types::TYPES.len());
        for ((tag, name), t) in defines.iter().zip(types::TYPES.iter()) {
            assert_eq!((*tag, *name), (t.tag, t.name()));
        }
    }

    #[test]
    fn status_defines_match_the_table() {
        let defines: [(hurray_status, &str); 29] = [
            (HURRAY_OK, "HURRAY_OK"),
            (HURRAY_ERR_INVALID_MAGIC, "HURRAY_ERR_INVALID_MAGIC"),
            (HURRAY_ERR_VERSION_MISMATCH, "HURRAY_ERR_VERSION_MISMATCH"),
            (HURRAY_ERR_INVALID_LAYOUT, "HURRAY_ERR_INVALID_LAYOUT"),
            (HURRAY_ERR_INVALID_TYPE, "HURRAY_ERR_INVALID_TYPE"),
            (HURRAY_ERR_BUFFER_TOO_SMALL, "HURRAY_ERR_BUFFER_TOO_SMALL"),
            (HURRAY_ERR_NULL_POINTER, "HURRAY_ERR_NULL_POINTER"),
            (HURRAY_ERR_INTERNAL_PANIC, "HURRAY_ERR_INTERNAL_PANIC"),
            (HURRAY_ERR_INVALID_SYNC_MODE, "HURRAY_ERR_INVALID_SYNC_MODE"),
            (HURRAY_ERR_INTERNAL, "HURRAY_ERR_INTERNAL"),
            (
                HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                "HURRAY_ERR_INDEX_OUT_OF_BOUNDS",
            ),
            (HURRAY_ERR_INVALID_RANK, "HURRAY_ERR_INVALID_RANK"),
            (HURRAY_ERR_INVALID_SHAPE, "HURRAY_ERR_INVALID_SHAPE"),
            (HURRAY_ERR_BUFFER_SIZE, "HURRAY_ERR_BUFFER_SIZE"),
            (HURRAY_ERR_MISALIGNED, "HURRAY_ERR_MISALIGNED"),
            (HURRAY_ERR_DUPLICATE, "HURRAY_ERR_DUPLICATE"),
            (HURRAY_ERR_NOT_SORTED, "HURRAY_ERR_NOT_SORTED"),
            (HURRAY_ERR_RANK_MISMATCH, "HURRAY_ERR_RANK_MISMATCH"),
            (HURRAY_ERR_OVERFLOW, "HURRAY_ERR_OVERFLOW"),
            (HURRAY_ERR_ALLOC, "HURRAY_ERR_ALLOC"),
            (HURRAY_ERR_INVALID_FLAGS, "HURRAY_ERR_INVALID_FLAGS"),
            (HURRAY_ERR_NONZERO_PADDING, "HURRAY_ERR_NONZERO_PADDING"),
            (HURRAY_ERR_UNSUPPORTED_TYPE, "HURRAY_ERR_UNSUPPORTED_TYPE"),
            (HURRAY_ERR_TRUNCATED, "HURRAY_ERR_TRUNCATED"),
            (HURRAY_ERR_RESERVED_BITS, "HURRAY_ERR_RESERVED_BITS"),
            (
                HURRAY_ERR_UNSUPPORTED_DEVICE,
                "HURRAY_ERR_UNSUPPORTED_DEVICE",
            ),
            (
                HURRAY_ERR_INVALID_BUFFER_HANDLE,
                "HURRAY_ERR_INVALID_BUFFER_HANDLE",
            ),
            (
                HURRAY_ERR_INVALID_STATISTICS,
                "HURRAY_ERR_INVALID_STATISTICS",
            ),
            (
                HURRAY_ERR_UNSUPPORTED_FEATURE,
                "HURRAY_ERR_UNSUPPORTED_FEATURE",
            ),
        ];
        assert_eq!(defines.len(), Status::ALL.len());
        for ((code, name), status) in defines.iter().zip(Status::ALL) {
            assert_eq!(*code, status.code(), "{name}");
            assert_eq!(*name, status.name().to_str().unwrap());
        }
    }
}
