//! Conversions for the solver: a rank-2 tensor to CSR or CSC in the
//! consumer's own index type and base (into caller memory, sizes known
//! first) and CSR/CSC arrays back into a canonical tensor
//! (`compressed.rs`), a dense row-major array (`dense.rs`), and copies
//! sorted by a mode order (`modes.rs`). What they share is here. Overflow
//! of a 32-bit index type is an error, never a wrap.

use crate::coo::Coo;
use crate::element::types::TypeInfo;
use crate::error::CooError;

mod compressed;
mod dense;
mod from_triplets;
mod modes;

pub use compressed::{compressed_sizes, compressed_sizes_of, export_compressed, from_compressed};
pub use dense::{dense_bytes, export_dense};
pub use from_triplets::{assemble_compressed, export_into, CompressedOut};
pub use modes::sort_by_modes;

/// Compressed sparse row or column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Rows compressed: `offsets` has rows + 1 entries, `indices` columns.
    Csr,
    /// Columns compressed: `offsets` has columns + 1 entries, `indices` rows.
    Csc,
}

impl Format {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Csr => "CSR",
            Format::Csc => "CSC",
        }
    }

    /// What one offset range covers: "row" (CSR) or "column" (CSC).
    pub(super) fn major_name(self) -> &'static str {
        match self {
            Format::Csr => "row",
            Format::Csc => "column",
        }
    }

    /// (major dimension, minor dimension).
    pub(crate) fn dims(self) -> (usize, usize) {
        match self {
            Format::Csr => (0, 1),
            Format::Csc => (1, 0),
        }
    }
}

/// Byte sizes of the three arrays of a compressed export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompressedSizes {
    pub offsets: u64,
    pub indices: u64,
    pub values: u64,
}

pub(super) fn rank_two(coo: &Coo<'_>, what: &str) -> Result<(u64, u64), CooError> {
    match coo.shape() {
        [r, c] => Ok((*r, *c)),
        s => Err(CooError::Unsupported(format!(
            "{what} needs a rank-2 tensor; this one has rank {}",
            s.len()
        ))),
    }
}

pub(crate) fn value_type(coo: &Coo<'_>, what: &'static str) -> Result<&'static TypeInfo, CooError> {
    coo.type_info().ok_or(CooError::UnsupportedType {
        what,
        tag: coo.type_tag(),
        name: "unknown",
        reason: "was accepted in permissive mode only, so its values are never interpreted",
    })
}
