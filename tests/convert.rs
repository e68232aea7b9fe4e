//! CSR, CSC and dense export against a map-based oracle, in every index type
//! and base, from sorted, unsorted and permissive handles; and the round
//! trips COO -> CSR/CSC -> COO and COO -> dense -> COO.

mod common;

use std::collections::BTreeMap;

use common::{Fixture, Rng};
use hurray_coo::assemble::{assemble, AssembleOptions, CoordArrays, IndexType, Triplets};
use hurray_coo::convert::{
    compressed_sizes, dense_bytes, export_compressed, export_dense, from_compressed, Format,
};
use hurray_coo::{Coo, Options, Status};

const INDEX_TYPES: [IndexType; 4] = [
    IndexType::I32,
    IndexType::I64,
    IndexType::U32,
    IndexType::U64,
];

fn read_index(t: IndexType, b: &[u8], k: usize) -> u64 {
    let w = t.width();
    let mut v = [0u8; 8];
    v[..w].copy_from_slice(&b[k * w..k * w + w]);
    u64::from_le_bytes(v)
}

/// A random float64 rank-2 tensor: (fixture, entries as a map).
fn random_matrix(rng: &mut Rng) -> (Fixture, BTreeMap<(u64, u64), f64>) {
    let shape = [1 + rng.below(7), 1 + rng.below(7)];
    let n = rng.below(shape[0] * shape[1] + 1);
    let mut entries = rng.distinct_sorted_entries(&shape, n);
    let sorted = rng.below(2) == 0;
    if !sorted {
        // Shuffle.
        for i in (1..entries.len()).rev() {
            entries.swap(i, rng.below(i as u64 + 1) as usize);
        }
    }
    let vals: Vec<f64> = (0..entries.len()).map(|i| i as f64 + 0.25).collect();
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let refs: Vec<&[u64]> = entries.iter().map(|e| e.as_slice()).collect();
    let map = entries
        .iter()
        .zip(&vals)
        .map(|(e, &v)| ((e[0], e[1]), v))
        .collect();
    (Fixture::new(0x04, &shape, &refs, &bytes, sorted), map)
}

#[test]
fn csr_and_csc_match_the_oracle_in_every_index_type_and_base() {
    let mut rng = Rng::new(21);
    for round in 0..400 {
        let (f, map) = random_matrix(&mut rng);
        let permissive = rng.below(3) == 0;
        let coo = f
            .create(Options {
                permissive,
                ..Options::default()
            })
            .unwrap();
        for format in [Format::Csr, Format::Csc] {
            for it in INDEX_TYPES {
                for base in [0u8, 1] {
                    let s = compressed_sizes(&coo, format, it).unwrap();
                    let (mut off, mut idx, mut val) = (
                        vec![0xAAu8; s.offsets as usize],
                        vec![0xAAu8; s.indices as usize],
                        vec![0xAAu8; s.values as usize],
                    );
                    export_compressed(
                        &coo,
                        format,
                        it,
                        base,
                        &mut off,
                        &mut idx,
                        &mut val,
                        1 + round % 3,
                    )
                    .unwrap();
                    // Oracle: entries grouped by major index, minor ascending.
                    let (rows, cols) = (f.shape[0], f.shape[1]);
                    let majors = if format == Format::Csr { rows } else { cols };
                    let mut expect: Vec<(u64, u64, f64)> = map
                        .iter()
                        .map(|(&(r, c), &v)| {
                            if format == Format::Csr {
                                (r, c, v)
                            } else {
                                (c, r, v)
                            }
                        })
                        .collect();
                    expect.sort_by_key(|e| (e.0, e.1));
                    let b = u64::from(base);
                    let mut k = 0;
                    for m in 0..majors {
                        assert_eq!(
                            read_index(it, &off, m as usize),
                            k as u64 + b,
                            "round {round}"
                        );
                        while k < expect.len() && expect[k].0 == m {
                            assert_eq!(read_index(it, &idx, k), expect[k].1 + b);
                            let v = f64::from_le_bytes(val[k * 8..k * 8 + 8].try_into().unwrap());
                            assert_eq!(v, expect[k].2);
                            k += 1;
                        }
                    }
                    assert_eq!(
                        read_index(it, &off, majors as usize),
                        expect.len() as u64 + b
                    );
                    // And back: the same entries, canonical.
                    let back =
                        from_compressed(format, [rows, cols], it, base, &off, &idx, 0x04, &val, 2)
                            .unwrap();
                    assert_same_entries(&back, &map);
                }
            }
        }
        // Dense, and back through assembly of its non-zeros.
        let mut dense = vec![0xAAu8; dense_bytes(&coo).unwrap() as usize];
        export_dense(&coo, &mut dense, 1 + round % 3).unwrap();
        let cols = f.shape[1];
        for (i, chunk) in dense.chunks_exact(8).enumerate() {
            let v = f64::from_le_bytes(chunk.try_into().unwrap());
            let key = (i as u64 / cols, i as u64 % cols);
            assert_eq!(
                v,
                map.get(&key).copied().unwrap_or(0.0),
                "round {round} dense {key:?}"
            );
        }
        let (mut coords, mut vals) = (Vec::new(), Vec::new());
        for (i, chunk) in dense.chunks_exact(8).enumerate() {
            if f64::from_le_bytes(chunk.try_into().unwrap()) != 0.0 {
                coords.extend_from_slice(&[i as u64 / cols, i as u64 % cols]);
                vals.extend_from_slice(chunk);
            }
        }
        let idx: Vec<u8> = coords.iter().flat_map(|c| c.to_le_bytes()).collect();
        let t = Triplets {
            shape: &f.shape,
            n: vals.len() / 8,
            index_type: IndexType::U64,
            base: 0,
            coords: CoordArrays::Interleaved(&idx),
            type_tag: 0x04,
            values: Some(&vals),
        };
        let (back, _) = assemble(&t, &AssembleOptions::default()).unwrap();
        let nonzero: BTreeMap<(u64, u64), f64> = map
            .iter()
            .filter(|(_, &v)| v != 0.0)
            .map(|(&k, &v)| (k, v))
            .collect();
        assert_same_entries(&back, &nonzero);
    }
}

fn assert_same_entries(coo: &Coo<'_>, map: &BTreeMap<(u64, u64), f64>) {
    assert_eq!(coo.nnz() as usize, map.len());
    assert!(coo.is_sorted());
    for (k, (&(r, c), &v)) in map.iter().enumerate() {
        assert_eq!(coo.entry(k), &[r, c]);
        assert_eq!(coo.lookup_f64(&[r, c]).unwrap(), (v, true));
    }
}

#[test]
fn a_32_bit_index_that_would_wrap_is_an_error() {
    let x = (1u64 << 31) + 5;
    let vals: Vec<u8> = 1.0f64.to_le_bytes().to_vec();
    let f = Fixture::new(0x04, &[2, x], &[&[1, x - 1]], &vals, true);
    let coo = f.strict().unwrap();
    let s = compressed_sizes(&coo, Format::Csr, IndexType::I32).unwrap();
    let (mut off, mut idx, mut val) = (
        vec![0u8; s.offsets as usize],
        vec![0u8; s.indices as usize],
        vec![0u8; 8],
    );
    let e = export_compressed(
        &coo,
        Format::Csr,
        IndexType::I32,
        0,
        &mut off,
        &mut idx,
        &mut val,
        1,
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::Overflow);
    assert!(
        e.to_string()
            .contains("CSR indices up to 2147483652 as int32"),
        "{e}"
    );
    // uint32 holds it.
    export_compressed(
        &coo,
        Format::Csr,
        IndexType::U32,
        0,
        &mut off,
        &mut idx,
        &mut val,
        2,
    )
    .unwrap();
    assert_eq!(read_index(IndexType::U32, &idx, 0), x - 1);
    // CSC of the same: 2^31 + 6 offsets fit int64 only in memory terms; the
    // sizes are reported, not allocated here.
    let s = compressed_sizes(&coo, Format::Csc, IndexType::I64).unwrap();
    assert_eq!(s.offsets, (x + 1) * 8);
}

#[test]
fn malformed_compressed_arrays_are_refused_with_the_place() {
    let i32s = |v: &[i32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let vals: Vec<u8> = [1.0f64, 2.0, 3.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let ok = from_compressed(
        Format::Csr,
        [2, 3],
        IndexType::I32,
        0,
        &i32s(&[0, 2, 3]),
        &i32s(&[2, 0, 1]),
        0x04,
        &vals,
        1,
    )
    .unwrap();
    assert_eq!(ok.indices(), &[0, 0, 0, 2, 1, 1]);
    let cases: [(Vec<u8>, Vec<u8>, Status, &str); 6] = [
        // An offset past the indices inside the array (the last one is
        // right): refused, naming the row, not a panic.
        (
            i32s(&[0, 5, 3]),
            i32s(&[0, 1, 2]),
            Status::InvalidOffsets,
            "row 0: offsets[1] = 5 is past the end of the 3 indices",
        ),
        (
            i32s(&[0, i32::MAX, 3]),
            i32s(&[0, 1, 2]),
            Status::InvalidOffsets,
            "row 0: offsets[1] = 2147483647 is past the end",
        ),
        (
            i32s(&[1, 2, 3]),
            i32s(&[0, 1, 2]),
            Status::InvalidOffsets,
            "not the base 0",
        ),
        (
            i32s(&[0, 2, 2]),
            i32s(&[0, 1, 2]),
            Status::InvalidOffsets,
            "last offset is 2 but there are 3 indices",
        ),
        (
            i32s(&[0, 3, 3]),
            i32s(&[0, 1, 1]),
            Status::Duplicate,
            "triplet 2 duplicates triplet 1 at (0, 1)",
        ),
        (
            i32s(&[0, 1, 3]),
            i32s(&[0, 1, 3]),
            Status::IndexOutOfBounds,
            "coordinate 3 in dimension 1",
        ),
    ];
    for (off, idx, status, needle) in cases {
        let e = from_compressed(
            Format::Csr,
            [2, 3],
            IndexType::I32,
            0,
            &off,
            &idx,
            0x04,
            &vals,
            1,
        )
        .unwrap_err();
        assert_eq!(e.status(), status, "{e}");
        assert!(e.to_string().contains(needle), "{e} lacks {needle}");
    }
}

#[test]
fn mode_orders_sort_a_copy_and_keep_every_entry() {
    let mut rng = Rng::new(33);
    for _ in 0..100 {
        let shape = [1 + rng.below(4), 1 + rng.below(4), 1 + rng.below(4)];
        let n = rng.below(20);
        let entries = rng.distinct_sorted_entries(&shape, n);
        let vals: Vec<u8> = (0..entries.len())
            .flat_map(|i| (i as f64).to_le_bytes())
            .collect();
        let refs: Vec<&[u64]> = entries.iter().map(|e| e.as_slice()).collect();
        let f = Fixture::new(0x04, &shape, &refs, &vals, true);
        let coo = f.strict().unwrap();
        for modes in [[0u32, 1, 2], [2, 0, 1], [1, 2, 0], [2, 1, 0]] {
            let sorted = hurray_coo::convert::sort_by_modes(&coo, &modes, 2).unwrap();
            assert_eq!(sorted.nnz(), coo.nnz());
            assert_eq!(sorted.is_sorted(), modes == [0, 1, 2]);
            let key = |e: &[u64]| modes.iter().map(|&m| e[m as usize]).collect::<Vec<_>>();
            for k in 1..sorted.nnz() as usize {
                assert!(key(sorted.entry(k - 1)) < key(sorted.entry(k)), "{modes:?}");
            }
            for (i, e) in entries.iter().enumerate() {
                assert_eq!(sorted.lookup_f64(e).unwrap(), (i as f64, true));
            }
        }
        for bad in [&[0u32, 1][..], &[0, 0, 1], &[0, 1, 3]] {
            let e = hurray_coo::convert::sort_by_modes(&coo, bad, 1).unwrap_err();
            assert_eq!(e.status(), Status::InvalidArgument);
        }
    }
}

#[test]
fn threaded_export_writes_what_one_thread_writes() {
    let mut rng = Rng::new(77);
    let shape = [700u64, 900];
    let entries = rng.distinct_sorted_entries(&shape, 200_000);
    let vals: Vec<u8> = (0..entries.len())
        .flat_map(|i| (i as f64).to_le_bytes())
        .collect();
    let mut shuffled: Vec<&[u64]> = entries.iter().map(|e| e.as_slice()).collect();
    let sorted = Fixture::new(0x04, &shape, &shuffled, &vals, true);
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let unsorted = Fixture::new(0x04, &shape, &shuffled, &vals, false);
    for f in [&sorted, &unsorted] {
        let coo = f.strict().unwrap();
        for format in [Format::Csr, Format::Csc] {
            let s = compressed_sizes(&coo, format, IndexType::I64).unwrap();
            let mut bufs = Vec::new();
            for threads in [1usize, 2, 5] {
                let (mut o, mut i, mut v) = (
                    vec![0u8; s.offsets as usize],
                    vec![0u8; s.indices as usize],
                    vec![0u8; s.values as usize],
                );
                export_compressed(
                    &coo,
                    format,
                    IndexType::I64,
                    1,
                    &mut o,
                    &mut i,
                    &mut v,
                    threads,
                )
                .unwrap();
                bufs.push((o, i, v));
            }
            assert!(bufs.windows(2).all(|w| w[0] == w[1]), "{format:?}");
        }
    }
}

/// A sorted export of 2.8M entries (several ranges per thread count), with
/// runs of empty rows at the start, in the middle and at the end, rows that
/// straddle the split between threads, and splits that fall where a row
/// starts: every index type and base, one to three threads, against offsets
/// counted row by row.
#[test]
fn a_large_sorted_export_has_every_offset_and_column_right() {
    let mut rng = Rng::new(2112);
    let (rows, cols) = (700_000u64, 1_000_000u64);
    let mut flat = Vec::new();
    for r in 0..rows {
        let empty = r < 100 || (300_000..300_500).contains(&r) || r >= rows - 1000;
        let n = if empty { 0 } else { rng.below(9) };
        // n distinct columns, increasing, spread over the whole width.
        for j in 0..n {
            let step = cols / n;
            flat.extend_from_slice(&[r, j * step + rng.below(step)]);
        }
    }
    check_sorted_csr(rows, cols, &flat);
    // One entry in every other row: every split between threads falls where
    // a row starts, after an empty row.
    let flat: Vec<u64> = (0..200_000u64).flat_map(|k| [2 * k + 1, k % 7]).collect();
    check_sorted_csr(400_002, 7, &flat);
}

/// The sorted CSR export of the (row, column) pairs `flat` against offsets
/// counted row by row.
fn check_sorted_csr(rows: u64, cols: u64, flat: &[u64]) {
    let nnz = flat.len() / 2;
    let mut per_row = vec![0u64; rows as usize];
    for pair in flat.chunks_exact(2) {
        per_row[pair[0] as usize] += 1;
    }
    let vals: Vec<u8> = (0..nnz).flat_map(|i| (i as f64).to_le_bytes()).collect();
    let f = Fixture {
        tag: 0x04,
        shape: vec![rows, cols],
        nnz: nnz as u64,
        sorted: true,
        values: common::Buf::aligned(&vals),
        indices: common::Buf::words(flat),
    };
    let coo = f.strict().unwrap();
    for it in INDEX_TYPES {
        for base in [0u8, 1] {
            // Two threads everywhere; one and three threads for int32 (one
            // range; splits elsewhere).
            let counts: &[usize] = if it == IndexType::I32 {
                &[1, 2, 3]
            } else {
                &[2]
            };
            for &threads in counts {
                let s = compressed_sizes(&coo, Format::Csr, it).unwrap();
                // u64 backing: aligned for every index type, so the fast
                // path is the one taken.
                let words = |b: u64| vec![0xAAAA_AAAA_AAAA_AAAAu64; (b as usize).div_ceil(8)];
                let (mut o, mut i, mut v) = (words(s.offsets), words(s.indices), words(s.values));
                fn bytes(w: &mut [u64], b: u64) -> &mut [u8] {
                    &mut bytemuck::cast_slice_mut::<u64, u8>(w)[..b as usize]
                }
                export_compressed(
                    &coo,
                    Format::Csr,
                    it,
                    base,
                    bytes(&mut o, s.offsets),
                    bytes(&mut i, s.indices),
                    bytes(&mut v, s.values),
                    threads,
                )
                .unwrap();
                let (ob, ib) = (
                    bytemuck::cast_slice::<u64, u8>(&o),
                    bytemuck::cast_slice::<u64, u8>(&i),
                );
                let b = u64::from(base);
                let mut start = 0u64;
                for r in 0..=rows as usize {
                    assert_eq!(
                        read_index(it, ob, r),
                        start + b,
                        "offset of row {r}, {it:?} base {base}, {threads} threads"
                    );
                    start += per_row.get(r).copied().unwrap_or(0);
                }
                for k in 0..nnz {
                    assert_eq!(
                        read_index(it, ib, k),
                        flat[2 * k + 1] + b,
                        "column of entry {k}, {it:?} base {base}, {threads} threads"
                    );
                }
                assert_eq!(
                    &bytemuck::cast_slice::<u64, u8>(&v)[..vals.len()],
                    &vals[..]
                );
            }
        }
    }
}

/// Large enough for several threads: dense export, mode sorts and CSR import
/// give what one thread gives.
#[test]
fn threaded_dense_mode_sort_and_import_match_one_thread() {
    let mut rng = Rng::new(88);
    let shape = [600u64, 700];
    let entries = rng.distinct_sorted_entries(&shape, 150_000);
    let vals: Vec<u8> = (0..entries.len())
        .flat_map(|i| (i as f64 + 0.5).to_le_bytes())
        .collect();
    let refs: Vec<&[u64]> = entries.iter().map(|e| e.as_slice()).collect();
    let f = Fixture::new(0x04, &shape, &refs, &vals, true);
    let coo = f.strict().unwrap();
    let size = dense_bytes(&coo).unwrap() as usize;
    let dense: Vec<Vec<u8>> = [1usize, 2, 3]
        .iter()
        .map(|&t| {
            let mut d = vec![0xAAu8; size];
            export_dense(&coo, &mut d, t).unwrap();
            d
        })
        .collect();
    assert!(dense.windows(2).all(|w| w[0] == w[1]));
    let sorted: Vec<Vec<u64>> = [1usize, 2, 4]
        .iter()
        .map(|&t| {
            hurray_coo::convert::sort_by_modes(&coo, &[1, 0], t)
                .unwrap()
                .indices()
                .to_vec()
        })
        .collect();
    assert!(sorted.windows(2).all(|w| w[0] == w[1]));
    let s = compressed_sizes(&coo, Format::Csc, IndexType::I64).unwrap();
    let (mut o, mut i, mut v) = (
        vec![0u8; s.offsets as usize],
        vec![0u8; s.indices as usize],
        vec![0u8; s.values as usize],
    );
    export_compressed(
        &coo,
        Format::Csc,
        IndexType::I64,
        0,
        &mut o,
        &mut i,
        &mut v,
        2,
    )
    .unwrap();
    for t in [1usize, 3] {
        let back =
            from_compressed(Format::Csc, shape, IndexType::I64, 0, &o, &i, 0x04, &v, t).unwrap();
        assert_eq!(back.indices(), coo.indices());
        assert_eq!(back.values(), coo.values());
    }
}

#[test]
fn unsigned_indices_past_2_pow_63_read_back() {
    // A column past 2^63 in a uint64 CSR import keeps its value (it was
    // once taken through int64 and refused as negative).
    let u64s = |v: &[u64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let col = (1u64 << 63) + 5;
    let vals = 2.5f64.to_le_bytes();
    let coo = from_compressed(
        Format::Csr,
        [2, u64::MAX - 1],
        IndexType::U64,
        0,
        &u64s(&[0, 0, 1]),
        &u64s(&[col]),
        0x04,
        &vals,
        1,
    )
    .unwrap();
    assert_eq!(coo.indices(), &[1, col]);
}
