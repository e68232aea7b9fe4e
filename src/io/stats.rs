//! Statistics of a COO tensor, in the Hurray statistics-section sense: over
//! all logical elements of the tensor (the stored values plus the implicit
//! zeros), computed in one pass over the stored values.

use crate::coo::Coo;
use crate::element::decode;
use crate::element::size;
use crate::element::types::Encoding;

/// `computed_mask` bits of the statistics section.
pub mod mask {
    /// `nnz` is valid.
    pub const NNZ: u32 = 1 << 0;
    /// `sparsity_ratio` is valid.
    pub const SPARSITY: u32 = 1 << 1;
    /// `value_min`, `value_max`, `value_abs_max` are valid.
    pub const VALUE_RANGE: u32 = 1 << 2;
    /// `value_mean`, `value_stddev` are valid.
    pub const VALUE_STATS: u32 = 1 << 3;
    /// `nm_n`, `nm_m` are valid.
    pub const NM_SPARSITY: u32 = 1 << 4;
    /// `has_nan`, `has_inf` are valid.
    pub const NAN_INF: u32 = 1 << 5;
    /// Every defined bit.
    pub const ALL: u32 = (1 << 6) - 1;
}

/// The fields of a statistics section.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Statistics {
    pub computed_mask: u32,
    pub nnz: u64,
    pub sparsity_ratio: f64,
    pub value_min: f64,
    pub value_max: f64,
    pub value_abs_max: f64,
    pub value_mean: f64,
    pub value_stddev: f64,
    pub nm_n: u8,
    pub nm_m: u8,
    pub has_nan: bool,
    pub has_inf: bool,
}

/// The counts-only statistics: `nnz` and, when the tensor has elements,
/// `sparsity_ratio = 1 - nnz / total_elements` (total computed in floating
/// point, so shapes beyond 2^64 elements are fine).
pub fn counts(coo: &Coo<'_>) -> Statistics {
    counts_with_total(coo, size::element_count_f64(coo.shape()))
}

fn counts_with_total(coo: &Coo<'_>, total: f64) -> Statistics {
    let mut s = Statistics {
        computed_mask: mask::NNZ,
        nnz: coo.nnz(),
        ..Statistics::default()
    };
    if total > 0.0 {
        s.computed_mask |= mask::SPARSITY;
        s.sparsity_ratio = 1.0 - coo.nnz() as f64 / total;
    }
    s
}

/// Running moments of the stored, non-NaN values (Welford).
struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
    lo: f64,
    hi: f64,
    has_nan: bool,
    has_inf: bool,
}

fn welford(values: impl Iterator<Item = f64>) -> Moments {
    let mut m = Moments {
        n: 0,
        mean: 0.0,
        m2: 0.0,
        lo: f64::INFINITY,
        hi: f64::NEG_INFINITY,
        has_nan: false,
        has_inf: false,
    };
    for v in values {
        if v.is_nan() {
            m.has_nan = true;
            continue;
        }
        m.has_inf |= v.is_infinite();
        m.lo = m.lo.min(v);
        m.hi = m.hi.max(v);
        m.n += 1;
        let delta = v - m.mean;
        m.mean += delta / m.n as f64;
        m.m2 += delta * (v - m.mean);
    }
    m
}

/// Full statistics in one pass over the stored values. Value-based fields
/// are computed only for real element types (not complex, not a tag accepted
/// in permissive mode); NaN elements are left out of the range and the
/// moments and reported through `has_nan`. Mean and standard deviation are
/// marked valid only when both are finite.
pub fn compute(coo: &Coo<'_>) -> Statistics {
    let total = size::element_count_f64(coo.shape());
    let mut s = counts_with_total(coo, total);
    let Some(ty) = coo.type_info().filter(|t| t.is_real()) else {
        return s;
    };
    let values = coo.values();
    let n = coo.indices().len() / coo.shape().len();
    // Common encodings read straight from the bytes; the rest go through
    // the general decoder. Same arithmetic either way.
    let moments = match ty.encoding {
        Encoding::F64 => welford(
            values[..n * 8]
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
        ),
        Encoding::F32 => welford(
            values[..n * 4]
                .chunks_exact(4)
                .map(|b| f64::from(f32::from_le_bytes(b.try_into().unwrap_or([0; 4])))),
        ),
        _ => welford((0..n).map(|i| {
            let mut storage = [0u8; 16];
            decode::copy_element(ty, values, i, &mut storage);
            decode::to_f64(ty, &storage).unwrap_or(f64::NAN)
        })),
    };
    let Moments {
        n,
        mean,
        m2,
        mut lo,
        mut hi,
        has_nan,
        has_inf,
    } = moments;
    // Combine with the implicit zeros (Chan et al.'s pairwise update).
    let zeros = (total - coo.nnz() as f64).max(0.0);
    let (count, mean_all, m2_all) = if zeros > 0.0 {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
        // Chan et al.'s merge with a block of `zeros` elements of mean 0,
        // written so that nothing cancels: the combined mean is the stored
        // values' mean scaled by their share (`mean - mean * zeros / total`
        // rounds to 0 once `zeros` dwarfs the stored count).
        let na = n as f64;
        let total = na + zeros;
        (
            total,
            mean * (na / total),
            m2 + mean * mean * na * (zeros / total),
        )
    } else {
        (n as f64, mean, m2)
    };
    s.computed_mask |= mask::NAN_INF;
    s.has_nan = has_nan;
    s.has_inf = has_inf;
    if count > 0.0 {
        s.computed_mask |= mask::VALUE_RANGE;
        s.value_min = lo;
        s.value_max = hi;
        s.value_abs_max = lo.abs().max(hi.abs());
        let stddev = (m2_all / count).max(0.0).sqrt();
        if mean_all.is_finite() && stddev.is_finite() {
            s.computed_mask |= mask::VALUE_STATS;
            s.value_mean = mean_all;
            s.value_stddev = stddev;
        }
    }
    s
}
