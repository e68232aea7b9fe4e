//! The re-assembly plan (PETSc's `MatSetPreallocationCOO` /
//! `MatSetValuesCOO`): built once with the canonical tensor, it records
//! which triplets make each canonical entry, so a new values array of the
//! same triplets becomes the canonical values with no sort and no
//! allocation, combined by the same policy in the same order as the first
//! assembly.
//!
//! It holds one of three layouts, chosen when it is finished:
//! - *scatter*, for triplets whose order follows the entries' (finite
//!   element assembly, sorted input): for each triplet its entry, flagged
//!   when it is the entry's first member. Re-assembly reads the values once,
//!   in sequence, and combines each into its entry; the first member writes
//!   it, so no pass clears the output. 4 bytes per triplet.
//! - *gather*, for triplets in no such order: for each entry the triplets
//!   that make it. Re-assembly writes the entries in sequence and reads the
//!   values where they lie. 4 bytes per triplet and 8 per entry.
//! - *staged*, for triplets in no such order whose values are too many to
//!   stay in cache, when the gather would read them at random (random
//!   reads from memory would cost more than two passes; reads from a few
//!   ordered streams would not): re-assembly first copies the values, in one pass, into a
//!   buffer the plan keeps, where those of each bucket of entries lie
//!   together in triplet order; then it gathers as above, from a part that
//!   fits in cache. 1 byte more per triplet, and the buffer.
//!
//! Either way each entry sees its members in triplet order, as the first
//! assembly combined them, and threads own contiguous ranges of entries, so
//! no two write one entry. A scatter thread reads only the window of
//! triplets that go to its entries; the plan is scatter only when those
//! windows add up to a few passes over the triplets.

use super::combine::{add, better, sum_f64, Storage};
use super::Duplicates;
use crate::aligned::zeroed_vec;
use crate::element::decode::copy_element;
use crate::element::encode::{clear_padding, store_element};
use crate::element::size;
use crate::element::types::{Encoding, TypeInfo};
use crate::error::counted_from;
use crate::error::CooError;
use std::ops::Range;
use std::sync::{Mutex, TryLockError};

/// Which triplets make each canonical entry.
#[derive(Debug)]
pub struct Plan {
    ty: &'static TypeInfo,
    dup: Duplicates,
    has_values: bool,
    base: u8,
    /// Number of triplets the plan was built from.
    triplets: usize,
    layout: Layout,
}

#[derive(Debug)]
enum Layout {
    /// Entry `e` is made of `members[starts[e]..starts[e + 1]]`, in triplet
    /// order (FIRST, LAST and ERROR keep one per entry).
    Gather { members: Members, starts: Vec<u64> },
    /// Triplet `k`'s entry is `map[k]`, flagged when `k` is its entry's
    /// first member; `SKIP` for a triplet that makes no entry (dropped, or
    /// not the one FIRST, LAST or ERROR keeps). The triplets that go to
    /// entry block `b` (`BLOCK` entries) lie in `windows[b]`.
    Scatter {
        nnz: usize,
        map: Map,
        windows: Vec<(usize, usize)>,
    },
    /// Gather in two steps, for many triplets in no local order: the
    /// values are first copied, in one pass, into a staging buffer where
    /// the triplets of each bucket of entries (`1 << shift` of them) lie
    /// together, in triplet order; then each entry gathers from its bucket's
    /// part, which fits in cache. `bucket[k]` is triplet `k`'s bucket
    /// (`UNSTAGED` for one that makes no entry), `bucket_starts` where each
    /// bucket's part starts, and `members` hold places in the staging
    /// buffer, not triplet numbers.
    Staged {
        stage: Stage,
        members: Members,
        starts: Vec<u64>,
    },
}

/// A staged plan's first step, and the buffer it fills.
#[derive(Debug)]
struct Stage {
    bucket: Vec<u8>,
    bucket_starts: Vec<usize>,
    /// Kept from one re-assembly to the next (the first allocates it);
    /// a call that finds it in use stages into a buffer of its own.
    buffer: Mutex<Vec<u64>>,
}

/// `Stage::bucket` of a triplet that is not staged.
const UNSTAGED: u8 = u8::MAX;

/// Entries per window, and the least a thread is given.
const BLOCK: usize = 4096;

/// A plan is scatter when its windows add up to at most this many passes
/// over the triplets (finite element meshes in element order: about 1.1;
/// permuted triplets: one pass per block).
const SCATTER_PASSES: usize = 3;

/// A plan that is not scatter is staged when the triplets' values exceed
/// this many bytes (below it, they stay in cache for a plain gather).
const STAGE_BYTES: u64 = 8 << 20;

/// Entries per staging bucket, at least (32768 f64 output entries are 256
/// KiB; their triplets' values, about 2.5 times that, still fit in L2).
const STAGE_SHIFT: u32 = 15;

/// A plan that is not scatter is staged only when at least this many per
/// mille of its gather's reads, sampled, are far from every recent one
/// ([`far_permille`]). A gather that reads from a few streams (triplets from
/// two ranks' element orders side by side, say) is served by the hardware's
/// prefetchers at about 1.2 ns a member, where staging costs about 6 ns a
/// triplet and a far read about 10 ns; they break even near half.
const STAGE_FAR: usize = 500;

/// The read streams [`far_permille`] follows at once, and how close (in
/// triplets) a read must come to a stream's last one to continue it.
const STREAMS: usize = 32;
const NEAR: usize = 512;

/// [`far_permille`] samples this many runs of this many entries.
const SAMPLE_RUNS: usize = 32;
const SAMPLE_ENTRIES: usize = 1024;

/// When a finished plan takes each layout (`finish` uses the constants
/// above; tests force each layout).
#[derive(Debug, Clone, Copy)]
struct Rules {
    /// Scatter when the windows add up to at most this many triplets.
    scatter_limit: usize,
    /// Else staged when the values take at least this many bytes ...
    stage_bytes: u64,
    /// ... and at least this many per mille of the gather's reads are far,
    stage_far: usize,
    /// in buckets of at least `1 << stage_shift` entries.
    stage_shift: u32,
    /// Threads the tables may be built on.
    threads: usize,
}

/// Per mille of a gather's reads, sampled in runs of entries, that do not
/// continue any of the last [`STREAMS`] streams of reads (within [`NEAR`]
/// triplets of a stream's last read): about 1000 for permuted triplets, a
/// few for triplets from a handful of ordered sources.
fn far_permille(members: &Members, starts: &[u64]) -> usize {
    let nnz = starts.len().saturating_sub(1);
    let runs = SAMPLE_RUNS.min(nnz.div_ceil(SAMPLE_ENTRIES));
    let (mut far, mut all) = (0usize, 0usize);
    for r in 0..runs {
        let first = nnz / runs * r;
        let end = (first + SAMPLE_ENTRIES).min(nnz);
        let mut heads = [usize::MAX; STREAMS];
        let mut next = 0;
        for j in starts[first] as usize..starts[end] as usize {
            let k = members.get(j) as usize;
            match heads.iter().position(|&h| h.abs_diff(k) <= NEAR) {
                Some(s) => heads[s] = k,
                None => {
                    far += 1;
                    heads[next] = k;
                    next = (next + 1) % STREAMS;
                }
            }
            all += 1;
        }
    }
    (far * 1000).checked_div(all).unwrap_or(0)
}

fn alloc_error(bytes: usize) -> CooError {
    CooError::Alloc {
        bytes,
        what: "the re-assembly plan",
    }
}

impl Plan {
    /// An empty gather plan for `n` triplets; `finish` it once every entry
    /// is recorded.
    pub(super) fn new(
        n: usize,
        ty: &'static TypeInfo,
        dup: Duplicates,
        has_values: bool,
        base: u8,
    ) -> Result<Plan, CooError> {
        let members = Members::with_room(n, n).map_err(|_| alloc_error(n.saturating_mul(8)))?;
        let mut starts = Vec::new();
        starts
            .try_reserve(n.min(1 << 20) + 1)
            .map_err(|_| alloc_error(n.saturating_mul(8)))?;
        starts.push(0);
        Ok(Plan {
            ty,
            dup,
            has_values,
            base,
            triplets: n,
            layout: Layout::Gather { members, starts },
        })
    }

    /// The gather lists of a plan under construction.
    fn lists(&mut self) -> (&mut Members, &mut Vec<u64>) {
        match &mut self.layout {
            Layout::Gather { members, starts } => (members, starts),
            Layout::Scatter { .. } | Layout::Staged { .. } => {
                unreachable!("a finished plan is not extended")
            }
        }
    }

    /// Record that the triplets `group` (in triplet order) make the next
    /// entry.
    pub(super) fn map_group(&mut self, group: &[usize]) -> Result<(), CooError> {
        let kept: &[usize] = match self.dup {
            Duplicates::First | Duplicates::Error => &group[..1],
            Duplicates::Last => &group[group.len() - 1..],
            Duplicates::Sum | Duplicates::Min | Duplicates::Max => group,
        };
        let (members, starts) = self.lists();
        members.extend(kept.iter().map(|&i| i as u64));
        starts
            .try_reserve(1)
            .map_err(|_| alloc_error(starts.len().saturating_mul(16)))?;
        starts.push(members.len() as u64);
        Ok(())
    }

    /// A gather plan over `n` triplets whose entries are those of `pieces`
    /// in order (each built for the same `n`). One piece becomes the plan's
    /// lists as it is; several are copied in on one thread each: joined
    /// one after another, they were a serial tail of a parallel assembly.
    pub(super) fn joined(
        n: usize,
        ty: &'static TypeInfo,
        dup: Duplicates,
        base: u8,
        mut pieces: Vec<PlanPiece>,
    ) -> Result<Plan, CooError> {
        let plan = |members, starts| Plan {
            ty,
            dup,
            has_values: true,
            base,
            triplets: n,
            layout: Layout::Gather { members, starts },
        };
        if pieces.len() == 1 {
            if let Some(p) = pieces.pop() {
                return Ok(plan(p.members, p.starts));
            }
        }
        let total: usize = pieces.iter().map(|p| p.members.len()).sum();
        let entries: usize = pieces.iter().map(|p| p.starts.len() - 1).sum();
        let mut starts: Vec<u64> = zeroed_vec(entries + 1)
            .ok_or_else(|| alloc_error(entries.saturating_add(1).saturating_mul(8)))?;
        let mut members =
            Members::zeroed(n, total).ok_or_else(|| alloc_error(total.saturating_mul(8)))?;
        // Each piece's share of both lists, and where its members begin.
        let mut parts = Vec::new();
        parts
            .try_reserve_exact(pieces.len())
            .map_err(|_| alloc_error(pieces.len().saturating_mul(64)))?;
        let (mut m_rest, mut s_rest) = (members.chunks(), &mut starts[1..]);
        let mut at = 0u64;
        for p in &pieces {
            let (more, ends) = (&p.members, &p.starts[1..]);
            let (m, m_tail) = m_rest.split_at(more.len());
            let (e, e_tail) = std::mem::take(&mut s_rest).split_at_mut(ends.len());
            (m_rest, s_rest) = (m_tail, e_tail);
            parts.push((m, e, more, ends, at));
            at += more.len() as u64;
        }
        crate::threads::run(parts, |_, (m, e, more, ends, at)| {
            m.copy_from(more);
            for (x, &end) in e.iter_mut().zip(ends) {
                *x = at + end;
            }
        });
        Ok(plan(members, starts))
    }

    /// The plan with its layout chosen: scatter when the triplets follow
    /// the entries closely enough; else staged when their values are too
    /// many to stay in cache; else gather (also when there is no memory
    /// for the other layouts' tables, or nothing to re-assemble).
    pub(super) fn finish(self) -> Plan {
        self.finish_on(1)
    }

    /// `finish`, its tables built on up to `threads` threads (as the
    /// caller asked for them: each table takes as many as its size
    /// allows, `threads::count`).
    pub(super) fn finish_on(self, threads: usize) -> Plan {
        let rules = Rules {
            scatter_limit: SCATTER_PASSES.saturating_mul(self.triplets),
            stage_bytes: STAGE_BYTES,
            stage_far: STAGE_FAR,
            stage_shift: STAGE_SHIFT,
            threads,
        };
        self.finish_within(rules)
    }

    /// `finish` by `rules`.
    fn finish_within(self, rules: Rules) -> Plan {
        if !matches!(self.layout, Layout::Gather { .. }) || !self.has_values {
            return self;
        }
        let mut p = self;
        if p.try_scatter(rules.scatter_limit, rules.threads) {
            p
        } else {
            p.staged(rules)
        }
    }

    /// Make the gather plan scatter if its windows add up to at most `limit`
    /// triplets and there is memory for the map; whether it did.
    fn try_scatter(&mut self, limit: usize, threads: usize) -> bool {
        let Layout::Gather { members, starts } = &self.layout else {
            return false;
        };
        let nnz = starts.len() - 1;
        let blocks = nnz.div_ceil(BLOCK);
        let mut windows = Vec::new();
        if windows.try_reserve_exact(blocks).is_err() {
            return false;
        }
        let mut scanned = 0usize;
        for b in 0..blocks {
            let lo = starts[b * BLOCK] as usize;
            let hi = starts[((b + 1) * BLOCK).min(nnz)] as usize;
            let (first, end) = (lo..hi).fold((usize::MAX, 0), |(f, e), j| {
                let k = members.get(j) as usize;
                (f.min(k), e.max(k + 1))
            });
            let w = (first.min(end), end);
            scanned = scanned.saturating_add(w.1 - w.0);
            if scanned > limit {
                // Permuted triplets pass the limit within a few blocks:
                // the rest of the lists need not be read.
                return false;
            }
            windows.push(w);
        }
        let threads = crate::threads::count(threads, self.triplets, 1 << 16);
        let Ok(mut map) = Map::skipping(self.triplets, threads) else {
            return false;
        };
        for e in 0..nnz {
            let (lo, hi) = (starts[e] as usize, starts[e + 1] as usize);
            for j in lo..hi {
                map.set(members.get(j) as usize, e, j == lo);
            }
        }
        self.layout = Layout::Scatter { nnz, map, windows };
        true
    }

    /// The gather plan as staged, if its values take at least
    /// `rules.stage_bytes` and are whole bytes, enough of its reads are far
    /// (`rules.stage_far`), and there is memory for the tables; else
    /// unchanged.
    fn staged(mut self, rules: Rules) -> Plan {
        let bytes = size::values_bytes(self.ty, self.triplets as u64).unwrap_or(u64::MAX);
        if self.ty.is_sub_byte() || bytes < rules.stage_bytes {
            return self;
        }
        let Layout::Gather { members, starts } = &mut self.layout else {
            return self;
        };
        if far_permille(members, starts) < rules.stage_far {
            return self;
        }
        let nnz = starts.len() - 1;
        let last = nnz.saturating_sub(1);
        let mut shift = rules.stage_shift;
        while last >> shift >= usize::from(UNSTAGED) {
            shift += 1;
        }
        let buckets = (last >> shift) + 1;
        let (mut bucket, mut bucket_starts) = (Vec::new(), Vec::new());
        if bucket.try_reserve_exact(self.triplets).is_err()
            || bucket_starts.try_reserve_exact(buckets + 1).is_err()
        {
            return self;
        }
        bucket.resize(self.triplets, UNSTAGED);
        bucket_starts.resize(buckets + 1, 0usize);
        // A bucket's entries are consecutive, so its members are one run.
        for b in 0..buckets {
            let first = starts[b << shift] as usize;
            let end = starts[((b + 1) << shift).min(nnz)] as usize;
            members.for_each(first..end, |k| bucket[k] = b as u8);
            bucket_starts[b + 1] = end;
        }
        let stage = Stage {
            bucket,
            bucket_starts,
            buffer: Mutex::new(Vec::new()),
        };
        // Fresh zeroed pages, written once (by `places`), not cleared first.
        let Some(mut place) = Members::zeroed(self.triplets, self.triplets) else {
            return self;
        };
        stage.places(|k, at| place.set(k, at as u64));
        members.remap(
            &place,
            crate::threads::count(rules.threads, members.len(), 1 << 16),
        );
        let (members, starts) = (std::mem::take(members), std::mem::take(starts));
        self.layout = Layout::Staged {
            stage,
            members,
            starts,
        };
        self
    }

    /// The same plan writing its entries in `order` (entry `order[k]`
    /// becomes output `k`): a CSC result's plan from the canonical one.
    pub(crate) fn reordered(&self, order: &[usize]) -> Result<Plan, CooError> {
        Ok(self.gathered(order)?.finish())
    }

    /// This plan's entries in `order`, as an unfinished gather plan.
    fn gathered(&self, order: &[usize]) -> Result<Plan, CooError> {
        let mut p = Plan::new(self.triplets, self.ty, self.dup, self.has_values, self.base)?;
        let (members, starts) = p.lists();
        starts
            .try_reserve_exact(order.len())
            .map_err(|_| alloc_error(order.len().saturating_mul(8)))?;
        match &self.layout {
            Layout::Gather {
                members: from,
                starts: at,
            } => {
                for &e in order {
                    let (lo, hi) = (at[e] as usize, at[e + 1] as usize);
                    members.extend((lo..hi).map(|k| from.get(k)));
                    starts.push(members.len() as u64);
                }
            }
            Layout::Staged {
                stage,
                members: from,
                starts: at,
            } => {
                let triplet = stage.triplets_by_place()?;
                for &e in order {
                    let (lo, hi) = (at[e] as usize, at[e + 1] as usize);
                    members.extend((lo..hi).map(|k| triplet.get(from.get(k) as usize)));
                    starts.push(members.len() as u64);
                }
            }
            Layout::Scatter { nnz, map, .. } => {
                // Counting sort of the mapped triplets by their new entry,
                // in triplet order within each.
                let mut to = Vec::new();
                to.try_reserve_exact(*nnz)
                    .map_err(|_| alloc_error(nnz.saturating_mul(8)))?;
                to.resize(*nnz, 0usize);
                for (k, &e) in order.iter().enumerate() {
                    to[e] = k;
                }
                starts.resize(nnz + 1, 0);
                let mut kept = 0usize;
                for k in 0..self.triplets {
                    if let Some((e, _)) = map.get(k) {
                        starts[to[e] + 1] += 1;
                        kept += 1;
                    }
                }
                for e in 0..*nnz {
                    starts[e + 1] += starts[e];
                }
                members.fill(kept);
                // `to[e]` becomes the next free place of entry `e`.
                for t in to.iter_mut() {
                    *t = starts[*t] as usize;
                }
                for k in 0..self.triplets {
                    if let Some((e, _)) = map.get(k) {
                        members.set(to[e], k as u64);
                        to[e] += 1;
                    }
                }
            }
        }
        Ok(p)
    }

    /// Number of triplets the plan was built from.
    pub fn triplets(&self) -> usize {
        self.triplets
    }

    /// Number of canonical entries.
    pub fn nnz(&self) -> usize {
        match &self.layout {
            Layout::Gather { starts, .. } | Layout::Staged { starts, .. } => starts.len() - 1,
            Layout::Scatter { nnz, .. } => *nnz,
        }
    }

    /// Element type of the values it takes and gives.
    pub fn type_tag(&self) -> u8 {
        self.ty.tag
    }

    /// Bytes of memory the plan holds.
    pub fn bytes(&self) -> usize {
        match &self.layout {
            Layout::Gather { members, starts } => members.bytes() + starts.len() * 8,
            Layout::Scatter { map, windows, .. } => map.bytes() + windows.len() * 16,
            Layout::Staged {
                stage,
                members,
                starts,
            } => members.bytes() + starts.len() * 8 + stage.bytes(self.ty.lookup_bytes()),
        }
    }

    /// Combine `values` (one per triplet, as at assembly) into `out` (one per
    /// canonical entry, in the canonical order, which for a rank-2 tensor is
    /// CSR's order). Allocates nothing but the threads' stacks and a staged
    /// plan's buffer (at its first call, or when another call holds it);
    /// every byte of `out` is written (on an error, what it holds is unspecified).
    /// With `threads > 1` the entries are split into contiguous ranges (at
    /// most one thread per 4096 entries; sub-byte types, whose elements
    /// share bytes, use one).
    pub fn apply(&self, values: &[u8], out: &mut [u8], threads: usize) -> Result<(), CooError> {
        if !self.has_values {
            return Err(CooError::Unsupported(
                "this plan was built from a pattern (no values): there is nothing to re-assemble"
                    .into(),
            ));
        }
        let nnz = self.nnz();
        for (buf, what, count, len) in [
            (
                "new triplet values",
                "triplets",
                self.triplets as u64,
                values.len(),
            ),
            (
                "the output values",
                "canonical entries",
                nnz as u64,
                out.len(),
            ),
        ] {
            let need = size::values_bytes(self.ty, count)?;
            if len as u64 != need {
                return Err(CooError::BufferSize {
                    buffer: buf,
                    got: len as u64,
                    expected: need,
                    expected_why: format!("{count} {what} of {}", self.ty.name()),
                });
            }
        }
        let entry_threads = if self.ty.is_sub_byte() {
            1
        } else {
            crate::threads::count(threads, nnz, BLOCK)
        };
        match &self.layout {
            Layout::Gather { members, starts } => {
                self.split(out, entry_threads, |mine, range| {
                    members.gather(self, starts, values, mine, range, None)
                })?
            }
            Layout::Scatter { map, windows, .. } => {
                self.split(out, entry_threads, |mine, range| {
                    // The union of the range's blocks' windows.
                    let (b0, b1) = (range.start / BLOCK, range.end.div_ceil(BLOCK));
                    let (lo, hi) = windows[b0..b1]
                        .iter()
                        .fold((usize::MAX, 0), |a, w| (a.0.min(w.0), a.1.max(w.1)));
                    map.scatter(self, values, mine, range, lo.min(hi)..hi)
                })?
            }
            Layout::Staged {
                stage,
                members,
                starts,
            } => {
                // The plan's buffer, or one of this call's own while another
                // call has it.
                let mut held = match stage.buffer.try_lock() {
                    Ok(g) => Some(g),
                    Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
                    Err(TryLockError::WouldBlock) => None,
                };
                let mut own = Vec::new();
                let buf = held.as_deref_mut().unwrap_or(&mut own);
                let staged = stage.fill(self.ty.lookup_bytes(), values, buf, threads)?;
                self.split(out, entry_threads, |mine, range| {
                    members.gather(self, starts, staged, mine, range, Some(stage))
                })?
            }
        }
        clear_padding(self.ty, out, nnz);
        Ok(())
    }

    /// `job` over `threads` contiguous entry ranges, each with its own part
    /// of `out` (see `cuts`); the first error in entry order.
    fn split(
        &self,
        out: &mut [u8],
        threads: usize,
        job: impl Fn(&mut [u8], Range<usize>) -> Result<(), CooError> + Sync,
    ) -> Result<(), CooError> {
        if threads == 1 {
            return job(out, 0..self.nnz());
        }
        let cuts = self.cuts(threads);
        let w = self.ty.lookup_bytes();
        let mut rest: &mut [u8] = out;
        let mut parts = Vec::new();
        for r in cuts.windows(2) {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut((r[1] - r[0]) * w);
            rest = tail;
            parts.push((mine, r[0]..r[1]));
        }
        crate::threads::run(parts, |_, (mine, range)| job(mine, range))
            .into_iter()
            .collect()
    }

    /// Where `threads` contiguous entry ranges start, and the end.
    fn cuts(&self, threads: usize) -> Vec<usize> {
        let nnz = self.nnz();
        let mut cuts = vec![0usize];
        match &self.layout {
            Layout::Gather { members, starts }
            | Layout::Staged {
                members, starts, ..
            } => {
                let total = members.len() as u64;
                for t in 1..threads {
                    let goal = total * t as u64 / threads as u64;
                    let e = starts.partition_point(|&s| s < goal).min(nnz);
                    cuts.push(e.max(*cuts.last().unwrap_or(&0)));
                }
            }
            Layout::Scatter { windows, .. } => {
                let blocks = windows.len();
                for t in 1..threads {
                    cuts.push((blocks * t / threads * BLOCK).min(nnz));
                }
            }
        }
        cuts.push(nnz);
        cuts
    }

    /// `acc` combined with a later contribution `x`; false on overflow.
    fn combine(&self, acc: &mut Storage, x: &Storage) -> bool {
        match self.dup {
            Duplicates::Sum => add(self.ty, acc, x).is_ok(),
            Duplicates::Min | Duplicates::Max => {
                if better(self.ty, self.dup == Duplicates::Max, acc, x) {
                    *acc = *x;
                }
                true
            }
            // FIRST, LAST and ERROR map one triplet per entry.
            _ => true,
        }
    }

    #[cold]
    fn overflow(&self, triplet: usize, entry: usize) -> CooError {
        let b = u64::from(self.base);
        CooError::ValueOverflow(format!(
            "re-assembly: the SUM of canonical entry {entry} overflows {} at triplet {}{}",
            self.ty.name(),
            triplet as u64 + b,
            counted_from(self.base)
        ))
    }
}

impl Stage {
    /// Number of staged triplets (those that make an entry).
    fn kept(&self) -> usize {
        self.bucket_starts.last().copied().unwrap_or(0)
    }

    /// Bytes of memory the tables and, once allocated, the buffer hold.
    fn bytes(&self, w: usize) -> usize {
        let buffer = match self.buffer.try_lock() {
            Ok(b) => b.len() * 8,
            Err(TryLockError::Poisoned(e)) => e.into_inner().len() * 8,
            Err(TryLockError::WouldBlock) => (self.kept() * w).next_multiple_of(8),
        };
        self.bucket.len() + self.bucket_starts.len() * 8 + buffer
    }

    /// The first step: `values` (of `w` bytes each, one per triplet) copied
    /// to their places in `buf` (made large enough), on up to `threads`
    /// threads that each take a contiguous run of triplets and, in every
    /// bucket's part, the places that run's triplets take.
    fn fill<'a>(
        &self,
        w: usize,
        values: &[u8],
        buf: &'a mut Vec<u64>,
        threads: usize,
    ) -> Result<&'a [u8], CooError> {
        let len = self.kept() * w;
        let words = len.div_ceil(8);
        if buf.len() < words {
            buf.clear();
            buf.try_reserve_exact(words).map_err(|_| CooError::Alloc {
                bytes: words.saturating_mul(8),
                what: "the re-assembly staging buffer",
            })?;
            buf.resize(words, 0);
        }
        let staged = &mut bytemuck::cast_slice_mut::<u64, u8>(buf)[..len];
        let n = self.bucket.len();
        let buckets = self.bucket_starts.len() - 1;
        let threads = crate::threads::count(threads, n, 1 << 16);
        let cut = |t: usize| n * t / threads;
        let counts: Vec<Vec<usize>> = if threads == 1 {
            vec![self.bucket_starts.windows(2).map(|s| s[1] - s[0]).collect()]
        } else {
            crate::threads::each(threads, |t| {
                let mut h = vec![0usize; buckets];
                for &b in &self.bucket[cut(t)..cut(t + 1)] {
                    if b != UNSTAGED {
                        h[usize::from(b)] += 1;
                    }
                }
                h
            })
        };
        // Bucket by bucket, each thread's places in turn.
        let mut regions: Vec<Vec<&mut [u8]>> = (0..threads).map(|_| Vec::new()).collect();
        let mut rest: &mut [u8] = &mut *staged;
        let lens = (0..buckets).flat_map(|b| counts.iter().map(move |c| c[b]));
        for (i, len) in lens.enumerate() {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(len * w);
            rest = tail;
            regions[i % threads].push(mine);
        }
        let parts: Vec<_> = regions
            .into_iter()
            .enumerate()
            .map(|(t, r)| (cut(t)..cut(t + 1), r))
            .collect();
        crate::threads::run(parts, |_, (run, mut regions)| {
            let bucket = &self.bucket[run.clone()];
            let values = &values[run.start * w..run.end * w];
            match w {
                1 => stage_run::<1>(bucket, values, &mut regions),
                2 => stage_run::<2>(bucket, values, &mut regions),
                4 => stage_run::<4>(bucket, values, &mut regions),
                8 => stage_run::<8>(bucket, values, &mut regions),
                16 => stage_run::<16>(bucket, values, &mut regions),
                _ => unreachable!("whole-byte elements are 1 to 16 bytes"),
            }
        });
        Ok(staged)
    }

    /// `f(triplet, place)` for each staged triplet, in triplet order: its
    /// place is in its bucket's part, after the bucket's earlier triplets.
    fn places(&self, mut f: impl FnMut(usize, usize)) {
        let mut next = self.bucket_starts.clone();
        for (k, &b) in self.bucket.iter().enumerate() {
            if b != UNSTAGED {
                f(k, next[usize::from(b)]);
                next[usize::from(b)] += 1;
            }
        }
    }

    /// Triplet numbers by place.
    fn triplets_by_place(&self) -> Result<Members, CooError> {
        let mut t = Members::with_room(self.bucket.len(), self.bucket.len())
            .map_err(|_| alloc_error(self.bucket.len().saturating_mul(8)))?;
        t.fill(self.kept());
        self.places(|k, at| t.set(at, k as u64));
        Ok(t)
    }

    /// The triplet at `place` (for an error message: a scan of the table).
    #[cold]
    fn triplet_at(&self, place: usize) -> usize {
        let b = self.bucket_starts.partition_point(|&s| s <= place) - 1;
        let r = place - self.bucket_starts[b];
        self.bucket
            .iter()
            .enumerate()
            .filter(|&(_, &x)| usize::from(x) == b)
            .nth(r)
            .map_or(place, |(k, _)| k)
    }
}

/// One thread's run of the first step: each value (of `W` bytes) to the
/// front of its bucket's region, which then starts after it.
fn stage_run<const W: usize>(bucket: &[u8], values: &[u8], regions: &mut [&mut [u8]]) {
    for (v, &b) in values.chunks_exact(W).zip(bucket) {
        if b != UNSTAGED {
            let r = &mut regions[usize::from(b)];
            let (head, tail) = std::mem::take(r).split_at_mut(W);
            head.copy_from_slice(v);
            *r = tail;
        }
    }
}

/// Entries `range` into `out`, which holds exactly those entries, entry by
/// entry: each from its members (places in `stage`'s buffer, which `values`
/// then is, when there is one).
fn gather<T: Member>(
    p: &Plan,
    members: &[T],
    starts: &[u64],
    values: &[u8],
    out: &mut [u8],
    range: Range<usize>,
    stage: Option<&Stage>,
) -> Result<(), CooError> {
    let first = range.start;
    let of = |e: usize| &members[starts[e] as usize..starts[e + 1] as usize];
    if p.ty.encoding == Encoding::F64 && p.dup == Duplicates::Sum {
        // Aligned buffers (the usual case: double arrays) are read and
        // written as f64 slices, which the compiler keeps in registers.
        if let (Ok(vals), Ok(outf)) = (
            bytemuck::try_cast_slice::<u8, f64>(values),
            bytemuck::try_cast_slice_mut::<u8, f64>(out),
        ) {
            // Native sums first; only when a sum is NaN can its bits depend
            // on how its addends were ordered, and then the range is summed
            // again through `sum_f64` (the defined bits).
            // (A macro, so that each pass has its addition inlined.)
            macro_rules! pass {
                ($add:expr) => {{
                    let mut nan = false;
                    for (o, e) in outf.iter_mut().zip(range.clone()) {
                        let m = of(e);
                        let mut s = vals[m[0].index()];
                        for &i in &m[1..] {
                            s = $add(s, vals[i.index()]);
                        }
                        // A sum is NaN when an addend is (or for infinities
                        // of opposite signs): one test per entry.
                        nan |= s.is_nan();
                        *o = s;
                    }
                    nan
                }};
            }
            if pass!(|a: f64, b: f64| a + b) {
                pass!(sum_f64);
            }
            return Ok(());
        }
    }
    let (mut acc, mut x) = ([0u8; 16], [0u8; 16]);
    for e in range {
        let m = of(e);
        copy_element(p.ty, values, m[0].index(), &mut acc);
        for &i in &m[1..] {
            copy_element(p.ty, values, i.index(), &mut x);
            if !p.combine(&mut acc, &x) {
                let triplet = stage.map_or(i.index(), |s| s.triplet_at(i.index()));
                return Err(p.overflow(triplet, e));
            }
        }
        store_element(p.ty, out, e - first, &acc);
    }
    Ok(())
}

/// Entries `range` into `out`, which holds exactly those entries, triplet
/// by triplet from `window` (which holds every triplet that goes to them):
/// an entry's first member writes it, later ones combine.
fn scatter<T: Slot>(
    p: &Plan,
    map: &[T],
    values: &[u8],
    out: &mut [u8],
    range: Range<usize>,
    window: Range<usize>,
) -> Result<(), CooError> {
    let lo = range.start;
    let len = range.len();
    if p.ty.encoding == Encoding::F64 && p.dup == Duplicates::Sum {
        // Aligned buffers (the usual case: double arrays) are read and
        // written as f64 slices.
        if let (Ok(vals), Ok(outf)) = (
            bytemuck::try_cast_slice::<u8, f64>(values),
            bytemuck::try_cast_slice_mut::<u8, f64>(out),
        ) {
            debug_assert_eq!(outf.len(), len);
            // Native sums first, and again through `sum_f64` only when a
            // value read is NaN (`gather` explains why).
            macro_rules! pass {
                ($add:expr) => {{
                    let mut nan = false;
                    for (&m, &v) in map[window.clone()].iter().zip(&vals[window.clone()]) {
                        // `outf` holds exactly the range's entries: one
                        // test passes over the others, SKIP's included
                        // (its entry is past every range).
                        if let Some(o) = outf.get_mut(m.entry().wrapping_sub(lo)) {
                            // The first member is copied, not added to a
                            // zero: bit for bit the first assembly's sum.
                            *o = if m.first() { v } else { $add(*o, v) };
                        }
                        nan |= v.is_nan();
                    }
                    nan
                }};
            }
            if pass!(|a: f64, b: f64| a + b) {
                pass!(sum_f64);
            }
            return Ok(());
        }
    }
    // Any type and policy, element by element. An overflow is kept, not
    // returned at once: the error to report is the lowest entry's, at the
    // first triplet where its running SUM overflows, as gather reports.
    let mut x = [0u8; 16];
    let mut overflow: Option<(usize, usize)> = None;
    for (k, &m) in map.iter().enumerate().take(window.end).skip(window.start) {
        let at = m.entry().wrapping_sub(lo);
        if at >= len {
            continue;
        }
        copy_element(p.ty, values, k, &mut x);
        if m.first() {
            store_element(p.ty, out, at, &x);
            continue;
        }
        let mut acc = [0u8; 16];
        copy_element(p.ty, out, at, &mut acc);
        if p.combine(&mut acc, &x) {
            store_element(p.ty, out, at, &acc);
        } else if overflow.is_none_or(|(e, _)| lo + at < e) {
            overflow = Some((lo + at, k));
        }
    }
    match overflow {
        Some((entry, triplet)) => Err(p.overflow(triplet, entry)),
        None => Ok(()),
    }
}

/// One triplet's place in a plan: its entry in the low bits and, in the top
/// bit, whether it is the entry's first member; all ones for none. 4 bytes
/// while the entries fit (halving what re-assembly reads), else 8.
trait Slot: Copy {
    const SKIP: Self;
    fn new(entry: usize, first: bool) -> Self;
    /// The entry (past every entry for `SKIP`).
    fn entry(self) -> usize;
    fn first(self) -> bool;
}

impl Slot for u32 {
    const SKIP: u32 = u32::MAX;
    fn new(entry: usize, first: bool) -> u32 {
        entry as u32 | u32::from(first) << 31
    }
    fn entry(self) -> usize {
        (self & !(1 << 31)) as usize
    }
    fn first(self) -> bool {
        self >> 31 != 0
    }
}

impl Slot for u64 {
    const SKIP: u64 = u64::MAX;
    fn new(entry: usize, first: bool) -> u64 {
        entry as u64 | u64::from(first) << 63
    }
    fn entry(self) -> usize {
        (self & !(1 << 63)) as usize
    }
    fn first(self) -> bool {
        self >> 63 != 0
    }
}

/// Triplet counts below this use 4-byte slots: every entry (at most one per
/// triplet) is then below `u32::SKIP`'s entry bits, `2^31 - 1`.
const NARROW_TRIPLETS: usize = (1 << 31) - 1;

#[derive(Debug)]
enum Map {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Map {
    /// `n` slots, each `SKIP`; narrow when every entry fits 31 bits. The
    /// slots are filled on `threads` threads, each its own part: on one, the
    /// fill (and the first touch of its fresh pages) was half the time of
    /// finishing a scatter plan.
    fn skipping(n: usize, threads: usize) -> Result<Map, CooError> {
        fn filled<T: Slot + bytemuck::Zeroable + Send>(
            n: usize,
            threads: usize,
        ) -> Result<Vec<T>, CooError> {
            let mut v: Vec<T> = zeroed_vec(n).ok_or(CooError::Alloc {
                bytes: n.saturating_mul(std::mem::size_of::<T>()),
                what: "the re-assembly plan",
            })?;
            let part = n.div_ceil(threads.max(1)).max(1);
            crate::threads::run(v.chunks_mut(part).collect(), |_, c: &mut [T]| {
                c.fill(T::SKIP)
            });
            Ok(v)
        }
        Ok(if n < NARROW_TRIPLETS {
            Map::Narrow(filled(n, threads)?)
        } else {
            Map::Wide(filled(n, threads)?)
        })
    }

    /// Triplet `k` goes to `entry`, as its first member or not.
    fn set(&mut self, k: usize, entry: usize, first: bool) {
        match self {
            Map::Narrow(v) => v[k] = u32::new(entry, first),
            Map::Wide(v) => v[k] = u64::new(entry, first),
        }
    }

    /// Triplet `k`'s entry and whether it is the first member; None for
    /// `SKIP`.
    fn get(&self, k: usize) -> Option<(usize, bool)> {
        match self {
            Map::Narrow(v) => (v[k] != u32::SKIP).then(|| (v[k].entry(), v[k].first())),
            Map::Wide(v) => (v[k] != u64::SKIP).then(|| (v[k].entry(), v[k].first())),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Map::Narrow(v) => v.len() * 4,
            Map::Wide(v) => v.len() * 8,
        }
    }

    fn scatter(
        &self,
        p: &Plan,
        values: &[u8],
        out: &mut [u8],
        range: Range<usize>,
        window: Range<usize>,
    ) -> Result<(), CooError> {
        match self {
            Map::Narrow(m) => scatter(p, m, values, out, range, window),
            Map::Wide(m) => scatter(p, m, values, out, range, window),
        }
    }
}

/// A triplet number in a plan: 4 bytes while they fit (halving the plan's
/// largest array and what re-assembly reads), else 8.
trait Member: Copy {
    fn index(self) -> usize;
}

impl Member for u32 {
    fn index(self) -> usize {
        self as usize
    }
}

impl Member for u64 {
    fn index(self) -> usize {
        self as usize
    }
}

/// One part of a plan under construction, built on its own thread (a range
/// of rows): its entries' members, in entry order, and where each entry
/// starts in them, then the end (a gather plan's lists, so that a lone
/// part is a whole plan's); [`Plan::joined`] joins the parts.
pub(super) struct PlanPiece {
    members: Members,
    starts: Vec<u64>,
}

impl PlanPiece {
    /// Room for `most` members (triplet numbers below `n`) and `entries`
    /// entries, reserved once; `Alloc` when it cannot be had.
    pub(super) fn with_room(n: usize, most: usize, entries: usize) -> Result<PlanPiece, CooError> {
        let members =
            Members::with_room(n, most).map_err(|_| alloc_error(most.saturating_mul(8)))?;
        let mut starts = Vec::new();
        starts
            .try_reserve_exact(entries.saturating_add(1))
            .map_err(|_| alloc_error(entries.saturating_add(1).saturating_mul(8)))?;
        starts.push(0);
        Ok(PlanPiece { members, starts })
    }

    /// The next entry, whose members are `kept` (triplet numbers below
    /// `n`, in triplet order).
    #[inline]
    pub(super) fn push(
        &mut self,
        kept: impl ExactSizeIterator<Item = u64>,
    ) -> Result<(), CooError> {
        let k = kept.len();
        self.members
            .try_reserve(k)
            .map_err(|_| alloc_error(k.saturating_mul(8)))?;
        self.members.extend(kept);
        self.starts
            .try_reserve(1)
            .map_err(|_| alloc_error(self.starts.len().saturating_add(1).saturating_mul(8)))?;
        self.starts.push(self.members.len() as u64);
        Ok(())
    }
}

/// A part of a [`Members`] list, written by one thread.
enum MembersMut<'a> {
    Narrow(&'a mut [u32]),
    Wide(&'a mut [u64]),
}

impl<'a> MembersMut<'a> {
    /// The first `k` numbers and the rest.
    fn split_at(self, k: usize) -> (MembersMut<'a>, MembersMut<'a>) {
        match self {
            MembersMut::Narrow(v) => {
                let (a, b) = v.split_at_mut(k);
                (MembersMut::Narrow(a), MembersMut::Narrow(b))
            }
            MembersMut::Wide(v) => {
                let (a, b) = v.split_at_mut(k);
                (MembersMut::Wide(a), MembersMut::Wide(b))
            }
        }
    }

    /// Each number `i` replaced by `to.get(i)`, as [`Members::remap`] says.
    /// One tight loop per pair of widths: with a width test per element,
    /// the loop kept fewer of its reads in flight (a staged plan's 11.5M
    /// members: 134-153 ms, against 77-110 so).
    fn remap(self, to: &Members) {
        match (self, to) {
            (MembersMut::Narrow(v), Members::Narrow(t)) => {
                v.iter_mut().for_each(|i| *i = t[*i as usize])
            }
            (MembersMut::Narrow(v), Members::Wide(t)) => {
                v.iter_mut().for_each(|i| *i = t[*i as usize] as u32)
            }
            (MembersMut::Wide(v), Members::Narrow(t)) => {
                v.iter_mut().for_each(|i| *i = u64::from(t[*i as usize]))
            }
            (MembersMut::Wide(v), Members::Wide(t)) => {
                v.iter_mut().for_each(|i| *i = t[*i as usize])
            }
        }
    }

    /// Every number from `from` (of the same length; a wide number into a
    /// narrow list keeps its low 32 bits, which never happens for lists
    /// over the same triplets: both are narrow or both wide).
    fn copy_from(self, from: &Members) {
        match (self, from) {
            (MembersMut::Narrow(v), Members::Narrow(f)) => v.copy_from_slice(f),
            (MembersMut::Wide(v), Members::Wide(f)) => v.copy_from_slice(f),
            (MembersMut::Narrow(v), Members::Wide(f)) => {
                v.iter_mut().zip(f).for_each(|(x, &i)| *x = i as u32)
            }
            (MembersMut::Wide(v), Members::Narrow(f)) => {
                v.iter_mut().zip(f).for_each(|(x, &i)| *x = u64::from(i))
            }
        }
    }
}

#[derive(Debug)]
enum Members {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Default for Members {
    fn default() -> Members {
        Members::Narrow(Vec::new())
    }
}

impl Members {
    /// Room for `most` numbers below `n`, narrow when `n` allows.
    fn with_room(n: usize, most: usize) -> Result<Members, std::collections::TryReserveError> {
        Ok(if n <= u32::MAX as usize {
            let mut v = Vec::new();
            v.try_reserve_exact(most)?;
            Members::Narrow(v)
        } else {
            let mut v = Vec::new();
            v.try_reserve_exact(most)?;
            Members::Wide(v)
        })
    }

    /// Room for more `k` numbers.
    fn try_reserve(&mut self, k: usize) -> Result<(), std::collections::TryReserveError> {
        match self {
            Members::Narrow(v) => v.try_reserve(k),
            Members::Wide(v) => v.try_reserve(k),
        }
    }

    /// `len` zeroed triplet numbers below `n` (narrow when `n` allows), or
    /// `None` when the memory cannot be had.
    fn zeroed(n: usize, len: usize) -> Option<Members> {
        Some(if n <= u32::MAX as usize {
            Members::Narrow(zeroed_vec(len)?)
        } else {
            Members::Wide(zeroed_vec(len)?)
        })
    }

    /// The whole list, to be cut into parts written at once.
    fn chunks(&mut self) -> MembersMut<'_> {
        match self {
            Members::Narrow(v) => MembersMut::Narrow(v),
            Members::Wide(v) => MembersMut::Wide(v),
        }
    }

    /// Triplet number `k`.
    fn get(&self, k: usize) -> u64 {
        match self {
            Members::Narrow(v) => u64::from(v[k]),
            Members::Wide(v) => v[k],
        }
    }

    fn len(&self) -> usize {
        match self {
            Members::Narrow(v) => v.len(),
            Members::Wide(v) => v.len(),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Members::Narrow(v) => v.len() * 4,
            Members::Wide(v) => v.len() * 8,
        }
    }

    fn gather(
        &self,
        p: &Plan,
        starts: &[u64],
        values: &[u8],
        out: &mut [u8],
        range: Range<usize>,
        stage: Option<&Stage>,
    ) -> Result<(), CooError> {
        match self {
            Members::Narrow(m) => gather(p, m, starts, values, out, range, stage),
            Members::Wide(m) => gather(p, m, starts, values, out, range, stage),
        }
    }

    /// Make the list `n` long (within the capacity `with_capacity` gave),
    /// for `set` to fill.
    fn fill(&mut self, n: usize) {
        match self {
            Members::Narrow(v) => v.resize(n, 0),
            Members::Wide(v) => v.resize(n, 0),
        }
    }

    /// Place `k` holds triplet number `i`.
    fn set(&mut self, k: usize, i: u64) {
        match self {
            Members::Narrow(v) => v[k] = i as u32,
            Members::Wide(v) => v[k] = i,
        }
    }

    /// `f(i)` for each number `i` in `range` of the list, in order (one
    /// tight loop per width: these run over every triplet of a plan).
    fn for_each(&self, range: Range<usize>, mut f: impl FnMut(usize)) {
        match self {
            Members::Narrow(v) => v[range].iter().for_each(|&i| f(i as usize)),
            Members::Wide(v) => v[range].iter().for_each(|&i| f(i as usize)),
        }
    }

    /// Replace each number `i` by `to.get(i)` (numbers below `to.len()`,
    /// and `to`'s values fit this list's width: both count the same
    /// triplets), the list cut into `threads` parts, one per thread: its
    /// reads of `to` fall anywhere, so each thread adds misses in flight.
    fn remap(&mut self, to: &Members, threads: usize) {
        let threads = threads.max(1);
        let len = self.len();
        let mut rest = self.chunks();
        let mut parts = Vec::with_capacity(threads);
        for k in 0..threads {
            let (part, tail) = rest.split_at(len * (k + 1) / threads - len * k / threads);
            parts.push(part);
            rest = tail;
        }
        crate::threads::run(parts, |_, part| part.remap(to));
    }

    /// Append triplet numbers (below the plan's triplet count, so they fit
    /// a narrow list).
    fn extend(&mut self, it: impl Iterator<Item = u64>) {
        match self {
            Members::Narrow(v) => v.extend(it.map(|i| i as u32)),
            Members::Wide(v) => v.extend(it),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The two layouts are two ways to do one thing: forced onto the same
    //! plans, they must give the same bytes and the same errors, and
    //! reordering either must give the same lists.
    use super::super::{assemble, AssembleOptions, CoordArrays, IndexType, Triplets};
    use super::*;

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// Bytes of `len` in an 8-aligned buffer (the f64 path's case).
    fn aligned(len: usize) -> Vec<u64> {
        vec![0u64; len.div_ceil(8)]
    }

    fn lists(p: &Plan) -> (Vec<u64>, Vec<u64>) {
        match &p.layout {
            Layout::Gather { members, starts } => (
                (0..members.len()).map(|k| members.get(k)).collect(),
                starts.clone(),
            ),
            _ => panic!("not a gather plan"),
        }
    }

    /// Rules that stage whatever the gather's reads are like.
    fn forced(scatter_limit: usize, stage_bytes: u64, stage_shift: u32) -> Rules {
        Rules {
            scatter_limit,
            stage_bytes,
            stage_far: 0,
            stage_shift,
            threads: 2,
        }
    }

    /// One random case: triplets in entry order (local) or shuffled.
    fn round(rng: &mut Rng, round: usize, large: bool) {
        let (rows, cols) = if large {
            (300, 300)
        } else {
            (1 + rng.below(12), 1 + rng.below(12))
        };
        let n = if large {
            40_000
        } else {
            rng.below(60) as usize
        };
        let mut coords: Vec<[u64; 2]> =
            (0..n).map(|_| [rng.below(rows), rng.below(cols)]).collect();
        let local = rng.below(2) == 0;
        if local {
            coords.sort();
        }
        let (tag, dup) = match rng.below(7) {
            0 => (0x04, Duplicates::Sum),
            1 => (0x10, Duplicates::Sum), // int8: overflows often
            2 => (0x14, Duplicates::Sum),
            3 => (0x04, Duplicates::Min),
            4 => (0x12, Duplicates::Max),
            5 => (0x49, Duplicates::Max), // uint4: sub-byte
            _ => (
                0x04,
                [Duplicates::First, Duplicates::Last][rng.below(2) as usize],
            ),
        };
        let ty = crate::element::types::type_info(tag).expect("known type");
        let bytes = size::values_bytes(ty, n as u64).unwrap() as usize;
        let fill = |rng: &mut Rng| -> Vec<u64> {
            let mut b = aligned(bytes);
            let view: &mut [u8] = bytemuck::cast_slice_mut(&mut b);
            for k in 0..n {
                let x = if tag == 0x04 && rng.below(8) == 0 {
                    // A NaN of either sign, quiet or signalling, with a
                    // payload of its own: a NaN sum's bits are defined.
                    let payload = 1 + rng.below((1 << 52) - 1);
                    (rng.below(2) << 63 | 0x7FF << 52 | payload).to_le_bytes()
                } else if tag == 0x04 {
                    ((rng.below(64) as f64 - 32.0) / 8.0).to_le_bytes()
                } else {
                    rng.below(256).to_le_bytes()
                };
                store_element(ty, view, k, &x);
            }
            clear_padding(ty, view, n);
            b
        };
        let first = fill(rng);
        let flat: Vec<u8> = coords
            .iter()
            .flatten()
            .flat_map(|c| c.to_le_bytes())
            .collect();
        let shape = [rows, cols];
        let t = Triplets {
            shape: &shape,
            n,
            index_type: IndexType::U64,
            base: 0,
            coords: CoordArrays::Interleaved(&flat),
            type_tag: tag,
            values: Some(&bytemuck::cast_slice(&first)[..bytes]),
        };
        let o = AssembleOptions {
            duplicates: dup,
            drop_zeros: rng.below(3) == 0,
            threads: 1 + rng.below(2) as usize,
            ..AssembleOptions::default()
        };
        let Ok((coo, Some(plan))) = assemble(&t, &o) else {
            return; // an overflow at the first assembly
        };
        let nnz = plan.nnz();
        let identity: Vec<usize> = (0..nnz).collect();
        let gather = plan.gathered(&identity).unwrap();
        let scatter = plan.gathered(&identity).unwrap().finish_within(forced(
            usize::MAX,
            u64::MAX,
            STAGE_SHIFT,
        ));
        assert!(
            matches!(scatter.layout, Layout::Scatter { .. }),
            "round {round}"
        );
        // Staged in buckets of 2 to 16 entries (as many buckets as there
        // may be); sub-byte types stay gather, and no entries are scatter.
        let shift = 1 + rng.below(4) as u32;
        let staged = plan
            .gathered(&identity)
            .unwrap()
            .finish_within(forced(0, 0, shift));
        assert_eq!(
            matches!(staged.layout, Layout::Staged { .. }),
            !ty.is_sub_byte() && nnz > 0,
            "round {round}"
        );
        // Locally ordered triplets are scatter by themselves.
        if local {
            assert!(
                matches!(plan.layout, Layout::Scatter { .. }),
                "round {round}"
            );
        }
        // The same lists back from either layout, in any order.
        let mut perm = identity.clone();
        for i in (1..nnz).rev() {
            perm.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let want = lists(&gather.gathered(&perm).unwrap());
        assert_eq!(
            want,
            lists(&scatter.gathered(&perm).unwrap()),
            "round {round}"
        );
        assert_eq!(
            want,
            lists(&staged.gathered(&perm).unwrap()),
            "round {round}"
        );
        let out_bytes = coo.values().len();
        for (values, is_first) in [(first, true), (fill(rng), false)] {
            let values = &bytemuck::cast_slice(&values)[..bytes];
            for threads in 1..=3 {
                let run = |p: &Plan| {
                    let mut out = aligned(out_bytes);
                    let r = p.apply(
                        values,
                        &mut bytemuck::cast_slice_mut(&mut out)[..out_bytes],
                        threads,
                    );
                    (r.map_err(|e| e.to_string()), out)
                };
                let g = run(&gather);
                // The first values re-assemble to the assembly's, bit for
                // bit (NaN payloads included).
                if is_first {
                    assert_eq!(g.0, Ok(()), "round {round}");
                    let got: &[u8] = bytemuck::cast_slice(&g.1);
                    assert_eq!(&got[..out_bytes], coo.values(), "round {round}: gather");
                }
                // Twice staged: the second reuses the plan's buffer.
                for (other, what) in [
                    (run(&scatter), "scatter"),
                    (run(&staged), "staged"),
                    (run(&staged), "staged again"),
                ] {
                    assert_eq!(
                        g.0, other.0,
                        "round {round}, {threads} threads: {what} errors"
                    );
                    if g.0.is_ok() {
                        assert_eq!(g.1, other.1, "round {round}, {threads} threads: {what}");
                    }
                }
            }
        }
    }

    /// Calls that share a staged plan at once (all but one stage into
    /// buffers of their own) give what one call alone gives.
    #[test]
    fn a_staged_plan_serves_calls_at_once() {
        let n = 200_000usize;
        let mut rng = Rng(7);
        let coords: Vec<u64> = (0..2 * n).map(|_| rng.below(400)).collect();
        let flat: Vec<u8> = coords.iter().flat_map(|c| c.to_le_bytes()).collect();
        let values: Vec<f64> = (0..n).map(|k| (k % 97) as f64 - 40.5).collect();
        let t = Triplets {
            shape: &[400, 400],
            n,
            index_type: IndexType::U64,
            base: 0,
            coords: CoordArrays::Interleaved(&flat),
            type_tag: 0x04,
            values: Some(bytemuck::cast_slice(&values)),
        };
        let o = AssembleOptions {
            duplicates: Duplicates::Sum,
            ..AssembleOptions::default()
        };
        let (coo, plan) = assemble(&t, &o).unwrap();
        let plan = plan
            .unwrap()
            .gathered(&(0..coo.nnz() as usize).collect::<Vec<_>>())
            .unwrap();
        let plan = plan.finish_within(forced(0, 0, 10));
        assert!(matches!(plan.layout, Layout::Staged { .. }));
        let want = coo.values().to_vec();
        std::thread::scope(|s| {
            for threads in [1, 2, 1, 3] {
                let (plan, want, values) = (&plan, &want, &values);
                s.spawn(move || {
                    for _ in 0..20 {
                        let mut out = vec![0f64; want.len() / 8];
                        plan.apply(
                            bytemuck::cast_slice(values),
                            bytemuck::cast_slice_mut(&mut out),
                            threads,
                        )
                        .unwrap();
                        assert_eq!(bytemuck::cast_slice::<f64, u8>(&out), &want[..]);
                    }
                });
            }
        });
    }

    /// A fresh scatter map skips every triplet, whatever the thread count
    /// that filled it (parts of unequal length included).
    #[test]
    fn a_fresh_map_skips_every_triplet() {
        for n in [0usize, 1, 5, 100_003] {
            for threads in 1..=4 {
                let map = Map::skipping(n, threads).unwrap();
                assert!(
                    (0..n).all(|k| map.get(k).is_none()),
                    "{n} slots, {threads} threads"
                );
                let len = match &map {
                    Map::Narrow(v) => v.len(),
                    Map::Wide(v) => v.len(),
                };
                assert_eq!(len, n);
            }
        }
    }

    /// `Members::remap` on 1 to 4 threads gives what a plain loop gives
    /// (the oracle), for every pair of widths and for lists shorter than
    /// the thread count.
    #[test]
    fn remapping_on_threads_matches_a_plain_loop() {
        let to_narrow: Vec<u32> = (0..1000u32)
            .map(|i| i.wrapping_mul(2_654_435_761) % 5000)
            .collect();
        let to_wide: Vec<u64> = to_narrow.iter().map(|&x| u64::from(x) << 20).collect();
        for len in [0usize, 1, 3, 999] {
            let from: Vec<u64> = (0..len as u64).map(|j| j * 7 % 1000).collect();
            for threads in 1..=4 {
                for (to, want) in [
                    (
                        Members::Narrow(to_narrow.clone()),
                        from.iter()
                            .map(|&i| u64::from(to_narrow[i as usize]))
                            .collect::<Vec<_>>(),
                    ),
                    (
                        Members::Wide(to_wide.clone()),
                        from.iter().map(|&i| to_wide[i as usize]).collect(),
                    ),
                ] {
                    for wide in [false, true] {
                        let mut m = match wide {
                            false => Members::Narrow(from.iter().map(|&i| i as u32).collect()),
                            true => Members::Wide(from.clone()),
                        };
                        m.remap(&to, threads);
                        let got: Vec<u64> = (0..m.len()).map(|k| m.get(k)).collect();
                        // A narrow list keeps the low 32 bits of a wide number.
                        let want: Vec<u64> = match wide {
                            false => want.iter().map(|&x| x & 0xFFFF_FFFF).collect(),
                            true => want.clone(),
                        };
                        assert_eq!(got, want, "len {len}, {threads} threads, wide {wide}");
                    }
                }
            }
        }
    }

    /// `Plan::joined` gives every piece's entries in order (the oracle:
    /// the groups' members one after another, and each entry's end), for
    /// narrow and wide triplet numbers, with empty pieces and entries of
    /// several members.
    #[test]
    fn joined_pieces_are_the_entries_in_order() {
        let f64 = crate::element::types::type_info(0x04).expect("float64");
        // Entry e has e % 3 + 1 members, numbered down from n.
        for n in [1000usize, u32::MAX as usize + 7] {
            let groups: Vec<Vec<usize>> = (0..40)
                .map(|e| (0..e % 3 + 1).map(|j| n - 1 - 3 * e - j).collect())
                .collect();
            // The oracle: every group's members in order, and each end.
            let want_m: Vec<u64> = groups.iter().flatten().map(|&i| i as u64).collect();
            let mut want_s = vec![0u64];
            for g in &groups {
                want_s.push(want_s[want_s.len() - 1] + g.len() as u64);
            }
            // One piece of all 40 entries (taken as it is), or pieces of 0,
            // 7, 0, 20 and 13 entries (copied in); with less room than they
            // take in the first two (they grow).
            for lens in [vec![40], vec![0, 7, 0, 20, 13]] {
                let mut pieces = Vec::new();
                let mut e = 0;
                for (k, len) in lens.iter().copied().enumerate() {
                    let room = if k < 2 { len / 2 } else { 3 * len };
                    let mut p = PlanPiece::with_room(n, room, room).unwrap();
                    for g in &groups[e..e + len] {
                        p.push(g.iter().map(|&i| i as u64)).unwrap();
                    }
                    pieces.push(p);
                    e += len;
                }
                let mut got = Plan::joined(n, f64, Duplicates::Sum, 0, pieces).unwrap();
                let (gm, gs) = got.lists();
                assert_eq!(matches!(gm, Members::Wide(_)), n > u32::MAX as usize);
                let gm: Vec<u64> = (0..gm.len()).map(|k| gm.get(k)).collect();
                assert_eq!(gm, want_m, "n = {n}, pieces {lens:?}");
                assert_eq!(*gs, want_s, "n = {n}, pieces {lens:?}");
            }
        }
    }

    /// Whether a plan of `nnz` float64 entries of two members each, the
    /// members of entry `e` being `members(e)`, finishes staged (by the
    /// default rules); it is never scatter.
    fn finishes_staged(nnz: usize, members: impl Fn(usize) -> [u64; 2]) -> bool {
        let f64 = crate::element::types::type_info(0x04).expect("float64");
        let mut piece = PlanPiece::with_room(2 * nnz, 2 * nnz, nnz).unwrap();
        for e in 0..nnz {
            piece.push(members(e).into_iter()).unwrap();
        }
        let plan = Plan::joined(2 * nnz, f64, Duplicates::Sum, 0, vec![piece]).unwrap();
        let plan = plan.finish();
        assert!(!matches!(plan.layout, Layout::Scatter { .. }));
        matches!(plan.layout, Layout::Staged { .. })
    }

    /// Values far past cache are staged only when the gather would read
    /// them at random: triplets from two ordered sources side by side (two
    /// ranks' element orders) stay gather, the same triplets permuted are
    /// staged.
    #[test]
    fn staging_waits_for_scattered_reads() {
        let nnz = 600_000; // 9.6 MB of float64 values
        assert!(STAGE_BYTES < 16 * nnz as u64);
        let n = 2 * nnz as u64;
        assert!(!finishes_staged(nnz, |e| [e as u64, n / 2 + e as u64]));
        // A permutation of the triplets (an odd multiplier modulo 2^k, over
        // the n triplets below 2^21 and a cycle-walk past them).
        let permute = |mut k: u64| loop {
            k = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1) ^ 0x5DEECE66D) & ((1 << 21) - 1);
            if k < n {
                return k;
            }
        };
        assert!(finishes_staged(nnz, |e| {
            let (a, b) = (permute(e as u64), permute(n / 2 + e as u64));
            [a.min(b), a.max(b)]
        }));
    }

    #[test]
    fn layouts_agree() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for r in 0..3000 {
            round(&mut rng, r, false);
        }
        for r in 0..24 {
            round(&mut rng, r, true);
        }
    }
}
