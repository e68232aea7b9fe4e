//! Entries as integer keys: the row-major linear position of a coordinate
//! tuple, and a bijective mix of it, shared by duplicate detection
//! (`dup.rs`) and the lookup index (`packed_index.rs`).

/// A bijection on `bits`-bit values (`bits` in 1..=64): multiply, xor-shift,
/// multiply, each modulo `2^bits`.
#[derive(Clone, Copy, Debug)]
pub struct Mixer {
    mask: u64,
    shift: u32,
}

impl Mixer {
    pub fn new(bits: u32) -> Mixer {
        debug_assert!((1..=64).contains(&bits));
        Mixer {
            mask: u64::MAX >> (64 - bits),
            shift: bits.div_ceil(2),
        }
    }

    #[inline(always)]
    pub fn mix(self, key: u64) -> u64 {
        let mut h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15) & self.mask;
        h ^= h >> self.shift;
        h.wrapping_mul(0xD6E8_FEB8_6659_FD93) & self.mask
    }
}

/// Bits needed for values below `n` (0 for `n <= 1`).
pub fn bits_below(n: u128) -> u32 {
    128 - n.saturating_sub(1).leading_zeros()
}

/// How an entry becomes a key: its row-major linear position (`strides`
/// from `size::linear_strides`), valid when every coordinate is inside
/// `shape`. `R` is the rank when known at compile time, 0 otherwise.
pub struct LinearKey<'s, const R: usize> {
    pub shape: &'s [u64],
    pub strides: &'s [u64],
}

impl<const R: usize> LinearKey<'_, R> {
    pub fn rank(&self) -> usize {
        if R == 0 {
            self.shape.len()
        } else {
            R
        }
    }

    #[inline(always)]
    pub fn key(&self, e: &[u64]) -> (u64, bool) {
        let r = self.rank();
        let (mut key, mut valid) = (0u64, true);
        for ((&c, &stride), &extent) in e[..r].iter().zip(&self.strides[..r]).zip(&self.shape[..r])
        {
            key = key.wrapping_add(c.wrapping_mul(stride));
            valid &= c < extent;
        }
        (key, valid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_is_a_bijection_on_small_widths() {
        for bits in 1..=12u32 {
            let mask = (1u64 << bits) - 1;
            let mixer = Mixer::new(bits);
            let mut seen = vec![false; 1 << bits];
            for k in 0..=mask {
                let h = mixer.mix(k);
                assert!(h <= mask);
                assert!(!seen[h as usize], "bits {bits} key {k}");
                seen[h as usize] = true;
            }
        }
    }
}
