//! The re-assembly plan (PETSc's `MatSetPreallocationCOO` /
//! `MatSetValuesCOO`): built once with the canonical tensor, it records
//! which triplets make each canonical entry, so a new values array of the
//! same triplets becomes the canonical values with no sort and no
//! allocation, combined by the same policy in the same order as the first
//! assembly.
//!
//! It holds one of two layouts, chosen when it is finished:
//! - *scatter*, for triplets whose order follows the entries' (finite
//!   element assembly, sorted input): for each triplet its entry, flagged
//!   when it is the entry's first member. Re-assembly reads the values once,
//!   in sequence, and combines each into its entry; the first member writes
//!   it, so no pass clears the output. 4 bytes per triplet.
//! - *gather*, for triplets in no such order: for each entry the triplets
//!   that make it. Re-assembly writes the entries in sequence and reads the
//!   values where they lie. 4 bytes per triplet and 8 per entry.
//!
//! Either way each entry sees its members in triplet order, as the first
//! assembly combined them, and threads own contiguous ranges of entries, so
//! no two write one entry. A scatter thread reads only the window of
//! triplets that go to its entries; the plan is scatter only when those
//! windows add up to a few passes over the triplets.

use super::combine::{add, better, Storage};
use super::Duplicates;
use crate::element::decode::copy_element;
use crate::element::encode::{clear_padding, store_element};
use crate::element::size;
use crate::element::types::{Encoding, TypeInfo};
use crate::error::counted_from;
use crate::error::CooError;
use std::ops::Range;

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
}

/// Entries per window, and the least a thread is given.
const BLOCK: usize = 4096;

/// A plan is scatter when its windows add up to at most this many passes
/// over the triplets (finite element meshes in element order: about 1.1;
/// permuted triplets: one pass per block).
const SCATTER_PASSES: usize = 3;

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
        let members = Members::with_capacity(n).map_err(|_| alloc_error(n.saturating_mul(8)))?;
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
            Layout::Scatter { .. } => unreachable!("a finished plan is not extended"),
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

    /// Append a run of entries: their contributing triplets, and each
    /// entry's end in `members`.
    pub(super) fn append(&mut self, more: &[u64], ends: &[u64]) -> Result<(), CooError> {
        let (members, starts) = self.lists();
        let base = members.len() as u64;
        members
            .try_reserve(more.len())
            .map_err(|_| alloc_error(more.len() * 8))?;
        members.extend(more.iter().copied());
        starts
            .try_reserve(ends.len())
            .map_err(|_| alloc_error(ends.len() * 8))?;
        starts.extend(ends.iter().map(|&e| base + e));
        Ok(())
    }

    /// The plan with its layout chosen: scatter when the triplets follow
    /// the entries closely enough, gather otherwise (and when there is no
    /// memory for the scatter map, or nothing to re-assemble).
    pub(super) fn finish(self) -> Plan {
        let passes = SCATTER_PASSES.saturating_mul(self.triplets);
        self.finish_within(passes)
    }

    /// `finish`, scatter when the windows add up to at most `limit`
    /// triplets.
    fn finish_within(mut self, limit: usize) -> Plan {
        let Layout::Gather { members, starts } = &self.layout else {
            return self;
        };
        if !self.has_values {
            return self;
        }
        let nnz = starts.len() - 1;
        let blocks = nnz.div_ceil(BLOCK);
        let mut windows = Vec::new();
        if windows.try_reserve_exact(blocks).is_err() {
            return self;
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
            windows.push(w);
        }
        if scanned > limit {
            return self;
        }
        let Ok(mut map) = Map::skipping(self.triplets) else {
            return self;
        };
        for e in 0..nnz {
            let (lo, hi) = (starts[e] as usize, starts[e + 1] as usize);
            for j in lo..hi {
                map.set(members.get(j) as usize, e, j == lo);
            }
        }
        self.layout = Layout::Scatter { nnz, map, windows };
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
            Layout::Gather { starts, .. } => starts.len() - 1,
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
        }
    }

    /// Combine `values` (one per triplet, as at assembly) into `out` (one per
    /// canonical entry, in the canonical order, which for a rank-2 tensor is
    /// CSR's order). Allocates nothing but the threads' stacks; every byte
    /// of `out` is written (on an error, what it holds is unspecified).
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
        let threads = if self.ty.is_sub_byte() {
            1
        } else {
            crate::threads::count(threads, nnz, BLOCK)
        };
        if threads == 1 {
            match &self.layout {
                Layout::Gather { members, starts } => {
                    members.gather(self, starts, values, out, 0..nnz)?
                }
                Layout::Scatter { map, .. } => {
                    map.scatter(self, values, out, 0..nnz, 0..self.triplets)?
                }
            }
            clear_padding(self.ty, out, nnz);
            return Ok(());
        }
        // Contiguous entry ranges, each with its own part of `out`: of
        // about equal member counts (gather), or of whole blocks, with the
        // window of triplets that go to them (scatter).
        let cuts = self.cuts(threads);
        let w = self.ty.lookup_bytes();
        let mut rest: &mut [u8] = out;
        let mut parts = Vec::new();
        for r in cuts.windows(2) {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut((r[1] - r[0]) * w);
            rest = tail;
            parts.push((mine, r[0]..r[1]));
        }
        // The first error in entry order.
        crate::threads::run(parts, |_, (mine, range)| match &self.layout {
            Layout::Gather { members, starts } => members.gather(self, starts, values, mine, range),
            Layout::Scatter { map, windows, .. } => {
                let (b0, b1) = (range.start / BLOCK, range.end.div_ceil(BLOCK));
                let (lo, hi) = windows[b0..b1]
                    .iter()
                    .fold((usize::MAX, 0), |a, w| (a.0.min(w.0), a.1.max(w.1)));
                map.scatter(self, values, mine, range, lo.min(hi)..hi)
            }
        })
        .into_iter()
        .collect()
    }

    /// Where `threads` contiguous entry ranges start, and the end.
    fn cuts(&self, threads: usize) -> Vec<usize> {
        let nnz = self.nnz();
        let mut cuts = vec![0usize];
        match &self.layout {
            Layout::Gather { members, starts } => {
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

/// Entries `range` into `out`, which holds exactly those entries, entry by
/// entry: each from its members.
fn gather<T: Member>(
    p: &Plan,
    members: &[T],
    starts: &[u64],
    values: &[u8],
    out: &mut [u8],
    range: Range<usize>,
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
            for (o, e) in outf.iter_mut().zip(range) {
                let m = of(e);
                let mut s = vals[m[0].index()];
                for &i in &m[1..] {
                    s += vals[i.index()];
                }
                *o = s;
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
                return Err(p.overflow(i.index(), e));
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
            for (&m, &v) in map[window.clone()].iter().zip(&vals[window]) {
                // SKIP's entry is past every range, so it is passed over.
                let at = m.entry().wrapping_sub(lo);
                if at < len {
                    let o = &mut outf[at];
                    // The first member is copied, not added to a zero: bit
                    // for bit the first assembly's sum.
                    *o = if m.first() { v } else { *o + v };
                }
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
    /// `n` slots, each `SKIP`; narrow when every entry fits 31 bits.
    fn skipping(n: usize) -> Result<Map, CooError> {
        fn filled<T: Slot>(n: usize) -> Result<Vec<T>, CooError> {
            let mut v = Vec::new();
            v.try_reserve_exact(n).map_err(|_| CooError::Alloc {
                bytes: n.saturating_mul(std::mem::size_of::<T>()),
                what: "the re-assembly plan",
            })?;
            v.resize(n, T::SKIP);
            Ok(v)
        }
        Ok(if n < NARROW_TRIPLETS {
            Map::Narrow(filled(n)?)
        } else {
            Map::Wide(filled(n)?)
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

#[derive(Debug)]
enum Members {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Members {
    /// Room for `n` triplet numbers, narrow when every number fits 32 bits.
    fn with_capacity(n: usize) -> Result<Members, std::collections::TryReserveError> {
        Ok(if n <= u32::MAX as usize {
            let mut v = Vec::new();
            v.try_reserve_exact(n)?;
            Members::Narrow(v)
        } else {
            let mut v = Vec::new();
            v.try_reserve_exact(n)?;
            Members::Wide(v)
        })
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
    ) -> Result<(), CooError> {
        match self {
            Members::Narrow(m) => gather(p, m, starts, values, out, range),
            Members::Wide(m) => gather(p, m, starts, values, out, range),
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

    fn try_reserve(&mut self, n: usize) -> Result<(), std::collections::TryReserveError> {
        match self {
            Members::Narrow(v) => v.try_reserve(n),
            Members::Wide(v) => v.try_reserve(n),
        }
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
            Layout::Scatter { .. } => panic!("not a gather plan"),
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
                let x = if tag == 0x04 {
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
        let scatter = plan.gathered(&identity).unwrap().finish_within(usize::MAX);
        assert!(
            matches!(scatter.layout, Layout::Scatter { .. }),
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
        assert_eq!(
            lists(&gather.gathered(&perm).unwrap()),
            lists(&scatter.gathered(&perm).unwrap()),
            "round {round}"
        );
        let out_bytes = coo.values().len();
        for values in [first, fill(rng)] {
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
                let (g, s) = (run(&gather), run(&scatter));
                assert_eq!(g.0, s.0, "round {round}, {threads} threads: errors");
                if g.0.is_ok() {
                    assert_eq!(g.1, s.1, "round {round}, {threads} threads: values");
                }
            }
        }
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
