//! A Matrix Market file read straight into the consumer's CSR or CSC
//! arrays (scipy's `mmread(f).tocsr()`): the same lines, checks, policies,
//! mirror images and errors as [`read_mtx_file`](super::read_mtx_file)
//! followed by a compressed export, but the parsed entries are assembled
//! into the caller's arrays, with no canonical handle (24 bytes per entry)
//! in between.
//!
//! The entry count is known only once duplicates are combined, so the
//! caller gives room, as for an assembly into CSR: [`mtx_file_size`] reads
//! the banner and the size line and says how much always suffices.

use super::{head, parsed_file, type_tag, Again, MtxField, MtxHeader, MtxSymmetry, PIECE};
use crate::assemble::ROOM_HINT;
use crate::convert::{assemble_compressed, export_into, CompressedOut};
use crate::error::CooError;
use crate::io::gzip::QUIET;
use crate::io::text::{self, TextOptions};
use std::path::Path;

/// What a file's banner and size line say about its compressed form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MtxSize {
    /// The banner; `stored` is the count the size line declares.
    pub header: MtxHeader,
    pub rows: u64,
    pub cols: u64,
    /// The type the values are read into (the options' value type, or the
    /// file's own).
    pub type_tag: u8,
    /// The most entries the read can give: the stored ones, and as many
    /// mirror images when the file is mirrored. Room for these always
    /// suffices.
    pub most: u64,
}

/// The first bytes of a file read to find its banner and size line; a
/// file whose comments run longer is read whole.
const HEAD: usize = 1 << 20;

/// The banner and size line of the Matrix Market file at `path`, and the
/// room a compressed read of it with options `o` needs (see [`MtxSize`]).
/// Only the head of the file is read (decompressed, when gzip).
pub fn mtx_file_size(path: &Path, o: &TextOptions) -> Result<MtxSize, CooError> {
    let in_file = |e| text::in_file(path, e);
    let io = crate::io::fsutil::io_error(path, "read");
    let mut f = crate::io::gzip::open_text(path, QUIET)?.reader;
    let mut buf = Vec::new();
    let end = crate::io::fsutil::read_up_to(&mut f, &mut buf, HEAD, "the file's head", &io)?;
    let mut tok = Vec::new();
    let h = match head(&buf, &mut tok) {
        Ok(h) => h,
        // A head longer than HEAD bytes: the whole text, which also names
        // the problem when there is one.
        Err(_) if !end => {
            drop(tok);
            drop(f);
            let all = text::read_text_file(path, QUIET)?;
            let mut tok = Vec::new();
            let h = head(&all, &mut tok).map_err(in_file)?;
            return size_of(h.h, h.rows, h.cols, h.declared, o);
        }
        Err(e) => return Err(in_file(e)),
    };
    size_of(h.h, h.rows, h.cols, h.declared, o)
}

fn size_of(
    h: MtxHeader,
    rows: u64,
    cols: u64,
    declared: u64,
    o: &TextOptions,
) -> Result<MtxSize, CooError> {
    let mirrored = h.symmetry != MtxSymmetry::General && !o.keep_triangular;
    let most = match mirrored {
        true => declared.checked_mul(2).ok_or_else(|| CooError::Overflow {
            what: format!("{declared} entries and their mirror images"),
        })?,
        false => declared,
    };
    Ok(MtxSize {
        header: MtxHeader {
            stored: declared,
            ..h
        },
        rows,
        cols,
        type_tag: o.value_type.unwrap_or(type_tag(h.field)),
        most,
    })
}

/// Read the Matrix Market file at `path` as [`read_mtx_file`](super::read_mtx_file)
/// does, into `out` as a CSR or CSC export of that tensor would be: the
/// entry count and the banner. `out`'s offsets are exactly (rows or
/// columns) + 1; its indices and values need room for the entries only
/// (what [`mtx_file_size`] reports always suffices), and nothing past them
/// is written. A pattern file's values may be empty: then none are written.
pub fn read_mtx_file_compressed(
    path: &Path,
    o: &TextOptions,
    out: CompressedOut<'_>,
) -> Result<(u64, MtxHeader), CooError> {
    let in_file = |e| text::in_file(path, e);
    let again = Again::new(path);
    let p = parsed_file(path, o, PIECE, QUIET, &again)?;
    let h = p.header();
    let most = p.e.n as u64;
    let tag = type_tag(p.h.field);
    let room = |e| room_for_file(e, most);
    let write_values = p.h.field != MtxField::Pattern || !out.values.is_empty();
    if o.value_type.is_some_and(|t| t != tag) {
        // Values in another type are checked after duplicates combine, on
        // the canonical tensor: that path, then its export.
        let threads = o.assemble.threads;
        let (coo, h) = super::finish(p, o, |k| again.line_of(k)).map_err(in_file)?;
        let nnz = export_into(&coo, out, write_values, threads).map_err(room)?;
        return Ok((nnz, h));
    }
    let t = text::triplets_of(&p.e, &p.shape, tag, p.h.field == MtxField::Pattern);
    let mut ao = o.assemble;
    ao.skip_plan = true;
    match assemble_compressed(&t, &ao, out) {
        Ok((nnz, _)) => Ok((nnz, h)),
        Err(e) => {
            let e = text::duplicate_lines(e, p.item_line(|k| again.line_of(k)));
            Err(in_file(room_for_file(e, most)))
        }
    }
}

/// A lack of room said as a file reader's caller needs it: room for every
/// entry the file gives always suffices.
fn room_for_file(e: CooError, most: u64) -> CooError {
    match e {
        CooError::BufferTooSmall {
            what,
            got,
            needed,
            why,
        } => CooError::BufferTooSmall {
            what,
            got,
            needed,
            why: why.replace(
                ROOM_HINT,
                &format!(
                    "room for the {most} entries the file gives, mirror images included, \
                     always suffices"
                ),
            ),
        },
        other => other,
    }
}

impl MtxSize {
    /// The bytes of a `format` read with `index_type` indices: offsets
    /// exactly, indices and values for the most entries (always enough).
    pub fn room(
        &self,
        format: crate::convert::Format,
        index_type: crate::assemble::IndexType,
    ) -> Result<crate::convert::CompressedSizes, CooError> {
        let ty = crate::element::types::type_info(self.type_tag).ok_or(CooError::OutOfRange {
            what: "value type",
            value: u64::from(self.type_tag),
            allowed: "the tag of a real or integer element type".into(),
        })?;
        crate::convert::compressed_sizes_of(
            [self.rows, self.cols],
            self.most,
            ty,
            format,
            index_type,
        )
    }
}
