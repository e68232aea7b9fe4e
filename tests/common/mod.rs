//! Test fixtures: a tensor builder over 64-byte-aligned buffers, a seeded
//! PRNG (both from `data.rs`, shared with the benchmarks and the fuzz
//! harness) and the C-header reader (`header.rs`).
#![allow(dead_code)]

pub mod data;
pub mod header;
pub mod reference;

pub use data::{Buf, Rng};

use hurray_coo::{Coo, CooError, CooParts, Options};

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

impl Rng {
    /// `n` random coordinate tuples inside `shape`, sorted, repeats removed.
    pub fn distinct_sorted_entries(&mut self, shape: &[u64], n: u64) -> Vec<Vec<u64>> {
        let mut entries: Vec<Vec<u64>> = (0..n)
            .map(|_| shape.iter().map(|&x| self.below(x)).collect())
            .collect();
        entries.sort();
        entries.dedup();
        entries
    }
}

/// A random valid tensor of type `tag`: shape extents 1 to 5, up to `nnz`
/// distinct entries (fewer when they repeat), sorted or reversed.
pub fn random_tensor(rng: &mut Rng, tag: u8, rank: usize, sorted: bool, nnz: usize) -> Fixture {
    let ty = hurray_coo::type_info(tag).unwrap();
    let shape: Vec<u64> = (0..rank).map(|_| 1 + rng.below(5)).collect();
    let mut entries = rng.distinct_sorted_entries(&shape, nnz as u64);
    if !sorted {
        entries.reverse();
    }
    let n = entries.len() as u64;
    let vbytes = hurray_coo::element::size::values_bytes(ty, n).unwrap() as usize;
    let mut values: Vec<u8> = (0..vbytes).map(|_| rng.next() as u8).collect();
    // Valid data only: no code the type forbids (float8_e8m0 0x00, 0xFF).
    for b in &mut values {
        if ty.forbidden_codes().contains(b) {
            *b = 0x7F;
        }
    }
    // Clear padding bits.
    if ty.is_sub_byte() {
        let used = n as usize * ty.bits as usize;
        for bit in used..vbytes * 8 {
            values[bit / 8] &= !(1 << (bit % 8));
        }
    }
    let refs: Vec<&[u64]> = entries.iter().map(|e| &e[..]).collect();
    Fixture::new(tag, &shape, &refs, &values, sorted)
}
