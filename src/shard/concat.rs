//! Putting shards back together.

use crate::coo::Coo;
use crate::error::CooError;

/// One tensor of the parent shape from `shards` (every one a shard of the
/// same parent, of one element type, their boxes pairwise disjoint; they
/// need not cover the parent): each entry at its global coordinates, in
/// lexicographic order (sorted), validated.
pub fn concat(shards: &[&Coo<'_>]) -> Result<Coo<'static>, CooError> {
    let Some(first) = shards.first() else {
        return Err(CooError::Argument(
            "concatenation needs at least one shard".into(),
        ));
    };
    let boxes = shards
        .iter()
        .enumerate()
        .map(|(k, s)| {
            s.shard().ok_or_else(|| {
                CooError::Argument(format!("tensor {k} of the concatenation is not a shard"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let parent = &boxes[0].parent_shape;
    for (k, s) in shards.iter().enumerate() {
        if s.type_tag() != first.type_tag() || &boxes[k].parent_shape != parent {
            return Err(CooError::Argument(format!(
                "shard {k} is a {} shard of a {:?} parent, shard 0 a {} shard of a {:?} parent: \
                 shards of one tensor share type and parent shape",
                s.type_info().map_or("?", |t| t.name()),
                boxes[k].parent_shape,
                first.type_info().map_or("?", |t| t.name()),
                parent
            )));
        }
        if s.is_permissive() {
            s.validate()?;
        }
    }
    // Pairwise disjoint boxes (an overlap would hide a duplicate).
    for a in 0..shards.len() {
        for b in a + 1..shards.len() {
            let overlap = (0..parent.len()).all(|d| {
                let (la, ha) = (
                    boxes[a].offset[d],
                    boxes[a].offset[d] + shards[a].shape()[d],
                );
                let (lb, hb) = (
                    boxes[b].offset[d],
                    boxes[b].offset[d] + shards[b].shape()[d],
                );
                la < hb && lb < ha
            });
            if overlap {
                return Err(CooError::Shard(format!(
                    "the boxes of shards {a} (offset {:?}, shape {:?}) and {b} (offset {:?}, \
                     shape {:?}) overlap",
                    boxes[a].offset,
                    shards[a].shape(),
                    boxes[b].offset,
                    shards[b].shape()
                )));
            }
        }
    }
    // Shards stacked along dimension 0 (full extent elsewhere), each sorted,
    // concatenate in offset order into a sorted tensor; otherwise sort.
    let mut order: Vec<usize> = (0..shards.len()).collect();
    order.sort_by_key(|&k| boxes[k].offset.clone());
    let stacked = shards.iter().zip(&boxes).all(|(s, b)| {
        s.is_sorted() && (1..parent.len()).all(|d| b.offset[d] == 0 && s.shape()[d] == parent[d])
    });
    // Entries are picked straight from their shards into one buffer.
    let total: u64 = shards.iter().map(|s| s.nnz()).sum();
    let n = usize::try_from(total).map_err(|_| CooError::Overflow {
        what: "the concatenation's entry count".into(),
    })?;
    let mut whole = Vec::new();
    whole.try_reserve_exact(n).map_err(|_| CooError::Alloc {
        bytes: n * 16,
        what: "the concatenation",
    })?;
    for &k in &order {
        whole.extend((0..shards[k].nnz() as usize).map(|i| (k, i)));
    }
    let joined = super::gather(
        first,
        parent,
        whole.len(),
        stacked,
        |j| (shards[whole[j].0], whole[j].1),
        |t, i, c| {
            // Every shard has a box (checked above): local plus offset.
            let offset = t.shard().map_or(&[][..], |b| &b.offset[..]);
            for (d, slot) in c.iter_mut().enumerate() {
                *slot = t.entry(i)[d] + offset.get(d).copied().unwrap_or(0);
            }
        },
        "the concatenation",
    )?;
    if stacked {
        Ok(joined)
    } else {
        let identity: Vec<u32> = (0..parent.len() as u32).collect();
        crate::convert::sort_by_modes(&joined, &identity, 1)
    }
}
