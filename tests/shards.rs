//! Shards (metadata.md shard section): the box is checked, global
//! coordinates translate and look up, descriptors and files carry the box
//! (byte-identical with hurray-core), and partition / concatenation agree
//! with a simple oracle on random tensors of every type.

mod common;

use common::{random_tensor, Fixture, Rng};
use hurray_coo::convert::sort_by_modes;
use hurray_coo::io::descriptor::{encode, encoded_len_of, parse, StatsChoice};
use hurray_coo::io::file::{HurrayFile, WriteOptions, Writer};
use hurray_coo::shard::{concat, partition, ShardBox, Split};
use hurray_coo::{Coo, Options, Status, TYPES};

fn boxed<'a>(coo: Coo<'a>, parent: &[u64], offset: &[u64]) -> Coo<'a> {
    coo.with_shard(ShardBox {
        parent_shape: parent.to_vec(),
        offset: offset.to_vec(),
    })
    .unwrap()
}

/// Every entry as (global coordinates, value bits), sorted: the oracle's
/// view of a tensor or a set of shards.
fn global_entries(shards: &[&Coo<'_>]) -> Vec<(Vec<u64>, Vec<u8>)> {
    let mut out = Vec::new();
    for s in shards {
        let ty = s.type_info().unwrap();
        let off = s
            .shard()
            .map_or(vec![0; s.shape().len()], |b| b.offset.clone());
        for i in 0..s.nnz() as usize {
            let g: Vec<u64> = s.entry(i).iter().zip(&off).map(|(c, o)| c + o).collect();
            let mut cell = [0u8; 16];
            hurray_coo::element::decode::copy_element(ty, s.values(), i, &mut cell);
            out.push((g, cell[..ty.lookup_bytes()].to_vec()));
        }
    }
    out.sort();
    out
}

#[test]
fn the_box_is_checked_and_global_coordinates_translate() {
    let f = Fixture::seed(); // 4x4: (0,1)=1.5, (2,0)=-0.5, (3,3)=2.0
    let e = f
        .strict()
        .unwrap()
        .with_shard(ShardBox {
            parent_shape: vec![8, 6],
            offset: vec![4, 3],
        })
        .unwrap_err();
    assert_eq!(e.status(), Status::InvalidShape);
    assert!(
        e.to_string()
            .contains("dimension 1: offset 3 + extent 4 exceeds parent extent 6"),
        "{e}"
    );
    let e = f
        .strict()
        .unwrap()
        .with_shard(ShardBox {
            parent_shape: vec![8],
            offset: vec![4],
        })
        .unwrap_err();
    assert!(e.to_string().contains("rank 1"), "{e}");
    let s = boxed(f.strict().unwrap(), &[8, 8], &[4, 2]);
    assert_eq!(s.lookup_global_f64(&[6, 2]).unwrap(), (-0.5, true));
    assert_eq!(s.lookup_global_f64(&[4, 3]).unwrap(), (1.5, true));
    assert_eq!(s.lookup_global_f64(&[5, 5]).unwrap(), (0.0, false));
    let mut local = [0u64; 2];
    s.to_local(&[7, 5], &mut local).unwrap();
    assert_eq!(local, [3, 3]);
    for (g, needle) in [
        ([3u64, 2u64], "global coordinate 3 in dimension 0 is outside this shard's box, which holds 4 to 7 of the parent's 8"),
        ([4, 6], "global coordinate 6 in dimension 1 is outside this shard's box, which holds 2 to 5"),
        ([9, 2], "global coordinate 9 in dimension 0"),
    ] {
        let e = s.lookup_global_f64(&g).unwrap_err();
        assert_eq!(e.status(), Status::OutsideShard);
        assert!(e.to_string().contains(needle), "{e}");
    }
    assert_eq!(
        s.lookup_global_f64(&[4]).unwrap_err().status(),
        Status::RankMismatch
    );
    // Not a shard: its own parent.
    let plain = f.strict().unwrap();
    assert_eq!(plain.lookup_global_f64(&[2, 0]).unwrap(), (-0.5, true));
    assert_eq!(
        plain.lookup_global_f64(&[4, 0]).unwrap_err().status(),
        Status::OutsideShard
    );
}

#[test]
fn descriptors_and_files_carry_the_box_byte_identical_with_hurray_core() {
    let mut rng = Rng::new(21);
    for ty in &TYPES {
        let f = random_tensor(&mut rng, ty.tag, 3, true, 9);
        let parent: Vec<u64> = f.shape.iter().map(|&e| e + 7).collect();
        let s = boxed(f.strict().unwrap(), &parent, &[1, 0, 7]);
        for stats in [StatsChoice::None, StatsChoice::Full] {
            let mut ours = vec![0u8; encoded_len_of(&s, stats)];
            encode(&s, stats, &mut ours).unwrap();
            let d = parse(&ours, false).unwrap();
            assert_eq!(d.shard.as_ref(), s.shard());
            // hurray-core reads the same box and writes the same bytes.
            let theirs = hurray_core::descriptor::TensorDescriptor::decode(&ours).unwrap();
            let sd = theirs.shard.as_ref().expect("a shard section");
            assert_eq!(sd.parent_shape, parent);
            assert_eq!(sd.shard_offset, vec![1, 0, 7]);
            assert_eq!(theirs.encode().unwrap(), ours, "{}", ty.name());
        }
        // Through a Hurray file.
        let mut w = Writer::new(Vec::new(), "m", WriteOptions::default()).unwrap();
        w.add_coo("s", &s).unwrap();
        let bytes = w.finish().unwrap();
        let file = HurrayFile::from_bytes(&bytes).unwrap();
        let (back, _) = file.coo(0, Options::default()).unwrap();
        assert_eq!(back.shard(), s.shard());
    }
}

#[test]
fn partition_and_concat_agree_with_the_oracle() {
    let mut rng = Rng::new(5);
    let mut cases = 0;
    for ty in TYPES.iter().step_by(3) {
        for rank in [1usize, 2, 3] {
            for sorted in [true, false] {
                let f = random_tensor(&mut rng, ty.tag, rank, sorted, 40);
                let coo = f.strict().unwrap();
                let rows = coo.shape()[0];
                let want = global_entries(&[&coo]);
                let cuts: Vec<u64> = vec![0, rows / 3, rows / 3, rows];
                for split in [
                    Split::EqualRows(1),
                    Split::EqualRows(3),
                    Split::EqualRows(7),
                    Split::BalancedNnz(2),
                    Split::BalancedNnz(5),
                    Split::Boundaries(&cuts),
                ] {
                    let shards = partition(&coo, split).unwrap();
                    let refs: Vec<&Coo<'_>> = shards.iter().collect();
                    // Every entry once, at its global place, with its value.
                    assert_eq!(global_entries(&refs), want, "{split:?}");
                    // Blocks stack along dimension 0 and cover the rows.
                    let mut next = 0;
                    for s in &shards {
                        let b = s.shard().unwrap();
                        assert_eq!(b.parent_shape, coo.shape());
                        assert_eq!(b.offset[0], next);
                        assert!(b.offset[1..].iter().all(|&o| o == 0));
                        next += s.shape()[0];
                        assert_eq!(s.is_sorted(), sorted);
                        s.validate().unwrap();
                    }
                    assert_eq!(next, rows);
                    if let Split::BalancedNnz(p) = split {
                        // Never worse than one row's entries over the share.
                        let share = coo.nnz().div_ceil(p as u64);
                        let heaviest = (0..rows)
                            .map(|r| {
                                (0..coo.nnz() as usize)
                                    .filter(|&i| coo.entry(i)[0] == r)
                                    .count() as u64
                            })
                            .max()
                            .unwrap_or(0);
                        assert!(
                            shards.iter().all(|s| s.nnz() <= share + heaviest),
                            "{split:?}"
                        );
                    }
                    // And back: the canonical tensor, whatever the order given.
                    let mut back_refs = refs.clone();
                    back_refs.reverse();
                    let joined = concat(&back_refs).unwrap();
                    let canonical =
                        sort_by_modes(&coo, &(0..rank as u32).collect::<Vec<_>>(), 1).unwrap();
                    assert!(joined.is_sorted() && joined.shard().is_none());
                    assert_eq!(joined.shape(), coo.shape());
                    assert_eq!(joined.indices_bytes(), canonical.indices_bytes());
                    assert_eq!(joined.values(), canonical.values());
                    cases += 1;
                }
            }
        }
    }
    assert!(cases > 100);
}

#[test]
fn a_shard_partitioned_again_keeps_global_offsets() {
    let f = Fixture::f32s(&[6, 4], &[&[0, 1], &[2, 3], &[5, 0]], true);
    let s = boxed(f.strict().unwrap(), &[20, 10], &[10, 6]);
    let parts = partition(&s, Split::Boundaries(&[0, 2, 6])).unwrap();
    assert_eq!(parts[0].shard().unwrap().offset, [10, 6]);
    assert_eq!(parts[1].shard().unwrap().offset, [12, 6]);
    assert_eq!(parts[1].shard().unwrap().parent_shape, [20, 10]);
    assert_eq!(parts[1].lookup_global_f64(&[15, 6]).unwrap(), (3.0, true));
    let whole = concat(&[&parts[1], &parts[0]]).unwrap();
    assert_eq!(whole.shape(), [20, 10]);
    assert_eq!(whole.lookup_f64(&[12, 9]).unwrap(), (2.0, true));
}

#[test]
fn bad_partitions_and_concatenations_are_refused() {
    let f = Fixture::seed();
    let coo = f.strict().unwrap();
    for (split, needle) in [
        (Split::EqualRows(0), "1 to 1048576 parts, not 0"),
        (Split::BalancedNnz(1 << 21), "not 2097152"),
        (Split::Boundaries(&[0, 3, 2, 4]), "never decrease"),
        (Split::Boundaries(&[1, 4]), "start at 0"),
        (Split::Boundaries(&[0, 5]), "end at the row extent 4"),
        (Split::Boundaries(&[0]), "not 0"),
    ] {
        let e = partition(&coo, split).unwrap_err();
        assert_eq!(e.status(), Status::InvalidArgument, "{e}");
        assert!(e.to_string().contains(needle), "{split:?}: {e}");
    }
    let parts = partition(&coo, Split::EqualRows(2)).unwrap();
    let e = concat(&[]).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    let e = concat(&[&parts[0], &coo]).unwrap_err();
    assert!(
        e.to_string()
            .contains("tensor 1 of the concatenation is not a shard"),
        "{e}"
    );
    let e = concat(&[&parts[0], &parts[0]]).unwrap_err();
    assert_eq!(e.status(), Status::InvalidShape);
    assert!(e.to_string().contains("overlap"), "{e}");
    let other = boxed(f.strict().unwrap(), &[9, 4], &[5, 0]);
    let e = concat(&[&parts[0], &other]).unwrap_err();
    assert!(e.to_string().contains("share type and parent shape"), "{e}");
}

#[test]
fn row_blocks_read_only_their_rows_and_check_the_whole_together() {
    use hurray_coo::shard::row_block;
    let mut rng = Rng::new(8);
    for ty in TYPES.iter().step_by(4) {
        for rank in [1usize, 2, 3] {
            let f = random_tensor(&mut rng, ty.tag, rank, true, 60);
            let coo = f.strict().unwrap();
            let rows = coo.shape()[0];
            let cuts = [0, rows / 2, rows / 2, rows];
            let want = partition(&coo, Split::Boundaries(&cuts)).unwrap();
            // From the permissive view a reader of a large file has.
            let lax = f.permissive();
            for k in 0..3 {
                let got = row_block(&lax, cuts[k], cuts[k + 1]).unwrap();
                assert_eq!(got.shard(), want[k].shard());
                assert_eq!(got.indices_bytes(), want[k].indices_bytes());
                assert_eq!(got.values(), want[k].values());
            }
        }
    }
    // A tensor that lies about its order: the block holding the lie, or
    // the one after a lie at its boundary, refuses it with the tensor's
    // entry numbers and coordinates.
    let lying = Fixture::f32s(&[4, 3], &[&[0, 1], &[2, 0], &[1, 2], &[3, 0]], true);
    let lax = lying.permissive();
    let e = row_block(&lax, 0, 4).unwrap_err();
    assert_eq!(e.status(), Status::NotSorted);
    assert!(
        e.to_string()
            .starts_with("entry 2 at (1, 2) is not after entry 1 at (2, 0)"),
        "{e}"
    );
    // Read as two blocks (two ranks), the lie is caught by one of them:
    // the binary search gives block 0 entries 0..3, whose order fails.
    let e = row_block(&lax, 0, 2).unwrap_err();
    assert!(
        matches!(e.status(), Status::NotSorted | Status::IndexOutOfBounds),
        "{e}"
    );
    assert!(row_block(&lax, 2, 4).is_ok());
    // Not sorted at all, or rows outside: refused up front.
    let unsorted = Fixture::f32s(&[4, 3], &[&[2, 0], &[0, 1]], false);
    assert_eq!(
        row_block(&unsorted.strict().unwrap(), 0, 2)
            .unwrap_err()
            .status(),
        Status::InvalidArgument
    );
    let seed = Fixture::seed();
    assert_eq!(
        row_block(&seed.strict().unwrap(), 3, 5)
            .unwrap_err()
            .status(),
        Status::InvalidArgument
    );
    // Through a file: the part of a tensor, nothing else read.
    let coo = seed.strict().unwrap();
    let mut w = Writer::new(Vec::new(), "m", WriteOptions::default()).unwrap();
    w.add_coo("A", &coo).unwrap();
    let file = HurrayFile::from_bytes(&w.finish().unwrap()).unwrap();
    let part = file.coo_rows(0, 2, 4).unwrap();
    assert_eq!(part.nnz(), 2);
    assert_eq!(part.lookup_global_f64(&[3, 3]).unwrap(), (2.0, true));
    let e = file.coo_rows(0, 0, 9).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("tensor \"A\" (descriptor at byte 64): row block 0 to 9"),
        "{e}"
    );
}
