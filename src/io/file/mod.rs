//! Hurray files (`file-format.md`): a random-access container of named
//! tensors with file-level key-value metadata, designed for mmap.
//!
//! - `format`: the header, trailer, index and KV section, encoder and
//!   checking decoder side by side.
//! - `read`: [`HurrayFile`] opens a file (memory-mapped or read into
//!   memory), checks every container rule, lists the tensors of every
//!   layout and hands out COO tensors that borrow the file's bytes.
//! - `write`: [`Writer`] streams COO tensors into any `Write` in one forward
//!   pass; [`FileWriter`] does so into a temporary file renamed into place
//!   only once complete and synced.

pub mod format;
mod read;
mod write;

pub use format::IndexEntry;
pub use read::{check_container, HurrayFile, OpenMode, TensorEntry};
pub use write::{FileWriter, WriteOptions, Writer};

/// A value of the KV metadata section.
#[derive(Clone, Debug, PartialEq)]
pub enum KvValue {
    /// Tag 0x01.
    String(String),
    /// Tag 0x02.
    Int64(i64),
    /// Tag 0x03.
    Uint64(u64),
    /// Tag 0x04.
    Float64(f64),
    /// Tag 0x05.
    Bool(bool),
    /// Tag 0x06.
    Bytes(Vec<u8>),
    /// Tag 0x07: a homogeneous array of scalars.
    Array(KvArray),
}

/// A homogeneous KV array; the element type is known even when it is
/// empty.
#[derive(Clone, Debug, PartialEq)]
pub enum KvArray {
    String(Vec<String>),
    Int64(Vec<i64>),
    Uint64(Vec<u64>),
    Float64(Vec<f64>),
    Bool(Vec<bool>),
    Bytes(Vec<Vec<u8>>),
}

impl KvValue {
    /// The wire tag.
    pub fn tag(&self) -> u8 {
        match self {
            KvValue::String(_) => 0x01,
            KvValue::Int64(_) => 0x02,
            KvValue::Uint64(_) => 0x03,
            KvValue::Float64(_) => 0x04,
            KvValue::Bool(_) => 0x05,
            KvValue::Bytes(_) => 0x06,
            KvValue::Array(_) => 0x07,
        }
    }

    /// The name of a value tag, for messages and listings.
    pub fn tag_name(tag: u8) -> &'static str {
        match tag {
            0x01 => "string",
            0x02 => "int64",
            0x03 => "uint64",
            0x04 => "float64",
            0x05 => "bool",
            0x06 => "bytes",
            0x07 => "array",
            _ => "unknown",
        }
    }
}

impl KvArray {
    /// An empty array of element tag `tag` (0x01-0x06).
    pub fn empty(tag: u8) -> Option<KvArray> {
        Some(match tag {
            0x01 => KvArray::String(Vec::new()),
            0x02 => KvArray::Int64(Vec::new()),
            0x03 => KvArray::Uint64(Vec::new()),
            0x04 => KvArray::Float64(Vec::new()),
            0x05 => KvArray::Bool(Vec::new()),
            0x06 => KvArray::Bytes(Vec::new()),
            _ => return None,
        })
    }

    /// Room for `n` more elements, or `Alloc` (never an abort): a file's
    /// element count says how many to expect.
    pub fn try_reserve(&mut self, n: usize) -> Result<(), crate::error::CooError> {
        let r = match self {
            KvArray::String(v) => v.try_reserve_exact(n),
            KvArray::Int64(v) => v.try_reserve_exact(n),
            KvArray::Uint64(v) => v.try_reserve_exact(n),
            KvArray::Float64(v) => v.try_reserve_exact(n),
            KvArray::Bool(v) => v.try_reserve_exact(n),
            KvArray::Bytes(v) => v.try_reserve_exact(n),
        };
        r.map_err(|_| crate::error::CooError::Alloc {
            bytes: n.saturating_mul(24),
            what: "a KV array",
        })
    }

    /// The element tag.
    pub fn tag(&self) -> u8 {
        match self {
            KvArray::String(_) => 0x01,
            KvArray::Int64(_) => 0x02,
            KvArray::Uint64(_) => 0x03,
            KvArray::Float64(_) => 0x04,
            KvArray::Bool(_) => 0x05,
            KvArray::Bytes(_) => 0x06,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            KvArray::String(v) => v.len(),
            KvArray::Int64(v) => v.len(),
            KvArray::Uint64(v) => v.len(),
            KvArray::Float64(v) => v.len(),
            KvArray::Bool(v) => v.len(),
            KvArray::Bytes(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` as a scalar value.
    pub fn get(&self, i: usize) -> Option<KvValue> {
        Some(match self {
            KvArray::String(v) => KvValue::String(v.get(i)?.clone()),
            KvArray::Int64(v) => KvValue::Int64(*v.get(i)?),
            KvArray::Uint64(v) => KvValue::Uint64(*v.get(i)?),
            KvArray::Float64(v) => KvValue::Float64(*v.get(i)?),
            KvArray::Bool(v) => KvValue::Bool(*v.get(i)?),
            KvArray::Bytes(v) => KvValue::Bytes(v.get(i)?.clone()),
        })
    }

    /// Append a scalar of this array's type (callers pass the right one).
    pub(crate) fn push(&mut self, v: KvValue) {
        match (self, v) {
            (KvArray::String(a), KvValue::String(x)) => a.push(x),
            (KvArray::Int64(a), KvValue::Int64(x)) => a.push(x),
            (KvArray::Uint64(a), KvValue::Uint64(x)) => a.push(x),
            (KvArray::Float64(a), KvValue::Float64(x)) => a.push(x),
            (KvArray::Bool(a), KvValue::Bool(x)) => a.push(x),
            (KvArray::Bytes(a), KvValue::Bytes(x)) => a.push(x),
            _ => unreachable!("the element tag decides the scalar's type"),
        }
    }

    /// Call `f` on each element, as a scalar value.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&KvValue)) {
        for i in 0..self.len() {
            if let Some(v) = self.get(i) {
                f(&v);
            }
        }
    }
}
