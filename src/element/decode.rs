//! Reading elements out of a values buffer: their storage bits, and their
//! numeric value as an `f64`.

use crate::element::types::{Encoding, Specials, TypeInfo};

/// The bit pattern of sub-byte element `i` (1-, 2-, 4- or 6-bit types),
/// LSB-first as the format packs them. `values` must hold element `i`.
pub fn sub_byte_pattern(bits: u32, values: &[u8], i: usize) -> u8 {
    if bits == 6 {
        // Four elements in three bytes, LSB-first across byte boundaries.
        let g = (i / 4) * 3;
        let word =
            u32::from(values[g]) | u32::from(values[g + 1]) << 8 | u32::from(values[g + 2]) << 16;
        ((word >> ((i % 4) * 6)) & 0x3F) as u8
    } else {
        let per_byte = (8 / bits) as usize;
        let shift = (i % per_byte) as u32 * bits;
        (values[i / per_byte] >> shift) & ((1u8 << bits) - 1)
    }
}

/// Copy the storage of element `i` into `out` (which must hold
/// `ty.lookup_bytes()` bytes): little-endian bytes for whole-byte types, one
/// byte holding the bit pattern in its low bits for sub-byte types.
pub fn copy_element(ty: &TypeInfo, values: &[u8], i: usize, out: &mut [u8]) {
    if ty.is_sub_byte() {
        out[0] = sub_byte_pattern(ty.bits, values, i);
    } else {
        let w = ty.lookup_bytes();
        out[..w].copy_from_slice(&values[i * w..(i + 1) * w]);
    }
}

/// The first padding byte of a sub-byte values buffer of `n` elements that has
/// a nonzero padding bit: `(byte index, byte value, padding mask)`.
/// Whole-byte types have no padding.
pub fn first_nonzero_padding(ty: &TypeInfo, values: &[u8], n: u64) -> Option<(usize, u8, u8)> {
    if !ty.is_sub_byte() {
        return None;
    }
    let used_bits = u128::from(n) * u128::from(ty.bits);
    let first = usize::try_from(used_bits / 8).ok()?;
    let partial = (used_bits % 8) as u32;
    values
        .iter()
        .enumerate()
        .skip(first)
        .find_map(|(k, &byte)| {
            let mask = if k == first && partial != 0 {
                !((1u8 << partial) - 1)
            } else {
                0xFF
            };
            (byte & mask != 0).then_some((k, byte, mask))
        })
}

/// 2^k as an `f64`, for k in the normal range.
fn pow2(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

fn minifloat(v: u32, exp: u32, man: u32, bias: i32, specials: Specials) -> f64 {
    let negative = (v >> (exp + man)) & 1 == 1;
    let e = (v >> man) & ((1 << exp) - 1);
    let m = v & ((1 << man) - 1);
    let e_max = (1 << exp) - 1;
    let special = match specials {
        Specials::Ieee if e == e_max => Some(if m == 0 { f64::INFINITY } else { f64::NAN }),
        Specials::NanOnlyAllOnes if e == e_max && m == (1 << man) - 1 => Some(f64::NAN),
        _ => None,
    };
    let magnitude = special.unwrap_or_else(|| {
        let (sig, exp2) = if e == 0 {
            (m, 1 - bias - man as i32)
        } else {
            (m | 1 << man, e as i32 - bias - man as i32)
        };
        f64::from(sig) * pow2(exp2)
    });
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// Round `x >> s` to nearest, ties to even.
fn round_shift(x: u128, s: u32) -> u128 {
    if s == 0 {
        return x;
    }
    if s >= 128 {
        return 0; // x < 2^113 here, far below half of 2^s
    }
    let q = x >> s;
    let rem = x & ((1u128 << s) - 1);
    let half = 1u128 << (s - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

/// IEEE binary128 to the nearest binary64 (ties to even), including
/// subnormal results, overflow to infinity and NaN.
pub fn f128_to_f64(bits: u128) -> f64 {
    let negative = bits >> 127 == 1;
    let e = ((bits >> 112) & 0x7FFF) as i32;
    let m = bits & ((1u128 << 112) - 1);
    let magnitude = if e == 0x7FFF {
        if m == 0 {
            f64::INFINITY
        } else {
            f64::NAN
        }
    } else if e == 0 && m == 0 {
        0.0
    } else {
        // value = sig * 2^exp2 with sig < 2^113
        let (sig, exp2) = if e == 0 {
            (m, 1 - 16383 - 112)
        } else {
            (m | 1u128 << 112, e - 16383 - 112)
        };
        let nbits = 128 - sig.leading_zeros() as i32;
        let msb_exp = exp2 + nbits - 1;
        if msb_exp > 1023 {
            f64::INFINITY
        } else {
            // Significant bits binary64 keeps at this magnitude.
            let keep = if msb_exp >= -1022 { 53 } else { msb_exp + 1075 };
            let shift = nbits - keep;
            let r = if shift >= 0 {
                round_shift(sig, shift as u32)
            } else {
                sig << (-shift) as u32
            } as u64;
            let bits64 = if msb_exp >= -1022 {
                // r in [2^52, 2^53]; a carry to 2^53 bumps the exponent,
                // and past the largest exponent lands exactly on infinity.
                (((msb_exp + 1022) as u64) << 52) + r
            } else {
                r // subnormal: r * 2^-1074 (r == 2^52 is the smallest normal)
            };
            f64::from_bits(bits64)
        }
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// The numeric value of one element given its lookup storage (as written by
/// [`copy_element`]), or `None` for complex types.
pub fn to_f64(ty: &TypeInfo, storage: &[u8]) -> Option<f64> {
    let le = |n: usize| {
        let mut buf = [0u8; 16];
        buf[..n].copy_from_slice(&storage[..n]);
        u128::from_le_bytes(buf)
    };
    let width = ty.lookup_bytes();
    let raw = le(width);
    Some(match ty.encoding {
        Encoding::MiniFloat {
            exp,
            man,
            bias,
            specials,
        } => minifloat(raw as u32, exp, man, bias, specials),
        Encoding::F32 => f64::from(f32::from_bits(raw as u32)),
        Encoding::F64 => f64::from_bits(raw as u64),
        Encoding::F128 => f128_to_f64(raw),
        // 0x00 and 0xFF are reserved (NaN per OCP MX): a permissive handle
        // may still hold them, and they must not read as numbers.
        Encoding::E8M0 => match raw as u8 {
            0x00 | 0xFF => f64::NAN,
            b => pow2(i32::from(b) - 127),
        },
        Encoding::Int => {
            let unused = 128 - ty.bits;
            (((raw << unused) as i128) >> unused) as f64
        }
        Encoding::UInt => raw as f64,
        Encoding::Bool => f64::from((raw & 1) as u8),
        Encoding::Complex => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::types::type_info;

    fn val(tag: u8, bytes: &[u8]) -> f64 {
        to_f64(type_info(tag).unwrap(), bytes).unwrap()
    }

    #[test]
    fn float16_and_bfloat16() {
        assert_eq!(val(0x01, &0x3C00u16.to_le_bytes()), 1.0);
        assert_eq!(val(0x01, &0xC000u16.to_le_bytes()), -2.0);
        assert_eq!(val(0x01, &0x7BFFu16.to_le_bytes()), 65504.0);
        assert_eq!(val(0x01, &0x0001u16.to_le_bytes()), 2f64.powi(-24));
        assert_eq!(val(0x01, &0x7C00u16.to_le_bytes()), f64::INFINITY);
        assert_eq!(val(0x01, &0xFC00u16.to_le_bytes()), f64::NEG_INFINITY);
        assert!(val(0x01, &0x7E00u16.to_le_bytes()).is_nan());
        assert_eq!(
            val(0x01, &0x8000u16.to_le_bytes()).to_bits(),
            (-0.0f64).to_bits()
        );
        assert_eq!(val(0x02, &0x3F80u16.to_le_bytes()), 1.0);
        assert_eq!(val(0x02, &0xC0A0u16.to_le_bytes()), -5.0);
        assert_eq!(val(0x02, &0x0001u16.to_le_bytes()), 2f64.powi(-133));
        assert_eq!(val(0x02, &0x7F80u16.to_le_bytes()), f64::INFINITY);
    }

    #[test]
    fn float8_variants_per_ocp() {
        // E4M3: bias 7, max 448, NaN only at S.1111.111, no infinity.
        assert_eq!(val(0x40, &[0x38]), 1.0);
        assert_eq!(val(0x40, &[0x7E]), 448.0);
        assert_eq!(val(0x40, &[0xFE]), -448.0);
        assert_eq!(val(0x40, &[0x78]), 256.0); // exponent all ones is finite
        assert!(val(0x40, &[0x7F]).is_nan());
        assert!(val(0x40, &[0xFF]).is_nan());
        assert_eq!(val(0x40, &[0x01]), 2f64.powi(-9));
        // E5M2: bias 15, IEEE specials.
        assert_eq!(val(0x41, &[0x3C]), 1.0);
        assert_eq!(val(0x41, &[0x7B]), 57344.0);
        assert_eq!(val(0x41, &[0x7C]), f64::INFINITY);
        assert_eq!(val(0x41, &[0xFC]), f64::NEG_INFINITY);
        assert!(val(0x41, &[0x7D]).is_nan());
        // E8M0: 2^(b-127) for 0x01..=0xFE; the reserved 0x00 and 0xFF are NaN.
        assert_eq!(val(0x42, &[127]), 1.0);
        assert_eq!(val(0x42, &[130]), 8.0);
        assert_eq!(val(0x42, &[1]), 2f64.powi(-126));
        assert_eq!(val(0x42, &[0xFE]), 2f64.powi(127));
        assert!(val(0x42, &[0]).is_nan());
        assert!(val(0x42, &[0xFF]).is_nan());
    }

    #[test]
    fn mx_sub_byte_floats() {
        // float4_e2m1: values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives.
        let e2m1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        for (p, want) in e2m1.iter().enumerate() {
            assert_eq!(val(0x43, &[p as u8]), *want);
            assert_eq!(val(0x43, &[p as u8 | 0x8]), -*want);
        }
        // float6_e2m3: max 7.5, min subnormal 0.125.
        assert_eq!(val(0x44, &[0x1F]), 7.5);
        assert_eq!(val(0x44, &[0x01]), 0.125);
        assert_eq!(val(0x44, &[0x08]), 1.0);
        assert_eq!(val(0x44, &[0x3F]), -7.5);
        // float6_e3m2: max 28, min subnormal 0.0625.
        assert_eq!(val(0x45, &[0x1F]), 28.0);
        assert_eq!(val(0x45, &[0x01]), 0.0625);
        assert_eq!(val(0x45, &[0x0C]), 1.0);
    }

    #[test]
    fn integers_and_bool() {
        assert_eq!(val(0x10, &[0xFF]), -1.0);
        assert_eq!(val(0x11, &[0xFF]), 255.0);
        assert_eq!(val(0x12, &(-300i16).to_le_bytes()), -300.0);
        assert_eq!(val(0x15, &u32::MAX.to_le_bytes()), 4294967295.0);
        assert_eq!(val(0x16, &i64::MIN.to_le_bytes()), -(2f64.powi(63)));
        assert_eq!(val(0x17, &u64::MAX.to_le_bytes()), 2f64.powi(64));
        assert_eq!(val(0x48, &[0x8]), -8.0);
        assert_eq!(val(0x48, &[0x7]), 7.0);
        assert_eq!(val(0x48, &[0xF]), -1.0);
        assert_eq!(val(0x49, &[0xF]), 15.0);
        assert_eq!(val(0x4A, &[0b10]), -2.0);
        assert_eq!(val(0x4A, &[0b11]), -1.0);
        assert_eq!(val(0x4A, &[0b01]), 1.0);
        assert_eq!(val(0x4B, &[0b11]), 3.0);
        assert_eq!(val(0x20, &[1]), 1.0);
        assert_eq!(val(0x20, &[0]), 0.0);
    }

    #[test]
    fn float128_rounds_to_nearest_double() {
        let one = 0x3FFFu128 << 112;
        assert_eq!(f128_to_f64(one), 1.0);
        assert_eq!(f128_to_f64(one | 1u128 << 127), -1.0);
        // 1 + 2^-53 is a tie: rounds to even (1.0); 1 + 2^-53 + 2^-112 rounds up.
        let half_ulp = 1u128 << (112 - 53);
        assert_eq!(f128_to_f64(one | half_ulp), 1.0);
        assert_eq!(f128_to_f64(one | half_ulp | 1), 1.0 + f64::EPSILON);
        // 1 + 3 * 2^-53 is a tie that rounds up to even.
        assert_eq!(f128_to_f64(one | (3 * half_ulp)), 1.0 + 2.0 * f64::EPSILON);
        // Largest double, and overflow past it.
        assert_eq!(f128_to_f64(f64_as_f128(f64::MAX)), f64::MAX);
        assert_eq!(f128_to_f64((16383u128 + 1024) << 112), f64::INFINITY);
        // Smallest subnormal double, and half of it (a tie to even: zero).
        let min_sub = (16383u128 - 1074) << 112;
        assert_eq!(f128_to_f64(min_sub), f64::from_bits(1));
        assert_eq!(f128_to_f64((16383u128 - 1075) << 112), 0.0);
        assert_eq!(
            f128_to_f64(((16383u128 - 1075) << 112) | 1),
            f64::from_bits(1)
        );
        // Every double survives a round trip through binary128.
        for x in [0.1, -3.75, 1e300, 1e-310, 2f64.powi(-1022), 123456.789] {
            assert_eq!(f128_to_f64(f64_as_f128(x)), x, "{x}");
        }
        assert!(f128_to_f64(0x7FFFu128 << 112 | 1).is_nan());
        assert_eq!(f128_to_f64(0x7FFFu128 << 112), f64::INFINITY);
        assert_eq!(f128_to_f64(0), 0.0);
    }

    /// Exact binary64 -> binary128 widening, for the test oracle.
    fn f64_as_f128(x: f64) -> u128 {
        let b = x.to_bits();
        let sign = u128::from(b >> 63) << 127;
        let e = ((b >> 52) & 0x7FF) as i32;
        let m = u128::from(b & ((1 << 52) - 1));
        if e == 0 {
            if m == 0 {
                return sign;
            }
            // subnormal double: normalise
            let lz = 52 - (127 - m.leading_zeros() as i32); // shifts to put MSB at bit 52
            let m_norm = (m << lz) & ((1 << 52) - 1);
            let e128 = (1 - 1023 - lz + 16383) as u128;
            return sign | e128 << 112 | m_norm << 60;
        }
        sign | ((e - 1023 + 16383) as u128) << 112 | m << 60
    }

    #[test]
    fn sub_byte_packing_is_lsb_first() {
        // uint4 [5, 12, 3] -> C5 03 (spec example)
        let v = [0xC5, 0x03];
        assert_eq!(sub_byte_pattern(4, &v, 0), 5);
        assert_eq!(sub_byte_pattern(4, &v, 1), 12);
        assert_eq!(sub_byte_pattern(4, &v, 2), 3);
        // uint2 [3, 1, 2] -> 0x27 (spec example)
        assert_eq!(sub_byte_pattern(2, &[0x27], 0), 3);
        assert_eq!(sub_byte_pattern(2, &[0x27], 1), 1);
        assert_eq!(sub_byte_pattern(2, &[0x27], 2), 2);
        // bool [t, f, t, t, f] -> 0x0D (spec example)
        let bools: Vec<u8> = (0..5).map(|i| sub_byte_pattern(1, &[0x0D], i)).collect();
        assert_eq!(bools, [1, 0, 1, 1, 0]);
        // 6-bit: elements a, b, c, d packed LSB-first across 3 bytes.
        let (a, b, c, d) = (0x2Au32, 0x15, 0x3F, 0x01);
        let word = a | b << 6 | c << 12 | d << 18;
        let bytes = [word as u8, (word >> 8) as u8, (word >> 16) as u8];
        assert_eq!(sub_byte_pattern(6, &bytes, 0), 0x2A);
        assert_eq!(sub_byte_pattern(6, &bytes, 1), 0x15);
        assert_eq!(sub_byte_pattern(6, &bytes, 2), 0x3F);
        assert_eq!(sub_byte_pattern(6, &bytes, 3), 0x01);
        // element 4k+1 = B0[7:6] + B1[3:0]
        assert_eq!(
            u32::from(sub_byte_pattern(6, &bytes, 1)),
            u32::from(bytes[0] >> 6) | (u32::from(bytes[1] & 0xF) << 2)
        );
    }

    #[test]
    fn padding_detection() {
        let int4 = type_info(0x48).unwrap();
        assert_eq!(first_nonzero_padding(int4, &[0x21, 0x43, 0x05], 5), None);
        assert_eq!(
            first_nonzero_padding(int4, &[0x21, 0x43, 0x15], 5),
            Some((2, 0x15, 0xF0))
        );
        let b = type_info(0x20).unwrap();
        assert_eq!(first_nonzero_padding(b, &[0x0D], 5), None);
        assert_eq!(first_nonzero_padding(b, &[0x2D], 5), Some((0, 0x2D, 0xE0)));
        assert_eq!(first_nonzero_padding(b, &[0xFF], 8), None);
        let f6 = type_info(0x44).unwrap();
        // one 6-bit element: bits 6..24 are padding
        assert_eq!(first_nonzero_padding(f6, &[0x3F, 0, 0], 1), None);
        assert_eq!(
            first_nonzero_padding(f6, &[0x3F, 0, 0x80], 1),
            Some((2, 0x80, 0xFF))
        );
        assert_eq!(
            first_nonzero_padding(f6, &[0x7F, 0, 0], 1),
            Some((0, 0x7F, 0xC0))
        );
        let f32t = type_info(0x03).unwrap();
        assert_eq!(first_nonzero_padding(f32t, &[0xFF; 4], 1), None);
    }
}
