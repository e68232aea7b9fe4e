//! CSR and CSC: the sizes of an export, the export into the caller's
//! arrays, and the import back into a canonical tensor.

use super::{rank_two, value_type, CompressedSizes, Format};
use crate::assemble::{
    assemble, copy_split, sorted_into_csr, AssembleOptions, CoordArrays, IndexType, Narrow,
    Triplets,
};
use crate::coo::Coo;
use crate::element::decode::copy_element;
use crate::element::encode::{clear_padding, store_element};
use crate::element::size;
use crate::element::types::TypeInfo;
use crate::error::CooError;

/// The sizes of `coo` exported as `format` with `index_type` indices.
pub fn compressed_sizes(
    coo: &Coo<'_>,
    format: Format,
    index_type: IndexType,
) -> Result<CompressedSizes, CooError> {
    let (rows, cols) = rank_two(coo, format.name())?;
    let ty = value_type(coo, "export")?;
    compressed_sizes_of([rows, cols], coo.nnz(), ty, format, index_type)
}

/// The sizes of a `shape` matrix of `nnz` entries of type `ty` as `format`
/// with `index_type` indices.
pub fn compressed_sizes_of(
    [rows, cols]: [u64; 2],
    nnz: u64,
    ty: &TypeInfo,
    format: Format,
    index_type: IndexType,
) -> Result<CompressedSizes, CooError> {
    let major = if format == Format::Csr { rows } else { cols };
    let w = index_type.width() as u64;
    let overflow = |what: &str| CooError::Overflow {
        what: format!("the {} {what} array", format.name()),
    };
    Ok(CompressedSizes {
        offsets: major
            .checked_add(1)
            .and_then(|m| m.checked_mul(w))
            .ok_or_else(|| overflow("offsets"))?,
        indices: nnz.checked_mul(w).ok_or_else(|| overflow("indices"))?,
        values: size::values_bytes(ty, nnz)?,
    })
}

fn put_index(index_type: IndexType, out: &mut [u8], k: usize, v: u64) {
    let w = index_type.width();
    let bytes = v.to_le_bytes();
    out[k * w..k * w + w].copy_from_slice(&bytes[..w]);
}

/// Export `coo` (rank 2) as `format` into the caller's arrays: offsets and
/// indices as `index_type` counted from `base`, values in the tensor's own
/// type. Each array must have exactly the size `compressed_sizes` gives.
/// Within each row (CSR) or column (CSC) the indices increase. With
/// `threads > 1` the indices and values are written by up to that many
/// scoped threads (one per 65,536 entries at most), each its own range.
#[allow(clippy::too_many_arguments)] // three arrays and how to write them
pub fn export_compressed(
    coo: &Coo<'_>,
    format: Format,
    index_type: IndexType,
    base: u8,
    offsets: &mut [u8],
    indices: &mut [u8],
    values: &mut [u8],
    threads: usize,
) -> Result<(), CooError> {
    let sizes = compressed_sizes(coo, format, index_type)?;
    let ty = value_type(coo, "export")?;
    CooError::check_base(u32::from(base))?;
    for (what, got, need) in [
        ("offsets", offsets.len(), sizes.offsets),
        ("indices", indices.len(), sizes.indices),
        ("values", values.len(), sizes.values),
    ] {
        if got as u64 != need {
            return Err(CooError::BufferSize {
                buffer: what,
                got: got as u64,
                expected: need,
                expected_why: format!(
                    "{} of a {:?} tensor with nnz {} as {}",
                    format.name(),
                    coo.shape(),
                    coo.nnz(),
                    index_type.name()
                ),
            });
        }
    }
    if coo.is_permissive() {
        coo.validate()?;
    }
    let (major_dim, minor_dim) = format.dims();
    let shape = coo.shape();
    // Every value written must fit the index type: the last offset and the
    // largest minor index.
    let limit = index_type.max();
    let b = u64::from(base);
    if coo.nnz().checked_add(b).is_none_or(|v| v > limit) {
        return Err(CooError::Overflow {
            what: format!(
                "{} offsets up to {} as {} (largest {limit}); export with int64 or uint64 offsets",
                format.name(),
                coo.nnz() as u128 + u128::from(b),
                index_type.name()
            ),
        });
    }
    if coo.nnz() > 0 && shape[minor_dim] - 1 + b > limit {
        return Err(CooError::Overflow {
            what: format!(
                "{} indices up to {} as {} (largest {limit}); export with int64 or uint64 indices",
                format.name(),
                shape[minor_dim] as u128 - 1 + u128::from(b),
                index_type.name()
            ),
        });
    }
    let n = coo.nnz() as usize;
    let idx = coo.indices();
    let majors = shape[major_dim] as usize;
    if coo.is_sorted() && !coo.is_permissive() && format == Format::Csr && !ty.is_sub_byte() {
        let src = coo.values();
        let done = match index_type {
            IndexType::I32 => sorted_csr::<i32>(idx, src, b, offsets, indices, values, threads),
            IndexType::U32 => sorted_csr::<u32>(idx, src, b, offsets, indices, values, threads),
            IndexType::I64 => sorted_csr::<i64>(idx, src, b, offsets, indices, values, threads),
            IndexType::U64 => sorted_csr::<u64>(idx, src, b, offsets, indices, values, threads),
        };
        if done {
            return Ok(());
        }
    }
    let iw = index_type.width();
    // The entries in (major, minor) order; None when that is their own order
    // (a validated sorted tensor exported as CSR: then nothing is sorted or
    // allocated, and whole-byte values are copied in one go).
    let order = if coo.is_sorted() && !coo.is_permissive() && format == Format::Csr {
        None
    } else {
        Some(compressed_order(coo, format)?)
    };
    let entry_at = |k: usize| order.as_ref().map_or(k, |o| o[k]);
    // Offsets: a running count of entries per major index.
    let mut k = 0usize;
    for m in 0..majors {
        put_index(index_type, offsets, m, k as u64 + b);
        while k < n && idx[entry_at(k) * 2 + major_dim] as usize == m {
            k += 1;
        }
    }
    put_index(index_type, offsets, majors, k as u64 + b);
    let src = coo.values();
    let w = ty.lookup_bytes();
    // Indices, and whole-byte values, for entries first..first + len.
    let write = |first: usize, idx_out: &mut [u8], val_out: &mut [u8]| {
        for (k, out) in idx_out.chunks_exact_mut(iw).enumerate() {
            let minor = idx[entry_at(first + k) * 2 + minor_dim] + b;
            out.copy_from_slice(&minor.to_le_bytes()[..iw]);
        }
        if ty.is_sub_byte() {
            return;
        }
        match &order {
            None => val_out.copy_from_slice(&src[first * w..first * w + val_out.len()]),
            Some(_) => {
                for (k, out) in val_out.chunks_exact_mut(w).enumerate() {
                    let e = entry_at(first + k);
                    out.copy_from_slice(&src[e * w..e * w + w]);
                }
            }
        }
    };
    let threads = crate::threads::count(threads, n, 1 << 16);
    if threads == 1 || ty.is_sub_byte() {
        let vals: &mut [u8] = if ty.is_sub_byte() { &mut [] } else { values };
        write(0, indices, vals);
    } else {
        let per = n.div_ceil(threads);
        let parts: Vec<_> = indices
            .chunks_mut(per * iw)
            .zip(values.chunks_mut(per * w))
            .collect();
        crate::threads::run(parts, |k, (io, vo)| write(k * per, io, vo));
    }
    if ty.is_sub_byte() {
        let mut s = [0u8; 16];
        for k in 0..n {
            copy_element(ty, src, entry_at(k), &mut s);
            store_element(ty, values, k, &s);
        }
        clear_padding(ty, values, n);
    }
    Ok(())
}

/// CSR of a validated sorted tensor with the caller's index type `I`
/// (checked above to hold every value written): the values copied, split
/// between threads, and the offsets and columns written by the sorted
/// assembly's kernel. `false` (nothing written) when the caller's arrays
/// are not aligned for `I`.
#[allow(clippy::too_many_arguments)] // three arrays and how to write them
fn sorted_csr<I>(
    idx: &[u64],
    src: &[u8],
    base: u64,
    offsets: &mut [u8],
    indices: &mut [u8],
    values: &mut [u8],
    threads: usize,
) -> bool
where
    I: bytemuck::Pod + Send + Narrow,
{
    let (Ok(offsets), Ok(indices)) = (
        bytemuck::try_cast_slice_mut::<u8, I>(offsets),
        bytemuck::try_cast_slice_mut::<u8, I>(indices),
    ) else {
        return false;
    };
    copy_split(values, src, threads);
    let at = |k: usize| (idx[2 * k] as usize, idx[2 * k + 1] as usize);
    sorted_into_csr(&at, Some(idx), base, offsets, indices, threads);
    true
}

/// Entry numbers in (major, minor) order (export_compressed needs none for
/// a validated sorted tensor exported as CSR): a stable counting sort on the
/// major index, then each major's entries sorted by minor index (already so
/// for CSC of a sorted tensor).
pub(crate) fn compressed_order(coo: &Coo<'_>, format: Format) -> Result<Vec<usize>, CooError> {
    let n = coo.nnz() as usize;
    let alloc = |bytes: usize| CooError::Alloc {
        bytes,
        what: "the compressed export",
    };
    let mut order: Vec<usize> = Vec::new();
    order
        .try_reserve_exact(n)
        .map_err(|_| alloc(n.saturating_mul(8)))?;
    let sorted = coo.is_sorted() && !coo.is_permissive();
    let (major_dim, minor_dim) = format.dims();
    let majors = coo.shape()[major_dim] as usize;
    let mut start: Vec<usize> = Vec::new();
    start
        .try_reserve_exact(majors + 1)
        .map_err(|_| alloc(majors.saturating_add(1).saturating_mul(8)))?;
    start.resize(majors + 1, 0);
    for e in 0..n {
        start[coo.entry(e)[major_dim] as usize + 1] += 1;
    }
    for m in 0..majors {
        start[m + 1] += start[m];
    }
    order.resize(n, 0);
    for e in 0..n {
        let m = coo.entry(e)[major_dim] as usize;
        order[start[m]] = e;
        start[m] += 1;
    }
    if !sorted {
        // `start[m]` is now the end of major m.
        let mut begin = 0;
        for &end in &start[..majors] {
            order[begin..end].sort_unstable_by_key(|&e| coo.entry(e)[minor_dim]);
            begin = end;
        }
    }
    Ok(order)
}

/// A canonical tensor from CSR or CSC arrays (`index_type`, counted from
/// `base`): offsets checked (first equal to the base, never decreasing,
/// last equal to the entry count plus the base), every index in range, no
/// index twice within a row (CSR) or column (CSC). `threads`: as for
/// assembly, which does the sorting and checking.
#[allow(clippy::too_many_arguments)] // the arrays and how to read them
pub fn from_compressed(
    format: Format,
    shape: [u64; 2],
    index_type: IndexType,
    base: u8,
    offsets: &[u8],
    indices: &[u8],
    type_tag: u8,
    values: &[u8],
    threads: usize,
) -> Result<Coo<'static>, CooError> {
    let (major_dim, minor_dim) = format.dims();
    let w = index_type.width();
    let majors = shape[major_dim];
    let need = majors
        .checked_add(1)
        .and_then(|m| m.checked_mul(w as u64))
        .ok_or_else(|| CooError::Overflow {
            what: format!("{} offsets for {majors} rows or columns", format.name()),
        })?;
    if offsets.len() as u64 != need {
        return Err(CooError::BufferSize {
            buffer: "offsets",
            got: offsets.len() as u64,
            expected: need,
            expected_why: format!("{} + 1 {} offsets", majors, index_type.name()),
        });
    }
    if !indices.len().is_multiple_of(w) {
        return Err(CooError::BufferSize {
            buffer: "indices",
            got: indices.len() as u64,
            expected: (indices.len() - indices.len() % w) as u64,
            expected_why: format!("whole {} indices", index_type.name()),
        });
    }
    let nnz = indices.len() / w;
    let read = |b: &[u8], k: usize| -> i128 {
        let mut v = [0u8; 8];
        v[..w].copy_from_slice(&b[k * w..k * w + w]);
        match index_type {
            IndexType::I32 => i128::from(i32::from_le_bytes([v[0], v[1], v[2], v[3]])),
            IndexType::U32 => i128::from(u32::from_le_bytes([v[0], v[1], v[2], v[3]])),
            IndexType::I64 => i128::from(i64::from_le_bytes(v)),
            IndexType::U64 => i128::from(u64::from_le_bytes(v)),
        }
    };
    let b = i128::from(base);
    let bad = |what: String| CooError::Offsets(format!("{} offsets: {what}", format.name()));
    if read(offsets, 0) != b {
        return Err(bad(format!(
            "offsets[{base}] is {}, not the base {base}",
            read(offsets, 0)
        )));
    }
    let last = read(offsets, majors as usize);
    if last != nnz as i128 + b {
        return Err(bad(format!(
            "the last offset is {last} but there are {nnz} indices (it must be {})",
            nnz as i128 + b
        )));
    }
    // Triplets in the caller's base: the major index from the offsets, the
    // minor index as given; assembly checks bounds and duplicates.
    let signed = matches!(index_type, IndexType::I32 | IndexType::I64);
    let mut coords: Vec<u8> = Vec::new();
    coords
        .try_reserve_exact(nnz.saturating_mul(16))
        .map_err(|_| CooError::Alloc {
            bytes: nnz.saturating_mul(16),
            what: "the compressed import",
        })?;
    for m in 0..majors as usize {
        let (lo, hi) = (read(offsets, m), read(offsets, m + 1));
        if hi < lo {
            return Err(bad(format!(
                "offsets[{}] = {hi} is below offsets[{}] = {lo}",
                m as i128 + 1 + b,
                m as i128 + b
            )));
        }
        // offsets[0] is the base and each row starts where the last ended,
        // so lo - b >= 0; the end must also stay within the indices (the
        // last offset alone says nothing of the ones before it).
        if hi > nnz as i128 + b {
            return Err(bad(format!(
                "{} {}: offsets[{}] = {hi} is past the end of the {nnz} indices (at most {})",
                format.major_name(),
                m as i128 + b,
                m as i128 + 1 + b,
                nnz as i128 + b
            )));
        }
        for k in (lo - b) as usize..(hi - b) as usize {
            let mut t = [0i128; 2];
            t[major_dim] = m as i128 + b;
            t[minor_dim] = read(indices, k);
            for c in t {
                // Signed index types: i64 coordinates (a negative minor index
                // stays negative and is caught by assembly's bounds check).
                // Unsigned ones: u64, so that indices past 2^63 keep their
                // value. Either way every value fits.
                let bytes = if signed {
                    (c as i64).to_le_bytes()
                } else {
                    (c as u64).to_le_bytes()
                };
                coords.extend_from_slice(&bytes);
            }
        }
    }
    let t = Triplets {
        shape: &shape,
        n: nnz,
        index_type: if signed {
            IndexType::I64
        } else {
            IndexType::U64
        },
        base,
        coords: CoordArrays::Interleaved(&coords),
        type_tag,
        values: Some(values),
    };
    let o = AssembleOptions {
        skip_plan: true,
        threads,
        ..AssembleOptions::default()
    };
    Ok(assemble(&t, &o)?.0)
}
