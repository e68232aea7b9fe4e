//! The opt-in hash index of an unsorted tensor: open addressing over entry
//! numbers, so a lookup costs O(1) expected instead of a scan. At most 16
//! bytes per entry: the table has a power-of-two capacity of at least twice
//! the entry count, with 4-byte slots (8-byte slots from 2^31 entries on).

use crate::error::CooError;

/// Slots hold `entry + 1`; 0 is empty.
enum Slots {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

pub struct HashIndex {
    slots: Slots,
    mask: usize,
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

impl HashIndex {
    /// Index the `n` entries of `indices` (rank `r`). Entries are inserted in
    /// order and an equal tuple never replaces an earlier one, so a lookup
    /// finds the first matching entry, as a scan would.
    pub fn build(indices: &[u64], r: usize) -> Result<HashIndex, CooError> {
        let n = indices.len() / r;
        let cap = n
            .checked_mul(2)
            .map(|c| c.max(16).next_power_of_two())
            .ok_or_else(|| CooError::Overflow {
                what: format!("a hash index for {n} entries"),
            })?;
        let wide = n >= (1 << 31);
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
        let mask = cap - 1;
        let entry = |i: usize| &indices[i * r..(i + 1) * r];
        for i in 0..n {
            let e = entry(i);
            let mut s = hash(e) as usize & mask;
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
                s = (s + 1) & mask;
            }
        }
        Ok(HashIndex { slots, mask })
    }

    /// The entry whose coordinates are `q`, if any.
    pub fn find(&self, indices: &[u64], r: usize, q: &[u64]) -> Option<usize> {
        let mut s = hash(q) as usize & self.mask;
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
            s = (s + 1) & self.mask;
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
