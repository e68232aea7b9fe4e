//! Test fixtures: 64-byte-aligned buffers in safe Rust, a tensor builder and
//! a small seeded PRNG.
#![allow(dead_code)]

pub mod header;

use hurray_coo::{Coo, CooError, CooParts, Options};

/// Bytes placed at a chosen offset from a 64-byte boundary.
pub struct Buf {
    v: Vec<u8>,
    off: usize,
    len: usize,
}

impl Buf {
    pub fn aligned(bytes: &[u8]) -> Buf {
        Buf::at_offset(bytes, 0)
    }

    /// `bytes` starting `skew` bytes past a 64-byte boundary.
    pub fn at_offset(bytes: &[u8], skew: usize) -> Buf {
        let mut v = vec![0u8; bytes.len() + 128];
        let base = v.as_ptr() as usize;
        let off = (64 - base % 64) % 64 + skew;
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
}

/// Little-endian bytes of coordinates.
pub fn le(coords: &[u64]) -> Vec<u8> {
    coords.iter().flat_map(|c| c.to_le_bytes()).collect()
}

/// Everything needed to build a tensor, owned.
pub struct Fixture {
    pub tag: u8,
    pub shape: Vec<u64>,
    pub nnz: u64,
    pub sorted: bool,
    pub values: Buf,
    pub indices: Buf,
}

impl Fixture {
    /// `entries` are coordinate tuples; `values` the packed values buffer.
    pub fn new(tag: u8, shape: &[u64], entries: &[&[u64]], values: &[u8], sorted: bool) -> Fixture {
        let flat: Vec<u64> = entries.iter().flat_map(|e| e.iter().copied()).collect();
        Fixture {
            tag,
            shape: shape.to_vec(),
            nnz: entries.len() as u64,
            sorted,
            values: Buf::aligned(values),
            indices: Buf::aligned(&le(&flat)),
        }
    }

    /// The seed's worked example: float32 [4, 4], (0,1)=1.5, (2,0)=-0.5,
    /// (3,3)=2.0, sorted.
    pub fn seed() -> Fixture {
        let vals: Vec<u8> = [1.5f32, -0.5, 2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        Fixture::new(0x03, &[4, 4], &[&[0, 1], &[2, 0], &[3, 3]], &vals, true)
    }

    /// float32 values 1.0, 2.0, ... for each entry.
    pub fn f32s(shape: &[u64], entries: &[&[u64]], sorted: bool) -> Fixture {
        let vals: Vec<u8> = (0..entries.len())
            .flat_map(|i| (i as f32 + 1.0).to_le_bytes())
            .collect();
        Fixture::new(0x03, shape, entries, &vals, sorted)
    }

    pub fn parts(&self) -> CooParts<'_, '_> {
        CooParts {
            type_tag: self.tag,
            shape: &self.shape,
            nnz: self.nnz,
            is_sorted: self.sorted,
            values: self.values.get(),
            indices: self.indices.get(),
        }
    }

    pub fn create(&self, opts: Options) -> Result<Coo<'_>, CooError> {
        Coo::new(self.parts(), opts)
    }

    pub fn strict(&self) -> Result<Coo<'_>, CooError> {
        self.create(Options::default())
    }

    pub fn permissive(&self) -> Coo<'_> {
        self.create(Options {
            copy: false,
            permissive: true,
            ..Options::default()
        })
        .expect("permissive create")
    }
}

/// xorshift64*: deterministic, seedable, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// `n` random coordinate tuples inside `shape`, sorted, repeats removed.
    #[allow(dead_code)] // not every test binary uses it
    pub fn distinct_sorted_entries(&mut self, shape: &[u64], n: u64) -> Vec<Vec<u64>> {
        let mut entries: Vec<Vec<u64>> = (0..n)
            .map(|_| shape.iter().map(|&x| self.below(x)).collect())
            .collect();
        entries.sort();
        entries.dedup();
        entries
    }
}
