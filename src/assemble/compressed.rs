//! The row buckets (`buckets.rs`) writing the caller's CSR arrays
//! directly, for an assembly into CSR or CSC (`convert::assemble_compressed`,
//! which checks the arguments and takes the general path when this one
//! declines): a CSC result is the CSR of the transposed triplets, read
//! column first. What it trusts is the buckets': every coordinate checked
//! in their first pass, rows in order, columns sorted and combined within
//! a row. Anything else (an error to report, a repeat under ERROR, a type
//! or policy they do not do, caller arrays not aligned for the index or
//! value type, a plan asked for) declines before anything is written.
//! `tests/assemble_compressed.rs` compares every case with assembly then
//! export.

use super::buckets::{self, kept_sorted, Placed, Rows, Sink, SortedInput, Values};
use super::rank2::{fits, with_read, WithRead};
use super::read::{Words, Words64};
use super::sorted_pairs;
use super::{AssembleOptions, IndexType, Narrow, Triplets};
use crate::element::size;
use crate::element::types::TypeInfo;
use crate::error::CooError;
use crate::threads;
use bytemuck::Pod;

/// The caller's arrays, as CSR of the (possibly transposed) triplets.
pub(crate) struct CompressedArrays<'a> {
    /// "CSR" or "CSC", for messages.
    pub name: &'static str,
    /// Read the triplets column first (CSC).
    pub transposed: bool,
    pub index_type: IndexType,
    /// 0 or 1.
    pub base: u8,
    /// Exactly majors + 1 offsets.
    pub offsets: &'a mut [u8],
    pub indices: &'a mut [u8],
    /// Empty for a pattern whose values are not asked for.
    pub values: &'a mut [u8],
    /// Whether values are written (a pattern's may not be).
    pub values_too: bool,
}

/// The number of entries written, an error only the entry count shows
/// (too little room, an offset past the index type), or `None`: this path
/// declines and nothing is written.
pub(crate) fn try_compressed(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    ty: &'static TypeInfo,
    a: CompressedArrays<'_>,
) -> Option<Result<usize, CooError>> {
    if !o.skip_plan {
        return None;
    }
    let &[rows, cols] = t.shape else {
        return None;
    };
    let shape = if a.transposed {
        [cols, rows]
    } else {
        [rows, cols]
    };
    let tt = Triplets {
        shape: &shape,
        ..*t
    };
    if !fits(&tt, ty, &shape) {
        return None;
    }
    let sink = CompressedSink {
        name: a.name,
        index_type: a.index_type,
        base: a.base,
        values_too: a.values_too,
        lend: o.scratch_in_output,
        offsets: a.offsets,
        indices: a.indices,
        values: a.values,
    };
    with_read(
        t,
        a.transposed,
        Job {
            t: &tt,
            o,
            ty,
            sink,
        },
    )
}

/// The row buckets with a compressed sink, run with the coordinates'
/// reader.
struct Job<'a, 'b, 'c> {
    t: &'a Triplets<'b>,
    o: &'a AssembleOptions,
    ty: &'static TypeInfo,
    sink: CompressedSink<'c>,
}

impl WithRead for Job<'_, '_, '_> {
    type Out = Result<usize, CooError>;
    fn call<R: Fn(usize) -> (i64, i64) + Sync>(
        self,
        read: R,
        words: Option<Words<'_>>,
        wide: Option<Words64<'_>>,
    ) -> Option<Self::Out> {
        buckets::try_run(self.t, self.o, self.ty, &read, (words, wide), self.sink)
    }
}

/// What a lack of room for the result says always suffices.
pub(crate) const ROOM_HINT: &str = "room for as many as there are triplets always suffices";

/// The checks that need the entry count: `indices` and `values` bytes
/// (`values` `None`: not written) have room for `nnz` entries, and the
/// last offset, nnz + base, fits the index type.
#[allow(clippy::too_many_arguments)] // the arrays' sizes and what they hold
pub(crate) fn compressed_room(
    ty: &TypeInfo,
    nnz: u64,
    base: u8,
    name: &str,
    index_type: IndexType,
    indices: usize,
    values: Option<usize>,
) -> Result<(), CooError> {
    let why = |what: &str| format!(" for the assembled {name}'s {nnz} {what} ({ROOM_HINT})");
    let need = nnz.saturating_mul(index_type.width() as u64);
    if (indices as u64) < need {
        return Err(CooError::BufferTooSmall {
            what: "the indices array",
            got: indices,
            needed: need as usize,
            why: why(&format!("{} indices", index_type.name())),
        });
    }
    if let Some(got) = values {
        let need = size::values_bytes(ty, nnz)?;
        if (got as u64) < need {
            return Err(CooError::BufferTooSmall {
                what: "the values array",
                got,
                needed: need as usize,
                why: why(&format!("{} values", ty.name())),
            });
        }
    }
    let limit = index_type.max();
    if nnz.checked_add(u64::from(base)).is_none_or(|v| v > limit) {
        return Err(CooError::Overflow {
            what: format!(
                "{name} offsets up to {} as {} (largest {limit}); assemble with int64 or uint64 \
                 offsets",
                u128::from(nnz) + u128::from(base),
                index_type.name()
            ),
        });
    }
    Ok(())
}

/// The caller's arrays, as the row buckets write them.
struct CompressedSink<'a> {
    name: &'static str,
    index_type: IndexType,
    base: u8,
    /// Whether values are written (a pattern's may not be).
    values_too: bool,
    /// Whether `indices` and `values` may serve as the buckets
    /// (`HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT`).
    lend: bool,
    offsets: &'a mut [u8],
    indices: &'a mut [u8],
    values: &'a mut [u8],
}

fn aligned<T>(b: &[u8]) -> bool {
    (b.as_ptr() as usize).is_multiple_of(align_of::<T>())
}

impl CompressedSink<'_> {
    /// The checks that need the entry count.
    fn check(&self, ty: &TypeInfo, nnz: usize) -> Result<(), CooError> {
        compressed_room(
            ty,
            nnz as u64,
            self.base,
            self.name,
            self.index_type,
            self.indices.len(),
            self.values_too.then_some(self.values.len()),
        )
    }

    /// A pattern's values: `nnz` true bits, the last byte's unused bits
    /// clear.
    fn pattern_bits(&mut self, nnz: usize) {
        if !self.values_too {
            return;
        }
        let bytes = &mut self.values[..nnz.div_ceil(8)];
        bytes.fill(0xFF);
        if !nnz.is_multiple_of(8) {
            if let Some(last) = bytes.last_mut() {
                *last = (1u8 << (nnz % 8)) - 1;
            }
        }
    }
}

/// Dispatch on the caller's index type.
macro_rules! by_index {
    ($self:ident, $f:ident :: <$($g:ty),*> ($($arg:expr),*)) => {
        match $self.index_type {
            IndexType::I32 => $f::<$($g,)* i32>($($arg),*),
            IndexType::U32 => $f::<$($g,)* u32>($($arg),*),
            IndexType::I64 => $f::<$($g,)* i64>($($arg),*),
            IndexType::U64 => $f::<$($g,)* u64>($($arg),*),
        }
    };
}

impl Sink for CompressedSink<'_> {
    type Out = Result<usize, CooError>;

    fn takes<T: Pod>(&self) -> bool {
        let ok = match self.index_type.width() {
            4 => aligned::<u32>(self.offsets) && aligned::<u32>(self.indices),
            _ => aligned::<u64>(self.offsets) && aligned::<u64>(self.indices),
        };
        ok && (!self.values_too || aligned::<T>(self.values))
    }

    fn rows<T: Pod + Send + Sync>(mut self, r: Rows<'_, T>) -> Option<Self::Out> {
        let nnz: usize = r.parts.iter().map(|p| p.entries).sum();
        if let Err(e) = self.check(r.ty, nnz) {
            return Some(Err(e));
        }
        let vw = if size_of::<T>() == 0 || !self.values_too {
            0
        } else {
            nnz * size_of::<T>()
        };
        let iw = nnz * self.index_type.width();
        let (o, i, v) = (
            &mut *self.offsets,
            &mut self.indices[..iw],
            &mut self.values[..vw],
        );
        let b = u64::from(self.base);
        by_index!(self, write_rows::<T>(r, b, o, i, v))?;
        if size_of::<T>() == 0 {
            self.pattern_bits(nnz);
        }
        Some(Ok(nnz))
    }

    /// The caller's indices and values as the buckets, when allowed: the
    /// indices' first `4 * kept` bytes hold the columns (32-bit indices:
    /// their bits; 64-bit ones are widened in place at the end), values
    /// written and not a pattern's, room for `kept` of each.
    fn scratch<T: Pod>(&mut self, kept: usize) -> Option<(&mut [u32], &mut [T])> {
        if !self.lend || !self.values_too || size_of::<T>() == 0 {
            return None;
        }
        let cols = self.indices.get_mut(..kept.checked_mul(4)?)?;
        let vals = self.values.get_mut(..kept.checked_mul(size_of::<T>())?)?;
        Some((
            bytemuck::try_cast_slice_mut(cols).ok()?,
            bytemuck::try_cast_slice_mut(vals).ok()?,
        ))
    }

    /// Each part's entries moved to follow the part before (they can only
    /// move down: a part's entries are at most its triplets), the base
    /// added to the columns (and 64-bit indices widened from the 32-bit
    /// columns, last first: entry j's 8 bytes start at 8j, past every
    /// column still to be read), the offsets written from the row counts.
    fn placed(self, p: Placed) -> Option<Self::Out> {
        let nnz: usize = p.parts.iter().map(|q| q.entries).sum();
        if let Err(e) = self.check(p.ty, nnz) {
            return Some(Err(e));
        }
        p.follow(self.indices, 4);
        p.follow(self.values, p.width);
        let b = u64::from(self.base);
        if self.index_type.width() == 8 {
            for j in (0..nnz).rev() {
                let c = u32::from_ne_bytes(self.indices[4 * j..4 * j + 4].try_into().ok()?);
                let wide = u64::from(c) + b;
                self.indices[8 * j..8 * j + 8].copy_from_slice(&wide.to_ne_bytes());
            }
        } else if b != 0 {
            let cols: &mut [u32] =
                bytemuck::try_cast_slice_mut(&mut self.indices[..nnz * 4]).ok()?;
            for c in cols {
                *c += b as u32;
            }
        }
        let per_row = p.parts.iter().flat_map(|q| q.per_row.iter().copied());
        let o = &mut *self.offsets;
        match self.index_type {
            IndexType::I32 => write_offsets::<i32>(o, per_row, nnz, b),
            IndexType::U32 => write_offsets::<u32>(o, per_row, nnz, b),
            IndexType::I64 => write_offsets::<i64>(o, per_row, nnz, b),
            IndexType::U64 => write_offsets::<u64>(o, per_row, nnz, b),
        }?;
        Some(Ok(nnz))
    }

    fn sorted<T: Pod + Send + Sync, A: Fn(usize) -> (usize, usize) + Sync>(
        mut self,
        s: SortedInput<'_, T, A>,
    ) -> Option<Self::Out> {
        if s.drop_zeros && kept_sorted(&s) != s.n {
            // Rare: decline, and `assemble_compressed` takes the general
            // path (assemble, then export), which drops the zeros.
            return None;
        }
        let nnz = s.n;
        if let Err(e) = self.check(s.ty, nnz) {
            return Some(Err(e));
        }
        let iw = nnz * self.index_type.width();
        let b = u64::from(self.base);
        let (o, i) = (&mut *self.offsets, &mut self.indices[..iw]);
        by_index!(self, write_sorted::<A>(&s, b, o, i))?;
        match s.vals {
            Values::Given(src) if self.values_too => {
                let out: &mut [T] =
                    bytemuck::try_cast_slice_mut(&mut self.values[..nnz * size_of::<T>()]).ok()?;
                copy_split(out, src, s.threads);
            }
            Values::Given(_) => {}
            Values::Pattern(_) => self.pattern_bits(nnz),
        }
        Some(Ok(nnz))
    }
}

/// `out` = `src`, split between threads.
pub(crate) fn copy_split<T: Pod + Send + Sync>(out: &mut [T], src: &[T], threads: usize) {
    let threads = threads::count(threads, out.len(), 1 << 18);
    let per = out.len().div_ceil(threads).max(1);
    let parts: Vec<_> = out.chunks_mut(per).collect();
    threads::run(parts, |k, part| {
        part.copy_from_slice(&src[k * per..k * per + part.len()]);
    });
}

/// Combined rows into CSR arrays of `I`: each part writes its rows'
/// offsets, its entries' indices and values, the last offset after.
fn write_rows<T, I>(
    r: Rows<'_, T>,
    base: u64,
    offsets: &mut [u8],
    indices: &mut [u8],
    values: &mut [u8],
) -> Option<()>
where
    T: Pod + Send + Sync,
    I: Pod + Send + Narrow,
{
    let offsets: &mut [I] = bytemuck::try_cast_slice_mut(offsets).ok()?;
    let indices: &mut [I] = bytemuck::try_cast_slice_mut(indices).ok()?;
    let values: &mut [T] = match size_of::<T>() {
        0 => &mut [],
        _ => bytemuck::try_cast_slice_mut(values).ok()?,
    };
    let majors = offsets.len() - 1;
    let nnz = indices.len();
    let mut parts = Vec::new();
    {
        let (mut orest, mut irest, mut vrest) = (&mut offsets[..majors], indices, values);
        let mut first = 0usize;
        for (c, part) in r.cuts.windows(2).zip(r.parts) {
            let (o, ot) = std::mem::take(&mut orest).split_at_mut(c[1] - c[0]);
            let (i, it) = std::mem::take(&mut irest).split_at_mut(part.entries);
            let mine = vrest.len().min(part.entries); // none: a pattern, or no values asked
            let (v, vt) = std::mem::take(&mut vrest).split_at_mut(mine);
            (orest, irest, vrest) = (ot, it, vt);
            let entries = part.entries;
            parts.push((first, part, o, i, v));
            first += entries;
        }
    }
    threads::run(parts, |_, (first, part, o, i, v)| {
        running_offsets(o, part.per_row.iter().copied(), first as u64 + base);
        for (out, &c) in i.iter_mut().zip(&part.cols[..part.entries]) {
            *out = I::narrow(u64::from(c) + base);
        }
        if !v.is_empty() {
            v.copy_from_slice(&part.vals[..part.entries]);
        }
    });
    offsets[majors] = I::narrow(nnz as u64 + base);
    Some(())
}

/// CSR offsets of `I` (the caller's byte array, `None` when not aligned for
/// `I`) from the entries per row, `base` added: one more than the rows.
fn write_offsets<I: Pod + Narrow>(
    offsets: &mut [u8],
    per_row: impl Iterator<Item = u32>,
    nnz: usize,
    base: u64,
) -> Option<()> {
    let offsets: &mut [I] = bytemuck::try_cast_slice_mut(offsets).ok()?;
    let (last, rows) = offsets.split_last_mut()?;
    running_offsets(rows, per_row, base);
    *last = I::narrow(nnz as u64 + base);
    Some(())
}

/// Each row's offset: `first`, then the running sum of the entries per row.
fn running_offsets<I: Narrow>(out: &mut [I], per_row: impl Iterator<Item = u32>, first: u64) {
    let mut q = first;
    for (o, k) in out.iter_mut().zip(per_row) {
        *o = I::narrow(q);
        q += u64::from(k);
    }
}

/// Strictly sorted input into CSR offsets and indices of `I` (the caller's
/// byte arrays; `None` when they are not aligned for `I`).
fn write_sorted<A, I>(
    s: &SortedInput<'_, impl Sized, A>,
    base: u64,
    offsets: &mut [u8],
    indices: &mut [u8],
) -> Option<()>
where
    A: Fn(usize) -> (usize, usize) + Sync,
    I: Pod + Send + Narrow,
{
    let offsets: &mut [I] = bytemuck::try_cast_slice_mut(offsets).ok()?;
    let indices: &mut [I] = bytemuck::try_cast_slice_mut(indices).ok()?;
    sorted_into_csr(s.at, None, base, offsets, indices, s.threads);
    Some(())
}

/// CSR offsets and column indices of `indices.len()` entries in strictly
/// increasing (row, column) order, `at(k)` being entry `k`'s 0-based (row,
/// column), every value written checked by the caller to fit `I` after
/// adding `base`. Threads over entry ranges: each writes its entries'
/// columns and the offsets of the rows it owns, from one past the row
/// before its first entry through the row of its last (the first range from
/// row 0, the last through the end). The sorted CSR export and the sorted
/// assembly both write through here. `pairs`, when given, is the entries'
/// (row, column) as interleaved `u64` words (`at`'s answers, as stored): a
/// 4-byte index type then takes the AVX-512 kernel of `sorted_pairs.rs`
/// where the CPU has it.
pub(crate) fn sorted_into_csr<A, I>(
    at: &A,
    pairs: Option<&[u64]>,
    base: u64,
    offsets: &mut [I],
    indices: &mut [I],
    threads: usize,
) where
    A: Fn(usize) -> (usize, usize) + Sync,
    I: Pod + Send + Narrow,
{
    let rows = offsets.len() - 1;
    let n = indices.len();
    let threads = threads::count(threads, n, 1 << 16);
    let per = n.div_ceil(threads).max(1);
    let mut parts = Vec::new();
    let (mut orest, mut irest) = (offsets, indices);
    let mut first_row = 0usize;
    for k in 0..threads {
        let (lo, hi) = ((k * per).min(n), ((k + 1) * per).min(n));
        let last_row = if k + 1 == threads {
            rows + 1
        } else if hi == lo {
            first_row
        } else {
            at(hi - 1).0 + 1
        };
        let (o, ot) = std::mem::take(&mut orest).split_at_mut(last_row - first_row);
        let (i, it) = std::mem::take(&mut irest).split_at_mut(hi - lo);
        (orest, irest) = (ot, it);
        parts.push((lo, first_row, o, i));
        first_row = last_row;
    }
    let pairs = pairs.filter(|p| p.len() >= 2 * n);
    threads::run(parts, |_, (lo, r0, o, i)| {
        #[cfg(target_arch = "x86_64")]
        if let Some(pairs) = pairs {
            if size_of::<I>() == 4 && sorted_pairs::avx512::available() {
                if let (Ok(o), Ok(i)) = (
                    bytemuck::try_cast_slice_mut::<I, u32>(o),
                    bytemuck::try_cast_slice_mut::<I, u32>(i),
                ) {
                    // SAFETY: the CPU has AVX-512F and VL (checked above);
                    // the range's entries lo .. lo + i.len() are among the
                    // n whose 2n words pairs holds (checked above).
                    unsafe { sorted_pairs::avx512::sorted_range(pairs, lo, r0, base as u32, o, i) };
                    return;
                }
            }
        }
        sorted_range(at, lo, r0, base, o, i)
    });
}

/// One range of `sorted_into_csr`: the columns of entries `lo..lo +
/// cols.len()` and the offsets `o` of the rows the range owns (`o[0]` is
/// row `r0`), in one pass over the entries (the export used to read its
/// coordinates twice, once for the columns and once for the offsets).
/// Tested by `a_large_sorted_export_has_every_offset_and_column_right` and
/// the sorted cases of `tests/assemble_compressed.rs`.
pub(super) fn sorted_range<A, I>(
    at: &A,
    lo: usize,
    r0: usize,
    base: u64,
    o: &mut [I],
    cols: &mut [I],
) where
    A: Fn(usize) -> (usize, usize),
    I: Pod + Narrow,
{
    // Rows before r0 are another range's; each row from r0 on starts at
    // the first entry whose row is at least it.
    let mut next = r0;
    for (k, c) in (lo..).zip(cols.iter_mut()) {
        let (row, col) = at(k);
        *c = I::narrow(col as u64 + base);
        if row >= next {
            o[next - r0..=row - r0].fill(I::narrow(k as u64 + base));
            next = row + 1;
        }
    }
    o[next - r0..].fill(I::narrow((lo + cols.len()) as u64 + base));
}
