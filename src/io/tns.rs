//! FROSTT tensor files (`.tns`): one non-zero per line, its N coordinates
//! counted from 1 and then its value, `#` comments. The rank is the number
//! of fields of the first entry minus one (or the length of a given shape);
//! the shape is given by the caller or inferred as the largest coordinate of
//! each mode. Values are read as float64.

use super::text::{self, Lines, TextOptions, WriteOptions};
use crate::assemble::{assemble, CoordArrays, IndexType, Triplets};
use crate::coo::Coo;
use crate::error::{CooError, Coords};

/// Read a FROSTT file held in `bytes`; `shape`, when given, fixes the rank
/// and bounds every coordinate.
pub fn read_tns(
    bytes: &[u8],
    shape: Option<&[u64]>,
    o: &TextOptions,
) -> Result<Coo<'static>, CooError> {
    let mut lines = Lines::new(bytes, '#')?;
    let mut tok = Vec::new();
    let mut rank = shape.map(|s| s.len());
    let mut extents: Vec<u64> = shape.map(|s| s.to_vec()).unwrap_or_default();
    let mut coords = Vec::new();
    let mut values = Vec::new();
    let mut n = 0usize;
    while lines.next_tokens(&mut tok) {
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
                text::reserve_for(
                    &mut coords,
                    u64::MAX,
                    bytes.len(),
                    2 * r + 2,
                    8 * r,
                    "the coordinates",
                )?;
                text::reserve_for(
                    &mut values,
                    u64::MAX,
                    bytes.len(),
                    2 * r + 2,
                    8,
                    "the values",
                )?;
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
                None => CooError::Parse(format!(
                    "line {}: {} field(s), but {what}",
                    lines.line(),
                    tok.len()
                )),
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
                None => extents[d] = extents[d].max(v),
            }
            text::push_bytes(
                &mut coords,
                &(v as i64 - 1).to_le_bytes(),
                "the coordinates",
            )?;
        }
        text::push_bytes(&mut values, &tok[r].real()?.to_le_bytes(), "the values")?;
        n += 1;
    }
    if rank.is_none() {
        return Err(CooError::Parse(format!(
            "line {}: the file holds no entries and no shape was given, so its rank is unknown",
            lines.line()
        )));
    }
    let t = Triplets {
        shape: &extents,
        n,
        index_type: IndexType::I64,
        base: 0,
        coords: CoordArrays::Interleaved(&coords),
        type_tag: 0x04,
        values: Some(&values),
    };
    let mut ao = o.assemble;
    ao.skip_plan = true;
    match assemble(&t, &ao) {
        Ok((coo, _)) => Ok(coo),
        Err(CooError::TripletDuplicate {
            second,
            first,
            coords,
            ..
        }) => Err(CooError::DuplicateLine(format!(
            "line {} duplicates line {}: both are entry {} (counted from 1); pass a duplicate \
             policy (SUM, FIRST, LAST, MIN, MAX) to combine them",
            text::line_of_item(bytes, '#', 0, second),
            text::line_of_item(bytes, '#', 0, first),
            Coords(coords.0.iter().map(|x| x + 1).collect())
        ))),
        Err(other) => Err(other),
    }
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
    let rank = coo.rank() as usize;
    let n = coo.nnz() as usize;
    let values = coo.values();
    text::reserve_for(
        out,
        coo.nnz(),
        usize::MAX,
        1,
        8 * rank + 16,
        "the FROSTT text",
    )?;
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
    for i in 0..n {
        text::ensure(out, 64 + 21 * rank, "the FROSTT text")?;
        for c in coo.entry(i) {
            let _ = write!(out, "{} ", c + 1);
        }
        text::write_value(out, ty, values, i, o.precision);
        out.push(b'\n');
    }
    Ok(())
}

/// Read the FROSTT file at `path` (see [`read_tns`]).
pub fn read_tns_file(
    path: &std::path::Path,
    shape: Option<&[u64]>,
    o: &TextOptions,
) -> Result<Coo<'static>, CooError> {
    read_tns(&text::read_file(path)?, shape, o).map_err(|e| text::in_file(path, e))
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
