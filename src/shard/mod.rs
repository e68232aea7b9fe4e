//! Shards (metadata.md shard section, ADR-004): a COO tensor as the block
//! of a larger parent tensor at an offset, its coordinates local to the
//! block. `ShardBox` (kept by the handle, so defined in `coo`) is the block
//! and the coordinate translation;
//! `partition` cuts a tensor into shards along dimension 0; `concat` puts
//! shards back into one tensor.

mod concat;
mod partition;

pub use concat::concat;
pub use partition::{partition, row_block, Split};

pub use crate::coo::ShardBox;
use crate::error::CooError;

/// A new tensor of `n` entries of `like`'s type: entry `k` is entry `i` of
/// `source(k) = (tensor, i)`, its coordinates written by
/// `place(tensor, i, out)` (`rank` values). Validated as every
/// library-built tensor is. Partitions, row blocks and concatenation all
/// build their results this way.
fn gather<'s>(
    like: &crate::Coo<'_>,
    shape: &[u64],
    n: usize,
    is_sorted: bool,
    source: impl Fn(usize) -> (&'s crate::Coo<'s>, usize),
    place: impl Fn(&crate::Coo<'_>, usize, &mut [u64]),
    what: &'static str,
) -> Result<crate::Coo<'static>, CooError> {
    use crate::aligned::AlignedBuf;
    use crate::element::{decode, encode, size};
    let ty = crate::convert::value_type(like, what)?;
    let r = shape.len();
    let vbytes = size::to_usize(size::values_bytes(ty, n as u64)?, what)?;
    let ibytes = size::to_usize(size::indices_bytes(n as u64, r as u32)?, what)?;
    let mut values = AlignedBuf::zeroed(vbytes, what)?;
    let mut indices = AlignedBuf::zeroed(ibytes, what)?;
    let mut cell = [0u8; 16];
    let v = values.as_bytes_mut();
    for k in 0..n {
        let (t, i) = source(k);
        decode::copy_element(ty, t.values(), i, &mut cell);
        encode::store_element(ty, v, k, &cell);
    }
    let idx: &mut [u64] = bytemuck::cast_slice_mut(indices.as_bytes_mut());
    for (k, out) in idx.chunks_exact_mut(r.max(1)).enumerate().take(n) {
        let (t, i) = source(k);
        place(t, i, out);
    }
    crate::Coo::from_owned(like.type_tag(), shape, is_sorted, values, indices)
}

impl crate::Coo<'_> {
    /// The local coordinates (into `out`, `rank` of them) of the global
    /// coordinates `global` of the parent tensor: minus the shard's offset,
    /// or unchanged for a tensor that is not a shard (its own parent).
    /// `OutsideShard` when a coordinate is outside the box,
    /// `RankMismatch` when `global` does not have the tensor's rank.
    pub fn to_local(&self, global: &[u64], out: &mut [u64]) -> Result<(), CooError> {
        let r = self.shape().len();
        if global.len() != r || out.len() < r {
            return Err(CooError::RankMismatch {
                got: global.len() as u32,
                expected: r as u32,
            });
        }
        match self.shard() {
            Some(b) => b.to_local(self.shape(), global, out),
            None => {
                for (d, (&g, &e)) in global.iter().zip(self.shape()).enumerate() {
                    if g >= e {
                        return Err(CooError::OutsideShard {
                            dim: d,
                            coord: g,
                            lo: 0,
                            hi: e,
                            parent: e,
                        });
                    }
                    out[d] = g;
                }
                Ok(())
            }
        }
    }

    /// `lookup_f64` at global coordinates (see `to_local`).
    pub fn lookup_global_f64(&self, global: &[u64]) -> Result<(f64, bool), CooError> {
        let mut local = [0u64; crate::element::size::MAX_RANK as usize];
        self.to_local(global, &mut local)?;
        self.lookup_f64(&local[..global.len()])
    }
}
