//! The C ABI for a Hurray file's KV metadata: the value tags, each entry
//! and each element of an array entry as a hurray_kv, and the
//! NUL-terminated copies of the file's strings they point into.

use std::ffi::{c_char, c_void};

use super::file::{hurray_file, index_of, open_file};
use super::guard::{guard, guard_value, write_opt};
use super::hurray_status;
use crate::error::CooError;
use crate::io::file::{KvArray, KvValue};

/// KV value tag: UTF-8 string.
pub const HURRAY_KV_STRING: u8 = 1;
/// KV value tag: int64.
pub const HURRAY_KV_INT64: u8 = 2;
/// KV value tag: uint64.
pub const HURRAY_KV_UINT64: u8 = 3;
/// KV value tag: float64.
pub const HURRAY_KV_FLOAT64: u8 = 4;
/// KV value tag: bool.
pub const HURRAY_KV_BOOL: u8 = 5;
/// KV value tag: byte sequence.
pub const HURRAY_KV_BYTES: u8 = 6;
/// KV value tag: homogeneous array of one of the tags above.
pub const HURRAY_KV_ARRAY: u8 = 7;

/// One KV metadata entry (or one element of an array entry). Pointers are
/// owned by the hurray_file and valid until hurray_file_close.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hurray_kv {
    /// The key, NUL-terminated (key_len bytes before the NUL).
    pub key: *const c_char,
    /// The key's length in bytes.
    pub key_len: usize,
    /// HURRAY_KV_STRING ... HURRAY_KV_ARRAY.
    pub tag: u8,
    /// For HURRAY_KV_ARRAY, the element tag; else 0.
    pub array_tag: u8,
    /// For HURRAY_KV_ARRAY, the number of elements; else 1.
    pub count: u64,
    /// The value of an int64.
    pub i64: i64,
    /// The value of a uint64.
    pub u64: u64,
    /// The value of a float64.
    pub f64: f64,
    /// The value of a bool.
    pub b: bool,
    /// A string (NUL-terminated) or byte sequence, data_len bytes; for an
    /// array of int64, uint64 or float64, count 8-byte elements, 8-byte
    /// aligned; of bool, count bytes 0 or 1; NULL for an array of strings
    /// or byte sequences (read those with hurray_file_kv_item) and for
    /// other scalars.
    pub data: *const c_void,
    /// Bytes at data.
    pub data_len: usize,
}

impl hurray_kv {
    fn blank(key: &[u8], tag: u8) -> hurray_kv {
        hurray_kv {
            key: key.as_ptr().cast(),
            key_len: key.len() - 1,
            tag,
            array_tag: 0,
            count: 1,
            i64: 0,
            u64: 0,
            f64: 0.0,
            b: false,
            data: std::ptr::null(),
            data_len: 0,
        }
    }
}

/// A scalar KV value as a hurray_kv; `text` holds its NUL-terminated copy
/// when it is a string.
fn scalar_kv(key: &[u8], v: &KvValue, text: Option<&Vec<u8>>) -> hurray_kv {
    let mut k = hurray_kv::blank(key, v.tag());
    match v {
        KvValue::String(s) => {
            k.data = text.map_or(std::ptr::null(), |t| t.as_ptr().cast());
            k.data_len = s.len();
        }
        KvValue::Int64(x) => k.i64 = *x,
        KvValue::Uint64(x) => k.u64 = *x,
        KvValue::Float64(x) => k.f64 = *x,
        KvValue::Bool(x) => k.b = *x,
        KvValue::Bytes(b) => k = k.with_data(b),
        KvValue::Array(_) => {}
    }
    k
}

/// The file and KV entry index i, checked, for the KV readers (out not NULL).
///
/// # Safety
/// `file` is NULL or live.
unsafe fn kv_entry<'f>(
    file: *const hurray_file,
    i: u64,
    out: *mut hurray_kv,
) -> Result<(&'f hurray_file, usize), CooError> {
    // SAFETY: forwarded contract.
    let f = unsafe { open_file(file) }?;
    if out.is_null() {
        return Err(CooError::null("out"));
    }
    Ok((f, index_of(f, i, f.file.kv().len(), "KV entry")?))
}

/// The number of KV metadata entries, or 0 when file is NULL.
/// Thread safety: safe on a shared file.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_kv_count(file: *const hurray_file) -> u64 {
    guard_value(0, || {
        // SAFETY: NULL or live, per the contract.
        unsafe { open_file(file) }.map_or(0, |f| f.file.kv().len() as u64)
    })
}

/// KV entry i (0 to hurray_file_kv_count - 1, in file order) into *out (not
/// NULL); see hurray_kv for which fields hold the value.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_NOT_FOUND (i out
/// of range), HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared file.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_kv(
    file: *const hurray_file,
    i: u64,
    out: *mut hurray_kv,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or live, per the contract.
        let (f, i) = unsafe { kv_entry(file, i, out) }?;
        let (_, v) = &f.file.kv()[i];
        let text = &f.kv[i];
        let k = match v {
            KvValue::Array(a) => {
                let mut k = hurray_kv::blank(&text.key, v.tag());
                k.array_tag = a.tag();
                k.count = a.len() as u64;
                let (data, len): (*const c_void, usize) = match a {
                    KvArray::Int64(x) => (x.as_ptr().cast(), x.len() * 8),
                    KvArray::Uint64(x) => (x.as_ptr().cast(), x.len() * 8),
                    KvArray::Float64(x) => (x.as_ptr().cast(), x.len() * 8),
                    // Rust's bool is one byte holding 0 or 1.
                    KvArray::Bool(x) => (x.as_ptr().cast(), x.len()),
                    KvArray::String(_) | KvArray::Bytes(_) => (std::ptr::null(), 0),
                };
                if len > 0 {
                    (k.data, k.data_len) = (data, len);
                }
                k
            }
            v => scalar_kv(&text.key, v, text.strings.first()),
        };
        // SAFETY: non-null, writable per the contract.
        unsafe { write_opt(out, k) };
        Ok(())
    })
}

/// Element j of the array KV entry i, as a scalar hurray_kv (key = the
/// array's key) into *out (not NULL): how strings and byte sequences of an
/// array are read.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_NOT_FOUND (i or j
/// out of range), HURRAY_ERR_INVALID_ARGUMENT (entry i is not an array),
/// HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared file.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_kv_item(
    file: *const hurray_file,
    i: u64,
    j: u64,
    out: *mut hurray_kv,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or live, per the contract.
        let (f, i) = unsafe { kv_entry(file, i, out) }?;
        let (key, v) = &f.file.kv()[i];
        let KvValue::Array(a) = v else {
            return Err(CooError::Argument(format!(
                "KV entry {i} ({key:?}) is a {}, not an array",
                KvValue::tag_name(v.tag())
            )));
        };
        let j = index_of(f, j, a.len(), "array element")?;
        let text = &f.kv[i];
        let mut k = match a {
            KvArray::String(_) => {
                let mut k = hurray_kv::blank(&text.key, a.tag());
                k.data = text.strings[j].as_ptr().cast();
                k.data_len = text.strings[j].len() - 1;
                k
            }
            KvArray::Bytes(b) => {
                scalar_kv(&text.key, &KvValue::Bytes(Vec::new()), None).with_data(&b[j])
            }
            _ => scalar_kv(&text.key, &a.get(j).expect("in range"), None),
        };
        k.count = 1;
        // SAFETY: non-null, writable per the contract.
        unsafe { write_opt(out, k) };
        Ok(())
    })
}

impl hurray_kv {
    fn with_data(mut self, b: &[u8]) -> hurray_kv {
        self.data = b.as_ptr().cast();
        self.data_len = b.len();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::file::kv_tag;

    #[test]
    fn the_header_kv_tags_are_the_formats() {
        assert_eq!(
            [
                HURRAY_KV_STRING,
                HURRAY_KV_INT64,
                HURRAY_KV_UINT64,
                HURRAY_KV_FLOAT64,
                HURRAY_KV_BOOL,
                HURRAY_KV_BYTES,
                HURRAY_KV_ARRAY
            ],
            [
                kv_tag::STRING,
                kv_tag::INT64,
                kv_tag::UINT64,
                kv_tag::FLOAT64,
                kv_tag::BOOL,
                kv_tag::BYTES,
                kv_tag::ARRAY
            ]
        );
    }
}
