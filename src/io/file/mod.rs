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

/// The KV value tags of the Hurray file format, in one place (the C
/// header's HURRAY_KV_* repeat them as literals; a test checks they agree).
pub mod kv_tag {
    pub const STRING: u8 = 0x01;
    pub const INT64: u8 = 0x02;
    pub const UINT64: u8 = 0x03;
    pub const FLOAT64: u8 = 0x04;
    pub const BOOL: u8 = 0x05;
    pub const BYTES: u8 = 0x06;
    pub const ARRAY: u8 = 0x07;
}

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
            KvValue::String(_) => kv_tag::STRING,
            KvValue::Int64(_) => kv_tag::INT64,
            KvValue::Uint64(_) => kv_tag::UINT64,
            KvValue::Float64(_) => kv_tag::FLOAT64,
            KvValue::Bool(_) => kv_tag::BOOL,
            KvValue::Bytes(_) => kv_tag::BYTES,
            KvValue::Array(_) => kv_tag::ARRAY,
        }
    }

    /// The name of a value tag, for messages and listings.
    pub fn tag_name(tag: u8) -> &'static str {
        match tag {
            kv_tag::STRING => "string",
            kv_tag::INT64 => "int64",
            kv_tag::UINT64 => "uint64",
            kv_tag::FLOAT64 => "float64",
            kv_tag::BOOL => "bool",
            kv_tag::BYTES => "bytes",
            kv_tag::ARRAY => "array",
            _ => "unknown",
        }
    }
}

impl KvArray {
    /// An empty array of element tag `tag` (0x01-0x06).
    pub fn empty(tag: u8) -> Option<KvArray> {
        Some(match tag {
            kv_tag::STRING => KvArray::String(Vec::new()),
            kv_tag::INT64 => KvArray::Int64(Vec::new()),
            kv_tag::UINT64 => KvArray::Uint64(Vec::new()),
            kv_tag::FLOAT64 => KvArray::Float64(Vec::new()),
            kv_tag::BOOL => KvArray::Bool(Vec::new()),
            kv_tag::BYTES => KvArray::Bytes(Vec::new()),
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
            KvArray::String(_) => kv_tag::STRING,
            KvArray::Int64(_) => kv_tag::INT64,
            KvArray::Uint64(_) => kv_tag::UINT64,
            KvArray::Float64(_) => kv_tag::FLOAT64,
            KvArray::Bool(_) => kv_tag::BOOL,
            KvArray::Bytes(_) => kv_tag::BYTES,
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
