//! Assembly from triplets, and re-assembly through a plan.

use std::ffi::c_void;

use super::choose;
use super::guard::{
    apart, array_mut, box_handle, bytes, free_handle, guard, guard_value, live, read_ptrs,
    read_sized, read_struct, read_u64s, write_opt, write_req,
};
use super::{hurray_coo, hurray_status};
use crate::assemble::{
    assemble, AssembleOptions, CoordArrays, Duplicates, IndexType, Plan, Triplets,
};
use crate::coo::check_rank;
use crate::element::size;
use crate::error::CooError;

/// Index type of coordinates and offsets: 32-bit signed integers.
pub const HURRAY_INDEX_INT32: u32 = 1;
/// Index type: 64-bit signed integers.
pub const HURRAY_INDEX_INT64: u32 = 2;
/// Index type: 32-bit unsigned integers.
pub const HURRAY_INDEX_UINT32: u32 = 3;
/// Index type: 64-bit unsigned integers (the format's own).
pub const HURRAY_INDEX_UINT64: u32 = 4;

/// Duplicate policy: refuse triplets with equal coordinates, naming both
/// (in the caller's base). The default.
pub const HURRAY_DUP_ERROR: u32 = 0;
/// Duplicate policy: add the values, in triplet order, in the type's own
/// arithmetic (float16/bfloat16 rounded once per addition; an integer sum
/// that does not fit the type is HURRAY_ERR_OVERFLOW). A float sum with a
/// NaN addend has defined bits, the same on every path and in every
/// re-assembly: the first NaN addend in triplet order, quieted (its sign
/// and payload kept); infinities of opposite signs give the processor's
/// default NaN. Refused
/// (HURRAY_ERR_UNSUPPORTED_TYPE) for sub-byte, float8, float128 and bool
/// values unless HURRAY_ASSEMBLE_ROUNDED_SUM asks for it.
pub const HURRAY_DUP_SUM: u32 = 1;
/// Duplicate policy: keep the first (lowest-numbered) triplet's value.
pub const HURRAY_DUP_FIRST: u32 = 2;
/// Duplicate policy: keep the last triplet's value.
pub const HURRAY_DUP_LAST: u32 = 3;
/// Duplicate policy: keep the smallest value (NaN loses to any number);
/// refused for complex values.
pub const HURRAY_DUP_MIN: u32 = 4;
/// Duplicate policy: keep the largest value (NaN loses to any number);
/// refused for complex values.
pub const HURRAY_DUP_MAX: u32 = 5;

/// Assembly flag: skip triplets with a negative coordinate (PETSc's "skip
/// this contribution"); without it a negative coordinate is an error.
pub const HURRAY_ASSEMBLE_SKIP_NEGATIVE: u32 = 1;
/// Assembly flag: leave out entries whose combined value is zero (either
/// sign). A plan keeps the pattern of this first assembly.
pub const HURRAY_ASSEMBLE_DROP_ZEROS: u32 = 2;
/// Assembly flag: allow HURRAY_DUP_SUM for the types whose sum is refused
/// by default: float8, float6, float4 and float128 values are added in
/// double and rounded to nearest-even in the type (saturating to the
/// largest value where the type has no infinity), float8_e8m0 to the
/// nearest power of two, bool as OR, sub-byte integers exactly (an overflow
/// is still HURRAY_ERR_OVERFLOW).
pub const HURRAY_ASSEMBLE_ROUNDED_SUM: u32 = 4;
/// Assembly flag, for hurray_assemble_compressed and
/// hurray_read_mtx_compressed only (the calls without caller arrays refuse
/// it: HURRAY_ERR_INVALID_FLAGS): the room in
/// c->indices and c->values past the result may serve as the assembly's
/// work space, so that the call takes no scratch memory of its own for the
/// rows (about 12 bytes per triplet otherwise). Their bytes past the
/// result are then unspecified after the call (without the flag they are
/// never written). It applies when the arrays have room for every triplet
/// kept (as many as there are triplets always do), values are written
/// (not a pattern's), no plan is asked for, the type and policy are the
/// buckets' (see hurray_assemble_compressed), and the triplets come with
/// locality (seven in eight near the row before, as element by element);
/// otherwise the call runs as without it. Scattered triplets keep the
/// library's scratch, in huge pages, which their random writes need.
/// Meant for a solver that assembles into the same arrays every step: no
/// fresh scratch page to clear, and none held between calls.
pub const HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT: u32 = 8;

/// The type_tag of triplets without values (a sparsity pattern): the
/// result is a bool tensor whose every stored entry is true.
pub const HURRAY_PATTERN: u8 = 0;

/// Triplets as a solver holds them. Every pointer is read during the call
/// only. Exactly one of indices and dim_indices is non-NULL (both may be
/// NULL when n is 0). Every array comes with its length in bytes, checked
/// against n, rank and the index type before anything is read.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hurray_triplets {
    /// Rank, 1..=64.
    pub rank: u32,
    /// rank extents (never UINT64_MAX), 0-based as the format has them.
    pub shape: *const u64,
    /// Number of triplets.
    pub n: u64,
    /// HURRAY_INDEX_INT32, _INT64, _UINT32 or _UINT64.
    pub index_type: u32,
    /// 0, or 1 for 1-based coordinates (Fortran, Julia, Matrix Market).
    pub index_base: u32,
    /// Interleaved coordinates: n * rank integers, triplet i dimension d at
    /// indices[i * rank + d] (the Hurray layout). Or NULL.
    pub indices: *const c_void,
    /// Bytes of indices: n * rank * the index type's width (0 when NULL).
    pub indices_bytes: usize,
    /// One array of n integers per dimension (I, J, ... of Fortran and
    /// Julia): rank pointers. Or NULL.
    pub dim_indices: *const *const c_void,
    /// Bytes of each of the rank arrays: n * the index type's width (0
    /// when dim_indices is NULL).
    pub dim_indices_bytes: usize,
    /// Element type of the values, or HURRAY_PATTERN for none.
    pub type_tag: u8,
    /// n values packed as the type packs them (NULL for a pattern).
    pub values: *const c_void,
    /// Bytes of values: exactly what n elements of the type need (0 for a
    /// pattern: values given with HURRAY_PATTERN are refused with
    /// HURRAY_ERR_BUFFER_SIZE, never dropped).
    pub values_bytes: usize,
}

/// A re-assembly plan: maps every triplet of an assembly to its canonical
/// entry. Immutable; may be used from many threads at once.
pub struct hurray_assembly_plan {
    pub(super) plan: Plan,
}

/// The index type of a `HURRAY_INDEX_*` code.
pub(super) fn index_type(code: u32) -> Result<IndexType, CooError> {
    choose!("index type", code, {
        HURRAY_INDEX_INT32 => IndexType::I32,
        HURRAY_INDEX_INT64 => IndexType::I64,
        HURRAY_INDEX_UINT32 => IndexType::U32,
        HURRAY_INDEX_UINT64 => IndexType::U64,
    })
}

/// The index base, 0 or 1.
pub(super) fn index_base(base: u32) -> Result<u8, CooError> {
    CooError::check_base(base)
}

pub(super) fn duplicates(code: u32) -> Result<Duplicates, CooError> {
    choose!("duplicate policy", code, {
        HURRAY_DUP_ERROR => Duplicates::Error,
        HURRAY_DUP_SUM => Duplicates::Sum,
        HURRAY_DUP_FIRST => Duplicates::First,
        HURRAY_DUP_LAST => Duplicates::Last,
        HURRAY_DUP_MIN => Duplicates::Min,
        HURRAY_DUP_MAX => Duplicates::Max,
    })
}

/// How hurray_coo_assemble combines and filters. Set size to
/// sizeof(hurray_assemble_options) and the rest to 0 for the defaults
/// (HURRAY_DUP_ERROR, no flags, the calling thread); NULL options are the
/// defaults. The struct may grow at its end.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hurray_assemble_options {
    /// sizeof(hurray_assemble_options), as the caller's header has it.
    pub size: usize,
    /// HURRAY_DUP_* for triplets with the same coordinates.
    pub duplicates_policy: u32,
    /// 0 or any of HURRAY_ASSEMBLE_SKIP_NEGATIVE, HURRAY_ASSEMBLE_DROP_ZEROS
    /// and HURRAY_ASSEMBLE_ROUNDED_SUM; for hurray_assemble_compressed also
    /// HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT.
    pub flags: u32,
    /// As every threads argument (HURRAY_MAX_THREADS); the checks and the
    /// sort split, at least 65536 triplets per thread; the result is the
    /// same on any number.
    pub threads: u32,
}

/// Read the caller's triplets and options (the checks both assembly
/// entries make, in the same order) and run `job` on them.
///
/// # Safety
/// `triplets` and `options` as hurray_coo_assemble's contract has them.
pub(super) unsafe fn with_triplets<R>(
    who: &'static str,
    triplets: *const hurray_triplets,
    options: *const hurray_assemble_options,
    skip_plan: bool,
    job: impl FnOnce(&Triplets<'_>, &AssembleOptions) -> Result<R, CooError>,
) -> Result<R, CooError> {
    // SAFETY: NULL or a hurray_assemble_options of its declared size.
    let o = unsafe { read_sized(options, "options", "hurray_assemble_options") }?;
    let (duplicates_policy, flags, threads) = o.map_or((HURRAY_DUP_ERROR, 0, 1), |o| {
        (o.duplicates_policy, o.flags, o.threads)
    });
    const ALL: [(&str, u32); 4] = [
        (
            "HURRAY_ASSEMBLE_SKIP_NEGATIVE",
            HURRAY_ASSEMBLE_SKIP_NEGATIVE,
        ),
        ("HURRAY_ASSEMBLE_DROP_ZEROS", HURRAY_ASSEMBLE_DROP_ZEROS),
        ("HURRAY_ASSEMBLE_ROUNDED_SUM", HURRAY_ASSEMBLE_ROUNDED_SUM),
        (
            "HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT",
            HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT,
        ),
    ];
    // Work space in the output needs output arrays of the caller's.
    let takes = match who {
        "hurray_assemble_compressed" => &ALL[..],
        _ => &ALL[..3],
    };
    super::FlagSet::new(who, takes).check(flags)?;
    let opts = AssembleOptions {
        duplicates: duplicates(duplicates_policy)?,
        skip_negative: flags & HURRAY_ASSEMBLE_SKIP_NEGATIVE != 0,
        drop_zeros: flags & HURRAY_ASSEMBLE_DROP_ZEROS != 0,
        threads: threads as usize,
        skip_plan,
        rounded_sum: flags & HURRAY_ASSEMBLE_ROUNDED_SUM != 0,
        scratch_in_output: flags & HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT != 0,
    };
    // SAFETY: NULL or a readable hurray_triplets, per the contract.
    let t = unsafe { read_struct(triplets, "triplets") }?;
    check_rank(t.rank)?;
    // SAFETY: the struct's pointers are valid for what it declares.
    let shape = unsafe { read_u64s(t.shape, t.rank, "triplets->shape") }?;
    let it = index_type(t.index_type)?;
    let base = index_base(t.index_base)?;
    let n = size::to_usize(t.n, "the triplet count")?;
    let rank = t.rank as usize;
    let dims;
    let coords = match (t.indices.is_null(), t.dim_indices.is_null()) {
        (false, true) => {
            // SAFETY: indices_bytes readable bytes at indices, per the
            // contract; the reader checks them against n and rank.
            CoordArrays::Interleaved(unsafe {
                bytes(t.indices, t.indices_bytes, "triplets->indices")
            }?)
        }
        (true, false) => {
            // SAFETY: rank pointers at dim_indices, per the contract.
            let ptrs = unsafe { read_ptrs(t.dim_indices, rank, "triplets->dim_indices") }?;
            let mut arrays: [&[u8]; 64] = [&[]; 64];
            for (d, p) in ptrs[..rank].iter().enumerate() {
                // SAFETY: dim_indices_bytes readable bytes in each array,
                // per the contract; the reader checks them against n.
                arrays[d] = unsafe { bytes(*p, t.dim_indices_bytes, "triplets->dim_indices[d]") }?;
            }
            dims = arrays;
            CoordArrays::PerDim(&dims[..rank])
        }
        (true, true) if n == 0 => CoordArrays::Interleaved(&[]),
        _ => {
            return Err(CooError::NullPointer {
                what: "triplets->indices or triplets->dim_indices",
                hint: ": exactly one of them must be given (not NULL)",
            })
        }
    };
    let values = if t.type_tag == HURRAY_PATTERN {
        // A pattern has no values: values given with it are refused, so a
        // forgotten type_tag (a zero-initialised struct) never drops them.
        if t.values_bytes != 0 {
            return Err(CooError::BufferSize {
                buffer: "triplets->values",
                got: t.values_bytes as u64,
                expected: 0,
                expected_why: "type_tag HURRAY_PATTERN (0: a pattern, no values; give the \
                               values' HURRAY_TYPE_* to assemble them)"
                    .into(),
            });
        }
        None
    } else {
        // SAFETY: values_bytes readable bytes at values, per the contract.
        Some(unsafe { bytes(t.values, t.values_bytes, "triplets->values") }?)
    };
    let triplets = Triplets {
        shape: shape.as_slice(),
        n,
        index_type: it,
        base,
        coords,
        type_tag: t.type_tag,
        values,
    };
    job(&triplets, &opts)
}

/// Assemble triplets into a new, library-owned, canonical handle: sorted,
/// duplicate-free, validated (copies made; the triplets may be freed when
/// this returns).
///
/// triplets (not NULL): see hurray_triplets. options (may be NULL): see
/// hurray_assemble_options. Every coordinate is bounds-checked; an error
/// names the triplet, the dimension and the value as the caller wrote them
/// (1-based in, 1-based out), and a handle assembled from 1-based triplets
/// speaks 1-based in its later messages (as HURRAY_COO_ONE_BASED_MESSAGES).
///
/// out (not NULL): receives the handle, to be released with hurray_coo_free;
/// NULL on failure. out_plan (may be NULL): receives a plan that maps a new
/// values array of the same triplets into the handle's value order
/// (hurray_assembly_plan_apply), to be released with
/// hurray_assembly_plan_free; NULL on failure. Memory: when the triplets
/// come roughly in the entries' order (finite elements in element order,
/// sorted input) the plan holds 4 bytes per triplet (8 from 2^31 - 1
/// triplets); otherwise 4 bytes per contributing triplet (8 beyond 2^32
/// triplets) plus 8 per entry, and, when the triplets' values take 8 MiB
/// or more (and are whole bytes) and come in no order a few streams
/// follow (permuted triplets), 1 byte per triplet more and, from its
/// first re-assembly on, a staging buffer of one value per contributing
/// triplet (re-assembly copies the values there first, grouped by where
/// they go, then gathers each entry from cache). Assembly uses about 24
/// bytes per triplet while it runs, beyond the result.
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS
/// (flags), HURRAY_ERR_INVALID_ARGUMENT (options->size, policy, index type,
/// index base),
/// HURRAY_ERR_INVALID_RANK, HURRAY_ERR_INVALID_SHAPE, HURRAY_ERR_INVALID_TYPE,
/// HURRAY_ERR_RANK_MISMATCH, HURRAY_ERR_BUFFER_SIZE, HURRAY_ERR_OVERFLOW (a
/// size, or an integer SUM), HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
/// HURRAY_ERR_DUPLICATE, HURRAY_ERR_UNSUPPORTED_TYPE (a policy the type
/// cannot do), HURRAY_ERR_ALLOC, HURRAY_ERR_INTERNAL_PANIC.
///
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_assemble(
    triplets: *const hurray_triplets,
    options: *const hurray_assemble_options,
    out: *mut *mut hurray_coo,
    out_plan: *mut *mut hurray_assembly_plan,
) -> hurray_status {
    guard(|| {
        // The plan first: it is NULL on every failure, a NULL out included.
        // SAFETY: NULL or writable per the contract.
        unsafe { write_opt(out_plan, std::ptr::null_mut()) };
        // SAFETY: NULL-checked by write_req; writable per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        // SAFETY: as the contract has them.
        let (coo, plan, base) = unsafe {
            with_triplets(
                "hurray_coo_assemble",
                triplets,
                options,
                out_plan.is_null(),
                |t, o| Ok((assemble(t, o)?, t.base)),
            )
        }
        .map(|((coo, plan), base)| (coo, plan, base))?;
        let h = hurray_coo {
            coo,
            desc: None,
            one_based: base == 1,
            _release: None,
            _file: None,
            probe: Default::default(),
        }
        .boxed()?;
        if let Some(plan) = plan {
            match box_handle(hurray_assembly_plan { plan }) {
                // SAFETY: non-null and writable per the contract.
                Ok(p) => unsafe { write_opt(out_plan, p) },
                Err(e) => {
                    // SAFETY: h came from box_handle just above.
                    unsafe { free_handle(h) };
                    return Err(e);
                }
            }
        }
        // SAFETY: checked non-null above.
        unsafe { write_opt(out, h) };
        Ok(())
    })
}

/// Re-assemble: combine values (one per triplet, in the triplets' order and
/// type, values_bytes of them) into out_values (one per canonical entry, in
/// the handle's order, out_bytes of them, which is the order of
/// hurray_coo_values and of a CSR export), by the plan's duplicate policy
/// and in the same order as the first assembly. No sort, and no
/// allocation but a large plan's staging buffer (see hurray_coo_assemble),
/// at its first call and, since one call at a time uses it, at a call that
/// finds another using it; every byte of out_values is written. threads: as every threads argument
/// (HURRAY_MAX_THREADS); the canonical entries split into contiguous
/// ranges, at least 4096 entries per thread, one thread for sub-byte
/// types; the result is the same. Triplets skipped or dropped at the
/// first assembly contribute nothing. On an error, what out_values holds
/// is unspecified.
///
/// plan, values (unless 0 bytes) and out_values (unless 0 bytes) may not be
/// NULL. The library reads values and writes out_values during the call
/// only; out_values may be a buffer a handle borrows only if no thread reads
/// that handle meanwhile.
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_BUFFER_SIZE,
/// HURRAY_ERR_INVALID_ARGUMENT (out_values sharing memory with values: the
/// plan cannot apply in place), HURRAY_ERR_OVERFLOW (an integer SUM),
/// HURRAY_ERR_UNSUPPORTED_FEATURE (a
/// plan built from a pattern), HURRAY_ERR_ALLOC (a thread could not be
/// started, or no memory for the staging buffer), HURRAY_ERR_INTERNAL_PANIC.
///
/// Thread safety: safe on a plan shared between threads (each call writes
/// only its own out_values).
#[no_mangle]
pub unsafe extern "C" fn hurray_assembly_plan_apply(
    plan: *const hurray_assembly_plan,
    values: *const c_void,
    values_bytes: usize,
    out_values: *mut c_void,
    out_bytes: usize,
    threads: u32,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or a live plan, per the contract.
        let p = unsafe { live(plan, "plan") }?;
        apart(
            &[("values", values.cast(), values_bytes)],
            &[("out_values", out_values.cast_const().cast(), out_bytes)],
        )?;
        // SAFETY: readable and writable for their byte counts, per the
        // contract, and apart (checked above).
        let (input, out) = unsafe {
            (
                bytes(values, values_bytes, "values")?,
                array_mut::<u8>(out_values.cast(), out_bytes, "out_values")?,
            )
        };
        p.plan.apply(input, out, threads as usize)
    })
}

/// Number of triplets the plan was built from (0 when plan is NULL).
/// Thread safety: safe on a shared plan.
#[no_mangle]
pub unsafe extern "C" fn hurray_assembly_plan_triplets(plan: *const hurray_assembly_plan) -> u64 {
    // SAFETY: NULL or a live plan, per the contract.
    guard_value(0, || {
        unsafe { live(plan, "plan") }.map_or(0, |p| p.plan.triplets() as u64)
    })
}

/// Number of canonical entries the plan writes (0 when plan is NULL).
/// Thread safety: safe on a shared plan.
#[no_mangle]
pub unsafe extern "C" fn hurray_assembly_plan_nnz(plan: *const hurray_assembly_plan) -> u64 {
    // SAFETY: NULL or a live plan, per the contract.
    guard_value(0, || {
        unsafe { live(plan, "plan") }.map_or(0, |p| p.plan.nnz() as u64)
    })
}

/// Release a plan. NULL is a no-op. The handle it was built with is
/// independent: either may be freed first.
/// Thread safety: any thread, once per plan, when no other thread uses it.
#[no_mangle]
pub unsafe extern "C" fn hurray_assembly_plan_free(plan: *mut hurray_assembly_plan) {
    // SAFETY: NULL or a live plan from hurray_coo_assemble, freed once.
    guard_value((), || unsafe { free_handle(plan) })
}
