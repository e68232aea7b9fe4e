//! The container's fixed parts, byte for byte (`file-format.md`): the 64-byte
//! header, the 40-byte trailer, the index section and the KV metadata
//! section, each with an encoder (for the writer) and a checking decoder
//! (for the reader) side by side, so the two cannot drift apart.

use std::collections::HashSet;

use super::{kv_tag, KvArray, KvValue};
use crate::aligned::{try_copy, try_string, try_vec};
use crate::error::CooError;
use crate::status::Status;

/// "HRRYFILE": the first 8 bytes of every Hurray file.
pub const FILE_MAGIC: [u8; 8] = *b"HRRYFILE";
/// "HRRY": the last 4 bytes of every Hurray file.
pub const TRAILER_MAGIC: [u8; 4] = *b"HRRY";
/// Length of the file header.
pub const HEADER_LEN: u64 = 64;
/// Length of the trailer.
pub const TRAILER_LEN: u64 = 40;
/// The container major version this library reads and writes.
pub const CONTAINER_MAJOR: u8 = 1;
/// The container minor version this library writes.
pub const CONTAINER_MINOR: u8 = 0;
/// Smallest `data_buffer_alignment`.
pub const MIN_ALIGNMENT: u32 = 4096;
/// Largest `data_buffer_alignment`.
pub const MAX_ALIGNMENT: u32 = 2 * 1024 * 1024;
/// `tensor_count_hint` when the writer does not know the count up front.
pub const COUNT_UNKNOWN: u64 = u64::MAX;
/// Descriptors, the KV section and the index start at multiples of 8.
pub const SECTION_ALIGN: u64 = 8;
/// Bytes of an index entry besides its name.
const ENTRY_FIXED_LEN: u64 = 2 + 8 + 4 + 8 + 8 + 4;

/// File `file_flags` bits.
pub mod file_flags {
    pub const HAS_KV_METADATA: u32 = 1 << 0;
    pub const SORTED_INDEX: u32 = 1 << 1;
    pub const HAS_INDEX_CRC32C: u32 = 1 << 2;
    pub const KNOWN: u32 = (1 << 3) - 1;
}

/// The error for a broken container rule at absolute byte `offset`.
pub fn corrupt(offset: u64, msg: impl Into<String>) -> CooError {
    CooError::Container {
        status: Status::CorruptFile,
        offset,
        msg: msg.into(),
    }
}

fn failed(status: Status, offset: u64, msg: impl Into<String>) -> CooError {
    CooError::Container {
        status,
        offset,
        msg: msg.into(),
    }
}

/// `x` rounded up to a multiple of `align` (a power of two), or `None` on
/// overflow.
pub fn align_up(x: u64, align: u64) -> Option<u64> {
    debug_assert!(align.is_power_of_two());
    Some(x.checked_add(align - 1)? & !(align - 1))
}

/// The first 8 bytes of a file must be "HRRYFILE" (checked before anything
/// else, whatever the file's length).
pub fn check_magic(first: &[u8]) -> Result<(), CooError> {
    if first == FILE_MAGIC {
        return Ok(());
    }
    Err(failed(
        Status::InvalidMagic,
        0,
        format!(
            "not a Hurray file: the first 8 bytes are {first:02X?}, expected \"HRRYFILE\" \
             (48 52 52 59 46 49 4C 45)"
        ),
    ))
}

/// The 64-byte file header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version_major: u8,
    pub version_minor: u8,
    pub flags: u32,
    pub alignment: u32,
    pub first_descriptor_offset: u64,
    pub tensor_count_hint: u64,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN as usize] {
        let mut b = [0u8; HEADER_LEN as usize];
        b[0..8].copy_from_slice(&FILE_MAGIC);
        b[8] = self.version_major;
        b[9] = self.version_minor;
        b[12..16].copy_from_slice(&self.flags.to_le_bytes());
        b[16..20].copy_from_slice(&self.alignment.to_le_bytes());
        b[20..28].copy_from_slice(&self.first_descriptor_offset.to_le_bytes());
        b[28..36].copy_from_slice(&self.tensor_count_hint.to_le_bytes());
        b
    }

    /// Decode and check the header of a file of `file_size` bytes.
    pub fn decode(b: &[u8; HEADER_LEN as usize], file_size: u64) -> Result<Header, CooError> {
        check_magic(&b[0..8])?;
        let h = Header {
            version_major: b[8],
            version_minor: b[9],
            flags: le32(&b[12..16]),
            alignment: le32(&b[16..20]),
            first_descriptor_offset: le64(&b[20..28]),
            tensor_count_hint: le64(&b[28..36]),
        };
        if h.version_major > CONTAINER_MAJOR {
            return Err(failed(
                Status::VersionMismatch,
                8,
                format!(
                    "container version {}.{} is newer than this library reads (major {})",
                    h.version_major, h.version_minor, CONTAINER_MAJOR
                ),
            ));
        }
        zeros(b, 10..12, 0, "the header's _reserved bytes")?;
        if h.flags & !file_flags::KNOWN != 0 {
            return Err(failed(
                Status::ReservedBits,
                12,
                format!(
                    "file_flags 0x{:08X} set reserved bits 0x{:08X} (only bits 0-2 are defined)",
                    h.flags,
                    h.flags & !file_flags::KNOWN
                ),
            ));
        }
        let a = h.alignment;
        if !a.is_power_of_two() || !(MIN_ALIGNMENT..=MAX_ALIGNMENT).contains(&a) {
            return Err(corrupt(
                16,
                format!(
                    "data_buffer_alignment is {a}; it must be a power of two from {MIN_ALIGNMENT} \
                     to {MAX_ALIGNMENT}"
                ),
            ));
        }
        let first = h.first_descriptor_offset;
        if first < HEADER_LEN
            || !first.is_multiple_of(SECTION_ALIGN)
            || first > file_size - TRAILER_LEN
        {
            return Err(corrupt(
                20,
                format!(
                    "first_descriptor_offset is {first}; it must be a multiple of 8 from 64 to \
                     {} (the trailer's start)",
                    file_size - TRAILER_LEN
                ),
            ));
        }
        zeros(b, 36..64, 0, "the header's _reserved_header bytes")?;
        Ok(h)
    }
}

/// The 40-byte trailer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trailer {
    pub index_offset: u64,
    pub index_length: u64,
    pub kv_offset: u64,
    pub kv_length: u32,
    pub index_crc32c: u32,
}

impl Trailer {
    pub fn encode(&self) -> [u8; TRAILER_LEN as usize] {
        let mut b = [0u8; TRAILER_LEN as usize];
        b[0..8].copy_from_slice(&self.index_offset.to_le_bytes());
        b[8..16].copy_from_slice(&self.index_length.to_le_bytes());
        b[16..24].copy_from_slice(&self.kv_offset.to_le_bytes());
        b[24..28].copy_from_slice(&self.kv_length.to_le_bytes());
        b[28..32].copy_from_slice(&self.index_crc32c.to_le_bytes());
        b[36..40].copy_from_slice(&TRAILER_MAGIC);
        b
    }

    /// Decode the trailer found at byte `at`: its magic first (nothing else
    /// is trusted before it), then its reserved bytes.
    pub fn decode(b: &[u8; TRAILER_LEN as usize], at: u64) -> Result<Trailer, CooError> {
        if b[36..40] != TRAILER_MAGIC {
            return Err(failed(
                Status::InvalidMagic,
                at + 36,
                format!(
                    "the trailer magic is {:02X?}, expected \"HRRY\" (48 52 52 59): the file is \
                     truncated, still being written, or not a Hurray file",
                    &b[36..40]
                ),
            ));
        }
        zeros(b, 32..36, at, "the trailer's _reserved bytes")?;
        Ok(Trailer {
            index_offset: le64(&b[0..8]),
            index_length: le64(&b[8..16]),
            kv_offset: le64(&b[16..24]),
            kv_length: le32(&b[24..28]),
            index_crc32c: le32(&b[28..32]),
        })
    }
}

/// One index entry: where a named tensor's descriptor and data are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    pub name: String,
    pub descriptor_offset: u64,
    pub descriptor_length: u32,
    pub data_offset: u64,
    pub data_length: u64,
}

/// Encode the index section.
pub fn encode_index(entries: &[IndexEntry]) -> Result<Vec<u8>, CooError> {
    let len: u64 = 8 + entries
        .iter()
        .map(|e| ENTRY_FIXED_LEN + e.name.len() as u64)
        .sum::<u64>();
    let mut out = reserve(len, "the index section")?;
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for e in entries {
        out.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
        out.extend_from_slice(e.name.as_bytes());
        out.extend_from_slice(&e.descriptor_offset.to_le_bytes());
        out.extend_from_slice(&e.descriptor_length.to_le_bytes());
        out.extend_from_slice(&e.data_offset.to_le_bytes());
        out.extend_from_slice(&e.data_length.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    Ok(out)
}

/// Decode the index section `bytes`, which starts at file byte `at`:
/// every entry in bounds, names non-empty, UTF-8 and unique, flags zero,
/// nothing left over. Each entry comes with its file offset.
pub fn decode_index(bytes: &[u8], at: u64) -> Result<Vec<(IndexEntry, u64)>, CooError> {
    let mut c = Cursor::new(bytes, at, "the index section");
    let count = c.u64("index_entry_count")?;
    // Every entry takes at least 35 bytes: a count that cannot fit is a
    // lie, refused before anything is allocated for it.
    let room = (bytes.len() as u64).saturating_sub(8) / (ENTRY_FIXED_LEN + 1);
    if count > room {
        return Err(corrupt(
            at,
            format!(
                "index_entry_count is {count}, but the {}-byte index section has room for at \
                 most {room} entries",
                bytes.len()
            ),
        ));
    }
    let mut entries = try_vec(count as usize, "the file's index")?;
    let mut seen = HashSet::new();
    seen.try_reserve(count as usize)
        .map_err(|_| CooError::Alloc {
            bytes: (count as usize).saturating_mul(32),
            what: "the file's tensor names",
        })?;
    for i in 0..count {
        let start = c.offset();
        let name = c.name(&format!("index entry {i}"), "name_length")?;
        if !seen.insert(name.clone()) {
            return Err(corrupt(
                start,
                format!("index entry {i} repeats the tensor name {name:?}"),
            ));
        }
        let e = IndexEntry {
            name,
            descriptor_offset: c.u64("descriptor_offset")?,
            descriptor_length: c.u32("descriptor_length")?,
            data_offset: c.u64("data_offset")?,
            data_length: c.u64("data_length")?,
        };
        let flags_at = c.offset();
        let flags = c.u32("flags")?;
        if flags != 0 {
            return Err(failed(
                Status::ReservedBits,
                flags_at,
                format!(
                    "index entry {i} ({:?}) has flags 0x{flags:08X}; they are reserved and must be 0",
                    e.name
                ),
            ));
        }
        entries.push((e, start));
    }
    c.finish()?;
    Ok(entries)
}

/// Encode the KV section (`kv` non-empty, keys checked by the writer).
pub fn encode_kv(kv: &[(String, KvValue)]) -> Result<Vec<u8>, CooError> {
    let mut out = Vec::new();
    out.extend_from_slice(&(kv.len() as u32).to_le_bytes());
    for (key, value) in kv {
        out.extend_from_slice(&(key.len() as u16).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.push(value.tag());
        match value {
            KvValue::Array(a) => {
                out.push(a.tag());
                out.extend_from_slice(&(a.len() as u32).to_le_bytes());
                a.for_each(|v| put_scalar(&mut out, v));
            }
            v => put_scalar(&mut out, v),
        }
    }
    Ok(out)
}

/// Bytes `encode_kv` writes for one entry (key and value).
pub fn kv_entry_len(key: &str, value: &KvValue) -> u64 {
    let scalar = |v: &KvValue| -> u64 {
        match v {
            KvValue::String(s) => 4 + s.len() as u64,
            KvValue::Bytes(b) => 4 + b.len() as u64,
            KvValue::Bool(_) => 1,
            _ => 8,
        }
    };
    let payload = match value {
        KvValue::Array(a) => {
            let mut n = 1 + 4;
            a.for_each(|v| n += scalar(v));
            n
        }
        v => scalar(v),
    };
    2 + key.len() as u64 + 1 + payload
}

fn put_scalar(out: &mut Vec<u8>, v: &KvValue) {
    match v {
        KvValue::String(s) => {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        KvValue::Int64(x) => out.extend_from_slice(&x.to_le_bytes()),
        KvValue::Uint64(x) => out.extend_from_slice(&x.to_le_bytes()),
        KvValue::Float64(x) => out.extend_from_slice(&x.to_le_bytes()),
        KvValue::Bool(x) => out.push(u8::from(*x)),
        KvValue::Bytes(b) => {
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }
        KvValue::Array(_) => unreachable!("arrays hold scalars only"),
    }
}

/// Decode the KV section `bytes`, which starts at file byte `at`: keys
/// non-empty, UTF-8 and unique; every value tag defined; booleans 0 or 1;
/// strings UTF-8; nothing left over.
pub fn decode_kv(bytes: &[u8], at: u64) -> Result<Vec<(String, KvValue)>, CooError> {
    let mut c = Cursor::new(bytes, at, "the KV metadata section");
    let count = c.u32("kv_count")?;
    // Each entry takes at least 4 bytes (key_length, a 1-byte key, a tag).
    if u64::from(count) > (bytes.len() as u64).saturating_sub(4) / 4 {
        return Err(corrupt(
            at,
            format!(
                "kv_count is {count}, more than the {}-byte KV section can hold",
                bytes.len()
            ),
        ));
    }
    let mut kv = try_vec(count as usize, "the KV entries")?;
    let mut seen = HashSet::new();
    seen.try_reserve(count as usize)
        .map_err(|_| CooError::Alloc {
            bytes: (count as usize).saturating_mul(32),
            what: "the KV keys",
        })?;
    for i in 0..count {
        let start = c.offset();
        let key = c.name(&format!("KV entry {i}"), "key_length")?;
        if !seen.insert(key.clone()) {
            return Err(corrupt(
                start,
                format!("KV entry {i} repeats the key {key:?}"),
            ));
        }
        let tag_at = c.offset();
        let tag = c.u8("value_tag")?;
        let value = if tag == kv_tag::ARRAY {
            let elem_at = c.offset();
            let elem = c.u8("array element tag")?;
            let n = c.u32("array element count")?;
            let mut a = KvArray::empty(elem).ok_or_else(|| {
                corrupt(
                    elem_at,
                    format!(
                        "KV entry {key:?}: array element tag 0x{elem:02X} is not a scalar tag \
                         (0x01-0x06)"
                    ),
                )
            })?;
            // Every element takes at least a byte (a bool; 4 for a length,
            // 8 for a number): a count the section cannot hold is refused
            // before anything is reserved for it.
            let least = match elem {
                kv_tag::BOOL => 1,
                kv_tag::STRING | kv_tag::BYTES => 4,
                _ => 8,
            };
            if u64::from(n) * least > (c.buf.len() - c.pos) as u64 {
                return Err(corrupt(
                    elem_at + 1,
                    format!(
                        "KV entry {key:?}: the array's element count {n} needs at least {} \
                         bytes, more than is left of the KV section",
                        u64::from(n) * least
                    ),
                ));
            }
            a.try_reserve(n as usize)?;
            for _ in 0..n {
                let v = c.scalar(elem, &key)?;
                a.push(v);
            }
            KvValue::Array(a)
        } else {
            match tag {
                kv_tag::STRING..=kv_tag::BYTES => c.scalar(tag, &key)?,
                0xF0..=0xFE => {
                    return Err(failed(
                        Status::UnsupportedFeature,
                        tag_at,
                        format!(
                            "KV entry {key:?} has the implementation-private value tag \
                             0x{tag:02X}, which this library cannot read (its length is not \
                             known)"
                        ),
                    ))
                }
                _ => {
                    return Err(corrupt(
                        tag_at,
                        format!(
                            "KV entry {key:?} has value tag 0x{tag:02X}, which is {}",
                            if tag == 0xFF { "invalid" } else { "reserved" }
                        ),
                    ))
                }
            }
        };
        kv.push((key, value));
    }
    c.finish()?;
    Ok(kv)
}

/// Bounds-checked little-endian reads over one section, reporting absolute
/// file offsets.
struct Cursor<'b> {
    buf: &'b [u8],
    pos: usize,
    base: u64,
    section: &'static str,
}

impl<'b> Cursor<'b> {
    fn new(buf: &'b [u8], base: u64, section: &'static str) -> Self {
        Cursor {
            buf,
            pos: 0,
            base,
            section,
        }
    }

    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn take(&mut self, n: u64, field: &str) -> Result<&'b [u8], CooError> {
        let left = (self.buf.len() - self.pos) as u64;
        if n > left {
            return Err(corrupt(
                self.offset(),
                format!(
                    "{field} needs {n} bytes but {} ends {left} bytes later, at byte {}",
                    self.section,
                    self.base + self.buf.len() as u64
                ),
            ));
        }
        let s = &self.buf[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    fn u8(&mut self, field: &str) -> Result<u8, CooError> {
        Ok(self.take(1, field)?[0])
    }

    fn u16(&mut self, field: &str) -> Result<u16, CooError> {
        let b = self.take(2, field)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, field: &str) -> Result<u32, CooError> {
        Ok(le32(self.take(4, field)?))
    }

    fn u64(&mut self, field: &str) -> Result<u64, CooError> {
        Ok(le64(self.take(8, field)?))
    }

    /// A `u16`-length-prefixed, non-empty UTF-8 name (tensor name or key).
    fn name(&mut self, whose: &str, len_field: &str) -> Result<String, CooError> {
        let at = self.offset();
        let n = self.u16(len_field)?;
        if n == 0 {
            return Err(corrupt(
                at,
                format!("{whose}: {len_field} is 0; it must be at least 1"),
            ));
        }
        let bytes = self.take(u64::from(n), &format!("{whose}'s {n}-byte name"))?;
        let s = std::str::from_utf8(bytes).map_err(|e| {
            corrupt(
                at + 2 + e.valid_up_to() as u64,
                format!("{whose}: the name is not valid UTF-8"),
            )
        })?;
        Ok(s.to_owned())
    }

    /// A `u32`-length-prefixed payload.
    fn sized(&mut self, key: &str) -> Result<&'b [u8], CooError> {
        let n = self.u32(&format!("KV entry {key:?}'s length"))?;
        self.take(
            u64::from(n),
            &format!("KV entry {key:?}'s {n}-byte payload"),
        )
    }

    fn scalar(&mut self, tag: u8, key: &str) -> Result<KvValue, CooError> {
        let at = self.offset();
        Ok(match tag {
            kv_tag::STRING => {
                let b = self.sized(key)?;
                let s = std::str::from_utf8(b).map_err(|e| {
                    corrupt(
                        at + 4 + e.valid_up_to() as u64,
                        format!("KV entry {key:?}: the string is not valid UTF-8"),
                    )
                })?;
                KvValue::String(try_string(s, "a KV string")?)
            }
            kv_tag::INT64 => KvValue::Int64(self.u64(key)? as i64),
            kv_tag::UINT64 => KvValue::Uint64(self.u64(key)?),
            kv_tag::FLOAT64 => KvValue::Float64(f64::from_bits(self.u64(key)?)),
            kv_tag::BOOL => match self.u8(key)? {
                0 => KvValue::Bool(false),
                1 => KvValue::Bool(true),
                b => {
                    return Err(corrupt(
                        at,
                        format!("KV entry {key:?}: bool byte is 0x{b:02X}; it must be 0 or 1"),
                    ))
                }
            },
            kv_tag::BYTES => KvValue::Bytes(try_copy(self.sized(key)?, "KV bytes")?),
            _ => unreachable!("callers pass scalar tags"),
        })
    }

    /// The section must be consumed exactly.
    fn finish(&self) -> Result<(), CooError> {
        let left = self.buf.len() - self.pos;
        if left != 0 {
            return Err(corrupt(
                self.offset(),
                format!(
                    "{left} bytes are left over at the end of {} after its last entry",
                    self.section
                ),
            ));
        }
        Ok(())
    }
}

fn zeros(b: &[u8], range: std::ops::Range<usize>, base: u64, what: &str) -> Result<(), CooError> {
    if let Some(k) = b[range.clone()].iter().position(|&x| x != 0) {
        let at = range.start + k;
        return Err(failed(
            Status::ReservedBits,
            base + at as u64,
            format!("{what} must be 0, but this byte is 0x{:02X}", b[at]),
        ));
    }
    Ok(())
}

/// A vector with room for `len` bytes, or `Alloc`.
pub fn reserve(len: u64, what: &'static str) -> Result<Vec<u8>, CooError> {
    let n = usize::try_from(len).map_err(|_| CooError::Alloc {
        bytes: usize::MAX,
        what,
    })?;
    try_vec(n, what)
}

pub fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

pub fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}
