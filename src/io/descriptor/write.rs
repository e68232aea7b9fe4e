//! The descriptor writer: the reference implementation's bytes.

use super::*;
use crate::coo::Coo;
use crate::element::size::BUFFER_ALIGN;
use crate::error::CooError;
use crate::io::stats;

/// Which statistics section the writer emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsChoice {
    /// None.
    None,
    /// `nnz` and `sparsity_ratio` only (as the reference implementation does).
    Counts,
    /// Everything `stats::compute` finds meaningful for the type.
    Full,
}

/// The length of the descriptor `encode` writes.
pub fn encoded_len(rank: u32, stats: StatsChoice) -> usize {
    FIXED_HEADER_LEN
        + 8 * rank as usize
        + 8
        + COO_FIELDS_LEN
        + 1
        + 2 * HANDLE_LEN
        + if stats == StatsChoice::None {
            0
        } else {
            STATISTICS_LEN
        }
}

/// The length of the descriptor `encode` writes for `coo`: with its shard
/// section when it is a shard.
pub fn encoded_len_of(coo: &Coo<'_>, stats: StatsChoice) -> usize {
    encoded_len(coo.rank(), stats) + coo.shard().map_or(0, |_| 16 * coo.rank() as usize)
}

/// Bounded little-endian writes into `out` (sized by the caller).
struct Writer<'o> {
    out: &'o mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn put(&mut self, b: &[u8]) {
        self.out[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }
}

/// Write the descriptor of `coo` into `out`, returning its length. A
/// permissive handle is validated first (a conforming writer emits only
/// valid tensors); unknown type tags cannot be described.
pub fn encode(coo: &Coo<'_>, stats: StatsChoice, out: &mut [u8]) -> Result<usize, CooError> {
    let need = encoded_len_of(coo, stats);
    if out.len() < need {
        return Err(CooError::BufferTooSmall {
            what: "the descriptor output buffer",
            got: out.len(),
            needed: need,
            why: String::new(),
        });
    }
    if coo.type_info().is_none() {
        return Err(CooError::UnsupportedType {
            what: "encode_descriptor",
            tag: coo.type_tag(),
            name: "unknown",
            reason: "was accepted in permissive mode only and cannot be described to other readers",
        });
    }
    if coo.is_permissive() {
        coo.validate()?;
    }
    let section = match stats {
        StatsChoice::None => None,
        StatsChoice::Counts => Some(stats::counts(coo)),
        StatsChoice::Full => Some(stats::compute(coo)),
    };
    let mut w = Writer { out, pos: 0 };
    w.put(&MAGIC);
    w.put(&[VERSION_MAJOR, VERSION_MINOR]);
    w.put(&(need as u32).to_le_bytes());
    let mut f = 0;
    if coo.shard().is_some() {
        f |= flags::HAS_SHARD;
    }
    if section.is_some() {
        f |= flags::HAS_STATISTICS;
    }
    w.put(&f.to_le_bytes());
    w.put(&[coo.type_tag(), LAYOUT_COO]);
    w.put(&coo.rank().to_le_bytes());
    for d in coo.shape() {
        w.put(&d.to_le_bytes());
    }
    w.put(&0u64.to_le_bytes()); // byte_offset
    w.put(&coo.nnz().to_le_bytes());
    w.put(&[u8::from(coo.is_sorted()), 0, 0, 0, 0, 0, 0, 0]);
    w.put(&[2]);
    for len in [coo.values().len(), coo.indices_bytes().len()] {
        // Non-empty buffers are 64-byte aligned (checked or copied); an empty
        // one has no address to align, so it declares 1.
        let alignment: u32 = if len == 0 { 1 } else { BUFFER_ALIGN as u32 };
        w.put(&(len as u64).to_le_bytes());
        w.put(&alignment.to_le_bytes());
        w.put(&[0, 0, 0, 0]); // CPU, producer-synced, standard, reserved
    }
    // Sections in flag-bit order: shard (bit 1) before statistics (bit 3).
    if let Some(b) = coo.shard() {
        for x in b.parent_shape.iter().chain(&b.offset) {
            w.put(&x.to_le_bytes());
        }
    }
    if let Some(s) = section {
        w.put(&s.computed_mask.to_le_bytes());
        w.put(&[0; 4]);
        w.put(&s.nnz.to_le_bytes());
        for v in [
            s.sparsity_ratio,
            s.value_min,
            s.value_max,
            s.value_abs_max,
            s.value_mean,
            s.value_stddev,
        ] {
            w.put(&v.to_bits().to_le_bytes());
        }
        w.put(&[
            s.nm_n,
            s.nm_m,
            u8::from(s.has_nan),
            u8::from(s.has_inf),
            0,
            0,
            0,
            0,
        ]);
    }
    debug_assert_eq!(w.pos, need);
    Ok(w.pos)
}
