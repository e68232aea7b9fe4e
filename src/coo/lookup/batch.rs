//! Many lookups in one call, optionally over scoped threads.

use super::directory::find_low;
use super::packed_index::{Hit, PackedIndex};
use super::{Directory, Index, Words};
use crate::coo::key::linear;
use crate::coo::Coo;
use crate::element::types::{Encoding, TypeInfo};
use crate::error::CooError;
use crate::hint::prefetch;

impl Coo<'_> {
    /// The first stored entry at or after `start` that is not before `q`
    /// (sorted tensors): galloping, then a binary search.
    fn lower_bound_from(&self, start: usize, q: &[u64]) -> usize {
        let n = self.indices().len() / self.shape.len();
        let (mut lo, mut hi, mut step) = (start, start, 1usize);
        while hi < n && self.entry(hi) < q {
            lo = hi + 1;
            hi = hi.saturating_add(step);
            step = step.saturating_mul(2);
        }
        let mut hi = hi.min(n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.entry(mid) < q {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// `batch_part` through a packed index: the queries in chunks, each
    /// looked up as a pipeline whose cache misses overlap (see
    /// `find_many`), the values read from the index when it keeps them.
    fn batch_packed<const K: usize>(
        &self,
        p: &PackedIndex<K>,
        ty: &TypeInfo,
        queries: &[u64],
        out: &mut [f64],
        mut found: Option<&mut [u8]>,
    ) {
        let r = self.shape.len();
        const CHUNK: usize = 1024;
        let mut at = [Hit::default(); CHUNK];
        for (k0, qs) in queries.chunks(CHUNK * r).enumerate() {
            let m = qs.len() / r;
            p.find_many(qs, r, &self.strides, &mut at[..m]);
            for (j, &h) in at[..m].iter().enumerate() {
                let k = k0 * CHUNK + j;
                let stored = if p.has_values() {
                    let (v, stored) = p.value(h);
                    out[k] = f64::from_bits(v);
                    stored
                } else {
                    let (i, stored) = p.entry(h);
                    out[k] = self.value_f64_if(ty, i, stored);
                    stored
                };
                if let Some(f) = found.as_deref_mut() {
                    f[k] = u8::from(stored);
                }
            }
        }
    }

    /// `batch_part` through a bucket directory: the queries in chunks,
    /// each looked up as a pipeline whose cache misses overlap (see
    /// `Directory::find_many`), each answer's value asked for as it is
    /// found.
    fn batch_sorted(
        &self,
        d: &Directory,
        ty: &TypeInfo,
        queries: &[u64],
        out: &mut [f64],
        mut found: Option<&mut [u8]>,
    ) {
        let r = self.shape.len();
        if let Some(f64s) = (ty.encoding == Encoding::F64)
            .then(|| bytemuck::try_cast_slice::<u8, u64>(self.values()).ok())
            .flatten()
        {
            let p = d.parts();
            let shift = p.shift;
            // The index form (low bits kept, narrow offsets) at rank 2 or
            // 3 on float64 values: the pipeline written for them.
            macro_rules! lean {
                ($r:literal, $low:expr) => {
                    if let (Words::U32(o), Ok(s)) = (&p.offsets, p.strides.try_into()) {
                        let lean = Lean::<$r, _> {
                            strides: s,
                            shift,
                            offsets: o,
                            low: $low,
                            values: f64s,
                        };
                        return lean.batch(queries, out, found);
                    }
                };
            }
            match (r, &p.low) {
                (2, Words::U16(l)) => lean!(2, l),
                (2, Words::U32(l)) => lean!(2, l),
                (3, Words::U16(l)) => lean!(3, l),
                (3, Words::U32(l)) => lean!(3, l),
                _ => {}
            }
        }
        let (idx, values, bits) = (self.indices(), self.values(), ty.bits as usize);
        const CHUNK: usize = 1024;
        let mut at = [None; CHUNK];
        for (k0, qs) in queries.chunks(CHUNK * r).enumerate() {
            let m = qs.len() / r;
            d.find_many(idx, qs, &mut at[..m], |i| {
                values.get(i.saturating_mul(bits) / 8).map_or((), prefetch)
            });
            for (j, &a) in at[..m].iter().enumerate() {
                let k = k0 * CHUNK + j;
                out[k] = self.value_f64_if(ty, a.unwrap_or(0), a.is_some());
                if let Some(f) = found.as_deref_mut() {
                    f[k] = u8::from(a.is_some());
                }
            }
        }
    }

    /// One thread's share of a batch (queries already checked).
    fn batch_part(
        &self,
        ty: &TypeInfo,
        queries: &[u64],
        out: &mut [f64],
        mut found: Option<&mut [u8]>,
    ) {
        let r = self.shape.len();
        if self.nnz == 0 {
            out.fill(0.0);
            if let Some(f) = found {
                f.fill(0);
            }
            return;
        }
        match &self.index {
            Some(Index::Packed(p)) => return self.batch_packed(p, ty, queries, out, found),
            Some(Index::Valued(p)) => return self.batch_packed(p, ty, queries, out, found),
            _ => {}
        }
        let n = self.indices().len() / r;
        let sorted = self.searchable();
        let merge = sorted
            && queries
                .chunks_exact(r)
                .zip(queries.chunks_exact(r).skip(1))
                .all(|(a, b)| a <= b);
        let directory = match &self.index {
            Some(Index::Sorted(d)) => Some(&**d),
            None if sorted => self.directory(),
            _ => None,
        };
        if let (Some(d), false) = (directory, merge) {
            return self.batch_sorted(d, ty, queries, out, found);
        }
        let mut cursor = 0;
        for (k, q) in queries.chunks_exact(r).enumerate() {
            let at = if merge {
                cursor = self.lower_bound_from(cursor, q);
                (cursor < n && self.entry(cursor) == q).then_some(cursor)
            } else {
                self.locate(q)
            };
            out[k] = at.map_or(0.0, |i| self.value_f64(ty, i));
            if let Some(f) = found.as_deref_mut() {
                f[k] = u8::from(at.is_some());
            }
        }
    }

    /// Look up `out.len()` queries at once (`queries` holds `out.len() *
    /// rank` coordinates), writing each value as an `f64` (0.0 when not
    /// stored) and, if asked, a 0/1 "stored" flag per query. Every query is
    /// checked first; the first one outside the shape is reported. When the
    /// tensor and the queries are both sorted, entries and queries are
    /// merged (galloping) instead of searched. With `threads > 1` the queries
    /// are split over at most that many scoped threads (never more than
    /// one per 4096 queries); no thread outlives the call.
    pub fn lookup_batch_f64(
        &self,
        queries: &[u64],
        out: &mut [f64],
        found: Option<&mut [u8]>,
        threads: usize,
    ) -> Result<(), CooError> {
        let ty = self.real_type("lookup_batch")?;
        let r = self.shape.len();
        if out.len().checked_mul(r) != Some(queries.len())
            || found.as_ref().is_some_and(|f| f.len() != out.len())
        {
            return Err(CooError::Internal(
                "batch buffers of unequal lengths".into(),
            ));
        }
        let threads = crate::threads::count(threads, out.len(), 4096);
        if threads == 1 {
            if let Some(e) = self.first_bad_query(queries, 0) {
                return Err(e);
            }
            self.batch_part(ty, queries, out, found);
            return Ok(());
        }
        let per = out.len().div_ceil(threads);
        let mut found = found;
        let mut parts = Vec::new();
        for (qs, os) in queries.chunks(per * r).zip(out.chunks_mut(per)) {
            let fs = match found.take() {
                Some(f) => {
                    let (head, tail) = f.split_at_mut(os.len());
                    found = Some(tail);
                    Some(head)
                }
                None => None,
            };
            parts.push((qs, os, fs));
        }
        // Each thread checks its own queries first (the first bad one over
        // all threads is reported; outputs are unspecified on failure), so
        // the check is split too. Parts come in query order: the first bad
        // part holds the lowest bad query.
        crate::threads::run(parts, |part, (qs, os, fs)| {
            match self.first_bad_query(qs, part * per) {
                Some(e) => Some(e),
                None => {
                    self.batch_part(ty, qs, os, fs);
                    None
                }
            }
        })
        .into_iter()
        .flatten()
        .next()
        .map_or(Ok(()), Err)
    }

    /// The error for the first query of `queries` (numbered from `first`)
    /// outside the shape, if any: a branch-free pass, the slow one only
    /// for a bad batch.
    fn first_bad_query(&self, queries: &[u64], first: usize) -> Option<CooError> {
        let r = self.shape.len();
        let mut bad = false;
        for q in queries.chunks_exact(r) {
            for (c, x) in q.iter().zip(&self.shape) {
                bad |= c >= x;
            }
        }
        if !bad {
            return None;
        }
        queries.chunks_exact(r).enumerate().find_map(|(k, q)| {
            let dim = q.iter().zip(&self.shape).position(|(c, x)| c >= x)?;
            Some(CooError::BatchQueryOutOfBounds {
                query: first + k,
                dim,
                coord: q[dim],
                extent: self.shape[dim],
            })
        })
    }
}

/// The bucket directory's index form (`Directory::parts`: narrow offsets,
/// low position bits of type `L`) at rank `R` over float64 values (as
/// little-endian words), for a batch: `Directory::find_many`'s pipeline
/// with every width and the rank fixed, and the value read in the
/// pipeline's last stage, about a third of the general path's instructions
/// per query.
struct Lean<'a, const R: usize, L> {
    strides: [u64; R],
    shift: u32,
    offsets: &'a [u32],
    low: &'a [L],
    values: &'a [u64],
}

impl<const R: usize, L: Copy + Into<u64>> Lean<'_, R, L> {
    /// Every query's value (0.0 when not stored) and, if asked, whether it
    /// is stored; the queries are inside the shape (checked before).
    ///
    /// Four stages, `DISTANCE` queries apart: the query's bucket offsets
    /// asked for; the offsets read and the run's low bits asked for; the
    /// run scanned and the value asked for; the value read.
    fn batch(&self, queries: &[u64], out: &mut [f64], mut found: Option<&mut [u8]>) {
        const DISTANCE: usize = 8;
        const RING: usize = 4 * DISTANCE;
        let n = out.len();
        let mask = (1u64 << (self.shift & 63)).wrapping_sub(1);
        let mut keys = [0u64; RING];
        let mut runs = [(0usize, 0usize); RING];
        let mut at = [None::<usize>; RING];
        for k in 0..n + 3 * DISTANCE {
            if k < n {
                let key = linear(&queries[k * R..k * R + R], &self.strides);
                keys[k % RING] = key;
                if let Some(o) = self.offsets.get(self.bucket(key)) {
                    prefetch(o);
                }
            }
            if let Some(j) = k.checked_sub(DISTANCE).filter(|&j| j < n) {
                let b = self.bucket(keys[j % RING]);
                let run = match (self.offsets.get(b), self.offsets.get(b + 1)) {
                    (Some(&lo), Some(&hi)) => (lo as usize, hi as usize),
                    _ => (0, 0),
                };
                runs[j % RING] = run;
                if let Some(l) = self.low.get(run.0) {
                    prefetch(l);
                }
            }
            if let Some(j) = k.checked_sub(2 * DISTANCE).filter(|&j| j < n) {
                let (lo, hi) = runs[j % RING];
                let want = keys[j % RING] & mask;
                let a = find_low(self.low.get(lo..hi).unwrap_or(&[]), want).map(|i| lo + i);
                if let Some(v) = a.and_then(|i| self.values.get(i)) {
                    prefetch(v);
                }
                at[j % RING] = a;
            }
            if let Some(j) = k.checked_sub(3 * DISTANCE).filter(|&j| j < n) {
                let a = at[j % RING];
                let v = a.and_then(|i| self.values.get(i)).copied().unwrap_or(0);
                out[j] = f64::from_bits(u64::from_le(v));
                if let Some(f) = found.as_deref_mut() {
                    f[j] = u8::from(a.is_some());
                }
            }
        }
    }

    #[inline(always)]
    fn bucket(&self, key: u64) -> usize {
        key.checked_shr(self.shift).unwrap_or(0) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coo::lookup::sample::Draw;
    use crate::coo::{CooParts, Options};

    /// The batch on sorted float64 tensors with the index (the directory's
    /// index form: `Lean` at rank 2 and 3, the general pipeline at rank 1)
    /// and without it (the lazy directory, the caller's coordinates
    /// scanned), on shapes that keep 2- and 4-byte low bits and with a
    /// crowded row whose bucket is binary-searched, answers what a map of
    /// the entries answers, for every entry, its neighbours and random
    /// queries; on one thread and three.
    #[test]
    fn the_batch_answers_what_the_entries_say() {
        let mut seed = 0xBA7Cu64;
        let draw = Draw {
            most: 5000,
            huge_bits: 40,
            crowded: 4000,
        };
        let (mut lean, mut crowded) = (0usize, 0usize);
        for case in 0..48 {
            let rank = 1 + case % 3;
            let kind = case / 3 % 4; // small, wide, huge, crowded
            let index = case / 12 % 2 == 0;
            let t = draw.sorted(rank, kind, &mut seed);
            let coo = Coo::new(
                CooParts {
                    type_tag: crate::ffi::HURRAY_TYPE_FLOAT64,
                    shape: &t.shape,
                    nnz: t.vals.len() as u64,
                    is_sorted: true,
                    values: bytemuck::cast_slice(&t.vals),
                    indices: bytemuck::cast_slice(&t.idx),
                },
                Options {
                    copy: true,
                    index,
                    ..Options::default()
                },
            )
            .unwrap();
            if let (Some(Index::Sorted(d)), 2..=3) = (&coo.index, rank) {
                let p = d.parts();
                if matches!(p.offsets, Words::U32(_))
                    && matches!(p.low, Words::U16(_) | Words::U32(_))
                {
                    lean += 1;
                    crowded += usize::from(kind == 3);
                }
            }
            let flat: Vec<u64> = t.queries.concat();
            for threads in [1, 3] {
                let mut out = vec![f64::NAN; t.queries.len()];
                let mut found = vec![7u8; t.queries.len()];
                coo.lookup_batch_f64(&flat, &mut out, Some(&mut found), threads)
                    .unwrap();
                for (k, q) in t.queries.iter().enumerate() {
                    let want = t.map.get(q).copied();
                    assert_eq!(
                        (out[k], found[k]),
                        (want.unwrap_or(0.0), u8::from(want.is_some())),
                        "case {case} query {k} {q:?}"
                    );
                }
            }
        }
        assert!(lean >= 8 && crowded >= 2, "{lean} lean, {crowded} crowded");
    }
}
