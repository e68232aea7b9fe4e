//! The Hurray tensor descriptor, for the COO layout: a strict reader that
//! never reads past the bytes given or past `descriptor_length`, and a writer
//! that produces the reference implementation's bytes.

mod read;
mod write;

pub use read::{parse, peek, Peek};
pub use write::{encode, encoded_len, encoded_len_of, StatsChoice};

use crate::element::size::MAX_RANK;
use crate::error::CooError;
use crate::io::stats::Statistics;

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
/// The composite (head) layout tag.
pub const LAYOUT_COMPOSITE: u8 = 0x0B;
/// COO layout fields: nnz, is_sorted, 7 reserved bytes.
const COO_FIELDS_LEN: usize = 16;
const HANDLE_LEN: usize = 16;
const STATISTICS_LEN: usize = 72;
const COMPOSITE_MEMBER_LEN: usize = 16;
/// The longest descriptor this library writes: rank 64 with a shard
/// section and statistics.
pub const MAX_WRITTEN_LEN: usize = FIXED_HEADER_LEN
    + 16 * MAX_RANK as usize
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
pub use crate::shard::ShardBox as Shard;

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
    /// The extension-type section (private type tags only).
    pub extension: Option<ExtensionType>,
    /// The composite-member section's `member_role` (0 correction, 1 base).
    pub composite_role: Option<u8>,
}

/// What an extension-type section says about a private type: enough to
/// size its values buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtensionType {
    pub bit_width: u32,
    pub packing_factor: u8,
}

const BUFFER_NAMES: [&str; 2] = ["buffer 0 (values)", "buffer 1 (indices)"];

pub fn layout_name(tag: u8) -> &'static str {
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

fn memory_class_name(class: u8) -> &'static str {
    match class {
        0 => "standard",
        1 => "host-pinned",
        2 => "unified",
        3 => "peer",
        _ => "undefined",
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
