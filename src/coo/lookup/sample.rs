//! Test data for the lookup paths (tests only): random sorted float64
//! tensors whose entries are known, and the queries worth asking of them.

use std::collections::BTreeMap;

/// A xorshift step: the tests' reproducible random numbers.
pub(crate) fn rng(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// How a sample's extents are drawn.
pub(crate) struct Draw {
    /// At most this many entries are drawn (then sorted, repeats dropped).
    pub most: u64,
    /// A huge shape has extents of about `2^(huge_bits / rank)`.
    pub huge_bits: u32,
    /// A crowded shape has this extent in every dimension.
    pub crowded: u64,
}

/// A sorted float64 tensor, its entries as a map, and queries.
pub(crate) struct Sorted {
    pub shape: Vec<u64>,
    /// Coordinates, entry after entry, in order.
    pub idx: Vec<u64>,
    pub vals: Vec<f64>,
    pub map: BTreeMap<Vec<u64>, f64>,
    /// Every entry, then each entry's two neighbouring positions and a
    /// random position.
    pub queries: Vec<Vec<u64>>,
}

impl Draw {
    /// A tensor of `rank` of one `kind`: 0 small extents, 1 wide (about
    /// 3,000), 2 huge, 3 crowded (half of the entries in one dense row, so
    /// its bucket is long).
    pub(crate) fn sorted(&self, rank: usize, kind: usize, seed: &mut u64) -> Sorted {
        let shape: Vec<u64> = (0..rank)
            .map(|_| match kind {
                0 => 1 + rng(seed) % 40,
                1 => 3000 + rng(seed) % 500,
                2 => (1u64 << (self.huge_bits / rank as u32)) - rng(seed) % 5,
                _ => self.crowded,
            })
            .collect();
        let elements: u64 = shape.iter().product();
        let n = 1 + rng(seed) % self.most;
        let mut keys: Vec<u64> = (0..n)
            .map(|i| match (kind, i % 2) {
                (3, 0) if rank > 1 => 7 * shape[rank - 1] + i / 2 % shape[rank - 1], // row 7, dense
                _ => rng(seed) % elements,
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let coords = |mut k: u64| -> Vec<u64> {
            let mut c = vec![0; rank];
            for d in (0..rank).rev() {
                c[d] = k % shape[d];
                k /= shape[d];
            }
            c
        };
        let idx: Vec<u64> = keys.iter().flat_map(|&k| coords(k)).collect();
        let vals: Vec<f64> = (0..keys.len()).map(|i| 0.5 + i as f64).collect();
        let map: BTreeMap<Vec<u64>, f64> = keys
            .iter()
            .zip(&vals)
            .map(|(&k, &v)| (coords(k), v))
            .collect();
        let mut queries: Vec<Vec<u64>> = keys.iter().map(|&k| coords(k)).collect();
        for k in &keys {
            queries.push(coords((k + 1) % elements));
            queries.push(coords(k.saturating_sub(1)));
            queries.push(coords(rng(seed) % elements));
        }
        Sorted {
            shape,
            idx,
            vals,
            map,
            queries,
        }
    }
}
