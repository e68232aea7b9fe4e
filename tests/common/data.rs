//! Deterministic test data and 64-byte-aligned buffers: the one copy used
//! by the Rust tests (`tests/common`), the benchmark and the profiling
//! harness (`benches/common`) and the fuzz harness (`fuzz/harness.rs`).
//! No dependency, no unsafe.
#![allow(dead_code)] // not every user needs every helper

/// xorshift64*: deterministic, seedable.
pub struct Rng(pub u64);

impl Rng {
    /// A generator whose state is derived from `seed` (any seed, 0 included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in 0..n (n > 0), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// Bytes placed at a chosen offset from a 64-byte boundary.
pub struct Buf {
    v: Vec<u8>,
    off: usize,
    len: usize,
}

impl Buf {
    /// `bytes` starting on a 64-byte boundary.
    pub fn aligned(bytes: &[u8]) -> Buf {
        Buf::at_offset(bytes, 0)
    }

    /// `words` as little-endian bytes, starting on a 64-byte boundary.
    pub fn words(words: &[u64]) -> Buf {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        Buf::aligned(&bytes)
    }

    /// `bytes` starting `skew % 64` bytes past a 64-byte boundary.
    pub fn at_offset(bytes: &[u8], skew: usize) -> Buf {
        let mut v = vec![0u8; bytes.len() + 128];
        let base = v.as_ptr() as usize;
        let off = (64 - base % 64) % 64 + skew % 64;
        v[off..off + bytes.len()].copy_from_slice(bytes);
        Buf {
            v,
            off,
            len: bytes.len(),
        }
    }

    pub fn get(&self) -> &[u8] {
        &self.v[self.off..self.off + self.len]
    }

    /// The start, NULL when empty (as a C caller passes an empty buffer).
    pub fn ptr(&self) -> *const std::ffi::c_void {
        if self.len == 0 {
            std::ptr::null()
        } else {
            self.get().as_ptr().cast()
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
