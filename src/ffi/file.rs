//! The C ABI for Hurray files: open (mapped or read), list tensors and
//! metadata, get COO handles that borrow the file; write files.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::guard::{
    box_handle, bytes, c_path, c_str, free_handle, guard, guard_value, live, take_handle,
    write_opt, write_req,
};
use super::handle::check_flags;
use super::{hurray_coo, hurray_status};
use crate::aligned::{try_copy, try_string, try_vec};
use crate::error::CooError;
use crate::io::descriptor::StatsChoice;
use crate::io::file::{
    FileWriter, HurrayFile, KvArray, KvValue, OpenMode, TensorEntry, WriteOptions,
};

/// hurray_file_open flag: read the whole file into library memory instead
/// of mapping it (for files that may change while open, or file systems
/// where mapping is unreliable).
pub const HURRAY_FILE_READ_INTO_MEMORY: u32 = 1;
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

/// An open Hurray file. Open it with hurray_file_open, close it with
/// hurray_file_close. Immutable: every function taking a const hurray_file *
/// may be called from many threads at once.
pub struct hurray_file {
    file: Arc<HurrayFile>,
    /// NUL-terminated tensor names, in index order.
    names: Vec<Vec<u8>>,
    /// NUL-terminated copies of KV keys and string values.
    kv: Vec<KvText>,
}

struct KvText {
    key: Vec<u8>,
    /// One per string (a scalar string, or each element of a string array).
    strings: Vec<Vec<u8>>,
}

/// `b` and a NUL, allocated without aborting (a file's strings may be as
/// large as the file).
fn nul_terminated(b: &[u8]) -> Result<Vec<u8>, CooError> {
    let mut v = try_vec(b.len().saturating_add(1), "a C copy of a file's string")?;
    v.extend_from_slice(b);
    v.push(0);
    Ok(v)
}

/// The NUL-terminated copies of `strings`, allocated without aborting.
fn nul_terminated_all<'s>(
    n: usize,
    strings: impl Iterator<Item = &'s [u8]>,
) -> Result<Vec<Vec<u8>>, CooError> {
    let mut v = try_vec(n, "the C copies of a file's strings")?;
    for s in strings {
        v.push(nul_terminated(s)?);
    }
    Ok(v)
}

impl hurray_file {
    fn new(file: HurrayFile) -> Result<hurray_file, CooError> {
        let t = file.tensors();
        let names = nul_terminated_all(t.len(), t.iter().map(|t| t.entry.name.as_bytes()))?;
        let mut kv = try_vec(file.kv().len(), "the file's KV entries")?;
        for (k, v) in file.kv() {
            let strings = match v {
                KvValue::String(s) => nul_terminated_all(1, std::iter::once(s.as_bytes()))?,
                KvValue::Array(KvArray::String(a)) => {
                    nul_terminated_all(a.len(), a.iter().map(|s| s.as_bytes()))?
                }
                _ => Vec::new(),
            };
            kv.push(KvText {
                key: nul_terminated(k.as_bytes())?,
                strings,
            });
        }
        Ok(hurray_file {
            file: Arc::new(file),
            names,
            kv,
        })
    }
}

/// What a file's index and a tensor's descriptor header say about one
/// tensor (of any layout). Pointers are owned by the hurray_file and valid
/// until hurray_file_close.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hurray_file_tensor {
    /// The tensor's name, NUL-terminated (name_len bytes before the NUL; a
    /// name may itself hold NUL bytes, so use name_len).
    pub name: *const c_char,
    /// The name's length in bytes.
    pub name_len: usize,
    /// The layout tag (0x06 COO, 0x07 CSR, 0x01 row-major, 0x0B composite
    /// head, ...); 0 when the descriptor's major version is not 1.
    pub layout_tag: u8,
    /// The element type tag.
    pub type_tag: u8,
    /// Whether hurray_file_get can hand this tensor out (a COO tensor).
    pub is_coo: bool,
    /// The rank.
    pub rank: u32,
    /// rank extents, or NULL when the rank is above 64 or unknown.
    pub shape: *const u64,
    /// The COO nnz (0 for other layouts).
    pub nnz: u64,
    /// Where the descriptor is in the file, and its length.
    pub descriptor_offset: u64,
    /// The descriptor's length in bytes.
    pub descriptor_length: u32,
    /// Where the data buffers start in the file.
    pub data_offset: u64,
    /// The data buffers' total length, padding between them included.
    pub data_length: u64,
}

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

/// # Safety
/// `file` is NULL or live.
unsafe fn open_file<'f>(file: *const hurray_file) -> Result<&'f hurray_file, CooError> {
    // SAFETY: forwarded contract.
    unsafe { live(file, "file") }
}

fn index_of(f: &hurray_file, i: u64, count: usize, what: &str) -> Result<usize, CooError> {
    usize::try_from(i)
        .ok()
        .filter(|&i| i < count)
        .ok_or_else(|| CooError::Container {
            status: crate::status::Status::NotFound,
            offset: f.file.container().trailer.index_offset,
            msg: format!("{what} {i} is out of range: the file holds {count}"),
        })
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

/// Open the Hurray file at path (NUL-terminated, not NULL) and check its
/// container: header, trailer, index CRC-32C, every index entry and KV entry,
/// where every tensor sits (inside the tensor region, aligned, not
/// overlapping, zero padding between), each descriptor's header agreeing
/// with the index. Tensor data is not read: each COO tensor is checked
/// when hurray_file_get hands it out.
///
/// flags: 0 maps the file read-only (zero-copy: handles read the page
/// cache in place), or HURRAY_FILE_READ_INTO_MEMORY reads it into library
/// memory. A mapped file must not be truncated or rewritten while the
/// hurray_file or any handle from it is alive: the process would read the
/// new bytes, or get SIGBUS for pages past a new end. Use
/// HURRAY_FILE_READ_INTO_MEMORY when the file may change.
///
/// out (not NULL) receives the open file, owned by the caller, to be
/// released with hurray_file_close; NULL on failure.
///
/// Returns HURRAY_OK, or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS,
/// HURRAY_ERR_IO (cannot open, read or map), HURRAY_ERR_INVALID_MAGIC (not
/// HRRYFILE, or no HRRY trailer: truncated or still being written),
/// HURRAY_ERR_TRUNCATED (shorter than 104 bytes), HURRAY_ERR_VERSION_MISMATCH,
/// HURRAY_ERR_RESERVED_BITS, HURRAY_ERR_CHECKSUM, HURRAY_ERR_MISALIGNED,
/// HURRAY_ERR_CORRUPT_FILE, HURRAY_ERR_UNSUPPORTED_FEATURE (a private KV
/// value tag), HURRAY_ERR_ALLOC, HURRAY_ERR_INTERNAL_PANIC. The message
/// gives the path and the byte offset of the problem.
///
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_open(
    path: *const c_char,
    flags: u32,
    out: *mut *mut hurray_file,
) -> hurray_status {
    guard(|| {
        // SAFETY: `out` is NULL or writable, per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        if flags & !HURRAY_FILE_READ_INTO_MEMORY != 0 {
            return Err(CooError::InvalidFlags {
                flags,
                unknown: flags & !HURRAY_FILE_READ_INTO_MEMORY,
                allowed: "hurray_file_open takes 0 or HURRAY_FILE_READ_INTO_MEMORY (0x1)",
            });
        }
        // SAFETY: NULL or NUL-terminated, per the contract.
        let path = unsafe { c_path(path) }?;
        let mode = match flags {
            0 => OpenMode::Map,
            _ => OpenMode::Read,
        };
        let file = HurrayFile::open(path, mode)?;
        let h = box_handle(hurray_file::new(file)?)?;
        // SAFETY: checked writable above.
        unsafe { write_opt(out, h) };
        Ok(())
    })
}

/// Check len bytes at bytes (NULL only when len is 0) as a Hurray file, as
/// hurray_file_open does, copying them into library memory (the caller's
/// bytes are read during the call only).
///
/// Returns HURRAY_OK or the statuses of hurray_file_open (but HURRAY_ERR_IO).
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_open_bytes(
    bytes_ptr: *const c_void,
    len: usize,
    out: *mut *mut hurray_file,
) -> hurray_status {
    guard(|| {
        // SAFETY: `out` is NULL or writable, per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        // SAFETY: len readable bytes at bytes_ptr, per the contract.
        let b = unsafe { bytes(bytes_ptr.cast(), len, "bytes") }?;
        let file = HurrayFile::from_bytes(b)?;
        let h = box_handle(hurray_file::new(file)?)?;
        // SAFETY: checked writable above.
        unsafe { write_opt(out, h) };
        Ok(())
    })
}

/// Close a file. NULL is a no-op. Handles got from it stay valid (each
/// keeps the mapping, or the memory, alive until its hurray_coo_free); the
/// pointers hurray_file_tensor_info and hurray_file_kv gave out do not.
///
/// Thread safety: any thread, once per file, not while another thread uses
/// the file.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_close(file: *mut hurray_file) {
    guard_value((), || {
        // SAFETY: NULL or live, freed once, per the contract.
        unsafe { free_handle(file) }
    })
}

/// The number of tensors in the file (of every layout), or 0 when file is
/// NULL.
/// Thread safety: safe on a shared file.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_tensor_count(file: *const hurray_file) -> u64 {
    guard_value(0, || {
        // SAFETY: NULL or live, per the contract.
        unsafe { open_file(file) }.map_or(0, |f| f.file.tensors().len() as u64)
    })
}

fn tensor_info(f: &hurray_file, i: usize) -> hurray_file_tensor {
    let t: &TensorEntry = &f.file.tensors()[i];
    let name = &f.names[i];
    hurray_file_tensor {
        name: name.as_ptr().cast(),
        name_len: name.len() - 1,
        layout_tag: t.layout_tag,
        type_tag: t.type_tag,
        is_coo: t.is_coo(),
        rank: t.rank,
        shape: if t.shape.is_empty() {
            std::ptr::null()
        } else {
            t.shape.as_ptr()
        },
        nnz: t.nnz.unwrap_or(0),
        descriptor_offset: t.entry.descriptor_offset,
        descriptor_length: t.entry.descriptor_length,
        data_offset: t.entry.data_offset,
        data_length: t.entry.data_length,
    }
}

/// Describe tensor i (0 to hurray_file_tensor_count - 1, in index order)
/// into *out (not NULL).
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_NOT_FOUND (i out
/// of range), HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared file.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_tensor_info(
    file: *const hurray_file,
    i: u64,
    out: *mut hurray_file_tensor,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or live, per the contract.
        let f = unsafe { open_file(file) }?;
        if out.is_null() {
            return Err(CooError::null("out"));
        }
        let i = index_of(f, i, f.file.tensors().len(), "tensor position")?;
        // SAFETY: non-null, writable per the contract.
        unsafe { write_opt(out, tensor_info(f, i)) };
        Ok(())
    })
}

/// The position of the tensor named name (NUL-terminated UTF-8, not NULL)
/// into *out_index (not NULL).
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_ARGUMENT
/// (name not UTF-8), HURRAY_ERR_NOT_FOUND (the message lists the names
/// there are), HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared file.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_find(
    file: *const hurray_file,
    name: *const c_char,
    out_index: *mut u64,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or live / NUL-terminated, per the contract.
        let (f, name) = unsafe { (open_file(file)?, c_str(name, "name")?) };
        let i = f.file.position(name)?;
        // SAFETY: NULL-checked by write_req.
        unsafe { write_req(out_index, i as u64, "out_index") }
    })
}

/// # Safety
/// `out` is non-null and writable.
unsafe fn get(
    f: &hurray_file,
    i: usize,
    flags: u32,
    out: *mut *mut hurray_coo,
) -> Result<(), CooError> {
    let (opts, one_based) = check_flags(flags)?;
    let keep = Arc::clone(&f.file);
    // SAFETY: the tensor borrows the file's bytes (a read-only map or a
    // library buffer, neither of which moves or changes while the
    // HurrayFile lives). The handle holds `keep`, a strong reference to that
    // HurrayFile, in a field declared after `coo`, so the bytes outlive
    // every use of the tensor, whatever happens to the hurray_file.
    let file: &'static HurrayFile = unsafe { &*Arc::as_ptr(&keep) };
    let (coo, desc) = file.coo(i, opts).map_err(|e| e.one_based(one_based))?;
    let h = box_handle(hurray_coo {
        coo,
        desc: Some(desc),
        one_based,
        _release: None,
        _file: Some(keep),
    })?;
    // SAFETY: per this function's contract.
    unsafe { write_opt(out, h) };
    Ok(())
}

/// Get the COO tensor named name (NUL-terminated UTF-8, not NULL) as a
/// handle. Its descriptor is checked as hurray_coo_from_descriptor checks
/// one; the index's data_length must match its buffers, which must sit at
/// the alignments declared, with zero padding; then the tensor is created
/// exactly as hurray_coo_create would with flags (validated completely
/// unless HURRAY_COO_PERMISSIVE).
///
/// Zero-copy by default: the handle reads the file's bytes in place (every
/// buffer of a Hurray file is aligned to at least 4096 bytes), and keeps the
/// mapping alive until hurray_coo_free, even after hurray_file_close. With
/// HURRAY_COO_COPY the buffers are copied. A shard or statistics section is
/// kept (hurray_coo_shard, hurray_coo_descriptor_statistics).
///
/// out (not NULL) receives the handle, owned by the caller, released with
/// hurray_coo_free; NULL on failure.
///
/// Returns HURRAY_OK, or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS,
/// HURRAY_ERR_INVALID_ARGUMENT (name not UTF-8), HURRAY_ERR_NOT_FOUND,
/// HURRAY_ERR_INVALID_LAYOUT (a tensor of another layout, named with its
/// layout), HURRAY_ERR_CORRUPT_FILE (data_length lies, padding not zero),
/// HURRAY_ERR_MISALIGNED, every status of hurray_coo_from_descriptor.
/// Messages name the tensor and the byte offset of its descriptor.
/// Thread safety: safe on a shared file; the handle is as any other.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_get(
    file: *const hurray_file,
    name: *const c_char,
    flags: u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    guard(|| {
        // SAFETY: `out` is NULL or writable, per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        // SAFETY: NULL or live / NUL-terminated, per the contract.
        let (f, name) = unsafe { (open_file(file)?, c_str(name, "name")?) };
        let i = f.file.position(name)?;
        // SAFETY: `out` checked above.
        unsafe { get(f, i, flags, out) }
    })
}

/// hurray_file_get by position i (0 to hurray_file_tensor_count - 1, in
/// index order): for names that are not NUL-free, or to walk a file.
///
/// Returns HURRAY_OK or the statuses of hurray_file_get.
/// Thread safety: safe on a shared file.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_get_at(
    file: *const hurray_file,
    i: u64,
    flags: u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    guard(|| {
        // SAFETY: `out` is NULL or writable, per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        // SAFETY: NULL or live, per the contract.
        let f = unsafe { open_file(file) }?;
        let i = index_of(f, i, f.file.tensors().len(), "tensor position")?;
        // SAFETY: `out` checked above.
        unsafe { get(f, i, flags, out) }
    })
}

/// Rows row_lo to row_hi - 1 of the sorted COO tensor named name
/// (NUL-terminated UTF-8, not NULL) as a shard handle (parent: the tensor,
/// offset: row_lo), reading only the entries of those rows (found by binary
/// search) and the one before them: the way each rank of a parallel job
/// reads its part of a large file. The part is copied (rows made local)
/// and validated completely; the entry before it must come before its
/// first. When every rank reads its row block, the whole tensor is checked,
/// each part once. flags: 0. out (not NULL) receives the handle, owned by
/// the caller; NULL on failure.
///
/// Returns HURRAY_OK, or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS,
/// HURRAY_ERR_NOT_FOUND, HURRAY_ERR_INVALID_LAYOUT,
/// HURRAY_ERR_INVALID_ARGUMENT (rows outside the tensor, a tensor that is
/// not sorted), HURRAY_ERR_NOT_SORTED, HURRAY_ERR_DUPLICATE,
/// HURRAY_ERR_INDEX_OUT_OF_BOUNDS (messages count the tensor's entries, at
/// its coordinates), the descriptor statuses of hurray_file_get,
/// HURRAY_ERR_ALLOC, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared file.
#[no_mangle]
pub unsafe extern "C" fn hurray_file_get_rows(
    file: *const hurray_file,
    name: *const c_char,
    row_lo: u64,
    row_hi: u64,
    flags: u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    guard(|| {
        // SAFETY: `out` is NULL or writable, per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        if flags != 0 {
            return Err(CooError::InvalidFlags {
                flags,
                unknown: flags,
                allowed: "hurray_file_get_rows takes 0",
            });
        }
        // SAFETY: NULL or live / NUL-terminated, per the contract.
        let (f, name) = unsafe { (open_file(file)?, c_str(name, "name")?) };
        let i = f.file.position(name)?;
        let coo = f.file.coo_rows(i, row_lo, row_hi)?;
        // SAFETY: `out` checked above.
        unsafe { super::handle::hand_out(coo, false, out) }
    })
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
        let known =
            HURRAY_FILE_SORTED_INDEX | HURRAY_FILE_STATISTICS_COUNTS | HURRAY_FILE_STATISTICS_FULL;
        let stats = flags & (HURRAY_FILE_STATISTICS_COUNTS | HURRAY_FILE_STATISTICS_FULL);
        if flags & !known != 0
            || stats == HURRAY_FILE_STATISTICS_COUNTS | HURRAY_FILE_STATISTICS_FULL
        {
            return Err(CooError::InvalidFlags {
                flags,
                unknown: flags & !known,
                allowed: "hurray_file_writer_create takes HURRAY_FILE_SORTED_INDEX (0x1) and at \
                          most one of HURRAY_FILE_STATISTICS_COUNTS (0x2) and \
                          HURRAY_FILE_STATISTICS_FULL (0x4)",
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
