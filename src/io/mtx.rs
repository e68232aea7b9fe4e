//! Matrix Market files (the NIST exchange format, `.mtx`): `coordinate`
//! and `array` matrices of `real`, `integer`, `complex` or `pattern`
//! values, `general`, `symmetric`, `skew-symmetric` or `hermitian`.
//!
//! Reading checks every line as it goes (errors name the line, the column
//! and the token), then hands the entries to assembly, so duplicates follow
//! the caller's policy and the result is a canonical (sorted, validated)
//! tensor. Symmetric files are mirrored unless the caller keeps the stored
//! triangle. Types: real -> float64, integer -> int64, complex ->
//! complex128, pattern -> bool (every stored entry true).

use super::fastparse::{self, Spec, Stop, Values};
use super::gzip::{Report, QUIET};
pub use super::symmetry::{symmetry_name, MtxSymmetry};
use super::text::{self, field_of, Entries, Field, Lines, TextOptions, Token, WriteOptions};
use crate::coo::Coo;
use crate::error::CooError;

mod compressed;
mod steps;
pub use compressed::{mtx_file_size, read_mtx_file_compressed, MtxSize};

/// The value field of a Matrix Market file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtxField {
    Real,
    Integer,
    Complex,
    Pattern,
}

/// What a Matrix Market banner declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MtxHeader {
    /// `array` (dense, column by column) rather than `coordinate`.
    pub array: bool,
    pub field: MtxField,
    pub symmetry: MtxSymmetry,
    /// The entries the file stores (its entry lines, or an array's
    /// values), before mirror images are added or duplicates combined.
    pub stored: u64,
}

const BANNER: &str = "%%MatrixMarket";

fn parse_banner(lines: &mut Lines<'_>) -> Result<MtxHeader, CooError> {
    let mut tokens = Vec::new();
    let Some((n, line)) = lines.next_raw()? else {
        return Err(CooError::parse(
            1,
            None,
            "the input is empty; a Matrix Market file starts with \
             '%%MatrixMarket matrix <format> <field> <symmetry>'",
        ));
    };
    text::tokens_of(n, line, &mut tokens);
    let want = "the Matrix Market banner '%%MatrixMarket matrix <coordinate|array> \
                <real|integer|complex|pattern> <general|symmetric|skew-symmetric|hermitian>'";
    let at = |k: usize| -> Result<Token<'_>, CooError> {
        tokens.get(k).copied().ok_or_else(|| {
            CooError::parse(
                n,
                None,
                format!("the banner has {} words; expected {want}", tokens.len()),
            )
        })
    };
    let banner = at(0)?;
    if !banner.text.eq_ignore_ascii_case(BANNER) {
        return Err(banner.error(&format!("expected {want}")));
    }
    let object = at(1)?;
    if !object.text.eq_ignore_ascii_case("matrix") {
        return Err(object.error("only 'matrix' objects are supported"));
    }
    let format = at(2)?;
    let array = match format.text.to_ascii_lowercase().as_str() {
        "coordinate" => false,
        "array" => true,
        _ => return Err(format.error("the format must be 'coordinate' or 'array'")),
    };
    let f = at(3)?;
    let field = match f.text.to_ascii_lowercase().as_str() {
        "real" | "double" => MtxField::Real,
        "integer" => MtxField::Integer,
        "complex" => MtxField::Complex,
        "pattern" => MtxField::Pattern,
        _ => {
            return Err(f.error("the field must be 'real', 'integer', 'complex' or 'pattern'"));
        }
    };
    let s = at(4)?;
    let symmetry = match s.text.to_ascii_lowercase().as_str() {
        "general" => MtxSymmetry::General,
        "symmetric" => MtxSymmetry::Symmetric,
        "skew-symmetric" => MtxSymmetry::SkewSymmetric,
        "hermitian" => MtxSymmetry::Hermitian,
        _ => {
            return Err(s.error(
                "the symmetry must be 'general', 'symmetric', 'skew-symmetric' or 'hermitian'",
            ))
        }
    };
    if let Some(extra) = tokens.get(5) {
        return Err(extra.error("unexpected word after the symmetry"));
    }
    if array && field == MtxField::Pattern {
        return Err(f.error("an 'array' file cannot be 'pattern'"));
    }
    if symmetry == MtxSymmetry::Hermitian && field != MtxField::Complex {
        return Err(s.error("'hermitian' needs the 'complex' field"));
    }
    if symmetry == MtxSymmetry::SkewSymmetric && field == MtxField::Pattern {
        return Err(s.error("a 'pattern' file cannot be 'skew-symmetric'"));
    }
    Ok(MtxHeader {
        array,
        field,
        symmetry,
        stored: 0,
    })
}

/// How an entry's values are written in a file of this field.
fn values_of(field: MtxField) -> Values {
    match field {
        MtxField::Pattern => Values::None,
        MtxField::Real => Values::Real,
        MtxField::Integer => Values::Integer,
        MtxField::Complex => Values::Complex,
    }
}

/// Append an entry's value fields as 8-byte words (int64 or float64 bits).
fn push_value(e: &mut Entries, field: MtxField, tokens: &[Token<'_>]) -> Result<(), CooError> {
    for t in tokens {
        let word = match field {
            MtxField::Integer => t.int()? as u64,
            _ => t.real()?.to_bits(),
        };
        text::push(&mut e.values, word, "the values")?;
    }
    Ok(())
}

/// A 1-based index token checked against its extent; returned 0-based.
fn index(t: &Token<'_>, extent: u64, what: &str) -> Result<u64, CooError> {
    let v = t.uint()?;
    if v == 0 || v > extent {
        return Err(t.error(&format!(
            "{what} index out of range: the matrix has {extent} {what}s, counted from 1"
        )));
    }
    Ok(v - 1)
}

/// Read a Matrix Market file held in `bytes`: entry lines are parsed from
/// bytes on up to `o.assemble.threads` threads, and anything that path
/// cannot vouch for is read again line by line, which names the problem.
pub fn read_mtx(bytes: &[u8], o: &TextOptions) -> Result<(Coo<'static>, MtxHeader), CooError> {
    read(bytes, o, true)
}

/// [`read_mtx`] by the line-by-line path alone: the reference the fast
/// path is tested against.
#[doc(hidden)]
pub fn read_mtx_line_by_line(
    bytes: &[u8],
    o: &TextOptions,
) -> Result<(Coo<'static>, MtxHeader), CooError> {
    read(bytes, o, false)
}

fn read(bytes: &[u8], o: &TextOptions, fast: bool) -> Result<(Coo<'static>, MtxHeader), CooError> {
    let bytes = &text::text_of(bytes)?[..];
    let p = parse(bytes, o, fast)?;
    finish(p, o, |k| text::line_of_item(bytes, '%', 1, k) as u64)
}

/// What a file's text gives before assembly: the entries (mirrored ones
/// after the `read` stored ones, `mirror_of` naming their originals).
struct Parsed {
    h: MtxHeader,
    e: Entries,
    shape: [u64; 2],
    read: usize,
    mirror_of: Vec<usize>,
}

/// A file's banner and size line, and where its entry lines start.
struct Head<'a> {
    h: MtxHeader,
    rows: u64,
    cols: u64,
    declared: u64,
    size_line: usize,
    lines: Lines<'a>,
}

fn parse(bytes: &[u8], o: &TextOptions, fast: bool) -> Result<Parsed, CooError> {
    let mut tok = Vec::new();
    let Head {
        h,
        rows,
        cols,
        declared,
        size_line,
        mut lines,
    } = head(bytes, &mut tok)?;
    let fast = if h.array || !fast {
        None
    } else {
        fast_entries(lines.rest(), &h, rows, cols, declared, o.assemble.threads)?
    };
    let mut e = match fast {
        Some(e) => e,
        None => read_entries(&mut lines, &mut tok, &h, rows, cols, declared, size_line)?,
    };
    let read = e.n;
    let mut mirror_of = Vec::new();
    if h.symmetry != MtxSymmetry::General && !o.keep_triangular {
        mirror(&mut e, &h, &mut mirror_of, &|k| {
            text::line_of_item(bytes, '%', 1, k)
        })?;
    }
    Ok(Parsed {
        h,
        e,
        shape: [rows, cols],
        read,
        mirror_of,
    })
}

fn head<'a>(bytes: &'a [u8], tok: &mut Vec<text::Token<'a>>) -> Result<Head<'a>, CooError> {
    let mut lines = Lines::new(bytes, '%');
    let h = parse_banner(&mut lines)?;
    if !lines.next_tokens(tok)? {
        return Err(CooError::parse(
            lines.line() + 1,
            None,
            format!(
                "the file ends before the size line ({})",
                if h.array {
                    "rows columns"
                } else {
                    "rows columns entries"
                }
            ),
        ));
    }
    let size_line = lines.line();
    let want = if h.array { 2 } else { 3 };
    if tok.len() != want {
        return Err(CooError::parse(
            size_line,
            None,
            format!(
                "the size line has {} numbers; a{} file's has {want} ({})",
                tok.len(),
                if h.array { "n array" } else { " coordinate" },
                if h.array {
                    "rows columns"
                } else {
                    "rows columns entries"
                }
            ),
        ));
    }
    let rows = tok[0].uint()?;
    let cols = tok[1].uint()?;
    for (t, extent, what) in [(&tok[0], rows, "rows"), (&tok[1], cols, "columns")] {
        if extent == crate::element::size::DYNAMIC_DIM {
            return Err(t.error(&format!(
                "{extent} {what} is not an extent: the largest is 2^64 - 2, because 2^64 - 1 \
                 marks a dynamic dimension, which a stored tensor cannot have"
            )));
        }
    }
    if h.symmetry != MtxSymmetry::General && rows != cols {
        return Err(tok[1].error(&format!(
            "a {} matrix must be square, but it has {rows} rows",
            symmetry_name(h.symmetry)
        )));
    }
    let declared = if h.array {
        array_count(rows, cols, h.symmetry).ok_or_else(|| {
            CooError::parse(
                size_line,
                None,
                format!("{rows} x {cols} entries do not fit a 64-bit count"),
            )
        })?
    } else {
        tok[2].uint()?
    };
    Ok(Head {
        h,
        rows,
        cols,
        declared,
        size_line,
        lines,
    })
}

/// Assemble what `parse` gave; `line_of_item(k)` is the line of the k-th
/// entry line (0-based), asked only to name a duplicate.
fn finish(
    mut p: Parsed,
    o: &TextOptions,
    line_of_item: impl Fn(u64) -> u64,
) -> Result<(Coo<'static>, MtxHeader), CooError> {
    let pattern = p.h.field == MtxField::Pattern;
    let mut e = std::mem::take(&mut p.e);
    let coo = text::assemble_entries(
        &mut e,
        &p.shape,
        type_tag(p.h.field),
        pattern,
        o,
        p.item_line(line_of_item),
    )?;
    Ok((coo, p.header()))
}

/// The element type a file of this field reads into.
fn type_tag(field: MtxField) -> u8 {
    match field {
        MtxField::Real => 0x04,
        MtxField::Integer => 0x16,
        MtxField::Complex => 0x51,
        MtxField::Pattern => 0x20,
    }
}

impl Parsed {
    /// The banner with the count of stored entries.
    fn header(&self) -> MtxHeader {
        MtxHeader {
            stored: self.read as u64,
            ..self.h
        }
    }

    /// The line of triplet `k` and whether it is a mirror image, from
    /// `line_of_item(k)`, the line of the k-th entry line (0-based).
    fn item_line<'s, F: Fn(u64) -> u64 + 's>(
        &'s self,
        line_of_item: F,
    ) -> impl Fn(u64) -> (u64, bool) + 's {
        move |k| {
            let (k, mirrored) = match (k as usize).checked_sub(self.read) {
                Some(m) => (self.mirror_of.get(m).copied().unwrap_or(0) as u64, true),
                None => (k, false),
            };
            (line_of_item(k), mirrored)
        }
    }
}

/// The entries of a coordinate file by the fast path, or `None` when it
/// cannot vouch for the input (the line-by-line path then decides and
/// names the problem).
fn fast_entries(
    rest: &[u8],
    h: &MtxHeader,
    rows: u64,
    cols: u64,
    declared: u64,
    threads: usize,
) -> Result<Option<Entries>, CooError> {
    let spec = Spec {
        rank: 2,
        extents: Some(&[rows, cols]),
        values: values_of(h.field),
        comment: b'%',
    };
    let p = match fastparse::parse(rest, &spec, Some(declared), threads) {
        Ok(p) => p,
        Err(Stop::Failed(e)) => return Err(e),
        Err(Stop::Unsure) => return Ok(None),
    };
    let e = p.entries;
    let skew_diagonal =
        h.symmetry == MtxSymmetry::SkewSymmetric && e.coords.chunks_exact(2).any(|c| c[0] == c[1]);
    if e.n as u64 != declared || skew_diagonal {
        return Ok(None);
    }
    Ok(Some(e))
}

/// The entries, line by line: the reference path, which names the line,
/// column and token of every problem.
fn read_entries<'a>(
    lines: &mut Lines<'a>,
    tok: &mut Vec<Token<'a>>,
    h: &MtxHeader,
    rows: u64,
    cols: u64,
    declared: u64,
    size_line: usize,
) -> Result<Entries, CooError> {
    let fields = values_of(h.field).count();
    let mut e = Entries::default();
    let per_line = if h.array { fields } else { 2 + fields };
    let (mut r, mut c) = (0u64, 0u64);
    if h.array {
        r = first_row(0, h.symmetry);
    }
    let mut count = 0u64;
    while lines.next_tokens(tok)? {
        if count == declared {
            return Err(tok[0].error(&format!(
                "one entry more than the {declared} the size line (line {size_line}) declares"
            )));
        }
        if tok.len() != per_line {
            let names = match (h.array, h.field) {
                (true, MtxField::Complex) => "real imaginary",
                (true, _) => "value",
                (false, MtxField::Pattern) => "row column",
                (false, MtxField::Complex) => "row column real imaginary",
                (false, _) => "row column value",
            };
            if let Some(extra) = tok.get(per_line) {
                return Err(extra.error(&format!(
                    "unexpected field: an entry is '{names}' ({per_line} fields)"
                )));
            }
            return Err(CooError::parse(
                lines.line(),
                None,
                format!(
                    "{} field(s) where an entry is '{names}' ({per_line} fields)",
                    tok.len()
                ),
            ));
        }
        if h.array {
            e.push(&[r, c])?;
            push_value(&mut e, h.field, tok)?;
            r += 1;
            if r == rows {
                c += 1;
                r = first_row(c, h.symmetry);
            }
        } else {
            let i = index(&tok[0], rows, "row")?;
            let j = index(&tok[1], cols, "column")?;
            if h.symmetry == MtxSymmetry::SkewSymmetric && i == j {
                return Err(tok[0].error(
                    "a skew-symmetric matrix has a zero diagonal: diagonal entries must not be stored",
                ));
            }
            e.push(&[i, j])?;
            push_value(&mut e, h.field, &tok[2..])?;
        }
        count += 1;
    }
    if count < declared {
        return Err(CooError::parse(
            lines.line(),
            None,
            format!(
                "the file ends after {count} of the {declared} entries the size line \
                 (line {size_line}) declares"
            ),
        ));
    }
    Ok(e)
}

/// Entries an `array` file of this symmetry holds.
fn array_count(rows: u64, cols: u64, s: MtxSymmetry) -> Option<u64> {
    match s {
        MtxSymmetry::General => rows.checked_mul(cols),
        MtxSymmetry::Symmetric | MtxSymmetry::Hermitian => {
            u64::try_from(u128::from(rows) * (u128::from(rows) + 1) / 2).ok()
        }
        MtxSymmetry::SkewSymmetric => {
            u64::try_from(u128::from(rows) * u128::from(rows.saturating_sub(1)) / 2).ok()
        }
    }
}

/// The first stored row of column `c` of an `array` file.
fn first_row(c: u64, s: MtxSymmetry) -> u64 {
    match s {
        MtxSymmetry::General => 0,
        MtxSymmetry::Symmetric | MtxSymmetry::Hermitian => c,
        MtxSymmetry::SkewSymmetric => c + 1,
    }
}

/// Add the mirror image of every off-diagonal entry: the same value
/// (symmetric), its negation (skew-symmetric) or its conjugate (hermitian).
fn mirror(
    e: &mut Entries,
    h: &MtxHeader,
    mirror_of: &mut Vec<usize>,
    line_of_item: &dyn Fn(u64) -> usize,
) -> Result<(), CooError> {
    let read = e.n;
    let width = values_of(h.field).count();
    for k in 0..read {
        let (r, c) = (e.coords[2 * k], e.coords[2 * k + 1]);
        if r == c {
            continue;
        }
        let mut v = [0u64; 2];
        v[..width].copy_from_slice(&e.values[k * width..(k + 1) * width]);
        match (h.symmetry, h.field) {
            (MtxSymmetry::SkewSymmetric, MtxField::Integer) => {
                let x = v[0] as i64;
                let neg = x.checked_neg().ok_or_else(|| {
                    CooError::parse(
                        line_of_item(k as u64),
                        None,
                        format!(
                            "the value {x} has no negation in int64, so its \
                             skew-symmetric mirror image cannot be stored"
                        ),
                    )
                })?;
                v[0] = neg as u64;
            }
            (MtxSymmetry::SkewSymmetric, _) => {
                for part in &mut v[..width] {
                    *part = (-f64::from_bits(*part)).to_bits();
                }
            }
            (MtxSymmetry::Hermitian, _) => v[1] = (-f64::from_bits(v[1])).to_bits(),
            _ => {}
        }
        e.push(&[c, r])?;
        for w in &v[..width] {
            text::push(&mut e.values, *w, "the values")?;
        }
        text::push(mirror_of, k, "the mirror table")?;
    }
    Ok(())
}

/// Append `coo` to `out` as a `coordinate` `general` Matrix Market file:
/// float types as `real`, integer types as `integer`, complex as
/// `complex`, bool as `pattern` when every value is true (an assembled
/// pattern) and as `integer` 0/1 otherwise. Entries in the tensor's order,
/// 1-based.
pub fn write_mtx(coo: &Coo<'_>, o: &WriteOptions, out: &mut Vec<u8>) -> Result<(), CooError> {
    write_mtx_as(coo, MtxSymmetry::General, o, out)
}

/// As [`write_mtx`], with the banner's symmetry. For any symmetry but
/// `general`, `coo` holds one triangle of a square matrix (every entry on
/// or below the diagonal, or every entry on or above it; strictly, for
/// `skew-symmetric`) and the file says the other is its mirror image;
/// `hermitian` takes complex values. Anything else is refused, naming the
/// first entry that does not fit, so the file always means the matrix the
/// caller has.
pub fn write_mtx_as(
    coo: &Coo<'_>,
    symmetry: MtxSymmetry,
    o: &WriteOptions,
    out: &mut Vec<u8>,
) -> Result<(), CooError> {
    write(coo, symmetry, false, o, out)
}

/// Append the whole square matrix `coo` as a Matrix Market file of
/// `symmetry`, half the size: the file stores the lower triangle (the
/// strict one for `skew-symmetric`) and says the rest is its mirror image.
/// Refused, naming the first entry that breaks it (with both values), when
/// the matrix does not have that symmetry exactly: a mirror image missing,
/// a value not equal (symmetric), not negated (skew-symmetric, whose
/// diagonal must be empty) or not conjugated (hermitian, complex values
/// with a real diagonal). With `o.pattern`, only the structure must be
/// symmetric. `general` writes every entry, as [`write_mtx`].
pub fn write_mtx_symmetric(
    coo: &Coo<'_>,
    symmetry: MtxSymmetry,
    o: &WriteOptions,
    out: &mut Vec<u8>,
) -> Result<(), CooError> {
    write(coo, symmetry, true, o, out)
}

/// The writers: `whole` when `coo` is the whole matrix (its lower triangle
/// is written), else `coo` is the triangle to write.
fn write(
    coo: &Coo<'_>,
    symmetry: MtxSymmetry,
    whole: bool,
    o: &WriteOptions,
    out: &mut Vec<u8>,
) -> Result<(), CooError> {
    use std::io::Write;
    if coo.rank() != 2 {
        return Err(CooError::Unsupported(format!(
            "Matrix Market holds matrices only; this tensor has rank {} (write it as FROSTT .tns)",
            coo.rank()
        )));
    }
    text::check_precision(o.precision)?;
    let ty = text::known_type(coo, "Matrix Market")?;
    let values = coo.values();
    let n = coo.nnz() as usize;
    let pattern = o.pattern || ty.tag == 0x20 && (0..n).all(|i| values[i / 8] >> (i % 8) & 1 == 1);
    let field = match (pattern, field_of(ty)) {
        (true, _) => "pattern",
        (false, Field::Real) => "real",
        (false, Field::Integer) => "integer",
        (false, Field::Complex) => "complex",
    };
    let strict = symmetry == MtxSymmetry::SkewSymmetric;
    let lower: text::Keep<'_> = match strict {
        true => &|e: &[u64]| e[0] > e[1],
        false => &|e: &[u64]| e[0] >= e[1],
    };
    let (keep, stored) = if whole && symmetry != MtxSymmetry::General {
        check_kind(coo, symmetry, field)?;
        super::symmetry::check(coo, symmetry, pattern)?;
        (lower, (0..n).filter(|&i| lower(coo.entry(i))).count())
    } else {
        check_triangle(coo, symmetry, field)?;
        (text::ALL, n)
    };
    if !pattern {
        check_integers_fit(coo, ty)?;
    }
    if o.array {
        if pattern {
            return Err(CooError::Argument(
                "a Matrix Market array holds values; a pattern is written as coordinates".into(),
            ));
        }
        if !whole && symmetry != MtxSymmetry::General {
            return Err(CooError::Argument(
                "an array is written from the whole matrix; write the triangle as coordinates"
                    .into(),
            ));
        }
        return write_array(coo, ty, symmetry, field, o, out);
    }
    let _ = writeln!(
        out,
        "{BANNER} matrix coordinate {field} {}",
        symmetry_name(symmetry)
    );
    let _ = writeln!(
        out,
        "% written by libhurray_coo {} from a {} tensor",
        env!("CARGO_PKG_VERSION"),
        ty.name()
    );
    let shape = coo.shape();
    let _ = writeln!(out, "{} {} {}", shape[0], shape[1], stored);
    text::write_entries(coo, ty, !pattern, keep, o, out)
}

/// The dense `array` form of the whole matrix `coo` (its symmetry checked
/// already): every value column by column, zeros included; for a symmetry
/// but `general`, each column from the diagonal down (below it, for
/// skew-symmetric).
fn write_array(
    coo: &Coo<'_>,
    ty: &crate::element::types::TypeInfo,
    symmetry: MtxSymmetry,
    field: &str,
    o: &WriteOptions,
    out: &mut Vec<u8>,
) -> Result<(), CooError> {
    use std::io::Write;
    let bytes = crate::convert::dense_bytes(coo)?;
    let bytes = crate::element::size::to_usize(bytes, "a dense array")?;
    let mut dense = crate::aligned::try_vec::<u8>(bytes, "the dense array")?;
    dense.resize(bytes, 0);
    crate::convert::export_dense(coo, &mut dense, o.threads)?;
    let (m, n) = (coo.shape()[0] as usize, coo.shape()[1] as usize);
    let _ = writeln!(
        out,
        "{BANNER} matrix array {field} {}",
        symmetry_name(symmetry)
    );
    let _ = writeln!(
        out,
        "% written by libhurray_coo {} from a {} tensor",
        env!("CARGO_PKG_VERSION"),
        ty.name()
    );
    let _ = writeln!(out, "{m} {n}");
    let first = |c: usize| match symmetry {
        MtxSymmetry::General => 0,
        MtxSymmetry::SkewSymmetric => c + 1,
        _ => c,
    };
    for c in 0..n {
        for r in first(c)..m {
            text::ensure(out, 2 * (text::MAX_PRECISION + 8) + 2, "the text")?;
            text::write_value(out, ty, &dense, r * n + c, o.precision);
            out.push(b'\n');
        }
    }
    Ok(())
}

/// That every value of an unsigned 64-bit tensor fits the `integer` field
/// as readers take it (int64, this one's included): a larger one would be
/// written as text that no reader reads back as the same value.
fn check_integers_fit(coo: &Coo<'_>, ty: &crate::element::types::TypeInfo) -> Result<(), CooError> {
    use crate::element::types::Encoding;
    if ty.encoding != Encoding::UInt || ty.bits < 64 {
        return Ok(());
    }
    let values = coo.values();
    for (i, v) in values.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(v.try_into().unwrap_or_default());
        if x > i64::MAX as u64 {
            let e = coo.entry(i);
            return Err(CooError::Unsupported(format!(
                "entry {i} at ({}, {}) (counted from 1) holds {x}, more than a Matrix Market \
                 integer can hold as readers take it (int64, at most {}); write it as a .hrry \
                 file, which keeps uint64",
                e[0] + 1,
                e[1] + 1,
                i64::MAX
            )));
        }
    }
    Ok(())
}

/// That a square matrix of `field` may be written with `symmetry`
/// (Matrix Market has hermitian for complex values only and no
/// skew-symmetric pattern).
fn check_kind(coo: &Coo<'_>, symmetry: MtxSymmetry, field: &str) -> Result<(), CooError> {
    let name = symmetry_name(symmetry);
    let shape = coo.shape();
    if shape[0] != shape[1] {
        return Err(CooError::Argument(format!(
            "a {name} Matrix Market file holds a square matrix; this one is {} x {}",
            shape[0], shape[1]
        )));
    }
    let allowed = match symmetry {
        MtxSymmetry::Hermitian => field == "complex",
        MtxSymmetry::SkewSymmetric => field != "pattern",
        _ => true,
    };
    if !allowed {
        return Err(CooError::Argument(format!(
            "a {field} matrix cannot be written as {name} (Matrix Market allows hermitian for \
             complex values only, and no skew-symmetric pattern)"
        )));
    }
    Ok(())
}

/// That `coo` can be written with `symmetry` and mean the same matrix:
/// square, one triangle only (strictly below or above the diagonal for
/// skew-symmetric), complex values for hermitian.
fn check_triangle(coo: &Coo<'_>, symmetry: MtxSymmetry, field: &str) -> Result<(), CooError> {
    if symmetry == MtxSymmetry::General {
        return Ok(());
    }
    check_kind(coo, symmetry, field)?;
    let name = symmetry_name(symmetry);
    let strict = symmetry == MtxSymmetry::SkewSymmetric;
    // Which triangle: the first off-diagonal entry decides.
    let lower = (0..coo.nnz() as usize)
        .map(|i| coo.entry(i))
        .find(|e| e[0] != e[1])
        .is_none_or(|e| e[0] > e[1]);
    for i in 0..coo.nnz() as usize {
        let e = coo.entry(i);
        let fits = if e[0] == e[1] {
            !strict
        } else {
            (e[0] > e[1]) == lower
        };
        if !fits {
            return Err(CooError::Argument(format!(
                "entry {i} at ({}, {}) is {}; a {name} file stores one triangle{} and the \
                 other is implied, so this matrix would be written as another one \
                 (write it as general)",
                e[0],
                e[1],
                if e[0] == e[1] {
                    "on the diagonal"
                } else if lower {
                    "above the diagonal while earlier entries are below it"
                } else {
                    "below the diagonal while earlier entries are above it"
                },
                if strict {
                    ", without the diagonal,"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
}

/// Read the Matrix Market file at `path` (see [`read_mtx`]).
pub fn read_mtx_file(
    path: &std::path::Path,
    o: &TextOptions,
) -> Result<(Coo<'static>, MtxHeader), CooError> {
    read_pieces(path, o, PIECE, None)
}

/// [`read_mtx_file`], telling `report` as the file is read how much of it
/// has been (what a progress bar shows).
pub fn read_mtx_file_reporting(
    path: &std::path::Path,
    o: &TextOptions,
    report: Report<'_>,
) -> Result<(Coo<'static>, MtxHeader), CooError> {
    read_pieces(path, o, PIECE, Some(report))
}

/// [`read_mtx_file`] reading files longer than `piece` bytes in pieces of
/// that size: what the tests compare with the whole-file reader on small
/// pieces.
#[doc(hidden)]
pub fn read_mtx_file_in_pieces(
    path: &std::path::Path,
    o: &TextOptions,
    piece: usize,
) -> Result<(Coo<'static>, MtxHeader), CooError> {
    read_pieces(path, o, piece, None)
}

/// `report`: `None` reports nothing (and leaves the reader free to read a
/// file in two halves on two threads).
fn read_pieces(
    path: &std::path::Path,
    o: &TextOptions,
    piece: usize,
    report: Option<Report<'_>>,
) -> Result<(Coo<'static>, MtxHeader), CooError> {
    if report.is_none() {
        if let Some(done) = compressed::symmetric_handle(path, o)? {
            return Ok(done);
        }
    }
    let again = Again::new(path);
    let p = parsed_file(path, o, piece, report, &again)?;
    finish(p, o, |k| again.line_of(k)).map_err(|e| text::in_file(path, e))
}

/// The file's text read again, once, when a message must name a line (a
/// duplicate, a mirror image that cannot be stored).
struct Again<'p> {
    path: &'p std::path::Path,
    text: std::cell::OnceCell<Option<Vec<u8>>>,
}

impl<'p> Again<'p> {
    fn new(path: &'p std::path::Path) -> Self {
        Again {
            path,
            text: std::cell::OnceCell::new(),
        }
    }

    /// The line of the k-th entry line (0-based), 0 when the file cannot be
    /// read again.
    fn line_of(&self, k: u64) -> u64 {
        let text = self
            .text
            .get_or_init(|| text::read_text_file(self.path, QUIET).ok());
        text.as_deref()
            .map_or(0, |b| text::line_of_item(b, '%', 1, k) as u64)
    }
}

/// What the file at `path` gives before assembly. The text is never held
/// beside the assembly's memory: a large file is parsed in pieces,
/// anything else is read whole and dropped before assembling. Errors start
/// with the path.
fn parsed_file(
    path: &std::path::Path,
    o: &TextOptions,
    piece: usize,
    report: Option<Report<'_>>,
    again: &Again<'_>,
) -> Result<Parsed, CooError> {
    let in_file = |e| text::in_file(path, e);
    let line_of = |k: u64| again.line_of(k) as usize;
    match in_pieces(path, o, piece.max(1), &line_of, report).map_err(in_file)? {
        Some(p) => Ok(p),
        None => {
            let bytes = text::read_text_file(path, report.unwrap_or(QUIET))?;
            let p = parse(&bytes, o, true).map_err(in_file)?;
            drop(bytes);
            Ok(p)
        }
    }
}

/// How much of a file `read_mtx_file` reads at a time.
const PIECE: usize = 4 << 20;

/// The entries of a coordinate file longer than `piece` bytes, parsed by the
/// fast path a piece at a time (each cut at a line end), or `None` when
/// that path cannot vouch for them (the file is then read whole, and the
/// line-by-line path decides and names the problem) or the file is short.
/// On two threads, with no report asked for, a file of at least two pieces
/// is read in two halves, each parsed on a thread of its own into a list
/// of its own; the second is then appended to the first.
fn in_pieces(
    path: &std::path::Path,
    o: &TextOptions,
    piece: usize,
    line_of: &dyn Fn(u64) -> usize,
    report: Option<Report<'_>>,
) -> Result<Option<Parsed>, CooError> {
    let io = crate::io::fsutil::io_error(path, "read");
    let file = crate::io::gzip::open_text(path, report.unwrap_or(QUIET))?;
    let mut f = file.reader;
    if file.len.is_some_and(|len| len <= piece as u64) {
        return Ok(None);
    }
    let mut buf: Vec<u8> = Vec::new();
    // Fill `buf` up to `piece` bytes (grown as needed, once); true at the
    // end of the file.
    let mut fill = |buf: &mut Vec<u8>| -> Result<bool, CooError> {
        crate::io::fsutil::read_up_to(&mut f, buf, piece, "a piece of the file", &io)
    };
    if fill(&mut buf)? {
        return Ok(None);
    }
    let mut tok = Vec::new();
    let Ok(Head {
        h,
        rows,
        cols,
        declared,
        lines,
        ..
    }) = head(&buf, &mut tok)
    else {
        return Ok(None);
    };
    if h.array {
        return Ok(None);
    }
    let start = buf.len() - lines.rest().len();
    drop(tok);
    let values = values_of(h.field);
    let spec = Spec {
        rank: 2,
        extents: Some(&[rows, cols]),
        values,
        comment: b'%',
    };
    // Room for the declared entries, never more than the file can hold
    // (a compressed file's text has no known length: room for at most 4M
    // entries to start with, then the entries grow as they are parsed).
    let most = declared.min(file.len.map_or(1 << 22, |len| len / 4 + 1)) as usize;
    // Sixteen words more than the entries need, for the move that makes
    // them a handle's buffers where they lie (`AlignedBuf::from_words`).
    let vc = values.count();
    let room = [
        most.saturating_mul(2).saturating_add(16),
        most.saturating_mul(vc).saturating_add(16),
    ];
    let no_room = || CooError::Alloc {
        bytes: most.saturating_mul(8 * (2 + vc)),
        what: "the entries",
    };
    let mut e = Entries::default();
    let threads = o.assemble.threads;
    let halves = file.len.filter(|&len| {
        report.is_none() && threads >= 2 && len.saturating_sub(start as u64) >= 2 * piece as u64
    });
    if let Some(len) = halves {
        // The whole room at once, zeroed (fresh pages, touched only as
        // written): the first half fills it in place and the second half
        // is copied after it on the threads; then it is cut to the entries.
        use bytemuck::allocation::try_zeroed_vec;
        let (Ok(coords), Ok(vals)) = (try_zeroed_vec(room[0]), try_zeroed_vec(room[1])) else {
            return Err(no_room());
        };
        (e.coords, e.values) = (coords, vals);
        let text = steps::Text {
            path,
            spec: &spec,
            step: piece,
            threads,
            split: None,
        };
        // The second half's list: room for about half the entries (pages
        // touched only as written), grown if it needs more.
        let mut second = Entries::default();
        let guess = most / 2 + most / 32;
        if second
            .coords
            .try_reserve_exact(guess.saturating_mul(2))
            .is_err()
            || second
                .values
                .try_reserve_exact(guess.saturating_mul(values.count()))
                .is_err()
        {
            return Ok(None);
        }
        let mut first = Appended {
            e: &mut e,
            most,
            in_room: Some(vc),
        };
        let mut other = Appended {
            e: &mut second,
            most,
            in_room: None,
        };
        let taken = text.halves([start as u64, len], [&mut first, &mut other])?;
        if !taken || !first.put(&second, threads) {
            return Ok(None);
        }
        e.coords.truncate(e.n * 2);
        e.values.truncate(e.n * vc);
    } else {
        e.coords
            .try_reserve_exact(room[0])
            .and_then(|_| e.values.try_reserve_exact(room[1]))
            .map_err(|_| no_room())?;
        buf.drain(..start);
        loop {
            let end = fill(&mut buf)?;
            let cut = match end {
                true => buf.len(),
                false => match buf.iter().rposition(|&b| b == b'\n') {
                    Some(i) => i + 1,
                    None => return Ok(None), // a line longer than a piece
                },
            };
            let left = declared.saturating_sub(e.n as u64);
            match fastparse::parse_append(&buf[..cut], &spec, Some(left), threads, &mut e) {
                Ok(()) => {}
                Err(Stop::Unsure) => return Ok(None),
                Err(Stop::Failed(err)) => return Err(err),
            }
            if end {
                break;
            }
            buf.drain(..cut);
        }
    }
    drop(buf);
    let skew_diagonal =
        h.symmetry == MtxSymmetry::SkewSymmetric && e.coords.chunks_exact(2).any(|c| c[0] == c[1]);
    if e.n as u64 != declared || skew_diagonal {
        return Ok(None);
    }
    let read = e.n;
    let mut mirror_of = Vec::new();
    if h.symmetry != MtxSymmetry::General && !o.keep_triangular {
        mirror(&mut e, &h, &mut mirror_of, line_of)?;
    }
    Ok(Some(Parsed {
        h,
        e,
        shape: [rows, cols],
        read,
        mirror_of,
    }))
}

/// A list of entries as [`steps::Text`] fills it (the handle reader's, or
/// one half of it): at most `most` entries.
struct Appended<'e> {
    e: &'e mut Entries,
    most: usize,
    /// `Some(values per entry)`: the list's vectors are already as long as
    /// the room, and the entries are written in them from `e.n` on (the
    /// caller cuts them to the entries); `None`: they grow as entries come.
    in_room: Option<usize>,
}

impl Appended<'_> {
    /// `p`'s entries after those here, copied on up to `threads` threads;
    /// false beyond `most` entries, or without the memory.
    fn put(&mut self, p: &Entries, threads: usize) -> bool {
        let e = &mut *self.e;
        if p.n > self.most.saturating_sub(e.n) {
            return false;
        }
        match self.in_room {
            Some(vc) => {
                let (c, v) = (e.n * 2, e.n * vc);
                let (Some(dc), Some(dv)) = (
                    e.coords.get_mut(c..c + p.coords.len()),
                    e.values.get_mut(v..v + p.values.len()),
                ) else {
                    return false;
                };
                crate::threads::copy(dc, &p.coords, threads);
                crate::threads::copy(dv, &p.values, threads);
            }
            None => {
                if e.coords.try_reserve(p.coords.len()).is_err()
                    || e.values.try_reserve(p.values.len()).is_err()
                {
                    return false;
                }
                e.coords.extend_from_slice(&p.coords);
                e.values.extend_from_slice(&p.values);
            }
        }
        e.n += p.n;
        true
    }
}

impl steps::Take for Appended<'_> {
    fn left(&self) -> u64 {
        self.most.saturating_sub(self.e.n) as u64
    }

    /// Declines more than `most` entries, or memory it cannot have.
    fn take(&mut self, p: &Entries) -> bool {
        self.put(p, 1)
    }
}

/// Write `coo` to `path` as Matrix Market (see [`write_mtx`]), through a
/// temporary file renamed into place.
pub fn write_mtx_file(
    coo: &Coo<'_>,
    path: &std::path::Path,
    o: &WriteOptions,
) -> Result<(), CooError> {
    write_mtx_file_as(coo, MtxSymmetry::General, path, o)
}

/// Write `coo` to `path` as Matrix Market with the banner's symmetry (see
/// [`write_mtx_as`]).
pub fn write_mtx_file_as(
    coo: &Coo<'_>,
    symmetry: MtxSymmetry,
    path: &std::path::Path,
    o: &WriteOptions,
) -> Result<(), CooError> {
    to_file(path, |out| write_mtx_as(coo, symmetry, o, out))
}

/// The text `write` appends, written to `path` through a temporary file.
fn to_file(
    path: &std::path::Path,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), CooError>,
) -> Result<(), CooError> {
    let mut out = Vec::new();
    write(&mut out)?;
    text::write_file(path, &out)
}

/// Write the whole matrix `coo` to `path` folded to `symmetry` (see
/// [`write_mtx_symmetric`]), through a temporary file renamed into place.
pub fn write_mtx_file_symmetric(
    coo: &Coo<'_>,
    symmetry: MtxSymmetry,
    path: &std::path::Path,
    o: &WriteOptions,
) -> Result<(), CooError> {
    to_file(path, |out| write_mtx_symmetric(coo, symmetry, o, out))
}
