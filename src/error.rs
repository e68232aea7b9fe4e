//! The core's error type. Each variant maps to exactly one [`Status`]; its
//! `Display` text is the message `hurray_last_error_message()` returns, so it
//! names the culprit (entry, dimension, values) and what to do instead.

use std::fmt;

use crate::status::Status;

/// A coordinate tuple, displayed as `(2, 0)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coords(pub Vec<u64>);

impl fmt::Display for Coords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (d, c) in self.0.iter().enumerate() {
            if d > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{c}")?;
        }
        f.write_str(")")
    }
}

impl From<&[u64]> for Coords {
    fn from(c: &[u64]) -> Self {
        Coords(c.to_vec())
    }
}

/// Where an error is, as fields a program can read beside the message (the
/// C API's `hurray_error_position`). Entry numbers, dimensions and
/// coordinates count from `base`, as the message does; lines and columns
/// of text files from 1; byte offsets from 0. `None`: the error has no such
/// place.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Position {
    pub base: u8,
    /// The entry of a tensor, the triplet of an assembly, or the query of a
    /// batch lookup that the error is about.
    pub entry: Option<u64>,
    /// The other entry or triplet: the one it duplicates, or the one it
    /// should come after.
    pub other_entry: Option<u64>,
    pub dim: Option<u64>,
    /// The offending coordinate (in `dim`), as written: negative for a
    /// signed triplet index below the base.
    pub coordinate: Option<i128>,
    /// The entry's coordinates.
    pub coordinates: Option<Vec<u64>>,
    /// The line of a text file (and the other line of a duplicate pair).
    pub line: Option<u64>,
    pub other_line: Option<u64>,
    /// The line's entry (or the other line's) is the mirror image of a
    /// symmetric file's stored entry.
    pub line_mirrored: bool,
    pub other_line_mirrored: bool,
    pub column: Option<u64>,
    /// The byte of a file, descriptor or buffer the message names.
    pub byte_offset: Option<u64>,
}

impl Position {
    /// The same place counted from 1: what a 1-based caller reads.
    fn one_based(mut self) -> Position {
        if self.base == 1 {
            return self;
        }
        let up = |x: &mut Option<u64>| *x = x.map(|v| v.wrapping_add(1));
        up(&mut self.entry);
        up(&mut self.other_entry);
        up(&mut self.dim);
        self.coordinate = self.coordinate.map(|c| c + 1);
        if let Some(c) = &mut self.coordinates {
            c.iter_mut().for_each(|x| *x = x.wrapping_add(1));
        }
        self.base = 1;
        self
    }
}

/// Everything that can go wrong, with the details a user needs to fix it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CooError {
    #[error("{what} is NULL{hint}")]
    NullPointer {
        what: &'static str,
        hint: &'static str,
    },

    #[error("flags 0x{flags:08X}: bits 0x{unknown:08X} are not accepted here; {allowed}")]
    InvalidFlags {
        flags: u32,
        unknown: u32,
        /// What the flags word may hold (built from its flag set).
        allowed: String,
    },

    #[error("type tag 0x{tag:02X} is {class}{hint}")]
    InvalidType {
        tag: u8,
        /// What the tag is (`TagClass::describe`).
        class: &'static str,
        hint: &'static str,
    },

    #[error("{what}: type tag 0x{tag:02X} ({name}) {reason}")]
    UnsupportedType {
        what: &'static str,
        tag: u8,
        name: &'static str,
        reason: &'static str,
    },

    #[error("rank {rank} is invalid for COO: it must be 1..=64{hint}")]
    InvalidRank { rank: u32, hint: &'static str },

    #[error("shape dimension {dim} is UINT64_MAX, the dynamic-dimension sentinel: a COO tensor needs every dimension resolved")]
    DynamicDimension { dim: usize },

    #[error("{buffer} buffer is {got} bytes but {expected_why} needs exactly {expected} bytes")]
    BufferSize {
        buffer: &'static str,
        got: u64,
        expected: u64,
        expected_why: String,
    },

    #[error("{buffer} buffer at address {addr:#x} is not 64-byte aligned (address mod 64 = {rem}); pass HURRAY_COO_COPY to let the library copy it into aligned memory, or allocate it 64-byte aligned")]
    Misaligned {
        buffer: &'static str,
        addr: usize,
        rem: usize,
    },

    #[error("size overflow: {what} does not fit")]
    Overflow { what: String },

    #[error("entry {entry} at {coords}: coordinate {coord} in dimension {dim} is out of bounds (shape[{dim}] = {extent})")]
    OutOfBounds {
        entry: u64,
        dim: usize,
        coord: u64,
        extent: u64,
        coords: Coords,
    },

    #[error("entry {entry} duplicates entry {first} at {coords}")]
    Duplicate {
        entry: u64,
        first: u64,
        coords: Coords,
    },

    #[error("entry {entry} at {coords} is not after entry {prev} at {prev_coords} in lexicographic order, but is_sorted is set")]
    NotSorted {
        entry: u64,
        prev: u64,
        coords: Coords,
        prev_coords: Coords,
    },

    #[error("values buffer byte {byte} is 0x{value:02X}: its padding bits (mask 0x{mask:02X}) after the {nnz} {type_name} elements must be zero")]
    NonzeroPadding {
        byte: usize,
        value: u8,
        mask: u8,
        nnz: u64,
        type_name: &'static str,
    },

    #[error("entry {entry}: value code 0x{code:02X} is reserved in {type_name} (0x00 and 0xFF are NaN in OCP MX) and the format forbids it as data; valid codes are 0x01..=0xFE")]
    InvalidValue {
        entry: u64,
        code: u8,
        type_name: &'static str,
    },

    #[error("query has rank {got} but the tensor has rank {expected}")]
    RankMismatch { got: u32, expected: u32 },

    #[error(
        "query coordinate {coord} in dimension {dim} is out of bounds (shape[{dim}] = {extent})"
    )]
    QueryOutOfBounds { dim: usize, coord: u64, extent: u64 },

    #[error("query {query}: coordinate {coord} in dimension {dim} is out of bounds (shape[{dim}] = {extent})")]
    BatchQueryOutOfBounds {
        query: usize,
        dim: usize,
        coord: u64,
        extent: u64,
    },

    #[error("{what} has {got} bytes but {needed} are needed{why}")]
    BufferTooSmall {
        what: &'static str,
        got: usize,
        needed: usize,
        /// What needs them ("" or ": …").
        why: String,
    },

    #[error("could not allocate {bytes} bytes for {what}")]
    Alloc { bytes: usize, what: &'static str },

    #[error("descriptor truncated: {field} at byte {offset} needs {needed} bytes but only {available} are there")]
    Truncated {
        field: &'static str,
        offset: usize,
        needed: usize,
        available: usize,
    },

    #[error("not a Hurray descriptor: the magic bytes are {got:02X?}, expected [48, 52, 52, 59] (\"HRRY\")")]
    InvalidMagic { got: [u8; 4] },

    #[error(
        "descriptor version {major}.{minor} is not supported: this library reads major version 1"
    )]
    UnsupportedVersion { major: u8, minor: u8 },

    #[error("{0}")]
    Reserved(String),

    #[error("{0}")]
    Layout(String),

    #[error("extension type section: {0}")]
    ExtensionType(String),

    #[error("{0}")]
    BufferHandle(String),

    #[error("{0}")]
    Device(String),

    #[error("{0}")]
    SyncMode(String),

    #[error("{0}")]
    Unsupported(String),

    #[error("{0}")]
    Shard(String),

    #[error("{0}")]
    Statistics(String),

    /// A triplet coordinate outside the shape: the triplet number and the
    /// dimension as the caller counts them (from `base`), the coordinate as
    /// written.
    #[error("{}", triplet_bounds_text(*.triplet, *.dim, *.coord, *.extent, *.base, *.skip_negative))]
    TripletBounds {
        triplet: u64,
        dim: usize,
        coord: i128,
        extent: u64,
        base: u8,
        skip_negative: bool,
    },

    /// A text file (Matrix Market, FROSTT) that does not parse: the path
    /// when it was read from one, the line (1-based) and, when one token is
    /// at fault, its column; `what` says what is wrong there.
    #[error("{}{}", path_prefix(.path), place_text(*.line, *.column, .what))]
    Parse {
        path: Option<String>,
        line: u64,
        column: Option<u64>,
        what: String,
    },

    /// Two entries of a text file with the same coordinates under the
    /// ERROR policy: both lines (1-based; `*_mirrored` for the mirror image
    /// of a symmetric file's entry) and the coordinates, counted from 1.
    #[error("{}line {line}{} duplicates line {first_line}{}: {}", path_prefix(.path), mirror_note(*.mirrored), mirror_note(*.first_mirrored), duplicate_line_detail(.coords))]
    DuplicateLine {
        path: Option<String>,
        line: u64,
        mirrored: bool,
        first_line: u64,
        first_mirrored: bool,
        coords: Coords,
    },

    /// An argument's value outside its domain (a policy, an index type, a
    /// format, an index base, a precision): what it is, the value, and what
    /// it may be.
    #[error("{what} {value} is not accepted: {allowed}")]
    OutOfRange {
        what: &'static str,
        value: u64,
        allowed: std::borrow::Cow<'static, str>,
    },

    /// CSR or CSC offsets that do not describe the indices given with them
    /// (first not the base, decreasing, past the end, last not nnz + base).
    #[error("{0}")]
    Offsets(String),

    /// A file that could not be opened, read or written: path and reason.
    #[error("{0}")]
    Io(String),

    /// A Hurray file container rule broken at byte `offset` of the file.
    #[error("byte {offset} of the file: {msg}")]
    Container {
        status: Status,
        offset: u64,
        msg: String,
    },

    /// An error inside one tensor of a Hurray file: `context` names the
    /// tensor and where its descriptor is; the status is the inner one.
    #[error("{context}: {inner}")]
    InFile {
        context: String,
        inner: Box<CooError>,
    },

    /// A global coordinate outside a shard's box.
    #[error("global coordinate {coord} in dimension {dim} is outside this shard's box, which holds {lo} to {} of the parent's {parent}", hi.wrapping_sub(1))]
    OutsideShard {
        dim: usize,
        coord: u64,
        lo: u64,
        hi: u64,
        parent: u64,
    },

    /// An argument outside its domain (not flags): what and why.
    #[error("{0}")]
    Argument(String),

    /// A value read into a type that cannot hold it exactly (a text file
    /// read with a value type): the entry, its coordinates (counted from
    /// 1), the value as read, the type and why.
    #[error("entry {entry} at {coords} (counted from 1): {value} {why} in {type_name}; read it into a wider type, or in the file's own type")]
    ValueDoesNotFit {
        entry: u64,
        coords: Coords,
        value: String,
        type_name: &'static str,
        why: String,
    },

    /// Two triplets with the same coordinates under the ERROR policy:
    /// triplet numbers (0-based) and coordinates as the caller wrote them.
    #[error("triplet {} duplicates triplet {} at {coords}{}; pass a duplicate policy (SUM, FIRST, LAST, MIN, MAX) to combine them", second + u64::from(*base), first + u64::from(*base), counted_from(*base))]
    TripletDuplicate {
        second: u64,
        first: u64,
        coords: Coords,
        base: u8,
    },

    #[error("{0}")]
    ValueOverflow(String),

    #[error("internal error: {0} (please report this)")]
    Internal(String),

    #[error("internal panic caught at the C boundary: {0} (please report this)")]
    Panic(String),

    /// The same error, its positions counted from 1 (for Fortran and Julia
    /// callers: see [`CooError::one_based`]).
    #[error("{}", one_based_text(.0))]
    OneBased(Box<CooError>),
}

/// " [counted from 1]" for a 1-based caller, so a message says how to read it.
pub(crate) fn counted_from(base: u8) -> &'static str {
    if base == 1 {
        " [triplets, dimensions and coordinates counted from 1]"
    } else {
        ""
    }
}

/// "PATH: " for an error in a named file, else nothing.
fn path_prefix(path: &Option<String>) -> String {
    path.as_ref().map_or(String::new(), |p| format!("{p}: "))
}

/// "line L, column C: what", or "line L: what" without a column: where a
/// text error is, in one place.
fn place_text(line: u64, column: Option<u64>, what: &str) -> String {
    match column {
        Some(c) => format!("line {line}, column {c}: {what}"),
        None => format!("line {line}: {what}"),
    }
}

/// What a duplicate pair of lines has in common, after the lines.
fn duplicate_line_detail(coords: &Coords) -> String {
    format!(
        "both are entry {coords} (counted from 1); pass a duplicate policy (SUM, FIRST, LAST, \
         MIN, MAX) to combine them"
    )
}

fn mirror_note(m: bool) -> &'static str {
    if m {
        " (mirrored)"
    } else {
        ""
    }
}

fn triplet_bounds_text(
    triplet: u64,
    dim: usize,
    coord: i128,
    extent: u64,
    base: u8,
    skip_negative: bool,
) -> String {
    let b = u64::from(base);
    let valid = if extent == 0 {
        "the dimension is empty".to_owned()
    } else {
        format!("valid {b} to {}", extent - 1 + b)
    };
    // The likely mistakes, named with their fix: a count from the other
    // base (one past the end counted from 0, or 0 counted from 1), or a
    // negative coordinate meant to be skipped.
    let hint = if base == 0 && extent > 0 && coord == i128::from(extent) {
        "; if these triplets count from 1, set index_base to 1"
    } else if base == 1 && coord == 0 {
        "; if these triplets count from 0, set index_base to 0"
    } else if coord < 0 && !skip_negative {
        "; HURRAY_ASSEMBLE_SKIP_NEGATIVE skips triplets with a negative coordinate"
    } else {
        ""
    };
    format!(
        "triplet {}: coordinate {coord} in dimension {} is out of bounds ({valid}){}{hint}",
        triplet + b,
        dim as u64 + b,
        counted_from(base)
    )
}

/// `e`'s message with entry numbers, dimensions and coordinates counted from
/// 1, as a 1-based caller wrote them. A coordinate goes through the caller's
/// own `- 1` and back (`wrapping_add`), so a 1-based 0 reads as 0 again.
fn one_based_text(e: &CooError) -> String {
    let c = |x: &u64| x.wrapping_add(1);
    let tuple = |t: &Coords| Coords(t.0.iter().map(c).collect());
    let text = match e {
        CooError::OutOfBounds {
            entry,
            dim,
            coord,
            extent,
            coords,
        } => format!(
            "entry {} at {}: coordinate {} in dimension {} is out of bounds (valid 1 to {extent})",
            entry + 1,
            tuple(coords),
            c(coord),
            dim + 1
        ),
        CooError::Duplicate {
            entry,
            first,
            coords,
        } => format!("entry {} duplicates entry {} at {}", entry + 1, first + 1, tuple(coords)),
        CooError::NotSorted {
            entry,
            prev,
            coords,
            prev_coords,
        } => format!(
            "entry {} at {} is not after entry {} at {} in lexicographic order, but is_sorted is set",
            entry + 1,
            tuple(coords),
            prev + 1,
            tuple(prev_coords)
        ),
        CooError::InvalidValue { entry, .. } => {
            let zero_based = e.to_string();
            let rest = zero_based.split_once(": ").map_or("", |(_, r)| r);
            format!("entry {}: {rest}", entry + 1)
        }
        CooError::QueryOutOfBounds { dim, coord, extent } => format!(
            "query coordinate {} in dimension {} is out of bounds (valid 1 to {extent})",
            c(coord),
            dim + 1
        ),
        CooError::BatchQueryOutOfBounds {
            query,
            dim,
            coord,
            extent,
        } => format!(
            "query {}: coordinate {} in dimension {} is out of bounds (valid 1 to {extent})",
            query + 1,
            c(coord),
            dim + 1
        ),
        CooError::OutsideShard {
            dim,
            coord,
            lo,
            hi,
            parent,
        } => format!(
            "global coordinate {} in dimension {} is outside this shard's box, which holds {} to \
             {hi} of the parent's {parent}",
            c(coord),
            dim + 1,
            c(lo)
        ),
        CooError::DynamicDimension { dim } => format!(
            "shape dimension {} is UINT64_MAX, the dynamic-dimension sentinel: a COO tensor \
             needs every dimension resolved",
            dim + 1
        ),
        CooError::OneBased(inner) => return one_based_text(inner),
        other => return other.to_string(),
    };
    format!("{text} [entries, dimensions and coordinates counted from 1]")
}

impl CooError {
    /// An index base other than 0 or 1 (triplets, CSR/CSC arrays): the one
    /// refusal every reader of a base gives.
    pub fn check_base(base: u32) -> Result<u8, CooError> {
        match base {
            0 | 1 => Ok(base as u8),
            b => Err(CooError::OutOfRange {
                what: "index base",
                value: u64::from(b),
                allowed: "indices count from 0 or from 1".into(),
            }),
        }
    }
}

impl CooError {
    /// The status code that goes with this error.
    pub fn status(&self) -> Status {
        match self {
            CooError::NullPointer { .. } => Status::NullPointer,
            CooError::InvalidFlags { .. } => Status::InvalidFlags,
            CooError::InvalidType { .. } => Status::InvalidType,
            CooError::UnsupportedType { .. } => Status::UnsupportedType,
            CooError::InvalidRank { .. } => Status::InvalidRank,
            CooError::DynamicDimension { .. } => Status::InvalidShape,
            CooError::BufferSize { .. } => Status::BufferSize,
            CooError::Misaligned { .. } => Status::Misaligned,
            CooError::Overflow { .. } | CooError::ValueDoesNotFit { .. } => Status::Overflow,
            CooError::OutOfBounds { .. }
            | CooError::QueryOutOfBounds { .. }
            | CooError::BatchQueryOutOfBounds { .. } => Status::IndexOutOfBounds,
            CooError::Duplicate { .. } => Status::Duplicate,
            CooError::NotSorted { .. } => Status::NotSorted,
            CooError::NonzeroPadding { .. } => Status::NonzeroPadding,
            CooError::InvalidValue { .. } => Status::InvalidValue,
            CooError::RankMismatch { .. } => Status::RankMismatch,
            CooError::BufferTooSmall { .. } => Status::BufferTooSmall,
            CooError::Alloc { .. } => Status::Alloc,
            CooError::Truncated { .. } => Status::Truncated,
            CooError::InvalidMagic { .. } => Status::InvalidMagic,
            CooError::UnsupportedVersion { .. } => Status::VersionMismatch,
            CooError::Reserved(_) => Status::ReservedBits,
            CooError::Layout(_) => Status::InvalidLayout,
            CooError::ExtensionType(_) => Status::InvalidType,
            CooError::BufferHandle(_) => Status::InvalidBufferHandle,
            CooError::Device(_) => Status::UnsupportedDevice,
            CooError::SyncMode(_) => Status::InvalidSyncMode,
            CooError::Unsupported(_) => Status::UnsupportedFeature,
            CooError::Shard(_) => Status::InvalidShape,
            CooError::Statistics(_) => Status::InvalidStatistics,
            CooError::TripletBounds { .. } => Status::IndexOutOfBounds,
            CooError::Parse { .. } => Status::ParseError,
            CooError::DuplicateLine { .. } => Status::Duplicate,
            CooError::OutOfRange { .. } => Status::InvalidArgument,
            CooError::Offsets(_) => Status::InvalidOffsets,
            CooError::Io(_) => Status::Io,
            CooError::Container { status, .. } => *status,
            CooError::InFile { inner, .. } => inner.status(),
            CooError::Argument(_) => Status::InvalidArgument,
            CooError::OutsideShard { .. } => Status::OutsideShard,
            CooError::TripletDuplicate { .. } => Status::Duplicate,
            CooError::ValueOverflow(_) => Status::Overflow,
            CooError::Internal(_) => Status::Internal,
            CooError::Panic(_) => Status::InternalPanic,
            CooError::OneBased(inner) => inner.status(),
        }
    }

    /// This error, its message counting positions from 1 when `one_based`.
    pub fn one_based(self, one_based: bool) -> CooError {
        match (one_based, self) {
            (true, e @ CooError::OneBased(_)) | (false, e) => e,
            (true, e) => CooError::OneBased(Box::new(e)),
        }
    }

    /// Where this error is, as fields (see [`Position`]): the numbers its
    /// message names, read from the error itself, never from the text.
    pub fn position(&self) -> Position {
        let p = Position::default();
        let opt = |x: usize| Some(x as u64);
        match self {
            CooError::OutOfBounds {
                entry,
                dim,
                coord,
                coords,
                ..
            } => Position {
                entry: Some(*entry),
                dim: opt(*dim),
                coordinate: Some(i128::from(*coord)),
                coordinates: Some(coords.0.clone()),
                ..p
            },
            CooError::Duplicate {
                entry,
                first,
                coords,
            } => Position {
                entry: Some(*entry),
                other_entry: Some(*first),
                coordinates: Some(coords.0.clone()),
                ..p
            },
            CooError::NotSorted {
                entry,
                prev,
                coords,
                ..
            } => Position {
                entry: Some(*entry),
                other_entry: Some(*prev),
                coordinates: Some(coords.0.clone()),
                ..p
            },
            CooError::InvalidValue { entry, .. } => Position {
                entry: Some(*entry),
                ..p
            },
            CooError::ValueDoesNotFit { entry, coords, .. } => Position {
                base: 1,
                entry: Some(*entry),
                coordinates: Some(coords.0.clone()),
                ..p
            },
            CooError::QueryOutOfBounds { dim, coord, .. }
            | CooError::OutsideShard { dim, coord, .. } => Position {
                dim: opt(*dim),
                coordinate: Some(i128::from(*coord)),
                ..p
            },
            CooError::BatchQueryOutOfBounds {
                query, dim, coord, ..
            } => Position {
                entry: opt(*query),
                dim: opt(*dim),
                coordinate: Some(i128::from(*coord)),
                ..p
            },
            CooError::DynamicDimension { dim } => Position {
                dim: opt(*dim),
                ..p
            },
            CooError::NonzeroPadding { byte, .. } => Position {
                byte_offset: opt(*byte),
                ..p
            },
            CooError::Truncated { offset, .. } => Position {
                byte_offset: opt(*offset),
                ..p
            },
            CooError::Container { offset, .. } => Position {
                byte_offset: Some(*offset),
                ..p
            },
            CooError::TripletBounds {
                triplet,
                dim,
                coord,
                base,
                ..
            } => Position {
                base: *base,
                entry: Some(triplet + u64::from(*base)),
                dim: Some(*dim as u64 + u64::from(*base)),
                coordinate: Some(*coord),
                ..p
            },
            CooError::TripletDuplicate {
                second,
                first,
                coords,
                base,
            } => Position {
                base: *base,
                entry: Some(second + u64::from(*base)),
                other_entry: Some(first + u64::from(*base)),
                coordinates: Some(coords.0.clone()),
                ..p
            },
            CooError::Parse { line, column, .. } => Position {
                line: Some(*line),
                column: *column,
                ..p
            },
            CooError::DuplicateLine {
                line,
                mirrored,
                first_line,
                first_mirrored,
                coords,
                ..
            } => Position {
                base: 1,
                line: Some(*line),
                other_line: Some(*first_line),
                line_mirrored: *mirrored,
                other_line_mirrored: *first_mirrored,
                coordinates: Some(coords.0.clone()),
                ..p
            },
            CooError::InFile { inner, .. } => inner.position(),
            CooError::OneBased(inner) => inner.position().one_based(),
            _ => p,
        }
    }

    /// The message without the place it starts with (the path, lines and
    /// column of a text error): what a caller that names the place itself
    /// (the MPI layer, counting lines of the whole file) puts after it.
    pub fn detail(&self) -> String {
        match self {
            CooError::Parse { what, .. } => what.clone(),
            CooError::DuplicateLine { coords, .. } => duplicate_line_detail(coords),
            CooError::InFile { inner, .. } if inner.position().line.is_some() => inner.detail(),
            other => other.to_string(),
        }
    }

    /// A parse error at `line` (1-based), at `column` when one token is at
    /// fault.
    pub(crate) fn parse(line: usize, column: Option<usize>, what: impl Into<String>) -> CooError {
        CooError::Parse {
            path: None,
            line: line as u64,
            column: column.map(|c| c as u64),
            what: what.into(),
        }
    }

    /// A NULL-pointer error without a hint.
    pub fn null(what: &'static str) -> CooError {
        CooError::NullPointer { what, hint: "" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_culprit() {
        let e = CooError::Duplicate {
            entry: 17,
            first: 3,
            coords: Coords(vec![2, 0]),
        };
        assert_eq!(e.to_string(), "entry 17 duplicates entry 3 at (2, 0)");
        assert_eq!(e.status(), Status::Duplicate);
        let e = CooError::Misaligned {
            buffer: "values",
            addr: 0x1004,
            rem: 4,
        };
        assert!(e.to_string().contains("HURRAY_COO_COPY"));
        assert_eq!(Coords(vec![]).to_string(), "()");
    }

    #[test]
    fn one_based_messages_count_as_the_caller_wrote() {
        let dup = CooError::Duplicate {
            entry: 2,
            first: 1,
            coords: Coords(vec![2, 0]),
        };
        let one = dup.clone().one_based(true);
        assert_eq!(one.status(), Status::Duplicate);
        assert!(one
            .to_string()
            .starts_with("entry 3 duplicates entry 2 at (3, 1) [entries, dimensions"));
        // Idempotent, and a no-op when not asked for.
        assert_eq!(one.clone().one_based(true), one);
        assert_eq!(dup.clone().one_based(false), dup);
        // A Fortran 0 arrives as UINT64_MAX (0 - 1) and is named 0 again.
        let q = CooError::QueryOutOfBounds {
            dim: 0,
            coord: u64::MAX,
            extent: 4,
        };
        assert!(q
            .one_based(true)
            .to_string()
            .starts_with("query coordinate 0 in dimension 1 is out of bounds (valid 1 to 4)"));
        let oob = CooError::OutOfBounds {
            entry: 0,
            dim: 1,
            coord: 7,
            extent: 5,
            coords: Coords(vec![0, 7]),
        };
        assert!(oob.one_based(true).to_string().starts_with(
            "entry 1 at (1, 8): coordinate 8 in dimension 2 is out of bounds (valid 1 to 5)"
        ));
        let v = CooError::InvalidValue {
            entry: 4,
            code: 0xFF,
            type_name: "float8_e8m0",
        };
        assert!(v
            .one_based(true)
            .to_string()
            .starts_with("entry 5: value code 0xFF"));
        // Errors without positions read as they do 0-based.
        let n = CooError::null("coo");
        assert_eq!(n.clone().one_based(true).to_string(), n.to_string());
    }

    #[test]
    fn positions_are_the_numbers_the_message_names() {
        let oob = CooError::OutOfBounds {
            entry: 17,
            dim: 1,
            coord: 9,
            extent: 4,
            coords: Coords(vec![2, 9]),
        };
        let p = oob.position();
        assert_eq!(
            (p.base, p.entry, p.dim, p.coordinate),
            (0, Some(17), Some(1), Some(9))
        );
        assert_eq!(p.coordinates, Some(vec![2, 9]));
        assert!(oob
            .to_string()
            .contains("entry 17 at (2, 9): coordinate 9 in dimension 1"));
        // 1-based: every number as the 1-based message says it.
        let one = oob.clone().one_based(true);
        let q = one.position();
        assert_eq!(
            (q.base, q.entry, q.dim, q.coordinate),
            (1, Some(18), Some(2), Some(10))
        );
        assert_eq!(q.coordinates, Some(vec![3, 10]));
        assert!(one
            .to_string()
            .contains("entry 18 at (3, 10): coordinate 10 in dimension 2"));
        // Triplets count from their own base; a negative coordinate stays.
        let t = CooError::TripletBounds {
            triplet: 3,
            dim: 0,
            coord: -2,
            extent: 5,
            base: 1,
            skip_negative: false,
        };
        let p = t.position();
        assert_eq!(
            (p.base, p.entry, p.dim, p.coordinate),
            (1, Some(4), Some(1), Some(-2))
        );
        assert!(t
            .to_string()
            .starts_with("triplet 4: coordinate -2 in dimension 1"));
        // Text: line and column, and the detail without them.
        let e = CooError::parse(7, Some(3), "expected an integer (found 'x')");
        let p = e.position();
        assert_eq!((p.line, p.column), (Some(7), Some(3)));
        assert_eq!(
            e.to_string(),
            "line 7, column 3: expected an integer (found 'x')"
        );
        assert_eq!(e.detail(), "expected an integer (found 'x')");
        // No place: nothing set.
        assert_eq!(CooError::null("coo").position(), Position::default());
    }
}
