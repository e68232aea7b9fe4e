//! The COO tensor: structure, validation and lookup. Safe Rust, no FFI types.

use std::cmp::Ordering;

use crate::aligned::AlignedBuf;
use crate::decode;
use crate::dup::{self, first_pair};
use crate::error::CooError;
use crate::hash_index::HashIndex;
use crate::key;
use crate::packed_index::{NotBuilt, PackedIndex};
use crate::scan;
use crate::size::{self, BUFFER_ALIGN, DYNAMIC_DIM, MAX_RANK};
use crate::types::{Encoding, TagClass, TypeInfo};

/// How `Coo::new` treats the caller's buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Copy both buffers into library-owned 64-byte-aligned memory instead of
    /// borrowing them.
    pub copy: bool,
    /// Skip the O(nnz) data checks (bounds, duplicates, order) and accept
    /// unknown (reserved, private, unassigned) type tags without interpreting
    /// their values. Structural checks always run.
    pub permissive: bool,
    /// Build a lookup index at create, sorted or not: a hash table, so a
    /// lookup costs O(1) expected instead of a scan or a binary search.
    /// About 13 bytes per entry, at most 16 (plus 256 bytes).
    pub index: bool,
}

/// The description of a COO tensor, as a caller hands it over.
#[derive(Clone, Copy, Debug)]
pub struct CooParts<'s, 'a> {
    /// Element type tag.
    pub type_tag: u8,
    /// One extent per dimension; its length is the rank.
    pub shape: &'s [u64],
    /// Number of stored entries.
    pub nnz: u64,
    /// Whether entries claim strictly increasing lexicographic order.
    pub is_sorted: bool,
    /// Buffer 0: nnz packed values.
    pub values: &'a [u8],
    /// Buffer 1: nnz × rank little-endian `u64` coordinates.
    pub indices: &'a [u8],
}

enum Storage<'a> {
    Borrowed(&'a [u8]),
    Owned(AlignedBuf),
}

impl Storage<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Borrowed(b) => b,
            Storage::Owned(o) => o.as_bytes(),
        }
    }
}

/// A COO sparse tensor whose structure has been checked. Immutable once
/// built; `Sync`, so it may be read from many threads at once.
pub struct Coo<'a> {
    tag: u8,
    /// `None` when the tag is unknown and was accepted in permissive mode.
    ty: Option<&'static TypeInfo>,
    shape: Vec<u64>,
    nnz: u64,
    is_sorted: bool,
    permissive: bool,
    values: Storage<'a>,
    indices: Storage<'a>,
    /// Row-major strides when the element count fits a `u64` (for the
    /// packed index), else empty.
    strides: Vec<u64>,
    /// The opt-in lookup index (`Options::index`).
    index: Option<Index>,
}

/// A lookup index: the packed table when an entry's linear key is narrow
/// enough (a lookup reads one cache line), otherwise a hash table of entry
/// numbers verified against the coordinates.
enum Index {
    Packed(PackedIndex),
    Hash(HashIndex),
}

/// Check a rank before anything sized by it is read.
pub fn check_rank(rank: u32) -> Result<(), CooError> {
    if rank == 0 || rank > MAX_RANK {
        let hint = if rank == 0 {
            " (rank 0 is a scalar, and scalars may not use a sparse layout)"
        } else {
            ""
        };
        return Err(CooError::InvalidRank { rank, hint });
    }
    Ok(())
}

/// Check flags-independent structure: type tag, rank, shape, buffer sizes,
/// alignment of borrowed buffers, sub-byte padding. Returns the type facts
/// (`None` for an unknown tag accepted because `permissive`).
fn check_structure(
    parts: &CooParts<'_, '_>,
    borrowed: bool,
    permissive: bool,
) -> Result<Option<&'static TypeInfo>, CooError> {
    let ty = match TagClass::of(parts.type_tag) {
        TagClass::Known(info) => Some(info),
        class @ TagClass::Invalid => {
            return Err(CooError::InvalidType {
                tag: parts.type_tag,
                class,
                hint: "",
            })
        }
        _ if permissive => None,
        class => {
            return Err(CooError::InvalidType {
                tag: parts.type_tag,
                class,
                hint: "; HURRAY_COO_PERMISSIVE accepts it without interpreting the values",
            })
        }
    };
    let rank = u32::try_from(parts.shape.len()).unwrap_or(u32::MAX);
    check_rank(rank)?;
    if let Some(dim) = parts.shape.iter().position(|&d| d == DYNAMIC_DIM) {
        return Err(CooError::DynamicDimension { dim });
    }

    let need_indices = size::indices_bytes(parts.nnz, rank)?;
    if let Some(ty) = ty {
        let need_values = size::values_bytes(ty, parts.nnz)?;
        if parts.values.len() as u64 != need_values {
            return Err(CooError::BufferSize {
                buffer: "values",
                got: parts.values.len() as u64,
                expected: need_values,
                expected_why: format!("nnz {} of {}", parts.nnz, ty.name()),
            });
        }
    }
    if parts.indices.len() as u64 != need_indices {
        return Err(CooError::BufferSize {
            buffer: "indices",
            got: parts.indices.len() as u64,
            expected: need_indices,
            expected_why: format!("nnz {} x rank {rank} x 8", parts.nnz),
        });
    }
    if borrowed {
        for (buffer, bytes) in [("values", parts.values), ("indices", parts.indices)] {
            let addr = bytes.as_ptr() as usize;
            if !bytes.is_empty() && addr % BUFFER_ALIGN != 0 {
                return Err(CooError::Misaligned {
                    buffer,
                    addr,
                    rem: addr % BUFFER_ALIGN,
                });
            }
        }
    }
    if let Some(ty) = ty {
        if let Some((byte, value, mask)) =
            decode::first_nonzero_padding(ty, parts.values, parts.nnz)
        {
            return Err(CooError::NonzeroPadding {
                byte,
                value,
                mask,
                nnz: parts.nnz,
                type_name: ty.name(),
            });
        }
    }
    Ok(ty)
}

impl<'a> Coo<'a> {
    /// Build a tensor from `parts`. Structural checks always run; without
    /// `opts.permissive` the full validation runs too and an invalid tensor
    /// is refused. With `opts.copy` both buffers are copied (and may then be
    /// dropped by the caller); otherwise they are borrowed for `'a`.
    pub fn new(parts: CooParts<'_, 'a>, opts: Options) -> Result<Coo<'a>, CooError> {
        let ty = check_structure(&parts, !opts.copy, opts.permissive)?;
        let mut shape = Vec::new();
        shape
            .try_reserve_exact(parts.shape.len())
            .map_err(|_| CooError::Alloc {
                bytes: parts.shape.len() * 8,
                what: "the shape",
            })?;
        shape.extend_from_slice(parts.shape);
        let (values, indices) = if opts.copy {
            (
                Storage::Owned(AlignedBuf::copy_from(parts.values, "the values copy")?),
                Storage::Owned(AlignedBuf::copy_from(parts.indices, "the indices copy")?),
            )
        } else {
            (
                Storage::Borrowed(parts.values),
                Storage::Borrowed(parts.indices),
            )
        };
        let mut coo = Coo {
            tag: parts.type_tag,
            ty,
            shape,
            nnz: parts.nnz,
            is_sorted: parts.is_sorted,
            permissive: opts.permissive,
            values,
            indices,
            strides: Vec::new(),
            index: None,
        };
        if !opts.permissive {
            coo.check_data()?;
        }
        if opts.index {
            coo.index = Some(coo.build_index()?);
        }
        Ok(coo)
    }

    /// The element type tag.
    pub fn type_tag(&self) -> u8 {
        self.tag
    }

    /// The element type's facts, `None` for an unknown tag accepted in
    /// permissive mode.
    pub fn type_info(&self) -> Option<&'static TypeInfo> {
        self.ty
    }

    /// The rank (1..=64).
    pub fn rank(&self) -> u32 {
        self.shape.len() as u32
    }

    /// The shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The number of stored entries.
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// Whether the entries claim lexicographic order.
    pub fn is_sorted(&self) -> bool {
        self.is_sorted
    }

    /// Whether the tensor was built in permissive mode.
    pub fn is_permissive(&self) -> bool {
        self.permissive
    }

    /// Whether the buffers are library-owned copies.
    pub fn is_copy(&self) -> bool {
        matches!(self.values, Storage::Owned(_))
    }

    /// The values buffer.
    pub fn values(&self) -> &[u8] {
        self.values.bytes()
    }

    /// The indices buffer as bytes.
    pub fn indices_bytes(&self) -> &[u8] {
        self.indices.bytes()
    }

    /// The indices buffer as `u64` coordinates (entry `i`, dimension `d` at
    /// `i * rank + d`).
    pub fn indices(&self) -> &[u64] {
        let bytes = self.indices.bytes();
        if bytes.is_empty() {
            &[]
        } else {
            // Non-empty storage is 64-byte aligned (checked when borrowed,
            // guaranteed when owned) and a multiple of 8 bytes long.
            bytemuck::cast_slice(bytes)
        }
    }

    /// The coordinates of entry `i`.
    pub fn entry(&self, i: usize) -> &[u64] {
        let r = self.shape.len();
        &self.indices()[i * r..(i + 1) * r]
    }

    fn parts(&self) -> CooParts<'_, '_> {
        CooParts {
            type_tag: self.tag,
            shape: &self.shape,
            nnz: self.nnz,
            is_sorted: self.is_sorted,
            values: self.values(),
            indices: self.indices_bytes(),
        }
    }

    /// Check everything the specification requires, whatever mode the tensor
    /// was built in: the structural rules, then every coordinate in bounds, no
    /// duplicate coordinate tuple and, when sorted, strict lexicographic
    /// order. Reports the first violation (lowest entry number; at one entry,
    /// bounds before duplicates and order).
    pub fn validate(&self) -> Result<(), CooError> {
        check_structure(&self.parts(), !self.is_copy(), false)?;
        self.check_data()
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

    fn check_data(&self) -> Result<(), CooError> {
        let r = self.shape.len();
        let n = self.indices().len() / r;
        if self.is_sorted {
            // A branch-free scan finds the first suspect entry; the precise
            // description comes from the slow path, for that entry only.
            let Some(i) = scan::first_sorted_violation(self.indices(), &self.shape) else {
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
        if scan::first_sorted_violation(self.indices(), &self.shape).is_none() {
            return Ok(());
        }
        // Duplicate detection over every entry checks bounds on the way; only
        // when some entry is outside the shape is it redone over the entries
        // before the first such one (a key is only meaningful in bounds).
        let (found, all_in_bounds) = self.first_duplicate(n)?;
        let (found, first_oob) = match all_in_bounds {
            true => (found, None),
            false => match scan::first_out_of_bounds(self.indices(), &self.shape) {
                None => (found, None),
                Some(i) => (self.first_duplicate(i)?.0, Some(i)),
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
    fn first_duplicate(&self, count: usize) -> Result<(Option<(usize, usize)>, bool), CooError> {
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
                1 => dup::first_duplicate::<1>(idx, sh, st, bits),
                2 => dup::first_duplicate::<2>(idx, sh, st, bits),
                3 => dup::first_duplicate::<3>(idx, sh, st, bits),
                _ => dup::first_duplicate::<0>(idx, sh, st, bits),
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

    fn build_index(&mut self) -> Result<Index, CooError> {
        if let (Some(elements), Some(strides)) = (
            size::element_count(&self.shape),
            size::linear_strides(&self.shape),
        ) {
            match PackedIndex::build(self.indices(), &self.shape, &strides, elements) {
                Ok(p) => {
                    self.strides = strides;
                    return Ok(Index::Packed(p));
                }
                Err(NotBuilt::Alloc(bytes)) => {
                    return Err(CooError::Alloc {
                        bytes,
                        what: "the lookup index (HURRAY_COO_INDEX)",
                    })
                }
                Err(NotBuilt::Unsuitable) => {}
            }
        }
        Ok(Index::Hash(HashIndex::build(
            self.indices(),
            self.shape.len(),
        )?))
    }

    /// Bytes of the lookup index this tensor holds (0 without one).
    pub fn index_bytes(&self) -> usize {
        match &self.index {
            None => 0,
            Some(Index::Packed(p)) => p.bytes(),
            Some(Index::Hash(h)) => h.bytes(),
        }
    }

    /// Whether a lookup index was built (`Options::index`).
    pub fn has_index(&self) -> bool {
        self.index.is_some()
    }

    /// Where entry `query` is stored, if it is. Errors when the query's rank
    /// differs or a coordinate is outside the shape. Through the index when
    /// there is one, else a binary search when sorted, a linear scan
    /// otherwise.
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

    /// `check_query`, then `locate_flat`, with the common ranks unrolled
    /// (few instructions per lookup let the CPU overlap more of them).
    #[inline(always)]
    fn check_and_locate(&self, query: &[u64]) -> Result<(usize, bool), CooError> {
        #[inline(always)]
        fn fixed<const R: usize>(coo: &Coo<'_>, q: &[u64; R]) -> Result<(usize, bool), CooError> {
            let shape: &[u64; R] = coo.shape[..R].try_into().unwrap_or(&[0; R]);
            let mut bad = false;
            for d in 0..R {
                bad |= q[d] >= shape[d];
            }
            if bad {
                return Err(coo.query_error(q));
            }
            Ok(coo.locate_flat(q))
        }
        if query.len() == self.shape.len() {
            match query {
                [a] => return fixed(self, &[*a]),
                [a, b] => return fixed(self, &[*a, *b]),
                [a, b, c] => return fixed(self, &[*a, *b, *c]),
                _ => {}
            }
        }
        self.check_query(query)?;
        Ok(self.locate_flat(query))
    }

    /// `locate` as `(entry, stored)`, entry 0 when not stored; branch-free
    /// on the common path with the packed index (see
    /// `PackedIndex::find_flat`).
    #[inline(always)]
    fn locate_flat(&self, query: &[u64]) -> (usize, bool) {
        match &self.index {
            Some(Index::Packed(p)) => p.find_flat(query, &self.strides),
            _ => {
                let at = self.locate(query);
                (at.unwrap_or(0), at.is_some())
            }
        }
    }

    /// Where `query` (of the tensor's rank, inside the shape) is stored:
    /// through the index when there is one, else a binary search when
    /// sorted and a linear scan otherwise.
    fn locate(&self, query: &[u64]) -> Option<usize> {
        let r = self.shape.len();
        let idx = self.indices();
        match &self.index {
            Some(Index::Packed(p)) => p.find(query, &self.strides),
            Some(Index::Hash(h)) => h.find(idx, r, query),
            None if self.is_sorted => {
                let (mut lo, mut hi) = (0usize, idx.len() / r);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    match idx[mid * r..(mid + 1) * r].cmp(query) {
                        Ordering::Less => lo = mid + 1,
                        Ordering::Greater => hi = mid,
                        Ordering::Equal => return Some(mid),
                    }
                }
                None
            }
            None => idx.chunks_exact(r).position(|e| e == query),
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
        let (at, stored) = self.check_and_locate(query)?;
        if self.nnz == 0 {
            return Ok((0.0, false));
        }
        Ok((self.value_f64_if(ty, at, stored), stored))
    }

    /// The value of entry `at` when `stored`, else 0.0 — the entry's value
    /// (entry 0 when nothing is stored; the tensor is not empty) is read
    /// and masked, so that no branch depends on the answer.
    #[inline(always)]
    fn value_f64_if(&self, ty: &TypeInfo, at: usize, stored: bool) -> f64 {
        let v = self.value_f64(ty, at).to_bits() & 0u64.wrapping_sub(u64::from(stored));
        f64::from_bits(v)
    }

    /// The first stored entry at or after `start` that is not before `q`
    /// (sorted tensors): galloping, then a binary search.
    fn lower_bound_from(&self, start: usize, q: &[u64]) -> usize {
        let n = self.indices().len() / self.shape.len();
        let (mut lo, mut hi, mut step) = (start, start, 1usize);
        while hi < n && self.entry(hi) < q {
            lo = hi + 1;
            hi = hi.saturating_add(step);
            step = step.saturating_mul(2);
        }
        let mut hi = hi.min(n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.entry(mid) < q {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// One thread's share of a batch (queries already checked).
    fn batch_part(
        &self,
        ty: &TypeInfo,
        queries: &[u64],
        out: &mut [f64],
        mut found: Option<&mut [u8]>,
    ) {
        let r = self.shape.len();
        if self.nnz == 0 {
            out.fill(0.0);
            if let Some(f) = found {
                f.fill(0);
            }
            return;
        }
        if let Some(Index::Packed(p)) = &self.index {
            // Groups of lookups whose cache misses overlap (see find_many).
            const CHUNK: usize = 1024;
            let mut at = [(0usize, false); CHUNK];
            for (k0, qs) in queries.chunks(CHUNK * r).enumerate() {
                let m = qs.len() / r;
                p.find_many(qs, r, &self.strides, &mut at[..m]);
                for (j, &(i, stored)) in at[..m].iter().enumerate() {
                    let k = k0 * CHUNK + j;
                    out[k] = self.value_f64_if(ty, i, stored);
                    if let Some(f) = found.as_deref_mut() {
                        f[k] = u8::from(stored);
                    }
                }
            }
            return;
        }
        let n = self.indices().len() / r;
        let merge = self.is_sorted
            && queries
                .chunks_exact(r)
                .zip(queries.chunks_exact(r).skip(1))
                .all(|(a, b)| a <= b);
        let mut cursor = 0;
        for (k, q) in queries.chunks_exact(r).enumerate() {
            let at = if merge {
                cursor = self.lower_bound_from(cursor, q);
                (cursor < n && self.entry(cursor) == q).then_some(cursor)
            } else {
                self.locate(q)
            };
            out[k] = at.map_or(0.0, |i| self.value_f64(ty, i));
            if let Some(f) = found.as_deref_mut() {
                f[k] = u8::from(at.is_some());
            }
        }
    }

    /// Look up `out.len()` queries at once (`queries` holds `out.len() *
    /// rank` coordinates), writing each value as an `f64` (0.0 when not
    /// stored) and, if asked, a 0/1 "stored" flag per query. Every query is
    /// checked first; the first one outside the shape is reported. When the
    /// tensor and the queries are both sorted, entries and queries are
    /// merged (galloping) instead of searched. With `threads > 1` the queries
    /// are split over at most that many scoped threads (never more than
    /// one per 4096 queries); no thread outlives the call.
    pub fn lookup_batch_f64(
        &self,
        queries: &[u64],
        out: &mut [f64],
        found: Option<&mut [u8]>,
        threads: usize,
    ) -> Result<(), CooError> {
        let ty = self.real_type("lookup_batch")?;
        let r = self.shape.len();
        if out.len().checked_mul(r) != Some(queries.len())
            || found.as_ref().is_some_and(|f| f.len() != out.len())
        {
            return Err(CooError::Internal(
                "batch buffers of unequal lengths".into(),
            ));
        }
        for (k, q) in queries.chunks_exact(r).enumerate() {
            if let Some(dim) = q.iter().zip(&self.shape).position(|(c, x)| c >= x) {
                return Err(CooError::BatchQueryOutOfBounds {
                    query: k,
                    dim,
                    coord: q[dim],
                    extent: self.shape[dim],
                });
            }
        }
        let threads = threads.clamp(1, 256).min(out.len().div_ceil(4096)).max(1);
        if threads == 1 {
            self.batch_part(ty, queries, out, found);
            return Ok(());
        }
        let per = out.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let mut found = found;
            let mut parts = queries.chunks(per * r).zip(out.chunks_mut(per));
            let mut handles = Vec::new();
            for (qs, os) in &mut parts {
                let fs = match found.take() {
                    Some(f) => {
                        let (head, tail) = f.split_at_mut(os.len());
                        found = Some(tail);
                        Some(head)
                    }
                    None => None,
                };
                let job = move || self.batch_part(ty, qs, os, fs);
                match std::thread::Builder::new().spawn_scoped(scope, job) {
                    Ok(h) => handles.push(h),
                    // Threads already started finish before the scope ends.
                    Err(e) => return Err(CooError::ThreadSpawn(e.to_string())),
                }
            }
            for h in handles {
                h.join()
                    .map_err(|_| CooError::Internal("a lookup thread panicked".into()))?;
            }
            Ok(())
        })
    }
}
