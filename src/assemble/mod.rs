//! Assembly: any triplets (coordinates in the caller's integer type and
//! base, interleaved or one array per dimension, duplicates allowed) into a
//! canonical COO tensor (sorted, duplicate-free, validated), and a plan that
//! maps a new values array of the same triplets into the canonical values
//! without sorting or allocating (`plan.rs`).
//!
//! `read.rs` turns the caller's coordinates into checked 0-based ones;
//! `combine.rs` holds the value arithmetic of the duplicate policies.

mod buckets;
mod combine;
mod compressed;
mod plan;
mod rank2;
mod read;
mod sorted_pairs;

pub(crate) use compressed::{
    compressed_room, copy_split, sorted_into_csr, try_compressed, CompressedArrays, ROOM_HINT,
};
pub use plan::Plan;
pub(crate) use read::Narrow;
pub use read::{CoordArrays, IndexType};

use crate::aligned::AlignedBuf;
use crate::coo::Coo;
use crate::element::size;
use crate::element::types::{type_info, TagClass, TypeInfo};
use crate::error::{CooError, Coords};
use combine::Combine;
use read::Reader;

/// What to do with triplets that share a coordinate tuple (GraphBLAS and
/// PETSc users know these).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Duplicates {
    /// Refuse them, naming both triplets (the default).
    #[default]
    Error,
    /// Add them, in triplet order, in the type's own arithmetic.
    Sum,
    /// Keep the value of the first (lowest-numbered) triplet.
    First,
    /// Keep the value of the last triplet.
    Last,
    /// Keep the smallest value (NaN loses to any number).
    Min,
    /// Keep the largest value (NaN loses to any number).
    Max,
}

impl Duplicates {
    /// Every policy, in the order of the C API's codes.
    pub const ALL: [Duplicates; 6] = [
        Duplicates::Error,
        Duplicates::Sum,
        Duplicates::First,
        Duplicates::Last,
        Duplicates::Min,
        Duplicates::Max,
    ];

    /// The policy with this name, in any case ("sum", "SUM").
    pub fn from_name(name: &str) -> Option<Duplicates> {
        Duplicates::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(name))
    }

    pub fn name(self) -> &'static str {
        match self {
            Duplicates::Error => "ERROR",
            Duplicates::Sum => "SUM",
            Duplicates::First => "FIRST",
            Duplicates::Last => "LAST",
            Duplicates::Min => "MIN",
            Duplicates::Max => "MAX",
        }
    }
}

/// How to assemble.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AssembleOptions {
    pub duplicates: Duplicates,
    /// Skip triplets with a negative coordinate (PETSc's "skip this
    /// contribution"); without it a negative coordinate is an error.
    pub skip_negative: bool,
    /// Leave out entries whose (combined) value is zero.
    pub drop_zeros: bool,
    /// Threads for the sort (0 and 1: the calling thread only), as
    /// [`crate::threads`] says; all done when the call returns.
    pub threads: usize,
    /// Build no re-assembly plan (it costs 4 to 8 bytes per triplet, plus 8
    /// per entry in the gather layout).
    pub skip_plan: bool,
    /// Allow SUM for the types whose sum is refused by default (sub-byte,
    /// float8, float128, bool): computed in double and rounded to the type.
    pub rounded_sum: bool,
    /// An assembly into the caller's CSR or CSC arrays may use their room
    /// past the result as its work space (their bytes past the result are
    /// then unspecified); every other assembly ignores it (the C API
    /// refuses the flag there).
    pub scratch_in_output: bool,
}

/// The caller's triplets.
#[derive(Clone, Copy, Debug)]
pub struct Triplets<'a> {
    /// Extents of the tensor (0-based, as the format has them).
    pub shape: &'a [u64],
    /// Number of triplets.
    pub n: usize,
    /// Integer type of the coordinates.
    pub index_type: IndexType,
    /// The caller's index base: 0, or 1 (Fortran, Julia, Matrix Market).
    pub base: u8,
    pub coords: CoordArrays<'a>,
    /// Element type of `values` (and of the result); ignored for a pattern.
    pub type_tag: u8,
    /// `n` values packed as the type packs them, or `None` for a pattern
    /// (the result is then bool, every stored entry true).
    pub values: Option<&'a [u8]>,
}

/// A pattern's result type: bool, every stored entry true.
const PATTERN_TYPE: u8 = 0x20;

/// Assemble `t` into a canonical tensor, and the plan that re-assembles new
/// values of the same triplets into it.
pub fn assemble(
    t: &Triplets<'_>,
    o: &AssembleOptions,
) -> Result<(Coo<'static>, Option<Plan>), CooError> {
    let (ty, reader) = prepare(t, o)?;
    if let Some(done) = rank2::try_assemble(t, o, ty, &reader) {
        return done;
    }
    let kept = reader.check_all(o.skip_negative)?;
    let order = reader.sorted(&kept, o.threads)?;
    build(t, o, ty, &reader, &order)
}

/// The checks every assembly makes before it reads a coordinate: the
/// result's type, the policy for it, the shape and coordinate arrays, the
/// values' size.
fn prepare<'a>(
    t: &Triplets<'a>,
    o: &AssembleOptions,
) -> Result<(&'static TypeInfo, Reader<'a>), CooError> {
    let ty = element_type(t)?;
    combine::check_policy(ty, t.values.is_some(), o.duplicates, o.rounded_sum)?;
    let reader = Reader::new(t)?;
    if let Some(values) = t.values {
        let need = size::values_bytes(ty, t.n as u64)?;
        if values.len() as u64 != need {
            return Err(CooError::BufferSize {
                buffer: "triplet values",
                got: values.len() as u64,
                expected: need,
                expected_why: format!("{} triplets of {}", t.n, ty.name()),
            });
        }
    }
    Ok((ty, reader))
}

/// The result's element type, after the checks `prepare` makes.
pub(crate) fn checked_type(
    t: &Triplets<'_>,
    o: &AssembleOptions,
) -> Result<&'static TypeInfo, CooError> {
    Ok(prepare(t, o)?.0)
}

/// The result's element type.
fn element_type(t: &Triplets<'_>) -> Result<&'static TypeInfo, CooError> {
    if t.values.is_none() {
        return Ok(type_info(PATTERN_TYPE).expect("bool is in the type table"));
    }
    match TagClass::of(t.type_tag) {
        TagClass::Known(ty) => Ok(ty),
        class => Err(CooError::InvalidType {
            tag: t.type_tag,
            class: class.describe(),
            hint: "; assembly needs a type whose values it can combine",
        }),
    }
}

/// Walk the triplets in coordinate order (ties in triplet order), combine
/// each group of equal coordinates, and write the canonical buffers.
fn build(
    t: &Triplets<'_>,
    o: &AssembleOptions,
    ty: &'static TypeInfo,
    reader: &Reader<'_>,
    order: &[usize],
) -> Result<(Coo<'static>, Option<Plan>), CooError> {
    let rank = t.shape.len();
    let groups = group_bounds(order, reader)?;
    if o.duplicates == Duplicates::Error {
        if let Some(err) = lowest_duplicate(&groups, order, reader, t.base) {
            return Err(err);
        }
    }
    let upper = groups.len();
    let mut indices = AlignedBuf::zeroed(
        size::to_usize(
            size::indices_bytes(upper as u64, rank as u32)?,
            "the indices",
        )?,
        "the assembled indices",
    )?;
    let mut values = AlignedBuf::zeroed(
        size::to_usize(size::values_bytes(ty, upper as u64)?, "the values")?,
        "the assembled values",
    )?;
    let mut plan = match o.skip_plan {
        true => None,
        false => Some(Plan::new(
            t.n,
            ty,
            o.duplicates,
            t.values.is_some(),
            t.base,
        )?),
    };
    let combine = Combine::new(ty, o.duplicates, t.values, t.base);
    let mut nnz = 0usize;
    let mut coords = [0u64; 64];
    for g in groups.windows(2) {
        let members = &order[g[0]..g[1]];
        let value = combine.group(members, reader)?;
        if o.drop_zeros && combine.is_zero(&value) {
            continue;
        }
        reader.coords(members[0], &mut coords[..rank]);
        for (d, &c) in coords[..rank].iter().enumerate() {
            indices.as_bytes_mut()[(nnz * rank + d) * 8..][..8].copy_from_slice(&c.to_le_bytes());
        }
        crate::element::encode::store_element(ty, values.as_bytes_mut(), nnz, &value);
        if let Some(p) = plan.as_mut() {
            p.map_group(members)?;
        }
        nnz += 1;
    }
    indices.truncate(nnz * rank * 8);
    values.truncate(size::values_bytes(ty, nnz as u64)? as usize);
    let coo = Coo::from_owned(ty.tag, t.shape, true, values, indices)?;
    Ok((coo, plan.map(|p| p.finish_on(o.threads))))
}

/// Start of each group of equal coordinates in `order`, and its end.
fn group_bounds(order: &[usize], reader: &Reader<'_>) -> Result<Vec<usize>, CooError> {
    let mut bounds = Vec::new();
    bounds
        .try_reserve_exact(order.len() + 1)
        .map_err(|_| CooError::Alloc {
            bytes: (order.len() + 1) * 8,
            what: "assembly groups",
        })?;
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || !reader.same_coords(order[k - 1], i) {
            bounds.push(k);
        }
    }
    bounds.push(order.len());
    Ok(bounds)
}

/// With the ERROR policy: the lowest-numbered triplet that repeats an
/// earlier one, named with the first it repeats, in the caller's base.
fn lowest_duplicate(
    groups: &[usize],
    order: &[usize],
    reader: &Reader<'_>,
    base: u8,
) -> Option<CooError> {
    let (second, first) = groups
        .windows(2)
        .filter(|g| g[1] - g[0] > 1)
        .map(|g| (order[g[0] + 1], order[g[0]]))
        .min()?;
    let rank = reader.rank();
    let mut c = [0u64; 64];
    reader.coords(first, &mut c[..rank]);
    let b = u64::from(base);
    let written = Coords(c[..rank].iter().map(|x| x + b).collect());
    Some(CooError::TripletDuplicate {
        second: second as u64,
        first: first as u64,
        coords: written,
        base,
    })
}
