//! The one table of status codes.
//!
//! Every code the library can return is a variant of [`Status`], numbered
//! explicitly. The numbers are part of the ABI: once released they never change
//! meaning. Where the format's reference C ABI (`hurray-ffi`) has a code with
//! the same meaning, the same number is used (-1 … -8, -10, -11); -9 is left
//! free (the reference uses it for a GPU sync-mode handoff mismatch).
//!
//! The C header exposes the same numbers as `HURRAY_…` defines (see
//! `ffi::status_codes`); a test checks that both agree, name for name.

use std::ffi::CStr;

/// A status code: `Ok` (0) or a negative error.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Success.
    Ok = 0,
    /// A descriptor does not start with the magic bytes "HRRY".
    InvalidMagic = -1,
    /// A descriptor's major version is not supported.
    VersionMismatch = -2,
    /// A descriptor's layout tag or layout field is invalid.
    InvalidLayout = -3,
    /// Invalid, reserved, private or unrecognised element type tag.
    InvalidType = -4,
    /// A caller-provided output buffer is too small.
    BufferTooSmall = -5,
    /// A required pointer argument is NULL.
    NullPointer = -6,
    /// A Rust panic was caught at the boundary (a bug in this library).
    InternalPanic = -7,
    /// A descriptor's buffer handle has an undefined sync mode.
    InvalidSyncMode = -8,
    /// An internal invariant failed (a bug in this library).
    Internal = -10,
    /// A coordinate is outside the shape (stored entry or query).
    IndexOutOfBounds = -11,
    /// Rank outside 1..=64.
    InvalidRank = -20,
    /// A shape dimension is the dynamic-dimension sentinel UINT64_MAX.
    InvalidShape = -21,
    /// A values or indices buffer does not have the byte size the tensor needs.
    BufferSize = -22,
    /// A non-empty borrowed buffer is not 64-byte aligned.
    Misaligned = -23,
    /// Two stored entries have the same coordinate tuple.
    Duplicate = -24,
    /// `is_sorted` is set but the entries are not in strictly increasing
    /// lexicographic order.
    NotSorted = -25,
    /// A query's rank differs from the tensor's rank.
    RankMismatch = -26,
    /// A size computation overflows 64 bits (or the address space).
    Overflow = -27,
    /// Memory could not be allocated.
    Alloc = -28,
    /// Unknown bits are set in a `flags` argument.
    InvalidFlags = -29,
    /// Padding bits of a sub-byte values buffer are not zero.
    NonzeroPadding = -30,
    /// The operation cannot be performed on this element type (complex values
    /// as a double, or values of a type accepted only in permissive mode).
    UnsupportedType = -31,
    /// A descriptor ends before its fields do.
    Truncated = -40,
    /// Reserved flag bits or reserved bytes of a descriptor are not zero.
    ReservedBits = -41,
    /// A buffer lives on a device other than the host CPU.
    UnsupportedDevice = -42,
    /// A buffer handle is invalid (alignment, device tag, memory class).
    InvalidBufferHandle = -43,
    /// A statistics section is invalid (reserved mask bits, nnz mismatch).
    InvalidStatistics = -44,
    /// The descriptor uses a feature this library does not apply
    /// (quantization, non-producer sync) outside permissive mode.
    UnsupportedFeature = -45,
}

impl Status {
    /// Every status, in table order.
    pub const ALL: [Status; 29] = [
        Status::Ok,
        Status::InvalidMagic,
        Status::VersionMismatch,
        Status::InvalidLayout,
        Status::InvalidType,
        Status::BufferTooSmall,
        Status::NullPointer,
        Status::InternalPanic,
        Status::InvalidSyncMode,
        Status::Internal,
        Status::IndexOutOfBounds,
        Status::InvalidRank,
        Status::InvalidShape,
        Status::BufferSize,
        Status::Misaligned,
        Status::Duplicate,
        Status::NotSorted,
        Status::RankMismatch,
        Status::Overflow,
        Status::Alloc,
        Status::InvalidFlags,
        Status::NonzeroPadding,
        Status::UnsupportedType,
        Status::Truncated,
        Status::ReservedBits,
        Status::UnsupportedDevice,
        Status::InvalidBufferHandle,
        Status::InvalidStatistics,
        Status::UnsupportedFeature,
    ];

    /// The numeric code.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The status whose code is `code`, if any.
    pub fn from_code(code: i32) -> Option<Status> {
        Status::ALL.iter().copied().find(|s| s.code() == code)
    }

    /// The C name of the code, e.g. `HURRAY_ERR_DUPLICATE`.
    pub const fn name(self) -> &'static CStr {
        match self {
            Status::Ok => c"HURRAY_OK",
            Status::InvalidMagic => c"HURRAY_ERR_INVALID_MAGIC",
            Status::VersionMismatch => c"HURRAY_ERR_VERSION_MISMATCH",
            Status::InvalidLayout => c"HURRAY_ERR_INVALID_LAYOUT",
            Status::InvalidType => c"HURRAY_ERR_INVALID_TYPE",
            Status::BufferTooSmall => c"HURRAY_ERR_BUFFER_TOO_SMALL",
            Status::NullPointer => c"HURRAY_ERR_NULL_POINTER",
            Status::InternalPanic => c"HURRAY_ERR_INTERNAL_PANIC",
            Status::InvalidSyncMode => c"HURRAY_ERR_INVALID_SYNC_MODE",
            Status::Internal => c"HURRAY_ERR_INTERNAL",
            Status::IndexOutOfBounds => c"HURRAY_ERR_INDEX_OUT_OF_BOUNDS",
            Status::InvalidRank => c"HURRAY_ERR_INVALID_RANK",
            Status::InvalidShape => c"HURRAY_ERR_INVALID_SHAPE",
            Status::BufferSize => c"HURRAY_ERR_BUFFER_SIZE",
            Status::Misaligned => c"HURRAY_ERR_MISALIGNED",
            Status::Duplicate => c"HURRAY_ERR_DUPLICATE",
            Status::NotSorted => c"HURRAY_ERR_NOT_SORTED",
            Status::RankMismatch => c"HURRAY_ERR_RANK_MISMATCH",
            Status::Overflow => c"HURRAY_ERR_OVERFLOW",
            Status::Alloc => c"HURRAY_ERR_ALLOC",
            Status::InvalidFlags => c"HURRAY_ERR_INVALID_FLAGS",
            Status::NonzeroPadding => c"HURRAY_ERR_NONZERO_PADDING",
            Status::UnsupportedType => c"HURRAY_ERR_UNSUPPORTED_TYPE",
            Status::Truncated => c"HURRAY_ERR_TRUNCATED",
            Status::ReservedBits => c"HURRAY_ERR_RESERVED_BITS",
            Status::UnsupportedDevice => c"HURRAY_ERR_UNSUPPORTED_DEVICE",
            Status::InvalidBufferHandle => c"HURRAY_ERR_INVALID_BUFFER_HANDLE",
            Status::InvalidStatistics => c"HURRAY_ERR_INVALID_STATISTICS",
            Status::UnsupportedFeature => c"HURRAY_ERR_UNSUPPORTED_FEATURE",
        }
    }
}

/// The name returned for a code that is not in the table.
pub const UNKNOWN_STATUS_NAME: &CStr = c"HURRAY_ERR_UNKNOWN_STATUS";

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_and_names_are_unique_and_ok_is_zero() {
        let codes: HashSet<i32> = Status::ALL.iter().map(|s| s.code()).collect();
        let names: HashSet<&CStr> = Status::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(codes.len(), Status::ALL.len());
        assert_eq!(names.len(), Status::ALL.len());
        assert_eq!(Status::Ok.code(), 0);
        for s in Status::ALL {
            assert!(s == Status::Ok || s.code() < 0, "{s:?} must be negative");
            assert_eq!(Status::from_code(s.code()), Some(s));
        }
    }

    #[test]
    fn reference_abi_numbers_are_kept() {
        // hurray-ffi's numbering, for the codes whose meaning we share.
        assert_eq!(Status::InvalidMagic.code(), -1);
        assert_eq!(Status::VersionMismatch.code(), -2);
        assert_eq!(Status::InvalidLayout.code(), -3);
        assert_eq!(Status::InvalidType.code(), -4);
        assert_eq!(Status::BufferTooSmall.code(), -5);
        assert_eq!(Status::NullPointer.code(), -6);
        assert_eq!(Status::InternalPanic.code(), -7);
        assert_eq!(Status::Internal.code(), -10);
        assert_eq!(Status::IndexOutOfBounds.code(), -11);
        assert_eq!(Status::InvalidSyncMode.code(), -8);
        assert_eq!(Status::from_code(-9), None);
    }
}
