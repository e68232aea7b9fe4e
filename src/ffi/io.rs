//! The C ABI for the wire format: descriptor writer, reader, inspection, and
//! statistics.

use std::ffi::c_void;

use super::flag_set;
use super::guard::{bytes, coo_buffers, guard, handle, write_bytes, write_opt, write_req};
use super::handle::{begin_create, build_handle};
use super::{hurray_coo, hurray_status, HURRAY_COO_PERMISSIVE};
use crate::coo::CooParts;
use crate::element::size::MAX_RANK;
use crate::error::CooError;
use crate::io::descriptor::{self, flags, Descriptor, StatsChoice};
use crate::io::stats::{self, Statistics};

/// Descriptor option: add a statistics section holding nnz and
/// sparsity_ratio only (what the reference implementation writes).
pub const HURRAY_DESCRIPTOR_STATISTICS_COUNTS: u32 = 1;
/// Descriptor option: add a statistics section with everything
/// hurray_coo_statistics computes for the element type.
pub const HURRAY_DESCRIPTOR_STATISTICS_FULL: u32 = 2;

/// Descriptor flags bit: a quantization section is present.
pub const HURRAY_DESCRIPTOR_HAS_QUANTIZATION: u32 = 1;
/// Descriptor flags bit: a shard section is present.
pub const HURRAY_DESCRIPTOR_HAS_SHARD: u32 = 2;
/// Descriptor flags bit: an extension-type section is present.
pub const HURRAY_DESCRIPTOR_HAS_EXTENSION_TYPE: u32 = 4;
/// Descriptor flags bit: a statistics section is present.
pub const HURRAY_DESCRIPTOR_HAS_STATISTICS: u32 = 8;
/// Descriptor flags bit: a composite-member section is present.
pub const HURRAY_DESCRIPTOR_HAS_COMPOSITE_MEMBER: u32 = 16;

/// Statistics mask bit: nnz is valid.
pub const HURRAY_STAT_NNZ: u32 = 1;
/// Statistics mask bit: sparsity_ratio is valid.
pub const HURRAY_STAT_SPARSITY: u32 = 2;
/// Statistics mask bit: value_min, value_max and value_abs_max are valid.
pub const HURRAY_STAT_VALUE_RANGE: u32 = 4;
/// Statistics mask bit: value_mean and value_stddev are valid.
pub const HURRAY_STAT_VALUE_STATS: u32 = 8;
/// Statistics mask bit: nm_n and nm_m are valid.
pub const HURRAY_STAT_NM_SPARSITY: u32 = 16;
/// Statistics mask bit: has_nan and has_inf are valid.
pub const HURRAY_STAT_NAN_INF: u32 = 32;

/// The fields of a Hurray statistics section. A field is meaningful only
/// when its HURRAY_STAT_* bit is set in computed_mask.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hurray_statistics {
    /// HURRAY_STAT_* bits of the valid fields.
    pub computed_mask: u32,
    /// Number of stored entries.
    pub nnz: u64,
    /// 1 - nnz / total_elements (total computed in floating point).
    pub sparsity_ratio: f64,
    /// Smallest element value, implicit zeros included, NaN excluded.
    pub value_min: f64,
    /// Largest element value, implicit zeros included, NaN excluded.
    pub value_max: f64,
    /// max(|value_min|, |value_max|).
    pub value_abs_max: f64,
    /// Mean over all elements (implicit zeros included, NaN excluded).
    pub value_mean: f64,
    /// Population standard deviation over the same elements.
    pub value_stddev: f64,
    /// N of an N:M structured-sparsity pattern.
    pub nm_n: u8,
    /// M of an N:M structured-sparsity pattern.
    pub nm_m: u8,
    /// At least one stored value is NaN.
    pub has_nan: bool,
    /// At least one stored value is infinite.
    pub has_inf: bool,
}

impl From<Statistics> for hurray_statistics {
    fn from(s: Statistics) -> Self {
        hurray_statistics {
            computed_mask: s.computed_mask,
            nnz: s.nnz,
            sparsity_ratio: s.sparsity_ratio,
            value_min: s.value_min,
            value_max: s.value_max,
            value_abs_max: s.value_abs_max,
            value_mean: s.value_mean,
            value_stddev: s.value_stddev,
            nm_n: s.nm_n,
            nm_m: s.nm_m,
            has_nan: s.has_nan,
            has_inf: s.has_inf,
        }
    }
}

/// What a COO descriptor declares, read without any buffer (so a consumer
/// can size its allocations before the data arrives).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hurray_descriptor_info {
    /// Format version of the descriptor.
    pub version_major: u8,
    /// Format minor version (higher minors' trailing bytes are skipped).
    pub version_minor: u8,
    /// descriptor_length: bytes the descriptor occupies.
    pub descriptor_length: u32,
    /// HURRAY_DESCRIPTOR_HAS_* bits.
    pub flags: u32,
    /// Element type tag.
    pub type_tag: u8,
    /// Rank (1..=64).
    pub rank: u32,
    /// Shape; entries at and past rank are 0.
    pub shape: [u64; 64],
    /// Number of stored entries.
    pub nnz: u64,
    /// Entries declared in lexicographic order.
    pub is_sorted: bool,
    /// Declared byte size of buffer 0 (values).
    pub values_bytes: u64,
    /// Declared byte size of buffer 1 (indices).
    pub indices_bytes: u64,
    /// Declared alignment of buffer 0.
    pub values_alignment: u32,
    /// Declared alignment of buffer 1.
    pub indices_alignment: u32,
    /// Byte length of a quantization section that was skipped (permissive
    /// mode), 0 if none.
    pub quantization_bytes: u32,
}

impl From<&Descriptor> for hurray_descriptor_info {
    fn from(d: &Descriptor) -> Self {
        let mut shape = [0u64; MAX_RANK as usize];
        shape[..d.shape.len()].copy_from_slice(&d.shape);
        hurray_descriptor_info {
            version_major: d.version_major,
            version_minor: d.version_minor,
            descriptor_length: d.length,
            flags: d.flags,
            type_tag: d.type_tag,
            rank: d.shape.len() as u32,
            shape,
            nnz: d.nnz,
            is_sorted: d.is_sorted,
            values_bytes: d.buffers[0].byte_size,
            indices_bytes: d.buffers[1].byte_size,
            values_alignment: d.buffers[0].alignment,
            indices_alignment: d.buffers[1].alignment,
            quantization_bytes: d.quantization_len.unwrap_or(0),
        }
    }
}

fn stats_choice(options: u32) -> Result<StatsChoice, CooError> {
    let set = flag_set!("a descriptor's statistics option":
        HURRAY_DESCRIPTOR_STATISTICS_COUNTS,
        HURRAY_DESCRIPTOR_STATISTICS_FULL,
    );
    match set.check(options)? {
        0 => Ok(StatsChoice::None),
        HURRAY_DESCRIPTOR_STATISTICS_COUNTS => Ok(StatsChoice::Counts),
        HURRAY_DESCRIPTOR_STATISTICS_FULL => Ok(StatsChoice::Full),
        both => Err(CooError::InvalidFlags {
            flags: both,
            unknown: both,
            allowed: format!("{}, at most one", set.allowed()),
        }),
    }
}

/// The size in bytes of the descriptor hurray_coo_encode_descriptor writes
/// for coo with these options, written to *out_len.
///
/// options: 0 (no statistics), HURRAY_DESCRIPTOR_STATISTICS_COUNTS or
/// HURRAY_DESCRIPTOR_STATISTICS_FULL (not both).
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER (coo, out_len),
/// HURRAY_ERR_INVALID_FLAGS, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_descriptor_size(
    coo: *const hurray_coo,
    options: u32,
    out_len: *mut usize,
) -> hurray_status {
    guard(|| {
        // SAFETY: `coo` is NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        let len = descriptor::encoded_len_of(&h.coo, stats_choice(options)?);
        // SAFETY: NULL-checked; writable per the contract.
        unsafe { write_req(out_len, len, "out_len") }
    })
}

/// Write coo's Hurray tensor descriptor (format 1.0, layout COO, byte_offset
/// 0, two CPU buffer handles with their exact byte sizes, alignment 64, or 1
/// for an empty buffer, producer-synced, standard memory) into out.
///
/// out: capacity writable bytes (NULL only if capacity is 0). out_written
/// (not NULL) receives the descriptor's length; when capacity is too small
/// it receives the length needed and HURRAY_ERR_BUFFER_TOO_SMALL is returned
/// with nothing written. A handle built with HURRAY_COO_PERMISSIVE is
/// validated first: only valid tensors are described. The caller owns out;
/// the library keeps no reference to it. Use hurray_coo_values and
/// hurray_coo_indices for the two buffers that go with the descriptor.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS,
/// HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_ERR_UNSUPPORTED_TYPE (a tag accepted
/// only in permissive mode), any validation status (permissive handles),
/// HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_encode_descriptor(
    coo: *const hurray_coo,
    options: u32,
    out: *mut u8,
    capacity: usize,
    out_written: *mut usize,
) -> hurray_status {
    guard(|| {
        // SAFETY: `coo` is NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        if out_written.is_null() {
            return Err(CooError::null("out_written"));
        }
        let choice = stats_choice(options)?;
        let need = descriptor::encoded_len_of(&h.coo, choice);
        // SAFETY: NULL-checked above; writable per the contract.
        unsafe { write_opt(out_written, need) };
        if capacity < need {
            return Err(CooError::BufferTooSmall {
                what: "the descriptor output buffer",
                got: capacity,
                needed: need,
                why: String::new(),
            });
        }
        if out.is_null() {
            return Err(CooError::null("out"));
        }
        let mut tmp = [0u8; descriptor::MAX_WRITTEN_LEN];
        let n = descriptor::encode(&h.coo, choice, &mut tmp).map_err(|e| h.err(e))?;
        // SAFETY: out is non-null and writable for capacity >= need == n bytes.
        unsafe { write_bytes(out, &tmp[..n]) };
        Ok(())
    })
}

/// Read a Hurray COO tensor descriptor (bytes, len) and build a handle over
/// the two buffers that go with it, exactly as hurray_coo_create would (same
/// flags, same validation, same ownership: borrowed buffers must stay alive
/// and unchanged until hurray_coo_free).
///
/// The descriptor is checked exactly as hurray_descriptor_inspect checks it
/// (every field, every section, every declared size), then values_bytes and
/// indices_bytes must equal the declared byte sizes. A shard section is kept
/// (hurray_coo_shard), a statistics section too
/// (hurray_coo_descriptor_statistics). HURRAY_COO_PERMISSIVE relaxes only
/// what hurray_coo_create relaxes (data checks, unknown type tags) and skips
/// a quantization section; it never relaxes a wire-format rule. The
/// descriptor bytes are read during the call only. On failure *out is NULL.
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS,
/// HURRAY_ERR_TRUNCATED, HURRAY_ERR_INVALID_MAGIC, HURRAY_ERR_VERSION_MISMATCH,
/// HURRAY_ERR_RESERVED_BITS, HURRAY_ERR_INVALID_LAYOUT, HURRAY_ERR_INVALID_TYPE,
/// HURRAY_ERR_INVALID_RANK, HURRAY_ERR_INVALID_SHAPE (also a shard out of its
/// parent), HURRAY_ERR_INVALID_BUFFER_HANDLE, HURRAY_ERR_UNSUPPORTED_DEVICE,
/// HURRAY_ERR_INVALID_SYNC_MODE, HURRAY_ERR_UNSUPPORTED_FEATURE,
/// HURRAY_ERR_INVALID_STATISTICS, HURRAY_ERR_BUFFER_SIZE, HURRAY_ERR_OVERFLOW,
/// and every status of hurray_coo_create.
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_from_descriptor(
    bytes_ptr: *const u8,
    len: usize,
    values: *const c_void,
    values_bytes: usize,
    indices: *const u64,
    indices_bytes: usize,
    flags: u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    guard(|| {
        // SAFETY: `out` is NULL or writable, per the contract.
        let opts = unsafe { begin_create(out, flags) }?;
        // SAFETY: the caller guarantees len readable bytes at bytes_ptr, and
        // the buffers' validity for their sizes (for the handle's life when
        // borrowed).
        let (desc_bytes, (values, indices)) = unsafe {
            (
                bytes(bytes_ptr.cast(), len, "bytes")?,
                coo_buffers(values, values_bytes, indices, indices_bytes)?,
            )
        };
        let desc = descriptor::parse(desc_bytes, opts.0.permissive)?;
        descriptor::check_declared_sizes(&desc, values_bytes, indices_bytes)?;
        let shape = desc.shape.clone();
        let parts = CooParts {
            type_tag: desc.type_tag,
            shape: &shape,
            nnz: desc.nnz,
            is_sorted: desc.is_sorted,
            values,
            indices,
        };
        // SAFETY: `out` was checked non-null above.
        unsafe { build_handle(parts, opts, None, Some(desc), None, out) }
    })
}

/// Read and check a COO descriptor without its buffers and report what it
/// declares in *out (not NULL), so that a consumer can size its allocations
/// from it alone. The bytes (len of them; NULL only when len is 0) are read
/// during the call only.
///
/// Checked, in wire order: magic; major version 1 (a higher minor version's
/// trailing bytes are skipped); descriptor_length (at least 20, at most len,
/// nothing read past it); reserved flag bits; type tag (HAS_EXTENSION_TYPE
/// set exactly for private tags); layout tag COO (the message names the
/// layout found); rank 1..=64; no dynamic dimension; byte_offset 0;
/// is_sorted 0 or 1; reserved bytes; buffer_count 2; each buffer handle
/// (alignment a power of two, at least 64 when non-empty; CPU device;
/// producer-synced; memory class standard, host-pinned or unified; reserved
/// byte 0) and both handles on the same device with the same memory class;
/// the optional sections (quantization: refused unless permissive; shard:
/// offset + extent within the parent; statistics: reserved bits and bytes,
/// nnz equal to the layout's; extension type: every field constraint of the
/// format; composite member: role 0 or 1, reserved bytes 0); the length
/// (a version 1.0 descriptor ends exactly at descriptor_length). Last, the
/// declared sizes: indices byte_size must be nnz * rank * 8 and values
/// byte_size exactly what nnz elements of the type need (for a private tag,
/// from its extension-type section), so that values_bytes and indices_bytes
/// in *out are safe to allocate. Only for an unknown non-private tag,
/// accepted with HURRAY_COO_PERMISSIVE, is values_bytes reported unchecked
/// (nothing says how wide its elements are).
///
/// flags: 0 or HURRAY_COO_PERMISSIVE (which, as for
/// hurray_coo_from_descriptor, accepts unknown type tags and skips a
/// quantization section); any other bit is HURRAY_ERR_INVALID_FLAGS.
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS,
/// HURRAY_ERR_TRUNCATED, HURRAY_ERR_INVALID_MAGIC, HURRAY_ERR_VERSION_MISMATCH,
/// HURRAY_ERR_RESERVED_BITS, HURRAY_ERR_INVALID_LAYOUT, HURRAY_ERR_INVALID_TYPE
/// (also a malformed extension-type section), HURRAY_ERR_INVALID_RANK,
/// HURRAY_ERR_INVALID_SHAPE (also a shard out of its parent),
/// HURRAY_ERR_INVALID_BUFFER_HANDLE (also buffers on different devices or
/// memory classes), HURRAY_ERR_UNSUPPORTED_DEVICE, HURRAY_ERR_INVALID_SYNC_MODE,
/// HURRAY_ERR_UNSUPPORTED_FEATURE (quantization), HURRAY_ERR_INVALID_STATISTICS,
/// HURRAY_ERR_BUFFER_SIZE (a declared size that contradicts type, nnz and
/// rank), HURRAY_ERR_OVERFLOW (a size that does not fit 64 bits),
/// HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_inspect(
    bytes_ptr: *const u8,
    len: usize,
    flags: u32,
    out: *mut hurray_descriptor_info,
) -> hurray_status {
    guard(|| {
        // Inspection builds no handle: copying and indexing mean nothing here.
        flag_set!("hurray_descriptor_inspect": HURRAY_COO_PERMISSIVE).check(flags)?;
        let permissive = flags & HURRAY_COO_PERMISSIVE != 0;
        if out.is_null() {
            return Err(CooError::null("out"));
        }
        // SAFETY: the caller guarantees len readable bytes at bytes_ptr.
        let desc_bytes = unsafe { bytes(bytes_ptr.cast(), len, "bytes") }?;
        let desc = descriptor::parse(desc_bytes, permissive)?;
        // SAFETY: NULL-checked above; writable per the contract.
        unsafe { write_opt(out, hurray_descriptor_info::from(&desc)) };
        Ok(())
    })
}

/// Compute statistics over all logical elements of coo (stored values and
/// implicit zeros) in one pass over the values, into *out (not NULL):
/// nnz, sparsity_ratio (when the tensor has elements), and for real element
/// types the value range, mean and population standard deviation (stable
/// one-pass algorithm; NaN values excluded and flagged; mean/stddev marked
/// valid only when finite), and has_nan/has_inf. Complex types and tags
/// accepted in permissive mode get nnz and sparsity only. computed_mask says
/// which fields are valid.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_statistics(
    coo: *const hurray_coo,
    out: *mut hurray_statistics,
) -> hurray_status {
    guard(|| {
        // SAFETY: `coo` is NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        let s = stats::compute(&h.coo);
        // SAFETY: NULL-checked by write_req; writable per the contract.
        unsafe { write_req(out, s.into(), "out") }
    })
}

/// The statistics section of the descriptor coo was read from, as it was
/// declared (advisory: only its nnz was checked). *out_present (not NULL)
/// says whether there was one; *out (not NULL) is written only then.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_descriptor_statistics(
    coo: *const hurray_coo,
    out: *mut hurray_statistics,
    out_present: *mut bool,
) -> hurray_status {
    guard(|| {
        // SAFETY: `coo` is NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        if out.is_null() {
            return Err(CooError::null("out"));
        }
        let s = h.desc.as_ref().and_then(|d| d.statistics);
        // SAFETY: NULL-checked (out above, out_present by write_req).
        unsafe {
            write_req(out_present, s.is_some(), "out_present")?;
            if let Some(s) = s {
                write_opt(out, s.into());
            }
        }
        Ok(())
    })
}

/// The shard section of the descriptor coo was read from: pointers to rank
/// parent extents and rank offsets, owned by the handle and valid until
/// hurray_coo_free. *out_present (not NULL) says whether there was one;
/// the two pointers (not NULL) are set to NULL when there was none.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_shard(
    coo: *const hurray_coo,
    out_parent_shape: *mut *const u64,
    out_offset: *mut *const u64,
    out_present: *mut bool,
) -> hurray_status {
    guard(|| {
        // SAFETY: `coo` is NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        if out_parent_shape.is_null() || out_offset.is_null() {
            return Err(CooError::null("out_parent_shape or out_offset"));
        }
        let shard = h.coo.shard();
        let (p, o) = shard.map_or((std::ptr::null(), std::ptr::null()), |s| {
            (s.parent_shape.as_ptr(), s.offset.as_ptr())
        });
        // SAFETY: NULL-checked; writable per the contract.
        unsafe {
            write_req(out_present, shard.is_some(), "out_present")?;
            write_opt(out_parent_shape, p);
            write_opt(out_offset, o);
        }
        Ok(())
    })
}

/// The HURRAY_DESCRIPTOR_HAS_* flags of the descriptor coo was read from
/// (e.g. HURRAY_DESCRIPTOR_HAS_QUANTIZATION when a quantization section was
/// skipped in permissive mode); 0 for a handle not read from a descriptor,
/// and when coo is NULL.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_descriptor_flags(coo: *const hurray_coo) -> u32 {
    super::guard::guard_value(0, || {
        // SAFETY: `coo` is NULL or live, per the contract.
        unsafe { handle(coo) }
            .ok()
            .and_then(|h| h.desc.as_ref())
            .map_or(0, |d| d.flags & flags::KNOWN)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::stats::mask;

    #[test]
    fn c_defines_match_the_core_constants() {
        assert_eq!(HURRAY_DESCRIPTOR_HAS_QUANTIZATION, flags::HAS_QUANTIZATION);
        assert_eq!(HURRAY_DESCRIPTOR_HAS_SHARD, flags::HAS_SHARD);
        assert_eq!(
            HURRAY_DESCRIPTOR_HAS_EXTENSION_TYPE,
            flags::HAS_EXTENSION_TYPE
        );
        assert_eq!(HURRAY_DESCRIPTOR_HAS_STATISTICS, flags::HAS_STATISTICS);
        assert_eq!(
            HURRAY_DESCRIPTOR_HAS_COMPOSITE_MEMBER,
            flags::HAS_COMPOSITE_MEMBER
        );
        assert_eq!(HURRAY_STAT_NNZ, mask::NNZ);
        assert_eq!(HURRAY_STAT_SPARSITY, mask::SPARSITY);
        assert_eq!(HURRAY_STAT_VALUE_RANGE, mask::VALUE_RANGE);
        assert_eq!(HURRAY_STAT_VALUE_STATS, mask::VALUE_STATS);
        assert_eq!(HURRAY_STAT_NM_SPARSITY, mask::NM_SPARSITY);
        assert_eq!(HURRAY_STAT_NAN_INF, mask::NAN_INF);
    }
}
