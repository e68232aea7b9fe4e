//! A tensor as a dense row-major array of its own type.

use super::value_type;
use crate::coo::Coo;
use crate::element::decode::copy_element;
use crate::element::encode::store_element;
use crate::element::size;
use crate::error::CooError;

/// Bytes of `coo` as a dense row-major array in its own type (sub-byte
/// types packed as the format packs them).
pub fn dense_bytes(coo: &Coo<'_>) -> Result<u64, CooError> {
    let ty = value_type(coo, "dense export")?;
    let count = size::element_count(coo.shape())
        .and_then(|c| u64::try_from(c).ok())
        .ok_or_else(|| CooError::Overflow {
            what: format!("a dense array of shape {:?}", coo.shape()),
        })?;
    size::values_bytes(ty, count)
}

/// Write `coo` as a dense row-major array into `out` (exactly `dense_bytes`
/// bytes); absent elements are zero bytes.
/// With `threads > 1` a validated sorted tensor of a whole-byte type is
/// written by up to that many scoped threads, each zero-filling and filling
/// its own stretch of the output (other tensors: the calling thread).
pub fn export_dense(coo: &Coo<'_>, out: &mut [u8], threads: usize) -> Result<(), CooError> {
    let need = dense_bytes(coo)?;
    if out.len() as u64 != need {
        return Err(CooError::BufferSize {
            buffer: "dense output",
            got: out.len() as u64,
            expected: need,
            expected_why: format!(
                "a dense {:?} array of {}",
                coo.shape(),
                coo.type_info().map_or("?", |t| t.name())
            ),
        });
    }
    if coo.is_permissive() {
        coo.validate()?;
    }
    let ty = value_type(coo, "dense export")?;
    let strides = size::linear_strides(coo.shape()).ok_or_else(|| CooError::Overflow {
        what: format!("a dense array of shape {:?}", coo.shape()),
    })?;
    let n = coo.nnz() as usize;
    let at = |e: usize| -> usize {
        coo.entry(e)
            .iter()
            .zip(&strides)
            .map(|(c, st)| c * st)
            .sum::<u64>() as usize
    };
    // Entries first..last into `region`, which starts at element `origin`.
    let fill = |region: &mut [u8], origin: usize, first: usize, last: usize| {
        region.fill(0);
        let mut s = [0u8; 16];
        for e in first..last {
            copy_element(ty, coo.values(), e, &mut s);
            store_element(ty, region, at(e) - origin, &s);
        }
    };
    let ordered = coo.is_sorted() && !coo.is_permissive() && !ty.is_sub_byte();
    let threads = crate::threads::count(threads, out.len(), 1 << 20);
    if !ordered || threads == 1 || n == 0 {
        fill(out, 0, 0, n);
        return Ok(());
    }
    // Entries are in row-major order, so their positions increase: cut the
    // entries into ranges and the output at the first position of each.
    let w = ty.lookup_bytes();
    let total = out.len() / w;
    let mut rest: &mut [u8] = out;
    let mut origin = 0usize;
    let mut parts = Vec::new();
    for k in 0..threads {
        let (first, last) = (n * k / threads, n * (k + 1) / threads);
        let end = if k + 1 == threads { total } else { at(last) };
        let (region, tail) = std::mem::take(&mut rest).split_at_mut((end - origin) * w);
        rest = tail;
        parts.push((region, origin, first, last));
        origin = end;
    }
    crate::threads::run(parts, |_, (region, o, first, last)| {
        fill(region, o, first, last)
    });
    Ok(())
}
