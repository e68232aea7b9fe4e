//! Writing elements into a values buffer (the inverse of `decode`), and the
//! roundings from `f64` that give float16 and bfloat16 their own arithmetic
//! (a sum of two of them computed in `f64` is exact, so rounding it once is
//! the correctly rounded sum).

use crate::element::types::{Specials, TypeInfo};

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

/// `x` rounded to nearest-even into a mini-float of `exp` exponent bits,
/// `man` mantissa bits, exponent bias `2^(exp-1) - 1`, with `specials`
/// deciding what the all-ones exponent means: IEEE (float16, bfloat16,
/// float8_e5m2: overflow gives infinity), OCP E4M3 (only all ones is NaN:
/// overflow saturates to 448), OCP MX sub-byte floats (every pattern finite:
/// overflow saturates to the largest value). NaN gives a quiet NaN where
/// the type has one, and the largest value otherwise.
pub fn round_minifloat(x: f64, exp: u32, man: u32, specials: Specials) -> u32 {
    let sign = u32::from(x.is_sign_negative()) << (exp + man);
    let e_ones = (1u32 << exp) - 1;
    let man_ones = (1u32 << man) - 1;
    // The largest finite pattern's exponent field and mantissa.
    let (max_e, max_m) = match specials {
        Specials::Ieee => (e_ones - 1, man_ones),
        Specials::NanOnlyAllOnes => (e_ones, man_ones - 1),
        Specials::None => (e_ones, man_ones),
    };
    let largest = sign | max_e << man | max_m;
    if x.is_nan() {
        return match specials {
            Specials::Ieee => sign | e_ones << man | 1 << (man - 1),
            Specials::NanOnlyAllOnes => sign | e_ones << man | man_ones,
            Specials::None => largest,
        };
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
    let mut q = scaled.round_ties_even().min(f64::from(u32::MAX)) as u64;
    let mut e = e;
    if q >= 1u64 << (man + 1) {
        // Rounded up to the next binade.
        q >>= 1;
        e += 1;
    }
    let biased = if q < 1u64 << man {
        0
    } else {
        (e + bias) as u64
    };
    let beyond = biased > u64::from(max_e)
        || (biased == u64::from(max_e) && (q & u64::from(man_ones)) > u64::from(max_m));
    if beyond {
        return match specials {
            Specials::Ieee => sign | e_ones << man, // infinity
            _ => largest,
        };
    }
    sign | ((biased << man) | (q & u64::from(man_ones))) as u32
}

/// `x` as float16 bits, rounded to nearest-even.
pub fn f64_to_f16(x: f64) -> u16 {
    round_minifloat(x, 5, 10, Specials::Ieee) as u16
}

/// `x` as bfloat16 bits, rounded to nearest-even.
pub fn f64_to_bf16(x: f64) -> u16 {
    round_minifloat(x, 8, 7, Specials::Ieee) as u16
}

/// `x` as float8_e8m0 bits (a power of two, `2^(b - 127)`): the nearest
/// power of two in log2 (ties up), clamped to the valid codes 0x01..=0xFE;
/// NaN, zero and negatives, which E8M0 cannot hold, give 0x01 (the
/// smallest) and a NaN 0xFE.
pub fn f64_to_e8m0(x: f64) -> u8 {
    if x.is_nan() {
        return 0xFE;
    }
    if x <= 0.0 {
        return 0x01;
    }
    let l = x.log2().round();
    (l + 127.0).clamp(1.0, 254.0) as u8
}

/// `x` as binary128 bits (exact: every double is a binary128).
pub fn f64_to_f128(x: f64) -> u128 {
    let bits = x.to_bits();
    let sign = u128::from(bits >> 63) << 127;
    let e = ((bits >> 52) & 0x7FF) as i64;
    let m = u128::from(bits & ((1 << 52) - 1));
    if e == 0x7FF {
        // Infinity or NaN, payload kept in the top of the mantissa.
        return sign | (0x7FFFu128 << 112) | (m << 60);
    }
    if e == 0 {
        if m == 0 {
            return sign;
        }
        // A double subnormal is a binary128 normal.
        let shift = m.leading_zeros() - (128 - 53); // bits to bring the top bit to bit 52
        let exp = 1 - 1023 - i64::from(shift) + 16383;
        let frac = (m << shift) & ((1u128 << 52) - 1);
        return sign | ((exp as u128) << 112) | (frac << 60);
    }
    sign | (((e - 1023 + 16383) as u128) << 112) | (m << 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::decode::{copy_element, to_f64};
    use crate::element::types::{type_info, Encoding, TYPES};

    fn value(tag: u8, bits: u16) -> f64 {
        to_f64(type_info(tag).unwrap(), &bits.to_le_bytes()).unwrap()
    }

    #[test]
    fn every_minifloat_value_rounds_to_itself() {
        for ty in TYPES.iter() {
            let Encoding::MiniFloat {
                exp, man, specials, ..
            } = ty.encoding
            else {
                continue;
            };
            for bits in 0..(1u32 << ty.bits) {
                let v = value(ty.tag, bits as u16);
                let back = round_minifloat(v, exp, man, specials);
                if v.is_nan() {
                    assert!(
                        value(ty.tag, back as u16).is_nan(),
                        "{} {bits:#x}",
                        ty.name()
                    );
                } else {
                    assert_eq!(back, bits, "{} {bits:#x} = {v}", ty.name());
                }
            }
        }
    }

    #[test]
    fn out_of_range_saturates_or_overflows_as_the_type_says() {
        let f = |tag: u8, x: f64| {
            let ty = type_info(tag).unwrap();
            let Encoding::MiniFloat {
                exp, man, specials, ..
            } = ty.encoding
            else {
                unreachable!()
            };
            round_minifloat(x, exp, man, specials)
        };
        assert_eq!(f(0x40, 1e6), 0x7E); // e4m3: 448, no infinity
        assert_eq!(f(0x40, -1e6), 0xFE);
        assert_eq!(f(0x41, 1e6), 0x7C); // e5m2: infinity
        assert_eq!(f(0x43, 100.0), 0x7); // float4_e2m1: 6.0
        assert_eq!(f(0x44, 100.0), 0x1F); // float6_e2m3: 7.5
        assert_eq!(f(0x45, 100.0), 0x1F); // float6_e3m2: 28.0
        assert_eq!(f(0x43, 2.5), 0x4); // tie 2.5 -> 2 (even)
        assert_eq!(f64_to_e8m0(1.0), 127);
        assert_eq!(f64_to_e8m0(3.0), 129); // log2 3 = 1.58 -> 2^2
        assert_eq!(f64_to_e8m0(1e300), 0xFE);
        assert_eq!(f64_to_e8m0(0.0), 0x01);
        for x in [
            0.0,
            -0.0,
            1.0,
            -2.5,
            1e-310,
            3.0e300,
            f64::INFINITY,
            f64::MIN_POSITIVE,
        ] {
            let back = crate::element::decode::f128_to_f64(f64_to_f128(x));
            assert_eq!(back.to_bits(), x.to_bits(), "{x}");
        }
        assert!(crate::element::decode::f128_to_f64(f64_to_f128(f64::NAN)).is_nan());
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
