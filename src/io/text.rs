//! What the text formats (Matrix Market, FROSTT) share: a line-by-line
//! tokenizer that knows where each token is (line and column, 1-based, as
//! an editor shows them), number parsing with messages that name the
//! token, the entries as read and their assembly (a duplicate named by its
//! lines), number formatting for the writers, and file reads and writes.

use crate::aligned::AlignedBuf;
use crate::assemble::{assemble, AssembleOptions, CoordArrays, IndexType, Triplets};
use crate::coo::Coo;
use crate::element::decode::{copy_element, to_f64};
use crate::element::types::{Encoding, TypeInfo};
use crate::error::CooError;

/// A token and where it is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Token<'a> {
    pub text: &'a str,
    pub line: usize,
    pub column: usize,
}

impl<'a> Token<'a> {
    /// An error about this token.
    pub(crate) fn error(&self, what: &str) -> CooError {
        CooError::parse(
            self.line,
            Some(self.column),
            format!(
                "{what} (found '{}')",
                self.text.chars().take(40).collect::<String>()
            ),
        )
    }

    pub(crate) fn int(&self) -> Result<i64, CooError> {
        self.text
            .parse::<i64>()
            .map_err(|_| self.error("expected an integer"))
    }

    pub(crate) fn uint(&self) -> Result<u64, CooError> {
        self.text
            .parse::<u64>()
            .map_err(|_| self.error("expected a non-negative integer"))
    }

    pub(crate) fn real(&self) -> Result<f64, CooError> {
        self.text
            .parse::<f64>()
            .map_err(|_| self.error("expected a number"))
    }
}

/// The lines of a text, each with its number, comments (lines starting with
/// `comment`) and blank lines left out; each line split into tokens.
pub(crate) struct Lines<'a> {
    text: &'a [u8],
    line: usize,
    comment: char,
}

impl<'a> Lines<'a> {
    /// Lines of `bytes`; each line is checked to be UTF-8 when it is read
    /// (so a reader that stops early, or hands the rest to the fast path,
    /// never scans the whole input here).
    pub(crate) fn new(bytes: &'a [u8], comment: char) -> Lines<'a> {
        Lines {
            text: bytes,
            line: 0,
            comment,
        }
    }

    /// The next raw line (comments included) and its number.
    pub(crate) fn next_raw(&mut self) -> Result<Option<(usize, &'a str)>, CooError> {
        if self.text.is_empty() {
            return Ok(None);
        }
        let (line, rest) = match self.text.iter().position(|&b| b == b'\n') {
            Some(k) => (&self.text[..k], &self.text[k + 1..]),
            None => (self.text, &[][..]),
        };
        self.text = rest;
        self.line += 1;
        let line = match std::str::from_utf8(line) {
            Ok(l) => l,
            // A comment line may hold any bytes (an old file's Latin-1
            // author name): nothing in it is read, so it is kept up to its
            // first byte that is not UTF-8 (the banner, a comment too,
            // still has to parse from what is kept).
            Err(e) if line.trim_ascii_start().starts_with(&[self.comment as u8]) => {
                let valid = &line[..e.valid_up_to()];
                std::str::from_utf8(valid).unwrap_or_default()
            }
            Err(e) => {
                return Err(CooError::parse(
                    self.line,
                    None,
                    format!(
                        "not UTF-8 text (byte {} of the line); only comment lines may hold \
                         other bytes",
                        e.valid_up_to() + 1
                    ),
                ))
            }
        };
        Ok(Some((self.line, line.strip_suffix('\r').unwrap_or(line))))
    }

    /// The next line that is neither blank nor a comment, as tokens
    /// (`false` at the end of the input).
    pub(crate) fn next_tokens(&mut self, out: &mut Vec<Token<'a>>) -> Result<bool, CooError> {
        while let Some((n, line)) = self.next_raw()? {
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with(self.comment) {
                continue;
            }
            tokens_of(n, line, out);
            return Ok(true);
        }
        Ok(false)
    }

    /// The input not read yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.text
    }

    /// The number of the last line read.
    pub(crate) fn line(&self) -> usize {
        self.line
    }
}

/// Split `line` (number `n`) into tokens with their columns.
pub(crate) fn tokens_of<'a>(n: usize, line: &'a str, out: &mut Vec<Token<'a>>) {
    out.clear();
    let base = line.as_ptr() as usize;
    out.extend(line.split_ascii_whitespace().map(|t| Token {
        text: t,
        line: n,
        column: t.as_ptr() as usize - base + 1,
    }));
}

/// The element type of a tensor about to be written as text, refusing a
/// tag accepted only by a permissive handle, and validating a permissive
/// handle first (only valid tensors are written).
pub(crate) fn known_type(
    coo: &crate::coo::Coo<'_>,
    format: &'static str,
) -> Result<&'static TypeInfo, CooError> {
    let ty = coo.type_info().ok_or_else(|| CooError::UnsupportedType {
        what: format,
        tag: coo.type_tag(),
        name: "unknown",
        reason: "was accepted in permissive mode only and has no text form",
    })?;
    if coo.is_permissive() {
        coo.validate()?;
    }
    Ok(ty)
}

/// Entries as a reader collects them: 0-based coordinates (rank per entry)
/// and values as 8-byte little-endian words (float64 bits or int64; two per
/// complex value; none for a pattern).
#[derive(Default)]
pub(crate) struct Entries {
    pub coords: Vec<u64>,
    pub values: Vec<u64>,
    pub n: usize,
}

impl Entries {
    /// Append one entry's coordinates.
    pub(crate) fn push(&mut self, coords: &[u64]) -> Result<(), CooError> {
        for &c in coords {
            push(&mut self.coords, c, "the coordinates")?;
        }
        self.n += 1;
        Ok(())
    }
}

/// Assemble what a reader collected into a canonical tensor of `shape` and
/// `type_tag` (values ignored for a pattern), with the caller's policy. A
/// duplicate under the ERROR policy is reported by the lines that
/// `line_of(triplet)` gives: the line (1-based) and whether the triplet is
/// a mirror image. `e`'s vectors may be taken (left empty).
///
/// Entries already in the canonical order (a file written from a sorted or
/// compressed matrix) become the tensor's buffers where they lie: moved up
/// to a 64-byte boundary inside their own memory (`AlignedBuf::from_words`,
/// when the reader reserved the room) and validated as a strict create
/// validates. Every entry is its own, so any policy keeps it as it is; the
/// policy's own refusals come first, as assembly gives them. Anything else
/// (out of order, a repeat, out of bounds, zeros to drop, a pattern) is
/// assembled, from the same bytes.
pub(crate) fn assemble_entries(
    e: &mut Entries,
    shape: &[u64],
    type_tag: u8,
    pattern: bool,
    o: &TextOptions,
    line_of: impl Fn(u64) -> (u64, bool),
) -> Result<Coo<'static>, CooError> {
    let mut ao = o.assemble;
    ao.skip_plan = true;
    let assembled = |t: &Triplets<'_>| match assemble(t, &ao) {
        Ok((coo, _)) => retype(coo, o.value_type),
        Err(e) => Err(duplicate_lines(e, &line_of)),
    };
    // A list out of order within its first entries (most unordered files)
    // is assembled as it lies, without the move.
    let rank = shape.len().max(1);
    let starts_in_order = e
        .coords
        .chunks_exact(rank)
        .take(1024)
        .is_sorted_by(|a, b| a < b);
    if pattern || ao.drop_zeros || !starts_in_order {
        return assembled(&triplets_of(e, shape, type_tag, pattern));
    }
    crate::assemble::checked_type(&triplets_of(e, shape, type_tag, pattern), &ao)?;
    let coords = AlignedBuf::from_words(std::mem::take(&mut e.coords));
    let values = AlignedBuf::from_words(std::mem::take(&mut e.values));
    let ordered = match (&coords, &values) {
        (Ok(c), Ok(v)) => {
            let parts = crate::coo::CooParts {
                type_tag,
                shape,
                nnz: e.n as u64,
                is_sorted: true,
                values: v.as_bytes(),
                indices: c.as_bytes(),
            };
            let strict = crate::coo::Options {
                threads: ao.threads,
                ..Default::default()
            };
            Coo::new(parts, strict).is_ok()
        }
        _ => false,
    };
    fn words(x: &Result<AlignedBuf, Vec<u64>>) -> &[u8] {
        match x {
            Ok(b) => b.as_bytes(),
            Err(v) => bytemuck::cast_slice(v),
        }
    }
    match (coords, values) {
        (Ok(c), Ok(v)) if ordered => retype(Coo::from_built(type_tag, shape, v, c)?, o.value_type),
        (coords, values) => assembled(&Triplets {
            shape,
            n: e.n,
            index_type: IndexType::U64,
            base: 0,
            coords: CoordArrays::Interleaved(words(&coords)),
            type_tag,
            values: Some(words(&values)),
        }),
    }
}

/// What a reader collected, as the triplets assembly takes (values ignored
/// for a pattern).
pub(crate) fn triplets_of<'e>(
    e: &'e Entries,
    shape: &'e [u64],
    type_tag: u8,
    pattern: bool,
) -> Triplets<'e> {
    Triplets {
        shape,
        n: e.n,
        index_type: IndexType::U64,
        base: 0,
        coords: CoordArrays::Interleaved(bytemuck::cast_slice(&e.coords)),
        type_tag,
        values: (!pattern).then_some(bytemuck::cast_slice(&e.values)),
    }
}

/// An assembly error with a duplicate named by its lines (`line_of`, as in
/// [`assemble_entries`]) and its coordinates counted from 1, as the file
/// counts; any other error as it is.
pub(crate) fn duplicate_lines(e: CooError, line_of: impl Fn(u64) -> (u64, bool)) -> CooError {
    match e {
        CooError::TripletDuplicate {
            second,
            first,
            coords,
            ..
        } => {
            let ((line, mirrored), (first_line, first_mirrored)) =
                (line_of(second), line_of(first));
            CooError::DuplicateLine {
                path: None,
                line,
                mirrored,
                first_line,
                first_mirrored,
                coords: crate::error::Coords(coords.0.iter().map(|x| x + 1).collect()),
            }
        }
        other => other,
    }
}

/// Growable storage for what a reader collects, allocated without aborting.
pub(crate) fn push<T>(v: &mut Vec<T>, x: T, what: &'static str) -> Result<(), CooError> {
    if v.len() == v.capacity() {
        v.try_reserve(v.len().max(1024))
            .map_err(|_| CooError::Alloc {
                bytes: v.len().saturating_mul(2 * std::mem::size_of::<T>()),
                what,
            })?;
    }
    v.push(x);
    Ok(())
}

/// At least `room` spare bytes in `out`, grown without aborting.
pub(crate) fn ensure(out: &mut Vec<u8>, room: usize, what: &'static str) -> Result<(), CooError> {
    if out.capacity() - out.len() < room {
        let more = out.len().max(4096).max(room);
        out.try_reserve(more).map_err(|_| CooError::Alloc {
            bytes: out.len().saturating_add(more),
            what,
        })?;
    }
    Ok(())
}

/// The line of data item `k` (0-based) of a text: the `k`-th line that is
/// neither blank nor a comment, after `skip` such lines (headers). Used only
/// to name lines in an error, so it rescans rather than keeping a table.
pub(crate) fn line_of_item(bytes: &[u8], comment: char, skip: usize, k: u64) -> usize {
    let mut lines = Lines::new(bytes, comment);
    let mut tokens = Vec::new();
    let mut seen = 0u64;
    let mut skipped = 0usize;
    // The Matrix Market banner is a comment line to the tokenizer.
    while let Ok(true) = lines.next_tokens(&mut tokens) {
        if skipped < skip {
            skipped += 1;
            continue;
        }
        if seen == k {
            return lines.line();
        }
        seen += 1;
    }
    0
}

/// A parse error of a file, prefixed with its path (editors jump to
/// "path:line").
pub(crate) fn in_file(path: &std::path::Path, e: CooError) -> CooError {
    match e {
        CooError::Parse {
            line, column, what, ..
        } => CooError::Parse {
            path: Some(path.display().to_string()),
            line,
            column,
            what,
        },
        CooError::DuplicateLine {
            line,
            mirrored,
            first_line,
            first_mirrored,
            coords,
            ..
        } => CooError::DuplicateLine {
            path: Some(path.display().to_string()),
            line,
            mirrored,
            first_line,
            first_mirrored,
            coords,
        },
        other => other,
    }
}

pub(crate) use crate::io::fsutil::write_file;
pub(crate) use crate::io::gzip::{read_text_file, text_of};

/// How to read a text file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// Duplicate policy, zero dropping and threads of the assembly.
    pub assemble: AssembleOptions,
    /// Keep a symmetric, skew-symmetric or hermitian file's stored entries
    /// as they are instead of adding their mirror images.
    pub keep_triangular: bool,
    /// The type tag of the values to hand back, any real or integer type
    /// (float64 from an `integer` or `pattern` file, float32, int32...),
    /// or `None` for the file's own (float64, int64, complex128, bool).
    /// Duplicates combine in the file's type first; then every value must
    /// fit the type exactly, or the read fails naming the first entry that
    /// does not (never rounded, never clamped). Pattern entries are 1.
    pub value_type: Option<u8>,
}

/// `coo` (as a reader assembled it) with its values in `tag`, exactly
/// (see [`TextOptions::value_type`]).
pub(crate) fn retype(coo: Coo<'static>, tag: Option<u8>) -> Result<Coo<'static>, CooError> {
    use crate::element::cast::{exactly, is_target, Exact};
    let Some(tag) = tag.filter(|&t| t != coo.type_tag()) else {
        return Ok(coo);
    };
    let to = crate::element::types::type_info(tag)
        .filter(|t| is_target(t))
        .ok_or_else(|| CooError::OutOfRange {
            what: "value type",
            value: u64::from(tag),
            allowed: "the tag of a real or integer element type (float64 0x04, float32 0x03, \
                      int32 0x14, ...)"
                .into(),
        })?;
    let Some(from) = coo.type_info() else {
        return Ok(coo);
    };
    if from.encoding == Encoding::Complex {
        return Err(CooError::Argument(format!(
            "a complex file's values have no exact {}; read it in its own type (complex128)",
            to.name()
        )));
    }
    let n = coo.nnz();
    let bytes = crate::element::size::values_bytes(to, n)?;
    let mut values = crate::aligned::AlignedBuf::zeroed(
        crate::element::size::to_usize(bytes, "the values")?,
        "the values in the value type",
    )?;
    let src = coo.values();
    for i in 0..n as usize {
        let mut st = [0u8; 16];
        copy_element(from, src, i, &mut st);
        let x = match from.encoding {
            Encoding::F64 => {
                Exact::Real(f64::from_le_bytes(st[..8].try_into().unwrap_or_default()))
            }
            Encoding::Bool => Exact::Int(i64::from(st[0] & 1)),
            _ => Exact::Int(i64::from_le_bytes(st[..8].try_into().unwrap_or_default())),
        };
        match exactly(to, x) {
            Ok(bits) => crate::element::encode::store_element(
                to,
                values.as_bytes_mut(),
                i,
                &bits.to_le_bytes(),
            ),
            Err(why) => {
                return Err(CooError::ValueDoesNotFit {
                    entry: i as u64,
                    coords: crate::error::Coords(coo.entry(i).iter().map(|c| c + 1).collect()),
                    value: x.to_string(),
                    type_name: to.name(),
                    why,
                })
            }
        }
    }
    coo.with_values(tag, values)
}

/// How a tensor is written as text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Significant digits of real values (1 to 17); `None` writes the
    /// shortest text that reads back to the same value.
    pub precision: Option<usize>,
    /// Threads that format the entries (0 and 1: the calling thread), as
    /// [`crate::threads`] says; the text is the same.
    pub threads: usize,
    /// Matrix Market only: write the coordinates alone (field `pattern`),
    /// whatever the values; FROSTT, which always has values, refuses it.
    pub pattern: bool,
    /// Matrix Market only: write the matrix dense (format `array`): every
    /// value column by column, zeros included (with a symmetry, the lower
    /// triangle's columns). FROSTT refuses it.
    pub array: bool,
}

/// The most significant digits a written value carries (a float64 needs
/// at most 17 to read back exactly).
pub const MAX_PRECISION: usize = 17;

pub(crate) fn check_precision(p: Option<usize>) -> Result<(), CooError> {
    match p {
        Some(d) if d == 0 || d > MAX_PRECISION => Err(CooError::OutOfRange {
            what: "precision",
            value: d as u64,
            allowed: format!(
                "give 1 to {MAX_PRECISION} significant digits, or 0 for the shortest text \
                 that reads back exactly"
            )
            .into(),
        }),
        _ => Ok(()),
    }
}

/// How a value of an element type is written as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    /// A real number (every float type).
    Real,
    /// An exact integer (integer types and bool).
    Integer,
    /// Two real numbers.
    Complex,
}

pub(crate) fn field_of(ty: &TypeInfo) -> Field {
    match ty.encoding {
        Encoding::Int | Encoding::UInt | Encoding::Bool => Field::Integer,
        Encoding::Complex => Field::Complex,
        _ => Field::Real,
    }
}

/// Append a real number: the shortest text that reads back to the same
/// value (`precision` None; "1.0", "0.1", "1e-7"), or `precision`
/// significant digits ("1.00e0").
pub(crate) fn write_real<T: ryu::Float + std::fmt::LowerExp>(
    out: &mut Vec<u8>,
    x: T,
    precision: Option<usize>,
) {
    use std::io::Write;
    match precision {
        // Writing to a Vec cannot fail.
        Some(p) => {
            let _ = write!(out, "{:.*e}", p.saturating_sub(1), x);
        }
        None => out.extend_from_slice(ryu::Buffer::new().format(x).as_bytes()),
    }
}

/// Append element `i` of `values` (type `ty`) as text: integers exactly,
/// reals per [`write_real`], complex as "re im".
pub(crate) fn write_value(
    out: &mut Vec<u8>,
    ty: &TypeInfo,
    values: &[u8],
    i: usize,
    precision: Option<usize>,
) {
    let mut st = [0u8; 16];
    copy_element(ty, values, i, &mut st);
    let raw = u128::from_le_bytes(st);
    let mut int = itoa::Buffer::new();
    match ty.encoding {
        Encoding::Int => {
            let unused = 128 - ty.bits;
            out.extend_from_slice(int.format(((raw << unused) as i128) >> unused).as_bytes());
        }
        Encoding::UInt => out.extend_from_slice(int.format(raw).as_bytes()),
        Encoding::Bool => out.push(b'0' + (raw & 1) as u8),
        Encoding::F32 => write_real(out, f32::from_bits(raw as u32), precision),
        Encoding::F64 => write_real(out, f64::from_bits(raw as u64), precision),
        Encoding::Complex if ty.bits == 64 => {
            write_real(out, f32::from_bits(raw as u32), precision);
            out.push(b' ');
            write_real(out, f32::from_bits((raw >> 32) as u32), precision);
        }
        Encoding::Complex => {
            write_real(out, f64::from_bits(raw as u64), precision);
            out.push(b' ');
            write_real(out, f64::from_bits((raw >> 64) as u64), precision);
        }
        _ => write_real(out, to_f64(ty, &st).unwrap_or(f64::NAN), precision),
    }
}

/// Which entries a writer writes, by their coordinates.
pub(crate) type Keep<'a> = &'a (dyn Fn(&[u64]) -> bool + Sync);

/// Every entry.
pub(crate) const ALL: Keep<'static> = &|_| true;

/// Append one line per entry of `coo` that `keep` keeps: its coordinates
/// counted from 1, then (unless `with_values` is false) its value, in the
/// tensor's order, formatted on up to `o.threads` threads (at least 64k
/// entries each).
pub(crate) fn write_entries(
    coo: &crate::coo::Coo<'_>,
    ty: &TypeInfo,
    with_values: bool,
    keep: Keep<'_>,
    o: &WriteOptions,
    out: &mut Vec<u8>,
) -> Result<(), CooError> {
    let n = coo.nnz() as usize;
    let threads = crate::threads::count(o.threads, n, 1 << 16);
    if threads == 1 {
        return write_range(coo, ty, with_values, keep, o.precision, 0..n, out);
    }
    let cut = |k: usize| n / threads * k + (k * (n % threads)) / threads;
    let parts = crate::threads::each(threads, |k| {
        let mut v = Vec::new();
        write_range(
            coo,
            ty,
            with_values,
            keep,
            o.precision,
            cut(k)..cut(k + 1),
            &mut v,
        )
        .map(|_| v)
    });
    for p in parts {
        let p = p?;
        ensure(out, p.len(), "the text")?;
        out.extend_from_slice(&p);
    }
    Ok(())
}

fn write_range(
    coo: &crate::coo::Coo<'_>,
    ty: &TypeInfo,
    with_values: bool,
    keep: Keep<'_>,
    precision: Option<usize>,
    range: std::ops::Range<usize>,
    out: &mut Vec<u8>,
) -> Result<(), CooError> {
    let rank = coo.rank() as usize;
    let values = coo.values();
    let mut int = itoa::Buffer::new();
    // A coordinate takes at most 20 digits and a space; a value at most
    // two reals of 17 digits with sign, point and exponent.
    let line = 21 * rank + 2 * (MAX_PRECISION + 8) + 2;
    let lines = range.len().min(1 << 16);
    ensure(out, lines * (line / 2), "the text")?;
    for i in range {
        if !keep(coo.entry(i)) {
            continue;
        }
        ensure(out, line, "the text")?;
        for (d, c) in coo.entry(i).iter().enumerate() {
            if d > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(int.format(u128::from(*c) + 1).as_bytes());
        }
        if with_values {
            out.push(b' ');
            write_value(out, ty, values, i, precision);
        }
        out.push(b'\n');
    }
    Ok(())
}

/// Entry `i` of `coo` as a line of text, coordinates counted from 1 and the
/// value as the writers write it ("3 1 -0.5"); `None` past the end or for
/// a type accepted only by a permissive handle.
pub fn entry_text(coo: &crate::coo::Coo<'_>, i: usize) -> Option<String> {
    let ty = coo.type_info()?;
    if i as u64 >= coo.nnz() {
        return None;
    }
    let mut out = Vec::new();
    write_range(coo, ty, true, ALL, None, i..i + 1, &mut out).ok()?;
    out.pop();
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::Duplicates;

    /// `assemble_entries` gives what assembling the same entries gives (the
    /// same tensor, bit for bit, or the same error), whether the entries
    /// are taken where they lie or assembled: entries in order, or with a
    /// repeat, one out of order, one out of bounds; real, integer and
    /// complex values (NaN and -0.0 among them); every policy, zeros
    /// dropped or not, another value type; with and without the spare room
    /// the move needs; 1 and 2 threads.
    #[test]
    fn entries_in_order_are_taken_as_assembly_would_give_them() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut rng = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let (mut taken, mut other) = (0, 0);
        for round in 0..600 {
            let rank = 1 + (rng() % 3) as usize;
            let shape: Vec<u64> = (0..rank).map(|_| 1 + rng() % 9).collect();
            // Strictly increasing keys: every cell with probability 1/3.
            let cells: u64 = shape.iter().product();
            let mut keys: Vec<Vec<u64>> = Vec::new();
            for mut c in 0..cells {
                if rng() % 3 == 0 {
                    let mut k = vec![0; rank];
                    for d in (0..rank).rev() {
                        k[d] = c % shape[d];
                        c /= shape[d];
                    }
                    keys.push(k);
                }
            }
            match round % 6 {
                1 if keys.len() > 1 => keys.swap(0, 1),
                2 if !keys.is_empty() => {
                    let k = keys[keys.len() / 2].clone();
                    keys.insert(keys.len() / 2, k);
                }
                3 if !keys.is_empty() => {
                    let at = (rng() as usize) % keys.len();
                    keys[at][rank - 1] = shape[rank - 1];
                }
                _ => {}
            }
            let (tag, width) = [(0x04u8, 1usize), (0x16, 1), (0x51, 2)][round % 3];
            let word = |r: u64| match (tag, r % 7) {
                (0x16, _) => ((r % 5) as i64 - 2) as u64,
                (_, 0) => f64::NAN.to_bits(),
                (_, 1) => (-0.0f64).to_bits(),
                (_, 2) => 0.0f64.to_bits(),
                _ => ((r % 100) as f64 - 50.5).to_bits(),
            };
            let n = keys.len();
            let spare = if round % 5 == 4 { 0 } else { 16 };
            let mut e = Entries {
                coords: Vec::with_capacity(n * rank + spare),
                values: Vec::with_capacity(n * width + spare),
                n,
            };
            for k in &keys {
                e.coords.extend_from_slice(k);
                for _ in 0..width {
                    e.values.push(word(rng()));
                }
            }
            let mut o = TextOptions::default();
            o.assemble.duplicates = Duplicates::ALL[(rng() % 6) as usize];
            o.assemble.drop_zeros = rng() % 5 == 0;
            o.assemble.threads = 1 + (rng() % 2) as usize;
            o.value_type = [None, Some(0x04), Some(0x14)][(rng() % 3) as usize];
            let mut ao = o.assemble;
            ao.skip_plan = true;
            let want = match assemble(&triplets_of(&e, &shape, tag, false), &ao) {
                Ok((coo, _)) => retype(coo, o.value_type),
                Err(err) => Err(duplicate_lines(err, |k| (k + 1, false))),
            };
            let in_order = keys.windows(2).all(|w| w[0] < w[1])
                && keys
                    .iter()
                    .all(|k| k.iter().zip(&shape).all(|(c, x)| c < x));
            // The entries' own memory, to see whether the tensor lies in it.
            let own = |v: &Vec<u64>| {
                let at = v.as_ptr() as usize;
                at..at + v.capacity() * 8
            };
            let (own_coords, own_values) = (own(&e.coords), own(&e.values));
            let got = assemble_entries(&mut e, &shape, tag, false, &o, |k| (k + 1, false));
            match (&want, &got) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(
                        (a.type_tag(), a.shape(), a.nnz(), a.is_sorted()),
                        (b.type_tag(), b.shape(), b.nnz(), b.is_sorted()),
                        "round {round}"
                    );
                    assert_eq!(a.indices_bytes(), b.indices_bytes(), "round {round}");
                    assert_eq!(a.values(), b.values(), "round {round}");
                    assert_eq!(b.indices_bytes().as_ptr() as usize % 64, 0);
                    assert_eq!(b.values().as_ptr() as usize % 64, 0);
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "round {round}"),
                _ => panic!("round {round}: {want:?} / {got:?}"),
            }
            // Taken where they lie: the entries' own memory is the tensor's.
            if let (true, Ok(b)) = (
                in_order && spare > 0 && !o.assemble.drop_zeros && n > 0,
                &got,
            ) {
                taken += 1;
                let lies = |bytes: &[u8], own: &std::ops::Range<usize>| {
                    own.contains(&(bytes.as_ptr() as usize))
                };
                assert!(
                    lies(b.indices_bytes(), &own_coords),
                    "round {round}: indices moved"
                );
                // Values in another type are new; in the entries' own, theirs.
                if o.value_type.is_none_or(|t| t == tag) {
                    assert!(lies(b.values(), &own_values), "round {round}: values moved");
                }
            } else {
                other += 1;
            }
        }
        assert!(
            taken > 80 && other > 200,
            "{taken} taken, {other} assembled"
        );
    }
}
