//! Values given to a type they must fit exactly: a text file's integer or
//! real values read into the type a solver computes in. Never rounded,
//! never clamped: a value the type cannot hold exactly is refused, with
//! what it would have become.

use crate::element::decode::to_f64;
use crate::element::encode::{f64_to_e8m0, f64_to_f128, round_minifloat};
use crate::element::types::{Encoding, TypeInfo};

/// A value as a text file gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Exact {
    /// An `integer` value.
    Int(i64),
    /// A `real` value.
    Real(f64),
}

impl std::fmt::Display for Exact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exact::Int(x) => write!(f, "{x}"),
            Exact::Real(x) => write!(f, "{x:?}"),
        }
    }
}

/// Whether `ty` is a type values can be cast to: a real or integer type.
pub(crate) fn is_target(ty: &TypeInfo) -> bool {
    !matches!(ty.encoding, Encoding::Complex | Encoding::Bool)
}

/// The storage bits of `x` in the real or integer type `ty` (see
/// [`is_target`]), or why it does not fit exactly: "is not an integer",
/// "is outside the type's range", "would become 16777216".
pub(crate) fn exactly(ty: &TypeInfo, x: Exact) -> Result<u128, String> {
    match ty.encoding {
        Encoding::Int | Encoding::UInt => {
            let v: i128 = match x {
                Exact::Int(i) => i128::from(i),
                Exact::Real(r) if !r.is_finite() || r.fract() != 0.0 => {
                    return Err("is not an integer".into())
                }
                // Integral and finite: exact as i128 up to 2^127, and
                // anything that large is out of every range below.
                Exact::Real(r) if r.abs() >= 2f64.powi(100) => {
                    return Err("is outside the type's range".into())
                }
                Exact::Real(r) => r as i128,
            };
            let (lo, hi) = match ty.encoding {
                Encoding::Int => (-(1i128 << (ty.bits - 1)), (1i128 << (ty.bits - 1)) - 1),
                _ => (0, (1i128 << ty.bits) - 1),
            };
            if v < lo || v > hi {
                return Err(format!("is outside the type's range ({lo} to {hi})"));
            }
            Ok((v as u128) & ((1u128 << ty.bits) - 1))
        }
        _ => {
            let r = match x {
                Exact::Real(r) => r,
                Exact::Int(i) => {
                    let r = i as f64;
                    // i64 -> f64 rounds above 2^53; 2^63 itself is out of
                    // i64's range, so compare as i128.
                    if r as i128 != i128::from(i) {
                        return Err(format!("would become {r:?} (float64 rounds it)"));
                    }
                    r
                }
            };
            let bits: u128 = match ty.encoding {
                Encoding::MiniFloat {
                    exp, man, specials, ..
                } => u128::from(round_minifloat(r, exp, man, specials)),
                Encoding::F32 => u128::from((r as f32).to_bits()),
                Encoding::F64 => u128::from(r.to_bits()),
                Encoding::F128 => f64_to_f128(r),
                Encoding::E8M0 => u128::from(f64_to_e8m0(r)),
                _ => return Err("is not a value of this type".into()),
            };
            let back = to_f64(ty, &bits.to_le_bytes()).unwrap_or(f64::NAN);
            let same = back.to_bits() == r.to_bits() || back.is_nan() && r.is_nan();
            if !same {
                return Err(format!("would become {back:?}"));
            }
            Ok(bits)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::types::{type_info, TYPES};

    #[test]
    fn only_exact_values_are_cast() {
        let t = |tag| type_info(tag).unwrap();
        let (f16, f32, f64, i8, u8, i64) = (t(0x01), t(0x03), t(0x04), t(0x10), t(0x11), t(0x16));
        assert_eq!(
            exactly(f64, Exact::Int(1 << 53)),
            Ok(u128::from(2f64.powi(53).to_bits()))
        );
        assert!(exactly(f64, Exact::Int((1 << 53) + 1))
            .unwrap_err()
            .contains("9007199254740992"));
        assert!(exactly(f64, Exact::Int(i64::MAX)).is_err());
        assert_eq!(
            exactly(f64, Exact::Int(i64::MIN)),
            Ok(u128::from((-2f64.powi(63)).to_bits()))
        );
        assert!(exactly(f32, Exact::Real(0.1))
            .unwrap_err()
            .contains("would become"));
        assert!(exactly(f32, Exact::Real(0.5)).is_ok());
        assert!(exactly(f16, Exact::Real(65504.0)).is_ok());
        assert!(exactly(f16, Exact::Real(65505.0)).is_err());
        assert_eq!(exactly(i8, Exact::Int(-128)), Ok(0x80));
        assert!(exactly(i8, Exact::Int(128)).is_err());
        assert!(exactly(u8, Exact::Int(-1)).is_err());
        assert_eq!(exactly(u8, Exact::Real(255.0)), Ok(255));
        assert!(exactly(i64, Exact::Real(2.5))
            .unwrap_err()
            .contains("not an integer"));
        assert!(exactly(i64, Exact::Real(f64::INFINITY)).is_err());
        assert!(exactly(i64, Exact::Real(9.3e18)).is_err());
        assert!(exactly(f64, Exact::Real(-0.0)) == Ok(u128::from((-0.0f64).to_bits())));
        // An oracle over every real type: a value is accepted exactly when
        // it reads back as itself.
        for ty in TYPES.iter().filter(|t| is_target(t)) {
            for x in [
                0.0,
                -0.0,
                1.0,
                -1.0,
                0.5,
                3.0,
                0.1,
                1e10,
                1e300,
                f64::NAN,
                f64::INFINITY,
            ] {
                if let Ok(bits) = exactly(ty, Exact::Real(x)) {
                    let back = to_f64(ty, &bits.to_le_bytes()).unwrap();
                    // Integers hold -0 as 0, the same number.
                    let int = matches!(ty.encoding, Encoding::Int | Encoding::UInt);
                    assert!(
                        back.to_bits() == x.to_bits()
                            || back.is_nan() && x.is_nan()
                            || int && back == x,
                        "{}: {x} became {back}",
                        ty.name()
                    );
                }
            }
        }
    }
}
