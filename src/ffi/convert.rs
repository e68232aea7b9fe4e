//! CSR, CSC and dense export into caller memory, and CSR/CSC import.

use std::ffi::c_void;

use super::assemble::{
    hurray_assemble_options, hurray_assembly_plan, hurray_triplets, index_base, index_type,
    with_triplets,
};
use super::choose;
use super::guard::box_handle;
use super::guard::{
    apart, array, array_mut, bytes, guard, handle, read_struct, span, write_opt, write_req, Span,
};
use super::handle::hand_out;
use super::{hurray_coo, hurray_status};
use crate::assemble::{CoordArrays, IndexType, Triplets};
use crate::convert::{self, assemble_compressed, CompressedOut, Format};
use crate::error::CooError;

/// Compressed format: CSR (rows compressed; offsets has rows + 1 entries,
/// indices holds column indices).
pub const HURRAY_FORMAT_CSR: u32 = 1;
/// Compressed format: CSC (columns compressed; offsets has columns + 1
/// entries, indices holds row indices).
pub const HURRAY_FORMAT_CSC: u32 = 2;

pub(super) fn format(code: u32) -> Result<Format, CooError> {
    choose!("format", code, {
        HURRAY_FORMAT_CSR => Format::Csr,
        HURRAY_FORMAT_CSC => Format::Csc,
    })
}

/// A matrix as CSR or CSC arrays in the consumer's own format: what
/// hurray_coo_compressed_size sizes, hurray_coo_export_compressed writes
/// and hurray_coo_from_compressed reads. The arrays are the caller's.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hurray_compressed {
    /// HURRAY_FORMAT_CSR or HURRAY_FORMAT_CSC.
    pub format: u32,
    /// HURRAY_INDEX_* of offsets and indices.
    pub index_type: u32,
    /// 0, or 1 for Julia's SparseMatrixCSC and Fortran codes: where offsets
    /// and indices count from.
    pub base: u32,
    /// (rows or columns) + 1 offsets.
    pub offsets: *mut c_void,
    pub offsets_bytes: usize,
    /// nnz indices: columns (CSR) or rows (CSC).
    pub indices: *mut c_void,
    pub indices_bytes: usize,
    /// nnz values of the matrix's element type.
    pub values: *mut c_void,
    pub values_bytes: usize,
}

/// The format, index type and base of `c`, checked.
fn compressed_kind(c: &hurray_compressed) -> Result<(Format, IndexType, u8), CooError> {
    Ok((
        format(c.format)?,
        index_type(c.index_type)?,
        index_base(c.base)?,
    ))
}

/// c's three arrays as byte slices, after checking that no two non-empty
/// ones share memory (they are written at the same time) and that none
/// shares memory with an array `read` during the same call.
///
/// # Safety
/// Each of c's arrays NULL with 0 bytes or writable for its byte count.
unsafe fn compressed_arrays<'a>(
    k: &hurray_compressed,
    read: &[Span],
) -> Result<[&'a mut [u8]; 3], CooError> {
    apart(
        read,
        &[
            ("c->offsets", k.offsets.cast_const().cast(), k.offsets_bytes),
            ("c->indices", k.indices.cast_const().cast(), k.indices_bytes),
            ("c->values", k.values.cast_const().cast(), k.values_bytes),
        ],
    )?;
    // SAFETY: each writable for its byte count (the caller's contract), and
    // no two overlap (checked above), so the three slices are exclusive.
    unsafe {
        Ok([
            array_mut::<u8>(k.offsets.cast(), k.offsets_bytes, "c->offsets")?,
            array_mut::<u8>(k.indices.cast(), k.indices_bytes, "c->indices")?,
            array_mut::<u8>(k.values.cast(), k.values_bytes, "c->values")?,
        ])
    }
}

/// `Err` naming the first of the triplets' arrays that shares memory with
/// one of the arrays an assembly writes: the triplets are read while the
/// result (and, with HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT, the work) is
/// written. Checked before either is touched.
fn inputs_apart(t: &Triplets<'_>, out: &CompressedOut<'_>) -> Result<(), CooError> {
    let mut read = Vec::new();
    match t.coords {
        CoordArrays::Interleaved(s) => read.push(span("triplets->indices", s)),
        CoordArrays::PerDim(arrays) => {
            const NAMES: [&str; 2] = ["triplets->dim_indices[0]", "triplets->dim_indices[1]"];
            for (d, s) in arrays.iter().enumerate() {
                read.push(span(NAMES.get(d).unwrap_or(&"triplets->dim_indices[d]"), s));
            }
        }
    }
    if let Some(v) = t.values {
        read.push(span("triplets->values", v));
    }
    // The outputs among themselves were checked when they were taken.
    let written = [
        span("c->offsets", out.offsets),
        span("c->indices", out.indices),
        span("c->values", out.values),
    ];
    apart(&read, &written)
}

/// The caller's CSR or CSC arrays of `c`, checked, for a result written
/// into them.
///
/// # Safety
/// `c` is NULL or a hurray_compressed whose three arrays are each NULL
/// with 0 bytes or writable for their byte counts, and not otherwise used,
/// during `'a`.
pub(super) unsafe fn compressed_out<'a>(
    c: *const hurray_compressed,
) -> Result<CompressedOut<'a>, CooError> {
    // SAFETY: NULL or a caller's struct, per the contract.
    let k = unsafe { read_struct(c, "c") }?;
    let (format, index_type, base) = compressed_kind(&k)?;
    // SAFETY: each writable for its byte count, per the contract.
    let [offsets, indices, values] = unsafe { compressed_arrays(&k, &[]) }?;
    Ok(CompressedOut {
        format,
        index_type,
        base,
        offsets,
        indices,
        values,
    })
}

/// Set c->offsets_bytes, c->indices_bytes and c->values_bytes (c not NULL)
/// to the sizes a CSR or CSC export of coo (rank 2) needs in c->format and
/// c->index_type: (rows or columns) + 1 offsets, nnz indices, nnz values of
/// the handle's type. Nothing else of *c is read or written.
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER (coo, c),
/// HURRAY_ERR_INVALID_ARGUMENT (format, index type), HURRAY_ERR_UNSUPPORTED_FEATURE
/// (rank other than 2), HURRAY_ERR_UNSUPPORTED_TYPE (a tag accepted only in
/// permissive mode), HURRAY_ERR_OVERFLOW, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a handle shared between threads.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_compressed_size(
    coo: *const hurray_coo,
    c: *mut hurray_compressed,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or live / a caller's struct, per the contract.
        let (h, mut k) = unsafe { (handle(coo)?, read_struct(c.cast_const(), "c")?) };
        let s = convert::compressed_sizes(&h.coo, format(k.format)?, index_type(k.index_type)?)?;
        let usz = |v: u64| crate::element::size::to_usize(v, "an export size");
        (k.offsets_bytes, k.indices_bytes, k.values_bytes) =
            (usz(s.offsets)?, usz(s.indices)?, usz(s.values)?);
        // SAFETY: non-NULL (read above) and writable, per the contract.
        unsafe { write_opt(c, k) };
        Ok(())
    })
}

/// Export coo (rank 2) as CSR or CSC into the caller's three arrays of c
/// (not NULL), in the consumer's own format: offsets and indices as
/// c->index_type, counted from c->base, values in the handle's type.
/// Within each row (CSR) or column (CSC) the indices increase, whatever the
/// handle's order. Each array must have exactly the size
/// hurray_coo_compressed_size reports (an empty array may be NULL); they are
/// written during the call only and owned by the caller, so a solver adopts
/// them without another copy (PETSc MatCreateSeqAIJWithArrays, GraphBLAS
/// GxB_Matrix_import_CSR, Eigen Map<SparseMatrix>, MKL mkl_sparse_?_create_csr;
/// see the README). A value that does not fit a 32-bit index type (the last
/// offset, nnz + base, or the largest index) is HURRAY_ERR_OVERFLOW, never a
/// wrap. A permissive handle is validated first. threads: as every threads
/// argument (HURRAY_MAX_THREADS); the indices and values split, one thread
/// per 65,536 entries at most, one for sub-byte types; the result is the
/// same.
///
/// Returns HURRAY_OK or: the statuses of hurray_coo_compressed_size,
/// HURRAY_ERR_INVALID_ARGUMENT (base; two of c's non-empty arrays
/// sharing memory, or one sharing memory with the handle's indices or
/// values, as when exporting into the buffers a borrowed handle reads),
/// HURRAY_ERR_BUFFER_SIZE, HURRAY_ERR_ALLOC (memory), any status of
/// hurray_coo_validate (permissive handles).
/// Thread safety: safe on a handle shared between threads.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_export_compressed(
    coo: *const hurray_coo,
    c: *const hurray_compressed,
    threads: u32,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or live / a caller's struct, per the contract.
        let (h, k) = unsafe { (handle(coo)?, read_struct(c, "c")?) };
        let (f, it, b) = compressed_kind(&k)?;
        // SAFETY: each writable for its byte count, per the contract; none
        // shares memory with the handle's arrays (checked there).
        let [o, i, v] = unsafe { compressed_arrays(&k, &h.spans()) }?;
        convert::export_compressed(&h.coo, f, it, b, o, i, v, threads as usize)
            .map_err(|e| h.err(e))
    })
}

/// Bytes of coo as a dense row-major array of its type (sub-byte types
/// packed as the format packs them), into *out_bytes (not NULL). A shape
/// whose size does not fit is HURRAY_ERR_OVERFLOW: compare *out_bytes with
/// your own limit before allocating.
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_OVERFLOW,
/// HURRAY_ERR_UNSUPPORTED_TYPE, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a handle shared between threads.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_dense_size(
    coo: *const hurray_coo,
    out_bytes: *mut usize,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        let n = crate::element::size::to_usize(convert::dense_bytes(&h.coo)?, "a dense array")?;
        // SAFETY: NULL-checked by write_req.
        unsafe { write_req(out_bytes, n, "out_bytes") }
    })
}

/// Write coo as a dense row-major array into out (exactly the
/// hurray_coo_dense_size bytes, caller-owned, written during the call);
/// absent elements are zero bytes. A permissive handle is validated first.
/// threads: as every threads argument (HURRAY_MAX_THREADS); a validated
/// sorted handle of a whole-byte type splits into stretches of the output
/// of at least a MiB each; other handles use the calling thread.
///
/// Returns HURRAY_OK or: the statuses of hurray_coo_dense_size,
/// HURRAY_ERR_BUFFER_SIZE, HURRAY_ERR_INVALID_ARGUMENT (out sharing memory
/// with the handle's indices or values), any status of
/// hurray_coo_validate.
/// Thread safety: safe on a handle shared between threads.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_export_dense(
    coo: *const hurray_coo,
    out: *mut c_void,
    out_bytes: usize,
    threads: u32,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        apart(&h.spans(), &[("out", out.cast_const().cast(), out_bytes)])?;
        // SAFETY: writable for out_bytes, per the contract, and apart from
        // the handle's arrays (checked above).
        let o = unsafe { array_mut::<u8>(out.cast(), out_bytes, "out") }?;
        convert::export_dense(&h.coo, o, threads as usize).map_err(|e| h.err(e))
    })
}

/// A new, library-owned, canonical handle (sorted, validated) from the CSR
/// or CSC arrays of c (not NULL; read during the call only, never
/// written): shape rows x cols, c->offsets ((rows or cols) + 1 of
/// c->index_type), c->indices (nnz of c->index_type), both counted from
/// c->base, and nnz values of type_tag. The offsets are checked (first
/// equal to base, never decreasing, none past nnz + base, last equal to
/// nnz + base); every index must be in range and appear once per row (CSR)
/// or column (CSC), in any order. threads: as for hurray_coo_assemble,
/// which does the checking and ordering. *out (not NULL) receives the
/// handle, NULL on failure; release it with hurray_coo_free.
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_ARGUMENT
/// (format, index type, base), HURRAY_ERR_INVALID_OFFSETS (offsets, naming
/// the row or column),
/// HURRAY_ERR_INVALID_SHAPE, HURRAY_ERR_INVALID_TYPE, HURRAY_ERR_BUFFER_SIZE,
/// HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_ERR_DUPLICATE, HURRAY_ERR_OVERFLOW,
/// HURRAY_ERR_ALLOC, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_from_compressed(
    rows: u64,
    cols: u64,
    c: *const hurray_compressed,
    type_tag: u8,
    threads: u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL-checked by write_req; writable per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        // SAFETY: NULL or a caller's struct, per the contract.
        let k = unsafe { read_struct(c, "c") }?;
        let (f, it, b) = compressed_kind(&k)?;
        // SAFETY: each readable for its byte count, per the contract.
        let (o, i, v) = unsafe {
            (
                bytes(k.offsets.cast_const(), k.offsets_bytes, "c->offsets")?,
                bytes(k.indices.cast_const(), k.indices_bytes, "c->indices")?,
                bytes(k.values.cast_const(), k.values_bytes, "c->values")?,
            )
        };
        let coo =
            convert::from_compressed(f, [rows, cols], it, b, o, i, type_tag, v, threads as usize)?;
        // SAFETY: checked non-null above.
        unsafe { hand_out(coo, b == 1, out) }
    })
}

/// A new, library-owned copy of coo whose entries are sorted by the mode
/// order modes (rank dimension numbers, a permutation of 0..rank-1, read
/// during the call): lexicographic order of the coordinates taken in that
/// order, as SPLATT and TACO order a tensor for a mode. Coordinates stay in
/// dimension order; is_sorted is set only for the identity order (the one
/// the format's flag means). A permissive handle is validated first.
/// threads: as every threads argument (HURRAY_MAX_THREADS); the sort
/// splits into at most 16 runs of at least 65536 entries, merged; the
/// result is the same. *out (not NULL) receives the
/// handle, NULL on failure.
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_RANK_MISMATCH,
/// HURRAY_ERR_INVALID_ARGUMENT (not a permutation), HURRAY_ERR_UNSUPPORTED_TYPE,
/// HURRAY_ERR_ALLOC, any status of hurray_coo_validate,
/// HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a handle shared between threads.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_sort_modes(
    coo: *const hurray_coo,
    modes: *const u32,
    rank: u32,
    threads: u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL-checked by write_req; writable per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        // SAFETY: NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        if rank != h.coo.rank() {
            return Err(CooError::RankMismatch {
                got: rank,
                expected: h.coo.rank(),
            });
        }
        // SAFETY: rank readable u32s at modes, per the contract.
        let m = unsafe { array(modes, rank as usize, "modes") }?;
        let sorted = convert::sort_by_modes(&h.coo, m, threads as usize).map_err(|e| h.err(e))?;
        // SAFETY: checked non-null above.
        unsafe { hand_out(sorted, h.one_based, out) }
    })
}

/// Assemble triplets straight into the caller's CSR or CSC arrays (Eigen's
/// setFromTriplets, scipy's coo_matrix(...).tocsr()): the same triplets,
/// options, checks, errors and result as hurray_coo_assemble followed by
/// hurray_coo_export_compressed, without the canonical handle in between
/// (no 16 bytes of coordinates per entry written and read again).
///
/// triplets (not NULL) and options (may be NULL): as hurray_coo_assemble;
/// the triplets are rank 2. c (not NULL, read during the call): format,
/// index_type and base as hurray_coo_export_compressed has them; offsets
/// exactly (rows or columns) + 1 of c->index_type; indices and values with
/// room for at least the result's entries: as many as there are triplets
/// always suffice (indices: triplets x the index width; values:
/// hurray_type_values_bytes of the triplet count), and untouched memory
/// past the result is never written, so an over-sized malloc costs no
/// more than the pages used (unless options->flags has
/// HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT, which lets the call work in that
/// room). For a pattern (HURRAY_PATTERN) values may be
/// NULL with 0 bytes: then none are written (every entry is true).
/// The arrays are the caller's, written during the call only; on failure
/// their contents are unspecified.
///
/// out_nnz (not NULL): receives the number of entries (offsets[last] -
/// base); 0 on failure. out_plan (may be NULL): receives a plan whose
/// output order is c's values order (CSR and CSC alike), for
/// hurray_assembly_plan_apply straight into c->values; NULL on failure.
/// Without a plan, float32/float64 SUM, FIRST, LAST and ERROR run on row
/// (CSR) or column (CSC) buckets that write c directly, using about 8 to 12
/// bytes per triplet of scratch while they run (none with
/// HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT, when it applies); other cases
/// assemble the canonical tensor and export it.
///
/// Returns HURRAY_OK or: any status of hurray_coo_assemble,
/// HURRAY_ERR_UNSUPPORTED_FEATURE (rank other than 2),
/// HURRAY_ERR_INVALID_ARGUMENT (format, index type, base; two of c's
/// non-empty arrays sharing memory, or one of them sharing memory with
/// one of the triplets' arrays),
/// HURRAY_ERR_BUFFER_SIZE (offsets not exactly (rows or columns) + 1),
/// HURRAY_ERR_BUFFER_TOO_SMALL (indices or values without room for the
/// result; the message gives the entry count and the bytes needed),
/// HURRAY_ERR_OVERFLOW (the largest index, or nnz + base, does not fit
/// c->index_type).
///
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_assemble_compressed(
    triplets: *const hurray_triplets,
    options: *const hurray_assemble_options,
    c: *const hurray_compressed,
    out_nnz: *mut u64,
    out_plan: *mut *mut hurray_assembly_plan,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or writable per the contract.
        unsafe { write_opt(out_plan, std::ptr::null_mut()) };
        // SAFETY: NULL-checked by write_req; writable per the contract.
        unsafe { write_req(out_nnz, 0, "out_nnz")? };
        // SAFETY: NULL or a caller's struct whose arrays are writable, per
        // the contract.
        let out = unsafe { compressed_out(c) }?;
        // SAFETY: as the contract has them.
        let (nnz, plan) = unsafe {
            with_triplets(
                "hurray_assemble_compressed",
                triplets,
                options,
                out_plan.is_null(),
                |t, o| {
                    inputs_apart(t, &out)?;
                    assemble_compressed(t, o, out)
                },
            )
        }?;
        if let Some(plan) = plan {
            let p = box_handle(hurray_assembly_plan { plan })?;
            // SAFETY: non-null (a plan is built only when out_plan is
            // given) and writable per the contract.
            unsafe { write_opt(out_plan, p) };
        }
        // SAFETY: checked non-null above.
        unsafe { write_opt(out_nnz, nnz) };
        Ok(())
    })
}
