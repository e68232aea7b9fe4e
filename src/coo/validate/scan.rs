//! The hot loops of validation: branch-free scans over the indices buffer
//! that only say *where* the first problem is (the caller then describes it
//! with the precise, slow code).

use crate::coo::key::entry;

/// Entries per branch-free block: a block that fails is rescanned entry by
/// entry.
const BLOCK: usize = 2048;

#[inline(always)]
fn in_bounds<const R: usize>(c: &[u64; R], shape: &[u64; R]) -> bool {
    let mut ok = true;
    for d in 0..R {
        ok &= c[d] < shape[d];
    }
    ok
}

/// `c > p` lexicographically, without branches.
#[inline(always)]
fn lex_gt<const R: usize>(c: &[u64; R], p: &[u64; R]) -> bool {
    let mut gt = false;
    for d in (0..R).rev() {
        gt = (c[d] > p[d]) | ((c[d] == p[d]) & gt);
    }
    gt
}

fn first_sorted_violation_r<const R: usize>(idx: &[u64], shape: &[u64]) -> Option<usize> {
    let n = idx.len() / R;
    let mut s = [0u64; R];
    s.copy_from_slice(shape);
    if n == 0 {
        return None;
    }
    if !in_bounds(&entry::<R>(idx, 0), &s) {
        return Some(0);
    }
    let mut start = 1;
    while start < n {
        let end = (start + BLOCK).min(n);
        // When every entry of the block is after its predecessor, the leading
        // coordinate is non-decreasing, so only the block's last entry needs
        // its leading bound checked; the other dimensions are checked per entry.
        let ok = block_ok::<R>(idx, start, end, &s);
        if !ok || idx[(end - 1) * R] >= s[0] {
            return (start..end).find(|&i| {
                let c = entry::<R>(idx, i);
                !(in_bounds(&c, &s) && lex_gt(&c, &entry::<R>(idx, i - 1)))
            });
        }
        start = end;
    }
    None
}

/// The largest extent whose coordinates fit 32 bits: a rank-2 shape with
/// both extents at most this has the narrow kernel
/// ([`avx512::block_ok_r2_narrow`]).
const NARROW: u64 = 1 << 32;

/// Whether every entry in `start..end` (`start >= 1`) is strictly after
/// its predecessor with its coordinates but the leading one inside `shape`
/// (the leading bound is the caller's: the block's last entry). A kernel
/// may also answer false for a block with a leading coordinate at or past
/// `NARROW` when `shape[0] <= NARROW`: that entry is out of bounds, and the
/// caller rescans such a block entry by entry anyway.
///
/// Ranks 1 and 2 have their own kernels (AVX-512, AVX2 for rank 2, scalar),
/// which split the words into one vector per coordinate; from rank 3 to 8,
/// on AVX-512, one kernel compares the words in place ([`avx512::block_ok`]),
/// which on rank 3 needs no lane moved where the split needs two permutes
/// per coordinate, and gives ranks 4 to 8 a vector kernel at all. On ranks
/// 1 and 2 the split was as fast or faster (BENCHMARKS.md, "the sorted check
/// at any rank"). A rank-2 shape whose extents both fit 32 bits (any int32
/// matrix) packs each entry into one 64-bit key instead
/// ([`avx512::block_ok_r2_narrow`]): one permute and three compares a step
/// where the split takes four and four.
#[inline]
fn block_ok<const R: usize>(idx: &[u64], start: usize, end: usize, shape: &[u64; R]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if R <= 8 && avx512::available() {
        // SAFETY (each arm): the CPU has AVX-512F (checked above); R <= 8;
        // 1 <= start <= end and R * end <= idx.len(), as the caller's block
        // is inside idx.
        return match R {
            1 => unsafe { avx512::block_ok_r1(idx, start, end) },
            2 if shape[0] <= NARROW && shape[1] <= NARROW => unsafe {
                avx512::block_ok_r2_narrow(idx, start, end, shape[1])
            },
            2 => unsafe { avx512::block_ok_r2(idx, start, end, shape[R - 1]) },
            _ => unsafe { avx512::block_ok::<R>(idx, start, end, shape) },
        };
    }
    match R {
        1 => block_ok_r1_scalar(idx, start, end),
        2 => block_ok_r2(idx, start, end, shape[R - 1]),
        3 => block_ok_r3(idx, start, end, [shape[1], shape[2]]),
        _ => block_ok_scalar::<R>(idx, start, end, shape),
    }
}

/// [`block_ok`] one entry at a time: the oracle of the AVX-512 kernel.
fn block_ok_scalar<const R: usize>(
    idx: &[u64],
    start: usize,
    end: usize,
    shape: &[u64; R],
) -> bool {
    let mut prev = entry::<R>(idx, start - 1);
    let mut ok = true;
    for e in idx[start * R..end * R].chunks_exact(R) {
        let mut c = [0u64; R];
        c.copy_from_slice(e);
        let mut rest = true;
        for d in 1..R {
            rest &= c[d] < shape[d];
        }
        ok &= rest & lex_gt(&c, &prev);
        prev = c;
    }
    ok
}

/// Rank 1 without AVX-512: whether every entry in `start..end` (`start >=
/// 1`) is above its predecessor (the bound is the caller's: the block's
/// last entry); the oracle of the AVX-512 kernel.
fn block_ok_r1_scalar(idx: &[u64], start: usize, end: usize) -> bool {
    idx[start - 1..end]
        .windows(2)
        .fold(true, |ok, w| ok & (w[1] > w[0]))
}

/// Rank 2 without AVX-512: whether every entry in `start..end` (`start >=
/// 1`) is strictly after its predecessor with its column below `cols`, on
/// AVX2 when the CPU has it, else the scalar loop (its oracle,
/// [`block_ok_r2_scalar`]).
#[inline]
fn block_ok_r2(idx: &[u64], start: usize, end: usize, cols: u64) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 (checked above); 1 <= start <= end and
        // 2 * end <= idx.len(), as the caller's block is inside idx.
        return unsafe { avx2::block_ok_r2(idx, start, end, cols) };
    }
    block_ok_r2_scalar(idx, start, end, cols)
}

/// Rank 3 without AVX-512: as [`block_ok_r2`], the second and third
/// coordinates below `bounds`, on AVX2 when the CPU has it, else the scalar
/// loop (its oracle, [`block_ok_r3_scalar`]).
#[inline]
fn block_ok_r3(idx: &[u64], start: usize, end: usize, bounds: [u64; 2]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 (checked above); 1 <= start <= end and
        // 3 * end <= idx.len(), as the caller's block is inside idx.
        return unsafe { avx2::block_ok_r3(idx, start, end, bounds) };
    }
    block_ok_r3_scalar(idx, start, end, bounds)
}

/// [`block_ok_r3`] without vector instructions: the oracle of the kernel.
fn block_ok_r3_scalar(idx: &[u64], start: usize, end: usize, bounds: [u64; 2]) -> bool {
    let key = |a: u64, b: u64| (u128::from(a) << 64) | u128::from(b);
    let p = &idx[(start - 1) * 3..start * 3];
    let (mut phi, mut plo) = (key(p[0], p[1]), p[2]);
    let mut ok = true;
    for e in idx[start * 3..end * 3].chunks_exact(3) {
        let (hi, lo) = (key(e[0], e[1]), e[2]);
        ok &= ((hi > phi) | ((hi == phi) & (lo > plo))) & (e[1] < bounds[0]) & (lo < bounds[1]);
        (phi, plo) = (hi, lo);
    }
    ok
}

/// [`block_ok_r2`] without vector instructions: the oracle of the kernel.
fn block_ok_r2_scalar(idx: &[u64], start: usize, end: usize, cols: u64) -> bool {
    let key = |a: u64, b: u64| (u128::from(a) << 64) | u128::from(b);
    let mut prev = key(idx[(start - 1) * 2], idx[(start - 1) * 2 + 1]);
    let mut ok = true;
    for e in idx[start * 2..end * 2].chunks_exact(2) {
        let cur = key(e[0], e[1]);
        ok &= (cur > prev) & (e[1] < cols);
        prev = cur;
    }
    ok
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// Whether the CPU has AVX2 (std caches the answer).
    #[inline]
    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
    }

    /// [`super::block_ok_r2_scalar`], four entries at a time: rows and
    /// columns of the entries and of their predecessors unpacked into four
    /// vectors (lanes in the order 0, 2, 1, 3, the same for all four),
    /// compared lane by lane as unsigned numbers (the sign bit flipped, as
    /// AVX2 compares signed), the verdicts ANDed.
    ///
    /// # Safety
    /// The CPU has AVX2; `1 <= start <= end` and `2 * end <= idx.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn block_ok_r2(idx: &[u64], start: usize, end: usize, cols: u64) -> bool {
        let flip = _mm256_set1_epi64x(i64::MIN);
        let limit = _mm256_xor_si256(_mm256_set1_epi64x(cols as i64), flip);
        let p = idx.as_ptr();
        let mut ok = _mm256_set1_epi64x(-1);
        let mut i = start;
        while i + 4 <= end {
            // SAFETY: entries i - 1 ..= i + 3 are inside idx (i >= 1,
            // i + 4 <= end); unaligned loads of 4 u64 each.
            let (a, b, pa, pb) = unsafe {
                (
                    _mm256_loadu_si256(p.add(2 * i).cast()),
                    _mm256_loadu_si256(p.add(2 * i + 4).cast()),
                    _mm256_loadu_si256(p.add(2 * i - 2).cast()),
                    _mm256_loadu_si256(p.add(2 * i + 2).cast()),
                )
            };
            let r = _mm256_unpacklo_epi64(a, b);
            let c = _mm256_unpackhi_epi64(a, b);
            let pr = _mm256_unpacklo_epi64(pa, pb);
            let pc = _mm256_unpackhi_epi64(pa, pb);
            let (rs, prs) = (_mm256_xor_si256(r, flip), _mm256_xor_si256(pr, flip));
            let (cs, pcs) = (_mm256_xor_si256(c, flip), _mm256_xor_si256(pc, flip));
            let after = _mm256_or_si256(
                _mm256_cmpgt_epi64(rs, prs),
                _mm256_and_si256(_mm256_cmpeq_epi64(r, pr), _mm256_cmpgt_epi64(cs, pcs)),
            );
            ok = _mm256_and_si256(ok, _mm256_and_si256(after, _mm256_cmpgt_epi64(limit, cs)));
            i += 4;
        }
        let all = _mm256_movemask_pd(_mm256_castsi256_pd(ok)) == 0xF;
        all && (i >= end || super::block_ok_r2_scalar(idx, i, end, cols))
    }

    /// Three vectors of four rank-3 entries (`[a0 b0 c0 a1] [b1 c1 a2 b2]
    /// [c2 a3 b3 c3]`) as one vector per coordinate, each in the entry
    /// order 0, 3, 2, 1.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn split3(v0: __m256i, v1: __m256i, v2: __m256i) -> [__m256i; 3] {
        // blend_epi32 takes a 64-bit lane k from its second operand where
        // bits 2k and 2k + 1 of the mask are set.
        let a = _mm256_blend_epi32::<0x0C>(_mm256_blend_epi32::<0x30>(v0, v1), v2);
        let b = _mm256_blend_epi32::<0x30>(_mm256_blend_epi32::<0xC3>(v0, v1), v2);
        let c = _mm256_blend_epi32::<0x0C>(_mm256_blend_epi32::<0x30>(v2, v0), v1);
        [
            a,
            _mm256_permute4x64_epi64::<0x39>(b),
            _mm256_permute4x64_epi64::<0x4E>(c),
        ]
    }

    /// [`super::block_ok_r3_scalar`], four entries at a time (see
    /// [`split3`]), compared as unsigned numbers.
    ///
    /// # Safety
    /// The CPU has AVX2; `1 <= start <= end` and `3 * end <= idx.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn block_ok_r3(
        idx: &[u64],
        start: usize,
        end: usize,
        bounds: [u64; 2],
    ) -> bool {
        // No closures here: a closure does not take the function's target
        // features, and its intrinsics would become calls.
        let flip = _mm256_set1_epi64x(i64::MIN);
        let lim_b = _mm256_xor_si256(_mm256_set1_epi64x(bounds[0] as i64), flip);
        let lim_c = _mm256_xor_si256(_mm256_set1_epi64x(bounds[1] as i64), flip);
        let p = idx.as_ptr();
        let mut ok = _mm256_set1_epi64x(-1);
        let mut i = start;
        while i + 4 <= end {
            // SAFETY: entries i - 1 ..= i + 3 are inside idx (i >= 1,
            // i + 4 <= end); unaligned loads of 4 u64 each.
            let [v0, v1, v2, w0, w1, w2] = unsafe {
                [
                    _mm256_loadu_si256(p.add(3 * i).cast()),
                    _mm256_loadu_si256(p.add(3 * i + 4).cast()),
                    _mm256_loadu_si256(p.add(3 * i + 8).cast()),
                    _mm256_loadu_si256(p.add(3 * i - 3).cast()),
                    _mm256_loadu_si256(p.add(3 * i + 1).cast()),
                    _mm256_loadu_si256(p.add(3 * i + 5).cast()),
                ]
            };
            // SAFETY: the CPU has AVX2, as this function's contract says.
            let ([a, b, c], [pa, pb, pc]) = unsafe { (split3(v0, v1, v2), split3(w0, w1, w2)) };
            let (a, b, c) = (
                _mm256_xor_si256(a, flip),
                _mm256_xor_si256(b, flip),
                _mm256_xor_si256(c, flip),
            );
            let (pa, pb, pc) = (
                _mm256_xor_si256(pa, flip),
                _mm256_xor_si256(pb, flip),
                _mm256_xor_si256(pc, flip),
            );
            let after = _mm256_or_si256(
                _mm256_cmpgt_epi64(a, pa),
                _mm256_and_si256(
                    _mm256_cmpeq_epi64(a, pa),
                    _mm256_or_si256(
                        _mm256_cmpgt_epi64(b, pb),
                        _mm256_and_si256(_mm256_cmpeq_epi64(b, pb), _mm256_cmpgt_epi64(c, pc)),
                    ),
                ),
            );
            let inside =
                _mm256_and_si256(_mm256_cmpgt_epi64(lim_b, b), _mm256_cmpgt_epi64(lim_c, c));
            ok = _mm256_and_si256(ok, _mm256_and_si256(after, inside));
            i += 4;
        }
        let all = _mm256_movemask_pd(_mm256_castsi256_pd(ok)) == 0xF;
        all && (i >= end || super::block_ok_r3_scalar(idx, i, end, bounds))
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use std::arch::x86_64::*;

    /// Whether the CPU has AVX-512F (std caches the answer). The
    /// `HURRAY_COO_NO_AVX512` environment variable, read once, turns the
    /// kernels off (for benchmarks against the AVX2 ones), and the
    /// duplicate detection's scatter kernel (`dup.rs`).
    #[inline]
    pub(crate) fn available() -> bool {
        static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        std::arch::is_x86_feature_detected!("avx512f")
            && !*OFF.get_or_init(|| std::env::var_os("HURRAY_COO_NO_AVX512").is_some())
    }

    /// Words ahead of a kernel's loads, in 8-word lines: prefetches of
    /// the `lines` lines [`AHEAD`] words past word `at`. The hardware's
    /// own prefetch leaves the kernels at 0.83-0.88 of a plain sum of the
    /// same bytes, in cache and from memory alike; asked 4 KiB ahead
    /// they keep up with it (BENCHMARKS.md, "the sorted check asks
    /// ahead").
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn ahead(p: *const u64, at: usize, lines: usize) {
        for l in 0..lines {
            // A prefetch is a hint that never faults, whatever the address;
            // `wrapping_add` computes one past the buffer's end without the
            // in-bounds rule of `add`.
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(at + AHEAD + 8 * l).cast());
        }
    }

    /// How far ahead [`ahead`] asks, in words (4 KiB).
    const AHEAD: usize = 512;

    /// Entries `i ..= i + 7` of rank-2 words at `p` as two vectors (words
    /// `2i..` and `2i + 8..`, unaligned loads), the lines [`AHEAD`] past
    /// them asked for. The rank-2 check kernels and the CSR export's
    /// (`assemble/sorted_pairs.rs`) read their entries so.
    ///
    /// # Safety
    /// The CPU has AVX-512F; words `2i .. 2i + 16` at `p` are readable.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn eight_pairs(p: *const u64, i: usize) -> (__m512i, __m512i) {
        ahead(p, 2 * i, 2);
        // SAFETY: per this function's contract.
        unsafe {
            (
                _mm512_loadu_si512(p.add(2 * i).cast()),
                _mm512_loadu_si512(p.add(2 * i + 8).cast()),
            )
        }
    }

    /// The lanes of `idx` (0..=15 over `a` then `b`) as a vector.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn lanes(idx: [i64; 8]) -> __m512i {
        _mm512_setr_epi64(
            idx[0], idx[1], idx[2], idx[3], idx[4], idx[5], idx[6], idx[7],
        )
    }

    /// Eight entries strictly after their predecessors, as a lane mask:
    /// `x` the entries' coordinates one vector per dimension, `p` the
    /// vectors of the eight entries before (lane 7 of each is the entry
    /// before lane 0), compared as unsigned numbers from the last
    /// coordinate up.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn after<const R: usize>(x: &[__m512i; R], p: &[__m512i; R]) -> __mmask8 {
        let mut gt: __mmask8 = 0;
        for d in (0..R).rev() {
            // [p[d] lane 7, x[d] lanes 0..=6]: each entry's predecessor.
            let before = _mm512_alignr_epi64::<7>(x[d], p[d]);
            gt = _mm512_cmpgt_epu64_mask(x[d], before)
                | (_mm512_cmpeq_epu64_mask(x[d], before) & gt);
        }
        gt
    }

    /// [`super::block_ok_scalar`], eight entries a step, no lane moved:
    /// the step's `8 * R` words are compared with the words `R` further on
    /// (the next entry's same coordinate, an unaligned load), and the
    /// per-word "below" and "equal" masks, put side by side in one integer,
    /// are folded from the last coordinate up at each entry's first word.
    /// The bounds are compared word by word with vectors of the shape laid
    /// out as the words are.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `1 <= R <= 8`, `1 <= start <= end` and
    /// `R * end <= idx.len()`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn block_ok<const R: usize>(
        idx: &[u64],
        start: usize,
        end: usize,
        shape: &[u64; R],
    ) -> bool {
        let limit: [__m512i; R] =
            std::array::from_fn(|v| lanes(std::array::from_fn(|l| shape[(8 * v + l) % R] as i64)));
        // Bit w of a mask is word w of the step; word w is coordinate w % R.
        let words = u64::MAX >> (64 - 8 * R);
        let leading = (0..8).fold(0u64, |m, e| m | 1 << (R * e));
        let bounded = words & !leading;
        let p = idx.as_ptr();
        let mut bad = 0u64;
        let mut i = start;
        while i + 8 <= end {
            ahead(p, R * i, R);
            let (mut lt, mut eq, mut inside) = (0u64, 0u64, 0u64);
            for (v, limit) in limit.iter().enumerate() {
                // SAFETY: words R * (i - 1) .. R * (i + 8) are inside idx
                // (i >= 1, i + 8 <= end); unaligned loads of 8 u64 each.
                let (before, now) = unsafe {
                    let at = p.add(R * (i - 1) + 8 * v);
                    (
                        _mm512_loadu_si512(at.cast()),
                        _mm512_loadu_si512(at.add(R).cast()),
                    )
                };
                lt |= u64::from(_mm512_cmplt_epu64_mask(before, now)) << (8 * v);
                eq |= u64::from(_mm512_cmpeq_epu64_mask(before, now)) << (8 * v);
                inside |= u64::from(_mm512_cmplt_epu64_mask(now, *limit)) << (8 * v);
            }
            // At an entry's first word w: the entry is after its
            // predecessor from coordinate w % R + d on.
            let mut after = lt >> (R - 1);
            for d in (0..R - 1).rev() {
                after = (lt >> d) | ((eq >> d) & after);
            }
            bad |= (leading & !after) | (bounded & !inside);
            i += 8;
        }
        bad == 0 && (i >= end || super::block_ok_scalar::<R>(idx, i, end, shape))
    }

    /// [`super::block_ok_r1_scalar`], eight entries at a time.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `1 <= start <= end <= idx.len()`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn block_ok_r1(idx: &[u64], start: usize, end: usize) -> bool {
        let p = idx.as_ptr();
        let mut prev = [_mm512_set1_epi64(idx[start - 1] as i64)];
        let mut ok: __mmask8 = 0xFF;
        let mut i = start;
        while i + 8 <= end {
            // SAFETY: entries i ..= i + 7 are inside idx (i + 8 <= end).
            ahead(p, i, 1);
            let x = [unsafe { _mm512_loadu_si512(p.add(i).cast()) }];
            ok &= after(&x, &prev);
            prev = x;
            i += 8;
        }
        ok == 0xFF && (i >= end || super::block_ok_r1_scalar(idx, i, end))
    }

    /// [`block_ok_r2`] for shapes whose extents are both at most
    /// [`super::NARROW`], eight entries a step with half the lane moves:
    /// one two-source permute of 32-bit lanes packs each entry's row and
    /// column into one key (`row << 32 | column`, in the order of the
    /// entries), so order is one unsigned compare of each key with its
    /// predecessor's; the loaded words themselves are compared with the
    /// bounds (`2^32` for rows, `cols` for columns), so no key is made of
    /// a coordinate that does not fit 32 bits. A row at or past `2^32`
    /// answers false (out of bounds for such a shape; see
    /// [`super::block_ok`]), in the vector steps and the tail alike. A
    /// predecessor that does not fit takes [`block_ok_r2`]. `cols` is at
    /// most `2^32`.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `1 <= start <= end` and `2 * end <= idx.len()`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn block_ok_r2_narrow(
        idx: &[u64],
        start: usize,
        end: usize,
        cols: u64,
    ) -> bool {
        debug_assert!(cols <= super::NARROW);
        let (pr, pc) = (idx[2 * start - 2], idx[2 * start - 1]);
        if pr >= super::NARROW || pc >= super::NARROW {
            // SAFETY: as this function's.
            return unsafe { block_ok_r2(idx, start, end, cols) };
        }
        // Key k is 32-bit lanes 2k (the column's low half, word 2k + 1 of
        // the pair of vectors) and 2k + 1 (the row's, word 2k).
        let pack = _mm512_setr_epi32(2, 0, 6, 4, 10, 8, 14, 12, 18, 16, 22, 20, 26, 24, 30, 28);
        let limit = _mm512_setr_epi64(
            super::NARROW as i64,
            cols as i64,
            super::NARROW as i64,
            cols as i64,
            super::NARROW as i64,
            cols as i64,
            super::NARROW as i64,
            cols as i64,
        );
        let p = idx.as_ptr();
        let mut prev = _mm512_set1_epi64((pr << 32 | pc) as i64);
        let mut ok: __mmask8 = 0xFF;
        let mut i = start;
        while i + 8 <= end {
            // SAFETY: entries i ..= i + 7 are inside idx (i + 8 <= end).
            let (a, b) = unsafe { eight_pairs(p, i) };
            let key = _mm512_permutex2var_epi32(a, pack, b);
            // [prev lane 7, key lanes 0..=6]: each entry's predecessor.
            let before = _mm512_alignr_epi64::<7>(key, prev);
            ok &= _mm512_cmpgt_epu64_mask(key, before)
                & _mm512_cmplt_epu64_mask(a, limit)
                & _mm512_cmplt_epu64_mask(b, limit);
            prev = key;
            i += 8;
        }
        let tail_rows_fit = idx[2 * i..2 * end]
            .iter()
            .step_by(2)
            .all(|&r| r < super::NARROW);
        ok == 0xFF && (i >= end || (tail_rows_fit && super::block_ok_r2_scalar(idx, i, end, cols)))
    }

    /// [`super::block_ok_r2_scalar`], eight entries at a time: two loads
    /// split into a vector of rows and one of columns, each entry compared
    /// with the one before it (carried over from the previous step), on
    /// mask registers (AVX-512 compares unsigned numbers itself).
    ///
    /// # Safety
    /// The CPU has AVX-512F; `1 <= start <= end` and `2 * end <= idx.len()`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn block_ok_r2(idx: &[u64], start: usize, end: usize, cols: u64) -> bool {
        let (even, odd) = (
            lanes([0, 2, 4, 6, 8, 10, 12, 14]),
            lanes([1, 3, 5, 7, 9, 11, 13, 15]),
        );
        let limit = _mm512_set1_epi64(cols as i64);
        let p = idx.as_ptr();
        let mut prev = [
            _mm512_set1_epi64(idx[2 * start - 2] as i64),
            _mm512_set1_epi64(idx[2 * start - 1] as i64),
        ];
        let mut ok: __mmask8 = 0xFF;
        let mut i = start;
        while i + 8 <= end {
            // SAFETY: entries i ..= i + 7 are inside idx (i + 8 <= end).
            let (a, b) = unsafe { eight_pairs(p, i) };
            let x = [
                _mm512_permutex2var_epi64(a, even, b),
                _mm512_permutex2var_epi64(a, odd, b),
            ];
            ok &= after(&x, &prev) & _mm512_cmplt_epu64_mask(x[1], limit);
            prev = x;
            i += 8;
        }
        ok == 0xFF && (i >= end || super::block_ok_r2_scalar(idx, i, end, cols))
    }
}

fn first_sorted_violation_any(idx: &[u64], shape: &[u64]) -> Option<usize> {
    let r = shape.len();
    let n = idx.len() / r;
    let bad = |i: usize| {
        let c = &idx[i * r..(i + 1) * r];
        c.iter().zip(shape).any(|(x, e)| x >= e) || (i > 0 && c <= &idx[(i - 1) * r..i * r])
    };
    (0..n).find(|&i| bad(i))
}

/// The first entry of a sorted tensor that is out of bounds or not strictly
/// after the previous entry.
pub fn first_sorted_violation(idx: &[u64], shape: &[u64]) -> Option<usize> {
    match shape.len() {
        1 => first_sorted_violation_r::<1>(idx, shape),
        2 => first_sorted_violation_r::<2>(idx, shape),
        3 => first_sorted_violation_r::<3>(idx, shape),
        4 => first_sorted_violation_r::<4>(idx, shape),
        5 => first_sorted_violation_r::<5>(idx, shape),
        6 => first_sorted_violation_r::<6>(idx, shape),
        7 => first_sorted_violation_r::<7>(idx, shape),
        8 => first_sorted_violation_r::<8>(idx, shape),
        _ => first_sorted_violation_any(idx, shape),
    }
}

/// `first_sorted_violation` on up to `threads` threads: contiguous ranges
/// of entries, each also checked against the entry before it, the lowest
/// violation kept. Small inputs stay on the calling thread.
pub fn first_sorted_violation_par(idx: &[u64], shape: &[u64], threads: usize) -> Option<usize> {
    let r = shape.len();
    let n = idx.len() / r;
    let threads = crate::threads::count(threads, n, MIN_PER_THREAD);
    if threads == 1 {
        return first_sorted_violation(idx, shape);
    }
    let cuts: Vec<usize> = (0..=threads).map(|t| n * t / threads).collect();
    // Each range but the first starts one entry early, so the pair across
    // the cut is checked (its first entry again, as the first of a slice:
    // bounds only).
    let part = |a: usize, b: usize| {
        let from = a.saturating_sub(1);
        first_sorted_violation(&idx[from * r..b * r], shape).map(|i| i + from)
    };
    crate::threads::each(threads, |t| part(cuts[t], cuts[t + 1]))
        .into_iter()
        .flatten()
        .min()
}

/// Below this many entries per thread, threads cost more than they save.
pub const MIN_PER_THREAD: usize = 1 << 16;

fn first_out_of_bounds_r<const R: usize>(idx: &[u64], shape: &[u64]) -> Option<usize> {
    let mut s = [0u64; R];
    s.copy_from_slice(shape);
    let n = idx.len() / R;
    let mut start = 0;
    while start < n {
        let end = (start + BLOCK).min(n);
        let mut ok = true;
        for e in idx[start * R..end * R].chunks_exact(R) {
            let mut c = [0u64; R];
            c.copy_from_slice(e);
            ok &= in_bounds(&c, &s);
        }
        if !ok {
            return (start..end).find(|&i| !in_bounds(&entry::<R>(idx, i), &s));
        }
        start = end;
    }
    None
}

/// The first entry with a coordinate outside the shape.
pub fn first_out_of_bounds(idx: &[u64], shape: &[u64]) -> Option<usize> {
    match shape.len() {
        1 => first_out_of_bounds_r::<1>(idx, shape),
        2 => first_out_of_bounds_r::<2>(idx, shape),
        3 => first_out_of_bounds_r::<3>(idx, shape),
        4 => first_out_of_bounds_r::<4>(idx, shape),
        5 => first_out_of_bounds_r::<5>(idx, shape),
        6 => first_out_of_bounds_r::<6>(idx, shape),
        7 => first_out_of_bounds_r::<7>(idx, shape),
        8 => first_out_of_bounds_r::<8>(idx, shape),
        r => (0..idx.len() / r).find(|&i| {
            idx[i * r..(i + 1) * r]
                .iter()
                .zip(shape)
                .any(|(x, e)| x >= e)
        }),
    }
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
    fn threaded_scan_finds_the_same_first_violation() {
        let n = 3 * MIN_PER_THREAD + 17;
        let shape = [n as u64 + 5, 4];
        let sorted: Vec<u64> = (0..n as u64).flat_map(|i| [i, i % 4]).collect();
        assert_eq!(first_sorted_violation_par(&sorted, &shape, 4), None);
        // Violations at and around each cut of 2, 3 and 4 threads.
        let mut at: Vec<usize> = vec![2, 3, n - 1];
        for t in 2..=4 {
            for k in 1..t {
                let c = n * k / t;
                at.extend([c - 1, c, c + 1]);
            }
        }
        for &i in &at {
            for kind in 0..3 {
                let mut idx = sorted.clone();
                match kind {
                    0 => {
                        // a repeat of its predecessor
                        idx[2 * i] = idx[2 * i - 2];
                        idx[2 * i + 1] = idx[2 * i - 1];
                    }
                    1 => idx[2 * i + 1] = 9, // out of bounds
                    _ => idx[2 * i] = 0,     // before its predecessor
                }
                let want = first_sorted_violation(&idx, &shape);
                assert!(want.is_some());
                for threads in 1..=4 {
                    assert_eq!(
                        first_sorted_violation_par(&idx, &shape, threads),
                        want,
                        "{i} {kind}"
                    );
                }
            }
        }
    }

    /// The rank-1 block check (AVX-512 where the CPU has it) gives its
    /// scalar oracle's verdict: increasing blocks of every length around
    /// the vector width, each broken at every position by a repeat, a
    /// lower value and a wrap past the sign bit, and random blocks.
    #[test]
    fn the_rank1_kernel_agrees_with_its_scalar_oracle() {
        let mut s = 5u64;
        let check = |idx: &[u64], n: usize, what: &str| {
            let want = block_ok_r1_scalar(idx, 1, n + 1);
            assert_eq!(block_ok::<1>(idx, 1, n + 1, &[u64::MAX]), want, "{what}");
            #[cfg(target_arch = "x86_64")]
            if avx512::available() {
                // SAFETY: the CPU has AVX-512F; 1 <= n + 1 <= len.
                let got = unsafe { avx512::block_ok_r1(idx, 1, n + 1) };
                assert_eq!(got, want, "{what} (AVX-512)");
            }
            want
        };
        for len in [1usize, 2, 7, 8, 9, 15, 16, 17, 24, 25, 64] {
            let mut base = vec![rng(&mut s) % 4 + (1 << 63)];
            for k in 0..len {
                base.push(base[k] + 1 + rng(&mut s) % 3);
            }
            assert!(check(&base, len, "increasing"));
            for at in 1..=len {
                for kind in 0..3 {
                    let mut idx = base.clone();
                    idx[at] = match kind {
                        0 => idx[at - 1],
                        1 => idx[at - 1] - 1,
                        _ => idx[at - 1] ^ (1 << 63), // above it, compared signed
                    };
                    assert!(!check(&idx, len, &format!("{len} {at} {kind}")));
                }
            }
        }
        for _ in 0..3000 {
            let n = 1 + (rng(&mut s) % 40) as usize;
            let idx: Vec<u64> = (0..=n)
                .map(|k| match rng(&mut s) % 5 {
                    0 => u64::MAX - rng(&mut s) % 3,
                    1 => (1 << 63) + rng(&mut s) % 3,
                    _ => k as u64 * 2 + rng(&mut s) % 3,
                })
                .collect();
            check(&idx, n, "random");
        }
    }

    /// The rank-2 block checks (AVX2 and AVX-512, each where the CPU has
    /// it) give their scalar oracle's verdict: sorted blocks of every length around the vector
    /// width, each broken once at every position by each kind of violation
    /// (a repeat, a lower row, the same row with a lower column, a column
    /// at or far past the shape, a row past 2^32), and random blocks with high bits set. On
    /// a CPU without them both sides are the scalar loop, and the test
    /// still runs.
    #[test]
    fn the_rank2_kernel_agrees_with_its_scalar_oracle() {
        let mut s = 11u64;
        let cols = 50u64;
        let check = |idx: &[u64], n: usize, cols: u64, what: &str| {
            let want = block_ok_r2_scalar(idx, 1, n + 1, cols);
            let shape = [0, cols];
            assert_eq!(
                block_ok::<2>(idx, 1, n + 1, &shape),
                dispatched_verdict(idx, n, &shape, want),
                "{what}"
            );
            #[cfg(target_arch = "x86_64")]
            if avx512::available() && cols <= NARROW {
                // SAFETY: the CPU has AVX-512F; 1 <= n + 1 and 2 * (n + 1) <= len.
                let got = unsafe { avx512::block_ok_r2_narrow(idx, 1, n + 1, cols) };
                assert_eq!(
                    got,
                    narrow_verdict(idx, n, want),
                    "{what} (AVX-512, narrow)"
                );
            }
            #[cfg(target_arch = "x86_64")]
            if avx2::available() {
                // SAFETY: the CPU has AVX2; 1 <= n + 1 and 2 * (n + 1) <= len.
                let got = unsafe { avx2::block_ok_r2(idx, 1, n + 1, cols) };
                assert_eq!(got, want, "{what}");
            }
            #[cfg(target_arch = "x86_64")]
            if avx512::available() {
                // SAFETY: the CPU has AVX-512F; as above.
                let got = unsafe { avx512::block_ok_r2(idx, 1, n + 1, cols) };
                assert_eq!(got, want, "{what} (AVX-512)");
            }
            want
        };
        for len in [1usize, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 25, 31, 64, 100] {
            // Entries 0..=len, strictly increasing; entry 0 is the
            // predecessor of the block.
            let mut base: Vec<u64> = Vec::new();
            let (mut r, mut c) = (rng(&mut s) % 3, rng(&mut s) % 5);
            for _ in 0..=len {
                base.extend([r, c]);
                if rng(&mut s).is_multiple_of(3) || c + 3 >= cols {
                    r += 1 + rng(&mut s) % 2;
                    c = rng(&mut s) % 5;
                } else {
                    c += 1 + rng(&mut s) % 3;
                }
            }
            assert!(check(&base, len, cols, "sorted"));
            for at in 1..=len {
                for kind in 0..6 {
                    let mut idx = base.clone();
                    let (pr, pc) = (idx[2 * at - 2], idx[2 * at - 1]);
                    match kind {
                        0 => (idx[2 * at], idx[2 * at + 1]) = (pr, pc),
                        1 if pr > 0 => idx[2 * at] = pr - 1,
                        2 if pc > 0 => (idx[2 * at], idx[2 * at + 1]) = (pr, pc - 1),
                        3 => idx[2 * at + 1] = cols,
                        // A row whose low 32 bits keep the order: only its
                        // bound tells the narrow kernel.
                        4 => idx[2 * at] += NARROW,
                        _ => idx[2 * at + 1] = u64::MAX,
                    }
                    check(&idx, len, cols, &format!("{len} {at} {kind}"));
                }
            }
        }
        for _ in 0..3000 {
            let n = 1 + (rng(&mut s) % 40) as usize;
            let idx: Vec<u64> = (0..2 * (n + 1))
                .map(|k| match rng(&mut s) % 4 {
                    0 => u64::MAX - rng(&mut s) % 3,
                    1 => (1 << 63) + rng(&mut s) % 3,
                    _ if k % 2 == 1 => rng(&mut s) % 6,
                    _ => rng(&mut s) % 3,
                })
                .collect();
            check(&idx, n, 5, "random");
            check(&idx, n, u64::MAX, "random, any column");
            // The same order just under 2^32, the largest coordinates the
            // narrow kernel packs, the columns' bound 2^32 itself.
            let edge: Vec<u64> = idx
                .iter()
                .map(|&v| if v < 8 { NARROW - 8 + v } else { v })
                .collect();
            check(&edge, n, NARROW, "random, at the 32-bit edge");
        }
    }

    /// As the rank-2 test, for rank 3: every kind of violation at every
    /// position, in each coordinate, and random blocks.
    #[test]
    fn the_rank3_kernel_agrees_with_its_scalar_oracle() {
        let mut s = 29u64;
        let bounds = [20u64, 30];
        let check = |idx: &[u64], n: usize, bounds: [u64; 2], what: &str| {
            let want = block_ok_r3_scalar(idx, 1, n + 1, bounds);
            assert_eq!(
                block_ok::<3>(idx, 1, n + 1, &[0, bounds[0], bounds[1]]),
                want,
                "{what}"
            );
            #[cfg(target_arch = "x86_64")]
            if avx2::available() {
                // SAFETY: the CPU has AVX2; 1 <= n + 1 and 3 * (n + 1) <= len.
                let got = unsafe { avx2::block_ok_r3(idx, 1, n + 1, bounds) };
                assert_eq!(got, want, "{what}");
            }
            #[cfg(target_arch = "x86_64")]
            if avx512::available() {
                // SAFETY: the CPU has AVX-512F; as above.
                let shape = [0, bounds[0], bounds[1]];
                let got = unsafe { avx512::block_ok::<3>(idx, 1, n + 1, &shape) };
                assert_eq!(got, want, "{what} (AVX-512)");
            }
            want
        };
        for len in [1usize, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 25, 33, 64] {
            let mut base: Vec<u64> = Vec::new();
            let mut e = [rng(&mut s) % 3, rng(&mut s) % 4, rng(&mut s) % 5];
            for _ in 0..=len {
                base.extend(e);
                match rng(&mut s) % 4 {
                    0 => e = [e[0] + 1, rng(&mut s) % 4, rng(&mut s) % 5],
                    1 if e[1] + 2 < bounds[0] => e = [e[0], e[1] + 1, rng(&mut s) % 5],
                    _ if e[2] + 2 < bounds[1] => e[2] += 1 + rng(&mut s) % 2,
                    _ => e = [e[0] + 1, 0, 0],
                }
            }
            assert!(check(&base, len, bounds, "sorted"));
            // Tight bounds: each coordinate's largest value in the block
            // decides alone.
            let block = &base[3..];
            let mb = block.chunks_exact(3).map(|e| e[1]).max().unwrap();
            let mc = block.chunks_exact(3).map(|e| e[2]).max().unwrap();
            assert!(check(&base, len, [mb + 1, mc + 1], "tight"));
            assert!(!check(&base, len, [mb, mc + 1], "second bound"));
            assert!(!check(&base, len, [mb + 1, mc], "third bound"));
            assert!(check(&base, len, [mb + 1, u64::MAX], "third free"));
            for at in 1..=len {
                for kind in 0..7 {
                    let mut idx = base.clone();
                    let p = [idx[3 * at - 3], idx[3 * at - 2], idx[3 * at - 1]];
                    let e = &mut idx[3 * at..3 * at + 3];
                    match kind {
                        0 => e.copy_from_slice(&p),
                        1 if p[0] > 0 => e[0] = p[0] - 1,
                        2 if p[1] > 0 => e.copy_from_slice(&[p[0], p[1] - 1, p[2] + 1]),
                        3 if p[2] > 0 => e.copy_from_slice(&[p[0], p[1], p[2] - 1]),
                        4 => e[1] = bounds[0],
                        5 => e[2] = bounds[1],
                        _ => e[2] = u64::MAX,
                    }
                    check(&idx, len, bounds, &format!("{len} {at} {kind}"));
                }
            }
        }
        for _ in 0..3000 {
            let n = 1 + (rng(&mut s) % 40) as usize;
            let idx: Vec<u64> = (0..3 * (n + 1))
                .map(|_| match rng(&mut s) % 7 {
                    0 => u64::MAX - rng(&mut s) % 3,
                    1 => (1 << 63) + rng(&mut s) % 3,
                    _ => rng(&mut s) % 3,
                })
                .collect();
            check(&idx, n, [3, 3], "random");
            check(&idx, n, [2, 3], "random, a lower second bound");
            check(&idx, n, [3, 2], "random, a lower third bound");
            check(&idx, n, [u64::MAX, u64::MAX], "random, any bound");
        }
    }

    /// What the rank-2 narrow kernel answers on entries `1..=n` of `idx`
    /// where the scalar check answers `want`: also false for a row that
    /// does not fit 32 bits, unless the predecessor does not fit (then it
    /// is the split kernel's exact answer).
    fn narrow_verdict(idx: &[u64], n: usize, want: bool) -> bool {
        if idx[0] >= NARROW || idx[1] >= NARROW {
            return want;
        }
        want && idx[2..2 * (n + 1)].iter().step_by(2).all(|&r| r < NARROW)
    }

    /// What `block_ok` answers where the scalar check answers `want`: the
    /// narrow kernel's verdict on rank 2 when it is the one dispatched
    /// (AVX-512, both extents at most 2^32), else `want`.
    fn dispatched_verdict<const R: usize>(
        idx: &[u64],
        n: usize,
        shape: &[u64; R],
        want: bool,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if R == 2 && avx512::available() && shape.iter().all(|&x| x <= NARROW) {
            return narrow_verdict(idx, n, want);
        }
        want
    }

    /// The block check of rank R (AVX-512 where the CPU has it, any rank up
    /// to 8) gives the one-entry-at-a-time oracle's verdict: sorted blocks
    /// of lengths around the 8-entry step, each broken once at every
    /// position by each kind of violation in each coordinate (a repeat, a
    /// lower coordinate after equal ones, a coordinate at or far past its
    /// bound), a leading coordinate past its bound (not this check's), and
    /// random blocks with high bits set.
    fn block_check_agrees<const R: usize>(seed: u64) {
        let mut s = seed;
        let shape: [u64; R] = std::array::from_fn(|d| 5 + d as u64 * 3);
        let check = |idx: &[u64], n: usize, shape: &[u64; R], what: &str| {
            let want = block_ok_scalar::<R>(idx, 1, n + 1, shape);
            assert_eq!(
                block_ok::<R>(idx, 1, n + 1, shape),
                dispatched_verdict(idx, n, shape, want),
                "rank {R}: {what}"
            );
            #[cfg(target_arch = "x86_64")]
            if avx512::available() {
                // SAFETY: the CPU has AVX-512F; R <= 8; R * (n + 1) <= len.
                let got = unsafe { avx512::block_ok::<R>(idx, 1, n + 1, shape) };
                assert_eq!(got, want, "rank {R}: {what} (AVX-512)");
            }
            want
        };
        for len in [1usize, 2, 7, 8, 9, 15, 16, 17, 24, 25, 40] {
            // Entries 0..=len in order; entry 0 is the block's predecessor.
            let mut base: Vec<u64> = Vec::new();
            let mut e: [u64; R] = std::array::from_fn(|d| rng(&mut s) % 2 + u64::from(d == 0));
            for _ in 0..=len {
                base.extend(e);
                // Step up at a random coordinate, zeroing the ones after it
                // (leading coordinates are unbounded here).
                let mut d = (rng(&mut s) % R as u64) as usize;
                while d > 0 && e[d] + 1 >= shape[d] {
                    d -= 1;
                }
                e[d] += 1;
                for x in &mut e[d + 1..] {
                    *x = rng(&mut s) % 2;
                }
            }
            assert!(check(&base, len, &shape, "sorted"), "{len}");
            for at in 1..=len {
                for d in 0..R {
                    for kind in 0..4 {
                        let mut idx = base.clone();
                        let (p, c) = idx.split_at_mut(R * at);
                        let (p, c) = (&p[R * (at - 1)..], &mut c[..R]);
                        match kind {
                            0 => c.copy_from_slice(p),
                            1 if p[d] > 0 => {
                                c.copy_from_slice(p);
                                c[d] = p[d] - 1;
                                for x in &mut c[d + 1..] {
                                    *x = 0;
                                }
                            }
                            2 => c[d] = shape[d],
                            _ => c[d] = u64::MAX - 1,
                        }
                        check(&idx, len, &shape, &format!("{len} {at} {d} {kind}"));
                    }
                }
            }
        }
        for _ in 0..1000 {
            let n = 1 + (rng(&mut s) % 30) as usize;
            let idx: Vec<u64> = (0..R * (n + 1))
                .map(|_| match rng(&mut s) % 7 {
                    0 => u64::MAX - rng(&mut s) % 3,
                    1 => (1 << 63) + rng(&mut s) % 3,
                    _ => rng(&mut s) % 3,
                })
                .collect();
            check(&idx, n, &[3; R], "random");
            check(&idx, n, &[u64::MAX; R], "random, any bound");
            // Mostly in order: few entries break it, so the fold decides.
            let mut sorted: Vec<[u64; R]> = idx
                .chunks_exact(R)
                .map(|e| std::array::from_fn(|d| e[d]))
                .collect();
            sorted.sort();
            if rng(&mut s).is_multiple_of(2) {
                sorted.dedup();
            }
            let flat: Vec<u64> = sorted.concat();
            let m = flat.len() / R - 1;
            if m >= 1 {
                check(&flat, m, &[u64::MAX; R], "sorted random");
                check(&flat, m, &[3; R], "sorted random, bounded");
            }
        }
    }

    #[test]
    fn the_block_check_agrees_with_its_scalar_oracle_at_every_rank() {
        block_check_agrees::<1>(3);
        block_check_agrees::<2>(5);
        block_check_agrees::<3>(7);
        block_check_agrees::<4>(11);
        block_check_agrees::<5>(13);
        block_check_agrees::<6>(17);
        block_check_agrees::<7>(19);
        block_check_agrees::<8>(23);
    }

    #[test]
    fn kernels_agree_with_the_generic_scan() {
        let mut s = 7u64;
        for rank in 1..=9usize {
            for _ in 0..300 {
                let shape: Vec<u64> = (0..rank).map(|_| 1 + rng(&mut s) % 4).collect();
                let n = (rng(&mut s) % 5000) as usize;
                let mut entries: Vec<Vec<u64>> = (0..n)
                    .map(|_| shape.iter().map(|&x| rng(&mut s) % (x + 1)).collect())
                    .collect();
                if rng(&mut s).is_multiple_of(2) {
                    entries.sort();
                    entries.dedup();
                }
                let idx: Vec<u64> = entries.concat();
                assert_eq!(
                    first_sorted_violation(&idx, &shape),
                    first_sorted_violation_any(&idx, &shape)
                );
                let naive = (0..idx.len() / rank).find(|&i| {
                    idx[i * rank..(i + 1) * rank]
                        .iter()
                        .zip(&shape)
                        .any(|(x, e)| x >= e)
                });
                assert_eq!(first_out_of_bounds(&idx, &shape), naive);
            }
        }
    }
}
