//! Where a shard sits in its parent tensor (metadata.md shard section): the
//! box a handle may carry, and the translation between its local and the
//! parent's global coordinates. Operations on shards live in `shard`.

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
