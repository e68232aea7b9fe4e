//! Element-type facts.

use std::ffi::c_char;

use super::guard::{guard, guard_value, write_req};
use super::hurray_status;
use crate::element::{size, types};
use crate::error::CooError;

/// The size in bytes of a values buffer holding n elements of type_tag
/// (n * width, ceil(n * bits / 8) for 1-, 2- and 4-bit types,
/// ceil(n / 4) * 3 for 6-bit types), written to *out_bytes.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER (out_bytes), HURRAY_ERR_INVALID_TYPE,
/// HURRAY_ERR_OVERFLOW.
///
/// Thread safety: safe from any thread.
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
                class: class.describe(),
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
/// Thread safety: safe from any thread.
#[no_mangle]
pub extern "C" fn hurray_type_name(type_tag: u8) -> *const c_char {
    guard_value(c"unknown".as_ptr(), || {
        types::type_info(type_tag).map_or(c"unknown".as_ptr(), |t| t.name_c.as_ptr())
    })
}
