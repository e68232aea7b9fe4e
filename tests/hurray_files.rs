//! Hurray files (`file-format.md`): our writer and reader round trip every
//! type, rank and option; files interoperate both ways with the reference
//! implementation (hurray-io 0.1.0) and match its bytes; every container
//! rule has a hand-broken file that is refused with its status and byte
//! offset; no prefix of a file opens; damage never panics.

mod common;

use std::path::PathBuf;

use common::reference::reference_descriptor;
use common::{random_tensor, Fixture, Rng};
use hurray_coo::io::descriptor::{self, StatsChoice};
use hurray_coo::io::file::{
    check_container, FileWriter, HurrayFile, KvArray, KvValue, OpenMode, WriteOptions, Writer,
};
use hurray_coo::{Coo, CooError, Options, Status, TYPES};
use hurray_core::descriptor::TensorDescriptor;
use hurray_core::layout::{CompositeLayout, CompositionRule, LayoutDescriptor};
use hurray_core::{BufferHandle, DeviceTag, ElementType, Shape, SyncMode};
use hurray_io::file::{FileReader, FileWriter as RefWriter, FileWriterOptions, KvValue as RefKv};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hurray-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A file in memory from `tensors` (name, fixture) and `kv`.
fn write_mem(tensors: &[(&str, &Fixture)], kv: &[(&str, KvValue)], opts: WriteOptions) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), "memory", opts).unwrap();
    for (k, v) in kv {
        w.add_kv(k, v.clone()).unwrap();
    }
    for (name, f) in tensors {
        w.add_coo(name, &f.strict().unwrap()).unwrap();
    }
    w.finish().unwrap()
}

fn seed_file() -> Vec<u8> {
    let a = Fixture::seed();
    let b = Fixture::f32s(&[3, 2, 2], &[&[0, 0, 1], &[2, 1, 0]], true);
    write_mem(&[("A", &a), ("b", &b)], &[], WriteOptions::default())
}

fn all_kv() -> Vec<(&'static str, KvValue)> {
    vec![
        ("model", KvValue::String("poisson2d".into())),
        ("level", KvValue::Int64(-3)),
        ("rows", KvValue::Uint64(1 << 40)),
        ("tol", KvValue::Float64(1e-12)),
        ("spd", KvValue::Bool(true)),
        ("blob", KvValue::Bytes(vec![0, 1, 2, 255])),
        (
            "dims",
            KvValue::Array(KvArray::String(vec!["row".into(), "col".into()])),
        ),
        ("ints", KvValue::Array(KvArray::Int64(vec![-1, 2]))),
        ("u", KvValue::Array(KvArray::Uint64(vec![]))),
        (
            "fs",
            KvValue::Array(KvArray::Float64(vec![0.5, f64::INFINITY])),
        ),
        ("bs", KvValue::Array(KvArray::Bool(vec![false, true]))),
        ("raw", KvValue::Array(KvArray::Bytes(vec![vec![], vec![7]]))),
    ]
}

fn same_tensor(got: &Coo<'_>, want: &Coo<'_>) {
    assert_eq!(got.type_tag(), want.type_tag());
    assert_eq!(got.shape(), want.shape());
    assert_eq!(got.nnz(), want.nnz());
    assert_eq!(got.is_sorted(), want.is_sorted());
    assert_eq!(got.values(), want.values());
    assert_eq!(got.indices_bytes(), want.indices_bytes());
}

fn refused(bytes: &[u8], status: Status, needles: &[&str]) -> CooError {
    let e = match HurrayFile::from_bytes(bytes) {
        Ok(f) => panic!("accepted: {f:?}"),
        Err(e) => e,
    };
    assert_eq!(e.status(), status, "{e}");
    for n in needles {
        assert!(e.to_string().contains(n), "{e} lacks {n:?}");
    }
    e
}

/// Fields of a written file, for hand-breaking it.
struct Layout {
    index_offset: usize,
    trailer: usize,
}

fn layout(bytes: &[u8]) -> Layout {
    let trailer = bytes.len() - 40;
    Layout {
        index_offset: u64::from_le_bytes(bytes[trailer..trailer + 8].try_into().unwrap()) as usize,
        trailer,
    }
}

fn put(bytes: &mut [u8], at: usize, new: &[u8]) {
    bytes[at..at + new.len()].copy_from_slice(new);
}

/// Recompute the index CRC after editing the index, so that the rule under
/// test, not the checksum, is what refuses the file.
fn recrc(bytes: &mut [u8]) {
    let l = layout(bytes);
    let len = u64::from_le_bytes(bytes[l.trailer + 8..l.trailer + 16].try_into().unwrap()) as usize;
    let Some(index) = l
        .index_offset
        .checked_add(len)
        .and_then(|end| bytes.get(l.index_offset..end))
    else {
        return;
    };
    let crc = crc32c::crc32c(index);
    put(bytes, l.trailer + 28, &crc.to_le_bytes());
}

/// The file offset of index entry `k`'s field after the name (0
/// descriptor_offset, 8 descriptor_length, 12 data_offset, 20 data_length,
/// 28 flags).
fn entry_field(bytes: &[u8], k: usize, rel: usize) -> usize {
    let mut at = layout(bytes).index_offset + 8;
    for _ in 0..k {
        let n = u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
        at += 2 + n + 32;
    }
    let n = u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
    at + 2 + n + rel
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

// ---- Round trips -------------------------------------------------------------

#[test]
fn every_type_rank_and_option_round_trips_zero_copy() {
    let mut rng = Rng::new(11);
    let mut fixtures = Vec::new();
    for ty in &TYPES {
        for (rank, nnz) in [(1, 0), (2, 9), (3, 17), (64, 3)] {
            for sorted in [true, false] {
                fixtures.push(random_tensor(&mut rng, ty.tag, rank, sorted, nnz));
            }
        }
    }
    let names: Vec<String> = (0..fixtures.len()).map(|i| format!("t{i:03}")).collect();
    for (alignment, sorted_index, stats) in [
        (4096, false, StatsChoice::None),
        (65536, true, StatsChoice::Full),
        (2 * 1024 * 1024, false, StatsChoice::Counts),
    ] {
        let opts = WriteOptions {
            alignment,
            sorted_index,
            stats,
        };
        // 2 MiB apart, a few tensors make a large file already.
        let n = if alignment > 65536 { 6 } else { fixtures.len() };
        let (names, fixtures) = (&names[..n], &fixtures[..n]);
        let path = tmp(&format!("round-{alignment}.hrry"));
        let mut w = FileWriter::create(&path, opts).unwrap();
        for (k, v) in all_kv() {
            w.add_kv(k, v).unwrap();
        }
        // Written in reverse name order, so a sorted index really sorts.
        for (name, f) in names.iter().zip(fixtures).rev() {
            w.add_coo(name, &f.strict().unwrap()).unwrap();
        }
        w.finish().unwrap();
        for mode in [OpenMode::Map, OpenMode::Read] {
            let file = HurrayFile::open(&path, mode).unwrap();
            assert_eq!(file.is_mapped(), mode == OpenMode::Map);
            let kv: Vec<(String, KvValue)> = all_kv()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            assert_eq!(file.kv(), &kv[..]);
            assert_eq!(file.tensors().len(), fixtures.len());
            if sorted_index {
                let listed: Vec<&str> = file.tensors().iter().map(|t| &t.entry.name[..]).collect();
                let mut want = listed.clone();
                want.sort();
                assert_eq!(listed, want);
            }
            let range = file.bytes().as_ptr_range();
            for (name, f) in names.iter().zip(fixtures) {
                let i = file.find(name).unwrap();
                let t = &file.tensors()[i];
                assert!(t.is_coo());
                assert_eq!(t.shape, f.shape);
                assert_eq!(t.nnz, Some(f.nnz));
                let (coo, desc) = file.coo(i, Options::default()).unwrap();
                same_tensor(&coo, &f.strict().unwrap());
                assert_eq!(desc.statistics.is_some(), stats != StatsChoice::None);
                // Zero copy: the handle reads the file's own bytes.
                if !coo.values().is_empty() {
                    assert!(range.contains(&coo.values().as_ptr()));
                    assert!(range.contains(&coo.indices_bytes().as_ptr()));
                    assert!(!coo.is_copy());
                }
                let (copy, _) = file
                    .coo(
                        i,
                        Options {
                            copy: true,
                            index: true,
                            ..Options::default()
                        },
                    )
                    .unwrap();
                assert!(copy.is_copy() && copy.has_index());
                same_tensor(&copy, &coo);
            }
        }
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn an_empty_file_and_a_file_without_tensors_open() {
    let bytes = write_mem(&[], &[], WriteOptions::default());
    assert_eq!(bytes.len(), 64 + 8 + 40);
    let f = HurrayFile::from_bytes(&bytes).unwrap();
    assert!(f.tensors().is_empty() && f.kv().is_empty());
    let e = f.position("x").unwrap_err();
    assert_eq!(e.status(), Status::NotFound);
    assert!(e.to_string().contains("holds no tensors"), "{e}");
}

#[test]
fn writer_refuses_bad_names_keys_alignments_and_late_metadata() {
    for a in [0, 1000, 2048, 4 << 20] {
        let e = Writer::new(
            Vec::new(),
            "m",
            WriteOptions {
                alignment: a,
                ..Default::default()
            },
        )
        .err()
        .unwrap();
        assert_eq!(e.status(), Status::InvalidArgument, "{e}");
    }
    let f = Fixture::seed();
    let coo = f.strict().unwrap();
    let mut w = Writer::new(Vec::new(), "m", WriteOptions::default()).unwrap();
    w.add_kv("k", KvValue::Bool(true)).unwrap();
    for (r, needle) in [
        (w.add_kv("k", KvValue::Bool(false)), "already"),
        (w.add_kv("", KvValue::Bool(false)), "1 to 65535"),
        (w.add_coo("", &coo), "1 to 65535"),
        (w.add_coo(&"x".repeat(65536), &coo), "65536 bytes"),
    ] {
        let e = r.unwrap_err();
        assert_eq!(e.status(), Status::InvalidArgument, "{e}");
        assert!(e.to_string().contains(needle), "{e}");
    }
    w.add_coo("A", &coo).unwrap();
    let e = w.add_coo("A", &coo).unwrap_err();
    assert!(e.to_string().contains("already in this file"), "{e}");
    let e = w.add_kv("late", KvValue::Int64(1)).unwrap_err();
    assert!(e.to_string().contains("before the first tensor"), "{e}");
    let bytes = w.finish().unwrap();
    let file = HurrayFile::from_bytes(&bytes).unwrap();
    assert_eq!(file.tensors().len(), 1);
    // HAS_KV_METADATA is set exactly when there is metadata.
    assert_eq!(bytes[12] & 1, 1);
    assert_eq!(seed_file()[12] & 1, 0);
}

// ---- Interop with the reference implementation -------------------------------

fn ref_kv(v: &KvValue) -> RefKv {
    match v {
        KvValue::String(s) => RefKv::String(s.clone()),
        KvValue::Int64(x) => RefKv::Int64(*x),
        KvValue::Uint64(x) => RefKv::Uint64(*x),
        KvValue::Float64(x) => RefKv::Float64(*x),
        KvValue::Bool(x) => RefKv::Bool(*x),
        KvValue::Bytes(b) => RefKv::Bytes(b.clone()),
        KvValue::Array(a) => {
            RefKv::Array((0..a.len()).map(|i| ref_kv(&a.get(i).unwrap())).collect())
        }
    }
}

#[test]
fn files_we_write_open_in_the_reference_reader() {
    let mut rng = Rng::new(5);
    let fixtures: Vec<Fixture> = TYPES
        .iter()
        .map(|ty| random_tensor(&mut rng, ty.tag, 3, ty.tag % 2 == 0, 12))
        .collect();
    let path = tmp("ours-for-ref.hrry");
    let mut w = FileWriter::create(&path, WriteOptions::default()).unwrap();
    // The reference reader refuses empty arrays (it cannot type them).
    let kv: Vec<_> = all_kv().into_iter().filter(|(k, _)| *k != "u").collect();
    for (k, v) in &kv {
        w.add_kv(k, v.clone()).unwrap();
    }
    for (i, f) in fixtures.iter().enumerate() {
        w.add_coo(&format!("{}-{i}", TYPES[i].name()), &f.strict().unwrap())
            .unwrap();
    }
    w.finish().unwrap();
    rt().block_on(async {
        let file = tokio::fs::File::open(&path).await.unwrap();
        let mut r = FileReader::open(file).await.unwrap();
        let want: Vec<(String, RefKv)> =
            kv.iter().map(|(k, v)| (k.to_string(), ref_kv(v))).collect();
        assert_eq!(r.kv(), &want[..]);
        assert_eq!(r.tensor_names().count(), fixtures.len());
        for (i, f) in fixtures.iter().enumerate() {
            let coo = f.strict().unwrap();
            let t = r
                .read_tensor(&format!("{}-{i}", TYPES[i].name()))
                .await
                .unwrap();
            assert_eq!(t.descriptor, reference_descriptor(&coo, None));
            assert_eq!(&t.buffers[0][..], coo.values());
            assert_eq!(&t.buffers[1][..], coo.indices_bytes());
        }
    });
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn files_the_reference_writes_open_here_and_match_our_bytes() {
    let mut rng = Rng::new(6);
    let fixtures: Vec<Fixture> = TYPES
        .iter()
        .map(|ty| random_tensor(&mut rng, ty.tag, 2, true, 7))
        .collect();
    for (with_kv, sorted_index, alignment) in [(false, false, 4096), (true, true, 16384)] {
        let kv: Vec<_> = if with_kv {
            all_kv().into_iter().filter(|(k, _)| *k != "u").collect()
        } else {
            Vec::new()
        };
        let path = tmp(&format!("ref-{with_kv}.hrry"));
        rt().block_on(async {
            let file = tokio::fs::File::create(&path).await.unwrap();
            let opts = FileWriterOptions {
                data_buffer_alignment: alignment,
                sorted_index,
            };
            let mut w = RefWriter::with_options(file, opts).await.unwrap();
            for (i, f) in fixtures.iter().enumerate() {
                let coo = f.strict().unwrap();
                let d = reference_descriptor(&coo, None);
                w.write_tensor(&format!("z{i}"), &d, &[coo.values(), coo.indices_bytes()])
                    .await
                    .unwrap();
            }
            let kv = kv.iter().map(|(k, v)| (k.to_string(), ref_kv(v))).collect();
            w.finish(kv).await.unwrap();
        });
        let theirs = std::fs::read(&path).unwrap();
        let file = HurrayFile::open(&path, OpenMode::Map).unwrap();
        assert_eq!(file.kv().len(), kv.len());
        for (i, f) in fixtures.iter().enumerate() {
            let want = f.strict().unwrap();
            let pos = file.position(&format!("z{i}")).unwrap();
            let (coo, _) = file.coo(pos, Options::default()).unwrap();
            same_tensor(&coo, &want);
            // The descriptor bytes in their file are the ones we encode.
            let e = &file.tensors()[pos].entry;
            let at = e.descriptor_offset as usize;
            let mut ours = vec![0u8; descriptor::encoded_len(2, StatsChoice::None)];
            descriptor::encode(&coo, StatsChoice::None, &mut ours).unwrap();
            assert_eq!(&theirs[at..at + e.descriptor_length as usize], &ours[..]);
        }
        // The same tensors written by us: the same file, byte for byte,
        // except the HAS_KV_METADATA bit the reference writer leaves clear.
        let refs: Vec<(String, &Fixture)> = fixtures
            .iter()
            .enumerate()
            .map(|(i, f)| (format!("z{i}"), f))
            .collect();
        let named: Vec<(&str, &Fixture)> = refs.iter().map(|(n, f)| (&n[..], *f)).collect();
        let mut ours = write_mem(
            &named,
            &kv,
            WriteOptions {
                alignment,
                sorted_index,
                stats: StatsChoice::None,
            },
        );
        if with_kv {
            assert_eq!(ours[12] & 1, 1);
            ours[12] &= !1;
        }
        assert_eq!(ours.len(), theirs.len());
        assert!(
            ours == theirs,
            "our file differs from the reference writer's"
        );
        std::fs::remove_file(&path).unwrap();
    }
}

fn dense_descriptor() -> TensorDescriptor {
    let h = BufferHandle::new(24, 64, DeviceTag::Cpu, SyncMode::ProducerSynced).unwrap();
    TensorDescriptor::new(
        1,
        0,
        ElementType::Float32,
        Shape::new(vec![2, 3]).unwrap(),
        0,
        LayoutDescriptor::RowMajor,
        vec![h],
        None,
        None,
        None,
        None,
    )
    .unwrap()
}

fn composite_head(members: u32) -> TensorDescriptor {
    TensorDescriptor::new(
        1,
        0,
        ElementType::Float32,
        Shape::new(vec![4, 4]).unwrap(),
        0,
        LayoutDescriptor::Composite(CompositeLayout::new(CompositionRule::Group, members).unwrap()),
        vec![],
        None,
        None,
        None,
        None,
    )
    .unwrap()
}

/// A file the reference writer writes with `items` (name, descriptor,
/// buffers).
fn ref_file(name: &str, items: Vec<(&str, TensorDescriptor, Vec<Vec<u8>>)>) -> PathBuf {
    let path = tmp(name);
    rt().block_on(async {
        let file = tokio::fs::File::create(&path).await.unwrap();
        let mut w = RefWriter::new(file).await.unwrap();
        for (n, d, bufs) in &items {
            let b: Vec<&[u8]> = bufs.iter().map(|b| &b[..]).collect();
            w.write_tensor(n, d, &b).await.unwrap();
        }
        w.finish(vec![]).await.unwrap();
    });
    path
}

#[test]
fn other_layouts_are_listed_and_refused_by_name() {
    let f = Fixture::seed();
    let coo = f.strict().unwrap();
    let path = ref_file(
        "mixed.hrry",
        vec![
            ("dense", dense_descriptor(), vec![vec![0u8; 24]]),
            ("head", composite_head(1), vec![]),
            (
                "member",
                reference_descriptor(&coo, None),
                vec![coo.values().to_vec(), coo.indices_bytes().to_vec()],
            ),
        ],
    );
    let file = HurrayFile::open(&path, OpenMode::Map).unwrap();
    let t: Vec<(&str, &str, bool)> = file
        .tensors()
        .iter()
        .map(|t| (&t.entry.name[..], t.layout_name(), t.is_coo()))
        .collect();
    assert_eq!(
        t,
        [
            ("dense", "row-major", false),
            ("head", "composite", false),
            ("member", "COO", true)
        ]
    );
    assert_eq!(file.tensors()[0].shape, [2, 3]);
    for (name, layout) in [
        ("dense", "row-major layout (tag 0x01)"),
        ("head", "composite"),
    ] {
        let e = file
            .coo(file.position(name).unwrap(), Options::default())
            .unwrap_err();
        assert_eq!(e.status(), Status::InvalidLayout, "{e}");
        assert!(
            e.to_string().contains(name) && e.to_string().contains(layout),
            "{e}"
        );
    }
    let (m, _) = file
        .coo(file.position("member").unwrap(), Options::default())
        .unwrap();
    same_tensor(&m, &coo);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_torn_composite_is_refused() {
    let f = Fixture::seed();
    let coo = f.strict().unwrap();
    let member = (
        "m1",
        reference_descriptor(&coo, None),
        vec![coo.values().to_vec(), coo.indices_bytes().to_vec()],
    );
    let path = ref_file(
        "torn.hrry",
        vec![("head", composite_head(2), vec![]), member],
    );
    let bytes = std::fs::read(&path).unwrap();
    refused(
        &bytes,
        Status::CorruptFile,
        &["composite head \"head\" declares 2 members", "torn"],
    );
    std::fs::remove_file(&path).unwrap();
}

// ---- Every container rule, one broken file each ------------------------------

#[test]
fn header_rules() {
    let good = seed_file();
    let cases: Vec<(usize, Vec<u8>, Status, &str)> = vec![
        (
            0,
            b"HRRYFILX".to_vec(),
            Status::InvalidMagic,
            "byte 0 of the file: not a Hurray file",
        ),
        (8, vec![2], Status::VersionMismatch, "container version 2.0"),
        (10, vec![1], Status::ReservedBits, "byte 10 of the file"),
        (
            12,
            vec![8],
            Status::ReservedBits,
            "reserved bits 0x00000008",
        ),
        (
            16,
            2048u32.to_le_bytes().to_vec(),
            Status::CorruptFile,
            "data_buffer_alignment is 2048",
        ),
        (
            16,
            6000u32.to_le_bytes().to_vec(),
            Status::CorruptFile,
            "power of two",
        ),
        (
            16,
            (4u32 << 20).to_le_bytes().to_vec(),
            Status::CorruptFile,
            "2097152",
        ),
        (
            20,
            60u64.to_le_bytes().to_vec(),
            Status::CorruptFile,
            "first_descriptor_offset is 60",
        ),
        (
            20,
            72u64.to_le_bytes().to_vec(),
            Status::CorruptFile,
            "from first_descriptor_offset 72",
        ),
        (63, vec![1], Status::ReservedBits, "byte 63 of the file"),
    ];
    for (at, new, status, needle) in cases {
        let mut b = good.clone();
        put(&mut b, at, &new);
        refused(&b, status, &[needle]);
    }
    // The count hint is only a hint.
    let mut b = good.clone();
    put(&mut b, 28, &7u64.to_le_bytes());
    HurrayFile::from_bytes(&b).unwrap();
}

#[test]
fn trailer_and_checksum_rules() {
    let good = seed_file();
    let l = layout(&good);
    let t = l.trailer;
    let mut b = good.clone();
    b[t + 39] = b'Z';
    refused(
        &b,
        Status::InvalidMagic,
        &[&format!("byte {} of the file: the trailer magic", t + 36)],
    );
    let mut b = good.clone();
    b[t + 33] = 1;
    refused(
        &b,
        Status::ReservedBits,
        &[&format!("byte {} of the file", t + 33)],
    );
    // One flipped bit in the index: the checksum catches it.
    let mut b = good.clone();
    b[l.index_offset + 12] ^= 0x20;
    refused(
        &b,
        Status::Checksum,
        &[&format!("byte {} of the file", t + 28), "CRC-32C"],
    );
    // Without the CRC flag the field must be 0.
    let mut b = good.clone();
    b[12] &= !4;
    refused(&b, Status::CorruptFile, &["HAS_INDEX_CRC32C is not set"]);
    put(&mut b, t + 28, &[0; 4]);
    HurrayFile::from_bytes(&b).unwrap();
    // Index past the trailer, misplaced, or too short.
    for (new_off, new_len, needle) in [
        (
            l.index_offset as u64,
            (t - l.index_offset + 1) as u64,
            "runs past the trailer",
        ),
        (u64::MAX - 3, 8, "runs past the trailer"),
        (l.index_offset as u64 + 4, 8, "multiple of 8"),
        (l.index_offset as u64, 4, "at least its 8-byte entry count"),
    ] {
        let mut b = good.clone();
        put(&mut b, t, &new_off.to_le_bytes());
        put(&mut b, t + 8, &new_len.to_le_bytes());
        refused(&b, Status::CorruptFile, &[needle]);
    }
    // KV fields: flag without section, half-set fields.
    let mut b = good.clone();
    b[12] |= 1;
    refused(&b, Status::CorruptFile, &["HAS_KV_METADATA is set"]);
    let mut b = good.clone();
    put(&mut b, t + 16, &64u64.to_le_bytes());
    refused(
        &b,
        Status::CorruptFile,
        &["kv_offset is 64 and kv_length is 0"],
    );
}

#[test]
fn index_rules() {
    let good = seed_file();
    let l = layout(&good);
    let name_at = l.index_offset + 8 + 2;
    let mut cases: Vec<(Vec<u8>, Status, String)> = Vec::new();
    let mut edit = |f: &dyn Fn(&mut Vec<u8>), status, needle: String| {
        let mut b = good.clone();
        f(&mut b);
        recrc(&mut b);
        cases.push((b, status, needle));
    };
    edit(
        &|b| b[name_at] = b'b',
        Status::CorruptFile,
        "repeats the tensor name \"b\"".into(),
    );
    edit(
        &|b| b[name_at] = 0xFF,
        Status::CorruptFile,
        format!("byte {name_at} of the file: index entry 0: the name is not valid UTF-8"),
    );
    edit(
        &|b| put(b, name_at - 2, &0u16.to_le_bytes()),
        Status::CorruptFile,
        "name_length is 0".into(),
    );
    edit(
        &|b| put(b, l.index_offset, &1000u64.to_le_bytes()),
        Status::CorruptFile,
        "index_entry_count is 1000".into(),
    );
    edit(
        &|b| put(b, l.index_offset, &1u64.to_le_bytes()),
        Status::CorruptFile,
        "left over at the end of the index section".into(),
    );
    let flags_at = entry_field(&good, 1, 28);
    edit(
        &|b| b[flags_at] = 1,
        Status::ReservedBits,
        format!("byte {flags_at} of the file: index entry 1 (\"b\") has flags"),
    );
    // Lying offsets and lengths, each named with the field's offset.
    let d0 = entry_field(&good, 0, 0);
    let desc_len0 = entry_field(&good, 0, 8);
    let data0 = entry_field(&good, 0, 12);
    let data_len0 = entry_field(&good, 0, 20);
    edit(
        &|b| put(b, d0, &68u64.to_le_bytes()),
        Status::CorruptFile,
        format!("byte {d0} of the file: tensor \"A\": its descriptor (descriptor_offset 68"),
    );
    edit(
        &|b| put(b, d0, &(1u64 << 60).to_le_bytes()),
        Status::CorruptFile,
        "descriptor_offset 1152921504606846976".into(),
    );
    edit(&|b| put(b, desc_len0, &88u32.to_le_bytes()), Status::CorruptFile, format!("byte {desc_len0} of the file: tensor \"A\": the index says its descriptor is 88 bytes, the descriptor at byte 64 says 93"));
    edit(
        &|b| put(b, data0, &8192u64.to_le_bytes()),
        Status::CorruptFile,
        "tensors overlap".into(),
    );
    edit(
        &|b| put(b, data0, &4160u64.to_le_bytes()),
        Status::Misaligned,
        format!("byte {data0} of the file: tensor \"A\": data_offset 4160 is not a multiple"),
    );
    edit(
        &|b| put(b, data0, &0u64.to_le_bytes()),
        Status::CorruptFile,
        "must start after its descriptor ends".into(),
    );
    edit(
        &|b| put(b, data_len0, &(u64::MAX).to_le_bytes()),
        Status::CorruptFile,
        "data_length 18446744073709551615".into(),
    );
    // The second tensor's descriptor pointed into the first's data.
    let d1 = entry_field(&good, 1, 0);
    edit(
        &|b| put(b, d1, &4096u64.to_le_bytes()),
        Status::InvalidMagic,
        "tensor \"b\" (descriptor at byte 4096)".into(),
    );
    for (b, status, needle) in cases {
        refused(&b, status, &[&needle]);
    }
    // SORTED_INDEX on an index that is not sorted ("b" before "A").
    let f = Fixture::seed();
    let mut b = write_mem(&[("b", &f), ("A", &f)], &[], WriteOptions::default());
    b[12] |= 2;
    refused(
        &b,
        Status::CorruptFile,
        &["SORTED_INDEX is set but index entry \"A\" follows \"b\""],
    );
}

#[test]
fn lying_data_lengths_and_dirty_padding_are_refused_at_get() {
    // data_length shorter than the buffers: refused when the tensor is got
    // (the last index word is 0, so the bytes cut off read as padding).
    let f = Fixture::f32s(&[4, 4], &[&[0, 1], &[2, 0]], true);
    let one = write_mem(&[("A", &f)], &[], WriteOptions::default());
    let mut b = one.clone();
    let at = entry_field(&one, 0, 20);
    let len = read_u64(&one, at);
    put(&mut b, at, &(len - 8).to_le_bytes());
    recrc(&mut b);
    let file = HurrayFile::from_bytes(&b).unwrap();
    let e = file.coo(0, Options::default()).unwrap_err();
    assert_eq!(e.status(), Status::CorruptFile, "{e}");
    assert!(
        e.to_string().contains(&format!(
            "byte {at} of the file: tensor \"A\": the index says its data is {}",
            len - 8
        )),
        "{e}"
    );
    let good = seed_file();
    // Padding inside a tensor (between descriptor and data) must be zero.
    let mut b = good.clone();
    b[200] = 9;
    let file = HurrayFile::from_bytes(&b).unwrap();
    let e = file.coo(0, Options::default()).unwrap_err();
    assert_eq!(e.status(), Status::CorruptFile, "{e}");
    assert!(
        e.to_string()
            .starts_with("byte 200 of the file: padding byte"),
        "{e}"
    );
    // Padding between sections is checked at open: after the KV section
    // (9 bytes, so 7 of padding), and after the header.
    let kv = write_mem(
        &[("A", &Fixture::seed())],
        &[("k", KvValue::Bool(true))],
        WriteOptions::default(),
    );
    let kv_end = read_u64(&kv, kv.len() - 40 + 16) + 9;
    let mut b = kv.clone();
    b[kv_end as usize + 3] = 1;
    refused(
        &b,
        Status::CorruptFile,
        &[
            &format!("byte {} of the file: padding byte 3", kv_end + 3),
            "after the KV section",
        ],
    );
    let mut b = good.clone();
    put(&mut b, 20, &72u64.to_le_bytes());
    let d0 = entry_field(&good, 0, 0);
    put(&mut b, d0, &72u64.to_le_bytes());
    b.copy_within(64..64 + 93, 72);
    b[64..72].fill(0);
    b[64] = 5;
    recrc(&mut b);
    refused(
        &b,
        Status::CorruptFile,
        &[
            "byte 64 of the file: padding byte 0 of the 8",
            "after the header",
        ],
    );
    b[64] = 0;
    HurrayFile::from_bytes(&b).unwrap();
    // A descriptor broken inside: named with the tensor and its offset.
    let mut b = good.clone();
    b[64 + 15] = 0x07; // layout tag CSR
    let file = HurrayFile::from_bytes(&b).unwrap();
    let e = file.coo(0, Options::default()).unwrap_err();
    assert_eq!(e.status(), Status::InvalidLayout);
    assert!(
        e.to_string()
            .starts_with("tensor \"A\" (descriptor at byte 64): it has the CSR layout"),
        "{e}"
    );
    let mut b = good.clone();
    b[64 + 40] = 0xFF; // inside byte_offset
    let file = HurrayFile::from_bytes(&b).unwrap();
    let e = file.coo(0, Options::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("tensor \"A\" (descriptor at byte 64): "),
        "{e}"
    );
    // And the data rules still run: a duplicate entry in A.
    let f = Fixture::f32s(&[4, 4], &[&[0, 1], &[0, 1]], false);
    let bytes = {
        let mut w = Writer::new(Vec::new(), "m", WriteOptions::default()).unwrap();
        let e = w.add_coo("dup", &f.permissive()).unwrap_err();
        assert_eq!(e.status(), Status::Duplicate);
        w.finish().unwrap()
    };
    assert!(HurrayFile::from_bytes(&bytes).unwrap().tensors().is_empty());
}

#[test]
fn kv_rules() {
    let kv = vec![
        ("k", KvValue::Bool(true)),
        ("s", KvValue::String("x".into())),
    ];
    let good = write_mem(&[("A", &Fixture::seed())], &kv, WriteOptions::default());
    HurrayFile::from_bytes(&good).unwrap();
    let t = good.len() - 40;
    let kv_at = read_u64(&good, t + 16) as usize;
    // kv: count(4) | len 1 'k' tag 5 val | len 1 's' tag 1 len x
    let bool_at = kv_at + 4 + 2 + 1 + 1;
    let tag2 = kv_at + 4 + 5 + 2 + 1;
    let cases: Vec<(usize, Vec<u8>, Status, String)> = vec![
        (
            bool_at,
            vec![2],
            Status::CorruptFile,
            format!("byte {bool_at} of the file: KV entry \"k\": bool byte is 0x02"),
        ),
        (
            tag2 - 1,
            vec![b'k'],
            Status::CorruptFile,
            "repeats the key \"k\"".into(),
        ),
        (
            tag2,
            vec![0x08],
            Status::CorruptFile,
            format!(
                "byte {tag2} of the file: KV entry \"s\" has value tag 0x08, which is reserved"
            ),
        ),
        (
            tag2,
            vec![0xFF],
            Status::CorruptFile,
            "which is invalid".into(),
        ),
        (
            tag2,
            vec![0xF3],
            Status::UnsupportedFeature,
            "implementation-private value tag 0xF3".into(),
        ),
        (
            kv_at,
            3u32.to_le_bytes().to_vec(),
            Status::CorruptFile,
            "ends".into(),
        ),
        (
            kv_at,
            1000u32.to_le_bytes().to_vec(),
            Status::CorruptFile,
            "kv_count is 1000".into(),
        ),
        (
            tag2 + 1,
            9u32.to_le_bytes().to_vec(),
            Status::CorruptFile,
            "9-byte payload".into(),
        ),
    ];
    for (at, new, status, needle) in cases {
        let mut b = good.clone();
        put(&mut b, at, &new);
        refused(&b, status, &[&needle]);
    }
}

// ---- Interrupted writes, truncation, damage ----------------------------------

#[test]
fn no_prefix_of_a_file_opens_and_none_panics() {
    let kv = all_kv();
    let good = write_mem(&[("A", &Fixture::seed())], &kv, WriteOptions::default());
    for n in 0..good.len() {
        let e = HurrayFile::from_bytes(&good[..n]).unwrap_err();
        assert!(
            matches!(e.status(), Status::Truncated | Status::InvalidMagic),
            "prefix {n}: {e}"
        );
    }
    // A file padded at the end is not a file either.
    let mut longer = good.clone();
    longer.extend_from_slice(&[0; 8]);
    assert!(HurrayFile::from_bytes(&longer).is_err());
}

#[test]
fn an_interrupted_writer_leaves_nothing_under_the_name() {
    let path = tmp("interrupted.hrry");
    std::fs::write(&path, b"the old file").unwrap();
    {
        let mut w = FileWriter::create(&path, WriteOptions::default()).unwrap();
        w.add_coo("A", &Fixture::seed().strict().unwrap()).unwrap();
        // Dropped before finish: a crash, an error, an early return.
    }
    assert_eq!(std::fs::read(&path).unwrap(), b"the old file");
    let dir = path.parent().unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .contains("interrupted.hrry.")
        })
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    let mut w = FileWriter::create(&path, WriteOptions::default()).unwrap();
    w.add_coo("A", &Fixture::seed().strict().unwrap()).unwrap();
    w.finish().unwrap();
    HurrayFile::open(&path, OpenMode::Map).unwrap();
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn random_damage_is_refused_or_read_never_panics() {
    let mut rng = Rng::new(99);
    let a = random_tensor(&mut rng, 0x03, 3, true, 40);
    let b = random_tensor(&mut rng, TYPES[7].tag, 2, false, 30);
    let good = write_mem(&[("a", &a), ("b", &b)], &all_kv(), WriteOptions::default());
    let mut opened = 0;
    for round in 0..3000 {
        let mut bytes = good.clone();
        for _ in 0..1 + round % 4 {
            let at = rng.below(bytes.len() as u64) as usize;
            bytes[at] = rng.next() as u8;
        }
        if round % 2 == 0 {
            recrc(&mut bytes);
        }
        if let Ok(f) = check_container(&bytes).and_then(|_| HurrayFile::from_bytes(&bytes)) {
            opened += 1;
            for i in 0..f.tensors().len() {
                let _ = f.coo(i, Options::default());
            }
        }
    }
    assert!(
        opened > 0,
        "every damaged file was refused: the test flips too much"
    );
}

#[test]
fn the_open_file_is_shared_between_threads() {
    let bytes = seed_file();
    let file = HurrayFile::from_bytes(&bytes).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for i in 0..file.tensors().len() {
                    file.coo(i, Options::default()).unwrap();
                }
            });
        }
    });
}

/// Regenerates the fuzz seeds of the `file` target (a flag byte, then a
/// file): `cargo test --test hurray_files -- --ignored write_fuzz_seeds`.
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let dir = format!("{}/fuzz/seeds/file", env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(&dir).unwrap();
    let small = Fixture::f32s(&[3, 2, 2], &[&[0, 0, 1], &[2, 1, 0]], false);
    let files = [
        ("empty", write_mem(&[], &[], WriteOptions::default()), 0u8),
        (
            "seed-kv",
            write_mem(
                &[("A", &Fixture::seed())],
                &all_kv(),
                WriteOptions::default(),
            ),
            4,
        ),
        (
            "two-sorted-stats",
            write_mem(
                &[("A", &Fixture::seed()), ("b", &small)],
                &[("k", KvValue::Int64(1))],
                WriteOptions {
                    sorted_index: true,
                    stats: StatsChoice::Full,
                    ..Default::default()
                },
            ),
            1,
        ),
    ];
    for (name, bytes, flag) in files {
        let mut input = vec![flag];
        input.extend_from_slice(&bytes);
        std::fs::write(format!("{dir}/{name}"), input).unwrap();
    }
    let path = ref_file(
        "seed-dense.hrry",
        vec![("dense", dense_descriptor(), vec![vec![0u8; 24]])],
    );
    let mut input = vec![2u8];
    input.extend_from_slice(&std::fs::read(&path).unwrap());
    std::fs::write(format!("{dir}/dense"), input).unwrap();
}
