//! Property tests against a deliberately simple oracle: random tensors
//! (seeded, reproducible: the failing seed is printed) with injected
//! duplicates, out-of-bounds coordinates and order violations. The library's
//! verdict and first reported violation must match the oracle, and every
//! lookup must match a HashMap.

mod common;

use std::collections::HashMap;

use common::{Fixture, Rng};
use hurray_coo::{CooError, Options, Status};

#[derive(Debug, PartialEq)]
enum Verdict {
    Valid,
    OutOfBounds {
        entry: u64,
        dim: usize,
    },
    Duplicate {
        entry: u64,
        first: u64,
    },
    NotSorted {
        entry: u64,
    },
    /// A float8_e8m0 value that is 0x00 or 0xFF (element-types.md).
    InvalidValue {
        entry: u64,
    },
}

/// The rules, read naively: walk the entries in order; at each entry check
/// bounds, then (sorted) order against the previous entry or (unsorted)
/// equality with every earlier entry.
fn oracle(shape: &[u64], entries: &[Vec<u64>], sorted: bool) -> Verdict {
    for (j, e) in entries.iter().enumerate() {
        if let Some(dim) = (0..shape.len()).find(|&d| e[d] >= shape[d]) {
            return Verdict::OutOfBounds {
                entry: j as u64,
                dim,
            };
        }
        if sorted && j > 0 {
            let p = &entries[j - 1];
            if e == p {
                return Verdict::Duplicate {
                    entry: j as u64,
                    first: j as u64 - 1,
                };
            }
            if e < p {
                return Verdict::NotSorted { entry: j as u64 };
            }
        }
        if !sorted {
            if let Some(i) = (0..j).find(|&i| entries[i] == *e) {
                return Verdict::Duplicate {
                    entry: j as u64,
                    first: i as u64,
                };
            }
        }
    }
    Verdict::Valid
}

fn verdict_of(r: Result<(), CooError>) -> Verdict {
    match r {
        Ok(()) => Verdict::Valid,
        Err(CooError::OutOfBounds { entry, dim, .. }) => Verdict::OutOfBounds { entry, dim },
        Err(CooError::Duplicate { entry, first, .. }) => Verdict::Duplicate { entry, first },
        Err(CooError::NotSorted { entry, .. }) => Verdict::NotSorted { entry },
        Err(CooError::InvalidValue { entry, .. }) => Verdict::InvalidValue { entry },
        Err(e) => panic!("unexpected error {e}"),
    }
}

fn random_case(rng: &mut Rng) -> (Vec<u64>, Vec<Vec<u64>>, bool) {
    let rank = [1usize, 1, 2, 2, 2, 3, 3, 4, 8, 64][rng.below(10) as usize];
    let shape: Vec<u64> = (0..rank)
        .map(|_| match rng.below(20) {
            0 => 0,
            1 => u64::MAX - 1,
            2 => 1 << 40,
            _ => 1 + rng.below(if rank > 4 { 2 } else { 6 }),
        })
        .collect();
    let nnz = rng.below(40) as usize;
    let sorted = rng.below(2) == 0;
    let coord = |rng: &mut Rng, d: usize| -> u64 {
        let x = shape[d];
        if x == 0 || x > 1 << 32 {
            rng.below(8)
        } else {
            rng.below(x)
        }
    };
    let mut entries: Vec<Vec<u64>> = (0..nnz)
        .map(|_| (0..rank).map(|d| coord(rng, d)).collect())
        .collect();
    if sorted {
        entries.sort();
        entries.dedup();
    }
    // Inject violations.
    let n = entries.len();
    if n > 1 {
        match rng.below(6) {
            0 => {
                let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
                entries[a] = entries[b].clone(); // duplicate
            }
            1 => {
                let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
                entries.swap(a, b); // order violation
            }
            2 => {
                let (a, d) = (
                    rng.below(n as u64) as usize,
                    rng.below(rank as u64) as usize,
                );
                entries[a][d] = shape[d].saturating_add(rng.below(3)); // out of bounds
            }
            _ => {}
        }
    }
    (shape, entries, sorted)
}

#[test]
fn verdicts_and_lookups_match_the_oracle() {
    let mut valid = 0;
    let mut invalid = 0;
    for seed in 0..4000u64 {
        let mut rng = Rng::new(seed);
        let (shape, entries, sorted) = random_case(&mut rng);
        let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
        let f = Fixture::f32s(&shape, &refs, sorted);
        let want = oracle(&shape, &entries, sorted);
        let got = verdict_of(f.strict().map(|_| ()));
        assert_eq!(
            got, want,
            "seed {seed}: shape {shape:?} sorted {sorted} entries {entries:?}"
        );
        // validate() on a permissive handle reaches the same verdict (copy
        // mode too).
        for copy in [false, true] {
            let coo = f
                .create(Options {
                    copy,
                    permissive: true,
                    ..Options::default()
                })
                .unwrap();
            assert_eq!(verdict_of(coo.validate()), want, "seed {seed} (permissive)");
        }
        if want != Verdict::Valid {
            invalid += 1;
            continue;
        }
        valid += 1;
        let coo = f.strict().unwrap();
        let model: HashMap<&[u64], f64> = refs
            .iter()
            .enumerate()
            .map(|(i, e)| (*e, i as f64 + 1.0))
            .collect();
        // Every stored entry, and random in-bounds queries (mostly misses).
        let mut queries: Vec<Vec<u64>> = entries.clone();
        if shape.iter().all(|&x| x > 0) {
            for _ in 0..20 {
                queries.push(shape.iter().map(|&x| rng.below(x)).collect());
            }
        }
        for q in &queries {
            let want = model.get(&q[..]).map_or((0.0, false), |&v| (v, true));
            assert_eq!(coo.lookup_f64(q).unwrap(), want, "seed {seed}: query {q:?}");
        }
    }
    // The generator must exercise both outcomes substantially.
    assert!(
        valid > 1000 && invalid > 1000,
        "valid {valid}, invalid {invalid}"
    );
}

#[test]
fn out_of_bounds_queries_are_errors_for_every_dimension() {
    for seed in 0..300u64 {
        let mut rng = Rng::new(seed ^ 0xABCD);
        let (shape, _, _) = random_case(&mut rng);
        let f = Fixture::f32s(&shape, &[], true);
        let coo = f.strict().unwrap();
        let d = rng.below(shape.len() as u64) as usize;
        let mut q: Vec<u64> = shape.iter().map(|&x| x.saturating_sub(1)).collect();
        q[d] = shape[d].saturating_add(rng.below(2));
        if q[d] < shape[d] {
            continue; // shape[d] == u64::MAX - 1 saturates only at u64::MAX
        }
        let e = coo.lookup_f64(&q).unwrap_err();
        assert_eq!(e.status(), Status::IndexOutOfBounds, "seed {seed}");
        // The first offending dimension is reported (a 0 extent offends too).
        let first = (0..shape.len()).find(|&k| q[k] >= shape[k]).unwrap();
        assert!(
            e.to_string().contains(&format!("dimension {first}")),
            "seed {seed}: {e}"
        );
    }
}

/// Packed values for `n` elements of `ty` with per-element patterns, padding
/// zero; and each element's expected lookup bytes.
fn random_values(rng: &mut Rng, ty: &hurray_coo::TypeInfo, n: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    let len = hurray_coo::element::size::values_bytes(ty, n as u64).unwrap() as usize;
    if !ty.is_sub_byte() {
        let v: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let w = ty.lookup_bytes();
        let each = v.chunks(w).map(|c| c.to_vec()).collect();
        return (v, each);
    }
    let mut v = vec![0u8; len];
    let mut each = Vec::new();
    for i in 0..n {
        let p = (rng.next() as u8) & ((1u16 << ty.bits) - 1) as u8;
        for b in 0..ty.bits as usize {
            if p >> b & 1 == 1 {
                let bit = i * ty.bits as usize + b;
                v[bit / 8] |= 1 << (bit % 8);
            }
        }
        each.push(vec![p]);
    }
    (v, each)
}

#[test]
fn every_type_rank_and_padding_matches_the_oracle() {
    let mut checked = [0usize; 3]; // valid, data violation, padding violation
    for seed in 0..3000u64 {
        let mut rng = Rng::new(seed ^ 0x5EED);
        let ty = &hurray_coo::TYPES[rng.below(hurray_coo::TYPES.len() as u64) as usize];
        let rank = if rng.below(10) == 0 {
            64
        } else {
            1 + rng.below(8) as usize
        };
        let shape: Vec<u64> = (0..rank)
            .map(|_| {
                if rank > 8 {
                    1 + rng.below(2)
                } else {
                    1 + rng.below(5)
                }
            })
            .collect();
        let sorted = rng.below(2) == 0;
        let mut entries: Vec<Vec<u64>> = (0..rng.below(24))
            .map(|_| shape.iter().map(|&x| rng.below(x)).collect())
            .collect();
        if sorted {
            entries.sort();
            entries.dedup();
        }
        let n = entries.len();
        if n > 1 && rng.below(3) == 0 {
            let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
            entries[a] = entries[b].clone();
        }
        let (mut values, each) = random_values(&mut rng, ty, n);
        // Inject a padding violation where the type has padding.
        let used = n * ty.bits as usize;
        let pad_bits = values.len() * 8 - used;
        let bad_padding = ty.is_sub_byte() && pad_bits > 0 && rng.below(4) == 0;
        if bad_padding {
            let bit = used + rng.below(pad_bits as u64) as usize;
            values[bit / 8] |= 1 << (bit % 8);
        }
        let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
        let f = Fixture::new(ty.tag, &shape, &refs, &values, sorted);
        let got = f.strict().map(|_| ());
        if bad_padding {
            assert_eq!(
                got.unwrap_err().status(),
                Status::NonzeroPadding,
                "seed {seed}"
            );
            checked[2] += 1;
            continue;
        }
        let mut want = oracle(&shape, &entries, sorted);
        // The value rule, checked once the coordinates pass: float8_e8m0
        // (tag 0x42) forbids the codes 0x00 and 0xFF.
        if want == Verdict::Valid && ty.tag == 0x42 {
            if let Some(j) = values.iter().position(|&b| b == 0x00 || b == 0xFF) {
                want = Verdict::InvalidValue { entry: j as u64 };
            }
        }
        assert_eq!(
            verdict_of(got),
            want,
            "seed {seed}: {} rank {rank}",
            ty.name()
        );
        if want != Verdict::Valid {
            checked[1] += 1;
            continue;
        }
        checked[0] += 1;
        let coo = f.strict().unwrap();
        let model: HashMap<&[u64], &Vec<u8>> = refs.iter().copied().zip(each.iter()).collect();
        for _ in 0..8 {
            let q: Vec<u64> = shape.iter().map(|&x| rng.below(x)).collect();
            let mut out = [0xA5u8; 16];
            let found = coo.lookup(&q, &mut out).unwrap();
            let w = ty.lookup_bytes();
            match model.get(&q[..]) {
                Some(bytes) => assert!(found && out[..w] == bytes[..], "seed {seed}"),
                None => assert!(!found && out[..w].iter().all(|&b| b == 0), "seed {seed}"),
            }
        }
        for (e, bytes) in refs.iter().zip(&each) {
            let mut out = [0u8; 16];
            assert!(coo.lookup(e, &mut out).unwrap());
            assert_eq!(&out[..bytes.len()], &bytes[..], "seed {seed}");
        }
    }
    assert!(
        checked.iter().all(|&c| c > 100),
        "coverage too thin: {checked:?}"
    );
}

#[test]
fn batch_lookups_agree_with_single_lookups() {
    for seed in 0..120u64 {
        let mut rng = Rng::new(seed ^ 0xBA7C);
        let rank = 1 + rng.below(4) as usize;
        let shape: Vec<u64> = (0..rank).map(|_| 1 + rng.below(12)).collect();
        let sorted = rng.below(2) == 0;
        let n = rng.below(300);
        let mut entries = rng.distinct_sorted_entries(&shape, n);
        if !sorted {
            entries.reverse();
        }
        let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
        let f = Fixture::f32s(&shape, &refs, sorted);
        // Seeds in turn: the index (grouped lookups), the index keeping the
        // values, and none (merge or search); empty tensors included.
        let coo = f
            .create(Options {
                index: seed % 3 == 0,
                index_values: seed % 3 == 1,
                ..Options::default()
            })
            .unwrap();
        assert_eq!(coo.index_has_values(), seed % 3 == 1, "seed {seed}");
        let plain = f.strict().unwrap();
        // Up to ~10k queries: enough for 2 threads of 4096 queries each.
        let n = rng.below(10_000) as usize;
        let mut queries: Vec<Vec<u64>> = (0..n)
            .map(|_| shape.iter().map(|&x| rng.below(x)).collect())
            .collect();
        if rng.below(2) == 0 {
            queries.sort(); // exercises the merge path
        }
        let flat: Vec<u64> = queries.concat();
        for threads in [1usize, 3] {
            let mut out = vec![f64::NAN; n];
            let mut found = vec![7u8; n];
            coo.lookup_batch_f64(&flat, &mut out, Some(&mut found), threads)
                .unwrap();
            for (k, q) in queries.iter().enumerate() {
                let (v, hit) = plain.lookup_f64(q).unwrap();
                assert_eq!(
                    (out[k], found[k]),
                    (v, u8::from(hit)),
                    "seed {seed} query {k}"
                );
            }
        }
        // Out-of-bounds queries are reported by number.
        if n > 3 {
            let mut bad = flat.clone();
            bad[2 * rank] = shape[0];
            let mut out = vec![0.0; n];
            let e = coo.lookup_batch_f64(&bad, &mut out, None, 2).unwrap_err();
            assert_eq!(e.status(), Status::IndexOutOfBounds);
            assert!(e.to_string().starts_with("query 2: coordinate"), "{e}");
        }
    }
    // No entries, with the index (keeping values or not): every query is
    // absent.
    let f = Fixture::f32s(&[3, 4], &[], true);
    for values in [false, true] {
        let empty = f
            .create(Options {
                index: true,
                index_values: values,
                ..Options::default()
            })
            .unwrap();
        let (mut out, mut found) = (vec![f64::NAN; 2], vec![7u8; 2]);
        empty
            .lookup_batch_f64(&[1, 2, 0, 0], &mut out, Some(&mut found), 1)
            .unwrap();
        assert_eq!((out, found), (vec![0.0, 0.0], vec![0, 0]));
        assert_eq!(empty.lookup_f64(&[1, 2]).unwrap(), (0.0, false));
    }
}

#[test]
fn hash_index_lookups_equal_the_scan() {
    for seed in 0..300u64 {
        let mut rng = Rng::new(seed ^ 0x4A54);
        let rank = 1 + rng.below(4) as usize;
        // Every third seed has extents so large that an entry's key does
        // not fit the packed table: the verified hash table takes over.
        let wide = seed % 3 == 0;
        let shape: Vec<u64> = (0..rank)
            .map(|_| match wide {
                true => (1 << 62) + rng.below(1 << 40),
                false => 1 + rng.below(10),
            })
            .collect();
        // Coordinates from a small pool per dimension, so that entries repeat
        // and random queries hit.
        let coord = |rng: &mut Rng, x: u64| rng.below(x.min(10)) * (x / x.min(10));
        let entries: Vec<Vec<u64>> = (0..rng.below(400))
            .map(|_| shape.iter().map(|&x| coord(&mut rng, x)).collect())
            .collect();
        // Permissive, duplicates and all: the index must find the first
        // match, as the scan does.
        let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
        let f = Fixture::f32s(&shape, &refs, false);
        let lax = Options {
            permissive: true,
            ..Options::default()
        };
        let scan = f.create(lax).unwrap();
        let indexed = f.create(Options { index: true, ..lax }).unwrap();
        // The values kept in the index are the first entry's of each key.
        let valued = f
            .create(Options {
                index_values: true,
                ..lax
            })
            .unwrap();
        assert!(indexed.has_index() && !scan.has_index() && valued.has_index());
        // Kept for the compact (packed) index, which narrow keys get.
        assert_eq!(valued.index_has_values(), !wide, "seed {seed}");
        assert!(!indexed.index_has_values());
        let n = entries.len().max(1);
        assert!(
            indexed.index_bytes() <= 16 * n + 256,
            "{} bytes",
            indexed.index_bytes()
        );
        assert!(valued.index_bytes() <= 32 * n + 512);
        for _ in 0..200 {
            let q: Vec<u64> = shape.iter().map(|&x| coord(&mut rng, x)).collect();
            assert_eq!(
                indexed.find(&q).unwrap(),
                scan.find(&q).unwrap(),
                "seed {seed}"
            );
            assert_eq!(
                indexed.lookup_f64(&q).unwrap(),
                scan.lookup_f64(&q).unwrap()
            );
            assert_eq!(
                valued.lookup_f64(&q).unwrap(),
                scan.lookup_f64(&q).unwrap(),
                "seed {seed}"
            );
            assert_eq!(valued.find(&q).unwrap(), scan.find(&q).unwrap());
        }
    }
}

#[test]
fn sorted_index_lookups_equal_plain_binary_search() {
    for seed in 0..300u64 {
        let mut rng = Rng::new(seed ^ 0x5045);
        let rank = 1 + rng.below(4) as usize;
        let shape: Vec<u64> = (0..rank).map(|_| 1 + rng.below(12)).collect();
        let n = rng.below(400);
        let entries = rng.distinct_sorted_entries(&shape, n);
        let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
        let f = Fixture::f32s(&shape, &refs, true);
        let plain = f.strict().unwrap();
        let indexed = f
            .create(Options {
                index: true,
                ..Options::default()
            })
            .unwrap();
        assert!(indexed.has_index() && !plain.has_index(), "seed {seed}");
        assert!(
            indexed.index_bytes() <= 16 * entries.len() + 256,
            "seed {seed}"
        );
        for _ in 0..200 {
            let q: Vec<u64> = shape.iter().map(|&x| rng.below(x)).collect();
            assert_eq!(
                indexed.find(&q).unwrap(),
                plain.find(&q).unwrap(),
                "seed {seed}"
            );
        }
        for e in &refs {
            assert_eq!(indexed.lookup_f64(e).unwrap(), plain.lookup_f64(e).unwrap());
        }
    }
    // Extents whose product exceeds 2^64: the verified hash table.
    let f = Fixture::f32s(&[1 << 40, 1 << 40], &[&[5, 1], &[1 << 39, 2]], true);
    let coo = f
        .create(Options {
            index: true,
            ..Options::default()
        })
        .unwrap();
    assert!(coo.has_index());
    assert_eq!(coo.lookup_f64(&[1 << 39, 2]).unwrap(), (2.0, true));
    assert_eq!(coo.lookup_f64(&[1 << 39, 1]).unwrap(), (0.0, false));
}

#[test]
fn values_kept_in_the_index_equal_the_buffer_for_every_type() {
    // Every type: lookup_f64 through the index that keeps the values (as
    // f64) gives the bits a plain lookup gives, NaN payloads included;
    // types with no single double (complex) keep none and still refuse.
    for (t, ty) in hurray_coo::TYPES.iter().enumerate() {
        let mut rng = Rng::new(t as u64 ^ 0x1DE7);
        let shape = [7u64, 9];
        let mut keys: Vec<u64> = (0..63).filter(|_| rng.below(3) == 0).collect();
        keys.reverse();
        let entries: Vec<Vec<u64>> = keys.iter().map(|k| vec![k / 9, k % 9]).collect();
        let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
        let bytes = hurray_coo::element::size::values_bytes(ty, entries.len() as u64).unwrap();
        let mut values: Vec<u8> = (0..bytes).map(|_| rng.below(256) as u8).collect();
        if ty.is_sub_byte() {
            // The padding of the last group must be zero: clear its bytes.
            let tail = values.len().saturating_sub(3);
            values[tail..].fill(0);
        }
        let f = Fixture::new(ty.tag, &shape, &refs, &values, false);
        let lax = Options {
            permissive: true,
            ..Options::default()
        };
        let plain = f.create(lax).unwrap();
        let valued = f
            .create(Options {
                index_values: true,
                ..lax
            })
            .unwrap();
        assert_eq!(valued.index_has_values(), ty.is_real(), "{}", ty.name());
        for a in 0..7 {
            for b in 0..9 {
                match (plain.lookup_f64(&[a, b]), valued.lookup_f64(&[a, b])) {
                    (Ok((x, hx)), Ok((y, hy))) => {
                        assert_eq!(
                            (x.to_bits(), hx),
                            (y.to_bits(), hy),
                            "{} ({a}, {b})",
                            ty.name()
                        )
                    }
                    (Err(x), Err(y)) => assert_eq!(x.status(), y.status()),
                    (x, y) => panic!("{}: {x:?} vs {y:?}", ty.name()),
                }
            }
        }
    }
}

/// A permissive handle that says it is sorted: its lookups (single, batch,
/// merged batch, and from several threads at once, the first of which
/// checks the claim) give the lowest-numbered entry equal to the query,
/// whether the claim holds (then a binary search answers), or the entries
/// are out of order, repeat, or lie outside the shape (then a scan does).
#[test]
fn permissive_handles_that_claim_sorted_agree_with_the_scan_oracle() {
    for seed in 0..160u64 {
        let mut rng = Rng::new(seed ^ 0x50F7);
        let rank = 1 + rng.below(3) as usize;
        let shape: Vec<u64> = (0..rank).map(|_| 1 + rng.below(9)).collect();
        let n = rng.below(200);
        let mut entries = rng.distinct_sorted_entries(&shape, n);
        match seed % 4 {
            0 => {} // the claim holds
            1 if entries.len() > 2 => {
                let mid = entries.len() / 2;
                entries.swap(0, mid);
            }
            2 if !entries.is_empty() => {
                let at = rng.below(entries.len() as u64) as usize;
                let copy = entries[at].clone();
                entries.insert(at, copy); // a repeat, in order
            }
            3 if !entries.is_empty() => {
                let last = entries.len() - 1;
                entries[last][0] = shape[0] + 1; // past the shape, still increasing
            }
            _ => {}
        }
        let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
        let f = Fixture::f32s(&shape, &refs, true);
        let coo = f
            .create(Options {
                permissive: true,
                ..Options::default()
            })
            .unwrap();
        let oracle = |q: &[u64]| entries.iter().position(|e| e == q);
        let mut queries: Vec<Vec<u64>> = (0..300)
            .map(|_| shape.iter().map(|&x| rng.below(x)).collect())
            .collect();
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for q in &queries {
                        assert_eq!(coo.find(q).unwrap(), oracle(q), "seed {seed} {q:?}");
                    }
                });
            }
        });
        queries.sort(); // the merged batch, where the order is trusted
        let flat: Vec<u64> = queries.concat();
        let mut out = vec![f64::NAN; queries.len()];
        let mut found = vec![7u8; queries.len()];
        coo.lookup_batch_f64(&flat, &mut out, Some(&mut found), 1)
            .unwrap();
        for (k, q) in queries.iter().enumerate() {
            let (v, hit) = coo.lookup_f64(q).unwrap();
            assert_eq!(hit, oracle(q).is_some(), "seed {seed} {q:?}");
            assert_eq!((out[k].to_bits(), found[k]), (v.to_bits(), u8::from(hit)));
        }
    }
}

/// A sorted handle without an index builds its search directory on the
/// first lookup that searches, not before (at most 4 bytes per entry and
/// 4 more), and answers as before; an unsorted handle never builds one.
#[test]
fn the_search_directory_is_built_on_first_use() {
    let mut rng = Rng::new(0xD1EC);
    let shape = [300u64, 200];
    let entries = rng.distinct_sorted_entries(&shape, 2000);
    let n = entries.len();
    let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
    let f = Fixture::f32s(&shape, &refs, true);
    let coo = f.strict().unwrap();
    assert_eq!(coo.directory_bytes(), 0, "built before any lookup");
    assert!(coo.lookup_f64(&entries[n / 2]).unwrap().1);
    let bytes = coo.directory_bytes();
    assert!(
        bytes > 0 && bytes <= 4 * (n + 1),
        "{bytes} bytes for {n} entries"
    );
    let mut reversed = refs.clone();
    reversed.reverse();
    let g = Fixture::f32s(&shape, &reversed, false);
    let unsorted = g.strict().unwrap();
    for e in &entries {
        assert!(coo.lookup_f64(e).unwrap().1);
        assert!(unsorted.lookup_f64(e).unwrap().1);
    }
    assert_eq!(
        unsorted.directory_bytes(),
        0,
        "an unsorted handle cannot search"
    );
    assert_eq!(coo.directory_bytes(), bytes, "built once");
}
