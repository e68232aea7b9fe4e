//! The COO handle: a tensor's structure, checked, over borrowed or owned
//! buffers. Safe Rust, no FFI types. What the handle does lives beside it,
//! one operation per child module: `structure` (checks that need no pass
//! over the data), `validate` (the data rules), `lookup` (point and batch
//! reads, the opt-in index); `key` holds the linear keys both share;
//! `shard_box` the box a shard's handle carries.

use crate::aligned::AlignedBuf;
use crate::element::types::TypeInfo;
use crate::error::CooError;
pub(crate) mod key;
pub mod lookup;
mod shard_box;
mod structure;
pub mod validate;

pub use shard_box::ShardBox;

use lookup::{Directory, Index};
pub use structure::check_rank;
use structure::check_structure;

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
    /// With the index (implies `index`), keep each entry's value, as an
    /// `f64`, in the cache line of its key, so a lookup of a value reads
    /// one line (`HURRAY_COO_INDEX_VALUES`): about 32 bytes per entry.
    /// Real types only, and only when the packed index applies; otherwise
    /// the index is built without values (`index_has_values` says which).
    pub index_values: bool,
    /// Threads for the data checks (0 or 1: the calling thread only), as
    /// [`crate::threads`] says; every share has ended when the call returns.
    pub threads: usize,
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
/// `Coo::claim_checked`: not yet checked, holds, fails.
pub(crate) const CLAIM_UNKNOWN: u8 = 0;
pub(crate) const CLAIM_HOLDS: u8 = 1;
pub(crate) const CLAIM_FAILS: u8 = 2;

pub struct Coo<'a> {
    tag: u8,
    /// `None` when the tag is unknown and was accepted in permissive mode.
    ty: Option<&'static TypeInfo>,
    shape: Vec<u64>,
    nnz: u64,
    is_sorted: bool,
    /// The entries were checked to be in strictly increasing order (sorted
    /// and validated at create), so a binary search finds what a scan finds.
    /// A permissive handle's `is_sorted` is only a claim: its lookups rely
    /// on it once `claim_holds` has checked it.
    ordered: bool,
    /// For a permissive handle that says it is sorted: whether its entries
    /// are in strictly increasing order and inside the shape, checked on the
    /// first lookup that would use it (O(nnz)) and kept: `CLAIM_UNKNOWN`,
    /// `CLAIM_HOLDS` or `CLAIM_FAILS`. One byte, in the struct's padding: a
    /// handle is moved by value a few times on create, and a `OnceLock`
    /// made each create cost ~25 instructions more. Readers that arrive
    /// together before the answer is kept may each check; they store the
    /// same answer.
    claim_checked: std::sync::atomic::AtomicU8,
    permissive: bool,
    values: Storage<'a>,
    indices: Storage<'a>,
    /// Row-major strides when the element count fits a `u64` (for the
    /// packed index), else empty.
    strides: Vec<u64>,
    /// The opt-in lookup index (`Options::index`).
    index: Option<Index>,
    /// A `searchable` tensor's bucket directory, built by the first lookup
    /// without an index that needs it (`lookup::Directory`).
    directory: std::sync::OnceLock<Option<Box<Directory>>>,
    /// Where this tensor sits in a parent tensor, if it is a shard.
    shard: Option<ShardBox>,
}

impl std::fmt::Debug for Coo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coo")
            .field("type_tag", &self.tag)
            .field("shape", &self.shape)
            .field("nnz", &self.nnz)
            .field("is_sorted", &self.is_sorted)
            .field("permissive", &self.permissive)
            .field("copy", &self.is_copy())
            .field("index", &self.has_index())
            .finish()
    }
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
            ordered: parts.is_sorted && !opts.permissive,
            claim_checked: std::sync::atomic::AtomicU8::new(CLAIM_UNKNOWN),
            permissive: opts.permissive,
            values,
            indices,
            strides: Vec::new(),
            index: None,
            directory: std::sync::OnceLock::new(),
            shard: None,
        };
        if !opts.permissive {
            coo.check_data(opts.threads)?;
        }
        if opts.index || opts.index_values {
            coo.index = Some(coo.build_index(opts.index_values)?);
        }
        Ok(coo)
    }

    /// A tensor over buffers the library made (assembly, conversion),
    /// validated strictly: whatever built them, what is handed out obeys
    /// every rule.
    pub(crate) fn from_owned(
        type_tag: u8,
        shape: &[u64],
        is_sorted: bool,
        values: AlignedBuf,
        indices: AlignedBuf,
    ) -> Result<Coo<'static>, CooError> {
        let coo = Coo::owned(type_tag, shape, is_sorted, values, indices)?;
        coo.check_data(1)?;
        Ok(coo)
    }

    /// A sorted tensor over buffers a kernel built sorted, duplicate-free
    /// and in bounds by construction (its module says why, and which test
    /// proves it): sizes checked, the data not validated again, except in
    /// debug builds, where a broken kernel fails every test that uses it.
    pub(crate) fn from_built(
        type_tag: u8,
        shape: &[u64],
        values: AlignedBuf,
        indices: AlignedBuf,
    ) -> Result<Coo<'static>, CooError> {
        let coo = Coo::owned(type_tag, shape, true, values, indices)?;
        #[cfg(debug_assertions)]
        if let Err(e) = coo.check_data(1) {
            panic!("a kernel built an invalid tensor: {e}");
        }
        Ok(coo)
    }

    /// This owned, sorted, validated tensor with other values (`values`,
    /// of `type_tag`) at the same coordinates: the indices are moved, not
    /// copied. Refused for a borrowed or unverified tensor.
    pub(crate) fn with_values(
        self,
        type_tag: u8,
        values: AlignedBuf,
    ) -> Result<Coo<'static>, CooError> {
        let Coo {
            shape,
            indices,
            ordered,
            ..
        } = self;
        match indices {
            Storage::Owned(indices) if ordered => {
                Coo::from_built(type_tag, &shape, values, indices)
            }
            _ => Err(CooError::Argument(
                "internal: with_values takes an owned, validated, sorted tensor".into(),
            )),
        }
    }

    fn owned(
        type_tag: u8,
        shape: &[u64],
        is_sorted: bool,
        values: AlignedBuf,
        indices: AlignedBuf,
    ) -> Result<Coo<'static>, CooError> {
        let rank = shape.len().max(1);
        let nnz = (indices.as_bytes().len() / 8 / rank) as u64;
        let parts = CooParts {
            type_tag,
            shape,
            nnz,
            is_sorted,
            values: values.as_bytes(),
            indices: indices.as_bytes(),
        };
        check_structure(&parts, false, false)?;
        let mut owned_shape = Vec::new();
        owned_shape
            .try_reserve_exact(shape.len())
            .map_err(|_| CooError::Alloc {
                bytes: shape.len() * 8,
                what: "the shape",
            })?;
        owned_shape.extend_from_slice(shape);
        let coo = Coo {
            tag: type_tag,
            ty: crate::element::types::type_info(type_tag),
            shape: owned_shape,
            nnz,
            is_sorted,
            ordered: is_sorted,
            claim_checked: std::sync::atomic::AtomicU8::new(CLAIM_UNKNOWN),
            permissive: false,
            values: Storage::Owned(values),
            indices: Storage::Owned(indices),
            strides: Vec::new(),
            index: None,
            directory: std::sync::OnceLock::new(),
            shard: None,
        };
        Ok(coo)
    }

    /// This tensor as the shard `b` of a parent tensor (checked: same rank,
    /// `offset + shape <= parent_shape` in every dimension).
    pub fn with_shard(mut self, b: ShardBox) -> Result<Self, CooError> {
        b.check(&self.shape)?;
        self.shard = Some(b);
        Ok(self)
    }

    /// The shard box, if this tensor is a shard.
    pub fn shard(&self) -> Option<&ShardBox> {
        self.shard.as_ref()
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
    #[inline]
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
}
