//! Benchmarks of the hot operations, with the baselines they are judged
//! against measured in the same run (ratios, not absolute times, are what
//! a noisy machine can support):
//!
//!   cargo bench --bench coo              # ~1M and ~30M non-zeros
//!   cargo bench --bench coo -- --quick   # ~1M only
//!
//! Data is generated deterministically here: a 2D 5-point Poisson matrix
//! (sorted, and randomly permuted), a rank-3 random tensor, a power-law
//! graph. Each timing is the median of several runs.

use std::hint::black_box;
use std::time::{Duration, Instant};

mod common;

use common::{aligned, poisson, powerlaw, random3, Rng};
use hurray_coo::io::stats;
use hurray_coo::{Coo, CooParts, Options};

/// A tensor's buffers, 64-byte aligned.
struct Data {
    name: String,
    id: String,
    shape: Vec<u64>,
    sorted: bool,
    values: Vec<u64>, // f64 bits; Vec<u64> storage, then re-aligned below
    indices: Vec<u64>,
    nnz: usize,
}

impl Data {
    fn entries(
        name: &str,
        shape: Vec<u64>,
        mut entries: Vec<Vec<u64>>,
        sorted: bool,
        rng: &mut Rng,
    ) -> Data {
        if sorted {
            entries.sort_unstable();
            entries.dedup();
        } else {
            entries.sort_unstable();
            entries.dedup();
            for i in (1..entries.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                entries.swap(i, j);
            }
        }
        let nnz = entries.len();
        let indices: Vec<u64> = entries.into_iter().flatten().collect();
        let values: Vec<u64> = (0..nnz).map(|i| (i as f64 * 0.5 + 1.0).to_bits()).collect();
        let short: String = name
            .split_whitespace()
            .next()
            .unwrap_or("data")
            .to_lowercase();
        Data {
            id: format!(
                "{short}_{}_{}",
                if sorted { "sorted" } else { "unsorted" },
                human(nnz)
            ),
            name: format!(
                "{name} ({}{} nnz)",
                if sorted { "sorted, " } else { "unsorted, " },
                human(nnz)
            ),
            shape,
            sorted,
            values,
            indices,
            nnz,
        }
    }
}

fn human(n: usize) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else {
        format!("{}k", n / 1000)
    }
}

fn median(mut f: impl FnMut() -> Duration, reps: usize) -> Duration {
    let mut t: Vec<Duration> = (0..reps).map(|_| f()).collect();
    t.sort();
    t[reps / 2]
}

fn time<T>(f: impl FnOnce() -> T) -> Duration {
    let s = Instant::now();
    black_box(f());
    s.elapsed()
}

struct Row {
    key: &'static str,
    data: String,
    op: String,
    ours: Duration,
    peer: &'static str,
    theirs: Duration,
}

fn report(rows: &[Row]) {
    println!(
        "\n| operation | ours | baseline | baseline time | ours vs baseline |\n|---|---:|---|---:|---:|"
    );
    for r in rows {
        println!(
            "| {} | {:.2} ms | {} | {:.2} ms | {:.2}x |",
            r.op,
            r.ours.as_secs_f64() * 1e3,
            r.peer,
            r.theirs.as_secs_f64() * 1e3,
            r.theirs.as_secs_f64() / r.ours.as_secs_f64()
        );
    }
}

fn bench(d: &Data, rows: &mut Vec<Row>, rng: &mut Rng) {
    let vbuf = aligned(&d.values[..d.nnz]);
    let ibuf = aligned(&d.indices);
    let values: &[u8] = vbuf.get();
    let indices: &[u8] = ibuf.get();
    let idx_u64: &[u64] = bytemuck::cast_slice(indices);
    let parts = CooParts {
        type_tag: 0x04,
        shape: &d.shape,
        nnz: d.nnz as u64,
        is_sorted: d.sorted,
        values,
        indices,
    };
    let reps = if d.nnz > 5_000_000 { 3 } else { 7 };

    // Baseline: one streaming read of the index bytes (the memory-bandwidth
    // limit of any validation).
    let stream = median(
        || time(|| idx_u64.iter().fold(0u64, |a, &x| a.wrapping_add(x))),
        reps,
    );
    let validate = median(
        || time(|| Coo::new(parts, Options::default()).expect("valid")),
        reps,
    );
    rows.push(Row {
        key: "validate",
        data: d.id.clone(),
        op: format!("create+validate, {}", d.name),
        ours: validate,
        peer: "streaming read of the indices",
        theirs: stream,
    });

    if d.sorted {
        // The same ordered entries, passed without is_sorted.
        let unflagged = CooParts {
            is_sorted: false,
            ..parts
        };
        let t = median(
            || time(|| Coo::new(unflagged, Options::default()).unwrap()),
            reps,
        );
        rows.push(Row {
            key: "validate_unflagged",
            data: d.id.clone(),
            op: format!(
                "create+validate, in order but not flagged sorted, {}",
                d.name
            ),
            ours: t,
            peer: "streaming read of the indices",
            theirs: stream,
        });
    }
    let coo = Coo::new(parts, Options::default()).unwrap();
    // Point lookups use the opt-in index (HURRAY_COO_INDEX).
    let with_index = Options {
        index: true,
        ..Options::default()
    };
    let index_build =
        median(|| time(|| Coo::new(parts, with_index).unwrap()), 3).saturating_sub(validate);
    let coo_idx = Coo::new(parts, with_index).unwrap();
    let rank = d.shape.len();
    if let Some(dir) = export_dir() {
        let meta = format!(
            "{} {} {} {}\n",
            rank,
            d.nnz,
            u8::from(d.sorted),
            d.shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        );
        std::fs::write(dir.join(format!("{}.meta", d.id)), meta).unwrap();
        std::fs::write(dir.join(format!("{}.idx", d.id)), bytemuck_bytes(idx_u64)).unwrap();
        std::fs::write(dir.join(format!("{}.val", d.id)), values).unwrap();
    }
    if d.sorted {
        let queries = half_hit_queries(rng, d, idx_u64);
        // One flat array, as the C peers read it (no allocation per query).
        let flat_q: Vec<u64> = queries.concat();
        if let Some(dir) = export_dir() {
            std::fs::write(dir.join(format!("{}.q", d.id)), bytemuck_bytes(&flat_q)).unwrap();
        }
        // Each lookup reads the value, as GraphBLAS extractElement and Eigen
        // coeff do (hurray-core's element_offset only finds the position).
        let ours = time_lookups(&coo_idx, &flat_q, reps);
        let reference = |q: &[u64], sorted: bool| {
            hurray_core::layout::addressing::coo::element_offset(q, sorted, idx_u64)
                .unwrap()
                .is_some()
        };
        let theirs = median(
            || {
                time(|| {
                    flat_q
                        .chunks_exact(rank)
                        .filter(|q| reference(q, true))
                        .count()
                })
            },
            reps,
        );
        let hits_ours = flat_q
            .chunks_exact(rank)
            .filter(|q| coo.find(q).unwrap().is_some())
            .count();
        let hits_ref = flat_q
            .chunks_exact(rank)
            .filter(|q| reference(q, true))
            .count();
        assert_eq!(
            hits_ours, hits_ref,
            "lookup results differ from hurray-core"
        );
        rows.push(Row {
            key: "lookup",
            data: d.id.clone(),
            op: format!(
                "1M point lookups, value read (HURRAY_COO_INDEX, {:.1} bytes/entry, built in {:.1} ms), {}",
                coo_idx.index_bytes() as f64 / d.nnz.max(1) as f64,
                index_build.as_secs_f64() * 1e3,
                d.name
            ),
            ours,
            peer: "hurray-core 0.1.0 element_offset",
            theirs,
        });
        // The same random queries in one batch call on the indexed handle
        // (groups of lookups whose cache misses overlap), 1 thread.
        let mut out_random = vec![0f64; flat_q.len() / rank];
        let batch_random = median(
            || {
                time(|| {
                    coo_idx
                        .lookup_batch_f64(&flat_q, &mut out_random, None, 1)
                        .unwrap()
                })
            },
            reps,
        );
        rows.push(Row {
            key: "batch_random",
            data: d.id.clone(),
            op: format!(
                "1M random queries, one batch call (HURRAY_COO_INDEX), 1 thread, {}",
                d.name
            ),
            ours: batch_random,
            peer: "hurray-core 0.1.0 element_offset",
            theirs,
        });
        // The same queries, sorted, in one batch call (merge), 1 and 2 threads.
        let mut sorted_q = queries.clone();
        sorted_q.sort_unstable();
        let flat: Vec<u64> = sorted_q.concat();
        let mut out = vec![0f64; sorted_q.len()];
        let theirs_sorted = median(
            || {
                time(|| {
                    sorted_q
                        .iter()
                        .filter(|q| {
                            hurray_core::layout::addressing::coo::element_offset(q, true, idx_u64)
                                .unwrap()
                                .is_some()
                        })
                        .count()
                })
            },
            reps,
        );
        for threads in [1usize, 2] {
            let batch = median(
                || {
                    time(|| {
                        coo.lookup_batch_f64(&flat, &mut out, None, threads)
                            .unwrap()
                    })
                },
                reps,
            );
            rows.push(Row {
                key: if threads == 1 { "batch" } else { "batch2" },
                data: d.id.clone(),
                op: format!(
                    "1M sorted queries, one batch call, {threads} thread(s), {}",
                    d.name
                ),
                ours: batch,
                peer: "hurray-core 0.1.0 element_offset",
                theirs: theirs_sorted,
            });
        }
    } else {
        // Unsorted point lookups: a scan each; few queries.
        let queries: Vec<Vec<u64>> = (0..50)
            .map(|_| {
                let i = rng.below(d.nnz as u64) as usize;
                idx_u64[i * rank..(i + 1) * rank].to_vec()
            })
            .collect();
        let ours = median(
            || {
                time(|| {
                    queries
                        .iter()
                        .filter(|q| coo.find(q).unwrap().is_some())
                        .count()
                })
            },
            3,
        );
        let theirs = median(
            || {
                time(|| {
                    queries
                        .iter()
                        .filter(|q| {
                            hurray_core::layout::addressing::coo::element_offset(q, false, idx_u64)
                                .unwrap()
                                .is_some()
                        })
                        .count()
                })
            },
            3,
        );
        rows.push(Row {
            key: "scan50",
            data: d.id.clone(),
            op: format!("50 point lookups (scan), {}", d.name),
            ours,
            peer: "hurray-core 0.1.0 element_offset",
            theirs,
        });
        // The opt-in index (built above): 1M lookups (half hits) against the
        // scan's per-query time.
        let many: Vec<u64> = half_hit_queries(rng, d, idx_u64).concat();
        let fast = time_lookups(&coo_idx, &many, reps);
        rows.push(Row {
            key: "index_lookup",
            data: d.id.clone(),
            op: format!(
                "1M point lookups with HURRAY_COO_INDEX ({:.1} index bytes/entry, built in {:.1} ms), {}",
                coo_idx.index_bytes() as f64 / d.nnz.max(1) as f64,
                index_build.as_secs_f64() * 1e3,
                d.name
            ),
            ours: fast,
            peer: "the same lookups as linear scans (scaled from 50)",
            theirs: ours * 20_000,
        });
    }
    let st = median(|| time(|| stats::compute(&coo)), reps);
    let vals_stream = median(
        || {
            time(|| {
                bytemuck::cast_slice::<u8, u64>(values)
                    .iter()
                    .fold(0f64, |a, &x| a + f64::from_bits(x))
            })
        },
        reps,
    );
    rows.push(Row {
        key: "statistics",
        data: d.id.clone(),
        op: format!("statistics, {}", d.name),
        ours: st,
        peer: "summing the values",
        theirs: vals_stream,
    });
}

/// Median time of `lookup_f64` over every query of `flat` (rank of `coo`),
/// each value read and summed.
fn time_lookups(coo: &Coo<'_>, flat: &[u64], reps: usize) -> Duration {
    let rank = coo.rank() as usize;
    median(
        || {
            time(|| {
                flat.chunks_exact(rank)
                    .map(|q| coo.lookup_f64(q).unwrap().0)
                    .sum::<f64>()
            })
        },
        reps,
    )
}

/// 1M random queries, about half of them stored entries.
fn half_hit_queries(rng: &mut Rng, d: &Data, idx: &[u64]) -> Vec<Vec<u64>> {
    let rank = d.shape.len();
    (0..1_000_000)
        .map(|k| {
            if k % 2 == 0 {
                let i = rng.below(d.nnz as u64) as usize;
                idx[i * rank..(i + 1) * rank].to_vec()
            } else {
                d.shape.iter().map(|&x| rng.below(x)).collect()
            }
        })
        .collect()
}

/// `--export DIR`: also write each dataset and our timings there, for the
/// peer benchmarks in bench/peers/.
fn export_dir() -> Option<std::path::PathBuf> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--export")?;
    let dir = std::path::PathBuf::from(args.get(at + 1)?);
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir)
}

fn bytemuck_bytes(v: &[u64]) -> &[u8] {
    bytemuck::cast_slice(v)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    let mut rows = Vec::new();
    let sizes: &[(u64, usize)] = if quick {
        &[(448, 1_000_000)]
    } else {
        &[(448, 1_000_000), (2450, 30_000_000)]
    };
    for &(grid, nnz) in sizes {
        let n = grid * grid;
        for sorted in [true, false] {
            let d = Data::entries("Poisson 2D", vec![n, n], poisson(grid), sorted, &mut rng);
            eprintln!("running {}", d.name);
            bench(&d, &mut rows, &mut rng);
        }
        let (shape, e) = random3(nnz, &mut rng);
        for sorted in [true, false] {
            let d = Data::entries("random rank-3", shape.clone(), e.clone(), sorted, &mut rng);
            eprintln!("running {}", d.name);
            bench(&d, &mut rows, &mut rng);
        }
        let nodes = (nnz / 8) as u64;
        let e = powerlaw(nodes, nnz, &mut rng);
        for sorted in [true, false] {
            let d = Data::entries(
                "power-law graph",
                vec![nodes, nodes],
                e.clone(),
                sorted,
                &mut rng,
            );
            eprintln!("running {}", d.name);
            bench(&d, &mut rows, &mut rng);
        }
    }
    report(&rows);
    if let Some(dir) = export_dir() {
        let mut tsv = String::new();
        for r in &rows {
            tsv += &format!(
                "ours\t{}\t{}\t{:.4}\n",
                r.key,
                r.data,
                r.ours.as_secs_f64() * 1e3
            );
            let peer = if r.peer.starts_with("hurray-core") {
                "hurray-core"
            } else {
                "baseline"
            };
            tsv += &format!(
                "{peer}\t{}\t{}\t{:.4}\n",
                r.key,
                r.data,
                r.theirs.as_secs_f64() * 1e3
            );
        }
        std::fs::write(dir.join("ours.tsv"), tsv).unwrap();
    }
}
