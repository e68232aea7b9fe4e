//! Writing elements into a values buffer (the inverse of `decode`), and the
//! roundings from `f64` that give float16 and bfloat16 their own arithmetic
//! (a sum of two of them computed in `f64` is exact, so rounding it once is
//! the correctly rounded sum).

use crate::element::types::TypeInfo;

/// Store element `i` into `values`: `storage` holds its little-endian bytes
/// for whole-byte types, or its bit pattern in the low bits of one byte for
/// sub-byte types (as `decode::copy_element` gives it). Other elements'
/// bits are left as they are; bits of the pattern above the type's width
/// are ignored.
pub fn store_element(ty: &TypeInfo, values: &mut [u8], i: usize, storage: &[u8]) {
    if !ty.is_sub_byte() {
        let w = ty.lookup_bytes();
        values[i * w..(i + 1) * w].copy_from_slice(&storage[..w]);
        return;
    }
    let bits = ty.bits;
    let pattern = u32::from(storage[0]) & ((1u32 << bits) - 1);
    if bits == 6 {
        let g = (i / 4) * 3;
        let shift = (i % 4) as u32 * 6;
        let mut word =
            u32::from(values[g]) | u32::from(values[g + 1]) << 8 | u32::from(values[g + 2]) << 16;
        word = (word & !(0x3F << shift)) | (pattern << shift);
        values[g..g + 3].copy_from_slice(&word.to_le_bytes()[..3]);
    } else {
        let per_byte = (8 / bits) as usize;
        let shift = (i % per_byte) as u32 * bits;
        let mask = (((1u32 << bits) - 1) << shift) as u8;
        let b = &mut values[i / per_byte];
        *b = (*b & !mask) | ((pattern << shift) as u8);
    }
}

/// Zero the padding bits after the first `n` elements of a sub-byte values
/// buffer (whole-byte types have none), so that the buffer obeys the
/// format whatever the bytes held before.
pub fn clear_padding(ty: &TypeInfo, values: &mut [u8], n: usize) {
    if !ty.is_sub_byte() {
        return;
    }
    let used_bits = if ty.bits == 6 {
        n * 6
    } else {
        n * ty.bits as usize
    };
    let first_free = used_bits / 8;
    if first_free < values.len() {
        let keep = (used_bits % 8) as u32;
        values[first_free] &= ((1u16 << keep) - 1) as u8;
        values[first_free + 1..].fill(0);
    }
}

/// `x` rounded to nearest-even into a binary float of `exp` exponent bits
/// and `man` mantissa bits with IEEE specials (float16: 5, 10; bfloat16: 8,
/// 7). Overflow gives infinity; NaN gives a quiet NaN with the sign kept.
fn round_ieee(x: f64, exp: u32, man: u32) -> u16 {
    let sign = u16::from(x.is_sign_negative()) << (exp + man);
    let exp_mask = ((1u32 << exp) - 1) as u16;
    if x.is_nan() {
        return sign | exp_mask << man | 1 << (man - 1);
    }
    let a = x.abs();
    let bias = (1i32 << (exp - 1)) - 1;
    // The smallest normal is 2^(1 - bias); below it the spacing is fixed at
    // 2^(1 - bias - man) (subnormals).
    let e = if a == 0.0 {
        1 - bias
    } else {
        // floor(log2(a)) from the f64 exponent field (a subnormal f64 is far
        // below every target's range and rounds to zero either way).
        (((a.to_bits() >> 52) & 0x7FF) as i32 - 1023).max(1 - bias)
    };
    // a / spacing, rounded to nearest-even; spacing = 2^(e - man).
    let scaled = a * 2f64.powi(man as i32 - e);
    let mut q = scaled.round_ties_even() as u64;
    let mut e = e;
    if q >= 1u64 << (man + 1) {
        // Rounded up to the next binade.
        q >>= 1;
        e += 1;
    }
    if e > bias {
        return sign | exp_mask << man; // infinity
    }
    let biased = if q < 1u64 << man {
        0 // subnormal (or zero)
    } else {
        (e + bias) as u64
    };
    sign | ((biased << man) | (q & ((1u64 << man) - 1))) as u16
}

/// `x` as float16 bits, rounded to nearest-even.
pub fn f64_to_f16(x: f64) -> u16 {
    round_ieee(x, 5, 10)
}

/// `x` as bfloat16 bits, rounded to nearest-even.
pub fn f64_to_bf16(x: f64) -> u16 {
    round_ieee(x, 8, 7)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::decode::{copy_element, to_f64};
    use crate::element::types::{type_info, TYPES};

    fn value(tag: u8, bits: u16) -> f64 {
        to_f64(type_info(tag).unwrap(), &bits.to_le_bytes()).unwrap()
    }

    #[test]
    fn every_float16_and_bfloat16_value_rounds_to_itself() {
        for (tag, round) in [(0x01u8, f64_to_f16 as fn(f64) -> u16), (0x02, f64_to_bf16)] {
            for bits in 0..=u16::MAX {
                let v = value(tag, bits);
                let back = round(v);
                if v.is_nan() {
                    assert!(value(tag, back).is_nan(), "tag {tag:#x} {bits:#06x}");
                } else {
                    assert_eq!(back, bits, "tag {tag:#x} {bits:#06x} = {v}");
                }
            }
        }
    }

    #[test]
    fn midpoints_round_to_even_and_overflow_to_infinity() {
        // float16 around 1: spacing 2^-10.
        let ulp = 2f64.powi(-10);
        assert_eq!(f64_to_f16(1.0 + ulp / 2.0), 0x3C00); // tie: to even (1.0)
        assert_eq!(f64_to_f16(1.0 + 1.5 * ulp), 0x3C02); // tie: to even
        assert_eq!(f64_to_f16(1.0 + 0.51 * ulp), 0x3C01);
        assert_eq!(f64_to_f16(65504.0), 0x7BFF);
        assert_eq!(f64_to_f16(65520.0), 0x7C00); // half-way to 2^16: infinity
        assert_eq!(f64_to_f16(-1e9), 0xFC00);
        assert_eq!(f64_to_f16(2f64.powi(-25)), 0x0000); // tie below the smallest subnormal
        assert_eq!(f64_to_f16(2f64.powi(-25) * 1.01), 0x0001);
        assert_eq!(f64_to_f16(-0.0), 0x8000);
        assert_eq!(f64_to_bf16(1.0 + 2f64.powi(-8)), 0x3F80); // tie to even
        assert_eq!(f64_to_bf16(f64::MAX), 0x7F80);
    }

    #[test]
    fn stored_elements_read_back_and_leave_neighbours_alone() {
        for ty in TYPES.iter() {
            let n = 9usize;
            let bytes = crate::element::size::values_bytes(ty, n as u64).unwrap() as usize;
            let mut buf = vec![0xA5u8; bytes];
            let before: Vec<[u8; 16]> = (0..n)
                .map(|i| {
                    let mut s = [0u8; 16];
                    copy_element(ty, &buf, i, &mut s);
                    s
                })
                .collect();
            let mut pattern = [0u8; 16];
            for (k, b) in pattern.iter_mut().enumerate() {
                *b = (k as u8).wrapping_mul(37) ^ 0x5C;
            }
            store_element(ty, &mut buf, 4, &pattern);
            for (i, old) in before.iter().enumerate() {
                let mut s = [0u8; 16];
                copy_element(ty, &buf, i, &mut s);
                let w = ty.lookup_bytes();
                if i == 4 {
                    let mask = if ty.is_sub_byte() {
                        (1u16 << ty.bits) as u8 - 1
                    } else {
                        0xFF
                    };
                    assert_eq!(s[0], pattern[0] & mask, "{}", ty.name());
                    assert_eq!(s[1..w], pattern[1..w], "{}", ty.name());
                } else {
                    assert_eq!(s[..w], old[..w], "{} element {i}", ty.name());
                }
            }
        }
    }
}
