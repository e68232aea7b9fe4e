//! The opt-in lookup index (`HURRAY_COO_INDEX`) when an entry's linear key
//! is narrow enough: a bucketised hash table of 64-byte lines, whose slots
//! hold everything a lookup needs. A lookup reads one line (rarely more)
//! and never the entries themselves.
//!
//! The linear key `k` (`key_bits` wide) is mixed by a bijection into `h`.
//! The home line is `floor(h * lines / 2^key_bits)` (any line count, so the
//! table can be kept five eighths full); the slot stores the low `rem_bits`
//! bits of `h`, which with the home line determine `h` (and so `k`)
//! exactly, the number of lines the entry was pushed past its home line
//! (0..=63, or 0..=15 when the slot is short of bits), and the entry
//! number. A line with an empty slot ends a lookup:
//! slots are filled in order and never emptied.
//!
//! A line holds `K` key slots: eight (`PackedIndex<8>`, the index alone),
//! or four followed by the four entries' values as `f64` bits
//! (`PackedIndex<4>`, `HURRAY_COO_INDEX_VALUES`), so that a lookup of a
//! value reads one line, not the line and then the caller's buffer.
//!
//! Memory: `ceil(n / 5)` lines of 64 bytes for `K = 8`, `ceil(n / 2)` for
//! `K = 4` (and 56 bytes for alignment): at most 12.8 bytes per entry plus
//! 120, or 32, in transparent huge pages on Linux (random lookups then
//! rarely miss the TLB).

use crate::aligned;
use crate::coo::key::{bits_below, linear, LinearKey, Mixer};
use crate::hint::{prefetch, select};

/// Whether the CPU has AVX2 (the line probe then uses it).
fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `u64` words per line (64 bytes).
const LINE: usize = 8;
const EMPTY: u64 = u64::MAX;
/// Bits of a slot's displacement (lines its entry was pushed past its home
/// line): six (up to 63 lines) when the slot has room, else four (15).
const WIDE_DISP_BITS: u32 = 6;
const DISP_BITS: u32 = 4;
/// Entries per line the line count aims at, in eighths of its `K` slots:
/// five eighths of eight, half of four (four-slot lines overflow into
/// their neighbours sooner; at five eighths, runs of 15 full lines showed
/// up in tables of 20,000 random keys).
const fn fill_eighths(k: usize) -> usize {
    if k == 4 {
        4
    } else {
        5
    }
}

pub struct PackedIndex<const K: usize> {
    /// `lines` cache lines of 8 slots from `table[offset]` (64-byte aligned
    /// there), filled in order; slot values are
    /// `(rem << disp_bits | displacement) << entry_bits | entry`, `EMPTY`
    /// when empty (a value's top bit is never set). A plain
    /// `u64` allocation (not a 64-aligned type) so that it comes untouched
    /// from the allocator and can still get huge pages.
    table: Vec<u64>,
    offset: usize,
    lines: usize,
    mixer: Mixer,
    /// `64 - key_bits`: a mixed key shifted left by it has its bits on top.
    top_shift: u32,
    rem_mask: u64,
    /// Bits of the displacement (`DISP_BITS` or `WIDE_DISP_BITS`) plus
    /// `entry_bits`: where the remainder sits in a slot.
    want_shift: u32,
    /// Lines an entry may be pushed past its home line: 2^disp_bits - 1.
    max_disp: u64,
    entry_bits: u32,
    /// `2^entry_bits`, kept as a value: computed at each use it becomes a
    /// variable shift per slot.
    span: u64,
    /// The CPU has AVX2 (detected at build): a line is probed in a few
    /// vector instructions instead of a compare per slot.
    avx2: bool,
}

/// Where a probe ended: the slot (an index into `table`) holding the
/// key's entry when `found`, else a slot of its home line.
#[derive(Clone, Copy, Default)]
pub struct Hit {
    slot: usize,
    found: bool,
}

/// Where a key lives: its home line and its slot value without the
/// displacement and the entry number (`rem << (disp_bits + entry_bits)`).
struct Place {
    home: usize,
    want: u64,
}

/// Why no packed index was built.
pub enum NotBuilt {
    /// The key, its home line and the entry number do not fit a slot, or
    /// some line overflowed (crafted keys): use another index.
    Unsuitable,
    /// Allocation of this many bytes failed.
    Alloc(usize),
}

impl<const K: usize> PackedIndex<K> {
    /// Index the entries of `idx` (rank `shape.len()`), whose element count
    /// is `elements`, with row-major `strides`. Entries outside the shape
    /// (unchecked, permissive data) are left out: no query can ask for
    /// them. Entries are inserted in order and an equal key never replaces
    /// an earlier entry, so a lookup finds the first match, as a scan does.
    pub fn build(
        idx: &[u64],
        shape: &[u64],
        strides: &[u64],
        elements: u128,
    ) -> Result<PackedIndex<K>, NotBuilt> {
        let r = shape.len();
        let n = idx.len() / r;
        let key_bits = bits_below(elements).max(1);
        let entry_bits = bits_below(n as u128).max(1);
        const { assert!(K == 4 || K == 8) };
        let lines = (n * 8).div_ceil(fill_eighths(K) * K).max(1);
        // With `lines >= 2^c`, the values of `h` that share a home line form
        // an interval of at most `2^(key_bits - c)` consecutive integers,
        // which their low `key_bits - c` bits tell apart.
        let rem_bits = key_bits.saturating_sub(lines.ilog2());
        // Room for displacements up to 63 lines when the slot has the bits
        // (large tables have longer runs of full lines), else up to 15.
        let disp_bits = match rem_bits + entry_bits {
            b if b + WIDE_DISP_BITS <= 63 => WIDE_DISP_BITS,
            b if b + DISP_BITS <= 63 => DISP_BITS,
            _ => return Err(NotBuilt::Unsuitable),
        };
        let slots = lines * LINE + (LINE - 1);
        let mut table =
            aligned::zeroed_vec::<u64>(slots).ok_or(NotBuilt::Alloc(slots.saturating_mul(8)))?;
        table.fill(EMPTY);
        let offset = (64 - table.as_ptr() as usize % 64) % 64 / 8;
        let mut index = PackedIndex {
            table,
            offset,
            lines,
            mixer: Mixer::new(key_bits),
            top_shift: 64 - key_bits,
            rem_mask: (1u64 << rem_bits) - 1,
            want_shift: disp_bits + entry_bits,
            max_disp: (1u64 << disp_bits) - 1,
            entry_bits,
            span: 1u64 << entry_bits,
            avx2: has_avx2(),
        };
        let key = LinearKey::<0> { shape, strides };
        for (i, e) in idx.chunks_exact(r).enumerate() {
            let (k, valid) = key.key(e);
            if valid && !index.insert(k, i) {
                return Err(NotBuilt::Unsuitable);
            }
        }
        Ok(index)
    }

    /// Home line and remainder of key `k`.
    #[inline(always)]
    fn place(&self, k: u64) -> Place {
        let h = self.mixer.mix(k);
        // floor(h * lines / 2^key_bits), as the high half of one product.
        let top = h << self.top_shift;
        Place {
            home: ((u128::from(top) * self.lines as u128) >> 64) as usize,
            want: (h & self.rem_mask) << self.want_shift,
        }
    }

    /// The slot value that `entry` gets `disp` lines past its home.
    #[inline(always)]
    fn slot_value(&self, p: &Place, disp: u64, entry: u64) -> u64 {
        p.want | disp << self.entry_bits | entry
    }

    /// Insert `entry` under key `k`; `false` when every line it may use is
    /// full. An entry already stored under `k` is kept.
    fn insert(&mut self, k: u64, entry: usize) -> bool {
        let p = self.place(k);
        let mut line = p.home;
        for disp in 0..=self.max_disp {
            let tagged = self.slot_value(&p, disp, 0);
            let span = self.span;
            let at = self.offset + line * LINE;
            for s in &mut self.table[at..at + K] {
                if *s == EMPTY {
                    *s = tagged | entry as u64;
                    return true;
                }
                if *s ^ tagged < span {
                    return true; // an earlier entry has this key
                }
            }
            line += 1;
            if line == self.lines {
                line = 0;
            }
        }
        false
    }

    /// The entry stored at coordinates `q` (inside the shape, whose
    /// row-major `strides` these are), if any.
    #[inline]
    pub fn find(&self, q: &[u64], strides: &[u64]) -> Option<usize> {
        let (at, stored) = self.find_flat(q, strides);
        stored.then_some(at)
    }

    /// `find` as `(entry, stored)`, entry 0 when not stored, without a
    /// branch that depends on the answer on the common path (the home line
    /// holds the entry or has an empty slot), and in few instructions: both
    /// let the CPU overlap the memory accesses of consecutive lookups.
    #[inline(always)]
    pub fn find_flat(&self, q: &[u64], strides: &[u64]) -> (usize, bool) {
        self.find_key(linear(q, strides))
    }

    /// `find_flat` for the linear key `k` of a query inside the shape.
    #[inline(always)]
    pub fn find_key(&self, k: u64) -> (usize, bool) {
        self.entry(self.hit(&self.place(k)))
    }

    /// The value kept beside the key `k` (`f64` bits, 0 when not stored)
    /// and whether it is stored, when the index keeps values (`K = 4`);
    /// `None` otherwise. One line holds both.
    #[inline(always)]
    pub fn find_value_key(&self, k: u64) -> Option<(u64, bool)> {
        if !self.has_values() {
            return None;
        }
        Some(self.value(self.hit(&self.place(k))))
    }

    /// The entry a probe found: `(entry, stored)`, entry 0 when not stored.
    #[inline(always)]
    pub fn entry(&self, h: Hit) -> (usize, bool) {
        let e = (self.table[h.slot] & (self.span - 1)) as usize;
        (select(h.found, e as u64, 0) as usize, h.found)
    }

    /// The value kept beside what a probe found (`has_values` holds):
    /// `(f64 bits, stored)`, 0 when not stored.
    #[inline(always)]
    pub fn value(&self, h: Hit) -> (u64, bool) {
        let v = self.table[h.slot + K];
        (select(h.found, v, 0), h.found)
    }

    /// Whether the lines keep each entry's value (`K = 4`; filled by
    /// `attach_values`).
    #[inline(always)]
    pub const fn has_values(&self) -> bool {
        K == 4
    }

    /// Keep beside each key slot the value of its entry, `value(entry)`,
    /// as `f64` bits (`K = 4`: the second half of each line).
    pub fn attach_values(&mut self, value: impl Fn(usize) -> f64) {
        if !self.has_values() {
            return;
        }
        let mask = self.span - 1;
        let used = &mut self.table[self.offset..self.offset + self.lines * LINE];
        for line in used.chunks_exact_mut(LINE) {
            let (keys, vals) = line.split_at_mut(K);
            for (v, &s) in vals.iter_mut().zip(keys.iter()) {
                if s != EMPTY {
                    *v = value((s & mask) as usize).to_bits();
                }
            }
        }
    }

    /// Probe for a placed key: with the AVX2 probe when the CPU has it.
    #[inline(always)]
    fn hit(&self, p: &Place) -> Hit {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the CPU has AVX2.
            return unsafe { self.hit_avx2(p) };
        }
        self.hit_by(p, Self::probe)
    }

    /// `hit_by` with the AVX2 probe, compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn hit_avx2(&self, p: &Place) -> Hit {
        // SAFETY: this function runs only on AVX2 CPUs.
        self.hit_by(p, |s, l, t| unsafe { s.probe_avx2(l, t) })
    }

    /// Probe for a placed key with `probe` (`Self::probe` or a vector
    /// version of it).
    #[inline(always)]
    fn hit_by(&self, p: &Place, probe: impl Fn(&Self, usize, u64) -> (usize, u64)) -> Hit {
        let (pos, last) = probe(self, p.home, p.want);
        // One predictable branch: "not found (pos == K) and not ended
        // here (last slot taken)" is rare. Folded into one value so that the
        // compiler does not split it into two branches, each unpredictable.
        if ((pos / K) as u64).min(!last) != 0 {
            return self.hit_displaced(p);
        }
        Hit {
            slot: self.offset + p.home * LINE + pos % K,
            found: pos < K,
        }
    }

    /// `find_flat` for many queries (`queries` holds `out.len()` of rank
    /// `rank`), in groups whose home lines are all read before any is
    /// probed: one light pass whose cache misses overlap, then the probes,
    /// which then hit the cache. Read the answers with `entry` or `value`.
    pub fn find_many(&self, queries: &[u64], rank: usize, strides: &[u64], out: &mut [Hit]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the CPU has AVX2.
            return unsafe { self.find_many_avx2(queries, rank, strides, out) };
        }
        self.find_many_by(queries, rank, strides, out, Self::probe)
    }

    /// `find_many_by` with the AVX2 probe, compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn find_many_avx2(
        &self,
        queries: &[u64],
        rank: usize,
        strides: &[u64],
        out: &mut [Hit],
    ) {
        // SAFETY: this function runs only on AVX2 CPUs.
        self.find_many_by(queries, rank, strides, out, |s, l, t| unsafe {
            s.probe_avx2(l, t)
        })
    }

    #[inline(always)]
    fn find_many_by(
        &self,
        queries: &[u64],
        rank: usize,
        strides: &[u64],
        out: &mut [Hit],
        probe: impl Fn(&Self, usize, u64) -> (usize, u64) + Copy,
    ) {
        // A software pipeline: query k is placed and its lines asked for
        // AHEAD queries before it is probed, so that the memory is always
        // busy with the next queries while this one is probed.
        const AHEAD: usize = 16;
        let ask = |q: &[u64]| self.ask(linear(q, strides));
        let mut ring = [const { Place { home: 0, want: 0 } }; AHEAD];
        let mut qs = queries.chunks_exact(rank);
        for (p, q) in ring.iter_mut().zip(qs.by_ref()) {
            *p = ask(q);
        }
        for (k, o) in out.iter_mut().enumerate() {
            let slot = &mut ring[k % AHEAD];
            let here = match qs.next() {
                Some(q) => std::mem::replace(slot, ask(q)),
                None => std::mem::replace(slot, Place { home: 0, want: 0 }),
            };
            *o = self.hit_by(&here, probe);
        }
    }

    /// Place key `k` and ask for the lines a probe reads: its home line
    /// and the next one, where a full home line sends the probe.
    #[inline(always)]
    fn ask(&self, k: u64) -> Place {
        let p = self.place(k);
        let next = if p.home + 1 == self.lines {
            0
        } else {
            p.home + 1
        };
        prefetch(&self.table[self.offset + p.home * LINE]);
        prefetch(&self.table[self.offset + next * LINE]);
        p
    }

    /// In `line`: the position of the slot holding `tagged | entry` for
    /// some entry (`K` when none: an empty slot has its top bit set,
    /// never part of a tag), and the line's last slot (slots fill in
    /// order: the line has room when it is `EMPTY`). No branches.
    #[inline(always)]
    fn probe(&self, line: usize, tagged: u64) -> (usize, u64) {
        let at = self.offset + line * LINE;
        let slots = &self.table[at..at + K];
        let mut pos = K;
        for (i, &s) in slots.iter().enumerate().rev() {
            pos = select(s ^ tagged < self.span, i as u64, pos as u64) as usize;
        }
        (pos, slots[K - 1])
    }

    /// `probe` in AVX2: a slot holds `tagged | entry` exactly when its bits
    /// above the entry number equal `tagged`'s, so the key slots (one or
    /// two vectors) are masked and compared with `tagged` at once.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn probe_avx2(&self, line: usize, tagged: u64) -> (usize, u64) {
        use std::arch::x86_64::*;
        let at = self.offset + line * LINE;
        let Ok(slots) = <&[u64; LINE]>::try_from(&self.table[at..at + LINE]) else {
            return self.probe(line, tagged);
        };
        let p = slots.as_ptr().cast::<__m256i>();
        let want = _mm256_set1_epi64x(tagged as i64);
        let high = _mm256_set1_epi64x(!(self.span - 1) as i64);
        let zero = _mm256_setzero_si256();
        let eq = |v| {
            let m = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_xor_si256(v, want), high), zero);
            _mm256_movemask_pd(_mm256_castsi256_pd(m)) as u32
        };
        // SAFETY: `slots` is 64 readable bytes; the unaligned loads of the
        // first and (K = 8) the second 32 bytes accept any address.
        let mask = unsafe {
            match K {
                4 => eq(_mm256_loadu_si256(p)),
                _ => eq(_mm256_loadu_si256(p)) | eq(_mm256_loadu_si256(p.add(1))) << 4,
            }
        };
        ((mask | 1 << K).trailing_zeros() as usize, slots[K - 1])
    }

    /// The slow path of `hit_by`: the home line is full and does not hold
    /// the key; try the lines after it.
    #[cold]
    fn hit_displaced(&self, p: &Place) -> Hit {
        let mut line = p.home;
        for disp in 1..=self.max_disp {
            line += 1;
            if line == self.lines {
                line = 0;
            }
            let (pos, last) = self.probe(line, self.slot_value(p, disp, 0));
            if pos < K {
                return Hit {
                    slot: self.offset + line * LINE + pos,
                    found: true,
                };
            }
            if last == EMPTY {
                break;
            }
        }
        Hit {
            slot: self.offset + p.home * LINE,
            found: false,
        }
    }

    /// Bytes the table occupies.
    pub fn bytes(&self) -> usize {
        self.table.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    fn build<const K: usize>(keys: &[u64], extent: u64) -> Result<PackedIndex<K>, NotBuilt> {
        PackedIndex::build(keys, &[extent], &[1], u128::from(extent))
    }

    #[test]
    fn finds_what_a_hash_map_finds() {
        finds_what_a_hash_map_finds_k::<8>(16);
        finds_what_a_hash_map_finds_k::<4>(33);
    }

    fn finds_what_a_hash_map_finds_k<const K: usize>(bytes_per_entry: usize) {
        let mut s = 5u64;
        for case in 0..300 {
            let extent = 1 + rng(&mut s) % (1 << (1 + case % 50));
            let n = (rng(&mut s) % 3000) as usize;
            // Out-of-shape keys (permissive data) are never found.
            let keys: Vec<u64> = (0..n).map(|_| rng(&mut s) % (extent + 2)).collect();
            let Ok(index) = build::<K>(&keys, extent) else {
                panic!("case {case}: not built")
            };
            let mut first = HashMap::new();
            for (i, &k) in keys.iter().enumerate() {
                if k < extent {
                    first.entry(k).or_insert(i);
                }
            }
            assert!(index.bytes() <= bytes_per_entry * n + 256, "case {case}");
            for _ in 0..200 {
                let q = rng(&mut s) % extent;
                let want = first.get(&q).copied();
                assert_eq!(index.find(&[q], &[1]), want, "case {case}");
                // Not stored: entry 0, whatever the slots held.
                assert_eq!(
                    index.find_flat(&[q], &[1]),
                    (want.unwrap_or(0), want.is_some())
                );
            }
            for &k in keys.iter().filter(|&&k| k < extent) {
                assert_eq!(index.find(&[k], &[1]), first.get(&k).copied());
            }
        }
    }

    #[test]
    fn vector_and_scalar_probes_agree() {
        vector_and_scalar_probes_agree_k::<8>();
        vector_and_scalar_probes_agree_k::<4>();
    }

    /// The AVX2 probe (when the CPU has it) and the scalar one find the
    /// same slot for every query, in tables full enough that many lookups
    /// go past their home line; with `K = 4` the value beside it is the
    /// entry's.
    fn vector_and_scalar_probes_agree_k<const K: usize>() {
        let mut s = 17u64;
        for case in 0..200 {
            let extent = 1 + rng(&mut s) % (1 << (4 + case % 30));
            let n = (rng(&mut s) % 2000) as usize;
            let keys: Vec<u64> = (0..n).map(|_| rng(&mut s) % extent).collect();
            let Ok(mut index) = build::<K>(&keys, extent) else {
                panic!("case {case}: not built")
            };
            index.attach_values(|i| i as f64 * 0.5 - 3.0);
            let vector = index.avx2;
            for _ in 0..300 {
                let q = rng(&mut s) % extent;
                index.avx2 = vector;
                let (a, va) = (index.find_flat(&[q], &[1]), index.find_value_key(q));
                index.avx2 = false;
                let (b, vb) = (index.find_flat(&[q], &[1]), index.find_value_key(q));
                assert_eq!((a, va), (b, vb), "case {case} key {q}");
                assert_eq!(vb.is_some(), K == 4);
                if let Some((bits, found)) = vb {
                    let want = if found { b.0 as f64 * 0.5 - 3.0 } else { 0.0 };
                    assert_eq!(f64::from_bits(bits), want, "case {case} key {q}");
                }
            }
        }
    }

    #[test]
    fn random_keys_never_overflow() {
        // 600 tables of up to 20,000 random keys: none falls back.
        let mut s = 99u64;
        for case in 0..600 {
            let n = 1 + (rng(&mut s) % 20_000) as usize;
            let keys: Vec<u64> = (0..n).map(|_| rng(&mut s) >> 24).collect();
            assert!(build::<8>(&keys, 1 << 40).is_ok(), "case {case} n {n}");
            assert!(build::<4>(&keys, 1 << 40).is_ok(), "case {case} n {n}");
        }
    }

    #[test]
    fn refuses_keys_too_wide_for_a_slot() {
        let keys = [1u64 << 62, 7];
        assert!(matches!(
            PackedIndex::<8>::build(&keys, &[u64::MAX], &[1], u128::from(u64::MAX)),
            Err(NotBuilt::Unsuitable)
        ));
    }

    #[test]
    fn refuses_keys_crafted_into_one_line() {
        // 520 distinct keys whose mixed values share home line 0 of 104
        // (520 entries at 5 per line): more than the 512 slots of the 64
        // lines they may use.
        let bits = 20;
        let mask = (1u64 << bits) - 1;
        let keys: Vec<u64> = (0..=mask)
            .filter(|&k| (Mixer::new(bits).mix(k) * 104) >> bits == 0)
            .take(520)
            .collect();
        assert_eq!(keys.len(), 520);
        assert!(matches!(
            build::<8>(&keys, 1 << bits),
            Err(NotBuilt::Unsuitable)
        ));
        // 500 of them fit (in 100 lines).
        let index = build::<8>(&keys[..500], 1 << bits).ok().unwrap();
        for (i, &k) in keys[..500].iter().enumerate() {
            assert_eq!(index.find(&[k], &[1]), Some(i));
        }
    }
}
