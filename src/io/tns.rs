//! FROSTT tensor files (`.tns`): one non-zero per line, its N coordinates
//! counted from 1 and then its value, `#` comments. The rank is the number
//! of fields of the first entry minus one (or the length of a given shape);
//! the shape is given by the caller or inferred as the largest coordinate of
//! each mode. Values are read as float64.

use super::fastparse::{self, Spec, Stop, Values};
use super::gzip::{Report, QUIET};
use super::text::{self, Entries, Lines, TextOptions, WriteOptions};
use crate::coo::Coo;
use crate::element::size::{DYNAMIC_DIM, MAX_RANK};
use crate::error::CooError;

/// Read a FROSTT file held in `bytes`; `shape`, when given, fixes the rank
/// and bounds every coordinate. Entry lines are parsed from bytes on up to
/// `o.assemble.threads` threads; anything that path cannot vouch for is
/// read again line by line, which names the problem.
pub fn read_tns(
    bytes: &[u8],
    shape: Option<&[u64]>,
    o: &TextOptions,
) -> Result<Coo<'static>, CooError> {
    read(bytes, shape, o, true)
}

/// [`read_tns`] by the line-by-line path alone: the reference the fast
/// path is tested against.
#[doc(hidden)]
pub fn read_tns_line_by_line(
    bytes: &[u8],
    shape: Option<&[u64]>,
    o: &TextOptions,
) -> Result<Coo<'static>, CooError> {
    read(bytes, shape, o, false)
}

fn read(
    bytes: &[u8],
    shape: Option<&[u64]>,
    o: &TextOptions,
    fast: bool,
) -> Result<Coo<'static>, CooError> {
    let bytes = &text::text_of(bytes)?[..];
    let quick = if fast {
        fast_entries(bytes, shape, o.assemble.threads)?
    } else {
        None
    };
    let (mut e, extents) = match quick {
        Some(x) => x,
        None => read_entries(bytes, shape)?,
    };
    text::assemble_entries(&mut e, &extents, 0x04, false, o, |k| {
        (text::line_of_item(bytes, '#', 0, k) as u64, false)
    })
}

/// The entries and extents by the fast path, or `None` when it cannot
/// vouch for them.
fn fast_entries(
    bytes: &[u8],
    shape: Option<&[u64]>,
    threads: usize,
) -> Result<Option<(Entries, Vec<u64>)>, CooError> {
    let rank = match shape {
        Some(s) => s.len(),
        None => {
            let mut lines = Lines::new(bytes, '#');
            let mut tok = Vec::new();
            if !matches!(lines.next_tokens(&mut tok), Ok(true))
                || tok.len() < 2
                || tok.len() > MAX_RANK as usize + 1
            {
                return Ok(None);
            }
            tok.len() - 1
        }
    };
    let spec = Spec {
        rank,
        extents: shape,
        values: Values::Real,
        comment: b'#',
    };
    let p = match fastparse::parse(bytes, &spec, None, threads) {
        Ok(p) => p,
        Err(Stop::Failed(e)) => return Err(e),
        Err(Stop::Unsure) => return Ok(None),
    };
    // An inferred extent of 2^64 - 1 is refused by the line-by-line path,
    // which names the line.
    if shape.is_none() && p.max.contains(&DYNAMIC_DIM) {
        return Ok(None);
    }
    let extents = shape.map_or(p.max, |s| s.to_vec());
    Ok(Some((p.entries, extents)))
}

/// The entries, line by line: the reference path, which names the line,
/// column and token of every problem.
fn read_entries(bytes: &[u8], shape: Option<&[u64]>) -> Result<(Entries, Vec<u64>), CooError> {
    let mut lines = Lines::new(bytes, '#');
    let mut tok = Vec::new();
    let mut rank = shape.map(|s| s.len());
    let mut e = Entries::default();
    let mut extents = shape.map(|s| s.to_vec()).unwrap_or_default();
    while lines.next_tokens(&mut tok)? {
        let r = match rank {
            Some(r) => r,
            None => {
                if tok.len() < 2 {
                    return Err(tok[0].error(
                        "a FROSTT entry is its coordinates (at least one) followed by its value",
                    ));
                }
                let r = tok.len() - 1;
                crate::coo::check_rank(u32::try_from(r).unwrap_or(u32::MAX))?;
                extents.resize(r, 0);
                rank = Some(r);
                r
            }
        };
        if tok.len() != r + 1 {
            let what = format!(
                "an entry of this rank-{r} tensor has {} fields ({r} coordinates and a value)",
                r + 1
            );
            return Err(match tok.get(r + 1) {
                Some(extra) => extra.error(&format!("unexpected field: {what}")),
                None => CooError::parse(
                    lines.line(),
                    None,
                    format!("{} field(s), but {what}", tok.len()),
                ),
            });
        }
        for (d, t) in tok[..r].iter().enumerate() {
            let v = t.uint()?;
            if v == 0 {
                return Err(t.error(&format!(
                    "coordinate of mode {} is 0; FROSTT counts from 1",
                    d + 1
                )));
            }
            match shape {
                Some(s) if v > s[d] => {
                    return Err(t.error(&format!(
                        "coordinate of mode {} is beyond the given extent {}",
                        d + 1,
                        s[d]
                    )))
                }
                Some(_) => {}
                None if v == DYNAMIC_DIM => {
                    return Err(t.error(&format!(
                        "coordinate of mode {} is 2^64 - 1, which makes the inferred extent \
                         2^64 - 1, the dynamic-dimension sentinel: the largest coordinate is \
                         2^64 - 2",
                        d + 1
                    )))
                }
                None => extents[d] = extents[d].max(v),
            }
            text::push(&mut e.coords, v - 1, "the coordinates")?;
        }
        text::push(&mut e.values, tok[r].real()?.to_bits(), "the values")?;
        e.n += 1;
    }
    if rank.is_none() {
        return Err(CooError::parse(
            lines.line(),
            None,
            "the file holds no entries and no shape was given, so its rank is unknown",
        ));
    }
    Ok((e, extents))
}

/// Append `coo` to `out` as a FROSTT file: a comment line with the shape,
/// then one line per entry, coordinates counted from 1, in the tensor's
/// order. Complex tensors have no FROSTT form and are refused.
pub fn write_tns(coo: &Coo<'_>, o: &WriteOptions, out: &mut Vec<u8>) -> Result<(), CooError> {
    use std::io::Write;
    text::check_precision(o.precision)?;
    let ty = text::known_type(coo, "FROSTT")?;
    if text::field_of(ty) == text::Field::Complex {
        return Err(CooError::Unsupported(format!(
            "FROSTT holds real values; this tensor is {} (write it as Matrix Market)",
            ty.name()
        )));
    }
    let _ = write!(
        out,
        "# written by libhurray_coo {} from a {} tensor of shape",
        env!("CARGO_PKG_VERSION"),
        ty.name()
    );
    for d in coo.shape() {
        let _ = write!(out, " {d}");
    }
    out.push(b'\n');
    if o.pattern || o.array {
        return Err(CooError::Argument(
            "a FROSTT file has a value on every line, one line per entry; a pattern or a dense \
             array is written as Matrix Market"
                .into(),
        ));
    }
    text::write_entries(coo, ty, true, text::ALL, o, out)
}

/// Read the FROSTT file at `path` (see [`read_tns`]).
pub fn read_tns_file(
    path: &std::path::Path,
    shape: Option<&[u64]>,
    o: &TextOptions,
) -> Result<Coo<'static>, CooError> {
    read_tns_file_reporting(path, shape, o, QUIET)
}

/// [`read_tns_file`], telling `report` as the file is read how much of it
/// has been (what a progress bar shows).
pub fn read_tns_file_reporting(
    path: &std::path::Path,
    shape: Option<&[u64]>,
    o: &TextOptions,
    report: Report<'_>,
) -> Result<Coo<'static>, CooError> {
    read_tns(&text::read_text_file(path, report)?, shape, o).map_err(|e| text::in_file(path, e))
}

/// Write `coo` to `path` as FROSTT (see [`write_tns`]), through a
/// temporary file renamed into place.
pub fn write_tns_file(
    coo: &Coo<'_>,
    path: &std::path::Path,
    o: &WriteOptions,
) -> Result<(), CooError> {
    let mut out = Vec::new();
    write_tns(coo, o, &mut out)?;
    text::write_file(path, &out)
}
