//! Validating a handle against every rule of the layout.

use super::guard::{guard, handle};
use super::{hurray_coo, hurray_status};

/// Check every rule of the COO specification on a handle, whatever flags it
/// was created with: element type known, rank, shape, exact buffer sizes,
/// alignment of borrowed buffers, zero sub-byte padding, every coordinate in
/// bounds, no duplicate coordinate tuple, strict lexicographic order when
/// sorted, and no value its type forbids as data (float8_e8m0 0x00 and
/// 0xFF). The first violation is described by hurray_last_error_message()
/// and hurray_last_error_position(), e.g. "entry 17 duplicates entry 3 at
/// (2, 0)": the coordinate rules at the lowest entry number first, then
/// the values. threads: as every threads argument (HURRAY_MAX_THREADS):
/// the same answer and the same first violation on any number; ranges of
/// at least 65536 entries per thread, the order scan and the duplicate
/// detection both split.
///
/// coo may not be NULL. Returns HURRAY_OK, HURRAY_ERR_NULL_POINTER,
/// HURRAY_ERR_INVALID_TYPE, HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
/// HURRAY_ERR_DUPLICATE, HURRAY_ERR_NOT_SORTED, HURRAY_ERR_NONZERO_PADDING,
/// HURRAY_ERR_INVALID_VALUE,
/// HURRAY_ERR_ALLOC (duplicate detection needs about 4.5 bytes per entry when the
/// shape has at most about 2^42 elements at 1M entries, 2^46 at 17M entries
/// or more, about 9 otherwise, at most 16; from 8M entries also 64 bytes
/// per bucket, at most 2 MiB per thread, of line buffers),
/// HURRAY_ERR_INTERNAL_PANIC. The duplicate detection's work space is kept
/// for the next check, within a bound (see hurray_release_scratch).
///
/// Thread safety: safe on a handle shared between threads.
#[no_mangle]
pub unsafe extern "C" fn hurray_coo_validate(
    coo: *const hurray_coo,
    threads: u32,
) -> hurray_status {
    // SAFETY: `coo` is NULL or live, per the contract.
    guard(|| {
        let h = unsafe { handle(coo) }?;
        h.coo.validate_with(threads as usize).map_err(|e| h.err(e))
    })
}
