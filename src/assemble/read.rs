//! The caller's coordinates: any of four integer types, base 0 or 1,
//! interleaved (Hurray's layout) or one array per dimension (Fortran's and
//! Julia's `I, J, V`). Read in place, checked once, ordered once.

use super::Triplets;
use crate::coo::check_rank;
use crate::element::size::{self, DYNAMIC_DIM};
use crate::error::CooError;

/// Integer type of the caller's coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexType {
    I32,
    I64,
    U32,
    U64,
}

/// An index type from a `u64` already checked to fit it (the largest
/// value written is checked before any is), as plain a conversion as the
/// compiler can vectorise.
pub(crate) trait Narrow {
    fn narrow(v: u64) -> Self;
}

macro_rules! narrow {
    ($($t:ty),*) => {$(
        impl Narrow for $t {
            #[inline(always)]
            fn narrow(v: u64) -> $t {
                v as $t
            }
        }
    )*};
}
narrow!(i32, u32, i64, u64);

impl IndexType {
    pub fn width(self) -> usize {
        match self {
            IndexType::I32 | IndexType::U32 => 4,
            IndexType::I64 | IndexType::U64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IndexType::I32 => "int32",
            IndexType::I64 => "int64",
            IndexType::U32 => "uint32",
            IndexType::U64 => "uint64",
        }
    }

    /// The largest value an index of this type may hold.
    pub fn max(self) -> u64 {
        match self {
            IndexType::I32 => i32::MAX as u64,
            IndexType::U32 => u32::MAX as u64,
            IndexType::I64 => i64::MAX as u64,
            IndexType::U64 => u64::MAX,
        }
    }

    /// Integer `k` of a little-endian array of this type.
    #[inline(always)]
    fn read(self, bytes: &[u8], k: usize) -> i128 {
        let w = self.width();
        let b = &bytes[k * w..k * w + w];
        match self {
            IndexType::I32 => i128::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            IndexType::U32 => i128::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            IndexType::I64 => i128::from(i64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
            IndexType::U64 => i128::from(u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
        }
    }
}

/// Where the coordinates are.
#[derive(Clone, Copy, Debug)]
pub enum CoordArrays<'a> {
    /// `n * rank` integers, triplet `i` dimension `d` at `i * rank + d`.
    Interleaved(&'a [u8]),
    /// `rank` arrays of `n` integers each.
    PerDim(&'a [&'a [u8]]),
}

pub(super) struct Reader<'a> {
    shape: &'a [u64],
    n: usize,
    ty: IndexType,
    base: u8,
    coords: CoordArrays<'a>,
    /// Row-major strides when the element count fits a `u64`.
    strides: Option<Vec<u64>>,
}

impl<'a> Reader<'a> {
    /// Check rank, shape, base and the arrays' sizes.
    pub(super) fn new(t: &Triplets<'a>) -> Result<Reader<'a>, CooError> {
        let rank = u32::try_from(t.shape.len()).unwrap_or(u32::MAX);
        check_rank(rank)?;
        if let Some(dim) = t.shape.iter().position(|&d| d == DYNAMIC_DIM) {
            return Err(CooError::DynamicDimension { dim });
        }
        CooError::check_base(u32::from(t.base))?;
        let w = t.index_type.width() as u64;
        let n = t.n as u64;
        let overflow = || CooError::Overflow {
            what: format!("{} coordinates of rank {rank}", t.n),
        };
        let check = |what: &'static str, got: usize, count: u64| {
            let need = count.checked_mul(w).ok_or_else(overflow)?;
            if got as u64 != need {
                return Err(CooError::BufferSize {
                    buffer: what,
                    got: got as u64,
                    expected: need,
                    expected_why: format!("{count} {} coordinates", t.index_type.name()),
                });
            }
            Ok(())
        };
        match t.coords {
            CoordArrays::Interleaved(b) => check(
                "triplet indices",
                b.len(),
                n.checked_mul(u64::from(rank)).ok_or_else(overflow)?,
            )?,
            CoordArrays::PerDim(arrays) => {
                if arrays.len() != rank as usize {
                    return Err(CooError::RankMismatch {
                        got: u32::try_from(arrays.len()).unwrap_or(u32::MAX),
                        expected: rank,
                    });
                }
                for a in arrays {
                    check("a per-dimension coordinate array", a.len(), n)?;
                }
            }
        }
        Ok(Reader {
            shape: t.shape,
            n: t.n,
            ty: t.index_type,
            base: t.base,
            coords: t.coords,
            strides: size::linear_strides(t.shape),
        })
    }

    pub(super) fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Coordinate `d` of triplet `i`, as the caller wrote it.
    #[inline(always)]
    fn raw(&self, i: usize, d: usize) -> i128 {
        match self.coords {
            CoordArrays::Interleaved(b) => self.ty.read(b, i * self.shape.len() + d),
            CoordArrays::PerDim(a) => self.ty.read(a[d], i),
        }
    }

    /// Coordinate `d` of a checked triplet, 0-based.
    #[inline(always)]
    fn coord(&self, i: usize, d: usize) -> u64 {
        (self.raw(i, d) - i128::from(self.base)) as u64
    }

    /// The 0-based coordinates of a checked triplet.
    pub(super) fn coords(&self, i: usize, out: &mut [u64]) {
        for (d, c) in out.iter_mut().enumerate() {
            *c = self.coord(i, d);
        }
    }

    pub(super) fn same_coords(&self, i: usize, j: usize) -> bool {
        (0..self.shape.len()).all(|d| self.raw(i, d) == self.raw(j, d))
    }

    /// The triplets to assemble, in order: every coordinate inside the shape,
    /// triplets with a negative coordinate left out when `skip_negative`. The
    /// first bad triplet is an error that names it, its dimension and the
    /// value as the caller wrote them.
    pub(super) fn check_all(&self, skip_negative: bool) -> Result<Vec<usize>, CooError> {
        let mut kept = Vec::new();
        kept.try_reserve_exact(self.n)
            .map_err(|_| CooError::Alloc {
                bytes: self.n.saturating_mul(8),
                what: "assembly",
            })?;
        let b = i128::from(self.base);
        'triplets: for i in 0..self.n {
            for d in 0..self.shape.len() {
                let raw = self.raw(i, d);
                if raw < 0 && skip_negative {
                    continue 'triplets;
                }
                let c = raw - b;
                if c < 0 || c >= i128::from(self.shape[d]) {
                    return Err(self.out_of_bounds(i, d, raw, skip_negative));
                }
            }
            kept.push(i);
        }
        Ok(kept)
    }

    #[cold]
    fn out_of_bounds(&self, i: usize, d: usize, raw: i128, skip_negative: bool) -> CooError {
        CooError::TripletBounds {
            triplet: i as u64,
            dim: d,
            coord: raw,
            extent: self.shape[d],
            base: self.base,
            skip_negative,
        }
    }

    /// `kept` in coordinate order, equal coordinates in triplet order: a sort
    /// of (linear key, triplet) pairs when the element count fits a `u64`,
    /// else of triplet numbers by their coordinate tuples.
    pub(super) fn sorted(&self, kept: &[usize], threads: usize) -> Result<Vec<usize>, CooError> {
        let alloc = |bytes| CooError::Alloc {
            bytes,
            what: "sorting the triplets",
        };
        // A leading extent not much larger than the triplet count (every
        // matrix a solver assembles): a counting sort on it, then each
        // slice of equal leading coordinate sorted on the rest.
        let lead = self.shape[0];
        if lead as u128 <= kept.len() as u128 * 2 + 4096 {
            return self.sorted_by_lead(kept, lead as usize, threads);
        }
        if let Some(strides) = &self.strides {
            let mut keys: Vec<u128> = Vec::new();
            keys.try_reserve_exact(kept.len())
                .map_err(|_| alloc(kept.len().saturating_mul(16)))?;
            keys.extend(kept.iter().map(|&i| {
                let key = (0..self.shape.len()).fold(0u64, |acc, d| {
                    acc.wrapping_add(self.coord(i, d).wrapping_mul(strides[d]))
                });
                (u128::from(key) << 64) | i as u128
            }));
            let mut order = Vec::new();
            order
                .try_reserve_exact(keys.len())
                .map_err(|_| alloc(keys.len().saturating_mul(8)))?;
            sort_keys(&mut keys, threads, &mut order)?;
            return Ok(order);
        }
        let mut order = Vec::new();
        order
            .try_reserve_exact(kept.len())
            .map_err(|_| alloc(kept.len().saturating_mul(8)))?;
        order.extend_from_slice(kept);
        order.sort_unstable_by(|&a, &b| {
            (0..self.shape.len())
                .map(|d| self.coord(a, d).cmp(&self.coord(b, d)))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.cmp(&b))
        });
        Ok(order)
    }
}

impl Reader<'_> {
    /// A stable counting sort of `kept` on the leading coordinate, then each
    /// slice of one leading coordinate sorted (stably, so ties stay in
    /// triplet order) on the other coordinates; slices are shared out over
    /// `threads` scoped threads.
    fn sorted_by_lead(
        &self,
        kept: &[usize],
        lead: usize,
        threads: usize,
    ) -> Result<Vec<usize>, CooError> {
        let alloc = |bytes: usize| CooError::Alloc {
            bytes,
            what: "sorting the triplets",
        };
        let mut end: Vec<usize> = Vec::new();
        end.try_reserve_exact(lead + 1)
            .map_err(|_| alloc((lead + 1).saturating_mul(8)))?;
        end.resize(lead + 1, 0);
        for &i in kept {
            end[self.coord(i, 0) as usize + 1] += 1;
        }
        for r in 0..lead {
            end[r + 1] += end[r];
        }
        let mut order: Vec<usize> = Vec::new();
        order
            .try_reserve_exact(kept.len())
            .map_err(|_| alloc(kept.len().saturating_mul(8)))?;
        order.resize(kept.len(), 0);
        for &i in kept {
            let r = self.coord(i, 0) as usize;
            order[end[r]] = i;
            end[r] += 1;
        }
        // end[r] is now the end of slice r (and end[lead] still the total).
        if self.shape.len() == 1 {
            return Ok(order);
        }
        let sort_slices = |order: &mut [usize], base: usize, ends: &[usize]| {
            let mut begin = base;
            for &e in ends {
                let slice = &mut order[begin - base..e - base];
                if slice.len() > 1 {
                    if self.shape.len() == 2 {
                        slice.sort_by_key(|&i| self.coord(i, 1));
                    } else {
                        slice.sort_by(|&a, &b| {
                            (1..self.shape.len())
                                .map(|d| self.coord(a, d).cmp(&self.coord(b, d)))
                                .find(|o| o.is_ne())
                                .unwrap_or(std::cmp::Ordering::Equal)
                        });
                    }
                }
                begin = e;
            }
        };
        let threads = crate::threads::count(threads, kept.len(), 1 << 16);
        if threads == 1 {
            sort_slices(&mut order, 0, &end[..lead]);
            return Ok(order);
        }
        // Cut at slice boundaries into runs of about equal size.
        let mut cuts = vec![0usize];
        for t in 1..threads {
            let goal = kept.len() * t / threads;
            cuts.push(end[..lead].partition_point(|&e| e <= goal));
        }
        cuts.push(lead);
        let mut rest: &mut [usize] = &mut order;
        let mut consumed = 0usize;
        let mut parts = Vec::new();
        for c in cuts.windows(2) {
            if c[1] <= c[0] {
                continue;
            }
            // This run holds order[base..stop]: the slices c[0]..c[1].
            let base = consumed;
            let stop = end[c[1] - 1];
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(stop - base);
            rest = tail;
            consumed = stop;
            parts.push((mine, base, &end[c[0]..c[1]]));
        }
        crate::threads::run(parts, |_, (mine, base, ends)| sort_slices(mine, base, ends));
        Ok(order)
    }
}

/// Sort `keys` ((linear key << 64) | triplet) and append their triplet
/// numbers to `order`. With `threads > 1` (at most MAX_SORT_RUNS, and one
/// per 64 Ki keys) the keys are cut into that many runs, sorted on threads, and
/// merged; keys are distinct (they carry the triplet number), so the result
/// is the same as one sort.
fn sort_keys(keys: &mut [u128], threads: usize, order: &mut Vec<usize>) -> Result<(), CooError> {
    let threads =
        crate::threads::count(threads, keys.len(), 1 << 16).min(crate::threads::MAX_SORT_RUNS);
    if threads == 1 {
        keys.sort_unstable();
        order.extend(keys.iter().map(|&k| k as u64 as usize));
        return Ok(());
    }
    let per = keys.len().div_ceil(threads);
    crate::threads::run(keys.chunks_mut(per).collect(), |_, run| run.sort_unstable());
    // Merge the runs: the smallest head each time (few runs, so a scan).
    let runs: Vec<&[u128]> = keys.chunks(per).collect();
    let mut heads = vec![0usize; runs.len()];
    for _ in 0..keys.len() {
        let mut best = usize::MAX;
        for (r, run) in runs.iter().enumerate() {
            if heads[r] < run.len()
                && (best == usize::MAX || run[heads[r]] < runs[best][heads[best]])
            {
                best = r;
            }
        }
        order.push(runs[best][heads[best]] as u64 as usize);
        heads[best] += 1;
    }
    Ok(())
}

/// 32-bit coordinates in two arrays of `n` each, in the order `read` gives
/// them (rows first, after any transposition): what a scan needs to run in
/// vector registers. int32 and uint32 alike: read as i32 with extents
/// below 2^31, a negative int32 and a uint32 of 2^31 and up are both out of
/// bounds.
#[derive(Clone, Copy)]
pub(super) struct Words<'a> {
    pub rows: &'a [u32],
    pub cols: &'a [u32],
}

/// A coordinate word of the caller's arrays (`u32` or `u64`), read as an
/// unsigned number less the base.
pub(super) trait Word: Copy + Send + Sync {
    /// Extents below this: then a coordinate that was negative, or below
    /// the base, reads as this much or more, outside the shape.
    const EXTENTS_BELOW: u64;
    /// The word less `base` (wrapping), widened.
    fn less(self, base: u64) -> u64;
}

impl Word for u32 {
    const EXTENTS_BELOW: u64 = 1 << 31;
    #[inline(always)]
    fn less(self, base: u64) -> u64 {
        u64::from(self.wrapping_sub(base as u32))
    }
}

impl Word for u64 {
    const EXTENTS_BELOW: u64 = 1 << 63;
    #[inline(always)]
    fn less(self, base: u64) -> u64 {
        self.wrapping_sub(base)
    }
}

/// The same for 64-bit coordinates (int64, uint64): the arrays as words,
/// when they are aligned and the machine little-endian. Read as unsigned
/// numbers less the base, with extents below 2^63, a negative int64 and a
/// coordinate below the base both come out at 2^63 or more, outside the
/// shape.
#[derive(Clone, Copy)]
pub(super) struct Words64<'a> {
    pub rows: &'a [u64],
    pub cols: &'a [u64],
}

impl<'a> Words64<'a> {
    /// The arrays `x` (rows) and `y` (columns) of `t`'s 64-bit
    /// coordinates.
    pub(super) fn of(t: &Triplets<'_>, x: &'a [u8], y: &'a [u8]) -> Option<Words64<'a>> {
        let wide = matches!(t.index_type, IndexType::I64 | IndexType::U64);
        let (rows, cols) = word_arrays(wide, t.n, x, y)?;
        Some(Words64 { rows, cols })
    }
}

/// `x` and `y` as `n` words each, when `this_type` (the triplets' index
/// type is one of `W`'s width) and they are aligned for `W` and the machine
/// little-endian.
fn word_arrays<'a, W: bytemuck::Pod>(
    this_type: bool,
    n: usize,
    x: &'a [u8],
    y: &'a [u8],
) -> Option<(&'a [W], &'a [W])> {
    if !(this_type && cfg!(target_endian = "little")) {
        return None;
    }
    let cast = |b| bytemuck::try_cast_slice::<u8, W>(b).ok()?.get(..n);
    Some((cast(x)?, cast(y)?))
}

impl<'a> Words<'a> {
    /// The arrays `x` (rows) and `y` (columns) of `t`'s 32-bit
    /// coordinates, when they are aligned and the machine little-endian.
    pub(super) fn of(t: &Triplets<'_>, x: &'a [u8], y: &'a [u8]) -> Option<Words<'a>> {
        let narrow = matches!(t.index_type, IndexType::I32 | IndexType::U32);
        let (rows, cols) = word_arrays(narrow, t.n, x, y)?;
        Some(Words { rows, cols })
    }

    /// Triplet `i`'s (row, column) less `base` (0 or 1), read as unsigned
    /// 32-bit numbers: a coordinate below the base, or a negative int32,
    /// comes out at 2^31 or more, outside every bound these arrays pass.
    #[inline(always)]
    pub fn zero_based(&self, i: usize, base: i64) -> (usize, usize) {
        let b = base as u64;
        (self.rows[i].less(b) as usize, self.cols[i].less(b) as usize)
    }
}
