//! Assembly and re-assembly against a plain map-based oracle: random
//! triplets in every index type, base and layout, with duplicates, negative
//! and out-of-bounds coordinates, under every duplicate policy, for whole-
//! byte, sub-byte, half-precision, complex and pattern values; plus the
//! edge cases the issue names (empty input, all duplicates, 2^32 + 1
//! extents).

mod common;

use std::collections::BTreeMap;

use common::Rng;
use hurray_coo::assemble::{
    assemble, AssembleOptions, CoordArrays, Duplicates, IndexType, Plan, Triplets,
};
use hurray_coo::convert::{assemble_compressed, CompressedOut, Format};
use hurray_coo::element::decode::{copy_element, to_f64};
use hurray_coo::element::encode::{f64_to_f16, store_element};
use hurray_coo::element::size::values_bytes;
use hurray_coo::{type_info, Coo, CooError, Status, TypeInfo};

const POLICIES: [Duplicates; 6] = [
    Duplicates::Error,
    Duplicates::Sum,
    Duplicates::First,
    Duplicates::Last,
    Duplicates::Min,
    Duplicates::Max,
];
const INDEX_TYPES: [IndexType; 4] = [
    IndexType::I32,
    IndexType::I64,
    IndexType::U32,
    IndexType::U64,
];

/// A value of the test, exact enough to compute the oracle.
#[derive(Clone, Copy, Debug, PartialEq)]
enum V {
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

/// Element storage of `v` for `ty` (16 bytes, little-endian or a pattern).
fn store(ty: &TypeInfo, v: V) -> [u8; 16] {
    let mut s = [0u8; 16];
    match (ty.name(), v) {
        ("float64", V::Float(x)) => s[..8].copy_from_slice(&x.to_le_bytes()),
        ("float32", V::Float(x)) => s[..4].copy_from_slice(&(x as f32).to_le_bytes()),
        ("float16", V::Float(x)) => s[..2].copy_from_slice(&f64_to_f16(x).to_le_bytes()),
        ("complex64", V::Complex(a, b)) => {
            s[..4].copy_from_slice(&(a as f32).to_le_bytes());
            s[4..8].copy_from_slice(&(b as f32).to_le_bytes());
        }
        (_, V::Int(x)) => s = x.to_le_bytes(),
        other => panic!("no storage for {other:?}"),
    }
    if ty.is_sub_byte() {
        s[0] &= ((1u16 << ty.bits) - 1) as u8;
    }
    s
}

/// A random value of `ty`, from a small set so that sums, zeros and
/// overflows happen.
fn random_value(rng: &mut Rng, ty: &TypeInfo) -> V {
    let pick = |rng: &mut Rng, set: &[i128]| set[rng.below(set.len() as u64) as usize];
    match ty.name() {
        "float64" | "float32" | "float16" => {
            let set = [-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.25, 1000.0];
            V::Float(set[rng.below(set.len() as u64) as usize])
        }
        "complex64" => V::Complex(
            [-1.0, 0.0, 2.5][rng.below(3) as usize],
            [0.0, 1.0, -0.5][rng.below(3) as usize],
        ),
        "int8" => V::Int(pick(rng, &[-128, -100, -1, 0, 1, 100, 127])),
        "uint16" => V::Int(pick(rng, &[0, 1, 2, 40000, 65535])),
        "int32" => V::Int(pick(rng, &[-3, -2, -1, 0, 1, 2, 3])),
        "int4" => V::Int(pick(rng, &[0, 1, 7, 8, 15])), // patterns: 8 is -8, 15 is -1
        "bool" => V::Int(pick(rng, &[0, 1])),
        other => panic!("no generator for {other}"),
    }
}

/// The value the storage `s` holds, for comparisons.
fn value(ty: &TypeInfo, s: &[u8; 16]) -> V {
    match ty.name() {
        "complex64" => V::Complex(
            f64::from(f32::from_le_bytes(s[..4].try_into().unwrap())),
            f64::from(f32::from_le_bytes(s[4..8].try_into().unwrap())),
        ),
        "int8" | "uint16" | "int32" | "int4" | "bool" => V::Int(to_f64(ty, s).unwrap() as i128),
        _ => V::Float(to_f64(ty, s).unwrap()),
    }
}

/// What assembly returns.
type Assembled = Result<(Coo<'static>, Option<Plan>), CooError>;

#[derive(Debug, PartialEq)]
enum Outcome {
    /// (coordinates, value storage) in canonical order.
    Entries(Vec<(Vec<u64>, [u8; 16])>),
    Failed(Status, String),
}

struct Case {
    shape: Vec<u64>,
    /// Coordinates as written (may be negative or out of bounds).
    coords: Vec<Vec<i128>>,
    index_type: IndexType,
    base: u8,
    per_dim: bool,
    ty: Option<&'static TypeInfo>,
    values: Vec<[u8; 16]>,
    opts: AssembleOptions,
}

impl Case {
    fn index_bytes(&self, k: &[i128]) -> Vec<u8> {
        k.iter()
            .flat_map(|&c| match self.index_type {
                IndexType::I32 => (c as i32).to_le_bytes().to_vec(),
                IndexType::U32 => (c as u32).to_le_bytes().to_vec(),
                IndexType::I64 => (c as i64).to_le_bytes().to_vec(),
                IndexType::U64 => (c as u64).to_le_bytes().to_vec(),
            })
            .collect()
    }

    fn values_buf(&self, values: &[[u8; 16]]) -> Option<Vec<u8>> {
        Some(values_for(self.ty?, values))
    }

    fn run(&self) -> (Assembled, Option<Vec<u8>>) {
        let rank = self.shape.len();
        let interleaved: Vec<i128> = self.coords.iter().flatten().copied().collect();
        let inter = self.index_bytes(&interleaved);
        let dims: Vec<Vec<u8>> = (0..rank)
            .map(|d| self.index_bytes(&self.coords.iter().map(|c| c[d]).collect::<Vec<_>>()))
            .collect();
        let dim_refs: Vec<&[u8]> = dims.iter().map(|d| d.as_slice()).collect();
        let values = self.values_buf(&self.values);
        let t = Triplets {
            shape: &self.shape,
            n: self.coords.len(),
            index_type: self.index_type,
            base: self.base,
            coords: if self.per_dim {
                CoordArrays::PerDim(&dim_refs)
            } else {
                CoordArrays::Interleaved(&inter)
            },
            type_tag: self.ty.map_or(0, |t| t.tag),
            values: values.as_deref(),
        };
        (assemble(&t, &self.opts), values)
    }

    /// The rules, read naively.
    fn oracle(&self, values: &[[u8; 16]]) -> Outcome {
        let b = i128::from(self.base);
        let fail = |s: Status, m: String| Outcome::Failed(s, m);
        let mut groups: BTreeMap<Vec<u64>, Vec<usize>> = BTreeMap::new();
        'next: for (i, c) in self.coords.iter().enumerate() {
            for (d, &raw) in c.iter().enumerate() {
                if raw < 0 && self.opts.skip_negative {
                    continue 'next;
                }
                if raw - b < 0 || raw - b >= i128::from(self.shape[d]) {
                    return fail(
                        Status::IndexOutOfBounds,
                        format!(
                            "triplet {}: coordinate {raw} in dimension {}",
                            i as i128 + b,
                            d as i128 + b
                        ),
                    );
                }
            }
            groups
                .entry(c.iter().map(|&x| (x - b) as u64).collect())
                .or_default()
                .push(i);
        }
        if self.opts.duplicates == Duplicates::Error {
            if let Some((j, i)) = groups
                .values()
                .filter(|g| g.len() > 1)
                .map(|g| (g[1], g[0]))
                .min()
            {
                return fail(
                    Status::Duplicate,
                    format!(
                        "triplet {} duplicates triplet {}",
                        j as i128 + b,
                        i as i128 + b
                    ),
                );
            }
        }
        let Some(ty) = self.ty else {
            let mut t = [0u8; 16];
            t[0] = 1;
            return Outcome::Entries(groups.into_keys().map(|k| (k, t)).collect());
        };
        let mut out = Vec::new();
        for (k, g) in groups {
            let vals: Vec<V> = g.iter().map(|&i| value(ty, &values[i])).collect();
            let combined = match self.opts.duplicates {
                Duplicates::Error | Duplicates::First => vals[0],
                Duplicates::Last => vals[vals.len() - 1],
                Duplicates::Sum => {
                    let mut acc = vals[0];
                    for &v in &vals[1..] {
                        acc = match (acc, v) {
                            (V::Float(a), V::Float(x)) => match ty.name() {
                                "float32" => V::Float(f64::from(a as f32 + x as f32)),
                                "float16" => value(ty, &store(ty, V::Float(a + x))),
                                _ => V::Float(a + x),
                            },
                            (V::Complex(a, c), V::Complex(x, y)) => V::Complex(
                                f64::from(a as f32 + x as f32),
                                f64::from(c as f32 + y as f32),
                            ),
                            (V::Int(a), V::Int(x)) if ty.name() == "bool" => V::Int(a | x),
                            (V::Int(a), V::Int(x)) => {
                                let s = a + x;
                                let (lo, hi) = match ty.name() {
                                    "int8" => (-128, 127),
                                    "int4" => (-8, 7),
                                    "uint16" => (0, 65535),
                                    _ => (i128::from(i32::MIN), i128::from(i32::MAX)),
                                };
                                if s < lo || s > hi {
                                    return fail(
                                        Status::Overflow,
                                        format!("overflows {}", ty.name()),
                                    );
                                }
                                V::Int(s)
                            }
                            other => panic!("{other:?}"),
                        };
                    }
                    acc
                }
                Duplicates::Min | Duplicates::Max => {
                    let max = self.opts.duplicates == Duplicates::Max;
                    let key = |v: V| match v {
                        V::Int(x) => x as f64,
                        V::Float(x) => x,
                        V::Complex(..) => unreachable!(),
                    };
                    let mut acc = vals[0];
                    for &v in &vals[1..] {
                        let (a, x) = (key(acc), key(v));
                        let take = if x.is_nan() {
                            false
                        } else if a.is_nan() {
                            true
                        } else if max {
                            x > a
                        } else {
                            x < a
                        };
                        if take {
                            acc = v;
                        }
                    }
                    acc
                }
            };
            let zero = match combined {
                V::Int(x) => x == 0,
                V::Float(x) => x == 0.0,
                V::Complex(a, c) => a == 0.0 && c == 0.0,
            };
            if self.opts.drop_zeros && zero {
                continue;
            }
            // The combined value's storage: the member whose value it is when
            // no arithmetic happened (keeps -0.0 and patterns exact).
            let s = g
                .iter()
                .map(|&i| values[i])
                .find(|s| {
                    value(ty, s) == combined && store(ty, combined) == *s
                        || ty.is_sub_byte() && value(ty, s) == combined
                })
                .unwrap_or_else(|| store(ty, combined));
            out.push((k, s));
        }
        Outcome::Entries(out)
    }
}

fn outcome(coo: &Coo<'_>) -> Outcome {
    let ty = coo.type_info().unwrap();
    let w = ty.lookup_bytes();
    Outcome::Entries(
        (0..coo.nnz() as usize)
            .map(|k| {
                let mut s = [0u8; 16];
                copy_element(ty, coo.values(), k, &mut s);
                s[w..].fill(0);
                (coo.entry(k).to_vec(), s)
            })
            .collect(),
    )
}

/// Compare values by what they are (so -0.0 vs 0.0 from a sum is told
/// apart only where the oracle says which).
fn same(a: &Outcome, b: &Outcome, ty: Option<&TypeInfo>) -> bool {
    match (a, b, ty) {
        (Outcome::Entries(x), Outcome::Entries(y), Some(ty)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|((ka, sa), (kb, sb))| {
                    ka == kb && {
                        let (va, vb) = (value(ty, sa), value(ty, sb));
                        va == vb || matches!((va, vb), (V::Float(p), V::Float(q)) if p.is_nan() && q.is_nan())
                    }
                })
        }
        _ => a == b,
    }
}

fn random_case(rng: &mut Rng, ty: Option<&'static TypeInfo>, dup: Duplicates) -> Case {
    let rank = 1 + rng.below(3) as usize;
    let shape: Vec<u64> = (0..rank).map(|_| 1 + rng.below(4)).collect();
    let index_type = INDEX_TYPES[rng.below(4) as usize];
    let base = rng.below(2) as u8;
    let signed = matches!(index_type, IndexType::I32 | IndexType::I64);
    let n = rng.below(30) as usize;
    let bad = rng.below(4) == 0;
    let coords: Vec<Vec<i128>> = (0..n)
        .map(|_| {
            shape
                .iter()
                .map(|&x| {
                    let c = i128::from(rng.below(x)) + i128::from(base);
                    match rng.below(if bad { 25 } else { 1000 }) {
                        0 if signed => -1 - i128::from(rng.below(3)),
                        1 => i128::from(x) + i128::from(base) + i128::from(rng.below(2)),
                        _ => c,
                    }
                })
                .collect()
        })
        .collect();
    let values = ty.map_or_else(Vec::new, |t| {
        (0..n).map(|_| store(t, random_value(rng, t))).collect()
    });
    Case {
        shape,
        coords,
        index_type,
        base,
        per_dim: rng.below(2) == 0,
        ty,
        values,
        opts: AssembleOptions {
            duplicates: dup,
            skip_negative: signed && rng.below(2) == 0,
            drop_zeros: rng.below(3) == 0,
            threads: 1 + rng.below(3) as usize,
            // Half the cases without a plan: the solver's path for matrices.
            skip_plan: rng.below(2) == 0,
            rounded_sum: rng.below(2) == 0,
            // No caller arrays here: the flag changes nothing.
            scratch_in_output: rng.below(2) == 0,
        },
    }
}

#[test]
fn every_policy_type_index_type_base_and_layout_matches_the_oracle() {
    let types: Vec<Option<&'static TypeInfo>> = [
        "float64",
        "float32",
        "float16",
        "complex64",
        "int8",
        "uint16",
        "int32",
        "int4",
        "bool",
    ]
    .iter()
    .map(|n| hurray_coo::TYPES.iter().find(|t| t.name() == *n))
    .chain([None])
    .collect();
    let mut rng = Rng::new(12);
    let mut counts = BTreeMap::new();
    for round in 0..4000 {
        let ty = types[round % types.len()];
        let dup = POLICIES[(round / types.len()) % POLICIES.len()];
        let case = random_case(&mut rng, ty, dup);
        let (got, values) = case.run();
        let unsupported = ty.is_some_and(|t| {
            (dup == Duplicates::Sum
                && (t.is_sub_byte() || t.name() == "bool")
                && !case.opts.rounded_sum)
                || (matches!(dup, Duplicates::Min | Duplicates::Max) && t.name() == "complex64")
        });
        if unsupported {
            assert_eq!(got.err().map(|e| e.status()), Some(Status::UnsupportedType));
            continue;
        }
        let want = case.oracle(&case.values);
        let kind = match (&want, &got) {
            (Outcome::Failed(status, needle), Err(e)) => {
                assert_eq!(e.status(), *status, "round {round}: {e}");
                assert!(
                    e.to_string().contains(needle.as_str()),
                    "round {round}: {e} lacks {needle}"
                );
                "error"
            }
            (Outcome::Entries(_), Ok((coo, plan))) => {
                let have = outcome(coo);
                assert!(
                    same(&have, &want, ty),
                    "round {round} {dup:?} {:?}:\n got {have:?}\nwant {want:?}",
                    ty.map(|t| t.name())
                );
                assert!(coo.is_sorted());
                coo.validate().unwrap();
                if let (Some(t), Some(values), false) = (ty, values, case.opts.skip_plan) {
                    check_plan(
                        &mut rng,
                        &case,
                        t,
                        plan.as_ref().unwrap(),
                        coo,
                        &values,
                        round,
                    );
                }
                "entries"
            }
            (w, g) => panic!(
                "round {round}: oracle {w:?}, library {:?}",
                g.as_ref().err()
            ),
        };
        *counts.entry(kind).or_insert(0) += 1;
    }
    assert!(
        counts.values().all(|&c| c > 300),
        "coverage too thin: {counts:?}"
    );
}

/// The plan re-assembles the same values into the same canonical values, and
/// new values as the oracle combines them on the same pattern.
fn check_plan(
    rng: &mut Rng,
    case: &Case,
    ty: &TypeInfo,
    plan: &Plan,
    coo: &Coo<'_>,
    values: &[u8],
    round: usize,
) {
    let mut out = vec![0xEEu8; coo.values().len()];
    match plan.apply(values, &mut out, 1 + round % 3) {
        Ok(()) => assert_eq!(
            out,
            coo.values(),
            "round {round}: re-assembly of the same values"
        ),
        Err(e) => panic!("round {round}: {e}"),
    }
    // New values: the same pattern (drop_zeros applies to the first assembly only).
    let new: Vec<[u8; 16]> = (0..case.coords.len())
        .map(|_| store(ty, random_value(rng, ty)))
        .collect();
    let buf = case.values_buf(&new).unwrap();
    let keep = case.opts.drop_zeros;
    let mut relaxed = Case {
        values: new.clone(),
        ..clone_case(case)
    };
    relaxed.opts.drop_zeros = false;
    let Outcome::Entries(all) = relaxed.oracle(&new) else {
        // An overflow with the new values: the plan must say so too, unless
        // the entry that overflows was dropped (a zero) at the first
        // assembly, and so is not in the plan.
        match plan.apply(&buf, &mut out, 2) {
            Err(e) => assert_eq!(e.status(), Status::Overflow, "round {round}"),
            Ok(()) => assert!(keep, "round {round}: the plan missed an overflow"),
        }
        return;
    };
    plan.apply(&buf, &mut out, 2).unwrap();
    let w = ty.lookup_bytes();
    let mut k = 0;
    for (coords, s) in all {
        if keep && k < coo.nnz() as usize && coo.entry(k) != coords.as_slice() {
            continue; // dropped at the first assembly
        }
        if k >= coo.nnz() as usize {
            assert!(keep, "round {round}: more entries than the plan has");
            continue;
        }
        let mut got = [0u8; 16];
        copy_element(ty, &out, k, &mut got);
        got[w..].fill(0);
        assert_eq!(coo.entry(k), coords.as_slice());
        assert_eq!(value(ty, &got), value(ty, &s), "round {round}: entry {k}");
        k += 1;
    }
}

/// The values buffer of elements `values` (each stored as `store` gives it)
/// in type `ty`.
fn values_for(ty: &TypeInfo, values: &[[u8; 16]]) -> Vec<u8> {
    let mut buf = vec![0u8; values_bytes(ty, values.len() as u64).unwrap() as usize];
    for (i, s) in values.iter().enumerate() {
        store_element(ty, &mut buf, i, s);
    }
    buf
}

fn clone_case(c: &Case) -> Case {
    Case {
        shape: c.shape.clone(),
        coords: c.coords.clone(),
        index_type: c.index_type,
        base: c.base,
        per_dim: c.per_dim,
        ty: c.ty,
        values: c.values.clone(),
        opts: c.opts,
    }
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn empty_input_and_all_duplicates() {
    let shape = [3u64, 3];
    let t = Triplets {
        shape: &shape,
        n: 0,
        index_type: IndexType::U64,
        base: 0,
        coords: CoordArrays::Interleaved(&[]),
        type_tag: 0x04,
        values: Some(&[]),
    };
    let (coo, plan) = assemble(&t, &AssembleOptions::default()).unwrap();
    let plan = plan.unwrap();
    assert_eq!((coo.nnz(), plan.triplets(), plan.nnz()), (0, 0, 0));
    let idx = u64s(&[1, 2].repeat(1000));
    let vals = f64s(&vec![0.5; 1000]);
    let t = Triplets {
        n: 1000,
        coords: CoordArrays::Interleaved(&idx),
        values: Some(&vals),
        ..t
    };
    let sum = AssembleOptions {
        duplicates: Duplicates::Sum,
        ..Default::default()
    };
    let (coo, _) = assemble(&t, &sum).unwrap();
    assert_eq!(coo.nnz(), 1);
    assert_eq!(coo.lookup_f64(&[1, 2]).unwrap(), (500.0, true));
    let e = assemble(&t, &AssembleOptions::default()).unwrap_err();
    assert_eq!(e.status(), Status::Duplicate);
    assert!(
        e.to_string()
            .starts_with("triplet 1 duplicates triplet 0 at (1, 2)"),
        "{e}"
    );
}

#[test]
fn extents_of_2_to_the_32_plus_1_sort_without_linear_keys() {
    // (2^32 + 1)^2 elements do not fit a u64: the tuple sort path.
    let x = (1u64 << 32) + 1;
    let shape = [x, x];
    let idx = u64s(&[x - 1, 0, 0, x - 1, x - 1, 0, 5, 5]);
    let vals = f64s(&[1.0, 2.0, 3.0, 4.0]);
    let t = Triplets {
        shape: &shape,
        n: 4,
        index_type: IndexType::U64,
        base: 0,
        coords: CoordArrays::Interleaved(&idx),
        type_tag: 0x04,
        values: Some(&vals),
    };
    let o = AssembleOptions {
        duplicates: Duplicates::Sum,
        ..Default::default()
    };
    let (coo, _) = assemble(&t, &o).unwrap();
    assert_eq!(coo.indices(), &[0, x - 1, 5, 5, x - 1, 0]);
    assert_eq!(coo.lookup_f64(&[x - 1, 0]).unwrap(), (4.0, true));
    // One-based int64, per dimension, the same triplets.
    let rows: Vec<u8> = [x, 1, x, 6]
        .iter()
        .flat_map(|&v| (v as i64).to_le_bytes())
        .collect();
    let cols: Vec<u8> = [1i64, x as i64, 1, 6]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let dims: [&[u8]; 2] = [&rows, &cols];
    let t = Triplets {
        index_type: IndexType::I64,
        base: 1,
        coords: CoordArrays::PerDim(&dims),
        ..t
    };
    let (coo2, _) = assemble(&t, &o).unwrap();
    assert_eq!(coo2.indices(), coo.indices());
}

#[test]
fn errors_speak_the_callers_base() {
    let shape = [4u64, 4];
    let idx: Vec<u8> = [1i32, 1, 4, 5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let t = Triplets {
        shape: &shape,
        n: 2,
        index_type: IndexType::I32,
        base: 1,
        coords: CoordArrays::Interleaved(&idx),
        type_tag: 0x04,
        values: Some(&f64s(&[1.0, 2.0])),
    };
    let e = assemble(&t, &AssembleOptions::default()).unwrap_err();
    assert_eq!(e.status(), Status::IndexOutOfBounds);
    assert_eq!(
        e.to_string(),
        "triplet 2: coordinate 5 in dimension 2 is out of bounds (valid 1 to 4) [triplets, \
         dimensions and coordinates counted from 1]"
    );
    let idx: Vec<u8> = [1i32, 1, -1, 2]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let t = Triplets {
        coords: CoordArrays::Interleaved(&idx),
        ..t
    };
    let e = assemble(&t, &AssembleOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("HURRAY_ASSEMBLE_SKIP_NEGATIVE"),
        "{e}"
    );
    let skip = AssembleOptions {
        skip_negative: true,
        ..Default::default()
    };
    let (coo, plan) = assemble(&t, &skip).unwrap();
    assert_eq!((coo.nnz(), plan.unwrap().triplets()), (1, 2));
    let _ = type_info(0x04);
}

/// Several threads (the sort split into runs and merged; re-assembly split
/// into entry ranges) give exactly what one thread gives.
#[test]
fn threads_give_the_same_result_as_one() {
    let mut rng = Rng::new(99);
    let n = 300_000usize;
    let shape = [1000u64, 1000];
    let idx: Vec<u8> = (0..2 * n)
        .flat_map(|_| (rng.below(1000) as i64).to_le_bytes())
        .collect();
    let vals: Vec<u8> = (0..n)
        .flat_map(|_| (rng.below(100) as f64 / 8.0).to_le_bytes())
        .collect();
    let floats: Vec<u8> = (0..n)
        .flat_map(|_| (rng.below(7) as f32 - 3.0).to_le_bytes())
        .collect();
    for (tag, values) in [(0x04u8, &vals), (0x03, &floats)] {
        let t = Triplets {
            shape: &shape,
            n,
            index_type: IndexType::I64,
            base: 0,
            coords: CoordArrays::Interleaved(&idx),
            type_tag: tag,
            values: Some(values),
        };
        for (dup, drop_zeros) in [
            (Duplicates::Sum, false),
            (Duplicates::Sum, true),
            (Duplicates::First, true),
            (Duplicates::Last, false),
            (Duplicates::Max, true),
            (Duplicates::Error, false),
        ] {
            let run = |threads: usize| {
                let o = AssembleOptions {
                    duplicates: dup,
                    drop_zeros,
                    threads,
                    ..Default::default()
                };
                assemble(&t, &o)
            };
            let one = run(1);
            for threads in [2, 4, 7] {
                let many = run(threads);
                match (&one, &many) {
                    (Err(a), Err(b)) => assert_eq!(a, b, "{dup:?} with {threads} threads"),
                    (Ok((one, plan)), Ok((many, many_plan))) => {
                        assert_eq!(many.indices(), one.indices(), "{dup:?}, {threads} threads");
                        assert_eq!(many.values(), one.values(), "{dup:?}, {threads} threads");
                        let plan = plan.as_ref().unwrap();
                        let mut a = vec![0u8; one.values().len()];
                        let mut b = vec![1u8; one.values().len()];
                        plan.apply(values, &mut a, 1).unwrap();
                        plan.apply(values, &mut b, threads).unwrap();
                        assert_eq!(a, b, "re-assembly with {threads} threads");
                        assert_eq!(a, one.values());
                        // The plan built on several threads (each row range
                        // its own piece, joined and finished on threads)
                        // re-assembles the same: new values, one thread's
                        // plan as the oracle.
                        let new: Vec<u8> = values.iter().map(|x| x.rotate_left(3)).collect();
                        let (mut c, mut d) = (vec![2u8; a.len()], vec![3u8; a.len()]);
                        let one_plan = plan.apply(&new, &mut c, 1);
                        let many_plan = many_plan.as_ref().unwrap().apply(&new, &mut d, 1);
                        assert_eq!(one_plan.is_ok(), many_plan.is_ok(), "{threads} threads");
                        assert!(c == d, "{dup:?}: the plan of {threads} threads");
                    }
                    _ => panic!("{dup:?}: 1 thread and {threads} threads disagree"),
                }
            }
        }
    }
}

/// Matrices large enough for several threads, assembled without a plan (the
/// solver's path: row buckets, or a straight copy of sorted input) agree
/// bit for bit with the path that builds a plan, and with themselves on 1,
/// 2 and 3 threads: every index type and base, both layouts, sorted,
/// unsorted and scattered input, skipped negatives, dropped zeros, every
/// policy, errors included.
/// A rank-2 case of `coords` in per-dimension arrays (no values yet), and
/// those arrays' bytes.
fn per_dim_case(
    shape: Vec<u64>,
    coords: &[[i128; 2]],
    index_type: IndexType,
    base: u8,
) -> (Case, Vec<Vec<u8>>) {
    let case = Case {
        shape,
        coords: coords.iter().map(|c| c.to_vec()).collect(),
        index_type,
        base,
        per_dim: true,
        ty: None,
        values: Vec::new(),
        opts: AssembleOptions::default(),
    };
    let dims = (0..2)
        .map(|d| case.index_bytes(&coords.iter().map(|c| c[d]).collect::<Vec<_>>()))
        .collect();
    (case, dims)
}

/// The solver's path (`got`, no plan asked) gave the planning path's
/// result: the same entries, or the same error.
fn assert_same_as_planned(planned: &Assembled, got: &Assembled, what: &str) {
    match (planned, got) {
        (Ok((a, _)), Ok((g, plan))) => {
            assert!(plan.is_none(), "{what}");
            assert_eq!(g.indices(), a.indices(), "{what}");
            assert_eq!(g.values(), a.values(), "{what}");
        }
        (Err(a), Err(g)) => assert_eq!(a, g, "{what}"),
        _ => panic!("{what}: {:?} vs {:?}", planned.is_ok(), got.is_ok()),
    }
}

#[test]
fn the_solvers_path_agrees_with_the_planning_path() {
    let mut rng = Rng::new(2024);
    // Enough triplets for two threads (each takes 65,536 at least).
    let n = 140_000usize;
    for round in 0..6 {
        // Rounds 4 and 5: rows far apart from one triplet to the next
        // (scattered; two threads each place their own half).
        let (rows, cols) = match round {
            0..=3 => [(700u64, 900u64), (40_000, 3), (5, 100_000)][round % 3],
            _ => (250_000, 50),
        };
        let index_type = INDEX_TYPES[round % 4];
        let base = (round / 2 % 2) as u8;
        let signed = matches!(index_type, IndexType::I32 | IndexType::I64);
        let b = i128::from(base);
        let mut coords: Vec<[i128; 2]> = (0..n)
            .map(|_| {
                [
                    i128::from(rng.below(rows)) + b,
                    i128::from(rng.below(cols)) + b,
                ]
            })
            .collect();
        if round % 3 == 0 {
            coords.sort();
            coords.dedup();
        }
        if signed && round % 2 == 1 {
            for _ in 0..50 {
                let at = rng.below(coords.len() as u64) as usize;
                coords[at][rng.below(2) as usize] = -1;
            }
        }
        if round == 2 {
            // Out of bounds, late: the error the planning path names.
            let at = coords.len() - 10;
            coords[at][1] = i128::from(cols) + b;
        }
        let m = coords.len();
        let case = Case {
            shape: vec![rows, cols],
            coords: coords.iter().map(|c| c.to_vec()).collect(),
            index_type,
            base,
            per_dim: round % 2 == 0,
            ty: None,
            values: Vec::new(),
            opts: AssembleOptions::default(),
        };
        let flat: Vec<i128> = coords.iter().flatten().copied().collect();
        let inter = case.index_bytes(&flat);
        let dims: Vec<Vec<u8>> = (0..2)
            .map(|d| case.index_bytes(&coords.iter().map(|c| c[d]).collect::<Vec<_>>()))
            .collect();
        let dim_refs: Vec<&[u8]> = dims.iter().map(|d| d.as_slice()).collect();
        for name in ["float64", "float32", "complex64", "pattern"] {
            let pattern = name == "pattern";
            let ty = type_info_named(if pattern { "bool" } else { name });
            let values = values_for(
                ty,
                &(0..m)
                    .map(|_| match rng.below(4) {
                        0 => [0u8; 16],
                        _ => store(ty, random_value(&mut rng, ty)),
                    })
                    .collect::<Vec<_>>(),
            );
            let t = Triplets {
                shape: &case.shape,
                n: m,
                index_type,
                base,
                coords: match case.per_dim {
                    true => CoordArrays::PerDim(&dim_refs),
                    false => CoordArrays::Interleaved(&inter),
                },
                type_tag: ty.tag,
                values: (!pattern).then_some(&values[..]),
            };
            for dup in [
                Duplicates::Sum,
                Duplicates::First,
                Duplicates::Last,
                Duplicates::Error,
            ] {
                if name == "complex64" && dup == Duplicates::Sum {
                    continue;
                }
                let opts = AssembleOptions {
                    duplicates: dup,
                    skip_negative: signed && round % 4 == 1,
                    drop_zeros: round % 2 == 0,
                    ..Default::default()
                };
                let planned = assemble(&t, &opts);
                for threads in [1, 2] {
                    let o = AssembleOptions {
                        threads,
                        skip_plan: true,
                        ..opts
                    };
                    let got = assemble(&t, &o);
                    let what = format!("round {round} {name} {dup:?}, {threads} threads");
                    assert_same_as_planned(&planned, &got, &what);
                }
            }
        }
    }
}

/// Sorted triplets in per-dimension arrays (32- and 64-bit) into a handle
/// are written and checked a block of 1,024 at a time, each thread its own
/// range: broken once at a block's
/// or a thread's edge, or anywhere else, by a repeat, a step back, a column
/// past the shape, a negative coordinate or one below the base, the solver's
/// path gives what the planning path gives (the entries, or the same
/// error), on 1 to 3 threads, and so does the unbroken input.
#[test]
fn sorted_input_checked_as_written_agrees_with_the_planning_path() {
    // Three threads' worth (each takes 65,536 triplets at least).
    let n = 3 * 65_536 + 1_000;
    let cols = 7u64;
    let rows = (n as u64).div_ceil(cols) + 2;
    let sorted: Vec<[i128; 2]> = (0..n as i128)
        .map(|i| [i / cols as i128, i % cols as i128])
        .collect();
    let mut at: Vec<usize> = vec![0, 1, 2, 1_023, 1_024, 1_025, 2_048, 5_000, n - 2, n - 1];
    for t in 2..=3 {
        for k in 1..t {
            let c = n * k / t;
            at.extend([c - 1, c, c + 1]);
        }
    }
    let mut rng = Rng::new(77);
    let mut cases = 0;
    for (round, &p) in std::iter::once(&usize::MAX).chain(&at).enumerate() {
        for kind in 0..5 {
            if p == usize::MAX && kind > 0 {
                continue;
            }
            let index_type = INDEX_TYPES[(round + kind) % 4];
            let signed = matches!(index_type, IndexType::I32 | IndexType::I64);
            let base = ((round / 2 + kind) % 2) as u8;
            let b = i128::from(base);
            let mut coords: Vec<[i128; 2]> = sorted.iter().map(|c| [c[0] + b, c[1] + b]).collect();
            if p != usize::MAX {
                let before = coords[p.saturating_sub(1)];
                match kind {
                    0 if p > 0 => coords[p] = before,           // a repeat
                    1 if p > 0 => coords[p][0] = before[0] - 1, // a step back
                    2 => coords[p][1] = i128::from(cols) + b,   // past the shape
                    3 if signed => coords[p][0] = -1,
                    _ => coords[p][1] = b - 1, // below the base
                }
            }
            let (case, dims) = per_dim_case(vec![rows, cols], &coords, index_type, base);
            let dim_refs: Vec<&[u8]> = dims.iter().map(|d| d.as_slice()).collect();
            let name = ["float64", "float32", "complex64", "int8"][(round + kind) % 4];
            let ty = type_info_named(name);
            let values = values_for(
                ty,
                &(0..n)
                    .map(|_| store(ty, random_value(&mut rng, ty)))
                    .collect::<Vec<_>>(),
            );
            let t = Triplets {
                shape: &case.shape,
                n,
                index_type,
                base,
                coords: CoordArrays::PerDim(&dim_refs),
                type_tag: ty.tag,
                values: Some(&values[..]),
            };
            let dup = match name {
                "complex64" => Duplicates::Last,
                "int8" => Duplicates::First,
                _ => Duplicates::Sum,
            };
            let opts = AssembleOptions {
                duplicates: dup,
                skip_negative: kind == 3 && round % 2 == 0,
                ..Default::default()
            };
            let planned = assemble(&t, &opts);
            for threads in 1..=3 {
                let o = AssembleOptions {
                    threads,
                    skip_plan: true,
                    ..opts
                };
                let got = assemble(&t, &o);
                let what = format!(
                    "break {kind} at {p}, {index_type:?} base {base} {name}, {threads} threads"
                );
                assert_same_as_planned(&planned, &got, &what);
                if let Ok((g, _)) = &got {
                    assert!(g.validate().is_ok(), "{what}");
                }
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 3 * (1 + 5 * at.len()));
}

/// float8_e8m0 values 0x00 and 0xFF are codes the format forbids as data:
/// the solver's path (no plan) refuses them with the planning path's error
/// (which names the handle's entry holding the first one), under every
/// policy, on 1 or 2 threads. It once built the handle without looking:
/// found by the fuzz target that compares the two paths.
#[test]
fn forbidden_value_codes_are_refused_without_a_plan_too() {
    let ty = type_info_named("float8_e8m0");
    for (coords, codes, entry) in [
        (vec![[0i64, 0], [0, 2]], vec![0x00u8, 0x00], 0u64),
        (vec![[0, 2], [0, 0]], vec![0x7F, 0xFF], 0),
        (vec![[1, 1], [1, 2], [2, 0]], vec![0x40, 0x41, 0xFF], 2),
        (vec![[1, 1], [1, 1], [2, 0]], vec![0x40, 0x41, 0x00], 1),
    ] {
        let m = coords.len();
        let dims: Vec<Vec<u8>> = (0..2)
            .map(|d| coords.iter().flat_map(|c| c[d].to_le_bytes()).collect())
            .collect();
        let dim_refs: Vec<&[u8]> = dims.iter().map(|d| d.as_slice()).collect();
        let t = Triplets {
            shape: &[65, 3],
            n: m,
            index_type: IndexType::I64,
            base: 0,
            coords: CoordArrays::PerDim(&dim_refs),
            type_tag: ty.tag,
            values: Some(&codes),
        };
        for dup in [Duplicates::First, Duplicates::Last, Duplicates::Error] {
            let o = AssembleOptions {
                duplicates: dup,
                ..Default::default()
            };
            let what = format!("{coords:?} {codes:?} {dup:?}");
            let planned = assemble(&t, &o).map(|_| ()).expect_err(&what);
            let repeats = coords[0] == coords[1];
            if !(repeats && dup == Duplicates::Error) {
                assert!(
                    matches!(planned, CooError::InvalidValue { entry: e, .. } if e == entry),
                    "{what}: {planned:?}"
                );
            }
            for threads in [1, 2] {
                let o = AssembleOptions {
                    skip_plan: true,
                    threads,
                    ..o
                };
                let got = assemble(&t, &o).map(|_| ()).expect_err(&what);
                assert_eq!(got, planned, "{what}, no plan, {threads} threads");
                // Straight into CSR: the same error, nothing returned.
                let (mut offsets, mut indices, mut values) = ([0u8; 66 * 4], [0u8; 12], [0u8; 3]);
                let out = CompressedOut {
                    format: Format::Csr,
                    index_type: IndexType::I32,
                    base: 0,
                    offsets: &mut offsets,
                    indices: &mut indices,
                    values: &mut values,
                };
                let got = assemble_compressed(&t, &o, out)
                    .map(|_| ())
                    .expect_err(&what);
                assert_eq!(got, planned, "{what}, into CSR, {threads} threads");
            }
        }
    }
}

fn type_info_named(name: &str) -> &'static TypeInfo {
    hurray_coo::TYPES.iter().find(|t| t.name() == name).unwrap()
}

/// HURRAY_ASSEMBLE_ROUNDED_SUM: the types refused by default sum in double,
/// rounded to the type (saturating where it has no infinity).
#[test]
fn rounded_sums_for_the_types_refused_by_default() {
    let shape = [4u64];
    let idx: Vec<u8> = [1u64, 1, 1, 2]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    // (type tag, four values, expected (coordinate, value) after summing).
    type Rounded = (u8, [u8; 4], &'static [(u64, f64)]);
    let cases: [Rounded; 4] = [
        // float8_e4m3: 256 + 256 + 256 = 768 saturates to 448; 1.0 alone.
        (0x40, [0x78, 0x78, 0x78, 0x38], &[(1, 448.0), (2, 1.0)]),
        // float8_e5m2: 1.0 + 1.0 + 2.0 = 4.0.
        (0x41, [0x3C, 0x3C, 0x40, 0x3C], &[(1, 4.0), (2, 1.0)]),
        // float8_e8m0: 1 + 1 + 2 = 4 = 2^2 (code 129).
        (0x42, [127, 127, 128, 127], &[(1, 4.0), (2, 1.0)]),
        // bool: OR.
        (0x20, [0b0010, 0, 0, 0], &[(1, 1.0), (2, 0.0)]),
    ];
    for (tag, raw, want) in cases {
        let values: Vec<u8> = if tag == 0x20 {
            vec![raw[0]]
        } else {
            raw.to_vec()
        };
        let t = Triplets {
            shape: &shape,
            n: 4,
            index_type: IndexType::U64,
            base: 0,
            coords: CoordArrays::Interleaved(&idx),
            type_tag: tag,
            values: Some(&values),
        };
        let plain = AssembleOptions {
            duplicates: Duplicates::Sum,
            ..Default::default()
        };
        let e = assemble(&t, &plain).unwrap_err();
        assert_eq!(e.status(), Status::UnsupportedType, "tag {tag:#x}");
        assert!(e.to_string().contains("HURRAY_ASSEMBLE_ROUNDED_SUM"), "{e}");
        let rounded = AssembleOptions {
            rounded_sum: true,
            ..plain
        };
        let (coo, plan) = assemble(&t, &rounded).unwrap();
        for &(q, v) in want {
            assert_eq!(coo.lookup_f64(&[q]).unwrap().0, v, "tag {tag:#x} at {q}");
        }
        // Re-assembly through the plan gives the same values.
        let mut out = vec![0u8; coo.values().len()];
        plan.unwrap().apply(&values, &mut out, 1).unwrap();
        assert_eq!(out, coo.values(), "tag {tag:#x}");
    }
    // float128: summed in double, exact here.
    let f128 = |x: f64| hurray_coo::element::encode::f64_to_f128(x).to_le_bytes();
    let values: Vec<u8> = [1.5, 2.25, -0.75, 8.0]
        .iter()
        .flat_map(|&x| f128(x))
        .collect();
    let t = Triplets {
        shape: &shape,
        n: 4,
        index_type: IndexType::U64,
        base: 0,
        coords: CoordArrays::Interleaved(&idx),
        type_tag: 0x46,
        values: Some(&values),
    };
    let o = AssembleOptions {
        duplicates: Duplicates::Sum,
        rounded_sum: true,
        ..Default::default()
    };
    let (coo, _) = assemble(&t, &o).unwrap();
    assert_eq!(coo.lookup_f64(&[1]).unwrap().0, 3.0);
}

/// Mesh-like input (element by element: each element's nodes near each
/// other, so a row's triplets come close together) with a few long rows
/// (a constraint touching hundreds of columns), as given and randomly
/// permuted: the solver's path combines while it places the first kind and
/// places then combines the second, and long rows always the second way.
/// Both agree bit for bit with the planning path on 1 to 3 threads (each
/// thread takes the rows of its own range, reading only the spans of
/// triplets that touch them), in 32-bit per-dimension arrays and 64-bit
/// interleaved ones, both bases, every policy, zeros dropped or kept, and
/// with a skipped negative coordinate.
#[test]
fn mesh_order_and_long_rows_agree_with_the_planning_path() {
    let mut rng = Rng::new(77);
    let side = 120u64; // nodes per side: 14,400 rows
    let order = side * side;
    let mut mesh: Vec<[i128; 2]> = Vec::new();
    for a in 0..side - 1 {
        for b in 0..side - 1 {
            let n0 = a * side + b;
            let nodes = [n0, n0 + 1, n0 + side, n0 + side + 1];
            for &r in &nodes {
                for &c in &nodes {
                    mesh.push([r.into(), c.into()]);
                }
            }
            if (a * side + b) % 5000 == 7 {
                // A long row: one constraint row, many columns, some twice.
                for _ in 0..300 {
                    mesh.push([3, rng.below(order / 2).into()]);
                }
            }
        }
    }
    for round in 0..4 {
        // 32-bit arrays in rounds 0 and 2, base 0 then 1.
        let base = u8::from(round != 0);
        let b = i128::from(base);
        let mut coords: Vec<[i128; 2]> = mesh.iter().map(|&[r, c]| [r + b, c + b]).collect();
        if round >= 2 {
            for i in (1..coords.len()).rev() {
                coords.swap(i, rng.below(i as u64 + 1) as usize);
            }
        }
        if round == 1 {
            let at = coords.len() / 2;
            coords[at][0] = -1;
        }
        let index_type = [IndexType::I32, IndexType::I64][round % 2];
        let m = coords.len();
        let case = Case {
            shape: vec![order, order],
            coords: coords.iter().map(|c| c.to_vec()).collect(),
            index_type,
            base,
            per_dim: round % 2 == 0,
            ty: None,
            values: Vec::new(),
            opts: AssembleOptions::default(),
        };
        let flat: Vec<i128> = coords.iter().flatten().copied().collect();
        let inter = case.index_bytes(&flat);
        let dims: Vec<Vec<u8>> = (0..2)
            .map(|d| case.index_bytes(&coords.iter().map(|c| c[d]).collect::<Vec<_>>()))
            .collect();
        let dim_refs: Vec<&[u8]> = dims.iter().map(|d| d.as_slice()).collect();
        for name in ["float64", "float32", "int32"] {
            let ty = type_info_named(name);
            let values = values_for(
                ty,
                &(0..m)
                    .map(|_| match rng.below(6) {
                        0 => [0u8; 16],
                        _ => store(ty, random_value(&mut rng, ty)),
                    })
                    .collect::<Vec<_>>(),
            );
            let t = Triplets {
                shape: &case.shape,
                n: m,
                index_type,
                base,
                coords: match case.per_dim {
                    true => CoordArrays::PerDim(&dim_refs),
                    false => CoordArrays::Interleaved(&inter),
                },
                type_tag: ty.tag,
                values: Some(&values[..]),
            };
            for dup in [
                Duplicates::Sum,
                Duplicates::First,
                Duplicates::Last,
                Duplicates::Error,
            ] {
                if name == "int32" && dup == Duplicates::Sum {
                    continue; // not the solver's path: checked sums
                }
                let opts = AssembleOptions {
                    duplicates: dup,
                    skip_negative: round == 1,
                    drop_zeros: round % 3 == 0,
                    ..Default::default()
                };
                let planned = assemble(&t, &opts);
                for threads in [1, 2, 3] {
                    let o = AssembleOptions {
                        threads,
                        skip_plan: true,
                        ..opts
                    };
                    let got = assemble(&t, &o);
                    let what = format!("round {round} {name} {dup:?}, {threads} threads");
                    assert_same_as_planned(&planned, &got, &what);
                }
            }
        }
    }
}

/// Rows of exactly 65,536 triplets each, in row order but with repeated
/// columns (so not sorted): every span of triplets that pass 1 records
/// holds one row, and every thread's first row is some span's only row.
/// A thread that skipped a span touching its first or last row would lose
/// that row's triplets.
#[test]
fn spans_that_hold_one_row_each_reach_its_thread() {
    let mut rng = Rng::new(5);
    let (rows, per) = (4u64, 1usize << 16);
    let coords: Vec<[i128; 2]> = (0..rows)
        .flat_map(|r| (0..per).map(move |_| r))
        .map(|r| [r.into(), rng.below(1000).into()])
        .collect();
    let m = coords.len();
    let vals: Vec<u8> = (0..m)
        .flat_map(|k| ((k % 7) as f64 + 0.5).to_le_bytes())
        .collect();
    for index_type in [IndexType::I32, IndexType::I64] {
        let (case, dims) = per_dim_case(vec![rows, 1000], &coords, index_type, 0);
        let dim_refs: Vec<&[u8]> = dims.iter().map(|d| d.as_slice()).collect();
        let t = Triplets {
            shape: &case.shape,
            n: m,
            index_type,
            base: 0,
            coords: CoordArrays::PerDim(&dim_refs),
            type_tag: type_info_named("float64").tag,
            values: Some(&vals),
        };
        let sum = AssembleOptions {
            duplicates: Duplicates::Sum,
            ..Default::default()
        };
        let (want, _) = assemble(&t, &sum).unwrap();
        for threads in [1, 2, 3, 4] {
            let o = AssembleOptions {
                threads,
                skip_plan: true,
                ..sum
            };
            let (got, _) = assemble(&t, &o).unwrap();
            assert_eq!(
                got.indices(),
                want.indices(),
                "{index_type:?}, {threads} threads"
            );
            assert_eq!(
                got.values(),
                want.values(),
                "{index_type:?}, {threads} threads"
            );
        }
    }
}
