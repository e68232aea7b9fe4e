//! The descriptor reader, one function per part of the wire format, in wire
//! order, so that the first problem reported is the first in the bytes
//! (except the declared buffer sizes, checked once every field is read).

use super::*;
use crate::coo::check_rank;
use crate::element::size::{self, BUFFER_ALIGN, DYNAMIC_DIM};
use crate::element::types::TagClass;
use crate::error::CooError;
use crate::io::stats::{mask, Statistics};

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
        // Device buffers were refused above, so this is a CPU buffer, which
        // the spec requires to be producer-synced (buffer-protocol.md).
        1 | 2 => {
            return Err(CooError::SyncMode(format!(
                "{name} is a CPU buffer with sync mode {} ({}); a CPU buffer must be \
                 producer-synced (0)",
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
    // metadata.md: value_stddev MUST be >= 0.0 and nm_n <= nm_m, when valid.
    if computed_mask & mask::VALUE_STATS != 0 && s.value_stddev.is_sign_negative() {
        return Err(CooError::Statistics(format!(
            "statistics value_stddev is {}; a standard deviation must be >= 0.0",
            s.value_stddev
        )));
    }
    if computed_mask & mask::NM_SPARSITY != 0 && s.nm_n > s.nm_m {
        return Err(CooError::Statistics(format!(
            "statistics N:M pattern {}:{} has nm_n > nm_m",
            s.nm_n, s.nm_m
        )));
    }
    Ok(s)
}

/// The fixed header: magic, versions, `descriptor_length`, flags. Returns a
/// reader limited to `descriptor_length` (nothing past it is ever read).
fn fixed_header(bytes: &[u8]) -> Result<(Reader<'_>, Header), CooError> {
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
    r.buf = &bytes[..length as usize];
    let flags = r.u32("flags")?;
    if flags & !flags::KNOWN != 0 {
        return Err(CooError::Reserved(format!(
            "descriptor flags 0x{flags:08X} have reserved bits 0x{:08X} set",
            flags & !flags::KNOWN
        )));
    }
    let header = Header {
        version_major,
        version_minor,
        length,
        flags,
    };
    Ok((r, header))
}

struct Header {
    version_major: u8,
    version_minor: u8,
    length: u32,
    flags: u32,
}

/// The type tag, and HAS_EXTENSION_TYPE set exactly for private tags.
fn element_type(r: &mut Reader<'_>, flags: u32, permissive: bool) -> Result<u8, CooError> {
    let type_tag = r.u8("type_tag")?;
    let class = TagClass::of(type_tag);
    match class {
        TagClass::Known(_) => {}
        TagClass::Invalid => {
            return Err(CooError::InvalidType {
                tag: type_tag,
                class: class.describe(),
                hint: "",
            })
        }
        _ if permissive => {}
        _ => {
            return Err(CooError::InvalidType {
                tag: type_tag,
                class: class.describe(),
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
    Ok(type_tag)
}

/// Layout tag, rank, shape, byte_offset and the COO fields.
fn layout_fields(r: &mut Reader<'_>) -> Result<(Vec<u64>, u64, bool), CooError> {
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
    Ok((shape, nnz, is_sorted))
}

/// `buffer_count` 2, both handles, and device colocation: every buffer of
/// one descriptor on the same device with the same memory class
/// (buffer-protocol.md, Device Colocation).
fn buffer_table(r: &mut Reader<'_>) -> Result<[BufferDecl; 2], CooError> {
    let count = r.u8("buffer_count")?;
    if count != 2 {
        return Err(CooError::Layout(format!(
            "buffer_count is {count}; a COO descriptor must have exactly 2 buffers (values, indices)"
        )));
    }
    let buffers = [parse_handle(r, 0)?, parse_handle(r, 1)?];
    let [a, b] = &buffers;
    if (a.device_tag, a.memory_class) != (b.device_tag, b.memory_class) {
        return Err(CooError::BufferHandle(format!(
            "{} has device tag 0x{:02X} and memory class {} ({}) but {} has device tag \
             0x{:02X} and memory class {} ({}): all buffers of one descriptor must share \
             device tag and memory class",
            BUFFER_NAMES[1],
            b.device_tag,
            b.memory_class,
            memory_class_name(b.memory_class),
            BUFFER_NAMES[0],
            a.device_tag,
            a.memory_class,
            memory_class_name(a.memory_class),
        )));
    }
    Ok(buffers)
}

/// The optional sections, in wire order: quantization, shard, statistics,
/// extension type, composite member.
fn optional_sections(
    r: &mut Reader<'_>,
    flags: u32,
    shape: &[u64],
    nnz: u64,
    permissive: bool,
) -> Result<Sections, CooError> {
    let mut s = Sections::default();
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
        s.quantization_len = Some(len);
    }
    if flags & flags::HAS_SHARD != 0 {
        s.shard = Some(parse_shard(r, shape)?);
    }
    if flags & flags::HAS_STATISTICS != 0 {
        s.statistics = Some(parse_statistics(r, nnz)?);
    }
    if flags & flags::HAS_EXTENSION_TYPE != 0 {
        s.extension = Some(parse_extension_type(r)?);
    }
    if flags & flags::HAS_COMPOSITE_MEMBER != 0 {
        s.composite_role = Some(parse_composite_member(r)?);
    }
    Ok(s)
}

#[derive(Default)]
struct Sections {
    quantization_len: Option<u32>,
    shard: Option<Shard>,
    statistics: Option<Statistics>,
    extension: Option<ExtensionType>,
    composite_role: Option<u8>,
}

fn parse_shard(r: &mut Reader<'_>, shape: &[u64]) -> Result<Shard, CooError> {
    let rank = shape.len() as u32;
    let b = Shard {
        parent_shape: r.u64s(rank, "shard parent_shape")?,
        offset: r.u64s(rank, "shard offset")?,
    };
    b.check(shape)?;
    Ok(b)
}

/// The extension-type section (metadata.md): every constraint on its
/// fields, so that the buffer size it implies can be trusted.
fn parse_extension_type(r: &mut Reader<'_>) -> Result<ExtensionType, CooError> {
    let bit_width = r.u32("extension bit_width")?;
    let packing_factor = r.u8("extension packing_factor")?;
    let is_float = r.u8("extension is_float")?;
    let is_signed = r.u8("extension is_signed")?;
    let sign_bits = r.u8("extension sign_bits")?;
    let exponent_bits = r.u8("extension exponent_bits")?;
    let mantissa_bits = r.u8("extension mantissa_bits")?;
    r.zeros(2, "extension _reserved")?;
    let exponent_bias = r.u32("extension exponent_bias")?;
    let _has_nan = r.u8("extension has_nan")?;
    let _has_inf = r.u8("extension has_inf")?;
    r.zeros(2, "extension _reserved2")?;
    let bad = |why: String| Err(CooError::ExtensionType(why));
    match bit_width {
        0 => return bad("bit_width is 0; it must be greater than 0".into()),
        1 | 2 | 4 if u32::from(packing_factor) != 8 / bit_width => {
            return bad(format!(
                "bit_width {bit_width} needs packing_factor {}, not {packing_factor}",
                8 / bit_width
            ))
        }
        1 | 2 | 4 => {}
        3 | 5 | 6 | 7 => {
            return bad(format!(
                "bit_width {bit_width} is a sub-byte width other than 1, 2 or 4, which extension \
                 types may not use"
            ))
        }
        w if w % 8 != 0 => {
            return bad(format!(
                "bit_width {w} is not a whole number of bytes (the buffer size is nnz * \
                 bit_width / 8)"
            ))
        }
        _ if packing_factor != 1 => {
            return bad(format!(
                "bit_width {bit_width} needs packing_factor 1, not {packing_factor}"
            ))
        }
        _ => {}
    }
    match is_float {
        0 if sign_bits | exponent_bits | mantissa_bits != 0 || exponent_bias != 0 => bad(format!(
            "an integer type (is_float 0) must have sign_bits, exponent_bits, mantissa_bits \
             and exponent_bias 0, not {sign_bits}, {exponent_bits}, {mantissa_bits}, \
             {exponent_bias}"
        )),
        0 if is_signed > 1 => bad(format!("is_signed is {is_signed}; it must be 0 or 1")),
        1 if is_signed != 0 => bad(format!(
            "a float type (is_float 1) must have is_signed 0, not {is_signed}"
        )),
        1 if sign_bits > 1 => bad(format!("sign_bits is {sign_bits}; it must be 0 or 1")),
        0 | 1 => Ok(ExtensionType {
            bit_width,
            packing_factor,
        }),
        f => bad(format!("is_float is {f}; it must be 0 or 1")),
    }
}

/// The composite-member section: `member_role` 0x00 (correction) or 0x01
/// (base), then 15 reserved zero bytes.
fn parse_composite_member(r: &mut Reader<'_>) -> Result<u8, CooError> {
    let at = r.pos;
    let role = r.u8("composite member_role")?;
    if role > 1 {
        return Err(CooError::Reserved(format!(
            "composite member_role at descriptor offset {at} is 0x{role:02X}, a reserved value; \
             it must be 0x00 (correction) or 0x01 (base)"
        )));
    }
    r.zeros(COMPOSITE_MEMBER_LEN - 1, "composite member _reserved")?;
    Ok(role)
}

/// A version 1.0 descriptor ends exactly at `descriptor_length`; a later
/// minor version may carry trailing bytes, which are skipped.
fn length_rule(r: &Reader<'_>, h: &Header) -> Result<(), CooError> {
    // `<=`, not `==`, so that this stays right when VERSION_MINOR moves.
    #[allow(clippy::absurd_extreme_comparisons)]
    let known_minor = h.version_minor <= VERSION_MINOR;
    if known_minor && r.pos != h.length as usize {
        return Err(CooError::Layout(format!(
            "descriptor_length is {} but a version 1.{} COO descriptor with these flags ends \
             at byte {}",
            h.length, h.version_minor, r.pos
        )));
    }
    Ok(())
}

/// Each declared `byte_size` against what type, nnz and rank require: the
/// indices always; the values for known types and for private types with an
/// extension-type section (its bit width and packing). Only an unknown
/// non-private tag, accepted in permissive mode, leaves the values size
/// unchecked (nothing says how wide its elements are).
fn buffer_sizes(
    type_tag: u8,
    extension: Option<&ExtensionType>,
    shape: &[u64],
    nnz: u64,
    buffers: &[BufferDecl; 2],
) -> Result<(), CooError> {
    let rank = shape.len() as u32;
    let values = match (TagClass::of(type_tag), extension) {
        (TagClass::Known(ty), _) => Some((
            size::values_bytes(ty, nnz)?,
            format!("nnz {nnz} of {}", ty.name()),
        )),
        (_, Some(x)) => Some((
            size::extension_values_bytes(x.bit_width, x.packing_factor, nnz)?,
            format!(
                "nnz {nnz} of the extension type (bit_width {}, packing_factor {})",
                x.bit_width, x.packing_factor
            ),
        )),
        _ => None,
    };
    let indices = (
        size::indices_bytes(nnz, rank)?,
        format!("nnz {nnz} x rank {rank} x 8"),
    );
    for (k, need) in [(0, values), (1, Some(indices))] {
        let Some((expected, why)) = need else {
            continue;
        };
        let got = buffers[k].byte_size;
        if got != expected {
            return Err(CooError::BufferSize {
                buffer: ["the declared values", "the declared indices"][k],
                got,
                expected,
                expected_why: why,
            });
        }
    }
    Ok(())
}

/// Parse and check a COO descriptor: every field, every section, every
/// declared size. In permissive mode unknown type tags and a quantization
/// section (skipped) are accepted; wire-format rules are never relaxed.
pub fn parse(bytes: &[u8], permissive: bool) -> Result<Descriptor, CooError> {
    let (mut r, h) = fixed_header(bytes)?;
    let type_tag = element_type(&mut r, h.flags, permissive)?;
    let (shape, nnz, is_sorted) = layout_fields(&mut r)?;
    let buffers = buffer_table(&mut r)?;
    let s = optional_sections(&mut r, h.flags, &shape, nnz, permissive)?;
    length_rule(&r, &h)?;
    buffer_sizes(type_tag, s.extension.as_ref(), &shape, nnz, &buffers)?;
    Ok(Descriptor {
        version_major: h.version_major,
        version_minor: h.version_minor,
        length: h.length,
        flags: h.flags,
        type_tag,
        shape,
        nnz,
        is_sorted,
        buffers,
        quantization_len: s.quantization_len,
        shard: s.shard,
        statistics: s.statistics,
        extension: s.extension,
        composite_role: s.composite_role,
    })
}

/// What a descriptor of any layout says about itself in its first bytes:
/// enough to list a file's tensors without reading layouts this library
/// does not implement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peek {
    pub version_major: u8,
    pub version_minor: u8,
    /// `descriptor_length`.
    pub length: u32,
    pub type_tag: u8,
    pub layout_tag: u8,
    pub rank: u32,
    /// Empty when the rank is above 64 or the shape is cut short.
    pub shape: Vec<u64>,
    /// The COO layout's nnz.
    pub nnz: Option<u64>,
    /// A composite head's member_count.
    pub member_count: Option<u32>,
}

/// Read the common header of a descriptor of any layout. Only the magic
/// and a length that fits `bytes` are required; a major version other than
/// 1 is reported with layout tag 0 (nothing after the length is read).
pub fn peek(bytes: &[u8]) -> Result<Peek, CooError> {
    let mut r = Reader { buf: bytes, pos: 0 };
    let magic = r.take(4, "magic")?;
    if magic != MAGIC {
        let mut got = [0u8; 4];
        got.copy_from_slice(magic);
        return Err(CooError::InvalidMagic { got });
    }
    let version_major = r.u8("version_major")?;
    let version_minor = r.u8("version_minor")?;
    let length = r.u32("descriptor_length")?;
    let mut p = Peek {
        version_major,
        version_minor,
        length,
        type_tag: 0,
        layout_tag: 0,
        rank: 0,
        shape: Vec::new(),
        nnz: None,
        member_count: None,
    };
    if version_major != VERSION_MAJOR || (length as usize) < FIXED_HEADER_LEN {
        return Ok(p);
    }
    r.buf = &bytes[..(length as usize).min(bytes.len())];
    let _flags = r.u32("flags")?;
    p.type_tag = r.u8("type_tag")?;
    p.layout_tag = r.u8("layout_tag")?;
    p.rank = r.u32("rank")?;
    if p.rank > MAX_RANK {
        return Ok(p);
    }
    let (Ok(shape), Ok(_byte_offset)) = (r.u64s(p.rank, "shape"), r.u64("byte_offset")) else {
        return Ok(p);
    };
    p.shape = shape;
    if p.layout_tag == LAYOUT_COO {
        p.nnz = r.u64("COO nnz").ok();
    } else if p.layout_tag == LAYOUT_COMPOSITE {
        p.member_count = r
            .take(4, "composite head fields")
            .and(r.u32("member_count"))
            .ok();
    }
    Ok(p)
}
