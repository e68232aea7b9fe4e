//! Creating, freeing and inspecting a handle.

use std::ffi::c_void;

use super::consts::*;
use super::guard::{
    coo_buffers, free_handle, guard, guard_value, handle, read_sized, read_struct, read_u64s,
    write_opt, write_req,
};
use super::{hurray_coo, hurray_release_fn, hurray_status, Release, CREATE_FLAGS};
use crate::aligned::try_copy;
use crate::coo::{check_rank, Coo, CooParts, Options};
use crate::error::CooError;

/// The tensor a handle is made of, as hurray_coo_create reads it.
///
/// type_tag: element type (HURRAY type table: 0x01 float16 ... 0x51
/// complex128). rank: 1..=64. shape: rank extents, read during the call only
/// (NULL is an error); no extent may be UINT64_MAX. nnz: number of stored
/// entries. is_sorted: true if the entries are in strictly increasing
/// lexicographic order (validated unless permissive; only a validated
/// sorted handle is binary-searched).
/// values: nnz packed elements, exactly values_bytes bytes as the type
/// requires (sub-byte types packed LSB-first, padding bits zero). indices:
/// nnz * rank uint64 coordinates, entry i dimension d at indices[i*rank+d],
/// exactly indices_bytes = nnz * rank * 8 bytes. Either buffer may be NULL
/// when its byte count is 0.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hurray_coo_parts {
    pub type_tag: u8,
    pub rank: u32,
    pub shape: *const u64,
    pub nnz: u64,
    pub is_sorted: bool,
    pub values: *const c_void,
    pub values_bytes: usize,
    pub indices: *const u64,
    pub indices_bytes: usize,
}

/// How hurray_coo_create makes a handle. Set size to
/// sizeof(hurray_coo_options) and every other field to 0 for the defaults
/// (borrow the buffers, validate on the calling thread, no callback, not a
/// shard); the struct may grow at its end in later versions, and a caller
/// built against an older header keeps passing its own size. NULL options
/// are the defaults.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hurray_coo_options {
    /// sizeof(hurray_coo_options), as the caller's header has it.
    pub size: usize,
    /// HURRAY_COO_BORROW (0), or any of HURRAY_COO_COPY,
    /// HURRAY_COO_PERMISSIVE, HURRAY_COO_INDEX, HURRAY_COO_ONE_BASED_MESSAGES
    /// and HURRAY_COO_INDEX_VALUES.
    pub flags: u32,
    /// Threads for the validation, as every threads argument of this
    /// library means it (see HURRAY_MAX_THREADS): the same handle and the
    /// same first violation, sooner on large tensors.
    pub threads: u32,
    /// Called exactly once with release_ctx as soon as the library no
    /// longer needs the caller's buffers (the DLPack deleter model): when a
    /// borrowed handle is freed, after the copy (HURRAY_COO_COPY), or before
    /// hurray_coo_create returns when it fails, whatever the failure (once
    /// the options themselves were readable: a size too small means the
    /// callback is never seen, so never called). May be called on any
    /// thread. NULL: no callback.
    pub release: hurray_release_fn,
    /// Passed to release untouched; may be NULL.
    pub release_ctx: *mut c_void,
    /// A shard: the parent tensor's shape and this block's offset in it
    /// (rank values each, read during the call only), both set or both
    /// NULL. The box is checked (shard_offset[k] + shape[k] <=
    /// parent_shape[k] in every dimension); it is written in the
    /// descriptor's shard section, reported by hurray_coo_shard, and used by
    /// hurray_coo_to_local and hurray_coo_lookup_global_f64.
    pub shard_parent_shape: *const u64,
    pub shard_offset: *const u64,
}

/// Create a COO tensor handle from parts (not NULL; see hurray_coo_parts)
/// and, unless options has HURRAY_COO_PERMISSIVE, validate it completely.
/// options: NULL for the defaults, else see hurray_coo_options (flags,
/// threads, release callback, shard box).
///
/// Borrowed buffers are read in place, never written, and must stay alive
/// and unchanged until hurray_coo_free; non-empty ones must be 64-byte
/// aligned. With HURRAY_COO_COPY the library copies them and the caller may
/// free them when this returns.
///
/// out: receives the new handle, owned by the caller, to be released with
/// hurray_coo_free. On any failure *out is set to NULL.
///
/// Returns HURRAY_OK, or: HURRAY_ERR_NULL_POINTER (out, parts, shape, half
/// a shard box, or a buffer with nonzero size is NULL),
/// HURRAY_ERR_INVALID_ARGUMENT (options->size smaller than this library's
/// first hurray_coo_options), HURRAY_ERR_INVALID_FLAGS,
/// HURRAY_ERR_INVALID_TYPE, HURRAY_ERR_INVALID_RANK, HURRAY_ERR_INVALID_SHAPE
/// (also a shard box that does not fit the parent), HURRAY_ERR_OVERFLOW,
/// HURRAY_ERR_BUFFER_SIZE, HURRAY_ERR_MISALIGNED, HURRAY_ERR_NONZERO_PADDING,
/// HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_ERR_DUPLICATE, HURRAY_ERR_NOT_SORTED,
/// HURRAY_ERR_INVALID_VALUE, HURRAY_ERR_ALLOC, HURRAY_ERR_INTERNAL_PANIC. The
/// first violation found is described by hurray_last_error_message() and
/// hurray_last_error_position() (the coordinate rules at the lowest entry
/// first, then the values). The duplicate check of an unsorted tensor keeps
/// its work space for the next check, within a bound (see
/// hurray_release_scratch).
///
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_create(
    parts: *const hurray_coo_parts,
    options: *const hurray_coo_options,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    // *out is NULL on every failure: set before anything can fail.
    // SAFETY: NULL or writable, per the contract.
    unsafe { write_opt(out, std::ptr::null_mut()) };
    // SAFETY: NULL or a caller's options of the size it declares, per the
    // contract; read before anything else so that the release callback is
    // held (and so runs exactly once) on every path after it.
    let o = match unsafe { read_options(options) } {
        Ok(o) => o,
        Err(e) => return guard(|| Err(e)),
    };
    let release = Release::new(o.release, o.release_ctx);
    guard(move || {
        // SAFETY: NULL or a readable hurray_coo_parts, per the contract.
        let p = unsafe { read_struct(parts, "parts") }?;
        let shard = match (o.shard_parent_shape.is_null(), o.shard_offset.is_null()) {
            (true, true) => None,
            (false, false) => Some((o.shard_parent_shape, o.shard_offset)),
            _ => {
                return Err(CooError::NullPointer {
                    what: "options->shard_parent_shape or options->shard_offset",
                    hint: ": a shard box needs both (or neither, for a tensor that is no shard)",
                })
            }
        };
        // SAFETY: the contract of hurray_coo_create.
        unsafe { create(&p, o.flags, o.threads, release, shard, out) }
    })
}

/// The caller's options, or the defaults for NULL.
///
/// # Safety
/// `options` is NULL or points to a hurray_coo_options whose size field
/// says how many bytes of it are readable.
unsafe fn read_options(options: *const hurray_coo_options) -> Result<hurray_coo_options, CooError> {
    let defaults = hurray_coo_options {
        size: std::mem::size_of::<hurray_coo_options>(),
        flags: 0,
        threads: 1,
        release: None,
        release_ctx: std::ptr::null_mut(),
        shard_parent_shape: std::ptr::null(),
        shard_offset: std::ptr::null(),
    };
    // SAFETY: per this function's contract.
    Ok(unsafe { read_sized(options, "options", "hurray_coo_options") }?.unwrap_or(defaults))
}

/// What creating a handle does: `*out` NULL first, the flags, the rank,
/// the shape and the buffers read, the tensor built (validated on up to
/// `threads` threads unless permissive), placed in a shard box when `shard`
/// gives one (parent shape, offset: rank values each), and boxed. The
/// release guard is kept by a borrowed handle and dropped (so called)
/// otherwise, whatever happens.
///
/// # Safety
/// The contract of hurray_coo_create (and, for `shard`, rank readable
/// values at both pointers).
unsafe fn create(
    a: &hurray_coo_parts,
    flags: u32,
    threads: u32,
    release: Option<Release>,
    shard: Option<(*const u64, *const u64)>,
    out: *mut *mut hurray_coo,
) -> Result<(), CooError> {
    // SAFETY: `out` is NULL or writable, per the contract.
    let (mut opts, one_based) = unsafe { begin_create(out, flags) }?;
    opts.threads = threads as usize;
    check_rank(a.rank)?;
    // SAFETY: rank is 1..=64 and the caller guarantees `rank` readable
    // extents at `shape`; buffer pointers are valid for their byte counts
    // and, unless copied, stay valid and unchanged until free (so 'static
    // is the contract's lifetime: the handle never outlives free).
    let (shape, (values, indices)) = unsafe {
        (
            read_u64s(a.shape, a.rank, "parts->shape")?,
            coo_buffers(a.values, a.values_bytes, a.indices, a.indices_bytes)?,
        )
    };
    let shard = match shard {
        None => None,
        // SAFETY: rank readable values at each, per the contract.
        Some((parent, offset)) => Some(unsafe {
            crate::shard::ShardBox {
                parent_shape: try_copy(
                    read_u64s(parent, a.rank, "options->shard_parent_shape")?.as_slice(),
                    "the shard box",
                )?,
                offset: try_copy(
                    read_u64s(offset, a.rank, "options->shard_offset")?.as_slice(),
                    "the shard box",
                )?,
            }
        }),
    };
    if let Some(b) = &shard {
        b.check(shape.as_slice())?;
    }
    let parts = CooParts {
        type_tag: a.type_tag,
        shape: shape.as_slice(),
        nnz: a.nnz,
        is_sorted: a.is_sorted,
        values,
        indices,
    };
    // SAFETY: `out` was checked non-null by begin_create.
    unsafe { build_handle(parts, (opts, one_based), release, None, shard, out) }
}

/// The first steps of every call that creates a handle: `*out` is set to
/// NULL (so it is NULL on any failure that follows), then the flags are
/// checked.
///
/// # Safety
/// `out` is NULL (an error) or writable.
pub(super) unsafe fn begin_create(
    out: *mut *mut hurray_coo,
    flags: u32,
) -> Result<(Options, bool), CooError> {
    // SAFETY: NULL-checked by write_req; writable per this function's contract.
    unsafe { write_req(out, std::ptr::null_mut(), "out")? };
    check_flags(flags)
}

/// The create flags as core options; unknown bits are refused.
/// The core's options, and whether messages count from 1.
pub(super) fn check_flags(flags: u32) -> Result<(Options, bool), CooError> {
    CREATE_FLAGS.check(flags)?;
    let opts = Options {
        copy: flags & HURRAY_COO_COPY != 0,
        permissive: flags & HURRAY_COO_PERMISSIVE != 0,
        index: flags & HURRAY_COO_INDEX != 0,
        index_values: flags & HURRAY_COO_INDEX_VALUES != 0,
        threads: 1,
    };
    Ok((opts, flags & HURRAY_COO_ONE_BASED_MESSAGES != 0))
}

/// Build the tensor and its handle and store it in `*out`. The release
/// guard is kept by a borrowed handle and dropped (so called) otherwise.
///
/// # Safety
/// `out` is non-null and writable.
pub(super) unsafe fn build_handle(
    parts: CooParts<'_, 'static>,
    (opts, one_based): (Options, bool),
    release: Option<Release>,
    desc: Option<crate::io::descriptor::Descriptor>,
    shard: Option<crate::shard::ShardBox>,
    out: *mut *mut hurray_coo,
) -> Result<(), CooError> {
    let mut coo = Coo::new(parts, opts).map_err(|e| e.one_based(one_based))?;
    if let Some(b) = shard.or_else(|| desc.as_ref().and_then(|d| d.shard.clone())) {
        coo = coo.with_shard(b)?;
    }
    let release = if opts.copy { None } else { release };
    let h = hurray_coo {
        coo,
        desc,
        one_based,
        _release: release,
        _file: None,
        probe: Default::default(),
    }
    .boxed()?;
    // SAFETY: per this function's contract.
    unsafe { write_opt(out, h) };
    Ok(())
}

/// Box a tensor the library built (assembly, conversion, a file) as a
/// library-owned handle and store it in `*out`.
///
/// # Safety
/// `out` is non-null and writable.
pub(super) unsafe fn hand_out(
    coo: Coo<'static>,
    one_based: bool,
    out: *mut *mut hurray_coo,
) -> Result<(), CooError> {
    let h = hurray_coo {
        coo,
        desc: None,
        one_based,
        _release: None,
        _file: None,
        probe: Default::default(),
    }
    .boxed()?;
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
        // SAFETY: NULL or a live handle, freed once, per the contract.
        unsafe { free_handle(coo) }
    })
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

/// The HURRAY_COO_COPY, HURRAY_COO_PERMISSIVE and
/// HURRAY_COO_ONE_BASED_MESSAGES flags the handle was created with, and
/// HURRAY_COO_INDEX when it holds a lookup index, and also
/// HURRAY_COO_INDEX_VALUES when that index keeps the values (0 for a
/// borrowed, fully validated handle without one, and when coo is NULL).
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
            let index = match (h.coo.has_index(), h.coo.index_has_values()) {
                (true, true) => HURRAY_COO_INDEX | HURRAY_COO_INDEX_VALUES,
                (true, false) => HURRAY_COO_INDEX,
                _ => 0,
            };
            let one = if h.one_based {
                HURRAY_COO_ONE_BASED_MESSAGES
            } else {
                0
            };
            copy | lax | index | one
        })
    })
}

/// Bytes of the lookup index the handle holds (HURRAY_COO_INDEX): on a
/// sorted tensor validated at create, about 4 to 6 bytes per entry, at most
/// 8 per entry plus 8 bytes (12 per entry beyond 2^32 entries); otherwise about 13, at most 16 per entry plus
/// 256 (about 32 with HURRAY_COO_INDEX_VALUES). 0 without an index, and
/// when coo is NULL. The search directory a sorted handle without an index
/// builds on its first lookup (see hurray_coo_lookup) is not counted.
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
/// when the buffer is empty (nnz 0; *out_bytes = 0) and when coo is NULL
/// (*out_bytes = 0): a non-NULL result always points at *out_bytes > 0
/// readable bytes, 64-byte aligned.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_values(
    coo: *const hurray_coo,
    out_bytes: *mut usize,
) -> *const c_void {
    // SAFETY: `coo` is NULL or live; out_bytes NULL or writable.
    unsafe { buffer_of(coo, out_bytes, |c| c.values()) }
}

/// The indices buffer (nnz * rank uint64), as hurray_coo_values: NULL when
/// empty or when coo is NULL, else 64-byte aligned.
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
            // An empty slice's pointer is dangling (not the caller's, and
            // possibly misaligned): never hand it out.
            match b.is_empty() {
                true => (std::ptr::null(), 0),
                false => (b.as_ptr().cast::<c_void>(), b.len()),
            }
        })
    });
    // SAFETY: per this function's contract.
    unsafe { write_opt(out_bytes, len) };
    ptr
}
