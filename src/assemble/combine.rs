//! The value arithmetic of the duplicate policies, on one element's storage
//! (little-endian bytes, or a sub-byte pattern in one byte). A SUM uses the
//! type's own arithmetic: float32 and float64 natively; float16 and
//! bfloat16 computed exactly in double and rounded once (the correctly
//! rounded sum); integers exactly, an overflow being an error; complex
//! numbers part by part. Only when asked (a rounded sum): float8, float6,
//! float4 and float128 in double rounded to the type, float8_e8m0 to the
//! nearest power of two, bool as OR, sub-byte integers exactly. MIN and MAX
//! compare the values (integers exactly; NaN loses to any number).
//!
//! A float sum with a NaN addend has defined bits (`sum_f64`,
//! `sum_f32`): the first NaN addend, in triplet order, quieted. Native
//! addition does not define which addend's payload such a sum carries, and
//! the compiler may swap the addends: left alone, an assembly and its
//! re-assembly through a plan could differ in a NaN's bits. (A NaN sum of
//! two numbers, infinities of opposite signs, is the processor's default
//! NaN whichever comes first.) A loop may add natively and redo its work
//! through these only when it read a NaN: with no NaN addend the two
//! agree.

use super::read::Reader;
use super::Duplicates;
use crate::element::decode::{copy_element, f128_to_f64, to_f64};
use crate::element::encode::{f64_to_e8m0, f64_to_f128, round_minifloat};
use crate::element::types::{Encoding, TypeInfo};
use crate::error::counted_from;
use crate::error::{CooError, Coords};

/// One element's storage, as `decode::copy_element` gives it.
pub(crate) type Storage = [u8; 16];

/// Whether SUM is meaningful for `ty`: not for sub-byte, float8, float128
/// or bool values (their sums would round or wrap in ways no solver wants).
fn sum_supported(ty: &TypeInfo) -> bool {
    match ty.encoding {
        Encoding::F32 | Encoding::F64 | Encoding::Complex => true,
        Encoding::Int | Encoding::UInt => !ty.is_sub_byte(),
        Encoding::MiniFloat { exp, man, .. } => (exp, man) == (5, 10) || (exp, man) == (8, 7),
        _ => false,
    }
}

/// Refuse a policy the type cannot do, before any work. With
/// `rounded_sum` every real type may SUM: computed in double, rounded to the
/// type (saturating where it has no infinity), bool as OR, sub-byte
/// integers exactly with overflow an error.
pub(crate) fn check_policy(
    ty: &'static TypeInfo,
    has_values: bool,
    dup: Duplicates,
    rounded_sum: bool,
) -> Result<(), CooError> {
    if !has_values {
        return Ok(());
    }
    let reason = match dup {
        Duplicates::Sum if !sum_supported(ty) && !rounded_sum => {
            "has no exact or meaningful sum here (sub-byte, float8, float128 and bool values); \
             use FIRST, LAST, MIN or MAX, or ask for a rounded sum \
             (HURRAY_ASSEMBLE_ROUNDED_SUM)"
        }
        Duplicates::Min | Duplicates::Max if ty.encoding == Encoding::Complex => {
            "is complex, which has no order; use SUM, FIRST or LAST"
        }
        _ => return Ok(()),
    };
    Err(CooError::UnsupportedType {
        what: match dup {
            Duplicates::Sum => "assembly with SUM",
            Duplicates::Min => "assembly with MIN",
            _ => "assembly with MAX",
        },
        tag: ty.tag,
        name: ty.name(),
        reason,
    })
}

/// The two float sums with a defined NaN (module doc), one rule for both
/// widths: `$sum(a, b)` is `a + b`, or, when an addend is NaN, the first
/// NaN addend quieted (`$quiet` is the width's quiet bit). Every SUM of
/// that type goes through it, or through a loop that adds natively and
/// comes here again when it met a NaN, so every path gives the same bits.
macro_rules! defined_nan_sum {
    ($sum:ident, $nan:ident, $t:ty, $quiet:expr) => {
        #[inline(always)]
        pub(crate) fn $sum(a: $t, b: $t) -> $t {
            let s = a + b;
            if s.is_nan() {
                $nan(a, b)
            } else {
                s
            }
        }

        #[cold]
        #[inline(never)]
        fn $nan(a: $t, b: $t) -> $t {
            match (a.is_nan(), b.is_nan()) {
                (true, _) => <$t>::from_bits(a.to_bits() | $quiet),
                (false, true) => <$t>::from_bits(b.to_bits() | $quiet),
                // Infinities of opposite signs: the processor's default
                // NaN, the same whichever addend comes first.
                _ => a + b,
            }
        }
    };
}
defined_nan_sum!(sum_f64, nan_sum_f64, f64, 1u64 << 51);
defined_nan_sum!(sum_f32, nan_sum_f32, f32, 1u32 << 22);

/// `acc += x` in `ty`'s arithmetic; `Err(())` when an integer sum does not
/// fit the type.
pub(crate) fn add(ty: &TypeInfo, acc: &mut Storage, x: &Storage) -> Result<(), ()> {
    match ty.encoding {
        Encoding::F64 => {
            let s = sum_f64(
                f64::from_le_bytes(acc[..8].try_into().unwrap_or([0; 8])),
                f64::from_le_bytes(x[..8].try_into().unwrap_or([0; 8])),
            );
            acc[..8].copy_from_slice(&s.to_le_bytes());
        }
        Encoding::F32 => add_f32(acc, x, 0),
        Encoding::Complex if ty.bits == 64 => {
            add_f32(acc, x, 0);
            add_f32(acc, x, 4);
        }
        Encoding::Complex => {
            for at in [0usize, 8] {
                let s = sum_f64(
                    f64::from_le_bytes(acc[at..at + 8].try_into().unwrap_or([0; 8])),
                    f64::from_le_bytes(x[at..at + 8].try_into().unwrap_or([0; 8])),
                );
                acc[at..at + 8].copy_from_slice(&s.to_le_bytes());
            }
        }
        Encoding::MiniFloat {
            exp, man, specials, ..
        } => {
            // Both addends are exact in double and so is their sum (float16
            // and the 8-, 6- and 4-bit floats), or it is off only far below
            // bfloat16's precision: one rounding.
            let s = sum_f64(
                to_f64(ty, acc).unwrap_or(f64::NAN),
                to_f64(ty, x).unwrap_or(f64::NAN),
            );
            let bits = round_minifloat(s, exp, man, specials);
            let w = ty.lookup_bytes();
            acc[..w].copy_from_slice(&bits.to_le_bytes()[..w]);
        }
        Encoding::E8M0 => {
            let s = sum_f64(
                to_f64(ty, acc).unwrap_or(f64::NAN),
                to_f64(ty, x).unwrap_or(f64::NAN),
            );
            acc[0] = f64_to_e8m0(s);
        }
        Encoding::F128 => {
            let s = sum_f64(
                f128_to_f64(u128::from_le_bytes(*acc)),
                f128_to_f64(u128::from_le_bytes(*x)),
            );
            *acc = f64_to_f128(s).to_le_bytes();
        }
        Encoding::Bool => acc[0] = (acc[0] | x[0]) & 1,
        Encoding::Int | Encoding::UInt => {
            let s = int_value(ty, acc) + int_value(ty, x);
            let bits = ty.bits;
            let (lo, hi) = if ty.encoding == Encoding::Int {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            if s < lo || s > hi {
                return Err(());
            }
            if bits < 8 {
                acc[0] = (s as u8) & ((1u16 << bits) - 1) as u8;
            } else {
                let w = (bits / 8) as usize;
                acc[..w].copy_from_slice(&s.to_le_bytes()[..w]);
            }
        }
    }
    Ok(())
}

fn add_f32(acc: &mut Storage, x: &Storage, at: usize) {
    let s = sum_f32(
        f32::from_le_bytes(acc[at..at + 4].try_into().unwrap_or([0; 4])),
        f32::from_le_bytes(x[at..at + 4].try_into().unwrap_or([0; 4])),
    );
    acc[at..at + 4].copy_from_slice(&s.to_le_bytes());
}

/// An integer element's value, exactly.
fn int_value(ty: &TypeInfo, s: &Storage) -> i128 {
    let raw = u128::from_le_bytes(*s) & ((1u128 << ty.bits) - 1);
    if ty.encoding == Encoding::Int {
        let unused = 128 - ty.bits;
        ((raw << unused) as i128) >> unused
    } else {
        raw as i128
    }
}

/// Whether `x` replaces `acc` under MIN (`max` false) or MAX (`max` true).
pub(crate) fn better(ty: &TypeInfo, max: bool, acc: &Storage, x: &Storage) -> bool {
    if matches!(ty.encoding, Encoding::Int | Encoding::UInt) {
        let (a, b) = (int_value(ty, acc), int_value(ty, x));
        return if max { b > a } else { b < a };
    }
    let (a, b) = (
        to_f64(ty, acc).unwrap_or(f64::NAN),
        to_f64(ty, x).unwrap_or(f64::NAN),
    );
    match (a.is_nan(), b.is_nan()) {
        (_, true) => false,
        (true, false) => true,
        _ if max => b > a,
        _ => b < a,
    }
}

/// Whether a value is zero (either sign for floats; both parts for complex).
pub(crate) fn is_zero(ty: &TypeInfo, s: &Storage) -> bool {
    match ty.encoding {
        Encoding::Complex if ty.bits == 64 => (0..2)
            .all(|k| f32::from_le_bytes(s[k * 4..k * 4 + 4].try_into().unwrap_or([0; 4])) == 0.0),
        Encoding::Complex => (0..2)
            .all(|k| f64::from_le_bytes(s[k * 8..k * 8 + 8].try_into().unwrap_or([0; 8])) == 0.0),
        _ => to_f64(ty, s) == Some(0.0),
    }
}

/// Combines the values of one group of triplets with equal coordinates.
pub(super) struct Combine<'a> {
    ty: &'static TypeInfo,
    dup: Duplicates,
    values: Option<&'a [u8]>,
    base: u8,
}

impl<'a> Combine<'a> {
    pub(super) fn new(
        ty: &'static TypeInfo,
        dup: Duplicates,
        values: Option<&'a [u8]>,
        base: u8,
    ) -> Combine<'a> {
        Combine {
            ty,
            dup,
            values,
            base,
        }
    }

    fn element(&self, values: &[u8], i: usize) -> Storage {
        let mut s = [0u8; 16];
        copy_element(self.ty, values, i, &mut s);
        s
    }

    /// The value the group `members` (triplet numbers, in triplet order)
    /// stands for.
    pub(super) fn group(
        &self,
        members: &[usize],
        reader: &Reader<'_>,
    ) -> Result<Storage, CooError> {
        let Some(values) = self.values else {
            let mut t = [0u8; 16];
            t[0] = 1; // a pattern: bool true
            return Ok(t);
        };
        let first = members[0];
        let mut acc = self.element(values, first);
        match self.dup {
            Duplicates::Error | Duplicates::First => {}
            Duplicates::Last => acc = self.element(values, members[members.len() - 1]),
            Duplicates::Sum => {
                for &i in &members[1..] {
                    if add(self.ty, &mut acc, &self.element(values, i)).is_err() {
                        return Err(self.overflow(first, i, reader));
                    }
                }
            }
            Duplicates::Min | Duplicates::Max => {
                let max = self.dup == Duplicates::Max;
                for &i in &members[1..] {
                    let x = self.element(values, i);
                    if better(self.ty, max, &acc, &x) {
                        acc = x;
                    }
                }
            }
        }
        Ok(acc)
    }

    pub(super) fn is_zero(&self, s: &Storage) -> bool {
        self.values.is_some() && is_zero(self.ty, s)
    }

    #[cold]
    fn overflow(&self, first: usize, at: usize, reader: &Reader<'_>) -> CooError {
        let rank = reader.rank();
        let mut c = [0u64; 64];
        reader.coords(first, &mut c[..rank]);
        let b = u64::from(self.base);
        CooError::ValueOverflow(format!(
            "the SUM of triplets {} to {} at {} overflows {}{}",
            first as u64 + b,
            at as u64 + b,
            Coords(c[..rank].iter().map(|x| x + b).collect()),
            self.ty.name(),
            counted_from(self.base)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sum with a NaN addend is the first NaN addend, quieted (sign and
    /// payload kept), in either addend order; every other sum, infinities
    /// of opposite signs included, is the native one.
    #[test]
    fn a_nan_sum_has_defined_bits() {
        let nan = |bits: u64| f64::from_bits(bits);
        let signalling = 0xFFF0_0000_0000_0007u64; // negative, payload 7
        let quiet = 0x7FF8_0000_0000_1234u64;
        let b = |x: f64| x.to_bits();
        assert_eq!(
            b(sum_f64(nan(signalling), nan(quiet))),
            signalling | 1 << 51
        );
        assert_eq!(b(sum_f64(nan(quiet), nan(signalling))), quiet);
        assert_eq!(b(sum_f64(1.5, nan(signalling))), signalling | 1 << 51);
        assert_eq!(b(sum_f64(nan(quiet), -2.0)), quiet);
        let inf = std::hint::black_box(f64::INFINITY);
        assert_eq!(b(sum_f64(inf, -inf)), b(inf + -inf));
        assert_eq!(b(sum_f64(-inf, inf)), b(inf + -inf));
        assert_eq!(sum_f64(1.5, 2.25), 3.75);
        assert_eq!(b(sum_f64(-0.0, -0.0)), b(-0.0));
        // The rule itself, apart from what the processor's addition happens
        // to give for these operands (on x86 it often agrees, so the lines
        // above alone would pass with a plain `a + b`).
        assert_eq!(
            b(nan_sum_f64(nan(signalling), nan(quiet))),
            signalling | 1 << 51
        );
        assert_eq!(b(nan_sum_f64(nan(quiet), nan(signalling))), quiet);
        assert_eq!(b(nan_sum_f64(-2.0, nan(signalling))), signalling | 1 << 51);
        let nan32 = |bits: u32| f32::from_bits(bits);
        let (s32, q32) = (0xFF80_0003u32, 0x7FC0_0042u32);
        assert_eq!(sum_f32(nan32(s32), nan32(q32)).to_bits(), s32 | 1 << 22);
        assert_eq!(sum_f32(nan32(q32), nan32(s32)).to_bits(), q32);
        assert_eq!(sum_f32(2.0, nan32(s32)).to_bits(), s32 | 1 << 22);
        let inf32 = std::hint::black_box(f32::INFINITY);
        assert_eq!(sum_f32(-inf32, inf32).to_bits(), (inf32 + -inf32).to_bits());
        assert_eq!(sum_f32(1.5, 2.25), 3.75);
        assert_eq!(nan_sum_f32(nan32(s32), nan32(q32)).to_bits(), s32 | 1 << 22);
        assert_eq!(nan_sum_f32(nan32(q32), nan32(s32)).to_bits(), q32);
    }
}
