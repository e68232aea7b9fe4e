//! Status names, the last-error message, versions, and the work space the
//! library keeps between calls.

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

/// Where the calling thread's last failure is, as fields a program reads
/// beside hurray_last_error_message (filled by hurray_last_error_position).
/// A field holds a value only when its HURRAY_POS_* bit is in set; the
/// others are 0. Entry numbers, dimensions and coordinates count from base
/// (0, or 1 for 1-based triplets, handles made with
/// HURRAY_COO_ONE_BASED_MESSAGES and text files), exactly as the message
/// counts them; lines and columns from 1; byte offsets from 0.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hurray_error_position {
    /// In: sizeof(hurray_error_position), set by the caller (the struct may
    /// grow at its end; the library never writes past the size given).
    pub size: usize,
    /// The failure's status (HURRAY_OK after a success: nothing is set).
    pub status: hurray_status,
    /// Which fields hold a value: HURRAY_POS_* bits.
    pub set: u32,
    /// 0 or 1: where entry, other_entry, dim, coordinate and coordinates
    /// count from.
    pub base: u32,
    /// How many of coordinates hold a value (with HURRAY_POS_COORDINATES).
    pub rank: u32,
    /// The entry of a tensor, the triplet of an assembly or the query of a
    /// batch lookup that the failure is about (HURRAY_POS_ENTRY).
    pub entry: u64,
    /// The other entry or triplet: the one it duplicates, or the one it
    /// must come after (HURRAY_POS_OTHER_ENTRY).
    pub other_entry: u64,
    /// The dimension (HURRAY_POS_DIM).
    pub dim: u64,
    /// The offending coordinate in dim, as the caller wrote it, as the bits
    /// of a uint64_t (read it as int64_t for signed triplet index types:
    /// a negative coordinate) (HURRAY_POS_COORDINATE).
    pub coordinate: u64,
    /// The line of a text file (HURRAY_POS_LINE), and of a duplicate's
    /// first occurrence (HURRAY_POS_OTHER_LINE), counted from 1.
    pub line: u64,
    pub other_line: u64,
    /// The column of the token at fault (HURRAY_POS_COLUMN), from 1.
    pub column: u64,
    /// The byte of the file, descriptor or buffer the message names
    /// (HURRAY_POS_BYTE_OFFSET), from 0.
    pub byte_offset: u64,
    /// The entry's coordinates (HURRAY_POS_COORDINATES), rank of them.
    pub coordinates: [u64; 64],
    /// The message without the place it starts with (the path, lines and
    /// column of a text error; otherwise the whole message), so a caller
    /// that counts lines its own way can put its place before it. Never
    /// NULL; owned by the library, valid until the calling thread's next
    /// call into the library other than hurray_last_error_message and
    /// hurray_last_error_position.
    pub detail: *const c_char,
}

/// Fill *out (not NULL, out->size set by the caller to
/// sizeof(hurray_error_position)) with where the calling thread's last
/// failure is: its status, and the entry, triplet, dimension, coordinates,
/// line, column or byte offset its message names, as numbers (see
/// hurray_error_position). After a success, status is HURRAY_OK and set is
/// 0. Reading it changes nothing: the last error and its message stay.
///
/// Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER (out is NULL) or
/// HURRAY_ERR_BUFFER_SIZE (out->size is smaller than this library's
/// hurray_error_position), in both cases without changing the last error.
/// Thread safety: each thread has its own last failure.
#[no_mangle]
pub unsafe extern "C" fn hurray_last_error_position(
    out: *mut hurray_error_position,
) -> hurray_status {
    guard_value(Status::InternalPanic.code(), || {
        // SAFETY: NULL or a caller's struct whose first field is its size,
        // per the contract; only that field is read before the size is known.
        let Ok(size) = (unsafe { guard::read_struct(out.cast::<usize>(), "out") }) else {
            return Status::NullPointer.code();
        };
        if size < std::mem::size_of::<hurray_error_position>() {
            return Status::BufferSize.code();
        }
        let p = guard::with_last_failure(|r| position_fields(r, size));
        // SAFETY: non-NULL (read above) and, per its size, writable for a
        // whole hurray_error_position.
        unsafe { guard::write_opt(out, p) };
        Status::Ok.code()
    })
}

/// The C fields of a recorded failure (or of none).
fn position_fields(r: Option<&guard::Recorded>, size: usize) -> hurray_error_position {
    let mut out = hurray_error_position {
        size,
        status: Status::Ok.code(),
        set: 0,
        base: 0,
        rank: 0,
        entry: 0,
        other_entry: 0,
        dim: 0,
        coordinate: 0,
        line: 0,
        other_line: 0,
        column: 0,
        byte_offset: 0,
        coordinates: [0; 64],
        detail: c"".as_ptr(),
    };
    let Some(r) = r else {
        return out;
    };
    let p = &r.position;
    out.status = r.status;
    out.base = u32::from(p.base);
    out.detail = r.detail.as_ptr();
    let mut put = |bit: u32, v: Option<u64>, slot: &mut u64| {
        if let Some(v) = v {
            *slot = v;
            out.set |= bit;
        }
    };
    put(HURRAY_POS_ENTRY, p.entry, &mut out.entry);
    put(HURRAY_POS_OTHER_ENTRY, p.other_entry, &mut out.other_entry);
    put(HURRAY_POS_DIM, p.dim, &mut out.dim);
    put(
        HURRAY_POS_COORDINATE,
        p.coordinate.map(|c| c as u64),
        &mut out.coordinate,
    );
    put(HURRAY_POS_LINE, p.line, &mut out.line);
    put(HURRAY_POS_OTHER_LINE, p.other_line, &mut out.other_line);
    put(HURRAY_POS_COLUMN, p.column, &mut out.column);
    put(HURRAY_POS_BYTE_OFFSET, p.byte_offset, &mut out.byte_offset);
    if p.line_mirrored {
        out.set |= HURRAY_POS_LINE_MIRRORED;
    }
    if p.other_line_mirrored {
        out.set |= HURRAY_POS_OTHER_LINE_MIRRORED;
    }
    if let Some(c) = &p.coordinates {
        let n = c.len().min(64);
        out.coordinates[..n].copy_from_slice(&c[..n]);
        out.rank = n as u32;
        out.set |= HURRAY_POS_COORDINATES;
    }
    out
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

/// Free the work space the library keeps between calls; returns its size in
/// bytes (0 when none was kept).
///
/// The duplicate check of an unsorted tensor (hurray_coo_create and
/// hurray_coo_validate on a tensor whose is_sorted is false) scatters its
/// entries into 4-5 bytes per entry of work space (8-9 when the shape has more
/// than about 2^42 elements at 1M entries, 2^46 at 17M entries or more). When the check returns, the library keeps that
/// memory for the next check, which then writes to pages the process already
/// has instead of having the kernel map and clear fresh ones. It keeps at
/// most 4 buffers and 64 MiB in all (the work space of about 14M entries, 7M
/// with the wider keys); larger work space is freed on return. A program
/// that has finished creating tensors, or wants the memory back, calls this;
/// the next check then allocates afresh. Nothing else changes: no handle
/// refers to this memory.
///
/// Thread safety: safe from any thread, also while other calls run: a check
/// in progress keeps its buffer until it returns, and may put it back then.
#[no_mangle]
pub extern "C" fn hurray_release_scratch() -> usize {
    guard_value(0, crate::aligned::release_scratch)
}
