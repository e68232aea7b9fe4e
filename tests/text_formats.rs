//! Matrix Market and FROSTT: every kind of file reads into what a simple
//! oracle (a map from coordinates to values) says it holds, what is written
//! reads back exactly, and every malformed file is refused with its line,
//! column and token.

mod common;

use std::collections::BTreeMap;

use common::data::Rng;
use hurray_coo::assemble::Duplicates;
use hurray_coo::io::mtx::{read_mtx, write_mtx, MtxField, MtxSymmetry};
use hurray_coo::io::tns::{read_tns, write_tns};
use hurray_coo::io::{TextOptions, WriteOptions};
use hurray_coo::{Coo, CooError, Status};

fn f64s(coo: &Coo<'_>) -> Vec<f64> {
    coo.values()
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The tensor as a map from coordinates to 8-byte value chunks (or none).
fn as_map(coo: &Coo<'_>) -> BTreeMap<Vec<u64>, Vec<u8>> {
    let w = coo.type_info().unwrap().lookup_bytes();
    (0..coo.nnz() as usize)
        .map(|i| {
            let v = if coo.type_tag() == 0x20 {
                vec![coo.values()[i / 8] >> (i % 8) & 1]
            } else {
                coo.values()[i * w..(i + 1) * w].to_vec()
            };
            (coo.entry(i).to_vec(), v)
        })
        .collect()
}

fn mtx(text: &str) -> Result<Coo<'static>, CooError> {
    read_mtx(text.as_bytes(), &TextOptions::default()).map(|(c, _)| c)
}

fn mtx_err(text: &str) -> (Status, String) {
    let e = mtx(text).expect_err("must be refused");
    (e.status(), e.to_string())
}

#[test]
fn general_real_coordinate_reads_as_written_and_sorted() {
    let coo = mtx("%%MatrixMarket matrix coordinate real general\n\
         % a comment\n\
         \n\
         3 4 3\n\
         3 4 -1.5e3\n\
         1 1 2\n\
         2 3 0.25\n")
    .unwrap();
    assert_eq!(coo.shape(), &[3, 4]);
    assert_eq!(coo.type_tag(), 0x04);
    assert!(coo.is_sorted());
    assert_eq!(coo.indices(), &[0, 0, 1, 2, 2, 3]);
    assert_eq!(f64s(&coo), vec![2.0, 0.25, -1500.0]);
}

#[test]
fn every_field_has_its_type() {
    let int = mtx("%%MatrixMarket matrix coordinate integer general\n2 2 1\n2 1 -7\n").unwrap();
    assert_eq!(int.type_tag(), 0x16);
    assert_eq!(int.values(), &(-7i64).to_le_bytes());
    let cx = mtx("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1.5 -2\n").unwrap();
    assert_eq!(cx.type_tag(), 0x51);
    assert_eq!(f64s(&cx), vec![1.5, -2.0]);
    let pat = mtx("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 2\n").unwrap();
    assert_eq!(pat.type_tag(), 0x20);
    assert_eq!(pat.nnz(), 2);
    assert_eq!(pat.values()[0] & 3, 3);
}

#[test]
fn symmetric_kinds_are_mirrored_or_kept() {
    let text = "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n3 1 2\n3 2 -1\n";
    let coo = mtx(text).unwrap();
    assert_eq!(coo.indices(), &[0, 0, 0, 2, 1, 2, 2, 0, 2, 1]);
    assert_eq!(f64s(&coo), vec![4.0, 2.0, -1.0, 2.0, -1.0]);
    let o = TextOptions {
        keep_triangular: true,
        ..Default::default()
    };
    let (kept, h) = read_mtx(text.as_bytes(), &o).unwrap();
    assert_eq!(h.symmetry, MtxSymmetry::Symmetric);
    assert_eq!(h.field, MtxField::Real);
    assert_eq!(kept.nnz(), 3);

    let skew =
        mtx("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 5\n").unwrap();
    assert_eq!(skew.indices(), &[0, 1, 1, 0]);
    let v: Vec<i64> = skew
        .values()
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(v, vec![-5, 5]);

    let herm = mtx("%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 3 0\n2 1 1 2\n")
        .unwrap();
    assert_eq!(herm.indices(), &[0, 0, 0, 1, 1, 0]);
    assert_eq!(f64s(&herm), vec![3.0, 0.0, 1.0, -2.0, 1.0, 2.0]);

    let pat = mtx("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1\n").unwrap();
    assert_eq!(pat.nnz(), 2);
}

#[test]
fn array_files_are_read_column_by_column() {
    let gen = mtx("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n").unwrap();
    assert_eq!(gen.nnz(), 6);
    assert_eq!(f64s(&gen), vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    let sym = mtx("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n").unwrap();
    assert_eq!(f64s(&sym), vec![1.0, 2.0, 2.0, 3.0]);
    let skew = mtx("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n").unwrap();
    // Strictly lower, column by column: (2,1)=1 (3,1)=2 (3,2)=3.
    assert_eq!(f64s(&skew), vec![-1.0, -2.0, 1.0, -3.0, 2.0, 3.0]);
    let cx = mtx("%%MatrixMarket matrix array complex general\n1 1\n1 2\n").unwrap();
    assert_eq!(f64s(&cx), vec![1.0, 2.0]);
}

#[test]
fn duplicates_follow_the_policy_and_name_both_lines() {
    let text = "%%MatrixMarket matrix coordinate real general\n% c\n2 2 3\n1 2 1\n2 2 5\n1 2 2\n";
    let (st, msg) = mtx_err(text);
    assert_eq!(st, Status::Duplicate);
    assert!(msg.contains("line 6 duplicates line 4"), "{msg}");
    assert!(msg.contains("(1, 2)"), "{msg}");
    let o = TextOptions {
        assemble: hurray_coo::assemble::AssembleOptions {
            duplicates: Duplicates::Sum,
            ..Default::default()
        },
        ..Default::default()
    };
    let (coo, _) = read_mtx(text.as_bytes(), &o).unwrap();
    assert_eq!(f64s(&coo), vec![3.0, 5.0]);
    // A stored entry and its mirror image.
    let (st, msg) =
        mtx_err("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 1\n");
    assert_eq!(st, Status::Duplicate);
    assert!(msg.contains("line 3 (mirrored) duplicates line 4"), "{msg}");
}

#[test]
fn malformed_files_name_line_column_and_token() {
    let cases: &[(&str, Status, &str)] = &[
        ("", Status::ParseError, "line 1: the input is empty"),
        ("%%MatrixMarket matrix coordinate real\n", Status::ParseError, "line 1: the banner has 4 words"),
        ("%MatrixMarket matrix coordinate real general\n1 1 0\n", Status::ParseError, "line 1, column 1"),
        ("%%MatrixMarket vector coordinate real general\n", Status::ParseError, "column 16"),
        ("%%MatrixMarket matrix coordinate reals general\n", Status::ParseError, "(found 'reals')"),
        ("%%MatrixMarket matrix coordinate real hermitian\n", Status::ParseError, "needs the 'complex' field"),
        ("%%MatrixMarket matrix array pattern general\n", Status::ParseError, "cannot be 'pattern'"),
        ("%%MatrixMarket matrix coordinate real general\n", Status::ParseError, "line 2: the file ends before the size line"),
        ("%%MatrixMarket matrix coordinate real general\n2 2\n", Status::ParseError, "line 2: the size line has 2 numbers"),
        ("%%MatrixMarket matrix coordinate real general\n2 x 1\n", Status::ParseError, "line 2, column 3: expected a non-negative integer (found 'x')"),
        ("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n", Status::ParseError, "must be square"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1.0.0\n", Status::ParseError, "line 3, column 5: expected a number (found '1.0.0')"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 2 1\n", Status::ParseError, "line 3, column 1: row index out of range"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 0 1\n", Status::ParseError, "line 3, column 3: column index out of range"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 -1 1\n", Status::ParseError, "(found '-1')"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n", Status::ParseError, "line 3: 2 field(s) where an entry is 'row column value'"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1 1\n", Status::ParseError, "line 3, column 7: unexpected field"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n", Status::ParseError, "line 4, column 1: one entry more than the 1"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n", Status::ParseError, "the file ends after 1 of the 3 entries"),
        ("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 2.5\n", Status::ParseError, "expected an integer (found '2.5')"),
        ("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n1 1 2\n", Status::ParseError, "zero diagonal"),
        ("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 -9223372036854775808\n", Status::ParseError, "line 3: the value -9223372036854775808 has no negation"),
        ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", Status::ParseError, "the file ends after 3 of the 4 entries"),
        ("%%MatrixMarket matrix array real general\n99999999999 99999999999\n", Status::ParseError, "do not fit a 64-bit count"),
    ];
    for (text, st, needle) in cases {
        let (got, msg) = mtx_err(text);
        assert_eq!(got, *st, "{text:?}: {msg}");
        assert!(msg.contains(needle), "{text:?}: '{msg}' lacks '{needle}'");
    }
    // Not UTF-8: the line is named.
    let e = read_mtx(
        b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 \xff\n",
        &TextOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("line 3: not UTF-8"), "{e}");
}

#[test]
fn a_lying_entry_count_reserves_nothing_large() {
    let text = "%%MatrixMarket matrix coordinate real general\n9 9 18446744073709551615\n1 1 1\n";
    let (st, msg) = mtx_err(text);
    assert_eq!(st, Status::ParseError);
    assert!(
        msg.contains("ends after 1 of the 18446744073709551615"),
        "{msg}"
    );
}

/// Random tensors of every text-relevant type written and read back equal
/// the original (shortest text round-trips exactly).
#[test]
fn written_files_read_back_exactly() {
    let mut rng = Rng::new(7);
    for round in 0..40 {
        let rows = 1 + rng.below(50);
        let cols = 1 + rng.below(50);
        let n = rng.below(rows * cols / 2 + 1) as usize;
        let mut map = BTreeMap::new();
        for _ in 0..n {
            let x = f64::from_bits(rng.next() >> 2) * if rng.below(2) == 0 { -1.0 } else { 1.0 };
            map.insert(vec![rng.below(rows), rng.below(cols)], x);
        }
        let mut text = format!(
            "%%MatrixMarket matrix coordinate real general\n{rows} {cols} {}\n",
            map.len()
        );
        for (c, v) in &map {
            text += &format!("{} {} {v:e}\n", c[0] + 1, c[1] + 1);
        }
        let coo = mtx(&text).unwrap();
        let mut out = Vec::new();
        write_mtx(&coo, &WriteOptions::default(), &mut out).unwrap();
        let again = read_mtx(&out, &TextOptions::default()).unwrap().0;
        assert_eq!(as_map(&coo), as_map(&again), "round {round}");
        assert_eq!(again.shape(), &[rows, cols]);
        let oracle: Vec<f64> = map.values().copied().collect();
        assert_eq!(f64s(&again), oracle);
        // The same through FROSTT, with the shape given.
        let mut tns = Vec::new();
        write_tns(&coo, &WriteOptions::default(), &mut tns).unwrap();
        let t = read_tns(&tns, Some(&[rows, cols]), &TextOptions::default()).unwrap();
        assert_eq!(as_map(&coo), as_map(&t));
    }
}

/// Formatting on several threads writes the same text as one thread.
#[test]
fn threaded_writes_are_identical() {
    let mut rng = Rng::new(3);
    let mut text = String::from("1000 1000 1\n");
    let mut seen = std::collections::HashSet::new();
    for _ in 0..200_000 {
        let (i, j) = (rng.below(1000) + 1, rng.below(1000) + 1);
        if seen.insert((i, j)) {
            text += &format!("{i} {j} {:e}\n", rng_f(rng.next()));
        }
    }
    let body = text.split_once('\n').unwrap().1;
    let mtx_text = format!(
        "%%MatrixMarket matrix coordinate real general\n1000 1000 {}\n{body}",
        seen.len()
    );
    let coo = mtx(&mtx_text).unwrap();
    for precision in [None, Some(5)] {
        let mut one = Vec::new();
        let mut many = Vec::new();
        write_mtx(
            &coo,
            &WriteOptions {
                precision,
                threads: 1,
                pattern: false,
                array: false,
            },
            &mut one,
        )
        .unwrap();
        write_mtx(
            &coo,
            &WriteOptions {
                precision,
                threads: 3,
                pattern: false,
                array: false,
            },
            &mut many,
        )
        .unwrap();
        assert!(one == many, "threaded text differs");
        let mut t1 = Vec::new();
        let mut t3 = Vec::new();
        write_tns(
            &coo,
            &WriteOptions {
                precision,
                threads: 1,
                pattern: false,
                array: false,
            },
            &mut t1,
        )
        .unwrap();
        write_tns(
            &coo,
            &WriteOptions {
                precision,
                threads: 3,
                pattern: false,
                array: false,
            },
            &mut t3,
        )
        .unwrap();
        assert!(t1 == t3, "threaded FROSTT text differs");
    }
    let back = read_mtx(
        &{
            let mut v = Vec::new();
            write_mtx(
                &coo,
                &WriteOptions {
                    precision: None,
                    threads: 2,
                    pattern: false,
                    array: false,
                },
                &mut v,
            )
            .unwrap();
            v
        },
        &TextOptions::default(),
    )
    .unwrap()
    .0;
    assert_eq!(as_map(&coo), as_map(&back));
}

#[test]
fn other_types_write_in_their_field() {
    let cx = mtx("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 0.1 -3\n").unwrap();
    let mut out = Vec::new();
    write_mtx(&cx, &WriteOptions::default(), &mut out).unwrap();
    let s = String::from_utf8(out).unwrap();
    assert!(
        s.starts_with("%%MatrixMarket matrix coordinate complex general\n"),
        "{s}"
    );
    assert!(s.ends_with("2 2 1\n1 2 0.1 -3.0\n"), "{s}");
    let pat = mtx("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1\n").unwrap();
    let mut out = Vec::new();
    write_mtx(&pat, &WriteOptions::default(), &mut out).unwrap();
    let s = String::from_utf8(out).unwrap();
    assert!(
        s.contains("coordinate pattern general") && s.ends_with("\n2 1\n"),
        "{s}"
    );
    let int =
        mtx("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 -9223372036854775808\n")
            .unwrap();
    let mut out = Vec::new();
    write_mtx(&int, &WriteOptions::default(), &mut out).unwrap();
    assert!(String::from_utf8(out)
        .unwrap()
        .ends_with("1 1 -9223372036854775808\n"));
    // Precision: significant digits.
    let r = mtx("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 3.14159265\n").unwrap();
    let mut out = Vec::new();
    write_mtx(
        &r,
        &WriteOptions {
            precision: Some(3),
            threads: 1,
            pattern: false,
            array: false,
        },
        &mut out,
    )
    .unwrap();
    assert!(String::from_utf8(out).unwrap().ends_with("1 1 3.14e0\n"));
    for bad in [0, 18] {
        let e = write_mtx(
            &r,
            &WriteOptions {
                precision: Some(bad),
                threads: 1,
                pattern: false,
                array: false,
            },
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(e.status(), Status::InvalidArgument, "{e}");
    }
    // FROSTT refuses complex; Matrix Market refuses rank 3.
    let e = write_tns(&cx, &WriteOptions::default(), &mut Vec::new()).unwrap_err();
    assert_eq!(e.status(), Status::UnsupportedFeature, "{e}");
    let t3 = read_tns(b"1 2 3 1.5\n", None, &TextOptions::default()).unwrap();
    let e = write_mtx(&t3, &WriteOptions::default(), &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("rank 3"), "{e}");
}

#[test]
fn frostt_files_infer_or_check_their_shape() {
    let text = b"# a comment\n1 1 1 1.0\n2 3 4 -2\n\n1 3 2 0.5\n";
    let t = read_tns(text, None, &TextOptions::default()).unwrap();
    assert_eq!(t.shape(), &[2, 3, 4]);
    assert_eq!(t.indices(), &[0, 0, 0, 0, 2, 1, 1, 2, 3]);
    assert_eq!(f64s(&t), vec![1.0, 0.5, -2.0]);
    let t = read_tns(text, Some(&[5, 5, 5]), &TextOptions::default()).unwrap();
    assert_eq!(t.shape(), &[5, 5, 5]);
    type Case<'a> = (&'a [u8], Option<&'a [u64]>, Status, &'a str);
    let cases: &[Case<'_>] = &[
        (
            b"1 1 1 1.0\n2 3 4 -2\n",
            Some(&[2, 2, 9]),
            Status::ParseError,
            "line 2, column 3: coordinate of mode 2 is beyond the given extent 2",
        ),
        (
            b"1 1 1 1.0\n2 3 -2\n",
            None,
            Status::ParseError,
            "line 2: 3 field(s)",
        ),
        (
            b"1 1 1 1.0\n2 3 4 5 6\n",
            None,
            Status::ParseError,
            "line 2, column 9: unexpected field",
        ),
        (
            b"1 0 1 1.0\n",
            None,
            Status::ParseError,
            "line 1, column 3: coordinate of mode 2 is 0",
        ),
        (b"7\n", None, Status::ParseError, "line 1, column 1"),
        (
            b"# only a comment\n",
            None,
            Status::ParseError,
            "no entries and no shape",
        ),
        (
            b"1 1 x\n",
            None,
            Status::ParseError,
            "line 1, column 5: expected a number (found 'x')",
        ),
        (
            b"1 1 1\n2 2 1\n1 1 3\n",
            None,
            Status::Duplicate,
            "line 3 duplicates line 1: both are entry (1, 1)",
        ),
    ];
    for (text, shape, st, needle) in cases {
        let e = read_tns(text, *shape, &TextOptions::default()).unwrap_err();
        assert_eq!(e.status(), *st, "{e}");
        assert!(e.to_string().contains(needle), "'{e}' lacks '{needle}'");
    }
    // An empty file with a shape is an empty tensor.
    let t = read_tns(b"", Some(&[3, 3]), &TextOptions::default()).unwrap();
    assert_eq!(t.nnz(), 0);
}

#[test]
fn files_round_trip_leave_no_temporary_and_errors_name_the_path() {
    let dir = std::env::temp_dir().join(format!("hurray_text_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("a.mtx");
    let coo = mtx("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1\n").unwrap();
    hurray_coo::io::mtx::write_mtx_file(&coo, &p, &WriteOptions::default()).unwrap();
    let (back, _) = hurray_coo::io::mtx::read_mtx_file(&p, &TextOptions::default()).unwrap();
    assert_eq!(as_map(&coo), as_map(&back));
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    std::fs::write(
        &p,
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 5 1\n",
    )
    .unwrap();
    let e = hurray_coo::io::mtx::read_mtx_file(&p, &TextOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("{}: line 3, column 3", p.display())),
        "{e}"
    );
    // A duplicate read from a file is named by its lines too: the reader
    // drops the text before assembling and reads the file again to find
    // them.
    for (text, want) in [
        (
            "%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n1 2 1\n\n2 2 1\n1 2 5\n",
            "line 7 duplicates line 4",
        ),
        (
            "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n% c\n1 2 5\n",
            "line 3 (mirrored) duplicates line 5",
        ),
    ] {
        std::fs::write(&p, text).unwrap();
        let e = hurray_coo::io::mtx::read_mtx_file(&p, &TextOptions::default()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("{}: ", p.display())), "{msg}");
        assert!(msg.contains(want), "{msg} lacks {want}");
    }
    let e =
        hurray_coo::io::tns::read_tns_file(&dir.join("missing.tns"), None, &TextOptions::default())
            .unwrap_err();
    assert_eq!(e.status(), Status::Io);
    let m = e.to_string();
    assert!(m.contains("missing.tns: cannot read: "), "{m}");
    assert!(!m.contains("os error"), "no Rust error suffix: {m}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Reader options for round `round` of a random test: ERROR every third
/// round, `other` otherwise.
fn text_options(round: usize, other: Duplicates, threads: usize) -> TextOptions {
    TextOptions {
        assemble: hurray_coo::assemble::AssembleOptions {
            duplicates: if round.is_multiple_of(3) {
                Duplicates::Error
            } else {
                other
            },
            threads,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A random Matrix Market or FROSTT text: valid, or with one corruption
/// (a bad token, an index out of range, a missing or extra field, a
/// blank or comment line, CRLF, tabs, a wrong count).
fn random_text(rng: &mut Rng, frostt: bool, big: bool) -> String {
    let fields = ["real", "integer", "complex", "pattern"];
    let syms = ["general", "symmetric", "skew-symmetric", "hermitian"];
    let field = fields[rng.below(4) as usize];
    let mut sym = syms[rng.below(4) as usize];
    if (sym == "hermitian" && field != "complex") || (sym == "skew-symmetric" && field == "pattern")
    {
        sym = "general";
    }
    let rank = if frostt { 1 + rng.below(4) as usize } else { 2 };
    let n_dim = 1 + rng.below(9);
    let n = if big { 120_000 } else { rng.below(40) as usize };
    let eol = if rng.below(8) == 0 { "\r\n" } else { "\n" };
    let mut lines = Vec::new();
    for _ in 0..n {
        let mut c: Vec<u64> = (0..rank).map(|_| 1 + rng.below(n_dim)).collect();
        if !frostt && sym != "general" && c[0] < c[1] {
            c.swap(0, 1);
        }
        if !frostt && sym == "skew-symmetric" && c[0] == c[1] {
            c[0] = c[1] % n_dim + 1;
            if c[0] < c[1] {
                c.swap(0, 1);
            }
            if c[0] == c[1] {
                continue;
            }
        }
        let mut line: Vec<String> = c.iter().map(|x| x.to_string()).collect();
        let vf = if frostt {
            1
        } else {
            match field {
                "pattern" => 0,
                "complex" => 2,
                _ => 1,
            }
        };
        for _ in 0..vf {
            if field == "integer" && !frostt {
                line.push((rng.below(2001) as i64 - 1000).to_string());
            } else {
                let specials = [
                    "inf",
                    "-NaN",
                    "1.",
                    ".5",
                    "+2",
                    "1e400",
                    "-0",
                    "2E-3",
                    "1e",
                    "0x1",
                    "infinity",
                    "1_0",
                    "5e-324",
                    "1.7976931348623157e308",
                    "0.1e+1",
                ];
                line.push(if rng.below(20) == 0 {
                    specials[rng.below(specials.len() as u64) as usize].to_string()
                } else if rng.below(2) == 0 {
                    format!("{:e}", f64::from_bits(rng.next() >> 2))
                } else {
                    ((rng_f(rng.next()) * 1e3).round() / 8.0).to_string()
                });
            }
        }
        let sep = if rng.below(10) == 0 { "\t" } else { " " };
        lines.push(line.join(sep));
    }
    if !big && rng.below(3) == 0 && !lines.is_empty() {
        let k = rng.below(lines.len() as u64) as usize;
        lines[k] = match rng.below(8) {
            // 22 digits: valid (leading zeros), longer than the fast path reads.
            7 => format!("000000000000000000000{}", lines[k]),
            0 => "1 x 2".into(),
            1 => format!("{} 1 1 1", n_dim + 1),
            2 => "1".into(),
            3 => format!("{} 7", lines[k]),
            4 => "".into(),
            5 => "% c".into(),
            _ => format!("0 {}", lines[k]),
        };
    }
    let body: String = lines.iter().map(|l| format!("{l}{eol}")).collect();
    if frostt {
        return format!("# generated{eol}{body}");
    }
    let declared = lines.len() as u64 + if rng.below(10) == 0 { 1 } else { 0 };
    format!("%%MatrixMarket matrix coordinate {field} {sym}{eol}% gen{eol}{n_dim} {n_dim} {declared}{eol}{body}")
}

fn rng_f(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

/// The fast path agrees with the line-by-line reference on every input:
/// the same tensor, or the same error, for 1 and 2 threads.
#[test]
fn the_fast_path_agrees_with_the_reference() {
    use hurray_coo::io::mtx::read_mtx_line_by_line;
    use hurray_coo::io::tns::read_tns_line_by_line;
    let mut rng = Rng::new(99);
    let (mut oks, mut errs) = (0, 0);
    for round in 0..600 {
        let frostt = round % 2 == 1;
        let big = round % 150 == 0;
        let text = random_text(&mut rng, frostt, big);
        for threads in [1, 2] {
            let o = text_options(round, Duplicates::Last, threads);
            let (fast, slow) = if frostt {
                (
                    read_tns(text.as_bytes(), None, &o),
                    read_tns_line_by_line(text.as_bytes(), None, &o),
                )
            } else {
                (
                    read_mtx(text.as_bytes(), &o).map(|x| x.0),
                    read_mtx_line_by_line(text.as_bytes(), &o).map(|x| x.0),
                )
            };
            match (&fast, &slow) {
                (Ok(a), Ok(b)) => {
                    oks += 1;
                    assert_eq!(as_map(a), as_map(b), "round {round}:\n{text}");
                    assert_eq!(a.shape(), b.shape());
                    assert_eq!(a.type_tag(), b.type_tag());
                }
                (Err(a), Err(b)) => {
                    errs += 1;
                    assert_eq!(a.to_string(), b.to_string(), "round {round}");
                }
                _ => panic!(
                    "round {round}, {threads} threads: fast {:?} vs reference {:?}\n{text}",
                    fast.as_ref().map(|c| c.nnz()),
                    slow.as_ref().map(|c| c.nnz())
                ),
            }
        }
    }
    assert!(oks > 300 && errs > 200, "{oks} accepted, {errs} refused");
}

/// A file read in pieces (each cut at a line end, a line longer than a
/// piece, the header alone longer than one) gives what the whole-file
/// reader gives: the same tensor, or the same error naming the same file
/// and line, on 1 and 2 threads, for valid and corrupted files alike.
#[test]
fn a_file_read_in_pieces_reads_as_the_whole_file() {
    use hurray_coo::io::mtx::read_mtx_file_in_pieces;
    let dir = std::env::temp_dir().join(format!("hurray_pieces_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.mtx");
    let mut rng = Rng::new(4242);
    let (mut oks, mut errs) = (0, 0);
    for round in 0..300 {
        let text = random_text(&mut rng, false, round % 100 == 0);
        std::fs::write(&path, &text).unwrap();
        for threads in [1, 2] {
            let o = text_options(round, Duplicates::Sum, threads);
            let whole = read_mtx_file_in_pieces(&path, &o, usize::MAX).map(|x| x.0);
            for piece in [7, 40, 1 + rng.below(300) as usize, 1 << 16] {
                let got = read_mtx_file_in_pieces(&path, &o, piece).map(|x| x.0);
                match (&whole, &got) {
                    (Ok(a), Ok(b)) => {
                        oks += 1;
                        assert_eq!(as_map(a), as_map(b), "round {round}, piece {piece}");
                        assert_eq!((a.shape(), a.type_tag()), (b.shape(), b.type_tag()));
                    }
                    (Err(a), Err(b)) => {
                        errs += 1;
                        assert_eq!(a.to_string(), b.to_string(), "round {round}, piece {piece}");
                    }
                    _ => panic!("round {round}, piece {piece}: {whole:?} vs {got:?}\n{text}"),
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(oks > 300 && errs > 200, "{oks} accepted, {errs} refused");
}

/// On two threads a file of two pieces or more is read in two halves, the
/// second appended to the first: the entries keep the file's order, so a
/// repeat whose two lines sit in different halves gives what the whole-file
/// reader gives under FIRST, LAST and ERROR (which names both lines).
#[test]
fn a_file_read_in_two_halves_keeps_the_order_of_its_lines() {
    use hurray_coo::io::mtx::read_mtx_file_in_pieces;
    let dir = std::env::temp_dir().join(format!("hurray_halves2_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.mtx");
    for (first, again) in [(3usize, 150usize), (10, 190), (40, 120)] {
        // 200 lines: (k / 10 + 1, k % 10 + 1) = k, and line `again` repeats
        // line `first`'s coordinates with another value.
        let mut text = String::from("%%MatrixMarket matrix coordinate real general\n30 10 200\n");
        for k in 0..200 {
            let at = if k == again { first } else { k };
            text += &format!("{} {} {}.5\n", at / 10 + 1, at % 10 + 1, k);
        }
        std::fs::write(&path, &text).unwrap();
        for policy in [
            Duplicates::First,
            Duplicates::Last,
            Duplicates::Error,
            Duplicates::Sum,
        ] {
            let mut o = text_options(1, policy, 2);
            o.assemble.threads = 2;
            let whole = read_mtx_file_in_pieces(&path, &o, usize::MAX).map(|x| x.0);
            let halves = read_mtx_file_in_pieces(&path, &o, 256).map(|x| x.0);
            match (&whole, &halves) {
                (Ok(a), Ok(b)) => assert_eq!(as_map(a), as_map(b), "{policy:?} {first} {again}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                _ => panic!("{policy:?}: {whole:?} / {halves:?}"),
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A mirrored symmetric file whose lower triangle is in row order is read
/// into a handle by placing each entry and its image (no assembly): the
/// same tensor, bit for bit, as reading the same bytes from memory (which
/// assembles), and an error wherever that gives one. Files in order, and
/// broken: an entry above the diagonal, a repeat, two entries swapped, a
/// short count; real and integer, another value type, zeros dropped,
/// triangles kept, 1 and 2 threads (a file of 280k entries places its
/// rows on both).
#[test]
fn a_symmetric_file_in_order_reads_as_its_bytes_do() {
    use hurray_coo::io::mtx::read_mtx_file;
    let dir = std::env::temp_dir().join(format!("hurray_symh_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.mtx");
    let mut rng = Rng::new(777);
    // ERROR, SUM, FIRST and LAST.
    let policies = &Duplicates::ALL[..4];
    let (mut oks, mut errs) = (0, 0);
    for round in 0..120 {
        let m = [5u64, 40, 300, 40, 5, 40, 300, 1500][round % 8];
        let mut keys = Vec::new();
        for r in 0..m {
            for c in 0..=r {
                if rng.below(8) == 0 || (r == c && rng.below(2) == 0) {
                    keys.push((r, c));
                }
            }
        }
        let mut declared = keys.len();
        match round % 7 {
            1 if keys.len() > 2 => {
                let mid = keys.len() / 2;
                let (r, c) = keys[mid];
                keys[mid] = (c, r);
            }
            2 if keys.len() > 2 => {
                let mid = keys.len() / 2;
                keys.insert(mid, keys[mid]);
            }
            3 if keys.len() > 2 => keys.swap(1, 2),
            4 => declared += 1,
            _ => {}
        }
        let integer = round % 3 == 1;
        let field = if integer { "integer" } else { "real" };
        let mut text = format!(
            "%%MatrixMarket matrix coordinate {field} symmetric\n% c\n{m} {m} {declared}\n"
        );
        for &(r, c) in &keys {
            let v = rng.below(9) as i64 - 4;
            match integer {
                true => text += &format!("{} {} {v}\n", r + 1, c + 1),
                false => text += &format!("{} {} {v}.25e-1\n", r + 1, c + 1),
            }
        }
        std::fs::write(&path, &text).unwrap();
        let mut o = text_options(
            round,
            policies[rng.below(4) as usize],
            1 + rng.below(2) as usize,
        );
        o.keep_triangular = rng.below(6) == 0;
        o.assemble.drop_zeros = rng.below(6) == 0;
        o.value_type = [None, None, Some(0x04), Some(0x16)][rng.below(4) as usize];
        let from_file = read_mtx_file(&path, &o);
        let from_bytes = read_mtx(text.as_bytes(), &o);
        match (&from_file, &from_bytes) {
            (Ok((a, ha)), Ok((b, hb))) => {
                oks += 1;
                assert_eq!(ha, hb, "round {round}");
                assert_eq!(
                    (a.type_tag(), a.shape(), a.is_sorted()),
                    (b.type_tag(), b.shape(), b.is_sorted())
                );
                assert_eq!(a.indices(), b.indices(), "round {round}");
                assert_eq!(a.values(), b.values(), "round {round}");
            }
            (Err(_), Err(_)) => errs += 1,
            _ => panic!("round {round}: {from_file:?} / {from_bytes:?}"),
        }
    }
    // Extents at the top of u64: both readers agree (and nothing on the
    // way computes a size that overflows).
    let top = u64::MAX;
    let text = format!(
        "%%MatrixMarket matrix coordinate real symmetric\n{top} {top} 2\n1 1 2.5\n3 2 1.5\n"
    );
    std::fs::write(&path, &text).unwrap();
    let o = TextOptions::default();
    let (from_file, from_bytes) = (read_mtx_file(&path, &o), read_mtx(text.as_bytes(), &o));
    match (&from_file, &from_bytes) {
        (Ok((a, _)), Ok((b, _))) => assert_eq!(as_map(a), as_map(b)),
        (Err(_), Err(_)) => {}
        _ => panic!("{from_file:?} / {from_bytes:?}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(oks > 60 && errs > 10, "{oks} read, {errs} refused");
}

/// A file read straight into CSR or CSC (`read_mtx_file_compressed`) is
/// what the handle reader gives exported (`read_mtx_file`, then
/// `export_compressed`): the same bytes, or the same error, for valid and
/// corrupted files of every field and symmetry, every policy, mirrored or
/// kept triangular, in the file's type or another, CSR and CSC in every
/// index type and base, on 1 and 2 threads; the room `mtx_file_size`
/// reports always suffices and nothing past the result is written.
#[test]
fn a_file_read_into_csr_is_the_export_of_its_handle() {
    use hurray_coo::assemble::IndexType;
    use hurray_coo::convert::{compressed_sizes, export_compressed, CompressedOut, Format};
    use hurray_coo::io::mtx::{mtx_file_size, read_mtx_file, read_mtx_file_compressed};
    let dir = std::env::temp_dir().join(format!("hurray_into_csr_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.mtx");
    let mut rng = Rng::new(2121);
    let its = [
        IndexType::I32,
        IndexType::I64,
        IndexType::U32,
        IndexType::U64,
    ];
    let (mut oks, mut errs, mut short) = (0, 0, 0);
    for round in 0..600 {
        let text = random_text(&mut rng, false, round % 150 == 0);
        std::fs::write(&path, &text).unwrap();
        let other = [Duplicates::Sum, Duplicates::Last, Duplicates::First][round % 3];
        let mut o = text_options(round, other, 1 + round % 2);
        o.keep_triangular = rng.below(4) == 0;
        o.assemble.drop_zeros = rng.below(5) == 0;
        o.value_type =
            [None, None, None, Some(0x04), Some(0x03), Some(0x14)][rng.below(6) as usize];
        let format = [Format::Csr, Format::Csc][rng.below(2) as usize];
        let it = its[rng.below(4) as usize];
        let base = rng.below(2) as u8;
        let want = read_mtx_file(&path, &o).and_then(|(coo, h)| {
            let s = compressed_sizes(&coo, format, it)?;
            let mut a = [s.offsets, s.indices, s.values].map(|n| vec![0u8; n as usize]);
            let [off, idx, val] = &mut a;
            export_compressed(&coo, format, it, base, off, idx, val, 1)?;
            Ok((a, coo.nnz(), h))
        });
        let size = mtx_file_size(&path, &o);
        let room = match &size {
            Ok(sz) => sz.room(format, it).unwrap(),
            Err(e) => {
                let w = want.as_ref().err().map(|w| w.to_string());
                assert_eq!(w, Some(e.to_string()), "round {round}: size {e}\n{text}");
                continue;
            }
        };
        // Room as reported, or, now and then, exactly the result or one
        // entry short of it.
        let (mut ri, mut rv) = (room.indices as usize, room.values as usize);
        let tight = rng.below(4) == 0;
        if let (true, Ok((a, nnz, _))) = (tight, &want) {
            ri = a[1].len();
            rv = a[2].len();
            if *nnz > 0 && rng.below(2) == 0 {
                ri -= it.width();
                short += 1;
            }
        }
        let mut off = vec![0xABu8; room.offsets as usize];
        let mut idx = vec![0xABu8; ri];
        let mut val = vec![0xABu8; rv];
        let got = read_mtx_file_compressed(
            &path,
            &o,
            CompressedOut {
                format,
                index_type: it,
                base,
                offsets: &mut off,
                indices: &mut idx,
                values: &mut val,
            },
        );
        match (&want, &got) {
            (Ok((a, nnz, h)), Ok((n, gh))) => {
                oks += 1;
                assert_eq!((nnz, h), (n, gh), "round {round}");
                assert_eq!(off, a[0], "round {round}: offsets\n{text}");
                assert_eq!(
                    &idx[..a[1].len()],
                    &a[1][..],
                    "round {round}: indices\n{text}"
                );
                assert_eq!(
                    &val[..a[2].len()],
                    &a[2][..],
                    "round {round}: values\n{text}"
                );
                assert!(
                    idx[a[1].len()..].iter().all(|&b| b == 0xAB),
                    "round {round}"
                );
                assert!(
                    val[a[2].len()..].iter().all(|&b| b == 0xAB),
                    "round {round}"
                );
                let sz = size.as_ref().unwrap();
                assert!(sz.most >= *nnz && sz.header.symmetry == h.symmetry);
            }
            (Err(a), Err(b)) => {
                errs += 1;
                assert_eq!(a.to_string(), b.to_string(), "round {round}\n{text}");
            }
            (Ok(_), Err(b)) if ri < want.as_ref().unwrap().0[1].len() => {
                assert_eq!(b.status(), Status::BufferTooSmall, "round {round}: {b}");
                assert!(b.to_string().contains("entries the file gives"), "{b}");
            }
            _ => panic!("round {round}: {:?} vs {got:?}\n{text}", want.map(|w| w.1)),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        oks > 200 && errs > 100 && short > 10,
        "{oks} read, {errs} refused, {short} short"
    );
}

#[test]
fn an_extent_of_2_pow_64_minus_1_is_a_parse_error_naming_the_line() {
    // 2^64 - 1 is the dynamic-dimension sentinel: no stored tensor has it.
    for (text, needle) in [
        (
            "%%MatrixMarket matrix coordinate real general\n18446744073709551615 3 0\n",
            "line 2, column 1: 18446744073709551615 rows is not an extent",
        ),
        (
            "%%MatrixMarket matrix coordinate real general\n% c\n3 18446744073709551615 0\n",
            "line 3, column 3: 18446744073709551615 columns is not an extent",
        ),
    ] {
        let (status, m) = mtx_err(text);
        assert_eq!(status, Status::ParseError, "{m}");
        assert!(m.contains(needle), "{m} lacks {needle}");
    }
    // The largest extent is fine.
    let c =
        mtx("%%MatrixMarket matrix coordinate real general\n18446744073709551614 1 0\n").unwrap();
    assert_eq!(c.shape(), &[u64::MAX - 1, 1]);
    // FROSTT: a coordinate whose inferred extent would be 2^64 - 1.
    let e = read_tns(
        b"18446744073709551615 1 1.0\n",
        None,
        &TextOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::ParseError, "{e}");
    assert!(e.to_string().contains("line 1"), "{e}");
}

#[test]
fn symmetric_writes_hold_one_triangle_and_read_back_as_the_same_matrix() {
    let lower = "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n2 1 -1\n3 2 -2\n";
    let keep = TextOptions {
        keep_triangular: true,
        ..Default::default()
    };
    let (tri, _) = read_mtx(lower.as_bytes(), &keep).unwrap();
    for sym in [MtxSymmetry::Symmetric, MtxSymmetry::SkewSymmetric] {
        let mut out = Vec::new();
        let r = hurray_coo::io::mtx::write_mtx_as(&tri, sym, &WriteOptions::default(), &mut out);
        if sym == MtxSymmetry::SkewSymmetric {
            // The diagonal entry (1, 1) cannot be in a skew-symmetric file.
            let e = r.unwrap_err();
            assert_eq!(e.status(), Status::InvalidArgument);
            assert!(
                e.to_string()
                    .contains("entry 0 at (0, 0) is on the diagonal"),
                "{e}"
            );
            continue;
        }
        r.unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("%%MatrixMarket matrix coordinate real symmetric\n"));
        let (a, _) = read_mtx(text.as_bytes(), &TextOptions::default()).unwrap();
        let (b, _) = read_mtx(lower.as_bytes(), &TextOptions::default()).unwrap();
        assert_eq!(as_map(&a), as_map(&b));
    }
    // A general matrix with both triangles cannot be written as symmetric.
    let full = mtx("%%MatrixMarket matrix coordinate real general\n2 2 2\n2 1 1\n1 2 1\n").unwrap();
    let e = hurray_coo::io::mtx::write_mtx_as(
        &full,
        MtxSymmetry::Symmetric,
        &WriteOptions::default(),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("entry 1 at (1, 0) is below the diagonal"),
        "{e}"
    );
    // Hermitian takes complex values.
    let e = hurray_coo::io::mtx::write_mtx_as(
        &tri,
        MtxSymmetry::Hermitian,
        &WriteOptions::default(),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("cannot be written as hermitian"),
        "{e}"
    );
}

/// `text` compressed as gzip, in `members` concatenated members (what
/// `cat a.gz b.gz` and parallel compressors write).
fn gzip(text: &[u8], members: usize) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    let step = text.len().div_ceil(members.max(1)).max(1);
    for part in text.chunks(step) {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(part).unwrap();
        out.extend(z.finish().unwrap());
    }
    out
}

/// gzip input, recognised by its magic bytes whatever the file is called,
/// reads as its text does: from memory and from files, whole and in
/// pieces, one member or several, Matrix Market and FROSTT; the same
/// tensor or the same message. Damaged or cut gzip data is an Io error
/// that says so, never a wrong tensor.
#[test]
fn gzip_text_reads_as_the_text_it_holds() {
    use hurray_coo::io::mtx::read_mtx_file_in_pieces;
    let dir = std::env::temp_dir().join(format!("hurray_gzip_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (plain, packed) = (dir.join("m.mtx"), dir.join("m.mtx.gz"));
    let same = |a: &Result<_, CooError>, b: &Result<_, CooError>, what: &str| match (a, b) {
        (Ok(a), Ok(b)) => assert_eq!(as_map(a), as_map(b), "{what}"),
        (Err(a), Err(b)) => assert_eq!(
            a.to_string().replace(".mtx.gz", ".mtx"),
            b.to_string().replace(".mtx.gz", ".mtx"),
            "{what}"
        ),
        _ => panic!("{what}: {a:?} vs {b:?}"),
    };
    let mut rng = Rng::new(77);
    let mut oks = 0;
    for round in 0..60 {
        let frostt = round % 4 == 3;
        let text = random_text(&mut rng, frostt, round % 30 == 0);
        let gz = gzip(text.as_bytes(), 1 + round % 3);
        let o = text_options(round, Duplicates::Last, 1 + round % 2);
        if frostt {
            let a = read_tns(text.as_bytes(), None, &o);
            let b = read_tns(&gz, None, &o);
            same(&a, &b, &format!("tns round {round}"));
            std::fs::write(&plain, &gz).unwrap(); // the name says .mtx
                                                  // The file's messages are the text's with the path in front.
            let c = hurray_coo::io::tns::read_tns_file(&plain, None, &o).map_err(|e| {
                let m = e.to_string();
                let m = m
                    .strip_prefix(&format!("{}: ", plain.display()))
                    .unwrap_or(&m);
                CooError::Argument(m.to_string())
            });
            let a = a.map_err(|e| CooError::Argument(e.to_string()));
            same(&a, &c, "tns file");
            continue;
        }
        let a = read_mtx(text.as_bytes(), &o).map(|x| x.0);
        let b = read_mtx(&gz, &o).map(|x| x.0);
        same(&a, &b, &format!("mtx bytes, round {round}"));
        oks += a.is_ok() as usize;
        std::fs::write(&plain, &text).unwrap();
        std::fs::write(&packed, &gz).unwrap();
        let whole = read_mtx_file_in_pieces(&plain, &o, usize::MAX).map(|x| x.0);
        for piece in [usize::MAX, 50, 1 + rng.below(400) as usize] {
            let got = read_mtx_file_in_pieces(&packed, &o, piece).map(|x| x.0);
            same(
                &whole,
                &got,
                &format!("mtx file, round {round}, piece {piece}"),
            );
        }
    }
    assert!(oks > 10, "{oks} valid texts");
    // Damaged data: a flipped byte inside the deflate stream or the CRC,
    // and a stream cut short.
    let text = random_text(&mut Rng::new(5), false, true);
    let gz = gzip(text.as_bytes(), 1);
    let mut flipped = gz.clone();
    let at = gz.len() - 6; // in the CRC-32 of the trailer
    flipped[at] ^= 0x40;
    let cut = &gz[..gz.len() / 2];
    for bad in [&flipped[..], cut] {
        let e = read_mtx(bad, &TextOptions::default()).unwrap_err();
        assert_eq!(e.status(), Status::Io, "{e}");
        assert!(
            e.to_string().contains("gzip data does not decompress"),
            "{e}"
        );
        std::fs::write(&packed, bad).unwrap();
        for piece in [usize::MAX, 64] {
            let e = read_mtx_file_in_pieces(&packed, &TextOptions::default(), piece).unwrap_err();
            let m = e.to_string();
            assert!(
                m.starts_with(&format!("{}: cannot read: the gzip data", packed.display())),
                "{m}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Comment lines may hold any bytes (an old file's Latin-1 author name);
/// other lines must be UTF-8, and the message names the line.
#[test]
fn comments_may_hold_any_bytes_and_entry_lines_may_not() {
    let text = b"%%MatrixMarket matrix coordinate real general\n% Jos\xe9 Mar\xeda, 1994\n\
                 2 2 2\n1 1 1.5\n  % \xff\xfe\n2 2 -1\n";
    for piece in [usize::MAX, 30] {
        let dir = std::env::temp_dir().join(format!("hurray_latin1_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("l.mtx");
        std::fs::write(&p, text).unwrap();
        let (c, _) =
            hurray_coo::io::mtx::read_mtx_file_in_pieces(&p, &TextOptions::default(), piece)
                .unwrap();
        assert_eq!(f64s(&c), [1.5, -1.0]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let t = read_tns(b"# \xe9t\xe9\n1 2 3.0\n", None, &TextOptions::default()).unwrap();
    assert_eq!(t.nnz(), 1);
    let bad = b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.\xe9\n";
    let (st, msg) = match read_mtx(bad, &TextOptions::default()) {
        Err(e) => (e.status(), e.to_string()),
        Ok(_) => panic!("a non-UTF-8 entry line was accepted"),
    };
    assert_eq!(st, Status::ParseError);
    assert!(msg.starts_with("line 3: not UTF-8 text (byte 7"), "{msg}");
    // So is a banner whose keywords are not UTF-8.
    let e = read_mtx(
        b"%%MatrixMarket matrix coordinate r\xe9al general\n1 1 0\n",
        &TextOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::ParseError, "{e}");
}

/// A uint64 value above int64's range is refused by the Matrix Market
/// writer, naming the entry (readers, this one included, take `integer` as
/// int64, so the file would not read back); int64's maximum is written.
#[test]
fn uint64_values_past_int64_are_refused_by_the_mtx_writer() {
    let idx: Vec<u8> = [0u64, 1, 1, 0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    for (second, ok) in [
        (i64::MAX as u64, true),
        (i64::MAX as u64 + 1, false),
        (u64::MAX, false),
    ] {
        let vals: Vec<u8> = [7u64, second]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let parts = hurray_coo::CooParts {
            type_tag: 0x17,
            shape: &[2, 2],
            nnz: 2,
            is_sorted: true,
            values: &vals,
            indices: &idx,
        };
        let opts = hurray_coo::Options {
            copy: true,
            ..Default::default()
        };
        let coo = Coo::new(parts, opts).unwrap();
        let mut out = Vec::new();
        match write_mtx(&coo, &WriteOptions::default(), &mut out) {
            Ok(()) => {
                assert!(ok, "{second} was written");
                let (back, _) = read_mtx(&out, &TextOptions::default()).unwrap();
                assert_eq!(&back.values()[8..16], &(second as i64).to_le_bytes());
            }
            Err(e) => {
                assert!(!ok, "{second}: {e}");
                let m = e.to_string();
                assert!(
                    m.starts_with(&format!(
                        "entry 1 at (2, 1) (counted from 1) holds {second}"
                    )),
                    "{m}"
                );
                assert!(out.is_empty(), "nothing is written");
            }
        }
    }
}

/// Whether value bytes `b` are the mirror image of `a` under `s`, for a
/// handle read from a `field` file: the oracle of the folding writer.
fn mirrors(field: &str, s: MtxSymmetry, a: &[u8], b: &[u8]) -> bool {
    let w = |x: &[u8], k: usize| u64::from_le_bytes(x[8 * k..8 * k + 8].try_into().unwrap());
    let neg = |x: u64| x ^ (1 << 63);
    match (s, field) {
        (MtxSymmetry::Symmetric, _) | (_, "pattern") => a == b,
        (MtxSymmetry::SkewSymmetric, "integer") => {
            let (x, y) = (w(a, 0) as i64, w(b, 0) as i64);
            x != i64::MIN && x.checked_neg() == Some(y)
        }
        (MtxSymmetry::SkewSymmetric, "real") => w(a, 0) == neg(w(b, 0)),
        (MtxSymmetry::SkewSymmetric, _) => w(a, 0) == neg(w(b, 0)) && w(a, 1) == neg(w(b, 1)),
        (MtxSymmetry::Hermitian, _) => w(a, 0) == w(b, 0) && w(a, 1) == neg(w(b, 1)),
        _ => unreachable!(),
    }
}

/// A whole matrix written folded to a symmetry (its lower triangle under
/// that banner) reads back as the same matrix, bit for bit; and it is
/// refused exactly when an oracle finds an entry without its mirror image,
/// with another value, or a diagonal the symmetry forbids. Random small
/// matrices of every field, built with the symmetry and then, often,
/// broken in one place.
#[test]
fn whole_matrices_fold_to_their_symmetry_or_are_refused() {
    let mut rng = Rng::new(2026);
    let (mut written, mut refused) = (0, 0);
    for round in 0..400 {
        let field = ["real", "integer", "complex", "pattern"][round % 4];
        let s = match rng.below(3) {
            0 => MtxSymmetry::Symmetric,
            1 if field != "pattern" => MtxSymmetry::SkewSymmetric,
            _ if field == "complex" => MtxSymmetry::Hermitian,
            _ => MtxSymmetry::Symmetric,
        };
        let n = 1 + rng.below(5);
        let val = |rng: &mut Rng| -> Vec<String> {
            let x = |rng: &mut Rng| match rng.below(5) {
                0 => "0".to_string(),
                1 => "-0".to_string(),
                _ => format!("{}", rng.below(7) as i64 - 3),
            };
            match field {
                "pattern" => vec![],
                "complex" => vec![x(rng), x(rng)],
                _ => vec![x(rng)],
            }
        };
        let mirror = |v: &[String]| -> Vec<String> {
            let neg = |t: &String| match t.strip_prefix('-') {
                Some(p) => p.to_string(),
                None => format!("-{t}"),
            };
            match s {
                MtxSymmetry::SkewSymmetric => v.iter().map(neg).collect(),
                MtxSymmetry::Hermitian => vec![v[0].clone(), neg(&v[1])],
                _ => v.to_vec(),
            }
        };
        let mut lines: Vec<(u64, u64, Vec<String>)> = Vec::new();
        for r in 0..n {
            for c in 0..=r {
                if rng.below(2) == 0 {
                    continue;
                }
                let mut v = val(&mut rng);
                if r == c {
                    if s == MtxSymmetry::SkewSymmetric {
                        continue;
                    }
                    if s == MtxSymmetry::Hermitian {
                        v[1] = "0".into();
                    }
                    lines.push((r, c, v));
                } else {
                    lines.push((c, r, mirror(&v)));
                    lines.push((r, c, v));
                }
            }
        }
        // Often, one break: a lost mirror image, a changed value, a
        // diagonal entry the symmetry forbids.
        if rng.below(2) == 0 && !lines.is_empty() {
            let k = rng.below(lines.len() as u64) as usize;
            match rng.below(3) {
                0 => {
                    lines.remove(k);
                }
                1 if field != "pattern" => lines[k].2[0] = "5".into(),
                _ => {
                    let d = rng.below(n);
                    lines.retain(|l| (l.0, l.1) != (d, d));
                    let mut v = val(&mut rng);
                    if field == "complex" {
                        v[1] = "1".into();
                    }
                    lines.push((d, d, v));
                }
            }
        }
        let mut text = format!(
            "%%MatrixMarket matrix coordinate {field} general\n{n} {n} {}\n",
            lines.len()
        );
        for (r, c, v) in &lines {
            text += &format!("{} {} {}\n", r + 1, c + 1, v.join(" "));
        }
        let whole = mtx(&text).unwrap();
        let map = as_map(&whole);
        // The oracle: every entry's mirror image is there with the
        // mirrored value; the diagonal is empty (skew-symmetric) or real
        // (hermitian).
        let ok = map.iter().all(|(k, v)| {
            let (r, c) = (k[0], k[1]);
            if r == c {
                return match s {
                    MtxSymmetry::SkewSymmetric => false,
                    MtxSymmetry::Hermitian => {
                        v[8..16] == [0; 8] || v[8..16] == (-0.0f64).to_le_bytes()
                    }
                    _ => true,
                };
            }
            map.get(&vec![c, r])
                .is_some_and(|m| mirrors(field, s, v, m))
        });
        let mut out = Vec::new();
        let o = WriteOptions {
            threads: 1 + round % 2,
            ..Default::default()
        };
        match hurray_coo::io::mtx::write_mtx_symmetric(&whole, s, &o, &mut out) {
            Ok(()) => {
                assert!(ok, "round {round}: a non-{s:?} matrix was written\n{text}");
                written += 1;
                let lower = map.keys().filter(|k| k[0] >= k[1]).count();
                let head = String::from_utf8_lossy(&out)
                    .lines()
                    .nth(2)
                    .unwrap()
                    .to_string();
                assert_eq!(
                    head,
                    format!("{n} {n} {lower}"),
                    "half the entries are stored"
                );
                let (back, h) = read_mtx(&out, &TextOptions::default()).unwrap();
                assert_eq!(h.symmetry, s);
                assert_eq!(as_map(&back), map, "round {round}\n{text}");
            }
            Err(e) => {
                assert!(!ok, "round {round}: refused a {s:?} matrix: {e}\n{text}");
                assert_eq!(e.status(), Status::InvalidArgument, "{e}");
                assert!(e.to_string().contains("write it as general"), "{e}");
                refused += 1;
            }
        }
    }
    assert!(
        written > 100 && refused > 60,
        "{written} written, {refused} refused"
    );
    // A pattern write folds the structure alone.
    let m = mtx("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1.5\n2 1 -7\n").unwrap();
    let mut out = Vec::new();
    let o = WriteOptions {
        pattern: true,
        ..Default::default()
    };
    hurray_coo::io::mtx::write_mtx_symmetric(&m, MtxSymmetry::Symmetric, &o, &mut out).unwrap();
    let s = String::from_utf8(out).unwrap();
    assert!(
        s.starts_with("%%MatrixMarket matrix coordinate pattern symmetric\n"),
        "{s}"
    );
    assert!(s.ends_with("2 2 1\n2 1\n"), "{s}");
}

/// Values read into the solver's type (`value_type`): exactly the file's
/// values when every one fits, else an Overflow error naming the first
/// entry that does not; against an oracle that casts each value of the
/// file's own read by hand. Duplicates combine in the file's type first.
#[test]
fn values_read_into_a_type_are_exact_or_refused() {
    let mut rng = Rng::new(99);
    let targets: [(u8, &str); 6] = [
        (0x04, "float64"),
        (0x03, "float32"),
        (0x16, "int64"),
        (0x14, "int32"),
        (0x10, "int8"),
        (0x11, "uint8"),
    ];
    let (mut oks, mut refused) = (0, 0);
    for round in 0..300 {
        let field = ["integer", "real", "pattern"][round % 3];
        let n = 1 + rng.below(8);
        let mut text = format!("%%MatrixMarket matrix coordinate {field} general\n4 4 {n}\n");
        for _ in 0..n {
            let v = match (field, rng.below(4)) {
                ("pattern", _) => String::new(),
                ("integer", 0) => format!(" {}", (rng.next() as i64) >> rng.below(64)),
                ("integer", _) => format!(" {}", rng.below(300) as i64 - 150),
                (_, 0) => format!(" {}", rng.below(1000) as f64 / 8.0),
                (_, 1) => format!(" {:e}", f64::from_bits(rng.next() >> 2)),
                (_, 2) => " 0.1".into(),
                _ => format!(" {}", rng.below(300) as i64 - 150),
            };
            text += &format!("{} {}{v}\n", 1 + rng.below(4), 1 + rng.below(4));
        }
        let (tag, name) = targets[rng.below(6) as usize];
        let o = TextOptions {
            assemble: hurray_coo::assemble::AssembleOptions {
                duplicates: Duplicates::Sum,
                ..Default::default()
            },
            value_type: Some(tag),
            ..Default::default()
        };
        let own = TextOptions {
            value_type: None,
            ..o
        };
        let Ok((base, _)) = read_mtx(text.as_bytes(), &own) else {
            continue; // an integer SUM that overflows int64
        };
        // The oracle: each value as i128 or f64, cast by hand.
        let fits = |i: usize| -> Option<Vec<u8>> {
            let w =
                |k: usize| u64::from_le_bytes(base.values()[8 * k..8 * k + 8].try_into().unwrap());
            let (int, real): (Option<i128>, f64) = match field {
                "pattern" => (Some(1), 1.0),
                "integer" => (Some(w(i) as i64 as i128), w(i) as i64 as f64),
                _ => {
                    let r = f64::from_bits(w(i));
                    let int =
                        (r.is_finite() && r.fract() == 0.0 && r.abs() < 1e30).then_some(r as i128);
                    (int, r)
                }
            };
            match tag {
                0x04 => (field != "integer" || real as i128 == int.unwrap())
                    .then(|| real.to_le_bytes().to_vec()),
                0x03 => {
                    let exact = field != "integer" || real as i128 == int.unwrap();
                    (exact && f64::from(real as f32) == real)
                        .then(|| (real as f32).to_le_bytes().to_vec())
                }
                _ => {
                    let bits = [0x16, 0x14, 0x10, 0x11]
                        .iter()
                        .position(|&t| t == tag)
                        .map(|k| [64, 32, 8, 8][k])
                        .unwrap();
                    let (lo, hi) = match tag {
                        0x11 => (0i128, 255),
                        _ => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
                    };
                    let v = int.filter(|v| (lo..=hi).contains(v))?;
                    Some((v as i64).to_le_bytes()[..bits / 8].to_vec())
                }
            }
        };
        let want: Vec<Option<Vec<u8>>> = (0..base.nnz() as usize).map(fits).collect();
        match read_mtx(text.as_bytes(), &o) {
            Ok((got, _)) => {
                assert!(
                    want.iter().all(Option::is_some),
                    "round {round} {name}: accepted\n{text}"
                );
                assert_eq!(got.type_tag(), tag);
                assert_eq!(got.indices(), base.indices());
                let all: Vec<u8> = want.into_iter().flatten().flatten().collect();
                assert_eq!(got.values(), &all[..], "round {round} {name}\n{text}");
                oks += 1;
            }
            Err(e) => {
                let first = want.iter().position(Option::is_none);
                let Some(first) = first else {
                    panic!("round {round} {name}: refused {e}\n{text}");
                };
                assert_eq!(e.status(), Status::Overflow, "{e}");
                let c = base.entry(first);
                let m = e.to_string();
                assert!(
                    m.starts_with(&format!(
                        "entry {first} at ({}, {}) (counted from 1): ",
                        c[0] + 1,
                        c[1] + 1
                    )),
                    "{m}"
                );
                assert!(m.contains(name), "{m}");
                refused += 1;
            }
        }
    }
    assert!(oks > 60 && refused > 40, "{oks} read, {refused} refused");
    // Not a real or integer type: refused.
    for bad in [0x51u8, 0x20, 0x05] {
        let o = TextOptions {
            value_type: Some(bad),
            ..Default::default()
        };
        let e = read_mtx(
            b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n",
            &o,
        )
        .unwrap_err();
        assert!(e.to_string().contains("value type"), "{e}");
    }
}

/// A matrix written dense (`array`, column by column, zeros included; a
/// symmetric one as its lower triangle's columns) reads back as the same
/// matrix once the zeros are dropped, for integer and real values; an
/// array of a pattern, and FROSTT arrays, are refused.
#[test]
fn dense_array_writes_read_back_as_the_matrix() {
    let mut rng = Rng::new(31);
    for round in 0..60 {
        let field = ["real", "integer"][round % 2];
        let n = 1 + rng.below(5);
        let symmetric = round % 3 == 0;
        let mut entries = BTreeMap::new();
        for r in 0..n {
            for c in 0..n {
                if rng.below(3) == 0 && (!symmetric || r >= c) {
                    let v = 1 + rng.below(9) as i64 * if rng.below(2) == 0 { 1 } else { -1 };
                    let v = if v == 0 { 3 } else { v };
                    entries.insert((r, c), v);
                    if symmetric {
                        entries.insert((c, r), v);
                    }
                }
            }
        }
        let mut text = format!(
            "%%MatrixMarket matrix coordinate {field} general\n{n} {n} {}\n",
            entries.len()
        );
        for ((r, c), v) in &entries {
            text += &format!("{} {} {v}\n", r + 1, c + 1);
        }
        let m = mtx(&text).unwrap();
        let o = WriteOptions {
            array: true,
            ..Default::default()
        };
        let s = if symmetric {
            MtxSymmetry::Symmetric
        } else {
            MtxSymmetry::General
        };
        let mut out = Vec::new();
        hurray_coo::io::mtx::write_mtx_symmetric(&m, s, &o, &mut out).unwrap();
        let t = String::from_utf8(out.clone()).unwrap();
        let values = t.lines().filter(|l| !l.starts_with('%')).count() - 1;
        let want = if symmetric { n * (n + 1) / 2 } else { n * n };
        assert_eq!(values as u64, want, "{t}");
        let back = read_mtx(
            &out,
            &TextOptions {
                assemble: hurray_coo::assemble::AssembleOptions {
                    drop_zeros: true,
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .unwrap()
        .0;
        assert_eq!(as_map(&back), as_map(&m), "round {round}\n{t}");
    }
    let p = mtx("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n").unwrap();
    let o = WriteOptions {
        array: true,
        ..Default::default()
    };
    let e = write_mtx(&p, &o, &mut Vec::new()).unwrap_err();
    assert!(
        e.to_string()
            .contains("a pattern is written as coordinates"),
        "{e}"
    );
    let e = write_tns(&p, &o, &mut Vec::new()).unwrap_err();
    assert!(
        e.to_string()
            .contains("dense array is written as Matrix Market"),
        "{e}"
    );
}
