//! Opening a Hurray file: every container rule checked up front (header,
//! trailer, index CRC, index and KV sections, each tensor's place in the
//! file), tensors of every layout listed, COO tensors handed out over the
//! file's own bytes.

use std::collections::HashMap;
use std::path::Path;

use super::format::{
    self, align_up, corrupt, file_flags, Header, IndexEntry, Trailer, HEADER_LEN, SECTION_ALIGN,
    TRAILER_LEN,
};
use super::KvValue;
use crate::aligned::AlignedBuf;
use crate::coo::{Coo, CooParts, Options};
use crate::error::CooError;
use crate::io::descriptor::{self, layout_name, Descriptor, LAYOUT_COMPOSITE, LAYOUT_COO};
use crate::status::Status;

/// How `HurrayFile::open` gets at the bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpenMode {
    /// Map the file read-only: nothing is read until touched, handles read
    /// the page cache in place. The file must not be truncated or rewritten
    /// while mapped (the process would get SIGBUS or see the new bytes).
    #[default]
    Map,
    /// Read the whole file into library memory: for files that may change
    /// while open, or on file systems where mapping is unreliable.
    Read,
}

/// One tensor of a file, as its index entry and descriptor header say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorEntry {
    pub entry: IndexEntry,
    /// File offset of this entry in the index (where a lie in it is).
    pub entry_at: u64,
    pub type_tag: u8,
    pub layout_tag: u8,
    pub rank: u32,
    /// Empty when the descriptor's rank is above 64 or its major version is
    /// not 1.
    pub shape: Vec<u64>,
    /// The COO layout's nnz; `None` for other layouts.
    pub nnz: Option<u64>,
    pub version_major: u8,
    pub version_minor: u8,
    /// A composite head's member_count.
    pub member_count: Option<u32>,
}

impl TensorEntry {
    /// Whether this is a COO tensor (which `HurrayFile::coo` can hand out).
    pub fn is_coo(&self) -> bool {
        self.layout_tag == LAYOUT_COO && self.version_major == descriptor::VERSION_MAJOR
    }

    /// "COO", "CSR", ...: the layout's name.
    pub fn layout_name(&self) -> &'static str {
        layout_name(self.layout_tag)
    }

    fn context(&self) -> String {
        format!(
            "tensor {:?} (descriptor at byte {})",
            self.entry.name, self.entry.descriptor_offset
        )
    }
}

/// Everything the container says, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Container {
    pub header: Header,
    pub trailer: Trailer,
    /// In index order.
    pub tensors: Vec<TensorEntry>,
    pub kv: Vec<(String, KvValue)>,
}

enum Source {
    Map(memmap2::Mmap),
    Mem(AlignedBuf),
}

impl Source {
    fn bytes(&self) -> &[u8] {
        match self {
            Source::Map(m) => m,
            Source::Mem(b) => b.as_bytes(),
        }
    }
}

/// An open Hurray file. Immutable; `Sync`, so many threads may hand out
/// tensors from it at once.
pub struct HurrayFile {
    src: Source,
    container: Container,
    by_name: HashMap<String, usize>,
}

impl std::fmt::Debug for HurrayFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HurrayFile")
            .field("len", &self.src.bytes().len())
            .field("mapped", &matches!(self.src, Source::Map(_)))
            .field("container", &self.container)
            .finish()
    }
}

impl HurrayFile {
    /// Open the file at `path` and check its container.
    pub fn open(path: &Path, mode: OpenMode) -> Result<HurrayFile, CooError> {
        let io = crate::io::fsutil::io_error(path, "read");
        let in_file = |e: CooError| CooError::InFile {
            context: path.display().to_string(),
            inner: Box::new(e),
        };
        let file = std::fs::File::open(path).map_err(&io)?;
        let len = file.metadata().map_err(&io)?.len();
        // Mapping 0 bytes fails; a file that short is refused by the checks
        // anyway, so it is read instead.
        let src = if mode == OpenMode::Read || len < HEADER_LEN + TRAILER_LEN {
            let bytes = crate::io::fsutil::read_file(path)?;
            Source::Mem(AlignedBuf::copy_from(&bytes, "the file's contents")?)
        } else {
            // SAFETY: the map is read-only and private to this object; the
            // library never writes through it. What mapping cannot rule out
            // is another process truncating or rewriting the file while it
            // is mapped: that is the documented contract of OpenMode::Map
            // (and of hurray_file_open), with OpenMode::Read as the
            // alternative.
            Source::Map(unsafe { memmap2::Mmap::map(&file) }.map_err(&io)?)
        };
        Self::from_source(src).map_err(in_file)
    }

    /// Check `bytes` as a Hurray file, copying them into library memory.
    pub fn from_bytes(bytes: &[u8]) -> Result<HurrayFile, CooError> {
        Self::from_source(Source::Mem(AlignedBuf::copy_from(
            bytes,
            "the file's contents",
        )?))
    }

    fn from_source(src: Source) -> Result<HurrayFile, CooError> {
        let container = check_container(src.bytes())?;
        let by_name = container
            .tensors
            .iter()
            .enumerate()
            .map(|(i, t)| (t.entry.name.clone(), i))
            .collect();
        Ok(HurrayFile {
            src,
            container,
            by_name,
        })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.src.bytes()
    }

    /// Whether the bytes are a memory map of the file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.src, Source::Map(_))
    }

    /// The header, trailer, tensors and KV metadata.
    pub fn container(&self) -> &Container {
        &self.container
    }

    /// The tensors, in index order.
    pub fn tensors(&self) -> &[TensorEntry] {
        &self.container.tensors
    }

    /// The KV metadata, in file order.
    pub fn kv(&self) -> &[(String, KvValue)] {
        &self.container.kv
    }

    /// The position of the tensor named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The position of the tensor named `name`, or `NotFound` naming the
    /// tensors there are.
    pub fn position(&self, name: &str) -> Result<usize, CooError> {
        self.find(name).ok_or_else(|| {
            let mut names: Vec<String> = self
                .tensors()
                .iter()
                .take(8)
                .map(|t| format!("{:?}", t.entry.name))
                .collect();
            if self.tensors().len() > 8 {
                names.push(format!("and {} more", self.tensors().len() - 8));
            }
            CooError::Container {
                status: Status::NotFound,
                offset: self.container.trailer.index_offset,
                msg: format!(
                    "no tensor is named {name:?} in the index; {}",
                    if names.is_empty() {
                        "the file holds no tensors".to_string()
                    } else {
                        format!("the file holds {}", names.join(", "))
                    }
                ),
            }
        })
    }

    /// Tensor `i` as a COO handle over the file's bytes (or a copy, with
    /// `opts.copy`), its descriptor checked and, unless permissive, its data
    /// validated, exactly as `Coo::new` does.
    pub fn coo(&self, i: usize, opts: Options) -> Result<(Coo<'_>, Descriptor), CooError> {
        let t = self.tensors().get(i).ok_or_else(|| CooError::Container {
            status: Status::NotFound,
            offset: self.container.trailer.index_offset,
            msg: format!(
                "tensor position {i} is out of range: the file holds {} tensors",
                self.tensors().len()
            ),
        })?;
        let in_tensor = |e: CooError| CooError::InFile {
            context: t.context(),
            inner: Box::new(e),
        };
        if !t.is_coo() {
            return Err(in_tensor(CooError::Layout(format!(
                "it has the {} layout (tag 0x{:02X}{}); this library hands out COO (0x06) \
                 tensors only",
                t.layout_name(),
                t.layout_tag,
                if t.version_major == descriptor::VERSION_MAJOR {
                    String::new()
                } else {
                    format!(
                        ", descriptor version {}.{}",
                        t.version_major, t.version_minor
                    )
                }
            ))));
        }
        let bytes = self.bytes();
        let e = &t.entry;
        // Offsets were range-checked against the file size at open.
        let desc_start = e.descriptor_offset as usize;
        let desc_end = desc_start + e.descriptor_length as usize;
        let desc =
            descriptor::parse(&bytes[desc_start..desc_end], opts.permissive).map_err(in_tensor)?;
        let [v, x] = self.buffer_ranges(t, &desc)?;
        let parts = CooParts {
            type_tag: desc.type_tag,
            shape: &desc.shape,
            nnz: desc.nnz,
            is_sorted: desc.is_sorted,
            values: &bytes[v.clone()],
            indices: &bytes[x.clone()],
        };
        let mut coo = Coo::new(parts, opts).map_err(in_tensor)?;
        if let Some(b) = desc.shard.clone() {
            coo = coo.with_shard(b).map_err(in_tensor)?;
        }
        Ok((coo, desc))
    }

    /// Rows `lo..hi` of the sorted COO tensor `i` as a validated,
    /// library-owned shard, reading only those rows' entries from the file
    /// (see `shard::row_block`): how each rank of a parallel job reads its
    /// part of a large tensor.
    pub fn coo_rows(&self, i: usize, lo: u64, hi: u64) -> Result<Coo<'static>, CooError> {
        let lax = Options {
            permissive: true,
            ..Options::default()
        };
        let (coo, _) = self.coo(i, lax)?;
        crate::shard::row_block(&coo, lo, hi).map_err(|e| CooError::InFile {
            context: self.tensors()[i].context(),
            inner: Box::new(e),
        })
    }

    /// Where a COO tensor's two buffers are, after checking that the index
    /// entry's data_length agrees with the descriptor, that each buffer is
    /// where the alignments put it and that the padding around them is zero.
    fn buffer_ranges(
        &self,
        t: &TensorEntry,
        desc: &Descriptor,
    ) -> Result<[std::ops::Range<usize>; 2], CooError> {
        let e = &t.entry;
        let align = u64::from(self.container.header.alignment);
        let [s0, s1] = [desc.buffers[0].byte_size, desc.buffers[1].byte_size];
        let lie = || {
            corrupt(
                t.field_at(field::DATA_LENGTH),
                format!(
                    "tensor {:?}: the index says its data is {} bytes at byte {}, but its \
                     descriptor declares buffers of {s0} (values) and {s1} (indices) bytes, \
                     which need {} bytes at alignment {align}",
                    e.name,
                    e.data_length,
                    e.data_offset,
                    align_up(s0, align)
                        .and_then(|a| a.checked_add(s1))
                        .map_or("more than 2^64".to_string(), |n| n.to_string())
                ),
            )
        };
        let gap = align_up(s0, align).ok_or_else(lie)?;
        let exact = gap.checked_add(s1).ok_or_else(lie)?;
        // The buffers exactly, or padded to the alignment after the last one
        // (the spec's writer protocol allows either reading).
        if e.data_length != exact && Some(e.data_length) != align_up(exact, align) {
            return Err(lie());
        }
        let v = e.data_offset;
        let x = v + gap;
        for (k, at) in [(0, v), (1, x)] {
            let declared = u64::from(desc.buffers[k].alignment);
            if at % declared != 0 {
                return Err(CooError::Container {
                    status: Status::Misaligned,
                    offset: at,
                    msg: format!(
                        "tensor {:?}: its {} buffer starts here, which is not a multiple of \
                         the alignment {declared} its descriptor declares",
                        e.name,
                        ["values", "indices"][k]
                    ),
                });
            }
        }
        let desc_end = e.descriptor_offset + u64::from(e.descriptor_length);
        let bytes = self.bytes();
        zero_padding(bytes, desc_end, v, &format!("tensor {:?}", e.name))?;
        zero_padding(bytes, v + s0, x, &format!("tensor {:?}", e.name))?;
        let r = |a: u64, n: u64| a as usize..(a + n) as usize;
        Ok([r(v, s0), r(x, s1)])
    }
}

/// Where the fixed fields of an index entry are, after its name.
mod field {
    pub const DESCRIPTOR_OFFSET: u64 = 0;
    pub const DESCRIPTOR_LENGTH: u64 = 8;
    pub const DATA_OFFSET: u64 = 12;
    pub const DATA_LENGTH: u64 = 20;
}

impl TensorEntry {
    /// The file offset of an index-entry field (`field::*`), for messages.
    fn field_at(&self, rel: u64) -> u64 {
        self.entry_at + 2 + self.entry.name.len() as u64 + rel
    }
}

/// Check that bytes `from..to` of `bytes` are zero.
fn zero_padding(bytes: &[u8], from: u64, to: u64, whose: &str) -> Result<(), CooError> {
    if from >= to {
        return Ok(());
    }
    let pad = &bytes[from as usize..to as usize];
    if let Some(k) = pad.iter().position(|&b| b != 0) {
        return Err(corrupt(
            from + k as u64,
            format!(
                "padding byte {} of the {} between byte {from} and byte {to} ({whose}) is \
                 0x{:02X}; padding must be 0x00",
                k,
                to - from,
                pad[k]
            ),
        ));
    }
    Ok(())
}

/// Check every container rule of `bytes` as a whole Hurray file and list
/// what it holds. Tensor data is not read here (only descriptor headers and
/// the padding between tensors).
pub fn check_container(bytes: &[u8]) -> Result<Container, CooError> {
    let size = bytes.len() as u64;
    if size >= 8 {
        format::check_magic(&bytes[..8])?;
    }
    if size < HEADER_LEN + TRAILER_LEN {
        return Err(CooError::Container {
            status: Status::Truncated,
            offset: size,
            msg: format!(
                "the file ends after {size} bytes; a Hurray file has at least {} (a \
                 {HEADER_LEN}-byte header and a {TRAILER_LEN}-byte trailer)",
                HEADER_LEN + TRAILER_LEN
            ),
        });
    }
    let header = Header::decode(
        bytes[..HEADER_LEN as usize]
            .try_into()
            .expect("a header's bytes"),
        size,
    )?;
    let at = size - TRAILER_LEN;
    let trailer = Trailer::decode(
        bytes[at as usize..].try_into().expect("a trailer's bytes"),
        at,
    )?;
    let (index_range, kv_range) = section_ranges(&header, &trailer, size)?;
    let index_bytes = &bytes[index_range.0 as usize..index_range.1 as usize];
    if header.flags & file_flags::HAS_INDEX_CRC32C != 0 {
        let computed = crc32c::crc32c(index_bytes);
        if computed != trailer.index_crc32c {
            return Err(CooError::Container {
                status: Status::Checksum,
                offset: at + 28,
                msg: format!(
                    "the index section (bytes {} to {}) has CRC-32C 0x{computed:08X}, but the \
                     trailer records 0x{:08X}: the index is damaged",
                    index_range.0, index_range.1, trailer.index_crc32c
                ),
            });
        }
    } else if trailer.index_crc32c != 0 {
        return Err(corrupt(
            at + 28,
            format!(
                "index_crc32c is 0x{:08X} but HAS_INDEX_CRC32C is not set in file_flags; it must \
                 then be 0",
                trailer.index_crc32c
            ),
        ));
    }
    let entries = format::decode_index(index_bytes, index_range.0)?;
    let kv = match kv_range {
        Some((a, b)) => format::decode_kv(&bytes[a as usize..b as usize], a)?,
        None => Vec::new(),
    };
    let region_end = kv_range.map_or(index_range.0, |r| r.0);
    let mut tensors = Vec::new();
    tensors
        .try_reserve_exact(entries.len())
        .map_err(|_| CooError::Alloc {
            bytes: entries.len() * std::mem::size_of::<TensorEntry>(),
            what: "the file's tensor list",
        })?;
    for (entry, entry_at) in entries {
        tensors.push(place_tensor(bytes, &header, region_end, entry, entry_at)?);
    }
    if header.flags & file_flags::SORTED_INDEX != 0 {
        for w in tensors.windows(2) {
            if w[0].entry.name.as_bytes() >= w[1].entry.name.as_bytes() {
                return Err(corrupt(
                    w[1].entry_at,
                    format!(
                        "SORTED_INDEX is set but index entry {:?} follows {:?}: the names are \
                         not in increasing byte order",
                        w[1].entry.name, w[0].entry.name
                    ),
                ));
            }
        }
    }
    check_region(bytes, &header, &tensors, region_end)?;
    if let Some((_, kv_end)) = kv_range {
        zero_padding(bytes, kv_end, index_range.0, "after the KV section")?;
    }
    zero_padding(bytes, index_range.1, at, "after the index section")?;
    Ok(Container {
        header,
        trailer,
        tensors,
        kv,
    })
}

/// The index and KV byte ranges, checked against each other, the tensor
/// region and the trailer.
#[allow(clippy::type_complexity)]
fn section_ranges(
    h: &Header,
    t: &Trailer,
    size: u64,
) -> Result<((u64, u64), Option<(u64, u64)>), CooError> {
    let at = size - TRAILER_LEN;
    let index_end = t.index_offset.checked_add(t.index_length);
    if index_end.is_none_or(|e| e > at) {
        return Err(corrupt(
            at,
            format!(
                "the index section (index_offset {}, index_length {}) runs past the trailer, \
                 which starts at byte {at}",
                t.index_offset, t.index_length
            ),
        ));
    }
    let index_end = t.index_offset + t.index_length;
    if !t.index_offset.is_multiple_of(SECTION_ALIGN) || t.index_offset < h.first_descriptor_offset {
        return Err(corrupt(
            at,
            format!(
                "index_offset {} must be a multiple of 8 at or after first_descriptor_offset {}",
                t.index_offset, h.first_descriptor_offset
            ),
        ));
    }
    if t.index_length < 8 {
        return Err(corrupt(
            at + 8,
            format!(
                "index_length is {}; the index holds at least its 8-byte entry count",
                t.index_length
            ),
        ));
    }
    let flagged = h.flags & file_flags::HAS_KV_METADATA != 0;
    let kv =
        match (t.kv_offset, t.kv_length) {
            (0, 0) if flagged => return Err(corrupt(
                at + 16,
                "HAS_KV_METADATA is set in file_flags, but the trailer's kv_offset and kv_length \
                 are 0",
            )),
            (0, 0) => None,
            // A KV section the trailer locates is read even when the header's
            // flag is clear: a one-pass writer (the reference implementation's)
            // cannot set a header flag once it learns it has metadata.
            // (An end past 2^64 is refused below as past the index.)
            (off, len) if off != 0 && len != 0 => Some((off, off.saturating_add(u64::from(len)))),
            (off, len) => {
                return Err(corrupt(
                    at + 16,
                    format!(
                        "kv_offset is {off} and kv_length is {len}: both are 0 (no KV section) or \
                     neither is"
                    ),
                ))
            }
        };
    if let Some((a, b)) = kv {
        if a % SECTION_ALIGN != 0
            || a < h.first_descriptor_offset
            || b > t.index_offset
            || b - a < 4
        {
            return Err(corrupt(
                at + 16,
                format!(
                    "the KV section (kv_offset {a}, kv_length {}) must start at a multiple of 8 \
                     at or after first_descriptor_offset {}, hold at least its 4-byte count and \
                     end by index_offset {}",
                    b - a,
                    h.first_descriptor_offset,
                    t.index_offset
                ),
            ));
        }
    }
    Ok(((t.index_offset, index_end), kv))
}

/// Check one index entry against the file: its descriptor and data inside
/// the tensor region, aligned, and the descriptor's own header agreeing.
fn place_tensor(
    bytes: &[u8],
    h: &Header,
    region_end: u64,
    entry: IndexEntry,
    entry_at: u64,
) -> Result<TensorEntry, CooError> {
    let name = &entry.name;
    let d = entry.descriptor_offset;
    let at_field = |rel: u64| entry_at + 2 + name.len() as u64 + rel;
    let desc_end = d.checked_add(u64::from(entry.descriptor_length));
    if !d.is_multiple_of(SECTION_ALIGN)
        || d < h.first_descriptor_offset
        || desc_end.is_none_or(|e| e > region_end)
        || (entry.descriptor_length as usize) < descriptor::FIXED_HEADER_LEN
    {
        return Err(corrupt(
            at_field(field::DESCRIPTOR_OFFSET),
            format!(
                "tensor {name:?}: its descriptor (descriptor_offset {d}, descriptor_length {}) \
                 must start at a multiple of 8 from first_descriptor_offset {}, be at least 20 \
                 bytes and end by byte {region_end}, where the tensor region ends",
                entry.descriptor_length, h.first_descriptor_offset
            ),
        ));
    }
    let desc_end = d + u64::from(entry.descriptor_length);
    let peek =
        descriptor::peek(&bytes[d as usize..desc_end as usize]).map_err(|e| CooError::InFile {
            context: format!("tensor {name:?} (descriptor at byte {d})"),
            inner: Box::new(e),
        })?;
    if peek.length != entry.descriptor_length {
        return Err(corrupt(
            at_field(field::DESCRIPTOR_LENGTH),
            format!(
                "tensor {name:?}: the index says its descriptor is {} bytes, the descriptor at \
                 byte {d} says {}",
                entry.descriptor_length, peek.length
            ),
        ));
    }
    let data_end = entry.data_offset.checked_add(entry.data_length);
    if entry.data_offset < desc_end || data_end.is_none_or(|e| e > region_end) {
        return Err(corrupt(
            at_field(field::DATA_OFFSET),
            format!(
                "tensor {name:?}: its data (data_offset {}, data_length {}) must start after its \
                 descriptor ends (byte {desc_end}) and end by byte {region_end}, where the tensor \
                 region ends",
                entry.data_offset, entry.data_length
            ),
        ));
    }
    // A composite head has no buffers and so no aligned data region.
    if peek.layout_tag != LAYOUT_COMPOSITE
        && !entry.data_offset.is_multiple_of(u64::from(h.alignment))
    {
        return Err(CooError::Container {
            status: Status::Misaligned,
            offset: at_field(field::DATA_OFFSET),
            msg: format!(
                "tensor {name:?}: data_offset {} is not a multiple of the file's \
                 data_buffer_alignment {}",
                entry.data_offset, h.alignment
            ),
        });
    }
    Ok(TensorEntry {
        entry,
        entry_at,
        type_tag: peek.type_tag,
        layout_tag: peek.layout_tag,
        rank: peek.rank,
        shape: peek.shape,
        nnz: peek.nnz,
        version_major: peek.version_major,
        version_minor: peek.version_minor,
        member_count: peek.member_count,
    })
}

/// The tensor region: tensors do not overlap, the first starts at
/// first_descriptor_offset, every byte between them is zero padding, and
/// every composite head is followed by all of its members.
fn check_region(
    bytes: &[u8],
    h: &Header,
    tensors: &[TensorEntry],
    region_end: u64,
) -> Result<(), CooError> {
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_unstable_by_key(|&i| tensors[i].entry.descriptor_offset);
    let extent = |t: &TensorEntry| {
        let e = &t.entry;
        (
            e.descriptor_offset,
            (e.descriptor_offset + u64::from(e.descriptor_length))
                .max(e.data_offset + e.data_length),
        )
    };
    if let Some(&first) = order.first() {
        let t = &tensors[first];
        if t.entry.descriptor_offset != h.first_descriptor_offset {
            return Err(corrupt(
                h.first_descriptor_offset,
                format!(
                    "first_descriptor_offset is {}, but the first tensor ({:?}) starts at byte {}",
                    h.first_descriptor_offset, t.entry.name, t.entry.descriptor_offset
                ),
            ));
        }
    }
    zero_padding(
        bytes,
        HEADER_LEN,
        h.first_descriptor_offset,
        "after the header",
    )?;
    let mut prev: Option<(&TensorEntry, u64)> = None;
    for &i in &order {
        let t = &tensors[i];
        let (start, end) = extent(t);
        if let Some((p, p_end)) = prev {
            if start < p_end {
                return Err(corrupt(
                    start,
                    format!(
                        "tensor {:?} starts here, inside tensor {:?} (bytes {} to {p_end}): \
                         tensors overlap",
                        t.entry.name, p.entry.name, p.entry.descriptor_offset
                    ),
                ));
            }
            zero_padding(
                bytes,
                p_end,
                start,
                &format!("between tensors {:?} and {:?}", p.entry.name, t.entry.name),
            )?;
        }
        prev = Some((t, end));
    }
    if let Some((p, p_end)) = prev {
        zero_padding(
            bytes,
            p_end,
            region_end,
            &format!("after the last tensor, {:?}", p.entry.name),
        )?;
    } else {
        zero_padding(
            bytes,
            h.first_descriptor_offset,
            region_end,
            "an empty tensor region",
        )?;
    }
    // Composite heads: the next member_count tensors in file order are
    // theirs (pre-order for nested heads); fewer is a torn composite.
    let mut need: Vec<(usize, u64)> = Vec::new();
    for &i in &order {
        if let Some(top) = need.last_mut() {
            top.1 -= 1;
        }
        while need.last().is_some_and(|top| top.1 == 0) {
            need.pop();
        }
        if let Some(n) = tensors[i].member_count.filter(|&n| n > 0) {
            need.push((i, u64::from(n)));
        }
    }
    if let Some(&(i, left)) = need.first() {
        let t = &tensors[i];
        return Err(corrupt(
            t.entry.descriptor_offset,
            format!(
                "composite head {:?} declares {} members, but only {} tensors follow it in the \
                 file: the composite is torn",
                t.entry.name,
                t.member_count.unwrap_or(0),
                u64::from(t.member_count.unwrap_or(0)) - left
            ),
        ));
    }
    Ok(())
}
