//! Data shared by the benchmark (`benches/coo.rs`) and the profiling
//! harness (`bench/focus`): a deterministic generator, the generated
//! tensors, and 64-byte-aligned buffers.

#[path = "../../tests/common/data.rs"]
mod data;
pub use data::{Buf, Rng};

/// `v` in a buffer whose data starts on a 64-byte boundary.
pub fn aligned(v: &[u64]) -> Buf {
    Buf::words(v)
}

/// The 5-point Laplacian on an `n` x `n` grid: an `n^2` x `n^2` matrix, about
/// `5 n^2` entries, in row order.
pub fn poisson(n: u64) -> Vec<Vec<u64>> {
    let mut e = Vec::with_capacity((5 * n * n) as usize);
    for i in 0..n {
        for j in 0..n {
            let row = i * n + j;
            for (di, dj) in [(0i64, 0i64), (-1, 0), (1, 0), (0, -1), (0, 1)] {
                let (a, b) = (i as i64 + di, j as i64 + dj);
                if a >= 0 && b >= 0 && a < n as i64 && b < n as i64 {
                    e.push(vec![row, a as u64 * n + b as u64]);
                }
            }
        }
    }
    e
}

/// `nnz` uniformly random coordinates in a 2000^3 tensor (repeats possible).
pub fn random3(nnz: usize, rng: &mut Rng) -> (Vec<u64>, Vec<Vec<u64>>) {
    let shape = vec![2000u64, 2000, 2000];
    let e = (0..nnz)
        .map(|_| shape.iter().map(|&x| rng.below(x)).collect())
        .collect();
    (shape, e)
}

/// `edges` edges of a graph on `nodes` nodes whose endpoints cluster on few
/// hubs (repeats possible).
pub fn powerlaw(nodes: u64, edges: usize, rng: &mut Rng) -> Vec<Vec<u64>> {
    (0..edges)
        .map(|_| {
            // Skewed endpoints: many edges touch few hubs.
            let u = rng.next() as f64 / u64::MAX as f64;
            let v = rng.next() as f64 / u64::MAX as f64;
            vec![
                (nodes as f64 * u.powi(3)) as u64 % nodes,
                (nodes as f64 * v.powi(2)) as u64 % nodes,
            ]
        })
        .collect()
}
