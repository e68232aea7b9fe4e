//! The one table of status codes.
//!
//! Every code the library can return is a variant of [`Status`], numbered
//! explicitly. The numbers are part of the ABI: once released they never change
//! meaning. Where the format's reference C ABI (`hurray-ffi`) has a code with
//! the same meaning, the same number is used (-1 … -8, -10, -11); -9 is left
//! free (the reference uses it for a GPU sync-mode handoff mismatch).
//!
//! The C header exposes the same numbers as `HURRAY_…` defines (cbindgen
//! needs literal constants, so `ffi/consts.rs` spells them out);
//! `tests/tables.rs` checks the generated header, the C++ and Fortran
//! bindings and the ABI record against this table, name for name, both ways.

use std::ffi::CStr;

/// Declares the status table once: each row gives the variant, its number
/// and its C name; the enum, [`Status::ALL`] and [`Status::name`] all come
/// from it.
macro_rules! status_table {
    ($($(#[doc = $doc:literal])* $variant:ident = $code:literal => $name:literal,)+) => {
        /// A status code: `Ok` (0) or a negative error.
        #[repr(i32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Status {
            $($(#[doc = $doc])* $variant = $code,)+
        }

        impl Status {
            /// Every status, in table order.
            pub const ALL: &'static [Status] = &[$(Status::$variant,)+];

            /// The C name of the code, e.g. `HURRAY_ERR_DUPLICATE`.
            pub const fn name(self) -> &'static CStr {
                match self {
                    $(Status::$variant => match CStr::from_bytes_with_nul(concat!($name, "\0").as_bytes()) {
                        Ok(c) => c,
                        Err(_) => panic!("a status name holds a NUL"),
                    },)+
                }
            }
        }
    };
}

status_table! {
    /// Success.
    Ok = 0 => "HURRAY_OK",
    /// A descriptor does not start with the magic bytes "HRRY".
    InvalidMagic = -1 => "HURRAY_ERR_INVALID_MAGIC",
    /// A descriptor's major version is not supported.
    VersionMismatch = -2 => "HURRAY_ERR_VERSION_MISMATCH",
    /// A descriptor's layout tag or layout field is invalid.
    InvalidLayout = -3 => "HURRAY_ERR_INVALID_LAYOUT",
    /// Invalid, reserved, private or unrecognised element type tag.
    InvalidType = -4 => "HURRAY_ERR_INVALID_TYPE",
    /// A caller-provided output buffer is too small.
    BufferTooSmall = -5 => "HURRAY_ERR_BUFFER_TOO_SMALL",
    /// A required pointer argument is NULL.
    NullPointer = -6 => "HURRAY_ERR_NULL_POINTER",
    /// A Rust panic was caught at the boundary (a bug in this library).
    InternalPanic = -7 => "HURRAY_ERR_INTERNAL_PANIC",
    /// A descriptor's buffer handle has an undefined sync mode.
    InvalidSyncMode = -8 => "HURRAY_ERR_INVALID_SYNC_MODE",
    /// An internal invariant failed (a bug in this library).
    Internal = -10 => "HURRAY_ERR_INTERNAL",
    /// A coordinate is outside the shape (stored entry or query).
    IndexOutOfBounds = -11 => "HURRAY_ERR_INDEX_OUT_OF_BOUNDS",
    /// Rank outside 1..=64.
    InvalidRank = -20 => "HURRAY_ERR_INVALID_RANK",
    /// A shape dimension is the dynamic-dimension sentinel UINT64_MAX.
    InvalidShape = -21 => "HURRAY_ERR_INVALID_SHAPE",
    /// A values or indices buffer does not have the byte size the tensor needs.
    BufferSize = -22 => "HURRAY_ERR_BUFFER_SIZE",
    /// A non-empty borrowed buffer is not 64-byte aligned.
    Misaligned = -23 => "HURRAY_ERR_MISALIGNED",
    /// Two stored entries have the same coordinate tuple.
    Duplicate = -24 => "HURRAY_ERR_DUPLICATE",
    /// `is_sorted` is set but the entries are not in strictly increasing
    /// lexicographic order.
    NotSorted = -25 => "HURRAY_ERR_NOT_SORTED",
    /// A query's rank differs from the tensor's rank.
    RankMismatch = -26 => "HURRAY_ERR_RANK_MISMATCH",
    /// A size computation overflows 64 bits (or the address space).
    Overflow = -27 => "HURRAY_ERR_OVERFLOW",
    /// Memory could not be allocated.
    Alloc = -28 => "HURRAY_ERR_ALLOC",
    /// Unknown bits are set in a `flags` argument.
    InvalidFlags = -29 => "HURRAY_ERR_INVALID_FLAGS",
    /// Padding bits of a sub-byte values buffer are not zero.
    NonzeroPadding = -30 => "HURRAY_ERR_NONZERO_PADDING",
    /// The operation cannot be performed on this element type (complex values
    /// as a double, or values of a type accepted only in permissive mode).
    UnsupportedType = -31 => "HURRAY_ERR_UNSUPPORTED_TYPE",
    /// A stored value is a code the element type forbids as data
    /// (float8_e8m0 0x00 and 0xFF).
    InvalidValue = -32 => "HURRAY_ERR_INVALID_VALUE",
    /// CSR or CSC offsets that do not describe their indices (the first is
    /// not the base, one decreases or passes the end, the last is not nnz +
    /// base).
    InvalidOffsets = -33 => "HURRAY_ERR_INVALID_OFFSETS",
    /// A descriptor ends before its fields do.
    Truncated = -40 => "HURRAY_ERR_TRUNCATED",
    /// Reserved flag bits or reserved bytes of a descriptor are not zero.
    ReservedBits = -41 => "HURRAY_ERR_RESERVED_BITS",
    /// A buffer lives on a device other than the host CPU.
    UnsupportedDevice = -42 => "HURRAY_ERR_UNSUPPORTED_DEVICE",
    /// A buffer handle is invalid (alignment, device tag, memory class).
    InvalidBufferHandle = -43 => "HURRAY_ERR_INVALID_BUFFER_HANDLE",
    /// A statistics section is invalid (reserved mask bits, nnz mismatch).
    InvalidStatistics = -44 => "HURRAY_ERR_INVALID_STATISTICS",
    /// The descriptor uses a feature this library does not apply
    /// (quantization, non-producer sync) outside permissive mode.
    UnsupportedFeature = -45 => "HURRAY_ERR_UNSUPPORTED_FEATURE",
    /// A text file (Matrix Market, FROSTT) does not parse.
    ParseError = -50 => "HURRAY_ERR_PARSE",
    /// A file could not be opened, read or written.
    Io = -51 => "HURRAY_ERR_IO",
    /// A Hurray file's container fields contradict each other or the file
    /// (offsets out of range, overlapping sections, lengths that lie,
    /// duplicate names); the message gives the byte offset.
    CorruptFile = -52 => "HURRAY_ERR_CORRUPT_FILE",
    /// A Hurray file's index does not match its CRC-32C.
    Checksum = -53 => "HURRAY_ERR_CHECKSUM",
    /// No tensor of that name (or position) in the file.
    NotFound = -54 => "HURRAY_ERR_NOT_FOUND",
    /// An argument other than flags is outside its domain (an empty or
    /// repeated tensor name, an alignment that is not a power of two, a call
    /// made in the wrong order).
    InvalidArgument = -55 => "HURRAY_ERR_INVALID_ARGUMENT",
    /// A global coordinate falls outside the shard's box.
    OutsideShard = -56 => "HURRAY_ERR_OUTSIDE_SHARD",
}

impl Status {
    /// The numeric code.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The status whose code is `code`, if any.
    pub fn from_code(code: i32) -> Option<Status> {
        Status::ALL.iter().copied().find(|s| s.code() == code)
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
        for &s in Status::ALL {
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
