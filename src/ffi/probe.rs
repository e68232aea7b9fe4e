//! The shortest path of `hurray_coo_lookup_f64`: the probe of
//! `include/hurray_coo_probe.h`, run inside the library on a copy of the
//! handle's lookup view taken on the first lookup.
//!
//! A call cannot be inlined into the caller's loop, so what it can save is
//! instructions: the fewer a lookup runs, the more lookups the CPU keeps in
//! flight while each waits for memory. The general fast path
//! (`Coo::lookup_f64_fast`) dispatches on the index kind, the offsets' and
//! the low bits' widths, the rank and the element type on every call; this
//! one is decided once per handle (`Probe::of`) and then runs a scan written
//! for one rank and one width. It answers only where the view can (a
//! bucket directory with 4-byte offsets, float64 values, rank 2 or 3, the
//! query inside the shape, at most `SHORT` entries in its bucket), and on
//! the index with values (`HURRAY_COO_INDEX_VALUES`, rank 1 to 3); every
//! other call goes on to the general path, which gives the same answer or
//! names what is wrong.
//!
//! The view itself (`hurray_lookup_view`, the layout the header's probe
//! reads, and `lookup_view`, which fills it) lives here too, beside its one
//! reader inside the library; `hurray_coo_lookup_view` hands it out.

use std::ffi::c_void;

use super::{hurray_coo, HURRAY_LOOKUP_VIEW_VERSION};
use crate::coo::key::linear;
use crate::coo::lookup::{PackedIndex, Words};
use crate::coo::Coo;

/// The longest bucket scanned here (the header's probe scans as many);
/// longer ones are binary-searched by the general path.
const SHORT: u64 = 32;

/// What the shortest path reads, copied from the handle's lookup view.
#[derive(Clone, Copy)]
pub(super) struct Probe {
    /// 2 or 3; 0 when this handle has no shortest path.
    rank: u32,
    /// Bucket of a linear position: `key >> shift` (below 64 here).
    shift: u32,
    /// 2 or 4: the entries' low position bits are kept in that width; 0:
    /// the entries' positions are computed from their coordinates.
    low_bytes: u32,
    shape: [u64; 3],
    strides: [u64; 3],
    offsets: *const u32,
    low: *const c_void,
    indices: *const u64,
    values: *const f64,
    /// The handle's index with values, when it has one (then no other
    /// field but rank, shape and strides is read).
    valued: *const PackedIndex<4>,
}

// SAFETY: the pointers are the view's and the index's: memory the handle
// owns (its directory, built once, and its index, built at create, neither
// ever changed or moved) or borrows unchanged
// for its whole life (coordinates, values). A probe only reads it, and a
// probe lives in its handle, so it never outlives that memory; any number
// of threads may read it at once.
unsafe impl Send for Probe {}
// SAFETY: as for Send.
unsafe impl Sync for Probe {}

impl Probe {
    const NONE: Probe = Probe {
        rank: 0,
        shift: 0,
        low_bytes: 0,
        shape: [0; 3],
        strides: [0; 3],
        offsets: std::ptr::null(),
        low: std::ptr::null(),
        indices: std::ptr::null(),
        values: std::ptr::null(),
        valued: std::ptr::null(),
    };

    /// The probe of `h`, a boxed handle's tensor (the probe may point into
    /// it): its index with values or its lookup view, when this path can
    /// read them, else `NONE`. Builds the bucket directory of a sorted
    /// tensor without an index, as the first lookup would.
    pub(super) fn of(h: &Coo<'_>) -> Probe {
        if let Some((index, strides)) = h.valued_index() {
            let r = strides.len();
            if !(1..=3).contains(&r) {
                return Probe::NONE;
            }
            let mut p = Probe {
                rank: h.rank(),
                valued: index,
                ..Probe::NONE
            };
            p.shape[..r].copy_from_slice(h.shape());
            p.strides[..r].copy_from_slice(strides);
            return p;
        }
        let v = lookup_view(
            std::ptr::null(),
            h,
            std::mem::size_of::<hurray_lookup_view>(),
        );
        let r = v.rank as usize;
        if v.offset_bytes != 4
            || v.values_f64.is_null()
            || !(2..=3).contains(&r)
            || v.shift >= 64
            || !matches!(v.low_bytes, 0 | 2 | 4)
        {
            return Probe::NONE;
        }
        let mut p = Probe {
            rank: v.rank,
            shift: v.shift,
            low_bytes: v.low_bytes,
            offsets: v.offsets.cast(),
            low: v.low,
            indices: v.indices,
            values: v.values_f64,
            ..Probe::NONE
        };
        p.shape[..r].copy_from_slice(h.shape());
        // SAFETY: a view with a directory has rank strides, owned by the
        // directory (see `lookup_view`).
        p.strides[..r].copy_from_slice(unsafe { std::slice::from_raw_parts(v.strides, r) });
        p
    }

    /// The element at `q` (`rank` coordinates) and whether it is stored,
    /// or `None` when the general path must answer.
    ///
    /// # Safety
    /// `q` is non-NULL, aligned and holds `rank` readable coordinates, and
    /// `self` is the probe of a live handle.
    #[inline(always)]
    pub(super) unsafe fn find(&self, q: *const u64, rank: u32) -> Option<(f64, bool)> {
        if rank != self.rank {
            return None;
        }
        // SAFETY: forwarded contract; the rank is the probe's.
        unsafe {
            if !self.valued.is_null() {
                return match self.rank {
                    1 => self.valued_at::<1>(q),
                    2 => self.valued_at::<2>(q),
                    _ => self.valued_at::<3>(q),
                };
            }
            match (self.rank, self.low_bytes) {
                (2, 2) => self.scan::<2>(q, |i| u64::from(*self.low.cast::<u16>().add(i))),
                (2, 4) => self.scan::<2>(q, |i| u64::from(*self.low.cast::<u32>().add(i))),
                (2, _) => self.scan::<2>(q, |i| self.key::<2>(self.indices.add(2 * i))),
                (3, 2) => self.scan::<3>(q, |i| u64::from(*self.low.cast::<u16>().add(i))),
                (3, 4) => self.scan::<3>(q, |i| u64::from(*self.low.cast::<u32>().add(i))),
                _ => self.scan::<3>(q, |i| self.key::<3>(self.indices.add(3 * i))),
            }
        }
    }

    /// The linear position of the `R` coordinates at `c` (`key::linear`).
    ///
    /// # Safety
    /// `c` is aligned and holds `R` readable coordinates.
    #[inline(always)]
    unsafe fn key<const R: usize>(&self, c: *const u64) -> u64 {
        // SAFETY: per this function's contract (and coordinates are
        // aligned: the caller's query is checked, the handle's are).
        linear(
            unsafe { std::slice::from_raw_parts(c, R) },
            &self.strides[..R],
        )
    }

    /// Whether the `R` coordinates at `q` are inside the shape.
    ///
    /// # Safety
    /// `q` holds `R` readable coordinates.
    #[inline(always)]
    unsafe fn inside<const R: usize>(&self, q: *const u64) -> bool {
        let mut outside = false;
        for d in 0..R {
            // SAFETY: per this function's contract.
            outside |= unsafe { *q.add(d) } >= self.shape[d];
        }
        !outside
    }

    /// `find` for rank `R` on the index with values.
    ///
    /// # Safety
    /// As `find`, and the probe has `valued`.
    #[inline(always)]
    unsafe fn valued_at<const R: usize>(&self, q: *const u64) -> Option<(f64, bool)> {
        // SAFETY: `q` holds R = rank coordinates (contract of `find`).
        if !unsafe { self.inside::<R>(q) } {
            return None;
        }
        // SAFETY: as above; `valued` is the live handle's index.
        let (v, stored) = unsafe { (*self.valued).find_value_key(self.key::<R>(q)) }?;
        Some((f64::from_bits(v), stored))
    }

    /// `find` for rank `R`; `at(i)` is entry `i`'s low position bits (or
    /// its whole position when no low bits are kept).
    ///
    /// # Safety
    /// As `find`; `at` reads entry `i` of the tensor for any `i < nnz`.
    #[inline(always)]
    unsafe fn scan<const R: usize>(
        &self,
        q: *const u64,
        at: impl Fn(usize) -> u64,
    ) -> Option<(f64, bool)> {
        // SAFETY: `q` holds R = rank coordinates (contract of `find`).
        if !unsafe { self.inside::<R>(q) } {
            return None;
        }
        // SAFETY: as above.
        let key = unsafe { self.key::<R>(q) };
        // Inside the shape, the position is below the element count, so
        // its bucket and the next offset exist (the directory has
        // ((elements - 1) >> shift) + 2 offsets).
        let b = (key >> self.shift) as usize;
        // SAFETY: the bucket's two offsets exist (above), and the directory
        // lives as long as the handle.
        let (lo, hi) = unsafe { (*self.offsets.add(b), *self.offsets.add(b + 1)) };
        let (lo, hi) = (lo as usize, hi as usize);
        if (hi - lo) as u64 > SHORT {
            return None;
        }
        // The bucket's first value is fetched while its low bits are, so a
        // hit waits for two lines in turn (offsets, then low bits and
        // value), not three: 7-20 % fewer ms per 1M lookups (BENCHMARKS.md,
        // "the value asked for with the low bits").
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch never faults, whatever the address
        // (`wrapping_add`: lo may be nnz).
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                self.values.wrapping_add(lo).cast(),
            )
        };
        let want = if self.low_bytes == 0 {
            key
        } else {
            key & ((1u64 << self.shift) - 1)
        };
        // Entry 0 when the query sorts after the bucket's entries: it
        // exists (a directory has nnz > 0) and its value is read whatever
        // the answer, so that the read does not wait for it.
        let mut found = (0usize, false);
        for i in lo..hi {
            let k = at(i);
            if k >= want {
                found = (i, k == want);
                break;
            }
        }
        // SAFETY: `found.0` is an entry (below nnz) and the view's values
        // hold nnz float64s.
        let x = unsafe { *self.values.add(found.0) };
        Some((if found.1 { x } else { 0.0 }, found.1))
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::coo::lookup::sample::Draw;

    /// A handle on copies of `idx` and `vals`.
    fn create(shape: &[u64], idx: &[u64], vals: &[f64], flags: u32) -> *mut hurray_coo {
        let parts = hurray_coo_parts {
            type_tag: HURRAY_TYPE_FLOAT64,
            rank: shape.len() as u32,
            shape: shape.as_ptr(),
            nnz: vals.len() as u64,
            is_sorted: true,
            values: vals.as_ptr().cast(),
            values_bytes: vals.len() * 8,
            indices: idx.as_ptr(),
            indices_bytes: idx.len() * 8,
        };
        let opts = hurray_coo_options {
            size: std::mem::size_of::<hurray_coo_options>(),
            flags: flags | HURRAY_COO_COPY,
            threads: 1,
            release: None,
            release_ctx: std::ptr::null_mut(),
            shard_parent_shape: std::ptr::null(),
            shard_offset: std::ptr::null(),
        };
        let mut h = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the sizes given.
        let st = unsafe { hurray_coo_create(&parts, &opts, &mut h) };
        // SAFETY: the library's NUL-terminated message.
        let msg = unsafe { std::ffi::CStr::from_ptr(hurray_last_error_message()) };
        assert_eq!(st, 0, "create: {msg:?}");
        h
    }

    /// The probe of every sorted float64 tensor of rank 1 to 3 (with and
    /// without the index, with the index with values, permissive with a
    /// true claim of order; shapes
    /// that keep 2-byte, 4-byte and no low bits, and a crowded row whose
    /// bucket is longer than the probe scans) answers what a map of the
    /// entries answers, wherever it answers; it answers for most queries;
    /// and hurray_coo_lookup_f64, which tries it first, answers the same on
    /// every query, the first one included.
    #[test]
    fn the_probe_answers_what_the_entries_say() {
        let mut seed = 0x5EED_u64;
        let (mut answered, mut declined, mut long_declined) = (0usize, 0usize, 0usize);
        let mut valued = 0usize;
        for case in 0..144 {
            let rank = 1 + case % 3;
            let kind = case / 3 % 4; // small, wide, huge, crowded
            let flags = [
                0,
                HURRAY_COO_INDEX,
                HURRAY_COO_PERMISSIVE,
                HURRAY_COO_INDEX_VALUES,
            ][case / 12 % 4];
            let t = Draw {
                most: 3000,
                huge_bits: 62,
                crowded: 64,
            }
            .sorted(rank, kind, &mut seed);
            let (shape, map, queries) = (&t.shape, &t.map, &t.queries);
            let h = create(shape, &t.idx, &t.vals, flags);
            // The first lookup takes the probe (and builds the directory).
            for (j, q) in queries.iter().enumerate() {
                let (mut x, mut f) = (-1.0, false);
                // SAFETY: a live handle, rank coordinates, writable outputs.
                let st =
                    unsafe { hurray_coo_lookup_f64(h, q.as_ptr(), rank as u32, &mut x, &mut f) };
                let want = map.get(q).copied();
                assert_eq!(st, 0);
                assert_eq!(
                    (x, f),
                    (want.unwrap_or(0.0), want.is_some()),
                    "case {case} query {j} {q:?}"
                );
                // SAFETY: live handle.
                let p = unsafe { (*h).probe.get().copied() }.expect("taken by the lookup");
                // SAFETY: as above; the probe of the live handle h.
                match unsafe { p.find(q.as_ptr(), rank as u32) } {
                    Some(a) => {
                        assert_eq!(
                            a,
                            (want.unwrap_or(0.0), want.is_some()),
                            "case {case} {q:?}"
                        );
                        answered += 1;
                        valued += usize::from(!p.valued.is_null());
                    }
                    None if p.rank == 0 => declined += 1,
                    None => long_declined += 1,
                }
            }
            // Queries the probe hands on: outside the shape, another rank.
            let mut q = queries[0].clone();
            q[0] = shape[0];
            let (mut x, mut f) = (0.0, false);
            // SAFETY: as above.
            let st = unsafe { hurray_coo_lookup_f64(h, q.as_ptr(), rank as u32, &mut x, &mut f) };
            assert_eq!(st, HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
            q.push(0);
            // SAFETY: as above, with rank + 1 readable coordinates.
            let st =
                unsafe { hurray_coo_lookup_f64(h, q.as_ptr(), rank as u32 + 1, &mut x, &mut f) };
            assert_eq!(st, HURRAY_ERR_RANK_MISMATCH);
            // SAFETY: a handle from create, freed once.
            unsafe { hurray_coo_free(h) };
        }
        // Most queries are the probe's; huge shapes without low bits that
        // fit 32 bits are not (the probe declines the handle), and a
        // crowded row's long bucket is the general path's.
        assert!(
            answered > 100_000 && valued > 20_000,
            "{answered} answered, {valued} valued"
        );
        assert!(
            declined > 0 && long_declined > 0,
            "{declined} / {long_declined}"
        );
    }
}

/// A read-only view of what a lookup on a handle reads, so that a probe in
/// the caller's own code (the static inline hurray_coo_probe_f64 of
/// hurray_coo_probe.h) finds an element without a call: the handle's
/// coordinates and float64 values, and the bucket directory of a sorted
/// tensor. Filled by hurray_coo_lookup_view; every pointer in it is owned
/// by the library or is the handle's own buffer, valid until
/// hurray_coo_free(coo), and never to be written.
///
/// The layout is part of the ABI (HURRAY_LOOKUP_VIEW_VERSION, version 1):
/// entry i's linear position is the sum over dimensions d of
/// indices[i * rank + d] * strides[d] (row-major strides: strides[rank - 1]
/// is 1); entries are in strictly increasing
/// linear order; entry i is in bucket linear >> shift (bucket 0 when shift
/// is 64); the entries of bucket b are offsets[b] .. offsets[b + 1] - 1
/// (offsets holds uint32_t when offset_bytes is 4, uint64_t when 8); when
/// low_bytes is 2 or 4, low[i] (uint16_t or uint32_t) is the low shift bits
/// of entry i's linear position, and shift is at most 32.
///
/// offset_bytes 0 means there is no directory to read (an unsorted tensor,
/// a hash or packed index, no memory for the directory): then every probe
/// is the library call. values_f64 is NULL unless the element type is
/// float64 (and the host little-endian): then too.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hurray_lookup_view {
    /// In: sizeof(hurray_lookup_view), set by the caller (the struct
    /// may grow at its end; the library never writes past the size given).
    pub size: usize,
    /// HURRAY_LOOKUP_VIEW_VERSION of the library that filled it.
    pub version: u32,
    /// The tensor's rank.
    pub rank: u32,
    /// The handle the view is of: probes that the view cannot answer call
    /// the library on it.
    pub coo: *const hurray_coo,
    /// rank extents, then rank row-major strides of the linear position.
    pub shape: *const u64,
    pub strides: *const u64,
    /// nnz entries of rank coordinates, the handle's indices.
    pub indices: *const u64,
    /// The handle's nnz float64 values, or NULL (see above).
    pub values_f64: *const f64,
    pub nnz: u64,
    /// The directory: bucket = linear >> shift.
    pub shift: u32,
    /// 0 (no directory), 4 or 8: the width of each of offsets' entries.
    pub offset_bytes: u32,
    /// buckets + 1 offsets, the last one nnz.
    pub offsets: *const c_void,
    /// 0 (compare the entries' linear positions), 2 or 4: the width of
    /// each of low's nnz entries.
    pub low_bytes: u32,
    /// Reserved, 0.
    pub reserved: u32,
    pub low: *const c_void,
}

/// The view of `h` (the handle `coo`), `size` bytes as the caller declared.
pub(super) fn lookup_view(
    coo: *const hurray_coo,
    h: &crate::coo::Coo<'_>,
    size: usize,
) -> hurray_lookup_view {
    let f64_values = cfg!(target_endian = "little")
        && h.type_info()
            .is_some_and(|t| t.encoding == crate::element::types::Encoding::F64)
        && h.nnz() > 0;
    let mut view = hurray_lookup_view {
        size,
        version: HURRAY_LOOKUP_VIEW_VERSION,
        rank: h.rank(),
        coo,
        shape: h.shape().as_ptr(),
        strides: std::ptr::null(),
        indices: h.indices().as_ptr(),
        // Non-empty storage is 64-byte aligned (see `Coo::indices`), so
        // the float64 values may be read as doubles in place.
        values_f64: if f64_values {
            h.values().as_ptr().cast()
        } else {
            std::ptr::null()
        },
        nnz: h.nnz(),
        shift: 0,
        offset_bytes: 0,
        offsets: std::ptr::null(),
        low_bytes: 0,
        reserved: 0,
        low: std::ptr::null(),
    };
    let Some(d) = h.search_directory() else {
        return view;
    };
    let p = d.parts();
    let words = |w: &Words<'_>| -> (u32, *const c_void) {
        match w {
            Words::None => (0, std::ptr::null()),
            Words::U16(v) => (2, v.as_ptr().cast()),
            Words::U32(v) => (4, v.as_ptr().cast()),
            Words::U64(v) => (8, v.as_ptr().cast()),
        }
    };
    (view.offset_bytes, view.offsets) = words(&p.offsets);
    (view.low_bytes, view.low) = words(&p.low);
    view.strides = p.strides.as_ptr();
    view.shift = p.shift;
    view
}
