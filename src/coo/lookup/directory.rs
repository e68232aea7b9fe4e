//! The bucket directory of a sorted tensor without an index: for each range
//! of `2^shift` consecutive linear positions, the first entry at or after
//! it. A lookup reads two neighbouring offsets (one cache line), then
//! searches the few entries between them in the caller's own sorted
//! buffer, instead of the ~log2(nnz) dependent steps of a binary search
//! over the whole tensor.
//!
//! Size: at most one bucket per entry (`shift` is the smallest that gives
//! no more buckets than entries; one per 4 entries in the index form,
//! `INDEX_ENTRIES_PER_BUCKET`), 4 bytes per bucket (8 when the tensor
//! has more than `u32::MAX` entries): at most 4 bytes per entry (and 4
//! more), a sixth of the caller's float64 COO. Built once, on the first lookup that needs it
//! (one pass over the coordinates), and shared by every later lookup on any
//! thread. Entries sorted in row-major order are sorted by linear
//! position, so the buckets split the entries into consecutive runs, for
//! any rank and any shape whose element count fits a `u64`.

use super::search;
use crate::coo::key::linear;
use crate::element::size;
use crate::hint::prefetch;

/// Offsets of the first entry of each bucket, and `nnz` at the end.
enum Offsets {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

/// The low `shift` bits of each entry's linear position, in entry order
/// (the index's form: a lookup compares these instead of the caller's
/// coordinates, 2 or 4 bytes per entry instead of 8 per coordinate).
enum Rest {
    None,
    Short(Vec<u16>),
    Long(Vec<u32>),
}

/// One of the directory's arrays, in its width.
pub(crate) enum Words<'d> {
    None,
    U16(&'d [u16]),
    U32(&'d [u32]),
    U64(&'d [u64]),
}

/// What a probe outside the library reads (see `Directory::parts`): entry
/// `i` of a tensor is in bucket `b = linear >> shift` (0 when `shift` is
/// 64), the entries of bucket `b` are `offsets[b]..offsets[b + 1]`, and,
/// when `low` is kept, `low[i]` is the low `shift` bits of entry `i`'s
/// linear position.
pub(crate) struct Parts<'d> {
    pub strides: &'d [u64],
    pub shift: u32,
    pub offsets: Words<'d>,
    pub low: Words<'d>,
}

/// The index form has one bucket per 4 entries, not one per entry: its
/// offsets then take 1 byte per entry instead of 4 and stay in the faster
/// caches, while a bucket's low bits (2 or 4 bytes each, about 4 of them)
/// still fill less than a cache line. Measured with the inline probe
/// (bench/peers/lookup.sh, one run each): 1.3-1.4x faster single lookups
/// than one per entry on the three bench tensors; 8 per bucket was faster
/// on the rank-3 tensor and slower on the power-law graph.
const INDEX_ENTRIES_PER_BUCKET: u64 = 4;

pub(crate) struct Directory {
    strides: Vec<u64>,
    shift: u32,
    offsets: Offsets,
    rest: Rest,
}

/// The first `shift` for which `elements` positions make at most `most`
/// buckets of `2^shift` positions, and that number of buckets.
fn buckets_for(elements: u128, most: u128) -> (u32, u128) {
    let mut shift = 0u32;
    loop {
        let buckets = elements.saturating_sub(1) >> shift;
        let buckets = buckets + 1;
        if buckets <= most || shift >= 64 {
            return (shift, buckets);
        }
        shift += 1;
    }
}

impl Directory {
    /// The directory of `idx` (rank `shape.len()`, strictly increasing
    /// row-major order, every coordinate inside `shape`), with at most
    /// `most_buckets` buckets (`None` for the default, one per entry), or
    /// `None` when it cannot help or cannot be had: no entries, an element
    /// count above 2^64, or its memory refused. Then the binary search
    /// answers instead.
    pub fn build(idx: &[u64], shape: &[u64], most_buckets: Option<u64>) -> Option<Directory> {
        Directory::build_as(idx, shape, most_buckets, false)
    }

    /// `build`, with each entry's low position bits kept too (the sorted
    /// form of `HURRAY_COO_INDEX`): `None` also when they would need more
    /// than 32 bits (fewer entries than one per 2^32 positions), or when
    /// their memory is refused.
    pub fn build_index(idx: &[u64], shape: &[u64]) -> Option<Directory> {
        let nnz = (idx.len() / shape.len().max(1)) as u64;
        Directory::build_as(idx, shape, Some(nnz / INDEX_ENTRIES_PER_BUCKET), true)
    }

    fn build_as(
        idx: &[u64],
        shape: &[u64],
        most_buckets: Option<u64>,
        with_rest: bool,
    ) -> Option<Directory> {
        let r = shape.len();
        if r == 0 {
            return None;
        }
        let nnz = idx.len() / r;
        let strides = size::linear_strides(shape)?;
        let elements = size::element_count(shape)?;
        let most = most_buckets.unwrap_or(nnz as u64).max(1);
        if nnz == 0 {
            return None;
        }
        let (shift, buckets) = buckets_for(elements, u128::from(most));
        let buckets = usize::try_from(buckets).ok()?;
        let len = buckets.checked_add(1)?;
        let bucket_of = |i: usize| {
            let k = linear(&idx[i * r..(i + 1) * r], &strides);
            // `shift` may be 64 (one bucket for 2^64 positions).
            k.checked_shr(shift).unwrap_or(0) as usize
        };
        let rest = match (with_rest, shift) {
            (false, _) => Rest::None,
            (true, 0..=16) => Rest::Short(low_bits(idx, r, &strides, shift)?),
            (true, 17..=32) => Rest::Long(low_bits(idx, r, &strides, shift)?),
            (true, _) => return None,
        };
        let offsets = if u32::try_from(nnz).is_ok() {
            Offsets::Narrow(fill(len, nnz, bucket_of)?)
        } else {
            Offsets::Wide(fill(len, nnz, bucket_of)?)
        };
        Some(Directory {
            strides,
            shift,
            offsets,
            rest,
        })
    }

    /// The directory as plain arrays, for a probe outside the library (the
    /// C lookup view): linear strides, shift, offsets, low bits.
    pub fn parts(&self) -> Parts<'_> {
        Parts {
            strides: &self.strides,
            shift: self.shift,
            offsets: match &self.offsets {
                Offsets::Narrow(o) => Words::U32(o),
                Offsets::Wide(o) => Words::U64(o),
            },
            low: match &self.rest {
                Rest::None => Words::None,
                Rest::Short(v) => Words::U16(v),
                Rest::Long(v) => Words::U32(v),
            },
        }
    }

    /// Bytes the directory holds.
    pub fn bytes(&self) -> usize {
        let offsets = match &self.offsets {
            Offsets::Narrow(o) => o.len() * 4,
            Offsets::Wide(o) => o.len() * 8,
        };
        offsets
            + match &self.rest {
                Rest::None => 0,
                Rest::Short(v) => v.len() * 2,
                Rest::Long(v) => v.len() * 4,
            }
    }

    /// The entry of `idx` (the tensor it was built for) equal to `q` (of
    /// the tensor's rank, inside its shape), if any.
    #[inline(always)]
    pub fn find(&self, idx: &[u64], q: &[u64]) -> Option<usize> {
        self.find_with(|| idx, q)
    }

    /// `find`, with the tensor's coordinates asked for only when they are
    /// read (no low bits kept): the index's lookups never pay for them.
    #[inline(always)]
    pub fn find_with<'i>(&self, idx: impl FnOnce() -> &'i [u64], q: &[u64]) -> Option<usize> {
        let key = linear(q, &self.strides);
        let (lo, hi) = self.run(key);
        self.scan(idx, q, key, lo, hi)
    }

    /// `find` for many queries (`queries` holds `out.len()` of the
    /// tensor's rank) as a software pipeline: query `k`'s offsets are
    /// asked for, then `DISTANCE` queries later its run's keys, then
    /// `DISTANCE` queries later it is scanned and, when it is stored,
    /// `touch(entry)` asks for the caller's value.
    /// Each stage works on a different query, so the three dependent cache
    /// misses of every query overlap with those of the `2 * DISTANCE`
    /// queries around it, with no point where the pipeline drains (a
    /// group-at-a-time pipeline waited for each stage's first line). The
    /// same answers as `find`.
    pub fn find_many(
        &self,
        idx: &[u64],
        queries: &[u64],
        out: &mut [Option<usize>],
        touch: impl Fn(usize),
    ) {
        /// Queries between two stages: enough misses in flight to cover
        /// the latency, few enough to stay in the CPU's line-fill buffers.
        const DISTANCE: usize = 8;
        /// The ring holding each query's key and run from its first stage
        /// to its last (a power of two above `2 * DISTANCE`).
        const RING: usize = 4 * DISTANCE;
        let r = self.strides.len();
        let n = out.len();
        let mut keys = [0u64; RING];
        let mut runs = [(0usize, 0usize); RING];
        for k in 0..n + 2 * DISTANCE {
            if k < n {
                let key = linear(&queries[k * r..(k + 1) * r], &self.strides);
                keys[k % RING] = key;
                let b = self.bucket(key);
                match &self.offsets {
                    Offsets::Narrow(o) => prefetch(&o[b]),
                    Offsets::Wide(o) => prefetch(&o[b]),
                }
            }
            if let Some(j) = k.checked_sub(DISTANCE).filter(|&j| j < n) {
                let (lo, hi) = self.run(keys[j % RING]);
                runs[j % RING] = (lo, hi);
                // The run's first key and its last (a run may cross a line).
                let last = hi.saturating_sub(1).max(lo);
                match &self.rest {
                    Rest::Short(v) => [lo, last]
                        .iter()
                        .filter_map(|&i| v.get(i))
                        .for_each(prefetch),
                    Rest::Long(v) => [lo, last]
                        .iter()
                        .filter_map(|&i| v.get(i))
                        .for_each(prefetch),
                    Rest::None => idx.get(lo * r).map_or((), prefetch),
                }
            }
            if let Some(j) = k.checked_sub(2 * DISTANCE).filter(|&j| j < n) {
                let (lo, hi) = runs[j % RING];
                let at = self.scan(|| idx, &queries[j * r..(j + 1) * r], keys[j % RING], lo, hi);
                if let Some(i) = at {
                    touch(i);
                }
                out[j] = at;
            }
        }
    }

    /// The entry equal to `q` (linear position `key`) among `lo..hi`.
    #[inline(always)]
    fn scan<'i>(
        &self,
        idx: impl FnOnce() -> &'i [u64],
        q: &[u64],
        key: u64,
        lo: usize,
        hi: usize,
    ) -> Option<usize> {
        let r = q.len();
        // The bits below `shift` (kept only when `shift <= 32`).
        let low = key & (1u64 << (self.shift & 63)).wrapping_sub(1);
        let at = match &self.rest {
            Rest::Short(v) => find_low(v.get(lo..hi)?, low),
            Rest::Long(v) => find_low(v.get(lo..hi)?, low),
            Rest::None => search::find_sorted(idx().get(lo * r..hi * r)?, r, q),
        };
        at.map(|i| lo + i)
    }

    /// The bucket of linear position `key`.
    #[inline(always)]
    fn bucket(&self, key: u64) -> usize {
        // `shift` may be 64 (one bucket for 2^64 positions).
        key.checked_shr(self.shift).unwrap_or(0) as usize
    }

    /// The entries `lo..hi` in the bucket of linear position `key`.
    #[inline(always)]
    fn run(&self, key: u64) -> (usize, usize) {
        let b = self.bucket(key);
        match &self.offsets {
            Offsets::Narrow(o) => (o[b] as usize, o[b + 1] as usize),
            Offsets::Wide(o) => (o[b] as usize, o[b + 1] as usize),
        }
    }
}

/// Where `low` is in `run`, the strictly increasing low bits of one
/// bucket's entries: a scan of a short run (the common case, one or two
/// cache lines), a binary search of a long one (entries crowded in one
/// part of a shape, such as a dense row), so a lookup is never worse than
/// log2 of the bucket's size.
#[inline(always)]
pub(super) fn find_low<T: Copy + Into<u64>>(run: &[T], low: u64) -> Option<usize> {
    const SHORT: usize = 32;
    if run.len() <= SHORT {
        return run.iter().position(|&x| x.into() == low);
    }
    let at = run.partition_point(|&x| x.into() < low);
    let x: u64 = (*run.get(at)?).into();
    (x == low).then_some(at)
}

/// The low `shift` bits (at most 32) of each entry's linear position;
/// `None` when the memory is refused.
fn low_bits<T: TryFrom<u64>>(idx: &[u64], r: usize, strides: &[u64], shift: u32) -> Option<Vec<T>> {
    let nnz = idx.len() / r;
    let mask = (1u64 << shift) - 1;
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(nnz).ok()?;
    for e in idx.chunks_exact(r) {
        v.push(T::try_from(linear(e, strides) & mask).ok()?);
    }
    Some(v)
}

/// `len` offsets: for each bucket `b`, the first entry whose bucket is `b`
/// or later (`nnz` when none); `None` when the memory is refused or an
/// entry's bucket is out of order or out of range (never on data the
/// caller verified).
/// `T` must hold `nnz` (the caller picks `u32` only when it does): every
/// count and running sum is at most `nnz`.
///
/// Without a branch per entry: each entry counts one in the slot after its
/// bucket (a zeroed buffer), then running sums make each slot the number of
/// entries in earlier buckets. Walking the buckets and entries together
/// (the way before) mispredicted about once an entry where the buckets hold
/// one or two, and took 3x longer on the power-law graph and random rank 3
/// at 30M (BENCHMARKS.md, "the first lookup's directory").
fn fill<T>(len: usize, nnz: usize, bucket_of: impl Fn(usize) -> usize) -> Option<Vec<T>>
where
    T: Copy + bytemuck::Zeroable + std::ops::AddAssign + From<u8>,
{
    let mut o: Vec<T> = crate::aligned::zeroed_vec::<T>(len)?;
    let last = len.checked_sub(1)?;
    let (mut prev, mut bad) = (0usize, false);
    for i in 0..nnz {
        let b = bucket_of(i);
        bad |= (b < prev) | (b >= last);
        o[(b + 1).min(last)] += T::from(1);
        prev = b;
    }
    if bad {
        return None;
    }
    let mut run = T::from(0);
    for x in o.iter_mut() {
        run += *x;
        *x = run;
    }
    Some(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn bucket_counts() {
        assert_eq!(buckets_for(10, 10), (0, 10));
        assert_eq!(buckets_for(11, 10), (1, 6));
        assert_eq!(buckets_for(1, 1), (0, 1));
        assert_eq!(buckets_for(1u128 << 64, 1), (64, 1));
        assert_eq!(buckets_for(1u128 << 64, 3), (63, 2));
    }

    /// Against a scan, on random sorted tensors of every rank up to 5, with
    /// the default budget and with budgets that force long runs, and the
    /// offsets checked against their definition.
    #[test]
    fn finds_what_a_scan_finds() {
        let mut s = 7u64;
        for case in 0..600 {
            let rank = 1 + case % 5;
            let shape: Vec<u64> = (0..rank).map(|_| 1 + rng(&mut s) % 9).collect();
            let mut entries: Vec<Vec<u64>> = (0..rng(&mut s) % 200)
                .map(|_| shape.iter().map(|&x| rng(&mut s) % x).collect())
                .collect();
            entries.sort();
            entries.dedup();
            let idx: Vec<u64> = entries.concat();
            let most = match case % 3 {
                0 => None,
                1 => Some(1),
                _ => Some(1 + rng(&mut s) % 40),
            };
            let with_rest = case % 2 == 1;
            let Some(d) = Directory::build_as(&idx, &shape, most, with_rest) else {
                assert!(entries.is_empty(), "case {case}: no directory");
                continue;
            };
            let strides = size::linear_strides(&shape).unwrap();
            let offsets: Vec<u64> = match &d.offsets {
                Offsets::Narrow(o) => o.iter().map(|&x| u64::from(x)).collect(),
                Offsets::Wide(o) => o.clone(),
            };
            assert!(offsets.len() - 1 <= most.unwrap_or(entries.len() as u64) as usize);
            // The documented size: 4 bytes per bucket and one more, and at
            // most 4 per entry of low bits.
            let n = entries.len();
            let rest = if with_rest { 4 * n } else { 0 };
            assert!(d.bytes() <= 4 * offsets.len() + rest, "case {case}");
            if most.is_none() {
                assert!(d.bytes() <= 4 * (n + 1) + rest, "case {case}");
            }
            for (b, &off) in offsets.iter().enumerate() {
                let first = entries
                    .iter()
                    .position(|e| (linear(e, &strides) >> d.shift) as usize >= b)
                    .unwrap_or(entries.len());
                assert_eq!(off, first as u64, "case {case} bucket {b}");
            }
            for _ in 0..60 {
                let q: Vec<u64> = shape.iter().map(|&x| rng(&mut s) % x).collect();
                let want = entries.iter().position(|e| *e == q);
                assert_eq!(d.find(&idx, &q), want, "case {case} {q:?}");
            }
            for (i, e) in entries.iter().enumerate() {
                assert_eq!(d.find(&idx, e), Some(i), "case {case}");
            }
            // Many at once (the pipeline, shorter and longer than its
            // distance) as one by one.
            let m = rng(&mut s) as usize % 70;
            let qs: Vec<u64> = (0..m * rank)
                .map(|j| rng(&mut s) % shape[j % rank])
                .collect();
            let mut many = vec![Some(usize::MAX); m];
            let touched = std::cell::Cell::new(0usize);
            d.find_many(&idx, &qs, &mut many, |i| {
                assert!(i < entries.len());
                touched.set(touched.get() + 1);
            });
            let hits = many.iter().filter(|a| a.is_some()).count();
            assert_eq!(touched.get(), hits, "case {case}");
            for (j, got) in many.iter().enumerate() {
                let q = &qs[j * rank..(j + 1) * rank];
                assert_eq!(*got, d.find(&idx, q), "case {case} many {q:?}");
            }
        }
    }

    #[test]
    fn wide_offsets_answer_as_narrow_ones() {
        let shape = [50u64, 40];
        let idx: Vec<u64> = (0..50u64)
            .flat_map(|i| [i, (i * 7) % 40])
            .collect::<Vec<_>>();
        let narrow = Directory::build(&idx, &shape, None).unwrap();
        let len = match &narrow.offsets {
            Offsets::Narrow(o) => o.len(),
            Offsets::Wide(_) => unreachable!(),
        };
        let wide = Directory {
            strides: narrow.strides.clone(),
            shift: narrow.shift,
            offsets: Offsets::Wide(
                fill(len, 50, |i| {
                    ((idx[2 * i] * 40 + idx[2 * i + 1]) >> narrow.shift) as usize
                })
                .unwrap(),
            ),
            rest: Rest::None,
        };
        for a in 0..50 {
            for b in 0..40 {
                assert_eq!(narrow.find(&idx, &[a, b]), wide.find(&idx, &[a, b]));
            }
        }
    }

    /// Positions spread so thin that the low bits take 17-32 bits (`Long`),
    /// or more than 32 (no index form; the plain directory still).
    #[test]
    fn sparse_shapes_keep_long_low_bits_or_none() {
        let mut s = 11u64;
        for (shape, n, long) in [
            ([1u64 << 20, 1 << 12], 1000u64, true),
            ([1 << 40, 1 << 20], 1000, false),
        ] {
            let mut entries: Vec<[u64; 2]> = (0..n)
                .map(|_| [rng(&mut s) % shape[0], rng(&mut s) % shape[1]])
                .collect();
            entries.sort();
            entries.dedup();
            let idx: Vec<u64> = entries.iter().flatten().copied().collect();
            let index = Directory::build_index(&idx, &shape);
            assert_eq!(index.is_some(), long);
            let d = index.unwrap_or_else(|| Directory::build(&idx, &shape, None).unwrap());
            assert_eq!(matches!(d.rest, Rest::Long(_)), long);
            for (i, e) in entries.iter().enumerate() {
                assert_eq!(d.find(&idx, e), Some(i));
                let near = [e[0], (e[1] + 1) % shape[1]];
                assert_eq!(d.find(&idx, &near), entries.iter().position(|x| *x == near));
            }
        }
    }

    /// A dense row in a wide shape crowds thousands of entries into one
    /// bucket: lookups there take the binary search, with the same answers.
    #[test]
    fn crowded_buckets_answer_as_a_scan() {
        let shape = [1u64 << 16, 1 << 16];
        let mut entries: Vec<[u64; 2]> = (0..5000u64).map(|c| [7, c * 3]).collect();
        entries.extend((0..3000u64).map(|i| [100 + i * 13, i % 50]));
        let idx: Vec<u64> = entries.iter().flatten().copied().collect();
        let d = Directory::build_index(&idx, &shape).unwrap();
        let (lo, hi) = d.run(7 << 16);
        assert!(hi - lo > 1000, "not crowded: {}", hi - lo);
        for c in 0..16000u64 {
            let q = [7, c];
            assert_eq!(d.find(&idx, &q), entries.iter().position(|e| *e == q));
        }
        for (i, e) in entries.iter().enumerate() {
            assert_eq!(d.find(&idx, e), Some(i));
        }
    }

    /// The documented layout of `parts` (the C lookup view): a probe that
    /// knows only it finds what `find` finds.
    #[test]
    fn parts_describe_the_directory() {
        fn probe(p: &Parts<'_>, idx: &[u64], q: &[u64]) -> Option<usize> {
            let key: u64 = q.iter().zip(p.strides).map(|(a, b)| a * b).sum();
            let b = key.checked_shr(p.shift).unwrap_or(0) as usize;
            let (lo, hi) = match p.offsets {
                Words::U32(o) => (o[b] as usize, o[b + 1] as usize),
                Words::U64(o) => (o[b] as usize, o[b + 1] as usize),
                _ => unreachable!("offsets are 4 or 8 bytes"),
            };
            let low = key & ((1u64 << p.shift.min(63)) - 1);
            let r = q.len();
            (lo..hi).find(|&i| match p.low {
                Words::U16(l) => u64::from(l[i]) == low,
                Words::U32(l) => u64::from(l[i]) == low,
                _ => idx[i * r..(i + 1) * r] == *q,
            })
        }
        let mut s = 3u64;
        for case in 0..200 {
            let rank = 1 + case % 4;
            let wide = case % 3 == 0;
            let shape: Vec<u64> = (0..rank)
                .map(|_| if wide { 1 << 12 } else { 1 + rng(&mut s) % 10 })
                .collect();
            let mut entries: Vec<Vec<u64>> = (0..rng(&mut s) % 150)
                .map(|_| shape.iter().map(|&x| rng(&mut s) % x).collect())
                .collect();
            entries.sort();
            entries.dedup();
            let idx: Vec<u64> = entries.concat();
            for d in [
                Directory::build(&idx, &shape, None),
                Directory::build_index(&idx, &shape),
            ]
            .into_iter()
            .flatten()
            {
                let p = d.parts();
                for _ in 0..50 {
                    let q: Vec<u64> = shape.iter().map(|&x| rng(&mut s) % x).collect();
                    assert_eq!(probe(&p, &idx, &q), d.find(&idx, &q), "case {case}");
                }
                for e in &entries {
                    assert_eq!(probe(&p, &idx, e), d.find(&idx, e), "case {case}");
                }
            }
        }
    }

    #[test]
    fn out_of_order_data_builds_nothing() {
        assert!(Directory::build(&[3, 0, 1, 0], &[4, 2], None).is_none());
        assert!(Directory::build(&[], &[4, 2], None).is_none());
    }
}
