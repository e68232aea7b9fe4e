//! Matrix Market (`.mtx`) and FROSTT (`.tns`) files, gzip-compressed or
//! not: read from a path, a memory buffer or the caller's read callback
//! into a canonical handle, write a handle to a path or into caller memory.

use std::ffi::{c_char, c_void};
use std::path::Path;

use super::assemble::{
    duplicates, index_type, HURRAY_ASSEMBLE_DROP_ZEROS, HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT,
};
use super::convert::{compressed_out, format, hurray_compressed};
use super::flag_set;
use super::guard::{
    bytes, c_path, guard, handle, read_sized, read_struct, read_u64s, write_bytes, write_opt,
    write_req,
};
use super::handle::hand_out;
use super::{hurray_coo, hurray_status};
use crate::assemble::AssembleOptions;
use crate::coo::{check_rank, Coo};
use crate::error::CooError;
use crate::io::mtx::{self, MtxSymmetry};
use crate::io::{text, tns, TextOptions, WriteOptions};

/// Reading flag: keep the stored triangle of a symmetric, skew-symmetric
/// or hermitian Matrix Market file as it is, instead of adding the mirror
/// image of every off-diagonal entry (*out_symmetry tells what the file
/// declared).
pub const HURRAY_TEXT_KEEP_TRIANGULAR: u32 = 0x10;

/// Writing flag (Matrix Market): the handle holds a whole symmetric
/// matrix; write its lower triangle under a `symmetric` banner, half the
/// size. Refused with HURRAY_ERR_INVALID_ARGUMENT, naming the first entry
/// and its mirror image, when the matrix is not exactly symmetric.
pub const HURRAY_TEXT_WRITE_SYMMETRIC: u32 = 0x20;
/// Writing flag (Matrix Market): as HURRAY_TEXT_WRITE_SYMMETRIC for a
/// skew-symmetric matrix (a(j,i) = -a(i,j), no diagonal entries stored):
/// the strict lower triangle is written.
pub const HURRAY_TEXT_WRITE_SKEW_SYMMETRIC: u32 = 0x40;
/// Writing flag (Matrix Market): as HURRAY_TEXT_WRITE_SYMMETRIC for a
/// hermitian matrix (complex values, a(j,i) = conj(a(i,j)), a real
/// diagonal).
pub const HURRAY_TEXT_WRITE_HERMITIAN: u32 = 0x80;
/// Writing flag (Matrix Market): write the coordinates alone (field
/// `pattern`), whatever the values; with a symmetry flag, only the
/// structure must be symmetric.
pub const HURRAY_TEXT_WRITE_PATTERN: u32 = 0x100;

/// Writing flag (Matrix Market): write the matrix dense (format `array`):
/// every value column by column, zeros included (with a symmetry flag, the
/// lower triangle's columns). Not with HURRAY_TEXT_WRITE_PATTERN.
pub const HURRAY_TEXT_WRITE_ARRAY: u32 = 0x200;

/// Matrix Market symmetry: every entry is stored.
pub const HURRAY_MTX_GENERAL: u32 = 0;
/// Matrix Market symmetry: a(j,i) = a(i,j); the lower triangle is stored.
pub const HURRAY_MTX_SYMMETRIC: u32 = 1;
/// Matrix Market symmetry: a(j,i) = -a(i,j); the strict lower triangle is
/// stored.
pub const HURRAY_MTX_SKEW_SYMMETRIC: u32 = 2;
/// Matrix Market symmetry: a(j,i) = conj(a(i,j)); the lower triangle is
/// stored.
pub const HURRAY_MTX_HERMITIAN: u32 = 3;

/// hurray_coo_read_stream: the stream holds a Matrix Market file.
pub const HURRAY_TEXT_MTX: u32 = 1;
/// hurray_coo_read_stream: the stream holds a FROSTT file.
pub const HURRAY_TEXT_TNS: u32 = 2;

/// The largest precision the writers take (significant digits).
pub const HURRAY_TEXT_MAX_PRECISION: u32 = 17;
const _: () = assert!(HURRAY_TEXT_MAX_PRECISION as usize == crate::io::MAX_PRECISION);

/// How the text readers and writers work. Set size to
/// sizeof(hurray_text_options) and the rest to 0 for the defaults
/// (HURRAY_DUP_ERROR, no flags, the calling thread, shortest round-trip
/// numbers); NULL options are the defaults. The struct may grow at its end.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hurray_text_options {
    /// sizeof(hurray_text_options), as the caller's header has it.
    pub size: usize,
    /// Reading: HURRAY_DUP_* for entries with the same coordinates
    /// (HURRAY_DUP_ERROR names both lines).
    pub duplicates_policy: u32,
    /// Reading: 0 or any of HURRAY_ASSEMBLE_DROP_ZEROS and
    /// HURRAY_TEXT_KEEP_TRIANGULAR (Matrix Market only); for
    /// hurray_read_mtx_compressed and its _size also
    /// HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT (the other readers refuse it with
    /// HURRAY_ERR_INVALID_FLAGS).
    pub flags: u32,
    /// Reading and writing: as every threads argument (HURRAY_MAX_THREADS);
    /// entry lines are parsed in chunks of at least a MiB and the assembly
    /// splits as hurray_coo_assemble does; written text at least 65536
    /// entries per thread; the result is the same.
    pub threads: u32,
    /// Writing: 0 writes each real value as the shortest text that reads
    /// back to the same value; 1 to HURRAY_TEXT_MAX_PRECISION that many
    /// significant digits.
    pub precision: u32,
    /// Reading: 0 for the file's own value type (float64, int64,
    /// complex128, bool), else the HURRAY_TYPE_* of any real or integer
    /// type to read the values into (float64 from an integer or pattern
    /// file, float32, int32...). Duplicates combine in the file's type;
    /// every value must then fit exactly (never rounded or clamped), else
    /// HURRAY_ERR_OVERFLOW names the first entry that does not. Pattern
    /// entries are 1.
    pub value_type: u32,
}

/// The caller's text options, or the defaults for NULL.
///
/// # Safety
/// `o` is NULL or a hurray_text_options of the size it declares.
unsafe fn text_options(o: *const hurray_text_options) -> Result<hurray_text_options, CooError> {
    let defaults = hurray_text_options {
        size: std::mem::size_of::<hurray_text_options>(),
        duplicates_policy: 0,
        flags: 0,
        threads: 1,
        precision: 0,
        value_type: 0,
    };
    // SAFETY: per this function's contract.
    Ok(unsafe { read_sized(o, "options", "hurray_text_options") }?.unwrap_or(defaults))
}

/// A value type the readers can hand back, checked before anything is read.
fn value_type(t: u32) -> Result<u8, CooError> {
    u8::try_from(t)
        .ok()
        .and_then(crate::element::types::type_info)
        .filter(|ty| crate::element::cast::is_target(ty))
        .map(|ty| ty.tag)
        .ok_or_else(|| CooError::OutOfRange {
            what: "options->value_type",
            value: u64::from(t),
            allowed: "0 (the file's own type) or the HURRAY_TYPE_* of a real or integer type"
                .into(),
        })
}

/// Which reader the options are for: only the read into the caller's
/// arrays can lend their room to the assembly.
#[derive(Clone, Copy)]
enum ReadInto {
    Handle,
    Arrays,
}

fn read_options(o: &hurray_text_options, into: ReadInto) -> Result<TextOptions, CooError> {
    let (policy, flags, threads) = (o.duplicates_policy, o.flags, o.threads);
    match into {
        ReadInto::Handle => flag_set!("reading a text file into a handle":
            HURRAY_ASSEMBLE_DROP_ZEROS,
            HURRAY_TEXT_KEEP_TRIANGULAR,
        ),
        ReadInto::Arrays => flag_set!("reading a Matrix Market file into CSR/CSC arrays":
            HURRAY_ASSEMBLE_DROP_ZEROS,
            HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT,
            HURRAY_TEXT_KEEP_TRIANGULAR,
        ),
    }
    .check(flags)?;
    Ok(TextOptions {
        assemble: AssembleOptions {
            duplicates: duplicates(policy)?,
            drop_zeros: flags & HURRAY_ASSEMBLE_DROP_ZEROS != 0,
            threads: threads as usize,
            skip_plan: true,
            scratch_in_output: flags & HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT != 0,
            ..Default::default()
        },
        keep_triangular: flags & HURRAY_TEXT_KEEP_TRIANGULAR != 0,
        value_type: match o.value_type {
            0 => None,
            t => Some(value_type(t)?),
        },
    })
}

/// The writing options and the symmetry to write with. Reading flags are
/// accepted and ignored, so one options value serves both directions.
fn write_options(o: &hurray_text_options) -> Result<(WriteOptions, MtxSymmetry), CooError> {
    let flags = flag_set!("writing a text file":
        HURRAY_ASSEMBLE_DROP_ZEROS,
        HURRAY_TEXT_KEEP_TRIANGULAR,
        HURRAY_TEXT_WRITE_SYMMETRIC,
        HURRAY_TEXT_WRITE_SKEW_SYMMETRIC,
        HURRAY_TEXT_WRITE_HERMITIAN,
        HURRAY_TEXT_WRITE_PATTERN,
        HURRAY_TEXT_WRITE_ARRAY,
    )
    .check(o.flags)?;
    let kinds = [
        (HURRAY_TEXT_WRITE_SYMMETRIC, MtxSymmetry::Symmetric),
        (HURRAY_TEXT_WRITE_SKEW_SYMMETRIC, MtxSymmetry::SkewSymmetric),
        (HURRAY_TEXT_WRITE_HERMITIAN, MtxSymmetry::Hermitian),
    ];
    let mut chosen = kinds.iter().filter(|(f, _)| flags & f != 0);
    let symmetry = match (chosen.next(), chosen.next()) {
        (None, _) => MtxSymmetry::General,
        (Some(&(_, s)), None) => s,
        (Some(_), Some(_)) => {
            return Err(CooError::Argument(
                "flags hold more than one of HURRAY_TEXT_WRITE_SYMMETRIC, \
                 HURRAY_TEXT_WRITE_SKEW_SYMMETRIC and HURRAY_TEXT_WRITE_HERMITIAN; a file has \
                 one symmetry"
                    .into(),
            ))
        }
    };
    let w = WriteOptions {
        precision: (o.precision != 0).then_some(o.precision as usize),
        threads: o.threads as usize,
        pattern: flags & HURRAY_TEXT_WRITE_PATTERN != 0,
        array: flags & HURRAY_TEXT_WRITE_ARRAY != 0,
    };
    Ok((w, symmetry))
}

/// FROSTT has no symmetry to declare.
fn write_tns(
    coo: &Coo<'_>,
    s: MtxSymmetry,
    o: &WriteOptions,
    out: &mut Vec<u8>,
) -> Result<(), CooError> {
    if s != MtxSymmetry::General {
        return Err(CooError::Argument(
            "a FROSTT file declares no symmetry; the HURRAY_TEXT_WRITE_* symmetry flags are for \
             Matrix Market"
                .into(),
        ));
    }
    tns::write_tns(coo, o, out)
}

/// Where a reader's text comes from.
enum Source<'a> {
    Memory(&'a [u8]),
    File(&'a Path),
    /// A stream's text, read whole.
    Stream(Vec<u8>),
}

impl Source<'_> {
    fn read<T>(&self, parse: impl FnOnce(&[u8]) -> Result<T, CooError>) -> Result<T, CooError> {
        match self {
            Source::Memory(b) => parse(b),
            Source::Stream(b) => parse(b),
            Source::File(p) => {
                let b = text::read_text_file(p, crate::io::gzip::QUIET)?;
                parse(&b).map_err(|e| text::in_file(p, e))
            }
        }
    }
}

fn symmetry_code(s: MtxSymmetry) -> u32 {
    match s {
        MtxSymmetry::General => HURRAY_MTX_GENERAL,
        MtxSymmetry::Symmetric => HURRAY_MTX_SYMMETRIC,
        MtxSymmetry::SkewSymmetric => HURRAY_MTX_SKEW_SYMMETRIC,
        MtxSymmetry::Hermitian => HURRAY_MTX_HERMITIAN,
    }
}

/// # Safety
/// As hurray_coo_read_mtx.
unsafe fn read_mtx_from<'s>(
    src: impl FnOnce() -> Result<Source<'s>, CooError>,
    options: *const hurray_text_options,
    out_symmetry: *mut u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL-checked; writable per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        // SAFETY: NULL or the caller's options, per the contract.
        let o = read_options(&unsafe { text_options(options) }?, ReadInto::Handle)?;
        let (coo, h) = match src()? {
            // The file reader drops the text before it assembles.
            Source::File(p) => mtx::read_mtx_file(p, &o)?,
            memory => memory.read(|b| mtx::read_mtx(b, &o))?,
        };
        // SAFETY: NULL or writable per the contract.
        unsafe { write_opt(out_symmetry, symmetry_code(h.symmetry)) };
        // SAFETY: out checked non-NULL above; a handle read from a file
        // counts from 1 in its later messages, as the file does.
        unsafe { hand_out(coo, true, out) }
    })
}

/// Read a Matrix Market file held in memory (len bytes at bytes) into a new,
/// library-owned, canonical handle (sorted, duplicate-free, validated; its
/// later messages count from 1, as the file does).
///
/// Reads coordinate and array matrices of real (float64), integer (int64),
/// complex (complex128) and pattern (bool, every entry true) values;
/// symmetric, skew-symmetric and hermitian files get the mirror image of
/// each off-diagonal entry (same value, negated, conjugated) unless flags
/// has HURRAY_TEXT_KEEP_TRIANGULAR. Indices count from 1 in the file and
/// from 0 in the handle. Array files keep every entry, zeros included,
/// unless flags has HURRAY_ASSEMBLE_DROP_ZEROS. Comment lines may hold any
/// bytes (Latin-1 in an old file's header); every other line is UTF-8.
///
/// The text may be gzip-compressed (matrix.mtx.gz), recognised by its magic
/// bytes whatever a file is called; concatenated members read as one text,
/// and gzip data that does not decompress (a bad CRC, cut short) is
/// HURRAY_ERR_IO, never a tensor.
///
/// options: NULL for the defaults, else the duplicate policy, the flags
/// (HURRAY_ASSEMBLE_DROP_ZEROS, HURRAY_TEXT_KEEP_TRIANGULAR) and the threads
/// of hurray_text_options. out_symmetry (may be NULL): receives HURRAY_MTX_* as the
/// banner declares. out (not NULL): the handle, released with
/// hurray_coo_free; NULL on failure, and nothing half-built is returned.
/// bytes is read during the call only.
///
/// Every problem names its line, column and token, e.g. "line 7, column 3:
/// column index out of range: the matrix has 4 columns, counted from 1
/// (found '5')".
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS
/// (flags), HURRAY_ERR_INVALID_ARGUMENT (policy, options->size), HURRAY_ERR_PARSE,
/// HURRAY_ERR_DUPLICATE,
/// HURRAY_ERR_OVERFLOW (an integer SUM), HURRAY_ERR_IO (gzip data that
/// does not decompress), HURRAY_ERR_ALLOC, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_read_mtx(
    bytes_ptr: *const c_void,
    len: usize,
    options: *const hurray_text_options,
    out_symmetry: *mut u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    // SAFETY: as documented: len readable bytes at bytes_ptr during the call.
    unsafe {
        read_mtx_from(
            || Ok(Source::Memory(bytes(bytes_ptr, len, "bytes")?)),
            options,
            out_symmetry,
            out,
        )
    }
}

/// Read the Matrix Market file at path (a NUL-terminated file name, not
/// NULL) exactly as hurray_coo_read_mtx reads a buffer, gzip-compressed or
/// not; messages start with the path ("path: line 7, column 3: ..."). A
/// coordinate file larger than 32 MiB is read and parsed 32 MiB at a time
/// (decompressed as it is read when gzip), so its text is never held whole
/// beside the entries.
///
/// Returns HURRAY_OK, HURRAY_ERR_IO when the file cannot be opened or read
/// (the message has the system's reason), or any status of
/// hurray_coo_read_mtx.
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_read_mtx_file(
    path: *const c_char,
    options: *const hurray_text_options,
    out_symmetry: *mut u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    // SAFETY: path is NULL or NUL-terminated, per the contract.
    unsafe {
        read_mtx_from(
            || Ok(Source::File(c_path(path)?)),
            options,
            out_symmetry,
            out,
        )
    }
}

/// Set c->offsets_bytes, c->indices_bytes and c->values_bytes (c not NULL;
/// c->format and c->index_type are read, nothing else) to the room
/// hurray_read_mtx_compressed needs to read the Matrix Market file at path
/// (NUL-terminated, not NULL) with these options (NULL for the defaults):
/// (rows or columns) + 1 offsets exactly; indices and values for the most
/// entries the file can give (the size line's count, twice that when a
/// symmetric, skew-symmetric or hermitian file is mirrored), which always
/// suffices. Only the banner and the size line are read (decompressed, when
/// gzip); an entry line is not checked until the read.
///
/// out_shape (may be NULL): receives rows and columns (2 values).
/// out_type_tag (may be NULL): receives the HURRAY_TYPE_* the values will
/// have (options->value_type, or the file's own: float64, int64,
/// complex128, bool for pattern).
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER (path, c),
/// HURRAY_ERR_INVALID_ARGUMENT (format, index type, options),
/// HURRAY_ERR_INVALID_FLAGS, HURRAY_ERR_PARSE (the banner or the size line),
/// HURRAY_ERR_OVERFLOW (a size that does not fit), HURRAY_ERR_IO,
/// HURRAY_ERR_ALLOC, HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_read_mtx_compressed_size(
    path: *const c_char,
    options: *const hurray_text_options,
    c: *mut hurray_compressed,
    out_shape: *mut u64,
    out_type_tag: *mut u8,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL or the caller's options / struct, per the contract.
        let (o, mut k) = unsafe {
            (
                read_options(&text_options(options)?, ReadInto::Arrays)?,
                read_struct(c.cast_const(), "c")?,
            )
        };
        let (format, it) = (format(k.format)?, index_type(k.index_type)?);
        // SAFETY: path is NULL or NUL-terminated, per the contract.
        let path = unsafe { c_path(path) }?;
        let size = mtx::mtx_file_size(path, &o)?;
        let room = size.room(format, it)?;
        let usz = |v: u64| crate::element::size::to_usize(v, "a read's size");
        (k.offsets_bytes, k.indices_bytes, k.values_bytes) =
            (usz(room.offsets)?, usz(room.indices)?, usz(room.values)?);
        // SAFETY: non-NULL (read above) and writable, per the contract.
        unsafe { write_opt(c, k) };
        if !out_shape.is_null() {
            // SAFETY: two writable u64s at a non-NULL out_shape, per the
            // contract.
            unsafe { std::slice::from_raw_parts_mut(out_shape, 2) }
                .copy_from_slice(&[size.rows, size.cols]);
        }
        // SAFETY: NULL or writable, per the contract.
        unsafe { write_opt(out_type_tag, size.type_tag) };
        Ok(())
    })
}

/// Read the Matrix Market file at path (NUL-terminated, not NULL) as
/// hurray_coo_read_mtx_file reads it (the same lines, checks, duplicate
/// policy, mirror images, value type and errors) straight into the
/// caller's CSR or CSC arrays, as hurray_coo_export_compressed would write
/// that handle, without the handle in between (scipy's
/// mmread(path).tocsr()).
///
/// options (may be NULL): as hurray_coo_read_mtx_file. c (not NULL, read
/// during the call): format, index_type and base as
/// hurray_coo_export_compressed has them; offsets exactly (rows or
/// columns) + 1 of c->index_type; indices and values with room for at
/// least the result's entries: what hurray_read_mtx_compressed_size
/// reports always suffices, and untouched memory past the result is never
/// written, so an over-sized malloc costs no more than the pages used. For
/// a pattern file read as bool, values may be NULL with 0 bytes: then none
/// are written (every entry is true). The arrays are the caller's, written
/// during the call only; on failure their contents are unspecified.
///
/// out_nnz (not NULL): receives the number of entries; 0 on failure.
/// out_symmetry (may be NULL): receives HURRAY_MTX_* as the banner
/// declares.
///
/// Memory and speed: a general real or integer file whose entry lines
/// are already in the arrays' order (row by row, columns increasing, for
/// CSR; column by column for CSC), read in its own type with zeros kept,
/// into 8-byte-aligned arrays (as malloc gives), is parsed 4 MiB at a time
/// straight into them: no other memory in proportion to the file (with 2
/// or more threads and an uncompressed file, each half of the text is read
/// on a thread of its own; the second half's entries are written into
/// arrays of their own, up to 16 bytes per entry, then copied). A
/// symmetric real or integer file whose lower triangle is so ordered is
/// read the same way, its stored entries kept (16 bytes each) and counted
/// per row or column, then written with their mirror images. Any
/// other file (or one whose order breaks; a file in another order is seen
/// within its first 4 MiB) is read again from its start as follows: the
/// parsed entries take 24 bytes each while they are assembled (mirror
/// images included), plus the assembly's scratch (8 to 12 bytes per
/// entry; none with HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT in options->flags
/// when its conditions hold, the room in c->indices and c->values past the
/// result then serving instead, its bytes unspecified after the call); the
/// text is read 32 MiB at a time. The result and errors are the same
/// either way.
///
/// Returns HURRAY_OK or: any status of hurray_coo_read_mtx_file,
/// HURRAY_ERR_INVALID_ARGUMENT (format, index type, base; two of c's
/// non-empty arrays sharing memory),
/// HURRAY_ERR_BUFFER_SIZE (offsets not exactly (rows or columns) + 1),
/// HURRAY_ERR_BUFFER_TOO_SMALL (indices or values without room for the
/// result; the message gives the entry count and the bytes needed),
/// HURRAY_ERR_OVERFLOW (the largest index, or nnz + base, does not fit
/// c->index_type).
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_read_mtx_compressed(
    path: *const c_char,
    options: *const hurray_text_options,
    c: *const hurray_compressed,
    out_nnz: *mut u64,
    out_symmetry: *mut u32,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL-checked by write_req; writable per the contract.
        unsafe { write_req(out_nnz, 0, "out_nnz")? };
        // SAFETY: NULL or the caller's options, per the contract.
        let o = read_options(&unsafe { text_options(options) }?, ReadInto::Arrays)?;
        // SAFETY: NULL or a caller's struct whose arrays are writable, per
        // the contract.
        let out = unsafe { compressed_out(c) }?;
        // SAFETY: path is NULL or NUL-terminated, per the contract.
        let path = unsafe { c_path(path) }?;
        let (nnz, h) = mtx::read_mtx_file_compressed(path, &o, out)?;
        // SAFETY: checked non-NULL above / NULL or writable, per the contract.
        unsafe {
            write_opt(out_nnz, nnz);
            write_opt(out_symmetry, symmetry_code(h.symmetry));
        }
        Ok(())
    })
}

/// # Safety
/// As hurray_coo_read_tns.
unsafe fn read_tns_from<'s>(
    src: impl FnOnce() -> Result<Source<'s>, CooError>,
    shape: *const u64,
    rank: u32,
    options: *const hurray_text_options,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    guard(|| {
        // SAFETY: NULL-checked; writable per the contract.
        unsafe { write_req(out, std::ptr::null_mut(), "out")? };
        // SAFETY: NULL or the caller's options, per the contract.
        let o = read_options(&unsafe { text_options(options) }?, ReadInto::Handle)?;
        let given = if rank == 0 && shape.is_null() {
            None
        } else {
            check_rank(rank)?;
            // SAFETY: rank readable u64s at shape, per the contract.
            Some(unsafe { read_u64s(shape, rank, "shape") }?)
        };
        let coo = src()?.read(|b| tns::read_tns(b, given.as_ref().map(|s| s.as_slice()), &o))?;
        // SAFETY: out checked non-NULL above; a handle read from a file
        // counts from 1 in its later messages, as the file does.
        unsafe { hand_out(coo, true, out) }
    })
}

/// Read a FROSTT tensor (.tns: one entry per line, its coordinates counted
/// from 1 and then its value; '#' starts a comment) held in memory into a
/// new, library-owned, canonical float64 handle.
///
/// shape, rank: the tensor's extents (rank values, every coordinate checked
/// against them), or NULL and 0 to take the rank from the first entry and
/// each extent as the largest coordinate of its mode. options (flags:
/// HURRAY_ASSEMBLE_DROP_ZEROS only matters here), out: as in
/// hurray_coo_read_mtx. bytes and shape are read during the call only. As
/// there, the text may be gzip-compressed and comment lines may hold any
/// bytes.
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS,
/// HURRAY_ERR_INVALID_RANK, HURRAY_ERR_INVALID_SHAPE, HURRAY_ERR_PARSE (line,
/// column, token), HURRAY_ERR_DUPLICATE (both lines), HURRAY_ERR_ALLOC,
/// HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_read_tns(
    bytes_ptr: *const c_void,
    len: usize,
    shape: *const u64,
    rank: u32,
    options: *const hurray_text_options,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    // SAFETY: as documented: len readable bytes at bytes_ptr during the call.
    unsafe {
        read_tns_from(
            || Ok(Source::Memory(bytes(bytes_ptr, len, "bytes")?)),
            shape,
            rank,
            options,
            out,
        )
    }
}

/// Read the FROSTT file at path (NUL-terminated, not NULL) exactly as
/// hurray_coo_read_tns reads a buffer; messages start with the path.
///
/// Returns HURRAY_OK, HURRAY_ERR_IO, or any status of hurray_coo_read_tns.
/// Thread safety: may be called from any thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_read_tns_file(
    path: *const c_char,
    shape: *const u64,
    rank: u32,
    options: *const hurray_text_options,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    // SAFETY: path is NULL or NUL-terminated, per the contract.
    unsafe {
        read_tns_from(
            || Ok(Source::File(c_path(path)?)),
            shape,
            rank,
            options,
            out,
        )
    }
}

/// The caller's read callback for hurray_coo_read_stream: copy up to len
/// bytes of the stream into buf and return how many (0 only at the end of
/// the stream), or a negative value on failure. It is called on the
/// calling thread only, never after hurray_coo_read_stream returns.
pub type hurray_read_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, buf: *mut c_void, len: usize) -> isize>;

/// The caller's callback as a reader.
struct Callback {
    f: unsafe extern "C" fn(*mut c_void, *mut c_void, usize) -> isize,
    user: *mut c_void,
    total: u64,
}

impl std::io::Read for Callback {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // SAFETY: the caller's callback, given a writable buffer of
        // buf.len() bytes; its contract writes at most that many.
        let n = unsafe { (self.f)(self.user, buf.as_mut_ptr().cast(), buf.len()) };
        let at = self.total;
        match usize::try_from(n) {
            Err(_) => Err(std::io::Error::other(format!(
                "the read callback returned {n} (failure) after {at} bytes"
            ))),
            Ok(k) if k > buf.len() => Err(std::io::Error::other(format!(
                "the read callback returned {k} for a buffer of {} bytes, after {at} bytes",
                buf.len()
            ))),
            Ok(k) => {
                self.total += k as u64;
                Ok(k)
            }
        }
    }
}

/// The whole text of the caller's stream.
fn stream_text(read: hurray_read_fn, user: *mut c_void) -> Result<Vec<u8>, CooError> {
    let f = read.ok_or(CooError::null("read"))?;
    let r = Callback { f, user, total: 0 };
    crate::io::fsutil::read_all(r, 1 << 20, "the stream's text", |e| {
        CooError::Io(format!(
            "the stream: cannot read: {}",
            crate::io::fsutil::reason(&e)
        ))
    })
}

/// Read a Matrix Market (format HURRAY_TEXT_MTX) or FROSTT
/// (HURRAY_TEXT_TNS) file from the caller's stream (a pipe, a socket, a
/// FILE*, a decompressor): read(user, buf, len) is called until it returns
/// 0, and the text, gzip-compressed or not, is then read exactly as
/// hurray_coo_read_mtx and hurray_coo_read_tns read a buffer. The whole
/// text is held during the call (a file path lets hurray_coo_read_mtx_file
/// read it in pieces instead).
///
/// read (not NULL), user (passed to read as it is, may be NULL). shape,
/// rank: for HURRAY_TEXT_TNS as in hurray_coo_read_tns; NULL and 0 for
/// HURRAY_TEXT_MTX. options, out_symmetry (HURRAY_MTX_GENERAL for FROSTT),
/// out: as in hurray_coo_read_mtx.
///
/// Returns HURRAY_OK, HURRAY_ERR_IO when read fails (returns a negative
/// value) or claims more bytes than it was given room for (the message
/// says after how many bytes), HURRAY_ERR_INVALID_ARGUMENT (format, a
/// shape for Matrix Market), or any status of hurray_coo_read_mtx and
/// hurray_coo_read_tns.
/// Thread safety: may be called from any thread; read runs on that thread.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_read_stream(
    read: hurray_read_fn,
    user: *mut c_void,
    format: u32,
    shape: *const u64,
    rank: u32,
    options: *const hurray_text_options,
    out_symmetry: *mut u32,
    out: *mut *mut hurray_coo,
) -> hurray_status {
    let src = || Ok(Source::Stream(stream_text(read, user)?));
    match format {
        HURRAY_TEXT_MTX if shape.is_null() && rank == 0 => {
            // SAFETY: as documented for hurray_coo_read_mtx.
            unsafe { read_mtx_from(src, options, out_symmetry, out) }
        }
        HURRAY_TEXT_TNS => {
            // SAFETY: NULL or writable, per the contract.
            unsafe { write_opt(out_symmetry, HURRAY_MTX_GENERAL) };
            // SAFETY: as documented for hurray_coo_read_tns.
            unsafe { read_tns_from(src, shape, rank, options, out) }
        }
        _ => guard(|| {
            // SAFETY: NULL-checked; writable per the contract.
            unsafe { write_req(out, std::ptr::null_mut(), "out")? };
            Err(match format {
                HURRAY_TEXT_MTX => CooError::Argument(
                    "a Matrix Market file says its own shape: pass NULL and 0 for shape and rank"
                        .into(),
                ),
                _ => CooError::OutOfRange {
                    what: "format",
                    value: format as u64,
                    allowed: "HURRAY_TEXT_MTX (1) or HURRAY_TEXT_TNS (2)".into(),
                },
            })
        }),
    }
}

type Writer = fn(&Coo<'_>, MtxSymmetry, &WriteOptions, &mut Vec<u8>) -> Result<(), CooError>;

/// # Safety
/// As hurray_coo_write_mtx.
unsafe fn write_to_memory(
    w: Writer,
    coo: *const hurray_coo,
    options: *const hurray_text_options,
    out: *mut c_void,
    capacity: usize,
    out_written: *mut usize,
) -> hurray_status {
    guard(|| {
        // SAFETY: `coo` is NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        if out_written.is_null() {
            return Err(CooError::null("out_written"));
        }
        // SAFETY: NULL or the caller's options, per the contract.
        let (o, s) = write_options(&unsafe { text_options(options) }?)?;
        let mut text = Vec::new();
        w(&h.coo, s, &o, &mut text).map_err(|e| h.err(e))?;
        // SAFETY: NULL-checked above; writable per the contract.
        unsafe { write_opt(out_written, text.len()) };
        if capacity < text.len() {
            return Err(CooError::BufferTooSmall {
                what: "the text output buffer",
                got: capacity,
                needed: text.len(),
                why: String::new(),
            });
        }
        if text.is_empty() {
            return Ok(());
        }
        if out.is_null() {
            return Err(CooError::null("out"));
        }
        // SAFETY: out is non-null and writable for capacity >= len bytes.
        unsafe { write_bytes(out.cast(), &text) };
        Ok(())
    })
}

/// # Safety
/// As hurray_coo_write_mtx_file.
unsafe fn write_to_file(
    w: Writer,
    coo: *const hurray_coo,
    path: *const c_char,
    options: *const hurray_text_options,
) -> hurray_status {
    guard(|| {
        // SAFETY: `coo` is NULL or live, per the contract.
        let h = unsafe { handle(coo) }?;
        // SAFETY: path is NULL or NUL-terminated, per the contract.
        let path = unsafe { c_path(path) }?;
        // SAFETY: NULL or the caller's options, per the contract.
        let (o, s) = write_options(&unsafe { text_options(options) }?)?;
        let mut text = Vec::new();
        w(&h.coo, s, &o, &mut text).map_err(|e| h.err(e))?;
        text::write_file(path, &text)
    })
}

/// Write coo (rank 2) as a Matrix Market coordinate file into out:
/// float types as real, integer types as integer, complex as complex, bool
/// as pattern when every value is true (an assembled pattern) and as
/// integer 0/1 otherwise; entries in the handle's order, counted from 1.
/// The banner says general unless a symmetry flag asks for symmetric,
/// skew-symmetric or hermitian (then the handle is the whole matrix, it
/// must have that symmetry exactly, and its lower triangle is written).
/// uint64 values above INT64_MAX are refused (readers take integers as
/// int64), naming the entry.
///
/// options: NULL for the defaults, else the precision (0: each real value
/// as the shortest text that reads back to the same value; 1 to
/// HURRAY_TEXT_MAX_PRECISION: that many significant digits), the threads
/// and the flags of hurray_text_options (HURRAY_TEXT_WRITE_SYMMETRIC,
/// HURRAY_TEXT_WRITE_SKEW_SYMMETRIC, HURRAY_TEXT_WRITE_HERMITIAN, at most
/// one; HURRAY_TEXT_WRITE_PATTERN or HURRAY_TEXT_WRITE_ARRAY; the reading
/// flags are ignored); the
/// text is the same on any number of threads.
/// out: capacity writable bytes (NULL only if capacity is 0). out_written (not NULL) receives the text's length; when capacity
/// is too small it receives the length needed and
/// HURRAY_ERR_BUFFER_TOO_SMALL is returned with nothing written (so a call
/// with capacity 0 asks the size). A permissive handle is validated first.
/// The caller owns out.
///
/// Returns HURRAY_OK or: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_FLAGS,
/// HURRAY_ERR_INVALID_ARGUMENT (precision, options->size, two symmetry
/// flags, a matrix without the symmetry asked for: not square, an entry
/// without its mirror image or with another value, a skew-symmetric
/// diagonal, a hermitian diagonal with an imaginary part, a symmetry its
/// field cannot have), HURRAY_ERR_UNSUPPORTED_FEATURE (rank other than 2,
/// a uint64 value above INT64_MAX),
/// HURRAY_ERR_UNSUPPORTED_TYPE (a tag accepted only in permissive mode),
/// HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_ERR_ALLOC, any validation status
/// (permissive handles), HURRAY_ERR_INTERNAL_PANIC.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_write_mtx(
    coo: *const hurray_coo,
    options: *const hurray_text_options,
    out: *mut c_void,
    capacity: usize,
    out_written: *mut usize,
) -> hurray_status {
    // SAFETY: forwarded contract.
    unsafe {
        write_to_memory(
            mtx::write_mtx_symmetric,
            coo,
            options,
            out,
            capacity,
            out_written,
        )
    }
}

/// Write coo as hurray_coo_write_mtx does, to the file at path
/// (NUL-terminated, not NULL). The text goes to a temporary file in the same
/// directory that is renamed over path when complete, so readers and an
/// interrupted process never see a partial file under that name (the data
/// is not fsync'ed: for durability against power loss, fsync the file).
///
/// Returns HURRAY_OK, HURRAY_ERR_IO (the file or the directory could not be
/// written), or any status of hurray_coo_write_mtx but
/// HURRAY_ERR_BUFFER_TOO_SMALL.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_write_mtx_file(
    coo: *const hurray_coo,
    path: *const c_char,
    options: *const hurray_text_options,
) -> hurray_status {
    // SAFETY: forwarded contract.
    unsafe { write_to_file(mtx::write_mtx_symmetric, coo, path, options) }
}

/// Write coo (any rank, real or integer values) as a FROSTT file into out:
/// a comment line with the shape, then one line per entry, coordinates
/// counted from 1, in the handle's order. options, out,
/// capacity, out_written: as in hurray_coo_write_mtx (the writing flags,
/// which are Matrix Market's, are refused with
/// HURRAY_ERR_INVALID_ARGUMENT).
///
/// Returns HURRAY_OK or any status of hurray_coo_write_mtx, with
/// HURRAY_ERR_UNSUPPORTED_FEATURE for complex values.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_write_tns(
    coo: *const hurray_coo,
    options: *const hurray_text_options,
    out: *mut c_void,
    capacity: usize,
    out_written: *mut usize,
) -> hurray_status {
    // SAFETY: forwarded contract.
    unsafe { write_to_memory(write_tns, coo, options, out, capacity, out_written) }
}

/// Write coo as hurray_coo_write_tns does, to the file at path, through a
/// temporary file renamed into place (see hurray_coo_write_mtx_file).
///
/// Returns HURRAY_OK, HURRAY_ERR_IO, or any status of hurray_coo_write_tns
/// but HURRAY_ERR_BUFFER_TOO_SMALL.
/// Thread safety: safe on a shared handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_write_tns_file(
    coo: *const hurray_coo,
    path: *const c_char,
    options: *const hurray_text_options,
) -> hurray_status {
    // SAFETY: forwarded contract.
    unsafe { write_to_file(write_tns, coo, path, options) }
}
