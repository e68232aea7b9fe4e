//! The C ABI for writing a Hurray file: the one-pass writer, its KV
//! metadata, and finishing (sync and rename) or aborting it.

use std::ffi::{c_char, c_void};

use super::file_kv::{HURRAY_KV_BOOL, HURRAY_KV_FLOAT64, HURRAY_KV_INT64, HURRAY_KV_UINT64};
use super::flag_set;
use super::guard::{
    box_handle, bytes, c_path, c_str, free_handle, guard, guard_value, take_handle, write_opt,
    write_req,
};
use super::{hurray_coo, hurray_status};
use crate::aligned::{try_copy, try_string, try_vec};
use crate::error::CooError;
use crate::io::descriptor::StatsChoice;
use crate::io::file::{FileWriter, KvArray, KvValue, WriteOptions};

/// hurray_file_writer_create flag: sort the index by name (SORTED_INDEX),
/// so that readers may binary-search it.
pub const HURRAY_FILE_SORTED_INDEX: u32 = 1;
/// hurray_file_writer_create flag: each descriptor carries a statistics
/// section with nnz and sparsity_ratio (what the reference implementation
/// writes).
pub const HURRAY_FILE_STATISTICS_COUNTS: u32 = 2;
/// hurray_file_writer_create flag: each descriptor carries a statistics
/// section with everything hurray_coo_statistics computes (one pass over
/// the values per tensor).
pub const HURRAY_FILE_STATISTICS_FULL: u32 = 4;

/// A Hurray file being written. Create it with hurray_file_writer_create;
/// end it with hurray_file_writer_finish (the file appears) or
/// hurray_file_writer_abort (nothing appears). Not thread-safe: one thread
/// at a time.
pub struct hurray_file_writer {
    w: FileWriter,
}

/// Start writing a Hurray file at path (NUL-terminated, not NULL). The bytes
/// go to a temporary file beside it (".NAME.PID-N.tmp"); only
/// hurray_file_writer_finish syncs it to disk and renames it to path, so an
/// interrupted or failed write never leaves a file under path, and never
/// replaces the one that was there.
///
/// alignment: data_buffer_alignment, a power of two from 4096 to 2097152;
/// 0 means 4096. flags: any of HURRAY_FILE_SORTED_INDEX and one of
/// HURRAY_FILE_STATISTICS_COUNTS or HURRAY_FILE_STATISTICS_FULL.
///
/// out (not NULL) receives the writer, owned by the caller until
/// hurray_file_writer_finish or hurray_file_writer_abort; NULL on failure.
///
/// Returns HURRAY_OK, or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS,
/// HURRAY_ERR_INVALID_ARGUMENT (alignment), HURRAY_ERR_IO,
/// HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_create(
    path: *const c_char,
    alignment: u32,
    flags: u32,
    out: *mut *mut hurray_file_writer,
) -> hurray_status {
    guard(|| {
        // SAFETY: `out` is NULL or writable, per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        let set = flag_set!("hurray_file_writer_create":
            HURRAY_FILE_SORTED_INDEX,
            HURRAY_FILE_STATISTICS_COUNTS,
            HURRAY_FILE_STATISTICS_FULL,
        );
        let both = HURRAY_FILE_STATISTICS_COUNTS | HURRAY_FILE_STATISTICS_FULL;
        let stats = set.check(flags)? & both;
        if stats == both {
            return Err(CooError::InvalidFlags {
                flags,
                unknown: both,
                allowed: format!("{}, at most one of the statistics flags", set.allowed()),
            });
        }
        // SAFETY: NULL or NUL-terminated, per the contract.
        let path = unsafe { c_path(path) }?;
        let opts = WriteOptions {
            alignment: if alignment == 0 { 4096 } else { alignment },
            sorted_index: flags & HURRAY_FILE_SORTED_INDEX != 0,
            stats: match stats {
                HURRAY_FILE_STATISTICS_COUNTS => StatsChoice::Counts,
                HURRAY_FILE_STATISTICS_FULL => StatsChoice::Full,
                _ => StatsChoice::None,
            },
        };
        let w = FileWriter::create(path, opts)?;
        let h = box_handle(hurray_file_writer { w })?;
        // SAFETY: checked writable above.
        unsafe { write_opt(out, h) };
        Ok(())
    })
}

/// # Safety
/// `w` is NULL or a live writer used by this thread only.
unsafe fn writer<'w>(w: *mut hurray_file_writer) -> Result<&'w mut FileWriter, CooError> {
    // SAFETY: forwarded contract.
    unsafe { w.as_mut() }
        .map(|w| &mut w.w)
        .ok_or_else(|| CooError::null("writer"))
}

/// Write the tensor coo (not NULL) under name (NUL-terminated UTF-8, 1 to
/// 65535 bytes, unique in the file, not NULL): its descriptor, then its two
/// buffers at data_buffer_alignment. coo is read during the call only. A
/// permissive handle is validated first (a file holds valid tensors only).
/// After HURRAY_ERR_IO the writer refuses every call but
/// hurray_file_writer_abort.
///
/// Returns HURRAY_OK, or: HURRAY_ERR_NULL_POINTER,
/// HURRAY_ERR_INVALID_ARGUMENT (empty, too long, repeated or non-UTF-8
/// name), HURRAY_ERR_UNSUPPORTED_TYPE (a tag accepted only permissively),
/// the validation statuses of hurray_coo_validate, HURRAY_ERR_IO,
/// HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: one thread at a time per writer; coo may be shared.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_add(
    w: *mut hurray_file_writer,
    name: *const c_char,
    coo: *const hurray_coo,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or live, per the contract.
        let w = unsafe { writer(w) }?;
        // SAFETY: NULL or NUL-terminated / live, per the contract.
        let (name, h) = unsafe { (c_str(name, "name")?, super::guard::handle(coo)?) };
        w.add_coo(name, &h.coo).map_err(|e| h.err(e))
    })
}

/// # Safety
/// `w` NULL or live; `key` NULL or NUL-terminated.
///
/// `value` builds the value; it is given the writer and the key, to refuse
/// a value by its size (`FileWriter::check_kv_size`) before copying it.
unsafe fn add_kv(
    w: *mut hurray_file_writer,
    key: *const c_char,
    value: impl FnOnce(&FileWriter, &str) -> Result<KvValue, CooError>,
) -> hurray_status {
    guard(|| {
        // SAFETY: per this function's contract.
        let (w, key) = unsafe { (writer(w)?, c_str(key, "key")?) };
        let v = value(w, key)?;
        w.add_kv(key, v)
    })
}

/// Add a KV metadata entry whose value is the string value (NUL-terminated
/// UTF-8, not NULL). KV entries must be added before the first tensor (the
/// header, written with it, says whether the file has metadata); keys
/// (NUL-terminated UTF-8, 1 to 65535 bytes, not NULL) must be unique.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_ARGUMENT
/// (key or value not UTF-8, empty or repeated key, after the first tensor),
/// HURRAY_ERR_IO (after an earlier failed write), HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: one thread at a time per writer.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_kv_string(
    w: *mut hurray_file_writer,
    key: *const c_char,
    value: *const c_char,
) -> hurray_status {
    // SAFETY: per the contract.
    unsafe {
        add_kv(w, key, |w, key| {
            let v = c_str(value, "value")?;
            w.check_kv_size(key, v.len() as u64, 4 + v.len() as u64)?;
            Ok(KvValue::String(try_string(v, "the KV string")?))
        })
    }
}

/// Add a KV entry holding an int64; as hurray_file_writer_kv_string.
///
/// Returns HURRAY_OK or the statuses of hurray_file_writer_kv_string.
/// Thread safety: one thread at a time per writer.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_kv_int64(
    w: *mut hurray_file_writer,
    key: *const c_char,
    value: i64,
) -> hurray_status {
    // SAFETY: per the contract.
    unsafe { add_kv(w, key, |_, _| Ok(KvValue::Int64(value))) }
}

/// Add a KV entry holding a uint64; as hurray_file_writer_kv_string.
///
/// Returns HURRAY_OK or the statuses of hurray_file_writer_kv_string.
/// Thread safety: one thread at a time per writer.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_kv_uint64(
    w: *mut hurray_file_writer,
    key: *const c_char,
    value: u64,
) -> hurray_status {
    // SAFETY: per the contract.
    unsafe { add_kv(w, key, |_, _| Ok(KvValue::Uint64(value))) }
}

/// Add a KV entry holding a float64; as hurray_file_writer_kv_string.
///
/// Returns HURRAY_OK or the statuses of hurray_file_writer_kv_string.
/// Thread safety: one thread at a time per writer.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_kv_float64(
    w: *mut hurray_file_writer,
    key: *const c_char,
    value: f64,
) -> hurray_status {
    // SAFETY: per the contract.
    unsafe { add_kv(w, key, |_, _| Ok(KvValue::Float64(value))) }
}

/// Add a KV entry holding a bool; as hurray_file_writer_kv_string.
///
/// Returns HURRAY_OK or the statuses of hurray_file_writer_kv_string.
/// Thread safety: one thread at a time per writer.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_kv_bool(
    w: *mut hurray_file_writer,
    key: *const c_char,
    value: bool,
) -> hurray_status {
    // SAFETY: per the contract.
    unsafe { add_kv(w, key, |_, _| Ok(KvValue::Bool(value))) }
}

/// Add a KV entry holding len bytes at data (NULL only when len is 0, read
/// during the call only); as hurray_file_writer_kv_string. A len over
/// 2^32 - 1, or one that takes the KV section past its 32-bit length, is
/// refused before data is read.
///
/// Returns HURRAY_OK, the statuses of hurray_file_writer_kv_string
/// (HURRAY_ERR_INVALID_ARGUMENT for the sizes above), HURRAY_ERR_ALLOC
/// (the copy the writer keeps).
/// Thread safety: one thread at a time per writer.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_kv_bytes(
    w: *mut hurray_file_writer,
    key: *const c_char,
    data: *const c_void,
    len: usize,
) -> hurray_status {
    // SAFETY: per the contract.
    unsafe {
        add_kv(w, key, |w, key| {
            // Refused by size before a byte is read or copied.
            w.check_kv_size(key, len as u64, 4 + len as u64)?;
            let b = bytes(data.cast(), len, "data")?;
            Ok(KvValue::Bytes(try_copy(b, "the KV bytes")?))
        })
    }
}

/// Add a KV entry holding an array of count elements of tag elem_tag at
/// elems (NULL only when count is 0, read during the call only):
/// HURRAY_KV_INT64, HURRAY_KV_UINT64 or HURRAY_KV_FLOAT64 (8-byte
/// elements), HURRAY_KV_BOOL (1-byte elements, 0 or 1). Arrays of strings:
/// hurray_file_writer_kv_string_array. As hurray_file_writer_kv_string.
///
/// A count over 2^32 - 1, or one that takes the KV section past its 32-bit
/// length, is refused before elems is read.
///
/// Returns HURRAY_OK, the statuses of hurray_file_writer_kv_string, and
/// HURRAY_ERR_INVALID_ARGUMENT for another elem_tag, a bool byte other
/// than 0 or 1 or the sizes above, HURRAY_ERR_OVERFLOW when count elements
/// do not fit memory, HURRAY_ERR_ALLOC (the copy the writer keeps).
/// Thread safety: one thread at a time per writer.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_kv_array(
    w: *mut hurray_file_writer,
    key: *const c_char,
    elem_tag: u8,
    elems: *const c_void,
    count: u64,
) -> hurray_status {
    // SAFETY: per the contract.
    unsafe {
        add_kv(w, key, |w, key| {
            let width: u64 = match elem_tag {
                HURRAY_KV_INT64 | HURRAY_KV_UINT64 | HURRAY_KV_FLOAT64 => 8,
                HURRAY_KV_BOOL => 1,
                t => {
                    return Err(CooError::Argument(format!(
                        "hurray_file_writer_kv_array takes elem_tag HURRAY_KV_INT64, \
                         HURRAY_KV_UINT64, HURRAY_KV_FLOAT64 or HURRAY_KV_BOOL, not {t}"
                    )))
                }
            };
            // Refused by size before an element is read or copied.
            w.check_kv_size(key, count, 5u64.saturating_add(count.saturating_mul(width)))?;
            let n = count
                .checked_mul(width)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or(CooError::Overflow {
                    what: "the array's byte size".into(),
                })?;
            let b = bytes(elems.cast(), n, "elems")?;
            let words = || b.chunks_exact(8).map(|c| c.try_into().expect("8 bytes"));
            let what = "the KV array";
            let count = n / width as usize;
            Ok(KvValue::Array(match elem_tag {
                HURRAY_KV_INT64 => {
                    let mut v = try_vec(count, what)?;
                    v.extend(words().map(i64::from_le_bytes));
                    KvArray::Int64(v)
                }
                HURRAY_KV_UINT64 => {
                    let mut v = try_vec(count, what)?;
                    v.extend(words().map(u64::from_le_bytes));
                    KvArray::Uint64(v)
                }
                HURRAY_KV_FLOAT64 => {
                    let mut v = try_vec(count, what)?;
                    v.extend(words().map(f64::from_le_bytes));
                    KvArray::Float64(v)
                }
                _ => {
                    if let Some(k) = b.iter().position(|&x| x > 1) {
                        return Err(CooError::Argument(format!(
                            "bool element {k} is {}; it must be 0 or 1",
                            b[k]
                        )));
                    }
                    let mut v = try_vec(count, what)?;
                    v.extend(b.iter().map(|&x| x == 1));
                    KvArray::Bool(v)
                }
            }))
        })
    }
}

/// Add a KV entry holding an array of count strings (strings: count
/// pointers to NUL-terminated UTF-8, none NULL; NULL only when count is 0;
/// read during the call only). As hurray_file_writer_kv_string. A count
/// over 2^32 - 1, or strings that take the KV section past its 32-bit
/// length, are refused before (or as soon as) they are read.
///
/// Returns HURRAY_OK or the statuses of hurray_file_writer_kv_string
/// (HURRAY_ERR_INVALID_ARGUMENT for the sizes above), HURRAY_ERR_OVERFLOW,
/// HURRAY_ERR_ALLOC.
/// Thread safety: one thread at a time per writer.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_kv_string_array(
    w: *mut hurray_file_writer,
    key: *const c_char,
    strings: *const *const c_char,
    count: u64,
) -> hurray_status {
    // SAFETY: per the contract.
    unsafe {
        add_kv(w, key, |w, key| {
            // Each string takes at least its 4-byte length: refused by that
            // size before a string is read.
            w.check_kv_size(key, count, 5u64.saturating_add(count.saturating_mul(4)))?;
            let n = usize::try_from(count)
                .ok()
                .filter(|n| n.checked_mul(8).is_some())
                .ok_or(CooError::Overflow {
                    what: "the string array".into(),
                })?;
            let ptrs = super::guard::array::<usize>(strings.cast(), n, "strings")?;
            let mut v = try_vec(n, "the string array")?;
            let mut payload = 5u64;
            for &p in ptrs {
                let s = c_str(p as *const c_char, "a string of the array")?;
                payload += 4 + s.len() as u64;
                w.check_kv_size(key, s.len() as u64, payload)?;
                v.push(try_string(s, "a string of the KV array")?);
            }
            Ok(KvValue::Array(KvArray::String(v)))
        })
    }
}

/// Complete the file (KV section, index, trailer with the index CRC-32C),
/// sync it and rename it into place, then free the writer, whatever the
/// outcome. On failure the temporary file is removed and nothing appears
/// under the path. NULL is HURRAY_ERR_NULL_POINTER.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_IO,
/// HURRAY_ERR_ALLOC, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: one thread, once per writer.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_finish(w: *mut hurray_file_writer) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or a live writer from box_handle, taken back once,
        // per the contract.
        let b = unsafe { take_handle(w) }.ok_or_else(|| CooError::null("writer"))?;
        b.w.finish()
    })
}

/// Discard a writer: the temporary file is removed, nothing appears under
/// the path, and the writer is freed. NULL is a no-op.
/// Thread safety: one thread, once per writer.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_writer_abort(w: *mut hurray_file_writer) {
    guard_value((), || {
        // SAFETY: NULL or live, freed once, per the contract.
        unsafe { free_handle(w) }
    })
}
