//! The data rules of the COO layout: every coordinate in bounds, no
//! duplicate coordinate tuple, strict lexicographic order when sorted.
//! `scan` holds the streaming kernel for ordered data, `dup` duplicate
//! detection for unordered data.

mod dup;
pub(crate) mod scan;

use super::structure::check_structure;
use super::{key, Coo};
use crate::element::size;
use crate::error::CooError;
use dup::first_pair;

impl Coo<'_> {
    /// Check everything the specification requires, whatever mode the tensor
    /// was built in: the structural rules, then every coordinate in bounds, no
    /// duplicate coordinate tuple and, when sorted, strict lexicographic
    /// order, then no value the type forbids as data (float8_e8m0 0x00 and
    /// 0xFF). Reports the first violation: the coordinate rules at the lowest
    /// entry number (at one entry, bounds before duplicates and order), and
    /// only when they all hold, the lowest entry with a forbidden value.
    pub fn validate(&self) -> Result<(), CooError> {
        self.validate_with(1)
    }

    /// `validate` on up to `threads` threads (as [`crate::threads`] says;
    /// all done when it returns): the same answer, the same first violation.
    pub fn validate_with(&self, threads: usize) -> Result<(), CooError> {
        check_structure(&self.parts(), !self.is_copy(), false)?;
        self.check_data(threads)
    }

    /// The O(nnz) rules: the coordinates (bounds, duplicates, order), then
    /// the values (codes the type forbids as data).
    pub(super) fn check_data(&self, threads: usize) -> Result<(), CooError> {
        self.check_coordinates(threads.max(1))?;
        self.check_values()
    }

    /// The lowest entry whose value is a code the type forbids as data
    /// (float8_e8m0 0x00 and 0xFF); types with no such code cost nothing.
    fn check_values(&self) -> Result<(), CooError> {
        let Some(ty) = self.ty else { return Ok(()) };
        let forbidden = ty.forbidden_codes();
        if forbidden.is_empty() {
            return Ok(());
        }
        // Only whole-byte types have forbidden codes: one byte per entry.
        debug_assert_eq!(ty.bits, 8);
        match self.values().iter().position(|b| forbidden.contains(b)) {
            None => Ok(()),
            Some(entry) => Err(CooError::InvalidValue {
                entry: entry as u64,
                code: self.values()[entry],
                type_name: ty.name(),
            }),
        }
    }

    fn out_of_bounds(&self, entry: usize) -> Option<CooError> {
        let e = self.entry(entry);
        let dim = e.iter().zip(&self.shape).position(|(c, x)| c >= x)?;
        Some(CooError::OutOfBounds {
            entry: entry as u64,
            dim,
            coord: e[dim],
            extent: self.shape[dim],
            coords: e.into(),
        })
    }

    fn check_coordinates(&self, threads: usize) -> Result<(), CooError> {
        let r = self.shape.len();
        let n = self.indices().len() / r;
        if self.is_sorted {
            // A branch-free scan finds the first suspect entry; the precise
            // description comes from the slow path, for that entry only.
            let Some(i) = scan::first_sorted_violation_par(self.indices(), &self.shape, threads)
            else {
                return Ok(());
            };
            if let Some(err) = self.out_of_bounds(i) {
                return Err(err);
            }
            let (prev, cur) = (self.entry(i - 1), self.entry(i));
            return Err(if cur == prev {
                CooError::Duplicate {
                    entry: i as u64,
                    first: (i - 1) as u64,
                    coords: cur.into(),
                }
            } else {
                CooError::NotSorted {
                    entry: i as u64,
                    prev: (i - 1) as u64,
                    coords: cur.into(),
                    prev_coords: prev.into(),
                }
            });
        }
        // Entries that happen to be in strictly increasing order (a common
        // case for data not flagged sorted) cannot hold duplicates: one
        // streaming pass proves it and skips the sort. Unordered data fails
        // this check within its first block.
        if scan::first_sorted_violation_par(self.indices(), &self.shape, threads).is_none() {
            return Ok(());
        }
        // Duplicate detection over every entry checks bounds on the way; only
        // when some entry is outside the shape is it redone over the entries
        // before the first such one (a key is only meaningful in bounds).
        let (found, all_in_bounds) = self.first_duplicate(n, threads)?;
        let (found, first_oob) = match all_in_bounds {
            true => (found, None),
            false => match scan::first_out_of_bounds(self.indices(), &self.shape) {
                None => (found, None),
                Some(i) => (self.first_duplicate(i, threads)?.0, Some(i)),
            },
        };
        if let Some((entry, first)) = found {
            return Err(CooError::Duplicate {
                entry: entry as u64,
                first: first as u64,
                coords: self.entry(entry).into(),
            });
        }
        match first_oob.and_then(|i| self.out_of_bounds(i)) {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// Among entries `0..count`, the lowest entry `j` whose coordinates equal
    /// those of an earlier entry `i`: `(j, i)`; meaningful when all those
    /// entries are in bounds. The flag says whether they were seen to be
    /// (`false` also when this method did not look).
    fn first_duplicate(
        &self,
        count: usize,
        threads: usize,
    ) -> Result<(Option<(usize, usize)>, bool), CooError> {
        let alloc_err = |bytes| CooError::Alloc {
            bytes,
            what: "duplicate detection",
        };
        let r = self.shape.len();
        let idx = &self.indices()[..count * r];
        if let (Some(elements), Some(strides)) = (
            size::element_count(&self.shape),
            size::linear_strides(&self.shape),
        ) {
            // Hash-partitioned detection on the linear key (src/dup.rs):
            // 8 bytes per entry, freed on return.
            let bits = key::bits_below(elements);
            let (sh, st) = (&self.shape[..], &strides[..]);
            let found = match r {
                1 => dup::first_duplicate::<1>(idx, sh, st, bits, threads),
                2 => dup::first_duplicate::<2>(idx, sh, st, bits, threads),
                3 => dup::first_duplicate::<3>(idx, sh, st, bits, threads),
                _ => dup::first_duplicate::<0>(idx, sh, st, bits, threads),
            };
            match found {
                Ok(found) => return Ok(found),
                Err(dup::Unavailable::Alloc(bytes)) => return Err(alloc_err(bytes)),
                Err(dup::Unavailable::TooWide) => {}
            }
            // Keys too wide to pack with the entry number: sort (key, entry).
            let mut keys: Vec<(u64, usize)> = Vec::new();
            keys.try_reserve_exact(count)
                .map_err(|_| alloc_err(count.saturating_mul(16)))?;
            keys.extend(
                idx.chunks_exact(r)
                    .enumerate()
                    .map(|(i, e)| (key::linear(e, &strides), i)),
            );
            keys.sort_unstable();
            return Ok((first_pair(&keys, |a, b| a.0 == b.0, |p| p.1), false));
        }
        // Shapes with more than 2^64 elements: sort entry numbers by their
        // coordinates.
        let mut perm: Vec<usize> = Vec::new();
        perm.try_reserve_exact(count)
            .map_err(|_| alloc_err(count.saturating_mul(8)))?;
        perm.extend(0..count);
        perm.sort_unstable_by(|&a, &b| self.entry(a).cmp(self.entry(b)).then(a.cmp(&b)));
        let found = first_pair(&perm, |&a, &b| self.entry(a) == self.entry(b), |&p| p);
        Ok((found, false))
    }
}
