//! CSR offsets and 4-byte column indices from strictly sorted (row, column)
//! pairs stored as interleaved `u64` words (a canonical handle's indices),
//! eight entries a step on AVX-512: the one range of work
//! [`super::compressed::sorted_into_csr`] hands each thread, as its scalar
//! `sorted_range` does it (that loop is this kernel's oracle:
//! `the_pair_kernel_agrees_with_the_scalar_range`).
//!
//! A step loads eight entries (two vectors), packs their columns' low 32
//! bits (plus the base) into eight 4-byte indices with one permute, and
//! compares each entry's row with its predecessor's. Rows that start in
//! the step are one more than the row before (every row holds an entry: a
//! mesh, a graph without isolated vertices), so their offsets are the
//! entries' numbers compress-stored in order; a step with an empty row
//! between two entries writes its offsets one row at a time, as the scalar
//! loop does. The last `len % 8` entries, and the offsets of the rows after
//! the last entry, are the scalar loop's own (called on the rest of the
//! range).

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use crate::coo::validate::scan::avx512::eight_pairs;
    use std::arch::x86_64::*;

    /// Whether the CPU has what the kernel uses (AVX-512F and VL; the
    /// sorted check's switch `HURRAY_COO_NO_AVX512` turns it off too).
    #[inline]
    pub(crate) fn available() -> bool {
        crate::coo::validate::scan::avx512::available()
            && std::arch::is_x86_feature_detected!("avx512vl")
    }

    /// Entries `lo..lo + cols.len()` of `pairs` (interleaved 0-based (row,
    /// column) words, strictly increasing): each one's column plus `base`
    /// into `cols`, and the offsets of the rows the range owns into `o`
    /// (`o[0]` is row `r0`; a row's offset is the number, plus `base`, of
    /// its first entry at or after it, `lo + cols.len()` for rows past the
    /// range's last entry). The caller has checked that every column and
    /// every entry number, plus `base`, fits 32 bits; each row of the range
    /// is at least `r0` and below `r0 + o.len()`.
    ///
    /// # Safety
    /// The CPU has AVX-512F and VL; `2 * (lo + cols.len()) <= pairs.len()`.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(crate) unsafe fn sorted_range(
        pairs: &[u64],
        lo: usize,
        r0: usize,
        base: u32,
        o: &mut [u32],
        cols: &mut [u32],
    ) {
        let n = cols.len();
        let row = |k: usize| pairs[2 * (lo + k)] as usize;
        // What the scalar loop keeps: one past the row of the last entry
        // placed; before the first, as if an entry sat on row r0 - 1.
        let mut next = r0;
        // Low 32 bits of entry e's column: word 2e + 1, so 32-bit lane
        // 4e + 2 of the pair of vectors.
        let pick = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 0, 0, 0, 0, 0, 0, 0, 0);
        let rows_at = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
        let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let one_up = _mm512_set1_epi64(1);
        let vbase = _mm256_set1_epi32(base as i32);
        let p = pairs.as_ptr();
        let mut prev = _mm512_set1_epi64(r0.wrapping_sub(1) as i64);
        let mut k = 0;
        while k + 8 <= n {
            // SAFETY: the CPU has AVX-512F; entries lo + k ..= lo + k + 7
            // are inside pairs (k + 8 <= n).
            let (a, b) = unsafe { eight_pairs(p, lo + k) };
            let c = _mm256_add_epi32(
                _mm512_castsi512_si256(_mm512_permutex2var_epi32(a, pick, b)),
                vbase,
            );
            // SAFETY: cols[k .. k + 8] is inside cols (k + 8 <= n).
            unsafe { _mm256_storeu_si256(cols.as_mut_ptr().add(k).cast(), c) };
            let rows = _mm512_permutex2var_epi64(a, rows_at, b);
            // [prev lane 7, rows 0..=6]: each entry's predecessor's row.
            let before = _mm512_alignr_epi64::<7>(rows, prev);
            prev = rows;
            let starts = _mm512_cmpneq_epu64_mask(rows, before);
            if starts != 0 {
                let count = starts.count_ones() as usize;
                let steps_of_one =
                    _mm512_mask_cmpeq_epu64_mask(starts, rows, _mm512_add_epi64(before, one_up));
                if steps_of_one == starts && next - r0 + count <= o.len() {
                    let first = _mm256_set1_epi32(((lo + k) as u32).wrapping_add(base) as i32);
                    // SAFETY: o[next - r0 .. next - r0 + count] is inside o
                    // (checked above); the store writes `count` lanes.
                    unsafe {
                        _mm256_mask_compressstoreu_epi32(
                            o.as_mut_ptr().add(next - r0).cast(),
                            starts,
                            _mm256_add_epi32(iota, first),
                        )
                    };
                    next += count;
                } else {
                    for e in 0..8 {
                        let r = row(k + e);
                        if starts >> e & 1 == 1 && r >= next {
                            o[next - r0..=r - r0].fill(((lo + k + e) as u32).wrapping_add(base));
                            next = r + 1;
                        }
                    }
                }
            }
            k += 8;
        }
        // The tail, and the offsets of the rows after the last entry, as
        // the scalar loop writes them: the rest of the range is a range.
        let at = |k: usize| (pairs[2 * k] as usize, pairs[2 * k + 1] as usize);
        super::super::compressed::sorted_range(
            &at,
            lo + k,
            next,
            u64::from(base),
            &mut o[next - r0..],
            &mut cols[k..],
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::coo::lookup::sample::rng;

    /// Strictly increasing (row, column) pairs: rows that start one after
    /// the other, or after a gap of empty rows (`gaps` of 10 chances), rows
    /// of 1 to `per_row` entries.
    fn pairs(n: usize, gaps: u64, per_row: u64, s: &mut u64) -> Vec<u64> {
        let mut out = Vec::with_capacity(2 * n);
        let mut row = rng(s) % 3;
        while out.len() < 2 * n {
            let mut col = rng(s) % 4;
            for _ in 0..1 + rng(s) % per_row {
                out.extend([row, col]);
                col += 1 + rng(s) % 3;
            }
            row += 1 + u64::from(rng(s) % 10 < gaps) * (1 + rng(s) % 4);
        }
        out.truncate(2 * n);
        out
    }

    /// The AVX-512 range gives what the scalar range gives (the offsets of
    /// the rows it owns, the columns), on ranges that start mid-tensor and
    /// at row 0, with and without empty rows, with rows longer than a step,
    /// base 0 and 1, and lengths around the 8-entry step. On a CPU without
    /// the instructions only the scalar range runs.
    #[test]
    fn the_pair_kernel_agrees_with_the_scalar_range() {
        let mut s = 41u64;
        for case in 0..600 {
            let n = 1 + (rng(&mut s) % 70) as usize;
            let (gaps, per_row) = [(0, 1), (0, 5), (2, 3), (10, 2), (0, 20), (5, 40)][case % 6];
            let p = pairs(n, gaps, per_row, &mut s);
            let lo = (rng(&mut s) % n as u64) as usize;
            let r0 = if lo == 0 {
                0
            } else {
                p[2 * lo - 2] as usize + 1
            };
            let last = p[2 * n - 2] as usize;
            let rows_owned = last + 1 - r0 + (rng(&mut s) % 3) as usize;
            let base = rng(&mut s) % 2;
            let at = |k: usize| (p[2 * k] as usize, p[2 * k + 1] as usize);
            let mut want_o = vec![0u32; rows_owned];
            let mut want_c = vec![0u32; n - lo];
            super::super::compressed::sorted_range(&at, lo, r0, base, &mut want_o, &mut want_c);
            #[cfg(target_arch = "x86_64")]
            if super::avx512::available() {
                let mut o = vec![u32::MAX; rows_owned];
                let mut c = vec![u32::MAX; n - lo];
                // SAFETY: the CPU has AVX-512F and VL; 2 * n == p.len().
                unsafe { super::avx512::sorted_range(&p, lo, r0, base as u32, &mut o, &mut c) };
                assert_eq!(o, want_o, "offsets, case {case}: n {n} lo {lo} r0 {r0}");
                assert_eq!(c, want_c, "columns, case {case}: n {n} lo {lo}");
            }
        }
    }
}
