//! The re-assembly plan (PETSc's `MatSetPreallocationCOO` /
//! `MatSetValuesCOO`): built once with the canonical tensor, it lists for
//! every canonical entry the triplets that make it, so a new values array of
//! the same triplets becomes the canonical values with no sort and no
//! allocation, combined by the same policy in the same order as the first
//! assembly, and entries split between threads never share an output.

use super::combine::{add, better, Storage};
use super::Duplicates;
use crate::element::decode::copy_element;
use crate::element::encode::{clear_padding, store_element};
use crate::element::size;
use crate::element::types::{Encoding, TypeInfo};
use crate::error::counted_from;
use crate::error::CooError;

/// Maps each canonical entry to the triplets that make it.
#[derive(Debug)]
pub struct Plan {
    ty: &'static TypeInfo,
    dup: Duplicates,
    has_values: bool,
    base: u8,
    /// Number of triplets the plan was built from.
    triplets: usize,
    /// The contributing triplets, entry by entry, each entry's in triplet
    /// order (FIRST and LAST keep one per entry).
    members: Members,
    /// Entry `e` is made of `members[starts[e]..starts[e + 1]]`.
    starts: Vec<u64>,
}

impl Plan {
    pub(super) fn new(
        n: usize,
        ty: &'static TypeInfo,
        dup: Duplicates,
        has_values: bool,
        base: u8,
    ) -> Result<Plan, CooError> {
        let alloc = |bytes: usize| CooError::Alloc {
            bytes,
            what: "the re-assembly plan",
        };
        let members = Members::with_capacity(n).map_err(|_| alloc(n.saturating_mul(8)))?;
        let mut starts = Vec::new();
        starts
            .try_reserve(n.min(1 << 20) + 1)
            .map_err(|_| alloc(n.saturating_mul(8)))?;
        starts.push(0);
        Ok(Plan {
            ty,
            dup,
            has_values,
            base,
            triplets: n,
            members,
            starts,
        })
    }

    /// Record that the triplets `group` (in triplet order) make the next
    /// entry.
    pub(super) fn map_group(&mut self, group: &[usize]) -> Result<(), CooError> {
        let kept: &[usize] = match self.dup {
            Duplicates::First | Duplicates::Error => &group[..1],
            Duplicates::Last => &group[group.len() - 1..],
            Duplicates::Sum | Duplicates::Min | Duplicates::Max => group,
        };
        self.members.extend(kept.iter().map(|&i| i as u64));
        self.starts.try_reserve(1).map_err(|_| CooError::Alloc {
            bytes: self.starts.len().saturating_mul(16),
            what: "the re-assembly plan",
        })?;
        self.starts.push(self.members.len() as u64);
        Ok(())
    }

    /// Append a run of entries: their contributing triplets, and each
    /// entry's end in `members`.
    pub(super) fn append(&mut self, members: &[u64], ends: &[u64]) -> Result<(), CooError> {
        let base = self.members.len() as u64;
        let grow = |bytes: usize| CooError::Alloc {
            bytes,
            what: "the re-assembly plan",
        };
        self.members
            .try_reserve(members.len())
            .map_err(|_| grow(members.len() * 8))?;
        self.members.extend(members.iter().copied());
        self.starts
            .try_reserve(ends.len())
            .map_err(|_| grow(ends.len() * 8))?;
        self.starts.extend(ends.iter().map(|&e| base + e));
        Ok(())
    }

    /// The same plan writing its entries in `order` (entry `order[k]`
    /// becomes output `k`): a CSC result's plan from the canonical one.
    pub(crate) fn reordered(&self, order: &[usize]) -> Result<Plan, CooError> {
        let mut p = Plan::new(self.triplets, self.ty, self.dup, self.has_values, self.base)?;
        p.starts
            .try_reserve_exact(order.len())
            .map_err(|_| CooError::Alloc {
                bytes: order.len().saturating_mul(8),
                what: "the re-assembly plan",
            })?;
        for &e in order {
            let (lo, hi) = (self.starts[e] as usize, self.starts[e + 1] as usize);
            p.members.extend((lo..hi).map(|k| self.members.get(k)));
            p.starts.push(p.members.len() as u64);
        }
        Ok(p)
    }

    /// Number of triplets the plan was built from.
    pub fn triplets(&self) -> usize {
        self.triplets
    }

    /// Number of canonical entries.
    pub fn nnz(&self) -> usize {
        self.starts.len() - 1
    }

    /// Element type of the values it takes and gives.
    pub fn type_tag(&self) -> u8 {
        self.ty.tag
    }

    /// Bytes of memory the plan holds.
    pub fn bytes(&self) -> usize {
        self.members.bytes() + self.starts.len() * 8
    }

    /// Combine `values` (one per triplet, as at assembly) into `out` (one per
    /// canonical entry, in the canonical order, which for a rank-2 tensor is
    /// CSR's order). Allocates nothing but the threads' stacks; every byte
    /// of `out` is written. With `threads > 1` the entries are split into
    /// contiguous ranges of about equal work (at most one thread per 4096
    /// entries; sub-byte types, whose elements share bytes, use one).
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
            crate::threads::count(threads, nnz, 4096)
        };
        if threads == 1 {
            self.apply_range(values, out, 0..nnz)?;
            clear_padding(self.ty, out, nnz);
            return Ok(());
        }
        // Entry ranges of about equal member counts.
        let total = self.members.len() as u64;
        let mut cuts = vec![0usize];
        for t in 1..threads {
            let goal = total * t as u64 / threads as u64;
            let e = self.starts.partition_point(|&s| s < goal).min(nnz);
            cuts.push(e.max(*cuts.last().unwrap_or(&0)));
        }
        cuts.push(nnz);
        let w = self.ty.lookup_bytes();
        let mut rest: &mut [u8] = out;
        let mut parts = Vec::new();
        for r in cuts.windows(2) {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut((r[1] - r[0]) * w);
            rest = tail;
            parts.push((mine, r[0]..r[1]));
        }
        // The first error in entry order.
        crate::threads::run(parts, |_, (mine, range)| {
            self.apply_range(values, mine, range)
        })
        .into_iter()
        .collect()
    }

    /// Entries `range` into `out`, which holds exactly those entries.
    fn apply_range(
        &self,
        values: &[u8],
        out: &mut [u8],
        range: std::ops::Range<usize>,
    ) -> Result<(), CooError> {
        match &self.members {
            Members::Narrow(m) => self.apply_members(m, values, out, range),
            Members::Wide(m) => self.apply_members(m, values, out, range),
        }
    }

    fn apply_members<T: Member>(
        &self,
        members: &[T],
        values: &[u8],
        out: &mut [u8],
        range: std::ops::Range<usize>,
    ) -> Result<(), CooError> {
        let first = range.start;
        let of = |e: usize| &members[self.starts[e] as usize..self.starts[e + 1] as usize];
        if self.ty.encoding == Encoding::F64 && self.dup == Duplicates::Sum {
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
            let read = |k: usize| {
                f64::from_le_bytes(values[k * 8..k * 8 + 8].try_into().unwrap_or([0; 8]))
            };
            for e in range {
                let m = of(e);
                let mut s = read(m[0].index());
                for &i in &m[1..] {
                    s += read(i.index());
                }
                let at = (e - first) * 8;
                out[at..at + 8].copy_from_slice(&s.to_le_bytes());
            }
            return Ok(());
        }
        let (mut acc, mut x) = ([0u8; 16], [0u8; 16]);
        for e in range {
            let m = of(e);
            copy_element(self.ty, values, m[0].index(), &mut acc);
            for &i in &m[1..] {
                copy_element(self.ty, values, i.index(), &mut x);
                if !self.combine(&mut acc, &x) {
                    return Err(self.overflow(i.index(), e));
                }
            }
            store_element(self.ty, out, e - first, &acc);
        }
        Ok(())
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
