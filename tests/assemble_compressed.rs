//! Assembly straight into CSR/CSC (`assemble_compressed`) against the path
//! it must equal: `assemble` then `export_compressed`. Random rank-2
//! triplets in every index type, base and layout, in random, row-major and
//! column-major order, with duplicates, negative and out-of-bounds
//! coordinates, under every policy the fast path takes and some it does
//! not, for float64, float32, int32, uint8, complex64, int4 and pattern
//! values, CSR and CSC in every output index type and base, with and
//! without a plan, with room for every triplet, for exactly the result, and
//! one entry short, in aligned and misaligned arrays, on 1 and 2 threads.
//! The same status and message, the same bytes, nothing written past the
//! result (unless the room may serve as work space), and a plan that
//! re-assembles into the same values.

mod common;

use common::Rng;
use hurray_coo::assemble::{
    assemble, AssembleOptions, CoordArrays, Duplicates, IndexType, Plan, Triplets,
};
use hurray_coo::convert::{
    assemble_compressed, compressed_sizes, export_compressed, CompressedOut, Format,
};
use hurray_coo::element::size::values_bytes;
use hurray_coo::{CooError, Status, TypeInfo};

const INDEX_TYPES: [IndexType; 4] = [
    IndexType::I32,
    IndexType::I64,
    IndexType::U32,
    IndexType::U64,
];

fn ty(name: &str) -> &'static TypeInfo {
    hurray_coo::TYPES.iter().find(|t| t.name() == name).unwrap()
}

fn put(it: IndexType, out: &mut Vec<u8>, v: i64) {
    match it.width() {
        4 => out.extend_from_slice(&(v as i32).to_le_bytes()),
        _ => out.extend_from_slice(&v.to_le_bytes()),
    }
}

/// The caller's arrays: `len` bytes at `skew` bytes past an 8-aligned
/// start, filled with 0xAB so that bytes past the result can be checked.
struct Out {
    v: Vec<u64>,
    skew: usize,
    len: usize,
}

impl Out {
    fn new(len: usize, skew: usize) -> Out {
        let mut v = vec![0u64; (len + skew).div_ceil(8) + 1];
        bytemuck::cast_slice_mut::<u64, u8>(&mut v).fill(0xAB);
        Out { v, skew, len }
    }
    fn bytes(&mut self) -> &mut [u8] {
        let (s, l) = (self.skew, self.len);
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.v)[s..s + l]
    }
}

struct Case {
    shape: [u64; 2],
    coords: Vec<(i64, i64)>,
    index_type: IndexType,
    base: u8,
    per_dim: bool,
    ty: Option<&'static TypeInfo>,
    values: Vec<u8>,
    opts: AssembleOptions,
}

impl Case {
    fn encoded(&self) -> (Vec<u8>, [Vec<u8>; 2]) {
        let (mut inter, mut rows, mut cols) = (Vec::new(), Vec::new(), Vec::new());
        for &(r, c) in &self.coords {
            put(self.index_type, &mut inter, r);
            put(self.index_type, &mut inter, c);
            put(self.index_type, &mut rows, r);
            put(self.index_type, &mut cols, c);
        }
        (inter, [rows, cols])
    }
}

fn with_triplets<R>(case: &Case, values: &[u8], job: impl FnOnce(&Triplets<'_>) -> R) -> R {
    let (inter, [rows, cols]) = case.encoded();
    let dims: [&[u8]; 2] = [&rows, &cols];
    let t = Triplets {
        shape: &case.shape,
        n: case.coords.len(),
        index_type: case.index_type,
        base: case.base,
        coords: if case.per_dim {
            CoordArrays::PerDim(&dims)
        } else {
            CoordArrays::Interleaved(&inter)
        },
        type_tag: case.ty.map_or(0, |t| t.tag),
        values: case.ty.map(|_| values),
    };
    job(&t)
}

fn random_values(rng: &mut Rng, ty: Option<&'static TypeInfo>, n: usize) -> Vec<u8> {
    let Some(ty) = ty else {
        return Vec::new();
    };
    let mut v = vec![0u8; values_bytes(ty, n as u64).unwrap() as usize];
    let small = |rng: &mut Rng| rng.below(5) as i64 - 2; // zeros and repeats
    match ty.name() {
        "float64" => {
            for (k, c) in v.chunks_exact_mut(8).enumerate() {
                let x = small(rng) as f64 * 0.5 + (k % 3) as f64 * 0.25;
                c.copy_from_slice(&x.to_le_bytes());
            }
        }
        "float32" => {
            for c in v.chunks_exact_mut(4) {
                c.copy_from_slice(&(small(rng) as f32 * 0.75).to_le_bytes());
            }
        }
        "complex64" => {
            for c in v.chunks_exact_mut(4) {
                c.copy_from_slice(&(small(rng) as f32).to_le_bytes());
            }
        }
        "int32" => {
            for c in v.chunks_exact_mut(4) {
                c.copy_from_slice(&(small(rng) as i32).to_le_bytes());
            }
        }
        "int4" => {
            for b in v.iter_mut() {
                *b = (rng.below(3) as u8) | ((rng.below(3) as u8) << 4);
            }
            if n % 2 == 1 {
                *v.last_mut().unwrap() &= 0x0F;
            }
        }
        _ => {
            for b in v.iter_mut() {
                *b = rng.below(3) as u8;
            }
        }
    }
    v
}

fn random_case(rng: &mut Rng, big: bool) -> Case {
    let shape = [rng.below(30) + 1, rng.below(30) + 1];
    let n = if big {
        150_000 + rng.below(20_000) as usize
    } else {
        rng.below(120) as usize
    };
    let base = rng.below(2) as u8;
    let types: [Option<&str>; 7] = [
        Some("float64"),
        Some("float32"),
        Some("int32"),
        Some("uint8"),
        Some("complex64"),
        Some("int4"),
        None,
    ];
    let tyname = types[rng.below(7) as usize];
    let ty = tyname.map(ty);
    let dups = [
        Duplicates::Error,
        Duplicates::Sum,
        Duplicates::First,
        Duplicates::Last,
        Duplicates::Min,
    ];
    let mut duplicates = dups[rng.below(5) as usize];
    if tyname == Some("complex64") && duplicates == Duplicates::Min {
        duplicates = Duplicates::Last;
    }
    let (rows, cols) = (shape[0] as i64, shape[1] as i64);
    let order = rng.below(4);
    let mut coords: Vec<(i64, i64)> = match order {
        // Strictly row-major or column-major: every entry once, some left out.
        0 | 1 => {
            let mut all = Vec::new();
            for a in 0..if order == 0 { rows } else { cols } {
                for b in 0..if order == 0 { cols } else { rows } {
                    if rng.below(3) == 0 {
                        all.push(if order == 0 { (a, b) } else { (b, a) });
                    }
                }
            }
            all
        }
        _ => (0..n)
            .map(|_| (rng.below(rows as u64) as i64, rng.below(cols as u64) as i64))
            .collect(),
    };
    if order < 2 && coords.len() > 1 && rng.below(3) == 0 {
        // In order up to a point anywhere, then not: a repeat (combined by
        // the policy) or two neighbours swapped. One pass writes while it
        // checks, so the point where it declines matters.
        let len = coords.len() as u64;
        // Mostly late: the first 64 triplets are looked at before trying.
        let k = match rng.below(2) {
            0 => rng.below(len - 1),
            _ => len - 2 - rng.below(len.min(16) - 1),
        } as usize;
        if rng.below(2) == 0 {
            coords.insert(k + 1, coords[k]);
        } else {
            coords.swap(k, k + 1);
        }
    }
    if big {
        // Many triplets per entry: the threads' ranges and the buckets.
        coords = (0..n)
            .map(|_| (rng.below(rows as u64) as i64, rng.below(cols as u64) as i64))
            .collect();
    }
    let bad = rng.below(8);
    if bad == 0 && !coords.is_empty() {
        let k = rng.below(coords.len() as u64) as usize;
        coords[k].1 = cols + rng.below(2) as i64; // out of bounds
    }
    let index_type = INDEX_TYPES[rng.below(4) as usize];
    let skip_negative = rng.below(3) == 0;
    if bad == 1 && !coords.is_empty() {
        let k = rng.below(coords.len() as u64) as usize;
        if matches!(index_type, IndexType::I32 | IndexType::I64) {
            coords[k].0 = -1 - base as i64;
        }
    }
    let coords = coords
        .into_iter()
        .map(|(r, c)| (r + base as i64, c + base as i64))
        .collect::<Vec<_>>();
    let values = random_values(rng, ty, coords.len());
    Case {
        shape,
        coords,
        index_type,
        base,
        per_dim: rng.below(2) == 0,
        ty,
        values,
        opts: AssembleOptions {
            duplicates,
            skip_negative,
            drop_zeros: rng.below(4) == 0,
            threads: 1 + rng.below(2) as usize,
            skip_plan: rng.below(2) == 0,
            rounded_sum: false,
            scratch_in_output: rng.below(2) == 0,
        },
    }
}

/// The expected outcome: the canonical path's arrays, or its error.
type Expected = Result<(Vec<u8>, Vec<u8>, Vec<u8>, u64, Option<Plan>), CooError>;

fn expected(case: &Case, values: &[u8], format: Format, it: IndexType, base: u8) -> Expected {
    with_triplets(case, values, |t| {
        let (coo, plan) = assemble(t, &case.opts)?;
        let s = compressed_sizes(&coo, format, it)?;
        let (mut o, mut i, mut v) = (
            vec![0u8; s.offsets as usize],
            vec![0u8; s.indices as usize],
            vec![0u8; s.values as usize],
        );
        export_compressed(&coo, format, it, base, &mut o, &mut i, &mut v, 1)?;
        Ok((o, i, v, coo.nnz(), plan))
    })
}

fn check(case: &Case, rng: &mut Rng, round: usize) {
    let format = if rng.below(2) == 0 {
        Format::Csr
    } else {
        Format::Csc
    };
    let it = INDEX_TYPES[rng.below(4) as usize];
    let out_base = rng.below(2) as u8;
    let want = expected(case, &case.values, format, it, out_base);
    let w = it.width();
    let major = if format == Format::Csr {
        case.shape[0]
    } else {
        case.shape[1]
    } as usize;
    let n = case.coords.len();
    let result_ty = case.ty.unwrap_or(ty("bool"));
    let nnz = want.as_ref().map_or(n, |r| r.3 as usize);
    // Room: every triplet, exactly the result, or one entry short.
    let room = match rng.below(3) {
        0 => n,
        1 => nnz,
        _ => nnz.saturating_sub(1),
    };
    let skew = if rng.below(4) == 0 { 1 } else { 0 };
    let pattern_no_values = case.ty.is_none() && rng.below(2) == 0;
    let vroom = if pattern_no_values {
        0
    } else {
        values_bytes(result_ty, room as u64).unwrap() as usize
    };
    let (mut o, mut i, mut v) = (
        Out::new((major + 1) * w, skew),
        Out::new(room * w, skew),
        Out::new(vroom, skew),
    );
    let got = with_triplets(case, &case.values, |t| {
        assemble_compressed(
            t,
            &case.opts,
            CompressedOut {
                format,
                index_type: it,
                base: out_base,
                offsets: o.bytes(),
                indices: i.bytes(),
                values: v.bytes(),
            },
        )
    });
    let ctx = format!(
        "round {round}: {format:?} {it:?} base {out_base} room {room} of nnz {nnz}, n {n}, \
         {:?} {:?}, shape {:?}",
        case.ty.map(|t| t.name()),
        case.opts,
        case.shape
    );
    match (&want, &got) {
        (Err(e), Err(g)) => {
            assert_eq!(e.to_string(), g.to_string(), "{ctx}");
        }
        (Err(e), Ok(_)) => panic!("{ctx}: expected {e}, got a result"),
        (Ok(_), Err(g)) if room < nnz => {
            assert_eq!(g.status(), Status::BufferTooSmall, "{ctx}: {g}");
            assert!(g.to_string().contains(&format!("{nnz}")), "{ctx}: {g}");
        }
        (Ok(_), Err(g)) => panic!("{ctx}: unexpected {g}"),
        (Ok(_), Ok(_)) if room < nnz => panic!("{ctx}: a result in too little room"),
        (Ok((eo, ei, ev, enz, eplan)), Ok((gnz, gplan))) => {
            assert_eq!(enz, gnz, "{ctx}");
            assert_eq!(o.bytes(), &eo[..], "{ctx}: offsets");
            assert_eq!(&i.bytes()[..ei.len()], &ei[..], "{ctx}: indices");
            // Past the result: never written, unless the room may serve as
            // work space.
            let kept = |b: &[u8]| case.opts.scratch_in_output || b.iter().all(|&b| b == 0xAB);
            assert!(kept(&i.bytes()[ei.len()..]), "{ctx}");
            if !pattern_no_values {
                assert_eq!(&v.bytes()[..ev.len()], &ev[..], "{ctx}: values");
                assert!(kept(&v.bytes()[ev.len()..]), "{ctx}");
            }
            assert_eq!(eplan.is_some(), gplan.is_some(), "{ctx}");
            if let (Some(_), Some(gp), Some(t)) = (eplan, gplan, case.ty) {
                // New values through the plan land where a fresh assembly
                // of them puts them in the export.
                let fresh = random_values(rng, Some(t), n);
                let mut out = vec![0u8; values_bytes(t, *gnz).unwrap() as usize];
                gp.apply(&fresh, &mut out, 1).unwrap();
                let again = expected(case, &fresh, format, it, out_base).unwrap();
                if !case.opts.drop_zeros {
                    assert_eq!(out, again.2, "{ctx}: plan");
                }
            }
        }
    }
}

#[test]
fn assembly_into_compressed_is_assembly_then_export() {
    let mut rng = Rng::new(0xC5C);
    for round in 0..4000 {
        let case = random_case(&mut rng, false);
        check(&case, &mut rng, round);
    }
}

#[test]
fn large_assemblies_on_two_threads_agree_too() {
    let mut rng = Rng::new(0xB16);
    for round in 0..24 {
        let mut case = random_case(&mut rng, true);
        case.opts.threads = 2;
        check(&case, &mut rng, round);
    }
}

#[test]
fn refusals_name_what_is_wrong() {
    let shape = [2u64, 3_000_000_000];
    let coords: Vec<u8> = [0u64, 5, 1, 2_999_999_999]
        .iter()
        .flat_map(|c| c.to_le_bytes())
        .collect();
    let vals: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let t = Triplets {
        shape: &shape,
        n: 2,
        index_type: IndexType::U64,
        base: 0,
        coords: CoordArrays::Interleaved(&coords),
        type_tag: ty("float64").tag,
        values: Some(&vals),
    };
    let o = AssembleOptions {
        skip_plan: true,
        ..AssembleOptions::default()
    };
    let run = |format, it: IndexType, offsets: usize, room: usize| {
        let (mut ob, mut ib, mut vb) = (
            vec![0u8; offsets],
            vec![0u8; room * it.width()],
            vec![0u8; room * 8],
        );
        assemble_compressed(
            &t,
            &o,
            CompressedOut {
                format,
                index_type: it,
                base: 0,
                offsets: &mut ob,
                indices: &mut ib,
                values: &mut vb,
            },
        )
    };
    // Column indices up to 2,999,999,999 do not fit int32.
    let e = run(Format::Csr, IndexType::I32, 3 * 4, 2).unwrap_err();
    assert_eq!(e.status(), Status::Overflow, "{e}");
    assert!(e.to_string().contains("2999999999"), "{e}");
    // They fit uint32.
    assert_eq!(run(Format::Csr, IndexType::U32, 3 * 4, 2).unwrap().0, 2);
    // Offsets of the wrong size.
    let e = run(Format::Csr, IndexType::U32, 4 * 4, 2).unwrap_err();
    assert_eq!(e.status(), Status::BufferSize, "{e}");
    // One entry short.
    let e = run(Format::Csr, IndexType::U32, 3 * 4, 1).unwrap_err();
    assert_eq!(e.status(), Status::BufferTooSmall, "{e}");
    assert!(e.to_string().contains("2 uint32 indices"), "{e}");
    // Rank 3.
    let shape3 = [2u64, 2, 2];
    let t3 = Triplets {
        shape: &shape3,
        n: 0,
        coords: CoordArrays::Interleaved(&[]),
        values: Some(&[]),
        ..t
    };
    let e = assemble_compressed(
        &t3,
        &o,
        CompressedOut {
            format: Format::Csr,
            index_type: IndexType::I32,
            base: 0,
            offsets: &mut [0u8; 12],
            indices: &mut [],
            values: &mut [],
        },
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::UnsupportedFeature, "{e}");
    assert!(e.to_string().contains("rank 3"), "{e}");
}

/// With `scratch_in_output`, mesh-like triplets (element by element, with
/// locality) are folded in the caller's own indices and values: the result
/// is the one without the flag, bit for bit, on 1 to 3 threads (each
/// thread's rows then move down to follow the rows before), both output
/// bases, every index type (64-bit ones widened in place from the 32-bit
/// columns), float64, float32 and int32, every policy the path
/// takes; the room past the result was used (so the path ran). The same
/// triplets permuted give the same result too (on this small matrix their
/// buckets fit in cache, so they count as having locality).
#[test]
fn scratch_in_output_is_the_same_assembly_in_the_callers_room() {
    let mut rng = Rng::new(0x5C4);
    let side = 90i64; // 8,100 rows; 8 * 89^2 * 2 = 126,736 triplets
    let mut mesh = Vec::new();
    for a in 0..side - 1 {
        for b in 0..side - 1 {
            let n0 = a * side + b;
            for tri in [[n0, n0 + 1, n0 + side], [n0 + 1, n0 + side + 1, n0 + side]] {
                for &r in &tri {
                    for &c in &tri {
                        mesh.push((r, c));
                    }
                }
            }
        }
    }
    let shape = [(side * side) as u64; 2];
    for round in 0..4 {
        let permuted = round == 3;
        let mut coords = mesh.clone();
        if permuted {
            for i in (1..coords.len()).rev() {
                coords.swap(i, rng.below(i as u64 + 1) as usize);
            }
        }
        let n = coords.len();
        let (rows, cols): (Vec<u8>, Vec<u8>) = (
            coords
                .iter()
                .flat_map(|c| (c.0 as i32).to_le_bytes())
                .collect(),
            coords
                .iter()
                .flat_map(|c| (c.1 as i32).to_le_bytes())
                .collect(),
        );
        let dims = [&rows[..], &cols[..]];
        for (name, dup) in [
            ("float64", Duplicates::Sum),
            ("float32", Duplicates::Sum),
            ("float64", Duplicates::Last),
            ("int32", Duplicates::First),
        ] {
            let t_ty = ty(name);
            let values = random_values(&mut rng, Some(t_ty), n);
            let t = Triplets {
                shape: &shape,
                n,
                index_type: IndexType::I32,
                base: 0,
                coords: CoordArrays::PerDim(&dims),
                type_tag: t_ty.tag,
                values: Some(&values),
            };
            let it = INDEX_TYPES[round];
            let out_base = [0u8, 1, 1, 0][round];
            let format = [Format::Csr, Format::Csc][round % 2];
            for threads in [1, 2, 3] {
                let run = |lend: bool| {
                    let o = AssembleOptions {
                        duplicates: dup,
                        threads,
                        skip_plan: true,
                        drop_zeros: round == 1,
                        scratch_in_output: lend,
                        ..AssembleOptions::default()
                    };
                    let iw = it.width();
                    let (mut ob, mut ib, mut vb) = (
                        Out::new((shape[0] as usize + 1) * iw, 0),
                        Out::new(n * iw, 0),
                        Out::new(values.len(), 0),
                    );
                    let (nnz, _) = assemble_compressed(
                        &t,
                        &o,
                        CompressedOut {
                            format,
                            index_type: it,
                            base: out_base,
                            offsets: ob.bytes(),
                            indices: ib.bytes(),
                            values: vb.bytes(),
                        },
                    )
                    .unwrap();
                    let w = t_ty.lookup_bytes();
                    let (i, v) = (ib.bytes().to_vec(), vb.bytes().to_vec());
                    let untouched = i[nnz as usize * iw..].iter().all(|&b| b == 0xAB)
                        && v[nnz as usize * w..].iter().all(|&b| b == 0xAB);
                    let r = nnz as usize;
                    (
                        ob.bytes().to_vec(),
                        i[..r * iw].to_vec(),
                        v[..r * w].to_vec(),
                        untouched,
                    )
                };
                let what = format!(
                    "round {round} {name} {dup:?} {it:?} base {out_base}, {threads} threads"
                );
                let (want, got) = (run(false), run(true));
                assert!(want.3, "{what}: without the flag, nothing past the result");
                assert_eq!(got.0, want.0, "{what}: offsets");
                assert_eq!(got.1, want.1, "{what}: indices");
                assert_eq!(got.2, want.2, "{what}: values");
                if !permuted {
                    assert!(!got.3, "{what}: the room past the result used");
                }
            }
        }
    }
}
