//! Checks that need no pass over the data: type tag, rank, shape, buffer
//! sizes, alignment of borrowed buffers, sub-byte padding.

use super::CooParts;
use crate::element::decode;
use crate::element::size::{self, BUFFER_ALIGN, DYNAMIC_DIM, MAX_RANK};
use crate::element::types::{TagClass, TypeInfo};
use crate::error::CooError;

/// Check a rank before anything sized by it is read.
pub fn check_rank(rank: u32) -> Result<(), CooError> {
    if rank == 0 || rank > MAX_RANK {
        let hint = if rank == 0 {
            " (rank 0 is a scalar, and scalars may not use a sparse layout)"
        } else {
            ""
        };
        return Err(CooError::InvalidRank { rank, hint });
    }
    Ok(())
}

/// Check flags-independent structure: type tag, rank, shape, buffer sizes,
/// alignment of borrowed buffers, sub-byte padding. Returns the type facts
/// (`None` for an unknown tag accepted because `permissive`).
pub(super) fn check_structure(
    parts: &CooParts<'_, '_>,
    borrowed: bool,
    permissive: bool,
) -> Result<Option<&'static TypeInfo>, CooError> {
    let ty = match TagClass::of(parts.type_tag) {
        TagClass::Known(info) => Some(info),
        class @ TagClass::Invalid => {
            return Err(CooError::InvalidType {
                tag: parts.type_tag,
                class: class.describe(),
                hint: "",
            })
        }
        _ if permissive => None,
        class => {
            return Err(CooError::InvalidType {
                tag: parts.type_tag,
                class: class.describe(),
                hint: "; HURRAY_COO_PERMISSIVE accepts it without interpreting the values",
            })
        }
    };
    let rank = u32::try_from(parts.shape.len()).unwrap_or(u32::MAX);
    check_rank(rank)?;
    if let Some(dim) = parts.shape.iter().position(|&d| d == DYNAMIC_DIM) {
        return Err(CooError::DynamicDimension { dim });
    }

    let need_indices = size::indices_bytes(parts.nnz, rank)?;
    if let Some(ty) = ty {
        let need_values = size::values_bytes(ty, parts.nnz)?;
        if parts.values.len() as u64 != need_values {
            return Err(CooError::BufferSize {
                buffer: "values",
                got: parts.values.len() as u64,
                expected: need_values,
                expected_why: format!("nnz {} of {}", parts.nnz, ty.name()),
            });
        }
    }
    if parts.indices.len() as u64 != need_indices {
        return Err(CooError::BufferSize {
            buffer: "indices",
            got: parts.indices.len() as u64,
            expected: need_indices,
            expected_why: format!("nnz {} x rank {rank} x 8", parts.nnz),
        });
    }
    if borrowed {
        for (buffer, bytes) in [("values", parts.values), ("indices", parts.indices)] {
            let addr = bytes.as_ptr() as usize;
            if !bytes.is_empty() && !addr.is_multiple_of(BUFFER_ALIGN) {
                return Err(CooError::Misaligned {
                    buffer,
                    addr,
                    rem: addr % BUFFER_ALIGN,
                });
            }
        }
    }
    if let Some(ty) = ty {
        if let Some((byte, value, mask)) =
            decode::first_nonzero_padding(ty, parts.values, parts.nnz)
        {
            return Err(CooError::NonzeroPadding {
                byte,
                value,
                mask,
                nnz: parts.nnz,
                type_name: ty.name(),
            });
        }
    }
    Ok(ty)
}
