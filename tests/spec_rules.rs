//! One test per rule of the COO specification (coo-layout.txt) and of the
//! format facts it leans on (FORMAT-NOTES.md), against the safe Rust core.
//! Each asserts the status and the message, so it fails if the rule is
//! broken or reported vaguely.

mod common;

use common::{le, Buf, Fixture};
use hurray_coo::{Coo, CooError, CooParts, Options, Status, TYPES};

fn err_of(r: Result<Coo<'_>, CooError>) -> CooError {
    match r {
        Ok(_) => panic!("expected an error, the tensor was accepted"),
        Err(e) => e,
    }
}

fn assert_err(e: &CooError, status: Status, needles: &[&str]) {
    assert_eq!(e.status(), status, "wrong status for: {e}");
    let msg = e.to_string();
    for n in needles {
        assert!(msg.contains(n), "message {msg:?} lacks {n:?}");
    }
}

const COPY: Options = Options {
    copy: true,
    permissive: false,
    index: false,
    index_values: false,
    threads: 1,
};
const PERMISSIVE: Options = Options {
    copy: false,
    permissive: true,
    index: false,
    index_values: false,
    threads: 1,
};

// ---- The seed's worked example -------------------------------------------

fn seed() -> Fixture {
    Fixture::seed()
}

#[test]
fn seed_example_end_to_end() {
    let f = seed();
    let coo = f.strict().unwrap();
    coo.validate().unwrap();
    assert_eq!(coo.rank(), 2);
    assert_eq!(coo.shape(), &[4, 4]);
    assert_eq!(coo.nnz(), 3);
    assert_eq!(coo.values().len(), 12);
    assert_eq!(coo.indices_bytes().len(), 48);
    assert_eq!(coo.indices(), &[0, 1, 2, 0, 3, 3]);
    for (q, want) in [([0u64, 1], 1.5), ([2, 0], -0.5), ([3, 3], 2.0)] {
        assert_eq!(coo.lookup_f64(&q).unwrap(), (want, true));
        let mut out = [0u8; 4];
        assert!(coo.lookup(&q, &mut out).unwrap());
        assert_eq!(f32::from_le_bytes(out), want as f32);
    }
    assert_eq!(coo.lookup_f64(&[1, 1]).unwrap(), (0.0, false));
    let mut out = [0xAAu8; 4];
    assert!(!coo.lookup(&[1, 1], &mut out).unwrap());
    assert_eq!(out, [0; 4], "an absent element reads as the type's zero");
}

// ---- Rank -------------------------------------------------------------------

#[test]
fn rank_0_is_refused_scalars_may_not_be_sparse() {
    let f = Fixture::new(0x03, &[], &[], &[], true);
    assert_err(
        &err_of(f.strict()),
        Status::InvalidRank,
        &["rank 0", "scalar"],
    );
}

#[test]
fn rank_above_64_is_refused_and_64_is_accepted() {
    let f = Fixture::new(0x03, &[2; 65], &[], &[], true);
    assert_err(
        &err_of(f.strict()),
        Status::InvalidRank,
        &["rank 65", "1..=64"],
    );
    let e0 = [0u64; 64];
    let mut e1 = [0u64; 64];
    e1[63] = 1;
    let f = Fixture::f32s(&[2; 64], &[&e0, &e1], true);
    let coo = f.strict().unwrap();
    assert_eq!(coo.lookup_f64(&e1).unwrap(), (2.0, true));
}

#[test]
fn rank_1_works() {
    let f = Fixture::f32s(&[10], &[&[3], &[7]], true);
    let coo = f.strict().unwrap();
    assert_eq!(coo.lookup_f64(&[7]).unwrap(), (2.0, true));
    assert_eq!(coo.lookup_f64(&[4]).unwrap(), (0.0, false));
}

// ---- Shape ------------------------------------------------------------------

#[test]
fn dynamic_dimension_is_refused() {
    let f = Fixture::new(0x03, &[4, u64::MAX, 2], &[], &[], false);
    assert_err(
        &err_of(f.strict()),
        Status::InvalidShape,
        &["dimension 1", "UINT64_MAX"],
    );
}

#[test]
fn empty_tensors_are_valid() {
    for shape in [&[0u64, 5][..], &[4, 4], &[0], &[u64::MAX - 1; 3]] {
        for sorted in [false, true] {
            let f = Fixture::new(0x03, shape, &[], &[], sorted);
            let coo = f.strict().unwrap();
            coo.validate().unwrap();
            assert_eq!(coo.nnz(), 0);
        }
    }
    // A zero dimension makes every coordinate out of bounds.
    let f = Fixture::f32s(&[0, 5], &[&[0, 0]], false);
    assert_err(
        &err_of(f.strict()),
        Status::IndexOutOfBounds,
        &["entry 0", "dimension 0", "shape[0] = 0"],
    );
}

#[test]
fn element_counts_beyond_u64_are_handled() {
    // 2^64 elements exactly (the packed-key path with the full u64 range).
    let hi = [1u64; 64];
    let lo = [0u64; 64];
    let f = Fixture::f32s(&[2; 64], &[&hi, &lo, &hi], false);
    assert_err(
        &err_of(f.strict()),
        Status::Duplicate,
        &["entry 2 duplicates entry 0"],
    );
    // 2^2048 elements (beyond u128: the comparison-sort path).
    let big = [1u64 << 32; 64];
    let mut a = [0u64; 64];
    a[0] = (1 << 32) - 1;
    let b = [7u64; 64];
    let f = Fixture::f32s(&big, &[&a, &b, &a], false);
    assert_err(
        &err_of(f.strict()),
        Status::Duplicate,
        &["entry 2 duplicates entry 0"],
    );
    let f = Fixture::f32s(&big, &[&a, &b], false);
    let coo = f.strict().unwrap();
    assert_eq!(coo.lookup_f64(&b).unwrap(), (2.0, true));
}

// ---- Element types ----------------------------------------------------------

#[test]
fn invalid_tags_are_refused_even_in_permissive_mode() {
    for tag in [0x00u8, 0xFF] {
        let f = Fixture::new(tag, &[4], &[], &[], true);
        let msg = format!("0x{tag:02X}");
        assert_err(&err_of(f.strict()), Status::InvalidType, &[&msg, "invalid"]);
        assert_err(&err_of(f.create(PERMISSIVE)), Status::InvalidType, &[&msg]);
    }
}

#[test]
fn unknown_tags_are_refused_unless_permissive_and_then_never_interpreted() {
    for (tag, word) in [
        (0x47u8, "reserved"),
        (0x80, "reserved"),
        (0xEF, "reserved"),
        (0xF0, "private"),
        (0xFE, "private"),
        (0x05, "not assigned"),
        (0x7F, "not assigned"),
    ] {
        let f = Fixture::new(tag, &[4], &[&[1], &[2]], &[9, 9, 9], true);
        assert_err(
            &err_of(f.strict()),
            Status::InvalidType,
            &[&format!("0x{tag:02X}"), word, "HURRAY_COO_PERMISSIVE"],
        );
        let coo = f.permissive();
        assert_eq!(coo.type_tag(), tag);
        assert!(coo.type_info().is_none());
        // The values are never interpreted.
        let mut out = [0u8; 16];
        assert_err(
            &coo.lookup(&[1], &mut out).unwrap_err(),
            Status::UnsupportedType,
            &["never interpreted"],
        );
        assert_eq!(
            coo.lookup_f64(&[1]).unwrap_err().status(),
            Status::UnsupportedType
        );
        // validate() checks everything the spec requires, the tag included.
        assert_eq!(coo.validate().unwrap_err().status(), Status::InvalidType);
    }
}

/// Packs `patterns` (each `bits` wide) LSB-first as the format does.
fn pack(bits: u32, patterns: &[u8]) -> Vec<u8> {
    let n = patterns.len();
    let len = if bits == 6 {
        n.div_ceil(4) * 3
    } else {
        (n * bits as usize).div_ceil(8)
    };
    let mut out = vec![0u8; len];
    for (i, &p) in patterns.iter().enumerate() {
        for b in 0..bits as usize {
            if p >> b & 1 == 1 {
                let bit = i * bits as usize + b;
                out[bit / 8] |= 1 << (bit % 8);
            }
        }
    }
    out
}

#[test]
fn every_element_type_is_accepted_sized_and_read_back_exactly() {
    for ty in &TYPES {
        for n in [0usize, 1, 2, 3, 4, 5, 8, 9] {
            let entries: Vec<Vec<u64>> = (0..n as u64).map(|i| vec![i * 3]).collect();
            let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
            let (values, expected): (Vec<u8>, Vec<Vec<u8>>) = if ty.is_sub_byte() {
                let pats: Vec<u8> = (0..n)
                    .map(|i| ((i * 5 + 1) as u8) & ((1u16 << ty.bits) - 1) as u8)
                    .collect();
                (
                    pack(ty.bits, &pats),
                    pats.iter().map(|&p| vec![p]).collect(),
                )
            } else {
                let w = (ty.bits / 8) as usize;
                let v: Vec<u8> = (0..n * w).map(|k| (k * 7 + 3) as u8).collect();
                let e = v.chunks(w).map(|c| c.to_vec()).collect();
                (v, e)
            };
            let f = Fixture::new(ty.tag, &[64], &refs, &values, true);
            let coo = f
                .strict()
                .unwrap_or_else(|e| panic!("{} with {n} elements: {e}", ty.name()));
            for (i, want) in expected.iter().enumerate() {
                let mut out = [0u8; 16];
                assert!(coo.lookup(&[i as u64 * 3], &mut out).unwrap());
                assert_eq!(&out[..want.len()], &want[..], "{} element {i}", ty.name());
                // Too small an output buffer is an error, not a truncation.
                let mut small = vec![0u8; ty.lookup_bytes() - 1];
                assert_err(
                    &coo.lookup(&[i as u64 * 3], &mut small).unwrap_err(),
                    Status::BufferTooSmall,
                    &["out_value", &format!("{} are needed", ty.lookup_bytes())],
                );
            }
            // One byte more or less than the type needs is refused.
            for len in [values.len() + 1, values.len().wrapping_sub(1)] {
                if len > values.len() + 1 {
                    continue;
                }
                let mut wrong = values.clone();
                wrong.resize(len, 0);
                let f = Fixture::new(ty.tag, &[64], &refs, &wrong, true);
                assert_err(
                    &err_of(f.strict()),
                    Status::BufferSize,
                    &["values buffer", &format!("{len} bytes"), ty.name()],
                );
            }
        }
    }
}

#[test]
fn sub_byte_padding_bits_must_be_zero() {
    let cases: [(u8, usize, Vec<u8>); 5] = [
        (0x20, 5, vec![0x0D | 0x20]),      // bool: bits 5..8 are padding
        (0x48, 3, vec![0x21, 0x13]),       // int4: high nibble of byte 1
        (0x4B, 3, vec![0x27 | 0x40]),      // uint2: bits 6..8
        (0x44, 1, vec![0x3F, 0x00, 0x01]), // float6: last byte of the group
        (0x43, 1, vec![0x17]),             // float4_e2m1: high nibble
    ];
    for (tag, n, values) in cases {
        let entries: Vec<Vec<u64>> = (0..n as u64).map(|i| vec![i]).collect();
        let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
        let f = Fixture::new(tag, &[16], &refs, &values, true);
        assert_err(
            &err_of(f.strict()),
            Status::NonzeroPadding,
            &["padding bits", "must be zero", &format!("after the {n} ")],
        );
    }
}

#[test]
fn bit_patterns_are_preserved_exactly() {
    // A signalling NaN with a payload, and negative zero.
    let vals: Vec<u8> = [0x7FA0_0001u32, 0x8000_0000]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let f = Fixture::new(0x03, &[2], &[&[0], &[1]], &vals, true);
    let coo = f.strict().unwrap();
    let mut out = [0u8; 4];
    coo.lookup(&[0], &mut out).unwrap();
    assert_eq!(u32::from_le_bytes(out), 0x7FA0_0001);
    coo.lookup(&[1], &mut out).unwrap();
    assert_eq!(u32::from_le_bytes(out), 0x8000_0000);
    assert!(coo.lookup_f64(&[1]).unwrap().0.is_sign_negative());
}

#[test]
fn lookup_f64_decodes_each_real_type_and_refuses_complex() {
    let cases: [(u8, Vec<u8>, f64); 9] = [
        (0x01, 0x3E00u16.to_le_bytes().to_vec(), 1.5),
        (0x02, 0xBFC0u16.to_le_bytes().to_vec(), -1.5),
        (0x04, (-0.25f64).to_le_bytes().to_vec(), -0.25),
        (0x16, (-7i64).to_le_bytes().to_vec(), -7.0),
        (0x40, vec![0x7E], 448.0),
        (0x48, vec![0x09], -7.0),
        (0x4A, vec![0x02], -2.0),
        (0x20, vec![0x01], 1.0),
        (
            0x46,
            ((0x3FFFu128 << 112) | (1u128 << 111))
                .to_le_bytes()
                .to_vec(),
            1.5,
        ),
    ];
    for (tag, values, want) in cases {
        let f = Fixture::new(tag, &[3], &[&[1]], &values, true);
        let coo = f.strict().unwrap();
        assert_eq!(
            coo.lookup_f64(&[1]).unwrap(),
            (want, true),
            "tag 0x{tag:02X}"
        );
    }
    for tag in [0x50u8, 0x51] {
        let w = if tag == 0x50 { 8 } else { 16 };
        let f = Fixture::new(tag, &[3], &[&[1]], &vec![1u8; w], true);
        let coo = f.strict().unwrap();
        assert_err(
            &coo.lookup_f64(&[1]).unwrap_err(),
            Status::UnsupportedType,
            &["complex", "hurray_coo_lookup"],
        );
        let mut out = [0u8; 16];
        assert!(coo.lookup(&[1], &mut out).unwrap());
        assert_eq!(&out[..w], &vec![1u8; w][..]);
    }
}

// ---- Buffer sizes -------------------------------------------------------------

#[test]
fn indices_buffer_must_be_nnz_times_rank_times_8() {
    let mut f = seed();
    f.indices = Buf::aligned(&le(&[0, 1, 2, 0, 3]));
    assert_err(
        &err_of(f.strict()),
        Status::BufferSize,
        &[
            "indices buffer is 40 bytes",
            "nnz 3 x rank 2 x 8",
            "exactly 48 bytes",
        ],
    );
}

#[test]
fn size_overflow_is_reported_not_wrapped() {
    let f = seed();
    // nnz * rank * 8 overflows u64.
    let parts = CooParts {
        nnz: u64::MAX / 4,
        ..f.parts()
    };
    assert_err(
        &err_of(Coo::new(parts, Options::default())),
        Status::Overflow,
        &["nnz * rank * 8"],
    );
    // nnz * 8 (float64 values) overflows while nnz * rank * 8 would too;
    // values are checked after indices' size computation, so use rank 1.
    let g = Fixture::new(0x04, &[8], &[], &[], false);
    let parts = CooParts {
        nnz: u64::MAX / 4,
        ..g.parts()
    };
    assert_eq!(
        err_of(Coo::new(parts, Options::default())).status(),
        Status::Overflow
    );
}

// ---- Alignment ------------------------------------------------------------------

#[test]
fn borrowed_buffers_must_be_64_byte_aligned_copy_accepts_any() {
    for skew in [1usize, 8, 32] {
        let mut f = seed();
        f.values = Buf::at_offset(f.values.get(), skew);
        assert_err(
            &err_of(f.strict()),
            Status::Misaligned,
            &[
                "values buffer",
                "HURRAY_COO_COPY",
                &format!("mod 64 = {skew}"),
            ],
        );
        let coo = f.create(COPY).unwrap();
        assert_eq!(coo.values().as_ptr() as usize % 64, 0);
        assert_eq!(coo.lookup_f64(&[2, 0]).unwrap(), (-0.5, true));

        let mut f = seed();
        f.indices = Buf::at_offset(f.indices.get(), skew);
        assert_err(&err_of(f.strict()), Status::Misaligned, &["indices buffer"]);
        let coo = f.create(COPY).unwrap();
        assert_eq!(coo.indices(), &[0, 1, 2, 0, 3, 3]);
    }
    // Empty buffers are exempt.
    let mut f = Fixture::new(0x03, &[4], &[], &[], true);
    f.values = Buf::at_offset(&[], 3);
    f.strict().unwrap();
}

// ---- Validity constraints -----------------------------------------------------

#[test]
fn every_coordinate_must_be_in_bounds() {
    let f = Fixture::f32s(&[4, 5], &[&[0, 1], &[3, 4], &[2, 5], &[9, 0]], false);
    assert_err(
        &err_of(f.strict()),
        Status::IndexOutOfBounds,
        &[
            "entry 2 at (2, 5)",
            "coordinate 5 in dimension 1",
            "shape[1] = 5",
        ],
    );
    let f = Fixture::f32s(&[4, 5], &[&[0, 1], &[4, 0]], true);
    assert_err(
        &err_of(f.strict()),
        Status::IndexOutOfBounds,
        &["entry 1 at (4, 0)", "dimension 0", "shape[0] = 4"],
    );
}

#[test]
fn duplicate_coordinates_are_refused_sorted_or_not() {
    let f = Fixture::f32s(
        &[4, 4],
        &[&[2, 0], &[0, 1], &[3, 3], &[1, 1], &[0, 1], &[2, 0]],
        false,
    );
    assert_err(
        &err_of(f.strict()),
        Status::Duplicate,
        &["entry 4 duplicates entry 1 at (0, 1)"],
    );
    let f = Fixture::f32s(&[4, 4], &[&[0, 1], &[2, 0], &[2, 0]], true);
    assert_err(
        &err_of(f.strict()),
        Status::Duplicate,
        &["entry 2 duplicates entry 1 at (2, 0)"],
    );
}

#[test]
fn sorted_entries_must_be_strictly_increasing() {
    let f = Fixture::f32s(&[4, 4], &[&[0, 1], &[2, 0], &[1, 3], &[3, 3]], true);
    assert_err(
        &err_of(f.strict()),
        Status::NotSorted,
        &["entry 2 at (1, 3)", "entry 1 at (2, 0)", "is_sorted"],
    );
    // The same entries are fine when not declared sorted.
    let f = Fixture::f32s(&[4, 4], &[&[0, 1], &[2, 0], &[1, 3], &[3, 3]], false);
    f.strict().unwrap();
}

#[test]
fn first_violation_is_the_lowest_entry() {
    // Duplicate at entry 2 comes before the out-of-bounds entry 3.
    let f = Fixture::f32s(&[4], &[&[1], &[2], &[1], &[9]], false);
    assert_err(
        &err_of(f.strict()),
        Status::Duplicate,
        &["entry 2 duplicates entry 0"],
    );
    // Out-of-bounds entry 1 comes before the duplicate at entry 3.
    let f = Fixture::f32s(&[4], &[&[1], &[9], &[2], &[1]], false);
    assert_err(
        &err_of(f.strict()),
        Status::IndexOutOfBounds,
        &["entry 1 at (9)"],
    );
}

#[test]
fn permissive_mode_skips_data_checks_but_validate_does_not() {
    let f = Fixture::f32s(&[4, 4], &[&[3, 3], &[0, 1], &[3, 3]], true);
    let coo = f.permissive();
    assert!(coo.is_permissive());
    assert_err(
        &coo.validate().unwrap_err(),
        Status::NotSorted,
        &["entry 1 at (0, 1)"],
    );
    // Structural checks still run in permissive mode.
    let mut g = seed();
    g.values = Buf::aligned(&[0; 8]);
    assert_eq!(err_of(g.create(PERMISSIVE)).status(), Status::BufferSize);
}

// ---- Lookup -------------------------------------------------------------------

#[test]
fn unsorted_tensors_are_scanned_not_binary_searched() {
    // Descending order: a binary search would miss most entries.
    let entries: Vec<Vec<u64>> = (0..50u64).rev().map(|i| vec![i, 49 - i]).collect();
    let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
    let f = Fixture::f32s(&[50, 50], &refs, false);
    let coo = f.strict().unwrap();
    for (k, e) in entries.iter().enumerate() {
        assert_eq!(coo.lookup_f64(e).unwrap(), (k as f64 + 1.0, true));
    }
}

#[test]
fn lookup_rejects_wrong_rank_and_out_of_bounds_queries() {
    let f = seed();
    let coo = f.strict().unwrap();
    assert_err(
        &coo.lookup_f64(&[1]).unwrap_err(),
        Status::RankMismatch,
        &["rank 1", "rank 2"],
    );
    assert_err(
        &coo.lookup_f64(&[1, 4]).unwrap_err(),
        Status::IndexOutOfBounds,
        &["coordinate 4 in dimension 1", "shape[1] = 4"],
    );
}

// ---- element-types.md: float8_e8m0 codes 0x00 and 0xFF ------------------

/// "The bit patterns 0x00 and 0xFF are reserved ... and MUST NOT be used as
/// data values. A reader encountering 0x00 or 0xFF in a float8_e8m0 buffer
/// MUST treat the containing descriptor as invalid."
#[test]
fn e8m0_reserved_codes_are_refused_in_strict_mode_with_entry_and_code() {
    let entries: [&[u64]; 4] = [&[0], &[1], &[2], &[3]];
    for (bad, at) in [(0x00u8, 2usize), (0xFF, 1), (0x00, 0), (0xFF, 3)] {
        let mut vals = [0x7Fu8, 0x80, 0x01, 0xFE];
        vals[at] = bad;
        let f = Fixture::new(0x42, &[8], &entries, &vals, true);
        let e = err_of(f.strict());
        assert_err(
            &e,
            Status::InvalidValue,
            &[
                &format!("entry {at}"),
                &format!("0x{bad:02X}"),
                "float8_e8m0",
            ],
        );
        // validate() on a permissive handle reports the same.
        let p = f.permissive();
        assert_eq!(p.validate().unwrap_err(), e);
        // Permissive lookups read the reserved code as NaN, never as a number.
        let (v, found) = p.lookup_f64(&[at as u64]).unwrap();
        assert!(found && v.is_nan(), "code 0x{bad:02X} read as {v}");
        let mut raw = [0u8; 1];
        assert!(p.lookup(&[at as u64], &mut raw).unwrap());
        assert_eq!(raw[0], bad, "hurray_coo_lookup returns the stored code");
    }
    // Every other code is valid data.
    let all: Vec<u8> = (0x01..=0xFE).collect();
    let entries: Vec<Vec<u64>> = (0..all.len() as u64).map(|i| vec![i]).collect();
    let refs: Vec<&[u64]> = entries.iter().map(|e| e.as_slice()).collect();
    Fixture::new(0x42, &[300], &refs, &all, true)
        .strict()
        .unwrap();
}

#[test]
fn coordinate_rules_are_reported_before_value_rules() {
    // Entry 0 holds a forbidden code, entry 2 duplicates entry 1.
    let f = Fixture::new(0x42, &[8], &[&[0], &[5], &[5]], &[0xFF, 0x7F, 0x7F], false);
    assert_err(
        &err_of(f.strict()),
        Status::Duplicate,
        &["entry 2 duplicates entry 1"],
    );
}

// ---- coo-layout.txt, Element Lookup, on data that was never validated ---

/// What a lookup returns is defined once: the lowest-numbered entry with the
/// query's coordinates. The two examples, then random permissive data
/// with wrong flags, against that oracle, for the scan, the binary search,
/// the index and the batch (one thread and several).
#[test]
fn unvalidated_data_single_indexed_and_batch_lookups_agree() {
    let f64s = |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    // Claims sorted, is not: a lookup of 2 finds entry 0.
    let f = Fixture::new(
        0x04,
        &[10],
        &[&[2], &[0], &[1]],
        &f64s(&[1.0, 2.0, 3.0]),
        true,
    );
    check_agreement(&f, &[vec![2], vec![0], vec![1], vec![5]]);
    assert_eq!(f.permissive().lookup_f64(&[2]).unwrap(), (1.0, true));
    // Duplicates: query 0 finds entry 0 (value 1.0).
    let f = Fixture::new(
        0x04,
        &[10],
        &[&[0], &[0], &[1]],
        &f64s(&[1.0, 2.0, 3.0]),
        true,
    );
    check_agreement(&f, &[vec![0], vec![1], vec![2]]);
    assert_eq!(f.permissive().lookup_f64(&[0]).unwrap(), (1.0, true));

    let mut rng = common::Rng::new(10);
    for _ in 0..300 {
        let rank = 1 + rng.below(3) as usize;
        let shape: Vec<u64> = (0..rank).map(|_| 1 + rng.below(4)).collect();
        let n = rng.below(24) as usize;
        let mut flat = Vec::new();
        for _ in 0..n {
            for &x in &shape {
                // Mostly in bounds; some entries outside the shape.
                flat.push(if rng.below(10) == 0 {
                    x + rng.below(3)
                } else {
                    rng.below(x)
                });
            }
        }
        if rng.below(3) == 0 {
            // Sort some of them, so that the merged batch path runs too.
            let mut e: Vec<Vec<u64>> = flat.chunks(rank).map(|c| c.to_vec()).collect();
            e.sort();
            flat = e.concat();
        }
        let vals: Vec<f64> = (0..n).map(|i| i as f64 + 1.0).collect();
        let f = Fixture {
            tag: 0x04,
            shape: shape.clone(),
            nnz: n as u64,
            sorted: rng.below(2) == 0,
            values: Buf::aligned(&f64s(&vals)),
            indices: Buf::aligned(&le(&flat)),
        };
        // Every coordinate tuple of the shape, from its linear position.
        let total: u64 = shape.iter().product();
        let queries: Vec<Vec<u64>> = (0..total)
            .map(|linear| {
                let mut rest = linear;
                let mut q: Vec<u64> = shape
                    .iter()
                    .rev()
                    .map(|&x| {
                        let c = rest % x;
                        rest /= x;
                        c
                    })
                    .collect();
                q.reverse();
                q
            })
            .collect();
        check_agreement(&f, &queries);
    }
}

/// Every lookup method of a permissive handle, with and without the index,
/// answers the oracle (the lowest entry equal to the query).
fn check_agreement(f: &Fixture, queries: &[Vec<u64>]) {
    let rank = f.shape.len();
    let flat: Vec<u64> = f
        .indices
        .get()
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let vals: Vec<f64> = f
        .values
        .get()
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let oracle = |q: &[u64]| flat.chunks_exact(rank).position(|e| e == q);
    for (index, index_values) in [(false, false), (true, false), (false, true)] {
        let coo = f
            .create(Options {
                copy: false,
                permissive: true,
                index,
                index_values,
                threads: 1,
            })
            .unwrap();
        let mut batch_q = Vec::new();
        for q in queries {
            let want = oracle(q);
            assert_eq!(coo.find(q).unwrap(), want, "find {q:?}, index {index}");
            let v = want.map_or(0.0, |i| vals[i]);
            assert_eq!(coo.lookup_f64(q).unwrap(), (v, want.is_some()), "{q:?}");
            let mut raw = [0u8; 8];
            assert_eq!(coo.lookup(q, &mut raw).unwrap(), want.is_some());
            assert_eq!(f64::from_le_bytes(raw), v);
            batch_q.extend_from_slice(q);
        }
        for threads in [1, 3] {
            let mut out = vec![f64::NAN; queries.len()];
            let mut found = vec![9u8; queries.len()];
            coo.lookup_batch_f64(&batch_q, &mut out, Some(&mut found), threads)
                .unwrap();
            for (k, q) in queries.iter().enumerate() {
                let want = oracle(q);
                assert_eq!(out[k], want.map_or(0.0, |i| vals[i]), "batch {q:?}");
                assert_eq!(found[k], u8::from(want.is_some()));
            }
        }
    }
}
