//! One operation at a time, in a fresh process, for profiling (`perf record`,
//! `valgrind --tool=callgrind`) and for A/B runs of two builds. Not a
//! benchmark of record: `cargo bench --bench coo` and `bench/peers/run.sh`
//! are (see BENCHMARKS.md).
//!
//!   cargo run --release --manifest-path bench/focus/Cargo.toml -- MODE DATA [GRID] [REPS]
//!
//! MODE: unsorted   create+validate the permuted tensor (duplicate detection)
//!       sorted     create+validate the sorted tensor, and the streaming
//!                  reads it is judged against (sum, u64 max, neighbour xor)
//!       lookup     HURRAY_COO_INDEX build, then 1M lookup_f64 (half hits)
//!       batch      the same 1M queries in one lookup_batch_f64 call
//!       ffi        the same 1M lookups through the C ABI
//!                  (hurray_coo_lookup_f64), as a C caller makes them
//!       globalhash the unsorted check against a design without the scatter
//!                  pass (issue 23): one open-addressing table over all
//!                  entries' linear keys, one random probe per entry (no
//!                  bounds checks: a lower bound for that design)
//!       probe      the lookup's memory pattern without the library: one
//!                  random 64-byte line per query, with ~40 and ~160
//!                  instructions per query (how far the CPU overlaps misses)
//! DATA: poisson (5-point, GRID x GRID unknowns), powerlaw, rank3, rank1
//!       (a sparse vector) (about 5 * GRID^2 entries; GRID 448 gives ~1M,
//!       2450 ~30M)

use std::hint::black_box;
use std::time::Instant;

use hurray_coo::{Coo, CooParts, Options};

#[path = "../../../benches/common/mod.rs"]
mod common;
use common::{aligned, poisson, powerlaw, random3, Buf, Rng};

/// A `u64` buffer whose data starts on a 64-byte boundary.
struct Aligned(Buf);
impl Aligned {
    fn new(v: &[u64]) -> Aligned {
        Aligned(aligned(v))
    }
    fn words(&self) -> &[u64] {
        bytemuck::cast_slice(self.0.get())
    }
    fn bytes(&self) -> &[u8] {
        self.0.get()
    }
}

/// The benchmark's datasets (`benches/common`), sized by `grid`.
fn entries(data: &str, grid: u64, rng: &mut Rng) -> (Vec<u64>, Vec<Vec<u64>>) {
    let nnz = (5 * grid * grid) as usize;
    match data {
        "poisson" => (vec![grid * grid; 2], poisson(grid)),
        "powerlaw" => {
            let nodes = (nnz / 8) as u64;
            (vec![nodes, nodes], powerlaw(nodes, nnz, rng))
        }
        "rank3" => random3(nnz, rng),
        "rank1" => {
            // nnz increasing positions, gaps of 1 to 8: a sparse vector.
            let mut at = 0;
            let e = (0..nnz)
                .map(|_| {
                    at += 1 + rng.below(8);
                    vec![at]
                })
                .collect();
            (vec![at + 1], e)
        }
        other => panic!("unknown data {other}: poisson, powerlaw, rank3 or rank1"),
    }
}

fn median(mut f: impl FnMut() -> f64, reps: usize) -> f64 {
    let mut t: Vec<f64> = (0..reps).map(|_| f()).collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("unsorted", String::as_str);
    let data = args.get(2).map_or("poisson", String::as_str);
    let grid: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(448);
    let reps: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(15);
    let mut rng = Rng(42);
    if mode == "probe" {
        return probe(&mut rng, reps);
    }
    let (shape, mut e) = entries(data, grid, &mut rng);
    e.sort_unstable();
    e.dedup();
    let sorted = mode != "unsorted" && mode != "globalhash";
    if !sorted {
        for i in (1..e.len()).rev() {
            e.swap(i, rng.below(i as u64 + 1) as usize);
        }
    }
    let r = shape.len();
    let nnz = e.len();
    let indices = Aligned::new(&e.concat());
    let values = Aligned::new(
        &(0..nnz)
            .map(|i| (i as f64 + 1.0).to_bits())
            .collect::<Vec<u64>>(),
    );
    let parts = CooParts {
        type_tag: 0x04,
        shape: &shape,
        nnz: nnz as u64,
        is_sorted: sorted,
        values: values.bytes(),
        indices: indices.bytes(),
    };
    let words = indices.words();
    println!("{mode} {data}: {nnz} entries, rank {r}");
    match mode {
        "unsorted" | "sorted" => {
            // The first call of the process apart: it alone finds no work
            // space kept by an earlier check.
            let first = ms(|| drop(black_box(Coo::new(parts, Options::default()).unwrap())));
            let v = median(
                || ms(|| drop(black_box(Coo::new(parts, Options::default()).unwrap()))),
                reps,
            );
            println!("  create+validate      {v:8.2} ms (the process's first: {first:.2} ms)");
            if sorted {
                let sum = median(
                    || {
                        ms(|| {
                            black_box(words.iter().fold(0u64, |a, &x| a.wrapping_add(x)));
                        })
                    },
                    reps,
                );
                let max = median(
                    || {
                        ms(|| {
                            black_box(words.iter().fold(0u64, |a, &x| a.max(x)));
                        })
                    },
                    reps,
                );
                let xor = median(
                    || {
                        ms(|| {
                            let (a, b) = (&words[r..], &words[..words.len() - r]);
                            black_box(
                                a.iter()
                                    .zip(b)
                                    .fold(0u64, |s, (&x, &y)| s.wrapping_add(x ^ y)),
                            );
                        })
                    },
                    reps,
                );
                println!(
                    "  streaming sum        {sum:8.2} ms   (validation at {:.2}x of it)",
                    sum / v
                );
                println!("  streaming u64 max    {max:8.2} ms");
                println!("  neighbour xor sum    {xor:8.2} ms");
            }
        }
        "globalhash" => {
            let ours = median(
                || ms(|| drop(black_box(Coo::new(parts, Options::default()).unwrap()))),
                reps,
            );
            let strides: Vec<u64> = (0..r).map(|d| shape[d + 1..].iter().product()).collect();
            let slots = (2 * nnz).next_power_of_two();
            let shift = 64 - slots.trailing_zeros();
            // Keys + 1 (0 marks an empty slot); the first repeat in entry order.
            let insert_all = |table: &mut [u64]| -> Option<usize> {
                for (j, e) in words.chunks_exact(r).enumerate() {
                    let k = e.iter().zip(&strides).map(|(&x, &s)| x * s).sum::<u64>() + 1;
                    let mut at = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize;
                    loop {
                        let t = table[at];
                        if t == 0 {
                            table[at] = k;
                            break;
                        }
                        if t == k {
                            return Some(j);
                        }
                        at = (at + 1) & (slots - 1);
                    }
                }
                None
            };
            let fresh = median(
                || {
                    ms(|| {
                        let mut table = vec![0u64; slots];
                        black_box(insert_all(&mut table));
                    })
                },
                reps,
            );
            let mut kept = vec![0u64; slots];
            let reused = median(
                || {
                    ms(|| {
                        kept.fill(0);
                        black_box(insert_all(&mut kept));
                    })
                },
                reps,
            );
            assert_eq!(insert_all(&mut vec![0u64; slots]), None);
            println!("  create+validate      {ours:8.2} ms (ours: scatter + per-bucket sets)");
            println!(
                "  one global table     {fresh:8.2} ms fresh, {reused:8.2} ms reused \
                 ({} MB, 16 B/entry; its time / ours: {:.2}, {:.2})",
                (slots * 8) >> 20,
                fresh / ours,
                reused / ours
            );
        }
        "lookup" | "batch" | "ffi" => {
            let with_index = Options {
                index: true,
                ..Options::default()
            };
            let build = ms(|| drop(black_box(Coo::new(parts, with_index).unwrap())));
            let coo = Coo::new(parts, with_index).unwrap();
            println!(
                "  create+index         {build:8.2} ms ({} index bytes)",
                coo.index_bytes()
            );
            let q: Vec<u64> = (0..1_000_000)
                .flat_map(|k| {
                    if k % 2 == 0 {
                        let i = rng.below(nnz as u64) as usize;
                        words[i * r..(i + 1) * r].to_vec()
                    } else {
                        shape.iter().map(|&x| rng.below(x)).collect()
                    }
                })
                .collect();
            if mode == "ffi" {
                let mut h: *mut hurray_coo::ffi::hurray_coo = std::ptr::null_mut();
                // SAFETY: every pointer is valid for the lengths given; the
                // buffers outlive the handle, freed below.
                let parts = hurray_coo::ffi::hurray_coo_parts {
                    type_tag: 0x04,
                    rank: r as u32,
                    shape: shape.as_ptr(),
                    nnz: nnz as u64,
                    is_sorted: true,
                    values: values.bytes().as_ptr().cast(),
                    values_bytes: values.bytes().len(),
                    indices: words.as_ptr(),
                    indices_bytes: indices.bytes().len(),
                };
                let options = hurray_coo::ffi::hurray_coo_options {
                    size: std::mem::size_of::<hurray_coo::ffi::hurray_coo_options>(),
                    flags: hurray_coo::ffi::HURRAY_COO_INDEX,
                    threads: 1,
                    release: None,
                    release_ctx: std::ptr::null_mut(),
                    shard_parent_shape: std::ptr::null(),
                    shard_offset: std::ptr::null(),
                };
                let status =
                    unsafe { hurray_coo::ffi::hurray_coo_create(&parts, &options, &mut h) };
                assert_eq!(status, 0);
                let t = median(
                    || {
                        ms(|| {
                            let mut sum = 0.0;
                            for x in q.chunks_exact(r) {
                                let mut v = 0.0;
                                // SAFETY: live handle, `r` coordinates, a valid out-pointer.
                                unsafe {
                                    hurray_coo::ffi::hurray_coo_lookup_f64(
                                        h,
                                        x.as_ptr(),
                                        r as u32,
                                        &mut v,
                                        std::ptr::null_mut(),
                                    )
                                };
                                sum += v;
                            }
                            black_box(sum);
                        })
                    },
                    reps,
                );
                // SAFETY: the handle is live and not used again.
                unsafe { hurray_coo::ffi::hurray_coo_free(h) };
                println!("  1M C-ABI lookups     {t:8.2} ms");
            } else if mode == "lookup" {
                let t = median(
                    || {
                        ms(|| {
                            black_box(
                                q.chunks_exact(r)
                                    .map(|x| coo.lookup_f64(x).unwrap().0)
                                    .sum::<f64>(),
                            );
                        })
                    },
                    reps,
                );
                println!("  1M lookup_f64        {t:8.2} ms");
            } else {
                let mut out = vec![0f64; q.len() / r];
                let t = median(
                    || ms(|| coo.lookup_batch_f64(&q, &mut out, None, 1).unwrap()),
                    reps,
                );
                println!("  1M in one batch      {t:8.2} ms");
            }
        }
        other => panic!("unknown mode {other}"),
    }
}

/// One random 64-byte line of a 12.8 MB table per query (as the lookup
/// index reads), scanned without branches; then the same with ~120 extra
/// instructions per query that do not depend on the load.
fn probe(rng: &mut Rng, reps: usize) {
    let lines = 200_000usize;
    let table: Vec<u64> = (0..lines as u64 * 8)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20)
        .collect();
    let q: Vec<u64> = (0..1_000_000).map(|_| rng.next()).collect();
    let run = |extra: u32| {
        let mut hits = 0u64;
        for &k in &q {
            let h = k.wrapping_mul(0xD6E8_FEB8_6659_FD93);
            let home = ((u128::from(h) * lines as u128) >> 64) as usize;
            let mut junk = k;
            for j in 0..extra {
                junk = junk.rotate_left(7) ^ u64::from(j);
            }
            let tag = h & 0xffff;
            let mut d = u64::MAX;
            for &s in &table[home * 8..home * 8 + 8] {
                d = d.min(s ^ tag);
            }
            hits += u64::from(d < 16) + (junk & 1);
        }
        black_box(hits);
    };
    let light = median(|| ms(|| run(0)), reps);
    let heavy = median(|| ms(|| run(40)), reps);
    println!("probe: 1M random lines, ~40 instructions/query  {light:8.2} ms");
    println!("probe: 1M random lines, ~160 instructions/query {heavy:8.2} ms");
}
