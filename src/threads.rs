//! Threads: what every `threads` argument of the library means, and the one
//! way a bulk operation runs on them.
//!
//! 0 and 1 work on the calling thread. n > 1 asks for up to n threads (at
//! most [`MAX_THREADS`]; a larger n is read as `MAX_THREADS`): the calling
//! thread and threads the library keeps between calls ([`crew`]), every
//! part ended when the call returns; an operation uses fewer when its work is small
//! ([`count`]) or when more would not help (a sort merges at most
//! [`MAX_SORT_RUNS`] runs), and its result is the same for any number. A thread that
//! cannot be started is no error: its part runs on the calling thread. A
//! panic on a thread continues on the calling thread (the C boundary turns
//! it into `HURRAY_ERR_INTERNAL_PANIC`).

use std::sync::Mutex;

mod crew;

/// Tests set this to make every spawn fail, as a process at its thread
/// limit sees it.
#[cfg(test)]
static REFUSE_SPAWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether spawning is refused (only ever in tests).
fn spawn_refused() -> bool {
    #[cfg(test)]
    return REFUSE_SPAWN.load(std::sync::atomic::Ordering::SeqCst);
    #[cfg(not(test))]
    false
}

/// The most threads one call starts.
pub const MAX_THREADS: usize = 64;

/// The most runs a threaded sort cuts its input into (their merge scans
/// the runs' heads, so more runs would cost more than they save).
pub const MAX_SORT_RUNS: usize = 16;

/// How many threads an operation over `items` items uses when `requested`
/// were asked for: each gets at least `per_thread` items (below that a
/// thread costs more than it saves), and there is at least one.
pub fn count(requested: usize, items: usize, per_thread: usize) -> usize {
    requested
        .clamp(1, MAX_THREADS)
        .min(items / per_thread.max(1))
        .max(1)
}

/// `job(k, part)` for each of `parts` (the k-th part), each on a thread of
/// its own (part 0 on the calling thread), the results in part order.
///
/// Only the part hand-over is generic; handing parts to kept threads,
/// waiting for them and running a part no thread took happen in
/// `crew::run_parts`, one copy for
/// the whole library (the assembly kernels instantiate `run` per element
/// type, coordinate reader and output, and the standard library's thread
/// machinery copied into each made up a quarter of the release build's
/// code).
pub fn run<P: Send, R: Send>(parts: Vec<P>, job: impl Fn(usize, P) -> R + Sync) -> Vec<R> {
    let n = parts.len();
    if n <= 1 {
        return parts
            .into_iter()
            .enumerate()
            .map(|(k, p)| job(k, p))
            .collect();
    }
    // Each part waits in a slot and its result in another: whichever
    // thread runs part k (its own, or the caller when it could not start)
    // takes the part and leaves the result.
    let slots: Vec<Mutex<Option<P>>> = parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
    let results: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let work = |k: usize| {
        let part = slots[k].lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(p) = part {
            let r = job(k, p);
            *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        }
    };
    crew::run_parts(n, &work);
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every part runs exactly once")
        })
        .collect()
}

/// `job(k)` for k in `0..threads`, as [`run`] runs parts.
pub fn each<R: Send>(threads: usize, job: impl Fn(usize) -> R + Sync) -> Vec<R> {
    run((0..threads).collect(), |k, _| job(k))
}

/// A prefix sum's value as a position: row starts of an assembly's
/// buckets (`usize`) or of a CSR array (`u64`, positions in memory).
pub(crate) trait Start: Copy {
    fn at(self) -> usize;
}

impl Start for usize {
    fn at(self) -> usize {
        self
    }
}

impl Start for u64 {
    fn at(self) -> usize {
        self as usize
    }
}

/// Row ranges of about equal shares of the items, one per thread: the first
/// row of each, then the row count (`start`: each row's first item, and the
/// total last).
pub(crate) fn row_cuts<S: Start>(start: &[S], threads: usize) -> Vec<usize> {
    let rows = start.len() - 1;
    let total = start[rows].at();
    let mut cuts = vec![0usize];
    for k in 1..threads {
        let goal = total * k / threads;
        cuts.push(
            start
                .partition_point(|&s| s.at() < goal)
                .min(rows)
                .max(cuts[k - 1]),
        );
    }
    cuts.push(rows);
    cuts
}

/// `dst` becomes a copy of `src` (of the same length), in parts on up to
/// `threads` threads: a copy into fresh pages is bounded by their first
/// touch, which each thread then takes for its own part.
pub(crate) fn copy<T: Copy + Send + Sync>(dst: &mut [T], src: &[T], threads: usize) {
    let threads = count(threads, src.len(), 1 << 16);
    let part = src.len().div_ceil(threads).max(1);
    let parts: Vec<_> = dst.chunks_mut(part).zip(src.chunks(part)).collect();
    run(parts, |_, (d, s): (&mut [T], &[T])| d.copy_from_slice(s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_says_the_same_bounds() {
        assert_eq!(MAX_THREADS, crate::ffi::HURRAY_MAX_THREADS as usize);
        assert_eq!(crate::element::size::MAX_RANK, crate::ffi::HURRAY_MAX_RANK);
    }

    #[test]
    fn counts_mean_the_same_everywhere() {
        assert_eq!(count(0, 1 << 30, 1), 1);
        assert_eq!(count(1, 1 << 30, 1), 1);
        assert_eq!(count(8, 1 << 30, 1), 8);
        assert_eq!(count(1000, 1 << 30, 1), MAX_THREADS);
        assert_eq!(count(8, 3 << 16, 1 << 16), 3);
        assert_eq!(count(8, (3 << 16) - 1, 1 << 16), 2);
        assert_eq!(count(8, 0, 1 << 16), 1);
    }

    #[test]
    fn every_part_runs_once_in_order() {
        let mut data: Vec<u32> = (0..1000).collect();
        let parts: Vec<&mut [u32]> = data.chunks_mut(100).collect();
        let sums = run(parts, |k, p| {
            p.iter_mut().for_each(|x| *x += 1);
            (k, p.iter().map(|&x| u64::from(x)).sum::<u64>())
        });
        assert_eq!(sums.len(), 10);
        for (k, (kk, s)) in sums.iter().enumerate() {
            assert_eq!(k, *kk);
            assert_eq!(
                *s,
                (100 * k as u64..100 * k as u64 + 100)
                    .map(|x| x + 1)
                    .sum::<u64>()
            );
        }
        assert_eq!(each(5, |k| k * k), vec![0, 1, 4, 9, 16]);
        // More parts than threads a call may have: the rest on the caller.
        let many = MAX_THREADS + 6;
        assert_eq!(each(many, |k| k), (0..many).collect::<Vec<_>>());
        // A copy in parts: every element, on any number of threads.
        for (n, threads) in [(0, 2), (1, 2), (1 << 17, 2), ((1 << 18) + 3, 4), (1000, 1)] {
            let src: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761))
                .collect();
            let mut dst = vec![0u32; n];
            copy(&mut dst, &src, threads);
            assert_eq!(dst, src, "{n} on {threads}");
        }
    }

    #[test]
    fn a_thread_that_cannot_start_runs_its_part_on_the_caller() {
        let caller = std::thread::current().id();
        let on = |refuse: bool| {
            REFUSE_SPAWN.store(refuse, std::sync::atomic::Ordering::SeqCst);
            let started = std::sync::atomic::AtomicUsize::new(0);
            let r = each(4, |k| {
                if k > 0 {
                    started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                } else if !refuse {
                    // Part 0 waits for the others to start (a part whose
                    // thread has not started it when part 0 ends runs on
                    // the caller instead).
                    let t = std::time::Instant::now();
                    while started.load(std::sync::atomic::Ordering::SeqCst) < 3
                        && t.elapsed() < std::time::Duration::from_secs(5)
                    {
                        std::hint::spin_loop();
                    }
                }
                (k * 10, std::thread::current().id() == caller)
            });
            REFUSE_SPAWN.store(false, std::sync::atomic::Ordering::SeqCst);
            r
        };
        let refused = on(true);
        assert_eq!(
            refused,
            vec![(0, true), (10, true), (20, true), (30, true)],
            "every part ran once, in order, on the calling thread"
        );
        let normal = on(false);
        assert_eq!(
            normal.iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![0, 10, 20, 30]
        );
        assert!(
            normal[0].1 && !normal[1].1,
            "parts 1.. ran on threads of their own"
        );
    }

    #[test]
    fn a_panic_on_a_thread_reaches_the_caller() {
        let r = std::panic::catch_unwind(|| {
            each(3, |k| {
                if k == 2 {
                    panic!("part 2");
                }
                k
            })
        });
        assert!(r.is_err());
    }
}
