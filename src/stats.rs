//! Statistics of a COO tensor, in the Hurray statistics-section sense: over
//! all logical elements of the tensor (the stored values plus the implicit
//! zeros), computed in one pass over the stored values.

use crate::coo::Coo;
use crate::decode;
use crate::size;

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
    let total = size::element_count_f64(coo.shape());
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

/// Full statistics in one pass over the stored values. Value-based fields
/// are computed only for real element types (not complex, not a tag accepted
/// in permissive mode); NaN elements are left out of the range and the
/// moments and reported through `has_nan`. Mean and standard deviation are
/// marked valid only when both are finite.
pub fn compute(coo: &Coo<'_>) -> Statistics {
    let mut s = counts(coo);
    let Some(ty) = coo.type_info().filter(|t| t.is_real()) else {
        return s;
    };
    // Welford over the stored, non-NaN values.
    let (mut n, mut mean, mut m2) = (0u64, 0.0f64, 0.0f64);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut has_nan, mut has_inf) = (false, false);
    let values = coo.values();
    let mut storage = [0u8; 16];
    for i in 0..coo.indices().len() / coo.shape().len() {
        decode::copy_element(ty, values, i, &mut storage);
        let v = decode::to_f64(ty, &storage).unwrap_or(f64::NAN);
        if v.is_nan() {
            has_nan = true;
            continue;
        }
        has_inf |= v.is_infinite();
        lo = lo.min(v);
        hi = hi.max(v);
        n += 1;
        let delta = v - mean;
        mean += delta / n as f64;
        m2 += delta * (v - mean);
    }
    // Combine with the implicit zeros (Chan et al.'s pairwise update).
    let zeros = (size::element_count_f64(coo.shape()) - coo.nnz() as f64).max(0.0);
    let (count, mean_all, m2_all) = if zeros > 0.0 {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
        let na = n as f64;
        let total = na + zeros;
        let delta = -mean;
        (
            total,
            mean + delta * zeros / total,
            m2 + delta * delta * na * zeros / total,
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
