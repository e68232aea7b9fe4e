//! Many lookups in one call, optionally over scoped threads.

use super::packed_index::{Hit, PackedIndex};
use super::{Directory, Index};
use crate::coo::Coo;
use crate::element::types::TypeInfo;
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
    /// `Directory::find_many`), the value at each run's start asked for
    /// with the run.
    fn batch_sorted(
        &self,
        d: &Directory,
        ty: &TypeInfo,
        queries: &[u64],
        out: &mut [f64],
        mut found: Option<&mut [u8]>,
    ) {
        let r = self.shape.len();
        let (idx, values, bits) = (self.indices(), self.values(), ty.bits as usize);
        const CHUNK: usize = 1024;
        let mut at = [None; CHUNK];
        for (k0, qs) in queries.chunks(CHUNK * r).enumerate() {
            let m = qs.len() / r;
            d.find_many(idx, qs, &mut at[..m], |lo| {
                values.get(lo.saturating_mul(bits) / 8).map_or((), prefetch)
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
