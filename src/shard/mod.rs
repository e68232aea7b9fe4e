//! Shards (metadata.md shard section, ADR-004): a COO tensor as the block
//! of a larger parent tensor at an offset, its coordinates local to the
//! block. `ShardBox` is the block and the coordinate translation;
//! `partition` cuts a tensor into shards along dimension 0; `concat` puts
//! shards back into one tensor.

mod concat;
mod partition;

pub use concat::concat;
pub use partition::{partition, row_block, Split};

use crate::element::size::DYNAMIC_DIM;
use crate::error::CooError;

/// Where a shard sits in its parent: `offset[k] + shape[k] <=
/// parent_shape[k]` in every dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardBox {
    pub parent_shape: Vec<u64>,
    pub offset: Vec<u64>,
}

impl ShardBox {
    /// Check the box against a shard of `shape` (the spec's rule).
    pub fn check(&self, shape: &[u64]) -> Result<(), CooError> {
        let r = shape.len();
        if self.parent_shape.len() != r || self.offset.len() != r {
            return Err(CooError::Shard(format!(
                "the shard box has rank {} (parent shape) and {} (offset), the tensor rank {r}",
                self.parent_shape.len(),
                self.offset.len()
            )));
        }
        let dims = self.offset.iter().zip(shape).zip(&self.parent_shape);
        for (k, ((&o, &e), &p)) in dims.enumerate() {
            if p == DYNAMIC_DIM || o.checked_add(e).is_none_or(|end| end > p) {
                return Err(CooError::Shard(format!(
                    "shard dimension {k}: offset {o} + extent {e} exceeds parent extent {p}"
                )));
            }
        }
        Ok(())
    }

    /// The local coordinates of `global` in a shard of `shape`, or
    /// `OutsideShard` naming the first dimension where it falls outside.
    pub fn to_local(&self, shape: &[u64], global: &[u64], out: &mut [u64]) -> Result<(), CooError> {
        for (d, &g) in global.iter().enumerate() {
            let lo = self.offset[d];
            if g >= self.parent_shape[d] || g < lo || g - lo >= shape[d] {
                return Err(CooError::OutsideShard {
                    dim: d,
                    coord: g,
                    lo,
                    hi: lo + shape[d],
                    parent: self.parent_shape[d],
                });
            }
            out[d] = g - lo;
        }
        Ok(())
    }
}

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
