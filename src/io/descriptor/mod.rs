//! The Hurray tensor descriptor, for the COO layout: a strict reader that
//! never reads past the bytes given or past `descriptor_length`, and a writer
//! that produces the reference implementation's bytes.

use crate::coo::{check_rank, Coo};
use crate::element::size::{BUFFER_ALIGN, DYNAMIC_DIM, MAX_RANK};
use crate::element::types::TagClass;
use crate::error::CooError;
use crate::io::stats::{self, mask, Statistics};

/// "HRRY".
pub const MAGIC: [u8; 4] = *b"HRRY";
/// The major version this library reads and writes.
pub const VERSION_MAJOR: u8 = 1;
/// The minor version this library writes.
pub const VERSION_MINOR: u8 = 0;
/// Length of the fixed header.
pub const FIXED_HEADER_LEN: usize = 20;
/// The COO layout tag.
pub const LAYOUT_COO: u8 = 0x06;
/// COO layout fields: nnz, is_sorted, 7 reserved bytes.
const COO_FIELDS_LEN: usize = 16;
const HANDLE_LEN: usize = 16;
const STATISTICS_LEN: usize = 72;
const EXTENSION_TYPE_LEN: usize = 20;
const COMPOSITE_MEMBER_LEN: usize = 16;
/// The longest descriptor this library writes: rank 64 with statistics.
pub const MAX_WRITTEN_LEN: usize = FIXED_HEADER_LEN
    + 8 * MAX_RANK as usize
    + 8
    + COO_FIELDS_LEN
    + 1
    + 2 * HANDLE_LEN
    + STATISTICS_LEN;

/// Descriptor `flags` bits.
pub mod flags {
    pub const HAS_QUANTIZATION: u32 = 1 << 0;
    pub const HAS_SHARD: u32 = 1 << 1;
    pub const HAS_EXTENSION_TYPE: u32 = 1 << 2;
    pub const HAS_STATISTICS: u32 = 1 << 3;
    pub const HAS_COMPOSITE_MEMBER: u32 = 1 << 4;
    pub const KNOWN: u32 = (1 << 5) - 1;
}

/// One buffer handle of the buffer table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferDecl {
    pub byte_size: u64,
    pub alignment: u32,
    pub device_tag: u8,
    pub sync_mode: u8,
    pub memory_class: u8,
}

/// A shard section: this tensor is the block at `offset` of a parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    pub parent_shape: Vec<u64>,
    pub offset: Vec<u64>,
}

/// A parsed, checked COO descriptor.
#[derive(Clone, Debug, PartialEq)]
pub struct Descriptor {
    pub version_major: u8,
    pub version_minor: u8,
    /// `descriptor_length`.
    pub length: u32,
    pub flags: u32,
    pub type_tag: u8,
    pub shape: Vec<u64>,
    pub nnz: u64,
    pub is_sorted: bool,
    /// Buffer 0 (values) and buffer 1 (indices).
    pub buffers: [BufferDecl; 2],
    /// Length of a skipped quantization section (permissive mode only).
    pub quantization_len: Option<u32>,
    pub shard: Option<Shard>,
    pub statistics: Option<Statistics>,
}

const BUFFER_NAMES: [&str; 2] = ["buffer 0 (values)", "buffer 1 (indices)"];

fn layout_name(tag: u8) -> &'static str {
    match tag {
        0x01 => "row-major",
        0x02 => "column-major",
        0x03 => "strided",
        0x04 => "tiled",
        0x05 => "Morton",
        0x06 => "COO",
        0x07 => "CSR",
        0x08 => "CSC",
        0x09 => "CSF",
        0x0A => "block-paged",
        0x0B => "composite",
        0x40 => "Hilbert",
        0xF0..=0xFE => "an extension layout",
        _ => "an unknown layout",
    }
}

fn device_name(tag: u8) -> &'static str {
    match tag {
        0x00 => "CPU",
        0x01 => "CUDA",
        0x02 => "ROCm",
        0x03 => "Metal",
        0x04 => "Vulkan",
        0x05 => "WebGPU",
        0x06 => "Hexagon",
        0x07 => "Level Zero",
        0x08 => "OpenCL",
        0xF0..=0xFE => "a private device",
        _ => "an unknown device",
    }
}

/// Bounds-checked little-endian reads over `buf` (already limited to
/// `descriptor_length`).
struct Reader<'b> {
    buf: &'b [u8],
    pos: usize,
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize, field: &'static str) -> Result<&'b [u8], CooError> {
        let available = self.buf.len() - self.pos;
        if n > available {
            return Err(CooError::Truncated {
                field,
                offset: self.pos,
                needed: n,
                available,
            });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self, field: &'static str) -> Result<u8, CooError> {
        Ok(self.take(1, field)?[0])
    }

    fn u32(&mut self, field: &'static str) -> Result<u32, CooError> {
        let b = self.take(4, field)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, field: &'static str) -> Result<u64, CooError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8, field)?);
        Ok(u64::from_le_bytes(a))
    }

    fn f64(&mut self, field: &'static str) -> Result<f64, CooError> {
        Ok(f64::from_bits(self.u64(field)?))
    }

    fn u64s(&mut self, n: u32, field: &'static str) -> Result<Vec<u64>, CooError> {
        let mut v = Vec::new();
        v.try_reserve_exact(n as usize)
            .map_err(|_| CooError::Alloc {
                bytes: n as usize * 8,
                what: "descriptor fields",
            })?;
        for _ in 0..n {
            v.push(self.u64(field)?);
        }
        Ok(v)
    }

    fn zeros(&mut self, n: usize, field: &'static str) -> Result<(), CooError> {
        let offset = self.pos;
        if let Some(k) = self.take(n, field)?.iter().position(|&b| b != 0) {
            return Err(CooError::Reserved(format!(
                "{field}: reserved byte at descriptor offset {} is 0x{:02X}, must be 0",
                offset + k,
                self.buf[offset + k]
            )));
        }
        Ok(())
    }
}

fn parse_handle(r: &mut Reader<'_>, k: usize) -> Result<BufferDecl, CooError> {
    let name = BUFFER_NAMES[k];
    let h = BufferDecl {
        byte_size: r.u64("buffer handle byte_size")?,
        alignment: r.u32("buffer handle alignment")?,
        device_tag: r.u8("buffer handle device_tag")?,
        sync_mode: r.u8("buffer handle sync_mode")?,
        memory_class: r.u8("buffer handle memory_class")?,
    };
    r.zeros(1, "buffer handle _reserved")?;
    let a = h.alignment;
    if !a.is_power_of_two() || (h.byte_size > 0 && (a as usize) < BUFFER_ALIGN) {
        return Err(CooError::BufferHandle(format!(
            "{name} declares alignment {a}: it must be a power of two, at least 64 for a \
             non-empty buffer"
        )));
    }
    match h.device_tag {
        0x00 => {}
        0x01..=0x08 | 0xF0..=0xFE => {
            return Err(CooError::Device(format!(
                "{name} is on {} (device tag 0x{:02X}); this library reads host (CPU, 0x00) \
                 memory only: copy the buffers to the host first",
                device_name(h.device_tag),
                h.device_tag
            )))
        }
        t => {
            return Err(CooError::BufferHandle(format!(
                "{name} has device tag 0x{t:02X}, which is {}",
                if t == 0xFF { "invalid" } else { "reserved" }
            )))
        }
    }
    match h.sync_mode {
        0 => {}
        1 | 2 => {
            return Err(CooError::Unsupported(format!(
                "{name} declares sync mode {} ({}); a host buffer must be producer-synced (0)",
                h.sync_mode,
                if h.sync_mode == 1 {
                    "event"
                } else {
                    "consumer-stream"
                }
            )))
        }
        m => {
            return Err(CooError::SyncMode(format!(
                "{name} has sync mode {m}, which is not defined (0 producer-synced, 1 event, \
                 2 consumer-stream)"
            )))
        }
    }
    match h.memory_class {
        0..=2 => {}
        3 => {
            return Err(CooError::BufferHandle(format!(
                "{name} is a CPU buffer with memory class 3 (peer), which CPU buffers cannot have"
            )))
        }
        c => {
            return Err(CooError::BufferHandle(format!(
                "{name} has memory class {c}, which is not defined (0 standard, 1 host-pinned, \
                 2 unified, 3 peer)"
            )))
        }
    }
    Ok(h)
}

fn parse_statistics(r: &mut Reader<'_>, nnz: u64) -> Result<Statistics, CooError> {
    let computed_mask = r.u32("statistics computed_mask")?;
    if computed_mask & !mask::ALL != 0 {
        return Err(CooError::Statistics(format!(
            "statistics computed_mask 0x{computed_mask:08X} has reserved bits 0x{:08X} set",
            computed_mask & !mask::ALL
        )));
    }
    r.zeros(4, "statistics _reserved")?;
    let mut s = Statistics {
        computed_mask,
        nnz: r.u64("statistics nnz")?,
        sparsity_ratio: r.f64("statistics sparsity_ratio")?,
        value_min: r.f64("statistics value_min")?,
        value_max: r.f64("statistics value_max")?,
        value_abs_max: r.f64("statistics value_abs_max")?,
        value_mean: r.f64("statistics value_mean")?,
        value_stddev: r.f64("statistics value_stddev")?,
        nm_n: r.u8("statistics nm_n")?,
        nm_m: r.u8("statistics nm_m")?,
        ..Statistics::default()
    };
    s.has_nan = r.u8("statistics has_nan")? != 0;
    s.has_inf = r.u8("statistics has_inf")? != 0;
    r.zeros(4, "statistics _reserved2")?;
    if computed_mask & mask::NNZ != 0 && s.nnz != nnz {
        return Err(CooError::Statistics(format!(
            "statistics nnz {} differs from the COO layout's nnz {nnz}, which is authoritative",
            s.nnz
        )));
    }
    Ok(s)
}

/// Parse and check a COO descriptor. In permissive mode unknown type tags
/// and a quantization section (skipped) are accepted.
pub fn parse(bytes: &[u8], permissive: bool) -> Result<Descriptor, CooError> {
    let mut r = Reader { buf: bytes, pos: 0 };
    let magic = r.take(4, "magic")?;
    if magic != MAGIC {
        let mut got = [0u8; 4];
        got.copy_from_slice(magic);
        return Err(CooError::InvalidMagic { got });
    }
    let version_major = r.u8("version_major")?;
    let version_minor = r.u8("version_minor")?;
    if version_major != VERSION_MAJOR {
        return Err(CooError::UnsupportedVersion {
            major: version_major,
            minor: version_minor,
        });
    }
    let length = r.u32("descriptor_length")?;
    if (length as usize) < FIXED_HEADER_LEN {
        return Err(CooError::Layout(format!(
            "descriptor_length {length} is below the 20-byte fixed header"
        )));
    }
    if length as usize > bytes.len() {
        return Err(CooError::Truncated {
            field: "the descriptor (descriptor_length)",
            offset: 0,
            needed: length as usize,
            available: bytes.len(),
        });
    }
    // Never read past descriptor_length.
    r.buf = &bytes[..length as usize];

    let flags = r.u32("flags")?;
    if flags & !flags::KNOWN != 0 {
        return Err(CooError::Reserved(format!(
            "descriptor flags 0x{flags:08X} have reserved bits 0x{:08X} set",
            flags & !flags::KNOWN
        )));
    }
    let type_tag = r.u8("type_tag")?;
    let class = TagClass::of(type_tag);
    match class {
        TagClass::Known(_) => {}
        TagClass::Invalid => {
            return Err(CooError::InvalidType {
                tag: type_tag,
                class,
                hint: "",
            })
        }
        _ if permissive => {}
        _ => {
            return Err(CooError::InvalidType {
                tag: type_tag,
                class,
                hint: "; HURRAY_COO_PERMISSIVE accepts it without interpreting the values",
            })
        }
    }
    let private = class == TagClass::Private;
    if private != (flags & flags::HAS_EXTENSION_TYPE != 0) {
        return Err(CooError::Layout(format!(
            "HAS_EXTENSION_TYPE is {} but type tag 0x{type_tag:02X} is {} the private range \
             0xF0-0xFE; the flag must be set exactly for private types",
            if private { "clear" } else { "set" },
            if private { "in" } else { "outside" }
        )));
    }
    let layout_tag = r.u8("layout_tag")?;
    if layout_tag != LAYOUT_COO {
        return Err(CooError::Layout(format!(
            "layout tag 0x{layout_tag:02X} is {}, not COO (0x06); this library reads COO \
             descriptors only",
            layout_name(layout_tag)
        )));
    }
    let rank = r.u32("rank")?;
    check_rank(rank)?;
    let shape = r.u64s(rank, "shape")?;
    if let Some(dim) = shape.iter().position(|&d| d == DYNAMIC_DIM) {
        return Err(CooError::DynamicDimension { dim });
    }
    let byte_offset = r.u64("byte_offset")?;
    if byte_offset != 0 {
        return Err(CooError::Layout(format!(
            "byte_offset is {byte_offset}; it must be 0 for COO"
        )));
    }
    let nnz = r.u64("COO nnz")?;
    let is_sorted = match r.u8("COO is_sorted")? {
        0 => false,
        1 => true,
        b => {
            return Err(CooError::Layout(format!(
                "COO is_sorted is 0x{b:02X}; it must be 0x00 or 0x01"
            )))
        }
    };
    r.zeros(7, "COO _reserved")?;
    let count = r.u8("buffer_count")?;
    if count != 2 {
        return Err(CooError::Layout(format!(
            "buffer_count is {count}; a COO descriptor must have exactly 2 buffers (values, indices)"
        )));
    }
    let buffers = [parse_handle(&mut r, 0)?, parse_handle(&mut r, 1)?];

    let mut quantization_len = None;
    if flags & flags::HAS_QUANTIZATION != 0 {
        if !permissive {
            return Err(CooError::Unsupported(
                "the descriptor has a quantization section, which this library does not apply; \
                 HURRAY_COO_PERMISSIVE skips it (values are then the stored, quantized values)"
                    .into(),
            ));
        }
        let len = r.u32("quantization_length")?;
        r.take(len as usize, "quantization descriptor")?;
        quantization_len = Some(len);
    }
    let shard = if flags & flags::HAS_SHARD != 0 {
        let parent_shape = r.u64s(rank, "shard parent_shape")?;
        let offset = r.u64s(rank, "shard offset")?;
        for k in 0..rank as usize {
            let end = offset[k].checked_add(shape[k]);
            if end.is_none_or(|e| e > parent_shape[k]) || parent_shape[k] == DYNAMIC_DIM {
                return Err(CooError::Shard(format!(
                    "shard dimension {k}: offset {} + extent {} exceeds parent extent {}",
                    offset[k], shape[k], parent_shape[k]
                )));
            }
        }
        Some(Shard {
            parent_shape,
            offset,
        })
    } else {
        None
    };
    let statistics = if flags & flags::HAS_STATISTICS != 0 {
        Some(parse_statistics(&mut r, nnz)?)
    } else {
        None
    };
    if flags & flags::HAS_EXTENSION_TYPE != 0 {
        r.take(EXTENSION_TYPE_LEN, "extension type section")?;
    }
    if flags & flags::HAS_COMPOSITE_MEMBER != 0 {
        r.take(COMPOSITE_MEMBER_LEN, "composite member section")?;
    }
    // Minor versions this library knows must end exactly at descriptor_length;
    // later ones may carry trailing bytes, which are skipped. (`<=`, not `==`,
    // so that this stays right when VERSION_MINOR moves.)
    #[allow(clippy::absurd_extreme_comparisons)]
    let known_minor = version_minor <= VERSION_MINOR;
    if known_minor && r.pos != length as usize {
        return Err(CooError::Layout(format!(
            "descriptor_length is {length} but a version 1.{version_minor} COO descriptor with \
             these flags ends at byte {}",
            r.pos
        )));
    }
    Ok(Descriptor {
        version_major,
        version_minor,
        length,
        flags,
        type_tag,
        shape,
        nnz,
        is_sorted,
        buffers,
        quantization_len,
        shard,
        statistics,
    })
}

/// Which statistics section the writer emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsChoice {
    /// None.
    None,
    /// `nnz` and `sparsity_ratio` only (as the reference implementation does).
    Counts,
    /// Everything `stats::compute` finds meaningful for the type.
    Full,
}

/// The length of the descriptor `encode` writes.
pub fn encoded_len(rank: u32, stats: StatsChoice) -> usize {
    FIXED_HEADER_LEN
        + 8 * rank as usize
        + 8
        + COO_FIELDS_LEN
        + 1
        + 2 * HANDLE_LEN
        + if stats == StatsChoice::None {
            0
        } else {
            STATISTICS_LEN
        }
}

/// Bounded little-endian writes into `out` (sized by the caller).
struct Writer<'o> {
    out: &'o mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn put(&mut self, b: &[u8]) {
        self.out[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }
}

/// Write the descriptor of `coo` into `out`, returning its length. A
/// permissive handle is validated first (a conforming writer emits only
/// valid tensors); unknown type tags cannot be described.
pub fn encode(coo: &Coo<'_>, stats: StatsChoice, out: &mut [u8]) -> Result<usize, CooError> {
    let need = encoded_len(coo.rank(), stats);
    if out.len() < need {
        return Err(CooError::BufferTooSmall {
            what: "the descriptor output buffer",
            got: out.len(),
            needed: need,
        });
    }
    if coo.type_info().is_none() {
        return Err(CooError::UnsupportedType {
            what: "encode_descriptor",
            tag: coo.type_tag(),
            name: "unknown",
            reason: "was accepted in permissive mode only and cannot be described to other readers",
        });
    }
    if coo.is_permissive() {
        coo.validate()?;
    }
    let section = match stats {
        StatsChoice::None => None,
        StatsChoice::Counts => Some(stats::counts(coo)),
        StatsChoice::Full => Some(stats::compute(coo)),
    };
    let mut w = Writer { out, pos: 0 };
    w.put(&MAGIC);
    w.put(&[VERSION_MAJOR, VERSION_MINOR]);
    w.put(&(need as u32).to_le_bytes());
    let f = if section.is_some() {
        flags::HAS_STATISTICS
    } else {
        0
    };
    w.put(&f.to_le_bytes());
    w.put(&[coo.type_tag(), LAYOUT_COO]);
    w.put(&coo.rank().to_le_bytes());
    for d in coo.shape() {
        w.put(&d.to_le_bytes());
    }
    w.put(&0u64.to_le_bytes()); // byte_offset
    w.put(&coo.nnz().to_le_bytes());
    w.put(&[u8::from(coo.is_sorted()), 0, 0, 0, 0, 0, 0, 0]);
    w.put(&[2]);
    for len in [coo.values().len(), coo.indices_bytes().len()] {
        // Non-empty buffers are 64-byte aligned (checked or copied); an empty
        // one has no address to align, so it declares 1.
        let alignment: u32 = if len == 0 { 1 } else { BUFFER_ALIGN as u32 };
        w.put(&(len as u64).to_le_bytes());
        w.put(&alignment.to_le_bytes());
        w.put(&[0, 0, 0, 0]); // CPU, producer-synced, standard, reserved
    }
    if let Some(s) = section {
        w.put(&s.computed_mask.to_le_bytes());
        w.put(&[0; 4]);
        w.put(&s.nnz.to_le_bytes());
        for v in [
            s.sparsity_ratio,
            s.value_min,
            s.value_max,
            s.value_abs_max,
            s.value_mean,
            s.value_stddev,
        ] {
            w.put(&v.to_bits().to_le_bytes());
        }
        w.put(&[
            s.nm_n,
            s.nm_m,
            u8::from(s.has_nan),
            u8::from(s.has_inf),
            0,
            0,
            0,
            0,
        ]);
    }
    debug_assert_eq!(w.pos, need);
    Ok(w.pos)
}

/// Check that the buffers a caller passes have the byte sizes `desc`
/// declares.
pub fn check_declared_sizes(
    desc: &Descriptor,
    values_bytes: usize,
    indices_bytes: usize,
) -> Result<(), CooError> {
    for (k, passed) in [values_bytes, indices_bytes].into_iter().enumerate() {
        let declared = desc.buffers[k].byte_size;
        if passed as u64 != declared {
            return Err(CooError::BufferSize {
                buffer: ["values", "indices"][k],
                got: passed as u64,
                expected: declared,
                expected_why: "the descriptor's declared byte_size".into(),
            });
        }
    }
    Ok(())
}
