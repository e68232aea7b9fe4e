//! The symmetries a Matrix Market banner declares, their banner words, and
//! whether a whole matrix has the symmetry a Matrix Market file would
//! declare for it (every off-diagonal entry's mirror image stored, with the
//! same, the negated or the conjugated value), so that writing one triangle
//! under that banner means exactly the matrix the caller has. The first
//! entry that breaks it is named, with both values.

use std::collections::HashMap;

use crate::coo::Coo;
use crate::element::decode::{copy_element, to_f64};
use crate::element::types::{Encoding, TypeInfo};
use crate::error::CooError;
use crate::io::text::entry_text;

/// The symmetry of a Matrix Market file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtxSymmetry {
    General,
    Symmetric,
    SkewSymmetric,
    Hermitian,
}

/// The banner word of a symmetry ("skew-symmetric").
pub fn symmetry_name(s: MtxSymmetry) -> &'static str {
    match s {
        MtxSymmetry::General => "general",
        MtxSymmetry::Symmetric => "symmetric",
        MtxSymmetry::SkewSymmetric => "skew-symmetric",
        MtxSymmetry::Hermitian => "hermitian",
    }
}

/// An element's raw bits.
fn raw(ty: &TypeInfo, values: &[u8], i: usize) -> u128 {
    let mut st = [0u8; 16];
    copy_element(ty, values, i, &mut st);
    u128::from_le_bytes(st)
}

/// An integer element as i128 (signed or not, as its type).
fn int(ty: &TypeInfo, bits: u128) -> i128 {
    match ty.encoding {
        Encoding::Int => {
            let unused = 128 - ty.bits;
            ((bits << unused) as i128) >> unused
        }
        _ => bits as i128,
    }
}

/// Whether value `b` is the mirror image of value `a` under `s`: equal
/// (symmetric), negated (skew-symmetric), conjugated (hermitian); exactly,
/// bit for bit where the type has a sign bit, so that a reader adding the
/// mirror image gets these very values back.
fn mirrors(ty: &TypeInfo, s: MtxSymmetry, a: u128, b: u128) -> bool {
    let half = ty.bits / 2;
    let sign = |bits: u32| 1u128 << (bits - 1);
    match (s, ty.encoding) {
        (MtxSymmetry::General | MtxSymmetry::Symmetric, _) => a == b,
        (MtxSymmetry::SkewSymmetric, Encoding::Int | Encoding::UInt | Encoding::Bool) => {
            let (x, y) = (int(ty, a), int(ty, b));
            // -MIN is not a value of the type: a reader would overflow.
            let min = matches!(ty.encoding, Encoding::Int) && x == -(1i128 << (ty.bits - 1));
            !min && x == -y
        }
        (MtxSymmetry::SkewSymmetric, Encoding::F32 | Encoding::F64) => a == b ^ sign(ty.bits),
        (MtxSymmetry::SkewSymmetric, Encoding::Complex) => {
            a == b ^ sign(half) ^ (sign(half) << half)
        }
        (MtxSymmetry::Hermitian, Encoding::Complex) => a == b ^ (sign(half) << half),
        (MtxSymmetry::Hermitian, _) => a == b,
        // Other real types are written as float64 text: their values as
        // float64, negated.
        (MtxSymmetry::SkewSymmetric, _) => {
            let f = |x: u128| to_f64(ty, &x.to_le_bytes()).unwrap_or(f64::NAN);
            f(a).to_bits() == (-f(b)).to_bits()
        }
    }
}

/// Whether a diagonal value may be written under `s`: anything for
/// symmetric, nothing for skew-symmetric (its file has no diagonal), a
/// real value (imaginary part +0 or -0) for hermitian.
fn diagonal_ok(ty: &TypeInfo, s: MtxSymmetry, v: u128) -> bool {
    let half = ty.bits / 2;
    match s {
        MtxSymmetry::SkewSymmetric => false,
        MtxSymmetry::Hermitian if ty.encoding == Encoding::Complex => {
            (v >> half) & !(1u128 << (half - 1)) == 0
        }
        _ => true,
    }
}

/// Check that the whole square matrix `coo` has symmetry `s` (its values,
/// or only its structure when `pattern`): every off-diagonal entry (i, j)
/// has its mirror image (j, i) with the mirrored value, and diagonal
/// values are what `s` allows.
pub(crate) fn check(coo: &Coo<'_>, s: MtxSymmetry, pattern: bool) -> Result<(), CooError> {
    let Some(ty) = coo.type_info() else {
        return Ok(()); // refused by the writer's type check first
    };
    let name = symmetry_name(s);
    let n = coo.nnz() as usize;
    let values = coo.values();
    // Where each entry is: the handle's own search when its order is
    // verified, else a map built here (an unsorted handle has only a scan).
    let map: Option<HashMap<(u64, u64), usize>> = match coo.is_sorted() && !coo.is_permissive() {
        true => None,
        false => {
            let mut m = HashMap::new();
            m.try_reserve(n).map_err(|_| CooError::Alloc {
                bytes: n.saturating_mul(32),
                what: "the map of entries for the symmetry check",
            })?;
            m.extend((0..n).map(|i| {
                let e = coo.entry(i);
                ((e[0], e[1]), i)
            }));
            Some(m)
        }
    };
    let find = |r: u64, c: u64| -> Option<usize> {
        match &map {
            Some(m) => m.get(&(r, c)).copied(),
            None => coo.find(&[r, c]).ok().flatten(),
        }
    };
    let shown = |i: usize| entry_text(coo, i).unwrap_or_default();
    for i in 0..n {
        let e = coo.entry(i);
        let (r, c) = (e[0], e[1]);
        let v = raw(ty, values, i);
        if r == c {
            // A pattern's diagonal has no value to be wrong (skew-symmetric
            // patterns are refused before this).
            let fine = diagonal_ok(ty, s, v) || pattern;
            if !fine {
                return Err(CooError::Argument(format!(
                    "entry {i} ({}, counted from 1) is on the diagonal {}, so the matrix is not \
                     {name}; write it as general",
                    shown(i),
                    match s {
                        MtxSymmetry::SkewSymmetric =>
                            "with a stored value (a skew-symmetric \
                                                       matrix has zeros there, and its file no \
                                                       diagonal)",
                        _ => "with an imaginary part (a hermitian matrix's diagonal is real)",
                    }
                )));
            }
            continue;
        }
        match find(c, r) {
            None => {
                return Err(CooError::Argument(format!(
                    "entry {i} ({}, counted from 1) has no mirror image at ({}, {}), so the \
                     matrix is not {name}; write it as general",
                    shown(i),
                    c + 1,
                    r + 1
                )))
            }
            Some(j) if !pattern && r > c && !mirrors(ty, s, v, raw(ty, values, j)) => {
                return Err(CooError::Argument(format!(
                    "entry {i} ({}) and its mirror image, entry {j} ({}), counted from 1, do not \
                     have {} values, so the matrix is not {name}; write it as general",
                    shown(i),
                    shown(j),
                    match s {
                        MtxSymmetry::SkewSymmetric => "negated",
                        MtxSymmetry::Hermitian => "conjugate",
                        _ => "equal",
                    }
                )))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::types::type_info;

    #[test]
    fn mirror_values_follow_the_symmetry() {
        let f64t = type_info(0x04).unwrap();
        let x = 2.5f64.to_bits() as u128;
        let nx = (-2.5f64).to_bits() as u128;
        assert!(mirrors(f64t, MtxSymmetry::Symmetric, x, x));
        assert!(!mirrors(f64t, MtxSymmetry::Symmetric, x, nx));
        assert!(mirrors(f64t, MtxSymmetry::SkewSymmetric, x, nx));
        assert!(!mirrors(f64t, MtxSymmetry::SkewSymmetric, x, x));
        let i32t = type_info(0x14).unwrap();
        let m = |v: i32| v as u32 as u128;
        assert!(mirrors(i32t, MtxSymmetry::SkewSymmetric, m(-7), m(7)));
        assert!(!mirrors(
            i32t,
            MtxSymmetry::SkewSymmetric,
            m(i32::MIN),
            m(i32::MIN)
        ));
        let c128 = type_info(0x51).unwrap();
        let c = |re: f64, im: f64| re.to_bits() as u128 | (im.to_bits() as u128) << 64;
        assert!(mirrors(
            c128,
            MtxSymmetry::Hermitian,
            c(1.0, 2.0),
            c(1.0, -2.0)
        ));
        assert!(!mirrors(
            c128,
            MtxSymmetry::Hermitian,
            c(1.0, 2.0),
            c(1.0, 2.0)
        ));
        assert!(mirrors(
            c128,
            MtxSymmetry::SkewSymmetric,
            c(1.0, 2.0),
            c(-1.0, -2.0)
        ));
        assert!(diagonal_ok(c128, MtxSymmetry::Hermitian, c(3.0, -0.0)));
        assert!(!diagonal_ok(c128, MtxSymmetry::Hermitian, c(3.0, 1e-300)));
    }
}
