//! Status names, the last-error message, and versions.

use std::ffi::c_char;

use super::consts::*;
use super::guard::{self, guard_value};
use super::hurray_status;
use crate::status::{Status, UNKNOWN_STATUS_NAME};

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
/// Thread safety: safe from any thread.
#[no_mangle]
pub extern "C" fn hurray_coo_version_number() -> u32 {
    guard_value(0, || {
        let (major, minor, patch) = BUILT_VERSION;
        major * 1_000_000 + minor * 1000 + patch
    })
}

/// The library's version as a string, e.g. "0.1.0". Never NULL; static.
/// Thread safety: safe from any thread.
#[no_mangle]
pub extern "C" fn hurray_coo_version_string() -> *const c_char {
    guard_value(c"".as_ptr(), || {
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
    })
}

/// The library's ABI version at run time; equals HURRAY_COO_ABI_VERSION when
/// header and library match. Thread safety: safe from any thread.
#[no_mangle]
pub extern "C" fn hurray_coo_abi_version() -> u32 {
    guard_value(0, || HURRAY_COO_ABI_VERSION)
}
