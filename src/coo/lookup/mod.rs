//! Reading a COO tensor: point lookups (binary search, scan, or the opt-in
//! index) and, in `batch`, many lookups in one call.
//!
//! What a lookup returns is defined once, for every handle, valid or not:
//! **the lowest-numbered entry whose coordinates equal the query**, or none.
//! On validated data (at most one entry matches) every method finds it; on a
//! permissive handle, whose data were never checked, the methods are chosen
//! so that they still agree: the index keeps the first entry of a key, and
//! the binary search and the merged batch run only on handles whose order
//! was verified: at create (`Coo::ordered`), or, for a permissive handle
//! that says it is sorted, once on the first lookup that needs it
//! (`Coo::searchable`). Any other handle without an index is scanned.

mod batch;
mod directory;
mod hash_index;
mod packed_index;
#[cfg(test)]
pub(crate) mod sample;
mod search;

use super::{key, Coo};
use crate::element::decode;
use crate::element::size;
use crate::element::types::{Encoding, TypeInfo};
use crate::error::CooError;
use crate::hint::select;
pub(crate) use directory::{Directory, Words};
use hash_index::HashIndex;
use packed_index::NotBuilt;
pub(crate) use packed_index::PackedIndex;

/// A lookup index: the packed table when an entry's linear key is narrow
/// enough (a lookup reads one cache line), with the values in its lines
/// when asked (`Valued`), otherwise a hash table of entry numbers verified
/// against the coordinates.
///
/// On a validated sorted tensor, `HURRAY_COO_INDEX` is the bucket directory
/// with each entry's low position bits (`Sorted`): a lookup reads two
/// offsets and a few 2- or 4-byte keys, then the value, and the index is at
/// most 8 bytes per entry plus 8 (3-5 on most matrices: one bucket per 4
/// entries).
pub(crate) enum Index {
    Packed(PackedIndex<8>),
    Valued(PackedIndex<4>),
    Hash(HashIndex),
    Sorted(Box<Directory>),
}

impl<'a> Coo<'a> {
    pub(super) fn build_index(&mut self, values: bool) -> Result<Index, CooError> {
        if let (Some(elements), Some(strides)) = (
            size::element_count(&self.shape),
            size::linear_strides(&self.shape),
        ) {
            let real = self.ty.filter(|t| t.is_real());
            if let (true, Some(ty)) = (values, real) {
                let what = "the lookup index with values (HURRAY_COO_INDEX_VALUES)";
                // Unsuitable: then the index without values.
                if let Some(mut p) = self.packed::<4>(&strides, elements, what)? {
                    p.attach_values(|i| self.value_f64(ty, i));
                    self.strides = strides;
                    return Ok(Index::Valued(p));
                }
            }
            if self.ordered {
                if let Some(d) = Directory::build_index(self.indices(), &self.shape) {
                    return Ok(Index::Sorted(Box::new(d)));
                }
            }
            let what = "the lookup index (HURRAY_COO_INDEX)";
            if let Some(p) = self.packed::<8>(&strides, elements, what)? {
                self.strides = strides;
                return Ok(Index::Packed(p));
            }
        }
        Ok(Index::Hash(HashIndex::build(
            self.indices(),
            self.shape.len(),
        )?))
    }

    /// The packed index with `K` slots per line, `None` when it does not
    /// suit these entries; `what` names it in an allocation failure.
    fn packed<const K: usize>(
        &self,
        strides: &[u64],
        elements: u128,
        what: &'static str,
    ) -> Result<Option<PackedIndex<K>>, CooError> {
        match PackedIndex::<K>::build(self.indices(), &self.shape, strides, elements) {
            Ok(p) => Ok(Some(p)),
            Err(NotBuilt::Alloc(bytes)) => Err(CooError::Alloc { bytes, what }),
            Err(NotBuilt::Unsuitable) => Ok(None),
        }
    }

    /// Bytes of the lookup index this tensor holds (0 without one).
    pub fn index_bytes(&self) -> usize {
        match &self.index {
            None => 0,
            Some(Index::Packed(p)) => p.bytes(),
            Some(Index::Valued(p)) => p.bytes(),
            Some(Index::Hash(h)) => h.bytes(),
            Some(Index::Sorted(d)) => d.bytes(),
        }
    }

    /// Whether the lookup index keeps the values (`Options::index_values`,
    /// when it applies).
    pub fn index_has_values(&self) -> bool {
        matches!(&self.index, Some(Index::Valued(_)))
    }

    /// The lookup index with values (`HURRAY_COO_INDEX_VALUES`, when it
    /// applied) and the strides of its linear keys.
    pub(crate) fn valued_index(&self) -> Option<(&PackedIndex<4>, &[u64])> {
        match &self.index {
            Some(Index::Valued(p)) => Some((p, &self.strides)),
            _ => None,
        }
    }

    /// Whether a lookup index was built (`Options::index`).
    pub fn has_index(&self) -> bool {
        self.index.is_some()
    }

    /// The lowest-numbered entry stored at `query`, if any. Errors when the
    /// query's rank differs or a coordinate is outside the shape. Through the
    /// index when there is one, else a binary search when the order was
    /// verified (sorted and validated), a linear scan otherwise.
    pub fn find(&self, query: &[u64]) -> Result<Option<usize>, CooError> {
        self.check_query(query)?;
        Ok(self.locate(query))
    }

    /// A query must have the tensor's rank and lie inside the shape.
    #[inline]
    fn check_query(&self, query: &[u64]) -> Result<(), CooError> {
        let mut bad = query.len() != self.shape.len();
        for (q, x) in query.iter().zip(&self.shape) {
            bad |= q >= x;
        }
        if bad {
            return Err(self.query_error(query));
        }
        Ok(())
    }

    #[cold]
    fn query_error(&self, query: &[u64]) -> CooError {
        if query.len() != self.shape.len() {
            return CooError::RankMismatch {
                got: u32::try_from(query.len()).unwrap_or(u32::MAX),
                expected: self.rank(),
            };
        }
        let dim = query
            .iter()
            .zip(&self.shape)
            .position(|(q, x)| q >= x)
            .unwrap_or(0);
        CooError::QueryOutOfBounds {
            dim,
            coord: query[dim],
            extent: self.shape[dim],
        }
    }

    /// `check_query` with the common ranks unrolled (few instructions per
    /// lookup let the CPU overlap more of them).
    #[inline(always)]
    fn check_query_unrolled(&self, query: &[u64]) -> Result<(), CooError> {
        #[inline(always)]
        fn fixed<const R: usize>(coo: &Coo<'_>, q: &[u64; R]) -> Result<(), CooError> {
            let shape: &[u64; R] = coo.shape[..R].try_into().unwrap_or(&[0; R]);
            let mut bad = false;
            for d in 0..R {
                bad |= q[d] >= shape[d];
            }
            if bad {
                return Err(coo.query_error(q));
            }
            Ok(())
        }
        if query.len() == self.shape.len() {
            match query {
                [a] => return fixed(self, &[*a]),
                [a, b] => return fixed(self, &[*a, *b]),
                [a, b, c] => return fixed(self, &[*a, *b, *c]),
                _ => {}
            }
        }
        self.check_query(query)
    }

    /// `check_query`, then `locate_flat`.
    #[inline(always)]
    fn check_and_locate(&self, query: &[u64]) -> Result<(usize, bool), CooError> {
        self.check_query_unrolled(query)?;
        Ok(self.locate_flat(query))
    }

    /// `locate` as `(entry, stored)`, entry 0 when not stored; branch-free
    /// on the common path with the packed index (see
    /// `PackedIndex::find_flat`).
    #[inline(always)]
    fn locate_flat(&self, query: &[u64]) -> (usize, bool) {
        match &self.index {
            Some(Index::Packed(p)) => p.find_flat(query, &self.strides),
            Some(Index::Valued(p)) => p.find_flat(query, &self.strides),
            _ => {
                let at = self.locate(query);
                (at.unwrap_or(0), at.is_some())
            }
        }
    }

    /// The lowest-numbered entry stored at `query` (of the tensor's rank,
    /// inside the shape): through the index when there is one, else a
    /// binary search when the order was verified, a linear scan otherwise.
    fn locate(&self, query: &[u64]) -> Option<usize> {
        let r = self.shape.len();
        let idx = self.indices();
        match &self.index {
            Some(Index::Packed(p)) => p.find(query, &self.strides),
            Some(Index::Valued(p)) => p.find(query, &self.strides),
            Some(Index::Hash(h)) => h.find(idx, r, query),
            Some(Index::Sorted(d)) => d.find(idx, query),
            None if self.searchable() => self.find_sorted(query),
            None => idx.chunks_exact(r).position(|e| e == query),
        }
    }

    /// The entry equal to `q` (inside the shape) of a `searchable` tensor
    /// without an index: through its bucket directory (built on the first
    /// call, then kept), or by a binary search when it has none.
    #[inline(always)]
    fn find_sorted(&self, q: &[u64]) -> Option<usize> {
        match self.directory() {
            Some(d) => d.find_with(|| self.indices(), q),
            None => search::find_sorted(self.indices(), q.len(), q),
        }
    }

    /// The bucket directory of a `searchable` tensor, built on the first
    /// call (`None` when it cannot be had; see `directory.rs`).
    #[inline(always)]
    fn directory(&self) -> Option<&Directory> {
        self.directory
            .get_or_init(|| Directory::build(self.indices(), &self.shape, None).map(Box::new))
            .as_deref()
    }

    /// The bucket directory lookups on this tensor search, built now if it
    /// is the lazy one: the index's on a sorted tensor with
    /// `HURRAY_COO_INDEX`, the kept one of a `searchable` tensor without an
    /// index; `None` for other indexes, unsorted tensors, and when it cannot
    /// be had (then only the library's lookups answer).
    pub(crate) fn search_directory(&self) -> Option<&Directory> {
        match &self.index {
            Some(Index::Sorted(d)) => Some(d),
            Some(_) => None,
            None if self.searchable() => self.directory(),
            None => None,
        }
    }

    /// Bytes of the bucket directory, 0 until a lookup has built it.
    pub fn directory_bytes(&self) -> usize {
        self.directory
            .get()
            .and_then(|d| d.as_ref())
            .map_or(0, |d| d.bytes())
    }

    /// Whether a binary search finds what a scan finds: the order was
    /// verified at create, or the handle is permissive, says it is sorted,
    /// and its entries are strictly increasing and inside the shape (checked
    /// on the first call that asks, O(nnz), then kept).
    #[inline(always)]
    pub(crate) fn searchable(&self) -> bool {
        self.ordered || (self.is_sorted && self.permissive && self.claim_holds())
    }

    /// `searchable` for a permissive handle that says it is sorted.
    #[cold]
    #[inline(never)]
    fn claim_holds(&self) -> bool {
        use super::{CLAIM_FAILS, CLAIM_HOLDS, CLAIM_UNKNOWN};
        use std::sync::atomic::Ordering;
        match self.claim_checked.load(Ordering::Acquire) {
            CLAIM_UNKNOWN => {
                let r = self.shape.len();
                let holds = r > 0
                    && self.indices().len() as u64 == self.nnz.saturating_mul(r as u64)
                    && crate::coo::validate::scan::first_sorted_violation(
                        self.indices(),
                        &self.shape,
                    )
                    .is_none();
                let answer = if holds { CLAIM_HOLDS } else { CLAIM_FAILS };
                self.claim_checked.store(answer, Ordering::Release);
                holds
            }
            answer => answer == CLAIM_HOLDS,
        }
    }

    fn interpretable(&self, what: &'static str) -> Result<&'static TypeInfo, CooError> {
        self.ty.ok_or(CooError::UnsupportedType {
            what,
            tag: self.tag,
            name: "unknown",
            reason: "was accepted in permissive mode only, so its values are never interpreted",
        })
    }

    /// Copy the element at `query` into `out`: its little-endian bytes for
    /// whole-byte types, one byte holding the bit pattern for sub-byte types;
    /// all-zero bytes when the element is not stored. Returns whether it is
    /// stored.
    pub fn lookup(&self, query: &[u64], out: &mut [u8]) -> Result<bool, CooError> {
        let ty = self.interpretable("lookup")?;
        let need = ty.lookup_bytes();
        if out.len() < need {
            return Err(CooError::BufferTooSmall {
                what: "out_value",
                got: out.len(),
                needed: need,
                why: String::new(),
            });
        }
        match self.find(query)? {
            Some(i) => {
                decode::copy_element(ty, self.values(), i, out);
                Ok(true)
            }
            None => {
                out[..need].fill(0);
                Ok(false)
            }
        }
    }

    /// The type's facts, if its values can be read as an `f64`.
    #[inline]
    fn real_type(&self, what: &'static str) -> Result<&'static TypeInfo, CooError> {
        match self.ty {
            Some(ty) if ty.is_real() => Ok(ty),
            _ => Err(self.not_real(what)),
        }
    }

    #[cold]
    fn not_real(&self, what: &'static str) -> CooError {
        match self.interpretable(what) {
            Err(e) => e,
            Ok(ty) => CooError::UnsupportedType {
                what,
                tag: ty.tag,
                name: ty.name(),
                reason: "is complex and has no single double value; use hurray_coo_lookup to read its (re, im) bytes",
            },
        }
    }

    /// The value of stored entry `i` as an `f64` (`ty` is real).
    #[inline(always)]
    fn value_f64(&self, ty: &TypeInfo, i: usize) -> f64 {
        if ty.encoding == Encoding::F64 {
            // The common case, without the generic decoder.
            let mut b = [0u8; 8];
            b.copy_from_slice(&self.values()[i * 8..i * 8 + 8]);
            return f64::from_le_bytes(b);
        }
        let mut storage = [0u8; 16];
        decode::copy_element(ty, self.values(), i, &mut storage);
        decode::to_f64(ty, &storage).unwrap_or(f64::NAN)
    }

    /// The numeric value at `query` as an `f64` (0.0 when not stored), and
    /// whether it is stored. Complex types are refused.
    pub fn lookup_f64(&self, query: &[u64]) -> Result<(f64, bool), CooError> {
        let ty = self.real_type("lookup_f64")?;
        if let Some(answer) = self.lookup_f64_fast(query) {
            return Ok(answer);
        }
        let (at, stored) = self.check_and_locate(query)?;
        if self.nnz == 0 {
            return Ok((0.0, false));
        }
        Ok((self.value_f64_if(ty, at, stored), stored))
    }

    /// `lookup_f64` in few instructions for the common cases, `None`
    /// otherwise (then `lookup_f64` answers the same, or says what is
    /// wrong): the query inside the shape, and the packed index (with the
    /// values kept in it one line is read; without, the entry's `float64`
    /// value after it) or, without an index, a validated sorted `float64`
    /// tensor (the search of `search.rs`).
    #[inline(always)]
    pub(crate) fn lookup_f64_fast(&self, q: &[u64]) -> Option<(f64, bool)> {
        self.check_query_unrolled(q).ok()?;
        match &self.index {
            Some(Index::Valued(p)) => {
                let (v, stored) = p.find_value_key(key::linear(q, &self.strides))?;
                Some((f64::from_bits(v), stored))
            }
            Some(Index::Packed(p)) => {
                let ty = self.ty.filter(|t| t.encoding == Encoding::F64)?;
                if self.nnz == 0 {
                    return None;
                }
                let (at, stored) = p.find_key(key::linear(q, &self.strides));
                Some((self.value_f64_if(ty, at, stored), stored))
            }
            Some(Index::Sorted(d)) => {
                let ty = self.ty.filter(|t| t.encoding == Encoding::F64)?;
                if self.nnz == 0 {
                    return None;
                }
                let at = d.find_with(|| self.indices(), q);
                Some((
                    self.value_f64_if(ty, at.unwrap_or(0), at.is_some()),
                    at.is_some(),
                ))
            }
            None if self.searchable() => {
                let ty = self.ty.filter(|t| t.encoding == Encoding::F64)?;
                let found = self.find_sorted(q);
                Some(found.map_or((0.0, false), |i| (self.value_f64(ty, i), true)))
            }
            _ => None,
        }
    }

    /// The value of entry `at` when `stored`, else 0.0 — the entry's value
    /// (entry 0 when nothing is stored; the tensor is not empty) is read
    /// and masked, so that no branch depends on the answer.
    #[inline(always)]
    fn value_f64_if(&self, ty: &TypeInfo, at: usize, stored: bool) -> f64 {
        f64::from_bits(select(stored, self.value_f64(ty, at).to_bits(), 0))
    }
}
