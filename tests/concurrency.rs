//! Many threads reading one tensor at once (lookups, validation, statistics,
//! descriptor encoding), every answer checked against a HashMap model and
//! the single-threaded results. `Coo` is `Sync`: the compiler checks that
//! sharing it is sound; this checks the answers.

mod common;

use std::collections::HashMap;

use common::{Fixture, Rng};
use hurray_coo::io::descriptor::{encode, encoded_len, StatsChoice};
use hurray_coo::io::stats;

#[test]
fn shared_tensor_reads_agree_across_threads() {
    let mut rng = Rng::new(42);
    let shape = [300u64, 200, 50];
    let mut model: HashMap<Vec<u64>, f64> = HashMap::new();
    let mut entries: Vec<Vec<u64>> = Vec::new();
    while entries.len() < 20_000 {
        let e: Vec<u64> = shape.iter().map(|&x| rng.below(x)).collect();
        if !model.contains_key(&e) {
            model.insert(e.clone(), entries.len() as f64 + 1.0);
            entries.push(e);
        }
    }
    for sorted in [true, false] {
        let mut order = entries.clone();
        if sorted {
            order.sort();
        }
        let refs: Vec<&[u64]> = order.iter().map(|e| &e[..]).collect();
        let vals: Vec<u8> = order
            .iter()
            .flat_map(|e| (model[e] as f32).to_le_bytes())
            .collect();
        let f = Fixture::new(0x03, &shape, &refs, &vals, sorted);
        let coo = f.strict().unwrap();
        let want_stats = stats::compute(&coo);
        let mut want_desc = vec![0u8; encoded_len(3, StatsChoice::Full)];
        encode(&coo, StatsChoice::Full, &mut want_desc).unwrap();
        std::thread::scope(|s| {
            for t in 0..8u64 {
                let (coo, model, want_desc) = (&coo, &model, &want_desc);
                s.spawn(move || {
                    let mut rng = Rng::new(t);
                    let queries = if sorted { 20_000 } else { 300 };
                    for _ in 0..queries {
                        let q: Vec<u64> = shape.iter().map(|&x| rng.below(x)).collect();
                        let want = model.get(&q).map_or((0.0, false), |&v| (v, true));
                        assert_eq!(coo.lookup_f64(&q).unwrap(), want);
                    }
                    for e in model.keys().take(200) {
                        assert_eq!(coo.lookup_f64(e).unwrap(), (model[e], true));
                    }
                    if t % 2 == 0 {
                        coo.validate().unwrap();
                    }
                    assert_eq!(stats::compute(coo), want_stats);
                    let mut d = vec![0u8; want_desc.len()];
                    encode(coo, StatsChoice::Full, &mut d).unwrap();
                    assert_eq!(&d, want_desc);
                });
            }
        });
    }
}

/// Validation on threads finds what one thread finds: the same verdict and
/// the same first violation, on tensors large enough to split (sorted and
/// unsorted, ranks 1 to 3, with a duplicate, an out-of-bounds entry or a
/// disorder planted at random places, including near the cuts).
#[test]
fn threaded_validation_reports_the_same_first_violation() {
    use hurray_coo::{Coo, CooParts, Options};
    let mut state = 0x5eed_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for case in 0..24 {
        let rank = 1 + case % 3;
        let n: usize = 140_000 + (next() % 60_000) as usize;
        let extent = (n as u64 * 4).pow(1) + 7;
        let shape: Vec<u64> = (0..rank).map(|d| if d == 0 { extent } else { 5 }).collect();
        // Distinct entries: entry i at row i (plus noise in other dims).
        let mut idx: Vec<u64> = (0..n as u64)
            .flat_map(|i| {
                let mut e = vec![i * 3];
                e.extend((1..rank).map(|d| (i + d as u64) % 5));
                e
            })
            .collect();
        let sorted = case % 2 == 0;
        if !sorted {
            // A reversal keeps entries distinct but out of order.
            let r = rank;
            let mut rows: Vec<Vec<u64>> = idx.chunks(r).map(|c| c.to_vec()).collect();
            rows.reverse();
            idx = rows.concat();
        }
        let at = match case % 4 {
            0 => n / 2,
            1 => n / 3 + 1,
            2 => n - 1,
            _ => (next() % n as u64) as usize,
        };
        match case % 3 {
            0 => {
                // a duplicate of an earlier entry
                let src = (at / 2) * rank;
                let e: Vec<u64> = idx[src..src + rank].to_vec();
                idx[at * rank..at * rank + rank].copy_from_slice(&e);
            }
            1 => idx[at * rank + rank - 1] = 99, // out of bounds
            _ => {}
        }
        let vals: Vec<u8> = (0..n).flat_map(|i| (i as f64).to_le_bytes()).collect();
        let vbuf = common::Buf::aligned(&vals);
        let ibuf = common::Buf::words(&idx);
        let parts = CooParts {
            type_tag: 0x04,
            shape: &shape,
            nnz: n as u64,
            is_sorted: sorted,
            values: vbuf.get(),
            indices: ibuf.get(),
        };
        let one = Coo::new(parts, Options::default()).err();
        for threads in [2, 3, 4] {
            let many = Coo::new(
                parts,
                Options {
                    threads,
                    ..Options::default()
                },
            )
            .err();
            assert_eq!(many, one, "case {case}, {threads} threads");
        }
    }
}

/// A batch split over threads reports the lowest query outside the shape,
/// numbered in the whole batch, whichever thread met it.
#[test]
fn threaded_batches_report_the_lowest_bad_query() {
    let f = Fixture::seed(); // 4 x 4
    let coo = f.strict().unwrap();
    let n = 20_000;
    let mut queries: Vec<u64> = (0..n as u64).flat_map(|k| [k % 4, (k / 4) % 4]).collect();
    queries[2 * 15_000] = 9;
    queries[2 * 7_000 + 1] = 4;
    let mut out = vec![0.0; n];
    for threads in [1, 2, 4, 5] {
        let e = coo
            .lookup_batch_f64(&queries, &mut out, None, threads)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "query 7000: coordinate 4 in dimension 1 is out of bounds (shape[1] = 4)",
            "{threads} threads"
        );
    }
    queries[2 * 7_000 + 1] = 0;
    queries[2 * 15_000] = 0;
    for threads in [1, 4] {
        coo.lookup_batch_f64(&queries, &mut out, None, threads)
            .unwrap();
        assert_eq!(out[1], 0.0);
    }
}
