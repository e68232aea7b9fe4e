//! The wire format: golden vectors from the reference implementation, interop
//! with hurray-core 0.1.0 both ways, one test per rejection rule, and
//! truncation at every byte.

mod common;

use common::reference::reference_descriptor;
use common::{random_tensor, Fixture, Rng};
use hurray_coo::io::descriptor::{self, encode, encoded_len, parse, Descriptor, StatsChoice};
use hurray_coo::io::stats::{self, mask};
use hurray_coo::{Coo, CooError, Options, Status, TYPES};

use hurray_core::descriptor::TensorDescriptor;

fn golden(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/vectors/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn encode_vec(coo: &Coo<'_>, stats: StatsChoice) -> Vec<u8> {
    let mut out = vec![0u8; encoded_len(coo.rank(), stats)];
    let n = encode(coo, stats, &mut out).unwrap();
    assert_eq!(n, out.len());
    out
}

fn seed() -> Fixture {
    Fixture::seed()
}

fn assert_err(r: Result<Descriptor, CooError>, status: Status, needle: &str) {
    match r {
        Ok(d) => panic!("accepted: {d:?}"),
        Err(e) => {
            assert_eq!(e.status(), status, "{e}");
            assert!(e.to_string().contains(needle), "{e:?} lacks {needle:?}");
        }
    }
}

// ---- Golden vectors -----------------------------------------------------------

#[test]
fn golden_copies_match_the_shared_vectors() {
    let shared = format!("{}/../shared/spec/vectors", env!("CARGO_MANIFEST_DIR"));
    let Ok(dir) = std::fs::read_dir(&shared) else {
        eprintln!("{shared} not present; comparing against the committed copies only");
        return;
    };
    let mut n = 0;
    for entry in dir {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        assert_eq!(std::fs::read(&path).unwrap(), golden(&name), "{name}");
        n += 1;
    }
    assert_eq!(n, 4);
}

#[test]
fn golden_seed_is_read_and_reproduced_byte_for_byte() {
    let bytes = golden("seed_f32_4x4_sorted.bin");
    let d = parse(&bytes, false).unwrap();
    assert_eq!(
        (d.type_tag, d.shape.clone(), d.nnz, d.is_sorted),
        (0x03, vec![4, 4], 3, true)
    );
    assert_eq!(d.length, 93);
    assert_eq!(d.buffers[0].byte_size, 12);
    assert_eq!(d.buffers[1].byte_size, 48);
    assert_eq!(d.buffers[0].alignment, 64);
    let f = seed();
    assert_eq!(encode_vec(&f.strict().unwrap(), StatsChoice::None), bytes);
}

#[test]
fn golden_stats_is_read_and_reproduced_byte_for_byte() {
    let bytes = golden("seed_f32_4x4_stats.bin");
    let d = parse(&bytes, false).unwrap();
    let s = d.statistics.unwrap();
    assert_eq!(s.computed_mask, mask::NNZ | mask::SPARSITY);
    assert_eq!(s.nnz, 3);
    assert_eq!(s.sparsity_ratio, 0.8125);
    let f = seed();
    assert_eq!(encode_vec(&f.strict().unwrap(), StatsChoice::Counts), bytes);
}

#[test]
fn golden_empty_is_read_and_reproduced_byte_for_byte() {
    let bytes = golden("empty_f32_0x5.bin");
    let d = parse(&bytes, false).unwrap();
    assert_eq!((d.shape.clone(), d.nnz), (vec![0, 5], 0));
    assert_eq!(d.buffers[0].alignment, 1);
    let f = Fixture::new(0x03, &[0, 5], &[], &[], d.is_sorted);
    assert_eq!(encode_vec(&f.strict().unwrap(), StatsChoice::None), bytes);
}

#[test]
fn golden_int4_is_read_and_reproduced_byte_for_byte() {
    let bytes = golden("int4_rank1_5.bin");
    let d = parse(&bytes, false).unwrap();
    assert_eq!((d.type_tag, d.shape.clone(), d.nnz), (0x48, vec![100], 5));
    assert_eq!(d.buffers[0].byte_size, 3);
    let f = Fixture::new(
        0x48,
        &[100],
        &[&[1], &[5], &[9], &[50], &[99]],
        &[0x21, 0x43, 0x05],
        d.is_sorted,
    );
    assert_eq!(encode_vec(&f.strict().unwrap(), StatsChoice::None), bytes);
}

// ---- Interop with the reference implementation ---------------------------------

#[test]
fn every_type_rank_and_order_round_trips_with_hurray_core() {
    let mut rng = Rng::new(7);
    let mut cases = 0;
    for ty in &TYPES {
        for rank in [1usize, 2, 3, 8, 64] {
            for sorted in [true, false] {
                for nnz in [0usize, 1, 17] {
                    let f = random_tensor(&mut rng, ty.tag, rank, sorted, nnz);
                    let coo = f.strict().unwrap();
                    for choice in [StatsChoice::None, StatsChoice::Counts, StatsChoice::Full] {
                        let ours = encode_vec(&coo, choice);
                        // Ours, decoded by the reference: identical fields.
                        let theirs_view = TensorDescriptor::decode(&ours).unwrap_or_else(|e| {
                            panic!("hurray-core rejects our {}: {e}", ty.name())
                        });
                        let section = match choice {
                            StatsChoice::None => None,
                            StatsChoice::Counts => Some(stats::counts(&coo)),
                            StatsChoice::Full => Some(stats::compute(&coo)),
                        };
                        let expected = reference_descriptor(&coo, section);
                        assert_eq!(theirs_view, expected, "{} rank {rank}", ty.name());
                        // Theirs, encoded by the reference: byte-identical, and
                        // decoded by us to the same tensor.
                        let theirs = expected.encode().unwrap();
                        assert_eq!(theirs, ours, "{} rank {rank} {choice:?}", ty.name());
                        let d = parse(&theirs, false).unwrap();
                        assert_eq!(d.type_tag, ty.tag);
                        assert_eq!(d.shape, coo.shape());
                        assert_eq!((d.nnz, d.is_sorted), (coo.nnz(), coo.is_sorted()));
                        assert_eq!(d.statistics, section);
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, TYPES.len() * 5 * 2 * 3 * 3);
}

#[test]
fn reference_descriptors_with_shards_are_read_and_exposed() {
    let f = seed();
    let coo = f.strict().unwrap();
    let mut d = reference_descriptor(&coo, None);
    d.shard = Some(hurray_core::descriptor::ShardDescriptor::new(vec![8, 12], vec![4, 8]).unwrap());
    let bytes = d.encode().unwrap();
    let ours = parse(&bytes, false).unwrap();
    let shard = ours.shard.unwrap();
    assert_eq!(shard.parent_shape, vec![8, 12]);
    assert_eq!(shard.offset, vec![4, 8]);
}

// ---- Rejection rules, one hand-broken descriptor each --------------------------

fn seed_bytes() -> Vec<u8> {
    golden("seed_f32_4x4_sorted.bin")
}

/// Offsets in the seed descriptor (rank 2).
const FLAGS: usize = 10;
const TYPE: usize = 14;
const LAYOUT: usize = 15;
const RANK: usize = 16;
const SHAPE: usize = 20;
const BYTE_OFFSET: usize = 36;
const SORTED: usize = 52;
const COUNT: usize = 60;
const H0: usize = 61; // values handle
const H1: usize = 77; // indices handle

fn broken(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = seed_bytes();
    f(&mut b);
    b
}

fn set_len(b: &mut [u8], len: usize) {
    b[6..10].copy_from_slice(&(len as u32).to_le_bytes());
}

#[test]
fn rejects_bad_magic_and_versions() {
    assert_err(
        parse(&broken(|b| b[0] = b'X'), false),
        Status::InvalidMagic,
        "HRRY",
    );
    assert_err(
        parse(&broken(|b| b[4] = 2), false),
        Status::VersionMismatch,
        "version 2.0",
    );
    assert_err(
        parse(&broken(|b| b[4] = 0), false),
        Status::VersionMismatch,
        "version 0.0",
    );
}

#[test]
fn rejects_bad_descriptor_lengths_and_never_reads_past_them() {
    assert_err(
        parse(&broken(|b| set_len(b, 19)), false),
        Status::InvalidLayout,
        "below the 20-byte fixed header",
    );
    assert_err(
        parse(&broken(|b| set_len(b, 94)), false),
        Status::Truncated,
        "needs 94 bytes but only 93",
    );
    // A shorter descriptor_length cuts the buffer table: truncated there,
    // though the bytes are present.
    assert_err(
        parse(&broken(|b| set_len(b, 80)), false),
        Status::Truncated,
        "buffer handle",
    );
    // Extra bytes after the fields: an error for version 1.0 ...
    let mut extra = seed_bytes();
    extra.extend_from_slice(&[0xAB; 7]);
    set_len(&mut extra, 100);
    assert_err(
        parse(&extra, false),
        Status::InvalidLayout,
        "ends at byte 93",
    );
    // ... and skipped for a later minor version.
    extra[5] = 3;
    let d = parse(&extra, false).unwrap();
    assert_eq!((d.version_minor, d.length), (3, 100));
    // Bytes beyond descriptor_length are not the descriptor's business.
    let mut longer = seed_bytes();
    longer.extend_from_slice(&[0xFF; 32]);
    parse(&longer, false).unwrap();
}

#[test]
fn rejects_reserved_bits_and_bytes() {
    assert_err(
        parse(&broken(|b| b[FLAGS + 3] = 0x80), false),
        Status::ReservedBits,
        "reserved bits 0x80000000",
    );
    assert_err(
        parse(&broken(|b| b[FLAGS] = 0x20), false),
        Status::ReservedBits,
        "0x00000020",
    );
    assert_err(
        parse(&broken(|b| b[SORTED + 7] = 1), false),
        Status::ReservedBits,
        "COO _reserved",
    );
    assert_err(
        parse(&broken(|b| b[H1 + 15] = 1), false),
        Status::ReservedBits,
        "buffer handle _reserved",
    );
}

#[test]
fn rejects_other_layouts_naming_them() {
    for (tag, name) in [
        (0x01u8, "row-major"),
        (0x07, "CSR"),
        (0x09, "CSF"),
        (0x0B, "composite"),
    ] {
        assert_err(
            parse(&broken(|b| b[LAYOUT] = tag), false),
            Status::InvalidLayout,
            &format!("is {name}, not COO"),
        );
    }
}

#[test]
fn rejects_bad_types_unless_permissive() {
    assert_err(
        parse(&broken(|b| b[TYPE] = 0), true),
        Status::InvalidType,
        "0x00",
    );
    assert_err(
        parse(&broken(|b| b[TYPE] = 0x90), false),
        Status::InvalidType,
        "reserved",
    );
    let d = parse(&broken(|b| b[TYPE] = 0x90), true).unwrap();
    assert_eq!(d.type_tag, 0x90);
    // Private types need HAS_EXTENSION_TYPE, others must not have it.
    assert_err(
        parse(&broken(|b| b[TYPE] = 0xF3), true),
        Status::InvalidLayout,
        "HAS_EXTENSION_TYPE",
    );
    assert_err(
        parse(&broken(|b| b[FLAGS] = 0x04), false),
        Status::InvalidLayout,
        "HAS_EXTENSION_TYPE",
    );
}

#[test]
fn rejects_bad_rank_shape_offset_sorted_and_count() {
    assert_err(
        parse(&broken(|b| b[RANK] = 0), false),
        Status::InvalidRank,
        "rank 0",
    );
    assert_err(
        parse(&broken(|b| b[RANK] = 65), false),
        Status::InvalidRank,
        "rank 65",
    );
    assert_err(
        parse(
            &broken(|b| b[RANK..RANK + 4].copy_from_slice(&u32::MAX.to_le_bytes())),
            false,
        ),
        Status::InvalidRank,
        "rank 4294967295",
    );
    assert_err(
        parse(&broken(|b| b[SHAPE + 8..SHAPE + 16].fill(0xFF)), false),
        Status::InvalidShape,
        "dimension 1",
    );
    assert_err(
        parse(&broken(|b| b[BYTE_OFFSET] = 8), false),
        Status::InvalidLayout,
        "byte_offset is 8",
    );
    assert_err(
        parse(&broken(|b| b[SORTED] = 2), false),
        Status::InvalidLayout,
        "is_sorted",
    );
    for count in [0u8, 1, 3] {
        assert_err(
            parse(&broken(|b| b[COUNT] = count), false),
            Status::InvalidLayout,
            "exactly 2 buffers",
        );
    }
}

#[test]
fn rejects_bad_buffer_handles() {
    let at = |k: usize, off: usize| if k == 0 { H0 + off } else { H1 + off };
    for k in 0..2 {
        let which = ["buffer 0 (values)", "buffer 1 (indices)"][k];
        assert_err(
            parse(&broken(|b| b[at(k, 12)] = 0x01), false),
            Status::UnsupportedDevice,
            &format!("{which} is on CUDA"),
        );
        assert_err(
            parse(&broken(|b| b[at(k, 12)] = 0x07), false),
            Status::UnsupportedDevice,
            "Level Zero",
        );
        assert_err(
            parse(&broken(|b| b[at(k, 12)] = 0x09), false),
            Status::InvalidBufferHandle,
            "reserved",
        );
        assert_err(
            parse(&broken(|b| b[at(k, 12)] = 0xFF), false),
            Status::InvalidBufferHandle,
            "invalid",
        );
        // buffer-protocol.md: a CPU buffer MUST be producer-synced.
        assert_err(
            parse(&broken(|b| b[at(k, 13)] = 1), false),
            Status::InvalidSyncMode,
            "CPU buffer with sync mode 1 (event)",
        );
        assert_err(
            parse(&broken(|b| b[at(k, 13)] = 2), true),
            Status::InvalidSyncMode,
            "consumer-stream",
        );
        assert_err(
            parse(&broken(|b| b[at(k, 13)] = 7), false),
            Status::InvalidSyncMode,
            "sync mode 7",
        );
        assert_err(
            parse(&broken(|b| b[at(k, 14)] = 3), false),
            Status::InvalidBufferHandle,
            "peer",
        );
        assert_err(
            parse(&broken(|b| b[at(k, 14)] = 4), false),
            Status::InvalidBufferHandle,
            "memory class 4",
        );
        for align in [32u32, 48, 0] {
            assert_err(
                parse(
                    &broken(|b| b[at(k, 8)..at(k, 12)].copy_from_slice(&align.to_le_bytes())),
                    false,
                ),
                Status::InvalidBufferHandle,
                &format!("alignment {align}"),
            );
        }
    }
    // Pinned and unified host memory are fine, for both buffers alike.
    for class in [1u8, 2] {
        parse(
            &broken(|b| (b[H0 + 14], b[H1 + 14]) = (class, class)),
            false,
        )
        .unwrap();
    }
}

/// buffer-protocol.md, Device Colocation: all buffers of one descriptor MUST
/// share device tag and memory class; a reader MUST reject otherwise, in
/// every mode.
#[test]
fn buffers_on_different_memory_classes_are_refused() {
    for (a, b) in [(0u8, 1u8), (1, 0), (2, 0), (1, 2)] {
        for permissive in [false, true] {
            assert_err(
                parse(&broken(|d| (d[H0 + 14], d[H1 + 14]) = (a, b)), permissive),
                Status::InvalidBufferHandle,
                &format!("buffer 1 (indices) has device tag 0x00 and memory class {b}"),
            );
        }
    }
}

/// metadata.md, Composite Member Section: member_role MUST be 0x00 or 0x01
/// and the 15 reserved bytes MUST be zero; a reader MUST reject otherwise.
#[test]
fn composite_member_sections_are_checked() {
    for role in [0u8, 1] {
        let mut sec = [0u8; 16];
        sec[0] = role;
        let d = parse(&with_section(0x10, &sec), false).unwrap();
        assert_eq!(d.composite_role, Some(role));
    }
    for role in [2u8, 0x7F, 0xFF] {
        let mut sec = [0u8; 16];
        sec[0] = role;
        for permissive in [false, true] {
            assert_err(
                parse(&with_section(0x10, &sec), permissive),
                Status::ReservedBits,
                &format!("member_role at descriptor offset 93 is 0x{role:02X}"),
            );
        }
    }
    for k in 1..16 {
        let mut sec = [0u8; 16];
        sec[k] = 0x5A;
        assert_err(
            parse(&with_section(0x10, &sec), true),
            Status::ReservedBits,
            &format!("offset {} is 0x5A", 93 + k),
        );
    }
    // A section cut short is a truncation.
    assert_err(
        parse(&with_section(0x10, &[0u8; 15]), false),
        Status::Truncated,
        "composite member",
    );
}

/// An extension-type section (20 bytes) for a private type.
#[allow(clippy::too_many_arguments)] // one per field of the section
fn ext(
    bit_width: u32,
    packing: u8,
    is_float: u8,
    is_signed: u8,
    sign: u8,
    exp: u8,
    man: u8,
    bias: u32,
) -> Vec<u8> {
    let mut s = bit_width.to_le_bytes().to_vec();
    s.extend_from_slice(&[packing, is_float, is_signed, sign, exp, man, 0, 0]);
    s.extend_from_slice(&bias.to_le_bytes());
    s.extend_from_slice(&[0, 0, 0, 0]);
    s
}

/// The seed descriptor retyped as private tag 0xF3 with `section`, its
/// values buffer declared `values_bytes`.
fn private_with(section: &[u8], values_bytes: u64) -> Vec<u8> {
    let mut b = with_section(0x04, section);
    b[TYPE] = 0xF3;
    b[H0..H0 + 8].copy_from_slice(&values_bytes.to_le_bytes());
    b
}

/// metadata.md, Extension Type Section: every field constraint, and the
/// reader MUST use bit_width and packing_factor to size the values buffer.
/// Permissive mode (needed for a private tag at all) relaxes none of it.
#[test]
fn extension_type_sections_are_checked_and_size_the_values() {
    // 3 entries of a 4-bit integer: 2 bytes; of a 16-bit float: 6 bytes.
    let d = parse(&private_with(&ext(4, 2, 0, 1, 0, 0, 0, 0), 2), true).unwrap();
    assert_eq!(
        d.extension.map(|x| (x.bit_width, x.packing_factor)),
        Some((4, 2))
    );
    parse(&private_with(&ext(16, 1, 1, 0, 1, 5, 10, 15), 6), true).unwrap();
    parse(&private_with(&ext(1, 8, 0, 0, 0, 0, 0, 0), 1), true).unwrap();
    assert_err(
        parse(&private_with(&ext(4, 2, 0, 1, 0, 0, 0, 0), 3), true),
        Status::BufferSize,
        "the declared values buffer is 3 bytes but nnz 3 of the extension type (bit_width 4, packing_factor 2) needs exactly 2 bytes",
    );
    assert_err(
        parse(&private_with(&ext(16, 1, 1, 0, 1, 5, 10, 15), 12), true),
        Status::BufferSize,
        "needs exactly 6 bytes",
    );
    let bad: [(Vec<u8>, &str); 11] = [
        (ext(0, 1, 0, 0, 0, 0, 0, 0), "bit_width is 0"),
        (
            ext(4, 1, 0, 0, 0, 0, 0, 0),
            "bit_width 4 needs packing_factor 2, not 1",
        ),
        (
            ext(2, 2, 0, 0, 0, 0, 0, 0),
            "bit_width 2 needs packing_factor 4",
        ),
        (
            ext(6, 1, 0, 0, 0, 0, 0, 0),
            "bit_width 6 is a sub-byte width",
        ),
        (ext(3, 2, 0, 0, 0, 0, 0, 0), "bit_width 3"),
        (
            ext(12, 1, 0, 0, 0, 0, 0, 0),
            "bit_width 12 is not a whole number of bytes",
        ),
        (
            ext(16, 2, 0, 0, 0, 0, 0, 0),
            "bit_width 16 needs packing_factor 1, not 2",
        ),
        (
            ext(8, 1, 0, 0, 0, 4, 3, 0),
            "an integer type (is_float 0) must have",
        ),
        (ext(8, 1, 1, 1, 1, 4, 3, 7), "must have is_signed 0"),
        (ext(8, 1, 1, 0, 2, 4, 3, 7), "sign_bits is 2"),
        (ext(8, 1, 2, 0, 0, 0, 0, 0), "is_float is 2"),
    ];
    for (sec, needle) in &bad {
        assert_err(
            parse(&private_with(sec, 3), true),
            Status::InvalidType,
            needle,
        );
    }
    for at in [10usize, 11, 18, 19] {
        let mut sec = ext(8, 1, 0, 0, 0, 0, 0, 0);
        sec[at] = 1;
        assert_err(
            parse(&private_with(&sec, 3), true),
            Status::ReservedBits,
            "extension _reserved",
        );
    }
}

/// hurray_descriptor_inspect reports sizes a consumer allocates from: every
/// declared byte_size must be what type, nnz and rank need.
#[test]
fn declared_sizes_must_match_type_nnz_and_rank() {
    let set = |b: &mut Vec<u8>, at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    assert_err(
        parse(&broken(|b| set(b, H1, 1 << 60)), false),
        Status::BufferSize,
        "the declared indices buffer is 1152921504606846976 bytes but nnz 3 x rank 2 x 8 needs exactly 48",
    );
    assert_err(
        parse(&broken(|b| set(b, H0, 16)), true),
        Status::BufferSize,
        "the declared values buffer is 16 bytes but nnz 3 of float32 needs exactly 12",
    );
    // nnz 2^62 of float32: the values size overflows 64 bits.
    assert_err(
        parse(&broken(|b| set(b, SORTED - 8, 1 << 62)), false),
        Status::Overflow,
        "values buffer size of 4611686018427387904 float32 elements",
    );
}

/// The seed descriptor with `section` appended under flag `flag`.
fn with_section(flag: u8, section: &[u8]) -> Vec<u8> {
    let mut b = seed_bytes();
    b[FLAGS] |= flag;
    b.extend_from_slice(section);
    let len = b.len();
    set_len(&mut b, len);
    b
}

fn le64(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn quantization_is_refused_strictly_and_skipped_permissively() {
    let mut q = 5u32.to_le_bytes().to_vec();
    q.extend_from_slice(&[1, 2, 3, 4, 5]);
    let b = with_section(0x01, &q);
    assert_err(
        parse(&b, false),
        Status::UnsupportedFeature,
        "quantization section",
    );
    let d = parse(&b, true).unwrap();
    assert_eq!(d.quantization_len, Some(5));
    assert_eq!(d.flags, 0x01);
    // A quantization length past the descriptor is a truncation.
    let mut q = 500u32.to_le_bytes().to_vec();
    q.extend_from_slice(&[1, 2, 3]);
    assert_err(
        parse(&with_section(0x01, &q), true),
        Status::Truncated,
        "quantization",
    );
}

#[test]
fn shard_sections_are_checked_against_the_parent() {
    let ok = [le64(&[8, 12]), le64(&[4, 8])].concat();
    let d = parse(&with_section(0x02, &ok), false).unwrap();
    assert_eq!(d.shard.unwrap().offset, vec![4, 8]);
    let bad = [le64(&[8, 12]), le64(&[4, 9])].concat();
    assert_err(
        parse(&with_section(0x02, &bad), false),
        Status::InvalidShape,
        "shard dimension 1: offset 9 + extent 4 exceeds parent extent 12",
    );
    let overflow = [le64(&[8, 12]), le64(&[u64::MAX, 0])].concat();
    assert_err(
        parse(&with_section(0x02, &overflow), false),
        Status::InvalidShape,
        "dimension 0",
    );
}

fn stats_section(mask_bits: u32, nnz: u64, tweak: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut s = Vec::new();
    s.extend_from_slice(&mask_bits.to_le_bytes());
    s.extend_from_slice(&[0; 4]);
    s.extend_from_slice(&nnz.to_le_bytes());
    s.extend_from_slice(&[0; 56]);
    tweak(&mut s);
    assert_eq!(s.len(), 72);
    s
}

#[test]
fn statistics_sections_are_checked() {
    parse(&with_section(0x08, &stats_section(0x3F, 3, |_| {})), false).unwrap();
    assert_err(
        parse(&with_section(0x08, &stats_section(0x40, 3, |_| {})), false),
        Status::InvalidStatistics,
        "reserved bits 0x00000040",
    );
    assert_err(
        parse(&with_section(0x08, &stats_section(0x01, 4, |_| {})), false),
        Status::InvalidStatistics,
        "statistics nnz 4 differs from the COO layout's nnz 3",
    );
    // An nnz not marked valid is not checked.
    parse(&with_section(0x08, &stats_section(0x02, 4, |_| {})), false).unwrap();
    assert_err(
        parse(
            &with_section(0x08, &stats_section(0x01, 3, |s| s[5] = 1)),
            false,
        ),
        Status::ReservedBits,
        "statistics _reserved",
    );
    assert_err(
        parse(
            &with_section(0x08, &stats_section(0x01, 3, |s| s[71] = 1)),
            false,
        ),
        Status::ReservedBits,
        "statistics _reserved2",
    );
    // Field constraints (metadata.md), checked only when the field is valid.
    let stddev = |v: f64| move |s: &mut Vec<u8>| s[56..64].copy_from_slice(&v.to_le_bytes());
    assert_err(
        parse(
            &with_section(0x08, &stats_section(0x09, 3, stddev(-1.0))),
            false,
        ),
        Status::InvalidStatistics,
        "value_stddev is -1",
    );
    parse(
        &with_section(0x08, &stats_section(0x01, 3, stddev(-1.0))),
        false,
    )
    .unwrap();
    let nm = |n: u8, m: u8| move |s: &mut Vec<u8>| (s[64], s[65]) = (n, m);
    assert_err(
        parse(
            &with_section(0x08, &stats_section(0x11, 3, nm(4, 2))),
            false,
        ),
        Status::InvalidStatistics,
        "N:M pattern 4:2",
    );
    parse(
        &with_section(0x08, &stats_section(0x11, 3, nm(2, 4))),
        false,
    )
    .unwrap();
}

#[test]
fn declared_sizes_must_match_the_buffers_passed() {
    let d = parse(&seed_bytes(), false).unwrap();
    descriptor::check_declared_sizes(&d, 12, 48).unwrap();
    let e = descriptor::check_declared_sizes(&d, 16, 48).unwrap_err();
    assert_eq!(e.status(), Status::BufferSize);
    assert!(e.to_string().contains(
        "values buffer is 16 bytes but the descriptor's declared byte_size needs exactly 12"
    ));
    let e = descriptor::check_declared_sizes(&d, 12, 40).unwrap_err();
    assert!(e.to_string().contains("indices buffer is 40 bytes"));
}

// ---- Truncation ---------------------------------------------------------------

#[test]
fn truncation_at_every_byte_is_a_clean_error() {
    let mut vectors: Vec<Vec<u8>> = [
        "seed_f32_4x4_sorted.bin",
        "seed_f32_4x4_stats.bin",
        "empty_f32_0x5.bin",
        "int4_rank1_5.bin",
    ]
    .iter()
    .map(|n| golden(n))
    .collect();
    vectors.push(with_section(
        0x02,
        &[le64(&[8, 12]), le64(&[4, 8])].concat(),
    ));
    let mut q = 3u32.to_le_bytes().to_vec();
    q.extend_from_slice(&[7, 7, 7]);
    vectors.push(with_section(0x01, &q));
    for v in &vectors {
        parse(v, true).unwrap();
        for cut in 0..v.len() {
            // The bytes end early (descriptor_length says more).
            let e = parse(&v[..cut], true).unwrap_err();
            assert_eq!(e.status(), Status::Truncated, "cut {cut}: {e}");
            // descriptor_length itself says less: parsing must stop there.
            if cut >= 10 {
                let mut w = v[..cut].to_vec();
                set_len(&mut w, cut);
                let e = parse(&w, true).unwrap_err();
                assert!(
                    matches!(e.status(), Status::Truncated | Status::InvalidLayout),
                    "cut {cut}: {e}"
                );
            }
        }
    }
}

#[test]
fn random_bytes_never_crash_the_reader() {
    let base = golden("seed_f32_4x4_stats.bin");
    let mut rng = Rng::new(99);
    let mut accepted = 0;
    for _ in 0..20_000 {
        let mut b = base.clone();
        for _ in 0..1 + rng.below(4) {
            let k = rng.below(b.len() as u64) as usize;
            b[k] = rng.next() as u8;
        }
        let cut = rng.below(b.len() as u64 + 1) as usize;
        if parse(&b[..cut], rng.below(2) == 0).is_ok() {
            accepted += 1;
        }
    }
    assert!(accepted > 0);
}

// ---- Writer ---------------------------------------------------------------------

#[test]
fn writer_refuses_small_buffers_and_unknown_types_and_validates_permissive_handles() {
    let f = seed();
    let coo = f.strict().unwrap();
    let mut small = [0u8; 92];
    let e = encode(&coo, StatsChoice::None, &mut small).unwrap_err();
    assert_eq!(e.status(), Status::BufferTooSmall);
    assert!(e.to_string().contains("92 bytes but 93 are needed"));

    let g = Fixture::new(0x90, &[4], &[&[1]], &[0xAB], true);
    let coo = g.permissive();
    let mut out = [0u8; 200];
    assert_eq!(
        encode(&coo, StatsChoice::None, &mut out)
            .unwrap_err()
            .status(),
        Status::UnsupportedType
    );

    let h = Fixture::f32s(&[4], &[&[2], &[1]], true);
    let coo = h
        .create(Options {
            copy: false,
            permissive: true,
            ..Options::default()
        })
        .unwrap();
    assert_eq!(
        encode(&coo, StatsChoice::None, &mut out)
            .unwrap_err()
            .status(),
        Status::NotSorted
    );
}

// ---- Statistics -------------------------------------------------------------------

/// The implicit zeros merge without cancellation: 2^64 elements, values
/// {1.5, -0.5}: mean 2^-64 (5.42e-20), population variance 2.5 / 2^64.
#[test]
fn statistics_hold_at_extreme_sparsity() {
    let vals: Vec<u8> = [1.5f64, -0.5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let f = Fixture::new(0x04, &[1 << 32, 1 << 32], &[&[0, 0], &[7, 9]], &vals, true);
    let s = stats::compute(&f.strict().unwrap());
    assert_ne!(s.computed_mask & mask::VALUE_STATS, 0);
    let mean = 2f64.powi(-64);
    assert!(
        (s.value_mean - mean).abs() <= 1e-12 * mean,
        "mean {}",
        s.value_mean
    );
    let sd = (2.5 * mean).sqrt();
    assert!(
        (s.value_stddev - sd).abs() <= 1e-9 * sd,
        "stddev {}",
        s.value_stddev
    );
    assert_eq!((s.value_min, s.value_max), (-0.5, 1.5));
}

#[test]
fn seed_statistics_are_exact() {
    let f = seed();
    let s = stats::compute(&f.strict().unwrap());
    assert_eq!(
        s.computed_mask,
        mask::NNZ | mask::SPARSITY | mask::VALUE_RANGE | mask::VALUE_STATS | mask::NAN_INF
    );
    assert_eq!((s.nnz, s.sparsity_ratio), (3, 0.8125));
    assert_eq!(
        (s.value_min, s.value_max, s.value_abs_max),
        (-0.5, 2.0, 2.0)
    );
    assert!((s.value_mean - 0.1875).abs() < 1e-15);
    assert!((s.value_stddev - 0.37109375f64.sqrt()).abs() < 1e-15);
    assert!(!s.has_nan && !s.has_inf);
}

#[test]
fn statistics_match_a_dense_oracle() {
    let mut rng = Rng::new(3);
    for case in 0..500 {
        let tag = [0x03u8, 0x04, 0x10, 0x48, 0x20, 0x01, 0x40][case % 7];
        let nnz = rng.below(30) as usize;
        let f = random_tensor(&mut rng, tag, 1 + case % 3, case % 2 == 0, nnz);
        let coo = f.strict().unwrap();
        let s = stats::compute(&coo);
        // Oracle: expand to the dense tensor, skip NaNs.
        let total: u64 = coo.shape().iter().product();
        let mut dense = vec![0f64; total as usize];
        let strides: Vec<u64> = (0..coo.rank() as usize)
            .map(|d| coo.shape()[d + 1..].iter().product())
            .collect();
        for i in 0..coo.nnz() as usize {
            let lin: u64 = coo.entry(i).iter().zip(&strides).map(|(c, s)| c * s).sum();
            dense[lin as usize] = coo.lookup_f64(coo.entry(i)).unwrap().0;
        }
        let vals: Vec<f64> = dense.iter().copied().filter(|v| !v.is_nan()).collect();
        assert_eq!(s.has_nan, dense.iter().any(|v| v.is_nan()), "case {case}");
        assert_eq!(
            s.has_inf,
            vals.iter().any(|v| v.is_infinite()),
            "case {case}"
        );
        assert_eq!(s.sparsity_ratio, 1.0 - coo.nnz() as f64 / total as f64);
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!((s.value_min, s.value_max), (lo, hi), "case {case}");
        let n = vals.len() as f64;
        let mean = vals.iter().sum::<f64>() / n;
        let std = (vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
        if s.computed_mask & mask::VALUE_STATS != 0 {
            let scale = vals.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let tol = 1e-12 * scale;
            assert!(
                (s.value_mean - mean).abs() <= tol,
                "case {case}: {} vs {mean}",
                s.value_mean
            );
            assert!((s.value_stddev - std).abs() <= tol, "case {case}");
        } else {
            // Dropped only when they cannot be finite.
            assert!(
                !(mean.is_finite() && std.is_finite()),
                "case {case}: moments dropped"
            );
        }
    }
}

#[test]
fn statistics_mark_only_what_is_meaningful() {
    // Complex: counts only.
    let f = Fixture::new(0x50, &[4], &[&[1]], &[0; 8], true);
    let s = stats::compute(&f.strict().unwrap());
    assert_eq!(s.computed_mask, mask::NNZ | mask::SPARSITY);
    // An empty shape has no sparsity ratio (0 / 0).
    let f = Fixture::new(0x03, &[0, 4], &[], &[], true);
    let s = stats::compute(&f.strict().unwrap());
    assert_eq!(s.computed_mask & mask::SPARSITY, 0);
    // Beyond 2^64 elements the ratio is still computed (in floating point).
    let f = Fixture::f32s(&[1 << 40; 3], &[&[1, 2, 3]], true);
    let s = stats::compute(&f.strict().unwrap());
    assert_eq!(s.sparsity_ratio, 1.0 - 1.0 / 2f64.powi(120));
    assert_eq!((s.value_min, s.value_max), (0.0, 1.0));
    // NaN is flagged and left out of the range.
    let vals: Vec<u8> = [f32::NAN, 3.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let f = Fixture::new(0x03, &[2], &[&[0], &[1]], &vals, true);
    let s = stats::compute(&f.strict().unwrap());
    assert!(s.has_nan);
    assert_eq!((s.value_min, s.value_max, s.value_mean), (3.0, 3.0, 3.0));
}
