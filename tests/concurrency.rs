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
