//! Assembly straight into the consumer's CSR or CSC arrays (Eigen's
//! `setFromTriplets`, scipy's `coo_matrix(...).tocsr()`): the same
//! triplets, policies, checks and errors as `assemble`, but the result is
//! written as offsets, indices and values in the caller's index type and
//! base, and no canonical COO (16 bytes of coordinates per entry) is made
//! for a solver that would only throw it away.
//!
//! The entry count is known only once the triplets are combined, so the
//! caller gives room: offsets exactly (rows or columns) + 1, indices and
//! values at least nnz, and as many as there are triplets always suffice
//! (zstd's "compress bound"). The count is returned.
//!
//! Paths: the row buckets writing the arrays (`assemble::try_compressed`)
//! when no plan is asked for; otherwise, or when they decline, `assemble`
//! and `export_compressed`, and for CSC the plan reordered to the CSC
//! order. The errors are always the general path's, in its order.

use super::{compressed::compressed_order, export_compressed, Format};
use crate::assemble::{
    assemble, checked_type, compressed_room, try_compressed, AssembleOptions, CompressedArrays,
    IndexType, Plan, Triplets,
};
use crate::element::size;
use crate::error::CooError;

/// The caller's arrays for an assembly into CSR or CSC, and how to write
/// them.
pub struct CompressedOut<'a> {
    pub format: Format,
    /// Of offsets and indices.
    pub index_type: IndexType,
    /// 0, or 1: where offsets and indices count from.
    pub base: u8,
    /// Exactly (rows or columns) + 1 offsets.
    pub offsets: &'a mut [u8],
    /// Room for at least nnz indices; bytes past them are not written.
    pub indices: &'a mut [u8],
    /// Room for at least nnz values of the result's type; bytes past them
    /// are not written. A pattern's may be empty: then no values are
    /// written (its entries are all true).
    pub values: &'a mut [u8],
}

/// Assemble `t` as `assemble` does, into `out`: the number of entries, and
/// with `o.skip_plan` false the plan whose output order is `out`'s values
/// order (CSR's is the canonical order; a CSC plan is reordered).
pub fn assemble_compressed(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    out: CompressedOut<'_>,
) -> Result<(u64, Option<Plan>), CooError> {
    let ty = checked_type(t, o)?;
    let &[rows, cols] = t.shape else {
        return Err(CooError::Unsupported(format!(
            "assembling into {} needs rank-2 triplets; these have rank {}",
            out.format.name(),
            t.shape.len()
        )));
    };
    let (major, minor) = match out.format {
        Format::Csr => (rows, cols),
        Format::Csc => (cols, rows),
    };
    let w = out.index_type.width() as u64;
    let need_offsets = major
        .checked_add(1)
        .and_then(|m| m.checked_mul(w))
        .ok_or_else(|| CooError::Overflow {
            what: format!("{} offsets for {major} rows or columns", out.format.name()),
        })?;
    if out.offsets.len() as u64 != need_offsets {
        return Err(CooError::BufferSize {
            buffer: "offsets",
            got: out.offsets.len() as u64,
            expected: need_offsets,
            expected_why: format!(
                "{} of a {rows} x {cols} matrix ({major} + 1 {} offsets)",
                out.format.name(),
                out.index_type.name()
            ),
        });
    }
    let limit = out.index_type.max();
    let b = u64::from(out.base);
    if t.n > 0 && minor > 0 && minor - 1 + b > limit {
        return Err(CooError::Overflow {
            what: format!(
                "{} indices up to {} as {} (largest {limit}); assemble with int64 or uint64 indices",
                out.format.name(),
                u128::from(minor) - 1 + u128::from(b),
                out.index_type.name()
            ),
        });
    }
    let write_values = t.values.is_some() || !out.values.is_empty();
    let fast = try_compressed(
        t,
        o,
        ty,
        CompressedArrays {
            name: out.format.name(),
            transposed: out.format == Format::Csc,
            index_type: out.index_type,
            base: out.base,
            offsets: &mut *out.offsets,
            indices: &mut *out.indices,
            values: &mut *out.values,
            values_too: write_values,
        },
    );
    if let Some(done) = fast {
        return done.map(|nnz| (nnz as u64, None));
    }
    // The general path: the canonical tensor, then its export.
    let (coo, plan) = assemble(t, o)?;
    let format = out.format;
    let nnz = export_into(&coo, out, write_values, o.threads)?;
    let plan = match (plan, format) {
        (Some(p), Format::Csc) => Some(p.reordered(&compressed_order(&coo, Format::Csc)?)?),
        (p, _) => p,
    };
    Ok((nnz, plan))
}

/// Export the canonical `coo` (rank 2) into `out`, whose indices and values
/// need only room for its entries (`write_values` false: a pattern's values
/// are not written); the entry count.
pub fn export_into(
    coo: &crate::coo::Coo<'_>,
    out: CompressedOut<'_>,
    write_values: bool,
    threads: usize,
) -> Result<u64, CooError> {
    let ty = super::value_type(coo, "export")?;
    let nnz = coo.nnz();
    compressed_room(
        ty,
        nnz,
        out.base,
        out.format.name(),
        out.index_type,
        out.indices.len(),
        write_values.then_some(out.values.len()),
    )?;
    let iw = (nnz * out.index_type.width() as u64) as usize;
    let vw = size::values_bytes(ty, nnz)? as usize;
    // A pattern without values: the export writes them into scratch.
    let mut scratch;
    let values: &mut [u8] = if write_values {
        &mut out.values[..vw]
    } else {
        scratch = crate::aligned::AlignedBuf::zeroed(vw, "the pattern's values")?;
        scratch.as_bytes_mut()
    };
    export_compressed(
        coo,
        out.format,
        out.index_type,
        out.base,
        out.offsets,
        &mut out.indices[..iw],
        values,
        threads,
    )?;
    Ok(nnz)
}
