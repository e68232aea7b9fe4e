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
    /// The two multipliers of [`Mixer::mix`], in order.
    pub const MULTIPLIERS: (u64, u64) = (0x9E37_79B9_7F4A_7C15, 0xD6E8_FEB8_6659_FD93);

    pub fn new(bits: u32) -> Mixer {
        debug_assert!((1..=64).contains(&bits));
        Mixer {
            mask: u64::MAX >> (64 - bits),
            shift: bits.div_ceil(2),
        }
    }

    #[inline(always)]
    pub fn mix(self, key: u64) -> u64 {
        let (m1, m2) = Mixer::MULTIPLIERS;
        let mut h = key.wrapping_mul(m1) & self.mask;
        h ^= h >> self.shift;
        h.wrapping_mul(m2) & self.mask
    }

    /// The mask and the shift of [`Mixer::mix`], for a vector form of it.
    pub fn mask_and_shift(self) -> (u64, u32) {
        (self.mask, self.shift)
    }
}

/// Entry `i` of `idx` (rank `R`) as an array.
#[inline(always)]
pub fn entry<const R: usize>(idx: &[u64], i: usize) -> [u64; R] {
    let mut a = [0u64; R];
    a.copy_from_slice(&idx[i * R..(i + 1) * R]);
    a
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
        let mut valid = true;
        for (&c, &extent) in e[..r].iter().zip(&self.shape[..r]) {
            valid &= c < extent;
        }
        (linear(&e[..r], &self.strides[..r]), valid)
    }
}

/// Row-major position of the coordinates `c` given the shape's row-major
/// `strides` (from `size::linear_strides`; the last is 1), wrapping: exact
/// when `c` is inside the shape. The common ranks are unrolled.
#[inline(always)]
pub fn linear(c: &[u64], strides: &[u64]) -> u64 {
    match (c, strides) {
        ([a], _) => *a,
        ([a, b], [sa, _]) => a.wrapping_mul(*sa).wrapping_add(*b),
        ([a, b, c], [sa, sb, _]) => a
            .wrapping_mul(*sa)
            .wrapping_add(b.wrapping_mul(*sb))
            .wrapping_add(*c),
        _ => c
            .iter()
            .zip(strides)
            .fold(0u64, |k, (&x, &s)| k.wrapping_add(x.wrapping_mul(s))),
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

    #[test]
    fn linear_keys_are_row_major_positions() {
        let shape = [3u64, 4, 5, 6];
        for rank in 1..=4 {
            let strides = crate::element::size::linear_strides(&shape[..rank]).unwrap();
            let mut pos = 0u64;
            let mut c = vec![0u64; rank];
            loop {
                assert_eq!(linear(&c, &strides), pos, "{c:?}");
                pos += 1;
                // Next coordinate tuple in row-major order.
                let mut d = rank;
                while d > 0 {
                    d -= 1;
                    c[d] += 1;
                    if c[d] < shape[d] {
                        break;
                    }
                    c[d] = 0;
                }
                if c.iter().all(|&x| x == 0) {
                    break;
                }
            }
        }
    }
}
