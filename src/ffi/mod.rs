//! The C ABI, split by the same operations as the core: `library` (status
//! names, messages, versions), `element` (type facts), `handle` (create,
//! free, accessors), `validate`, `lookup`, `io` (descriptors, statistics).
//! Each export converts its arguments (through `guard.rs`), calls the core
//! and maps the result; every body runs inside the panic barrier.
#![allow(non_camel_case_types)]
// Each export's safety contract (what may be NULL, what must stay valid and
// for how long) is written in its doc comment for C readers, who see it in
// the generated header; a Rust-style "# Safety" heading would only add noise
// there.
#![allow(clippy::missing_safety_doc)]

// The header's sections follow the order of these modules.
mod consts;
mod element;
mod guard;
mod handle;
mod io;
mod library;
mod lookup;
mod validate;

use std::ffi::c_void;

pub use consts::*;
pub use element::*;
pub use handle::*;
pub use io::*;
pub use library::*;
pub use lookup::*;
pub use validate::*;

use crate::coo::Coo;

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
    desc: Option<crate::io::descriptor::Descriptor>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::types;
    use crate::status::Status;
    use library::BUILT_VERSION;

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
