//! All size arithmetic, in one place, every step checked.

use crate::element::types::TypeInfo;
use crate::error::CooError;

/// Alignment, in bytes, of every non-empty buffer (buffer protocol).
pub const BUFFER_ALIGN: usize = 64;

/// Largest rank the format allows.
pub const MAX_RANK: u32 = 64;

/// The dynamic-dimension sentinel.
pub const DYNAMIC_DIM: u64 = u64::MAX;

/// Bytes the values buffer of `n` elements of `ty` occupies:
/// `n * bits / 8` for whole-byte types, `ceil(n / per_byte)` for 1-, 2- and
/// 4-bit types, `ceil(n / 4) * 3` for 6-bit types.
pub fn values_bytes(ty: &TypeInfo, n: u64) -> Result<u64, CooError> {
    let overflow = || CooError::Overflow {
        what: format!("the values buffer size of {n} {} elements", ty.name()),
    };
    match ty.bits {
        6 => n.div_ceil(4).checked_mul(3).ok_or_else(overflow),
        b if b < 8 => Ok(n.div_ceil(u64::from(8 / b))),
        b => n.checked_mul(u64::from(b / 8)).ok_or_else(overflow),
    }
}

/// Bytes the values buffer of `n` elements of a private extension type
/// occupies, from its extension-type section (metadata.md): `ceil(n /
/// packing_factor)` for sub-byte widths (1, 2, 4 bits), `n * bit_width / 8`
/// otherwise. The section's constraints are checked by its reader.
pub fn extension_values_bytes(bit_width: u32, packing_factor: u8, n: u64) -> Result<u64, CooError> {
    if bit_width < 8 {
        return Ok(n.div_ceil(u64::from(packing_factor.max(1))));
    }
    n.checked_mul(u64::from(bit_width / 8))
        .ok_or_else(|| CooError::Overflow {
            what: format!("the values buffer size of {n} {bit_width}-bit extension elements"),
        })
}

/// Bytes the indices buffer of `nnz` entries of rank `rank` occupies:
/// `nnz * rank * 8`.
pub fn indices_bytes(nnz: u64, rank: u32) -> Result<u64, CooError> {
    nnz.checked_mul(u64::from(rank))
        .and_then(|v| v.checked_mul(8))
        .ok_or_else(|| CooError::Overflow {
            what: format!("the indices buffer size nnz * rank * 8 = {nnz} * {rank} * 8"),
        })
}

/// `v` as a `usize`, or an overflow error naming `what`.
pub fn to_usize(v: u64, what: &str) -> Result<usize, CooError> {
    usize::try_from(v).map_err(|_| CooError::Overflow {
        what: format!("{what} ({v}) on this platform"),
    })
}

/// The number of elements of `shape` (the product of its dimensions), or
/// `None` when it exceeds `u128` (possible from rank 3 on).
pub fn element_count(shape: &[u64]) -> Option<u128> {
    shape
        .iter()
        .try_fold(1u128, |acc, &d| acc.checked_mul(u128::from(d)))
}

/// The number of elements as an `f64` (exact up to 2^53, then rounded; may be
/// infinite for astronomically large shapes).
pub fn element_count_f64(shape: &[u64]) -> f64 {
    shape.iter().map(|&d| d as f64).product()
}

/// Row-major strides for linearising in-bounds coordinates into one `u64`
/// key, when the element count fits in `u64`; `None` otherwise.
pub fn linear_strides(shape: &[u64]) -> Option<Vec<u64>> {
    let count = element_count(shape)?;
    if count > u128::from(u64::MAX) + 1 {
        return None;
    }
    let mut strides = vec![0u64; shape.len()];
    let mut acc: u64 = 1;
    for (d, &extent) in shape.iter().enumerate().rev() {
        strides[d] = acc;
        // The last multiplication may overflow exactly when count == 2^64;
        // the stride of dimension 0 never needs it.
        acc = acc.wrapping_mul(extent);
    }
    Some(strides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::types::type_info;

    fn vb(tag: u8, n: u64) -> u64 {
        values_bytes(type_info(tag).unwrap(), n).unwrap()
    }

    #[test]
    fn values_bytes_per_type() {
        assert_eq!(vb(0x03, 3), 12);
        assert_eq!(vb(0x04, 3), 24);
        assert_eq!(vb(0x46, 2), 32);
        assert_eq!(vb(0x51, 2), 32);
        assert_eq!(vb(0x50, 2), 16);
        assert_eq!(vb(0x01, 5), 10);
        assert_eq!(vb(0x10, 5), 5);
        // bool: ceil(n / 8)
        assert_eq!(vb(0x20, 0), 0);
        assert_eq!(vb(0x20, 1), 1);
        assert_eq!(vb(0x20, 8), 1);
        assert_eq!(vb(0x20, 9), 2);
        // 4-bit: ceil(n / 2)
        assert_eq!(vb(0x48, 5), 3);
        assert_eq!(vb(0x43, 4), 2);
        // 2-bit: ceil(n / 4)
        assert_eq!(vb(0x4A, 5), 2);
        assert_eq!(vb(0x4B, 4), 1);
        // 6-bit: ceil(n / 4) * 3
        assert_eq!(vb(0x44, 1), 3);
        assert_eq!(vb(0x45, 4), 3);
        assert_eq!(vb(0x45, 5), 6);
        // Largest counts never overflow for sub-byte types.
        assert_eq!(vb(0x20, u64::MAX), u64::MAX / 8 + 1);
        assert_eq!(vb(0x44, u64::MAX), (u64::MAX / 4 + 1) * 3);
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        let f32t = type_info(0x03).unwrap();
        assert!(matches!(
            values_bytes(f32t, u64::MAX / 2),
            Err(CooError::Overflow { .. })
        ));
        assert!(matches!(
            indices_bytes(1 << 61, 1),
            Err(CooError::Overflow { .. })
        ));
        assert!(matches!(
            indices_bytes(1 << 58, 64),
            Err(CooError::Overflow { .. })
        ));
        assert_eq!(indices_bytes(3, 2).unwrap(), 48);
    }

    #[test]
    fn element_counts_beyond_u64() {
        assert_eq!(element_count(&[4, 4]), Some(16));
        assert_eq!(element_count(&[0, 5]), Some(0));
        let big = vec![2u64; 64];
        assert_eq!(element_count(&big), Some(1u128 << 64));
        let huge = vec![1u64 << 32; 64];
        assert_eq!(element_count(&huge), None);
        assert_eq!(element_count_f64(&big), 2f64.powi(64));
    }

    #[test]
    fn strides_are_row_major_and_cover_2_pow_64() {
        assert_eq!(linear_strides(&[4, 5, 6]), Some(vec![30, 6, 1]));
        let big = vec![2u64; 64];
        let s = linear_strides(&big).unwrap();
        assert_eq!(s[0], 1 << 63);
        assert_eq!(s[63], 1);
        assert_eq!(linear_strides(&[u64::MAX - 1, 3]), None);
    }
}
