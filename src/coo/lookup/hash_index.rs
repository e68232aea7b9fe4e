//! The lookup index's fallback for keys too wide for the packed table: open
//! addressing over entry numbers, verified against the coordinates, so a
//! lookup costs O(1) expected instead of a scan. The table has exactly twice
//! as many slots as entries (at least 16; the home slot is a multiply-shift
//! of the hash, so no power-of-two rounding), 4-byte slots below 2^31
//! entries and 8-byte slots from there on: 8 or 16 bytes per entry, never
//! more than 16 plus 64 bytes.

use crate::error::CooError;

/// Slots hold `entry + 1`; 0 is empty.
enum Slots {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

pub struct HashIndex {
    slots: Slots,
    cap: usize,
}

fn hash(coords: &[u64]) -> u64 {
    // A multiply-rotate mix per coordinate, then a final avalanche.
    let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
    for &c in coords {
        h = (h.rotate_left(5) ^ c).wrapping_mul(0x517C_C1B7_2722_0A95);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^ (h >> 33)
}

/// The home slot of a hash in a table of `cap` slots (multiply-shift: any
/// capacity, uniform for a uniform hash).
fn home(h: u64, cap: usize) -> usize {
    ((u128::from(h) * cap as u128) >> 64) as usize
}

/// The slot after `s`, wrapping around.
fn next(s: usize, cap: usize) -> usize {
    if s + 1 == cap {
        0
    } else {
        s + 1
    }
}

/// The table for `n` entries: its slot count and whether slots are 8 bytes
/// wide (entry numbers from 2^31 on do not fit 4-byte slots).
fn table_shape(n: usize) -> Result<(usize, bool), CooError> {
    let cap = n
        .checked_mul(2)
        .map(|c| c.max(16))
        .ok_or_else(|| CooError::Overflow {
            what: format!("a hash index for {n} entries"),
        })?;
    Ok((cap, n >= (1 << 31)))
}

impl HashIndex {
    /// Index the `n` entries of `indices` (rank `r`). Entries are inserted in
    /// order and an equal tuple never replaces an earlier one, so a lookup
    /// finds the first matching entry, as a scan would.
    pub fn build(indices: &[u64], r: usize) -> Result<HashIndex, CooError> {
        let n = indices.len() / r;
        let (cap, wide) = table_shape(n)?;
        let alloc = |bytes| CooError::Alloc {
            bytes,
            what: "the hash index (HURRAY_COO_INDEX)",
        };
        let mut slots = if wide {
            let mut v: Vec<u64> = Vec::new();
            v.try_reserve_exact(cap)
                .map_err(|_| alloc(cap.saturating_mul(8)))?;
            v.resize(cap, 0);
            Slots::Wide(v)
        } else {
            let mut v: Vec<u32> = Vec::new();
            v.try_reserve_exact(cap)
                .map_err(|_| alloc(cap.saturating_mul(4)))?;
            v.resize(cap, 0);
            Slots::Narrow(v)
        };
        let entry = |i: usize| &indices[i * r..(i + 1) * r];
        for i in 0..n {
            let e = entry(i);
            let mut s = home(hash(e), cap);
            loop {
                let stored = match &slots {
                    Slots::Narrow(v) => v[s] as usize,
                    Slots::Wide(v) => v[s] as usize,
                };
                if stored == 0 {
                    match &mut slots {
                        Slots::Narrow(v) => v[s] = (i + 1) as u32,
                        Slots::Wide(v) => v[s] = (i + 1) as u64,
                    }
                    break;
                }
                if entry(stored - 1) == e {
                    break; // keep the earlier entry
                }
                s = next(s, cap);
            }
        }
        Ok(HashIndex { slots, cap })
    }

    /// The entry whose coordinates are `q`, if any.
    pub fn find(&self, indices: &[u64], r: usize, q: &[u64]) -> Option<usize> {
        let mut s = home(hash(q), self.cap);
        loop {
            let stored = match &self.slots {
                Slots::Narrow(v) => v[s] as usize,
                Slots::Wide(v) => v[s] as usize,
            };
            if stored == 0 {
                return None;
            }
            if &indices[(stored - 1) * r..stored * r] == q {
                return Some(stored - 1);
            }
            s = next(s, self.cap);
        }
    }

    /// Bytes the table occupies.
    pub fn bytes(&self) -> usize {
        match &self.slots {
            Slots::Narrow(v) => v.len() * 4,
            Slots::Wide(v) => v.len() * 8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_16_bytes_per_entry_plus_64_at_every_size() {
        let sizes = [
            0usize,
            1,
            7,
            8,
            9,
            1000,
            (1 << 31) - 1,
            1 << 31,
            (1 << 31) + 1,
            3 << 31,
            1 << 40,
        ];
        for n in sizes {
            let (cap, wide) = table_shape(n).unwrap();
            let bytes = cap * if wide { 8 } else { 4 };
            assert!(bytes <= 16 * n + 64, "{n} entries: {bytes} bytes");
            assert!(cap > n, "{n} entries need an empty slot");
            assert!(wide || n < (1 << 31));
        }
    }

    #[test]
    fn finds_the_first_of_equal_entries_at_any_capacity() {
        // Rank 2, entries with repeats; every query answers as a scan does.
        let mut idx = Vec::new();
        for i in 0..100u64 {
            idx.extend_from_slice(&[i % 13, (i * 7) % 5]);
        }
        let h = HashIndex::build(&idx, 2).unwrap();
        assert_eq!(h.bytes(), 200 * 4);
        for a in 0..14u64 {
            for b in 0..6u64 {
                let want = idx.chunks_exact(2).position(|e| e == [a, b]);
                assert_eq!(h.find(&idx, 2, &[a, b]), want, "({a}, {b})");
            }
        }
    }
}
