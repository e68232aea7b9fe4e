//! The re-assembly plan (PETSc's `MatSetPreallocationCOO` /
//! `MatSetValuesCOO`): built once with the canonical tensor, it maps every
//! triplet to its canonical entry, so a new values array of the same
//! triplets becomes the canonical values with no sort and no allocation,
//! combined by the same policy in the same order as the first assembly.

use super::combine::{add, better, Storage};
use super::{counted_from, Duplicates};
use crate::element::decode::copy_element;
use crate::element::encode::{clear_padding, store_element};
use crate::element::size;
use crate::element::types::{Encoding, TypeInfo};
use crate::error::CooError;

/// A triplet that contributes nothing (skipped, dropped, or not the kept one
/// of FIRST/LAST).
const SKIP: u64 = u64::MAX;

/// Maps each triplet to its canonical entry.
#[derive(Debug)]
pub struct Plan {
    ty: &'static TypeInfo,
    dup: Duplicates,
    has_values: bool,
    base: u8,
    nnz: usize,
    /// Per triplet: `entry << 1 | 1` for the first contribution to `entry`,
    /// `entry << 1` for a later one, or `SKIP`.
    map: Vec<u64>,
}

impl Plan {
    pub(super) fn new(
        n: usize,
        ty: &'static TypeInfo,
        dup: Duplicates,
        has_values: bool,
        base: u8,
    ) -> Result<Plan, CooError> {
        let mut map = Vec::new();
        map.try_reserve_exact(n).map_err(|_| CooError::Alloc {
            bytes: n.saturating_mul(8),
            what: "the re-assembly plan",
        })?;
        map.resize(n, SKIP);
        Ok(Plan {
            ty,
            dup,
            has_values,
            base,
            nnz: 0,
            map,
        })
    }

    /// Record that the triplets `members` (in triplet order) make `entry`.
    pub(super) fn map_group(&mut self, members: &[usize], entry: usize) {
        let e = (entry as u64) << 1;
        match self.dup {
            Duplicates::First | Duplicates::Error => self.map[members[0]] = e | 1,
            Duplicates::Last => self.map[members[members.len() - 1]] = e | 1,
            Duplicates::Sum | Duplicates::Min | Duplicates::Max => {
                self.map[members[0]] = e | 1;
                for &i in &members[1..] {
                    self.map[i] = e;
                }
            }
        }
    }

    pub(super) fn set_nnz(&mut self, nnz: usize) {
        self.nnz = nnz;
    }

    /// Number of triplets the plan was built from.
    pub fn triplets(&self) -> usize {
        self.map.len()
    }

    /// Number of canonical entries.
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// Element type of the values it takes and gives.
    pub fn type_tag(&self) -> u8 {
        self.ty.tag
    }

    /// Bytes of memory the plan holds.
    pub fn bytes(&self) -> usize {
        self.map.len() * 8
    }

    /// Combine `values` (one per triplet, as at assembly) into `out` (one per
    /// canonical entry, in the canonical order, which for a rank-2 tensor is
    /// CSR's order). Allocates nothing; every byte of `out` is written.
    pub fn apply(&self, values: &[u8], out: &mut [u8]) -> Result<(), CooError> {
        if !self.has_values {
            return Err(CooError::Unsupported(
                "this plan was built from a pattern (no values): there is nothing to re-assemble"
                    .into(),
            ));
        }
        let n = self.map.len() as u64;
        for (buf, what, count, len) in [
            ("new triplet values", "triplets", n, values.len()),
            (
                "the output values",
                "canonical entries",
                self.nnz as u64,
                out.len(),
            ),
        ] {
            let need = size::values_bytes(self.ty, count)?;
            if len as u64 != need {
                return Err(CooError::BufferSize {
                    buffer: buf,
                    got: len as u64,
                    expected: need,
                    expected_why: format!("{count} {what} of {}", self.ty.name()),
                });
            }
        }
        if self.ty.encoding == Encoding::F64 && self.dup == Duplicates::Sum {
            self.apply_f64_sum(values, out);
            return Ok(());
        }
        let (mut acc, mut x) = ([0u8; 16], [0u8; 16]);
        for (i, &m) in self.map.iter().enumerate() {
            if m == SKIP {
                continue;
            }
            let e = (m >> 1) as usize;
            copy_element(self.ty, values, i, &mut x);
            if m & 1 == 0 {
                copy_element(self.ty, out, e, &mut acc);
                if !self.combine(&mut acc, &x) {
                    return Err(self.overflow(i, e));
                }
                store_element(self.ty, out, e, &acc);
            } else {
                store_element(self.ty, out, e, &x);
            }
        }
        clear_padding(self.ty, out, self.nnz);
        Ok(())
    }

    /// The common FEM case, without the generic element moves.
    fn apply_f64_sum(&self, values: &[u8], out: &mut [u8]) {
        let read = |b: &[u8], k: usize| {
            f64::from_le_bytes(b[k * 8..k * 8 + 8].try_into().unwrap_or([0; 8]))
        };
        for (i, &m) in self.map.iter().enumerate() {
            if m == SKIP {
                continue;
            }
            let e = (m >> 1) as usize;
            let v = read(values, i);
            let s = if m & 1 == 1 { v } else { read(out, e) + v };
            out[e * 8..e * 8 + 8].copy_from_slice(&s.to_le_bytes());
        }
    }

    /// `acc` combined with a later contribution `x`; false on overflow.
    fn combine(&self, acc: &mut Storage, x: &Storage) -> bool {
        match self.dup {
            Duplicates::Sum => add(self.ty, acc, x).is_ok(),
            Duplicates::Min | Duplicates::Max => {
                if better(self.ty, self.dup == Duplicates::Max, acc, x) {
                    *acc = *x;
                }
                true
            }
            // FIRST, LAST and ERROR map one triplet per entry.
            _ => true,
        }
    }

    #[cold]
    fn overflow(&self, triplet: usize, entry: usize) -> CooError {
        let b = u64::from(self.base);
        CooError::ValueOverflow(format!(
            "re-assembly: the SUM of canonical entry {entry} overflows {} at triplet {}{}",
            self.ty.name(),
            triplet as u64 + b,
            counted_from(self.base)
        ))
    }
}
