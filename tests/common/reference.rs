//! The reference implementation's view of our tensors (hurray-core 0.1.0).

use hurray_coo::io::stats;
use hurray_coo::Coo;
use hurray_core::descriptor::{Statistics as RefStats, StatisticsMask, TensorDescriptor};
use hurray_core::layout::{CooLayout, LayoutDescriptor};
use hurray_core::{BufferHandle, DeviceTag, ElementType, Shape, SyncMode};

/// The descriptor hurray-core builds for `coo` (with `stats` as its
/// statistics section).
pub fn reference_descriptor(coo: &Coo<'_>, stats: Option<stats::Statistics>) -> TensorDescriptor {
    let handle = |len: usize| {
        let align = if len == 0 { 1 } else { 64 };
        BufferHandle::new(len as u64, align, DeviceTag::Cpu, SyncMode::ProducerSynced).unwrap()
    };
    let stats = stats.map(|s| RefStats {
        computed_mask: StatisticsMask(s.computed_mask),
        nnz: s.nnz,
        sparsity_ratio: s.sparsity_ratio,
        value_min: s.value_min,
        value_max: s.value_max,
        value_abs_max: s.value_abs_max,
        value_mean: s.value_mean,
        value_stddev: s.value_stddev,
        nm_n: s.nm_n,
        nm_m: s.nm_m,
        has_nan: s.has_nan,
        has_inf: s.has_inf,
    });
    TensorDescriptor::new(
        1,
        0,
        ElementType::from_tag(coo.type_tag()).unwrap(),
        Shape::new(coo.shape().to_vec()).unwrap(),
        0,
        LayoutDescriptor::Coo(CooLayout::new(coo.nnz(), coo.is_sorted())),
        vec![
            handle(coo.values().len()),
            handle(coo.indices_bytes().len()),
        ],
        None,
        None,
        stats,
        None,
    )
    .unwrap()
}
