//! Writing a Hurray file in one forward pass (the spec's writer protocol):
//! header, each tensor's descriptor and aligned buffers, KV section, index,
//! trailer with the index CRC-32C. The header is written when the first
//! tensor arrives (or at `finish`), so KV metadata added before then sets
//! HAS_KV_METADATA truthfully without seeking back.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use super::format::{
    self, align_up, file_flags, Header, IndexEntry, Trailer, CONTAINER_MAJOR, CONTAINER_MINOR,
    COUNT_UNKNOWN, HEADER_LEN, MAX_ALIGNMENT, MIN_ALIGNMENT, SECTION_ALIGN,
};
use super::{KvArray, KvValue};
use crate::coo::Coo;
use crate::error::CooError;
use crate::io::descriptor::{self, StatsChoice};
use crate::io::fsutil::{reason, AtomicFile};

/// How a file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// `data_buffer_alignment`: a power of two from 4096 to 2 MiB.
    pub alignment: u32,
    /// Sort the index by name (SORTED_INDEX) so readers can binary-search.
    pub sorted_index: bool,
    /// The statistics section each tensor's descriptor carries.
    pub stats: StatsChoice,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            alignment: MIN_ALIGNMENT,
            sorted_index: false,
            stats: StatsChoice::None,
        }
    }
}

static ZEROS: [u8; 4096] = [0; 4096];

/// A one-pass Hurray file writer over any `Write`. After an I/O error it
/// refuses every further call: what it wrote is not a file.
pub struct Writer<W: Write> {
    out: W,
    /// Names the destination in I/O messages.
    dest: String,
    opts: WriteOptions,
    pos: u64,
    header_written: bool,
    kv: Vec<(String, KvValue)>,
    /// Bytes of the KV section so far (its 4-byte count included).
    kv_len: u64,
    entries: Vec<IndexEntry>,
    names: HashSet<String>,
    failed: bool,
}

/// A KV value longer than its 32-bit length field allows.
fn kv_too_long(key: &str) -> CooError {
    CooError::Argument(format!(
        "KV entry {key:?}: a string, byte sequence or array is longer than 2^32 - 1"
    ))
}

impl<W: Write> Writer<W> {
    /// A writer into `out` (`dest` names it in messages).
    pub fn new(out: W, dest: &str, opts: WriteOptions) -> Result<Writer<W>, CooError> {
        let a = opts.alignment;
        if !a.is_power_of_two() || !(MIN_ALIGNMENT..=MAX_ALIGNMENT).contains(&a) {
            return Err(CooError::Argument(format!(
                "data_buffer_alignment {a} is not allowed: it must be a power of two from \
                 {MIN_ALIGNMENT} to {MAX_ALIGNMENT} (0 picks {MIN_ALIGNMENT})"
            )));
        }
        Ok(Writer {
            out,
            dest: dest.to_string(),
            opts,
            pos: 0,
            header_written: false,
            kv: Vec::new(),
            kv_len: 4,
            entries: Vec::new(),
            names: HashSet::new(),
            failed: false,
        })
    }

    /// Add a file-level metadata entry. Keys are 1 to 65535 bytes and
    /// unique; strings, byte sequences and arrays at most 2^32 - 1 long.
    /// Only before the first tensor: the header that says whether the file
    /// has metadata is written then.
    pub fn add_kv(&mut self, key: &str, value: KvValue) -> Result<(), CooError> {
        self.usable()?;
        if self.header_written {
            return Err(CooError::Argument(format!(
                "KV entry {key:?}: metadata must be added before the first tensor, because the \
                 file header (which says whether a file has metadata) is written with it and a \
                 Hurray writer never seeks back"
            )));
        }
        check_name(key, "KV key")?;
        if self.kv.iter().any(|(k, _)| k == key) {
            return Err(CooError::Argument(format!(
                "KV key {key:?} is already in this file; keys must be unique"
            )));
        }
        let too_long = |n: usize| n > u32::MAX as usize;
        let long = match &value {
            KvValue::String(s) => too_long(s.len()),
            KvValue::Bytes(b) => too_long(b.len()),
            KvValue::Array(a) => {
                too_long(a.len())
                    || match a {
                        KvArray::String(v) => v.iter().any(|s| too_long(s.len())),
                        KvArray::Bytes(v) => v.iter().any(|b| too_long(b.len())),
                        _ => false,
                    }
            }
            _ => false,
        };
        if long {
            return Err(kv_too_long(key));
        }
        let len = self.kv_section_with(key, format::kv_entry_len(key, &value))?;
        self.kv.try_reserve(1).map_err(|_| CooError::Alloc {
            bytes: std::mem::size_of::<(String, KvValue)>(),
            what: "the KV entry",
        })?;
        self.kv_len = len;
        self.kv.push((key.to_string(), value));
        Ok(())
    }

    /// Refuse, before the caller copies it, a KV value this writer would
    /// refuse for its size: `count` (the bytes of a string or byte
    /// sequence, the elements of an array) over 2^32 - 1, or `payload`
    /// encoded bytes that take the KV section past its 32-bit length.
    pub fn check_kv_size(&self, key: &str, count: u64, payload: u64) -> Result<(), CooError> {
        self.usable()?;
        if count > u64::from(u32::MAX) {
            return Err(kv_too_long(key));
        }
        let entry = (2 + 1 + key.len() as u64).saturating_add(payload);
        self.kv_section_with(key, entry).map(|_| ())
    }

    /// The KV section's length with one more entry of `entry` bytes, or the
    /// error when that passes its 32-bit length field.
    fn kv_section_with(&self, key: &str, entry: u64) -> Result<u64, CooError> {
        let len = self.kv_len.saturating_add(entry);
        if len > u64::from(u32::MAX) {
            return Err(CooError::Argument(format!(
                "KV entry {key:?} would make the KV section {len} bytes; its length is a 32-bit \
                 field"
            )));
        }
        Ok(len)
    }

    /// Write `coo` as the tensor `name` (1 to 65535 bytes of UTF-8, unique
    /// in the file). A permissive handle is validated first; a handle whose
    /// type tag is unknown cannot be described.
    pub fn add_coo(&mut self, name: &str, coo: &Coo<'_>) -> Result<(), CooError> {
        self.usable()?;
        check_name(name, "tensor name")?;
        if self.names.contains(name) {
            return Err(CooError::Argument(format!(
                "a tensor named {name:?} is already in this file; names must be unique"
            )));
        }
        let mut desc = [0u8; descriptor::MAX_WRITTEN_LEN];
        let n = descriptor::encode(coo, self.opts.stats, &mut desc)?;
        self.start()?;
        let align = u64::from(self.opts.alignment);
        let descriptor_offset = self.pos;
        self.put(&desc[..n])?;
        self.pad_to(align)?;
        let data_offset = self.pos;
        self.put(coo.values())?;
        self.pad_to(align)?;
        self.put(coo.indices_bytes())?;
        let data_length = self.pos - data_offset;
        self.pad_to(SECTION_ALIGN)?;
        self.names.insert(name.to_string());
        self.entries.push(IndexEntry {
            name: name.to_string(),
            descriptor_offset,
            descriptor_length: n as u32,
            data_offset,
            data_length,
        });
        Ok(())
    }

    /// The number of tensors written so far.
    pub fn tensor_count(&self) -> usize {
        self.entries.len()
    }

    /// Write the KV section, the index and the trailer; return the sink.
    pub fn finish(mut self) -> Result<W, CooError> {
        self.usable()?;
        self.start()?;
        let (kv_offset, kv_length) = if self.kv.is_empty() {
            (0, 0)
        } else {
            let kv = format::encode_kv(&self.kv)?;
            debug_assert_eq!(kv.len() as u64, self.kv_len);
            let at = self.pos;
            self.put(&kv)?;
            self.pad_to(SECTION_ALIGN)?;
            (at, kv.len() as u32)
        };
        if self.opts.sorted_index {
            self.entries
                .sort_unstable_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        }
        let index = format::encode_index(&self.entries)?;
        let trailer = Trailer {
            index_offset: self.pos,
            index_length: index.len() as u64,
            kv_offset,
            kv_length,
            index_crc32c: crc32c::crc32c(&index),
        };
        self.put(&index)?;
        self.put(&trailer.encode())?;
        let dest = self.dest.clone();
        self.out
            .flush()
            .map_err(|e| CooError::Io(format!("{dest}: cannot write: {}", reason(&e))))?;
        Ok(self.out)
    }

    fn usable(&self) -> Result<(), CooError> {
        match self.failed {
            true => Err(CooError::Io(format!(
                "{}: an earlier write failed; this writer cannot produce a file any more",
                self.dest
            ))),
            false => Ok(()),
        }
    }

    fn start(&mut self) -> Result<(), CooError> {
        if self.header_written {
            return Ok(());
        }
        let mut flags = file_flags::HAS_INDEX_CRC32C;
        if !self.kv.is_empty() {
            flags |= file_flags::HAS_KV_METADATA;
        }
        if self.opts.sorted_index {
            flags |= file_flags::SORTED_INDEX;
        }
        let h = Header {
            version_major: CONTAINER_MAJOR,
            version_minor: CONTAINER_MINOR,
            flags,
            alignment: self.opts.alignment,
            first_descriptor_offset: HEADER_LEN,
            tensor_count_hint: COUNT_UNKNOWN,
        };
        self.put(&h.encode())?;
        self.header_written = true;
        Ok(())
    }

    fn put(&mut self, b: &[u8]) -> Result<(), CooError> {
        if let Err(e) = self.out.write_all(b) {
            self.failed = true;
            return Err(CooError::Io(format!(
                "{}: cannot write: {}",
                self.dest,
                reason(&e)
            )));
        }
        self.pos += b.len() as u64;
        Ok(())
    }

    fn pad_to(&mut self, align: u64) -> Result<(), CooError> {
        let target = align_up(self.pos, align).unwrap_or(self.pos);
        while self.pos < target {
            let n = (target - self.pos).min(ZEROS.len() as u64) as usize;
            self.put(&ZEROS[..n])?;
        }
        Ok(())
    }
}

fn check_name(name: &str, what: &str) -> Result<(), CooError> {
    if name.is_empty() || name.len() > u16::MAX as usize {
        return Err(CooError::Argument(format!(
            "a {what} must be 1 to 65535 bytes of UTF-8; this one is {} bytes",
            name.len()
        )));
    }
    Ok(())
}

/// A Hurray file being written at a path: the bytes go to a temporary file
/// beside it, which `finish` syncs and renames into place. Dropped without
/// `finish` (or after an error), the temporary file is removed: an
/// interrupted write never leaves a file, complete-looking or not, under the
/// name, and never replaces the file that was there.
pub struct FileWriter {
    w: Writer<AtomicFile>,
}

impl FileWriter {
    /// Start writing the file `path`.
    pub fn create(path: &Path, opts: WriteOptions) -> Result<FileWriter, CooError> {
        let out = AtomicFile::create(path)?;
        let dest = path.display().to_string();
        Ok(FileWriter {
            w: Writer::new(out, &dest, opts)?,
        })
    }

    /// See `Writer::add_kv`.
    pub fn add_kv(&mut self, key: &str, value: KvValue) -> Result<(), CooError> {
        self.w.add_kv(key, value)
    }

    /// See `Writer::check_kv_size`.
    pub fn check_kv_size(&self, key: &str, count: u64, payload: u64) -> Result<(), CooError> {
        self.w.check_kv_size(key, count, payload)
    }

    /// See `Writer::add_coo`.
    pub fn add_coo(&mut self, name: &str, coo: &Coo<'_>) -> Result<(), CooError> {
        self.w.add_coo(name, coo)
    }

    /// The number of tensors written so far.
    pub fn tensor_count(&self) -> usize {
        self.w.tensor_count()
    }

    /// Complete the file, fsync it and give it its name.
    pub fn finish(self) -> Result<(), CooError> {
        self.w.finish()?.commit(true)
    }

    /// The path the file will have.
    pub fn path(&self) -> &Path {
        self.w.out.path()
    }
}
