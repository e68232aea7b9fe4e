//! The C ABI for reading Hurray files: open (mapped or read), list the
//! tensors, get COO handles that borrow the file. The KV metadata is in
//! `file_kv.rs`, the writer in `file_writer.rs`.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::flag_set;
use super::guard::{
    box_handle, bytes, c_path, c_str, free_handle, guard, guard_value, live, write_opt, write_req,
};
use super::handle::check_flags;
use super::{hurray_coo, hurray_status};
use crate::aligned::try_vec;
use crate::error::CooError;
use crate::io::file::{HurrayFile, KvArray, KvValue, OpenMode, TensorEntry};

/// hurray_file_open flag: read the whole file into library memory instead
/// of mapping it (for files that may change while open, or file systems
/// where mapping is unreliable).
pub const HURRAY_FILE_READ_INTO_MEMORY: u32 = 1;

/// An open Hurray file. Open it with hurray_file_open, close it with
/// hurray_file_close. Immutable: every function taking a const hurray_file *
/// may be called from many threads at once.
pub struct hurray_file {
    pub(super) file: Arc<HurrayFile>,
    /// NUL-terminated tensor names, in index order.
    pub(super) names: Vec<Vec<u8>>,
    /// NUL-terminated copies of KV keys and string values.
    pub(super) kv: Vec<KvText>,
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

/// # Safety
/// `file` is NULL or live.
pub(super) unsafe fn open_file<'f>(file: *const hurray_file) -> Result<&'f hurray_file, CooError> {
    // SAFETY: forwarded contract.
    unsafe { live(file, "file") }
}

pub(super) fn index_of(
    f: &hurray_file,
    i: u64,
    count: usize,
    what: &str,
) -> Result<usize, CooError> {
    usize::try_from(i)
        .ok()
        .filter(|&i| i < count)
        .ok_or_else(|| CooError::Container {
            status: crate::status::Status::NotFound,
            offset: f.file.container().trailer.index_offset,
            msg: format!("{what} {i} is out of range: the file holds {count}"),
        })
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
        flag_set!("hurray_file_open": HURRAY_FILE_READ_INTO_MEMORY).check(flags)?;
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
    let h = hurray_coo {
        coo,
        desc: Some(desc),
        one_based,
        _release: None,
        _file: Some(keep),
        probe: Default::default(),
    }
    .boxed()?;
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
        flag_set!("hurray_file_get_rows":).check(flags)?;
        // SAFETY: NULL or live / NUL-terminated, per the contract.
        let (f, name) = unsafe { (open_file(file)?, c_str(name, "name")?) };
        let i = f.file.position(name)?;
        let coo = f.file.coo_rows(i, row_lo, row_hi)?;
        // SAFETY: `out` checked above.
        unsafe { super::handle::hand_out(coo, false, out) }
    })
}

/// The NUL-terminated copies of one KV entry's key and strings, kept by
/// the hurray_file so that the hurray_kv pointers stay valid until close.
pub(super) struct KvText {
    pub(super) key: Vec<u8>,
    /// One per string (a scalar string, or each element of a string array).
    pub(super) strings: Vec<Vec<u8>>,
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
