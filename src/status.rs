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
//! What each status means is written once, on its define in
//! `ffi/consts.rs`, which the header and its readers see; this table holds
//! numbers and names only.

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
    Ok = 0 => "HURRAY_OK",
    InvalidMagic = -1 => "HURRAY_ERR_INVALID_MAGIC",
    VersionMismatch = -2 => "HURRAY_ERR_VERSION_MISMATCH",
    InvalidLayout = -3 => "HURRAY_ERR_INVALID_LAYOUT",
    InvalidType = -4 => "HURRAY_ERR_INVALID_TYPE",
    BufferTooSmall = -5 => "HURRAY_ERR_BUFFER_TOO_SMALL",
    NullPointer = -6 => "HURRAY_ERR_NULL_POINTER",
    InternalPanic = -7 => "HURRAY_ERR_INTERNAL_PANIC",
    InvalidSyncMode = -8 => "HURRAY_ERR_INVALID_SYNC_MODE",
    Internal = -10 => "HURRAY_ERR_INTERNAL",
    IndexOutOfBounds = -11 => "HURRAY_ERR_INDEX_OUT_OF_BOUNDS",
    InvalidRank = -20 => "HURRAY_ERR_INVALID_RANK",
    InvalidShape = -21 => "HURRAY_ERR_INVALID_SHAPE",
    BufferSize = -22 => "HURRAY_ERR_BUFFER_SIZE",
    Misaligned = -23 => "HURRAY_ERR_MISALIGNED",
    Duplicate = -24 => "HURRAY_ERR_DUPLICATE",
    NotSorted = -25 => "HURRAY_ERR_NOT_SORTED",
    RankMismatch = -26 => "HURRAY_ERR_RANK_MISMATCH",
    Overflow = -27 => "HURRAY_ERR_OVERFLOW",
    Alloc = -28 => "HURRAY_ERR_ALLOC",
    InvalidFlags = -29 => "HURRAY_ERR_INVALID_FLAGS",
    NonzeroPadding = -30 => "HURRAY_ERR_NONZERO_PADDING",
    UnsupportedType = -31 => "HURRAY_ERR_UNSUPPORTED_TYPE",
    InvalidValue = -32 => "HURRAY_ERR_INVALID_VALUE",
    InvalidOffsets = -33 => "HURRAY_ERR_INVALID_OFFSETS",
    Truncated = -40 => "HURRAY_ERR_TRUNCATED",
    ReservedBits = -41 => "HURRAY_ERR_RESERVED_BITS",
    UnsupportedDevice = -42 => "HURRAY_ERR_UNSUPPORTED_DEVICE",
    InvalidBufferHandle = -43 => "HURRAY_ERR_INVALID_BUFFER_HANDLE",
    InvalidStatistics = -44 => "HURRAY_ERR_INVALID_STATISTICS",
    UnsupportedFeature = -45 => "HURRAY_ERR_UNSUPPORTED_FEATURE",
    ParseError = -50 => "HURRAY_ERR_PARSE",
    Io = -51 => "HURRAY_ERR_IO",
    CorruptFile = -52 => "HURRAY_ERR_CORRUPT_FILE",
    Checksum = -53 => "HURRAY_ERR_CHECKSUM",
    NotFound = -54 => "HURRAY_ERR_NOT_FOUND",
    InvalidArgument = -55 => "HURRAY_ERR_INVALID_ARGUMENT",
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
