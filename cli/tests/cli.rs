//! The command-line tool as a user runs it: exit codes, what it prints,
//! files it writes, and the progress bar in a terminal session.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hurray-coo"))
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("hurray_cli_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const SYM: &str =
    "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4.0\n2 1 -1.5\n3 3 2.0\n";

#[test]
fn help_has_an_example_per_subcommand_and_the_exit_codes() {
    let o = bin().arg("--help").output().unwrap();
    let (out, _) = text(&o);
    assert!(o.status.success());
    for w in [
        "info",
        "validate",
        "convert",
        "head",
        "Exit status:",
        "2  usage error",
    ] {
        assert!(out.contains(w), "--help lacks {w:?}:\n{out}");
    }
    for sub in ["info", "validate", "convert", "head"] {
        let o = bin().args([sub, "--help"]).output().unwrap();
        let (out, _) = text(&o);
        assert!(
            out.contains("Example:\n  hurray-coo "),
            "{sub} --help:\n{out}"
        );
    }
    let o = bin().arg("--frobnicate").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "usage errors exit with 2");
    let o = bin()
        .args(["validate", "--duplicates", "avg", "x.mtx"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o)
            .1
            .contains("one of error, sum, first, last, min, max"),
        "{}",
        text(&o).1
    );
}

#[test]
fn info_validate_head_and_convert() {
    // Each test works in its own directory: tests run in parallel.
    let d = dir().join("basic");
    std::fs::create_dir_all(&d).unwrap();
    let a = d.join("a.mtx");
    std::fs::write(&a, SYM).unwrap();
    let o = bin().args(["info"]).arg(&a).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    for w in [
        "type     float64",
        "shape    3 x 3 (rank 2)",
        "entries  4",
        "sorted   yes",
        "min -1.5, max 4",
        "    2 1 -1.5",
    ] {
        assert!(out.contains(w), "info lacks {w:?}:\n{out}");
    }
    let o = bin().args(["validate"]).arg(&a).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o).0.contains("valid, 3 x 3 float64 with 4 entries"));

    let o = bin().args(["head", "-n", "2"]).arg(&a).output().unwrap();
    assert_eq!(text(&o).0, "1 1 4.0\n1 2 -1.5\n");

    // mtx -> tns -> mtx: the same entries.
    let t = d.join("a.tns");
    let b = d.join("b.mtx");
    let o = bin()
        .args(["convert", "--threads", "2"])
        .arg(&a)
        .arg(&t)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(text(&o).1.contains("4 entries"));
    let o = bin()
        .args(["convert", "--shape", "3,3", "--precision", "3"])
        .arg(&t)
        .arg(&b)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let back = std::fs::read_to_string(&b).unwrap();
    assert!(
        back.starts_with("%%MatrixMarket matrix coordinate real general\n"),
        "{back}"
    );
    assert!(
        back.ends_with("3 3 4\n1 1 4.00e0\n1 2 -1.50e0\n2 1 -1.50e0\n3 3 2.00e0\n"),
        "{back}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn invalid_input_exits_1_with_the_precise_message() {
    let d = dir().join("bad");
    std::fs::create_dir_all(&d).unwrap();
    let bad = d.join("bad.mtx");
    std::fs::write(
        &bad,
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1.0\n",
    )
    .unwrap();
    let o = bin().args(["validate"]).arg(&bad).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let (_, err) = text(&o);
    assert!(
        err.contains(&format!(
            "{}: line 3, column 3: column index out of range",
            bad.display()
        )),
        "{err}"
    );
    let dup = d.join("dup.tns");
    std::fs::write(&dup, "1 1 1.0\n1 1 2.0\n").unwrap();
    let o = bin().args(["validate"]).arg(&dup).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("line 2 duplicates line 1"),
        "{}",
        text(&o).1
    );
    let o = bin()
        .args(["validate", "--duplicates", "sum"])
        .arg(&dup)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    for (name, needle) in [
        ("x.hrry", "x.hrry: cannot read: No such file"),
        ("x.csv", "unknown format"),
        ("missing.mtx", "missing.mtx"),
    ] {
        let o = bin().args(["info"]).arg(d.join(name)).output().unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(text(&o).1.contains(needle), "{name}: {}", text(&o).1);
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// In a terminal (a pseudo-terminal from util-linux `script`) the progress
/// spinner is drawn on standard error; through a pipe it never is.
#[test]
fn progress_shows_in_a_terminal_only() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIPPED: util-linux `script` is not installed");
        return;
    }
    let d = dir().join("progress");
    std::fs::create_dir_all(&d).unwrap();
    let a = d.join("a.mtx");
    std::fs::write(&a, SYM).unwrap();
    let cmd = format!(
        "{} --progress always validate {}",
        env!("CARGO_BIN_EXE_hurray-coo"),
        a.display()
    );
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .unwrap();
    let (out, _) = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("reading ") && out.contains('%'),
        "no progress (with its percentage) in a terminal:\n{out:?}"
    );
    let o = bin()
        .args(["--progress", "always", "validate"])
        .arg(&a)
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert!(
        !err.contains("reading "),
        "progress drawn into a pipe: {err:?}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// A Hurray file with two tensors and metadata, written by the library.
fn two_tensor_file(path: &std::path::Path) {
    use hurray_coo::io::file::{FileWriter, KvValue, WriteOptions};
    use hurray_coo::{Coo, CooParts, Options};
    let vals: Vec<u8> = [1.0f64, -2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let idx: Vec<u8> = [0u64, 1, 2, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let parts = CooParts {
        type_tag: 0x04,
        shape: &[3, 3],
        nnz: 2,
        is_sorted: true,
        values: &vals,
        indices: &idx,
    };
    let coo = Coo::new(
        parts,
        Options {
            copy: true,
            ..Default::default()
        },
    )
    .unwrap();
    let mut w = FileWriter::create(path, WriteOptions::default()).unwrap();
    w.add_kv("solver", KvValue::String("cg".into())).unwrap();
    w.add_coo("K", &coo).unwrap();
    w.add_coo("M", &coo).unwrap();
    w.finish().unwrap();
}

#[test]
fn hurray_files_every_subcommand() {
    let d = dir().join("hrry");
    std::fs::create_dir_all(&d).unwrap();
    let a = d.join("a.mtx");
    std::fs::write(&a, SYM).unwrap();
    // mtx -> hrry -> mtx, the tensor named.
    let h = d.join("a.hrry");
    let o = bin()
        .args(["convert", "--name", "K"])
        .arg(&a)
        .arg(&h)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let back = d.join("back.mtx");
    let o = bin().args(["convert"]).arg(&h).arg(&back).output().unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(std::fs::read_to_string(&back)
        .unwrap()
        .ends_with("3 3 4\n1 1 4.0\n1 2 -1.5\n2 1 -1.5\n3 3 2.0\n"));
    // Two tensors: info and validate cover each, head and convert ask.
    let two = d.join("two.hrry");
    two_tensor_file(&two);
    let o = bin().args(["info", "-n", "1"]).arg(&two).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    for w in [
        "two.hrry: Hurray file, 2 tensors, data_buffer_alignment 4096",
        "  \"K\": COO float64 3 x 3, 2 entries",
        "  metadata \"solver\" = \"cg\"",
        "two.hrry:M:\n  type     float64",
        "    1 2 1.0",
    ] {
        assert!(out.contains(w), "info lacks {w:?}:\n{out}");
    }
    let o = bin().args(["validate"]).arg(&two).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o).0.contains("two.hrry:K: valid") && text(&o).0.contains("two.hrry:M: valid"));
    let o = bin().args(["head"]).arg(&two).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o)
            .1
            .contains("the file holds 2 COO tensors (\"K\", \"M\"); pick one with --tensor NAME"),
        "{}",
        text(&o).1
    );
    let o = bin()
        .args(["head", "--tensor", "M"])
        .arg(&two)
        .output()
        .unwrap();
    assert_eq!(text(&o).0, "1 2 1.0\n3 1 -2.0\n");
    let o = bin()
        .args(["head", "--tensor", "Q"])
        .arg(&two)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("no tensor is named \"Q\""),
        "{}",
        text(&o).1
    );
    // hrry -> hrry keeps every tensor and the metadata.
    let copy = d.join("copy.hrry");
    let o = bin()
        .args(["convert", "--statistics", "full", "--alignment", "65536"])
        .arg(&two)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(
        text(&o).1.contains("2 tensors, 4 entries"),
        "{}",
        text(&o).1
    );
    let o = bin().args(["info", "-n", "0"]).arg(&copy).output().unwrap();
    assert!(
        text(&o).0.contains("data_buffer_alignment 65536")
            && text(&o).0.contains("metadata \"solver\""),
        "{}",
        text(&o).0
    );
    let o = bin()
        .args(["convert", "--alignment", "1000"])
        .arg(&two)
        .arg(d.join("bad.hrry"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o)
            .1
            .contains("data_buffer_alignment 1000 is not allowed"),
        "{}",
        text(&o).1
    );
    assert!(!d.join("bad.hrry").exists());
    // A damaged file: exit 1 and the byte offset.
    let mut bytes = std::fs::read(&two).unwrap();
    let n = bytes.len();
    bytes[n - 45] ^= 0xFF;
    let broken = d.join("broken.hrry");
    std::fs::write(&broken, &bytes).unwrap();
    let o = bin().args(["validate"]).arg(&broken).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains(&format!(
            "broken.hrry: byte {} of the file: the index section",
            n - 12
        )),
        "{}",
        text(&o).1
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Run the tool with its standard output into a pipe whose reader closes
/// it after one line (as `hurray-coo ... | head -1`); the status and what
/// it said on standard error.
fn into_closed_pipe(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        let mut r = BufReader::new(child.stdout.take().unwrap());
        r.read_line(&mut first).unwrap();
        // The reader goes away: the tool's next writes meet a closed pipe.
    }
    let o = child.wait_with_output().unwrap();
    assert!(
        !first.is_empty(),
        "nothing was printed before the pipe closed"
    );
    (o.status.code(), text(&o).1)
}

#[test]
fn a_closed_pipe_ends_the_tool_quietly() {
    let d = dir().join("pipe");
    std::fs::create_dir_all(&d).unwrap();
    // Enough lines that the tool is still writing when the pipe closes
    // (more than a pipe buffer holds).
    let n = 200_000;
    let mut m = format!("%%MatrixMarket matrix coordinate real general\n{n} 1 {n}\n");
    for i in 1..=n {
        m.push_str(&format!("{i} 1 {i}.5\n"));
    }
    let a = d.join("big.mtx");
    std::fs::write(&a, m).unwrap();
    let h = d.join("big.hrry");
    let o = bin().arg("convert").arg(&a).arg(&h).output().unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let cases: [Vec<&std::ffi::OsStr>; 3] = [
        vec![
            "head".as_ref(),
            "-n".as_ref(),
            "200000".as_ref(),
            a.as_os_str(),
        ],
        // info of many inputs: a summary each.
        std::iter::once("info".as_ref())
            .chain(std::iter::repeat_n(h.as_os_str(), 4000))
            .collect(),
        std::iter::once("validate".as_ref())
            .chain(std::iter::repeat_n(h.as_os_str(), 4000))
            .collect(),
    ];
    for args in cases {
        let (code, err) = into_closed_pipe(&args);
        assert_eq!(code, Some(0), "{:?}: {err}", args[0]);
        assert!(
            !err.contains("panicked") && err.is_empty(),
            "{:?}: {err}",
            args[0]
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn validate_checks_every_file_and_fails_if_any_is_bad() {
    let d = dir().join("many");
    std::fs::create_dir_all(&d).unwrap();
    let good = d.join("a.mtx");
    std::fs::write(&good, SYM).unwrap();
    let bad = d.join("bad.mtx");
    std::fs::write(
        &bad,
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1.0\n",
    )
    .unwrap();
    let dup = d.join("dup.mtx");
    std::fs::write(
        &dup,
        "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n1 1 2.0\n",
    )
    .unwrap();
    let c = d.join("c.mtx");
    std::fs::write(
        &c,
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 2 1.0\n",
    )
    .unwrap();
    let o = bin()
        .arg("validate")
        .args([&good, &bad, &dup, &c])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("a.mtx: valid") && out.contains("c.mtx: valid"),
        "{out}"
    );
    assert!(
        err.contains("bad.mtx: line 3") && err.contains("dup.mtx: line 4"),
        "{err}"
    );
    // All good: 0.
    let o = bin().arg("validate").args([&good, &c]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["info"][..],
        &["validate"],
        &["head"],
        &["convert", "a.mtx"],
    ] {
        let o = bin().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o).1);
    }
}

#[test]
fn every_argument_has_a_help_line() {
    for sub in ["info", "validate", "convert", "head"] {
        let o = bin().args([sub, "--help"]).output().unwrap();
        let (out, _) = text(&o);
        // Every argument and option line is followed by its description on
        // the same line (clap's short help): none stands alone.
        let args = out
            .split("\n\n")
            .filter(|s| s.starts_with("Arguments:") || s.starts_with("Options:"));
        for section in args {
            for line in section.lines().skip(1) {
                let words = line.trim_start();
                if words.starts_with('-') || words.starts_with('<') {
                    let (_, help) = words.split_once("  ").unwrap_or((words, ""));
                    // clap prints "[default: 10]" even where there is no help.
                    let help = help.trim();
                    let help = if help.starts_with('[') { "" } else { help };
                    assert!(!help.is_empty(), "{sub}: no help for {line:?}\n{out}");
                }
            }
        }
    }
}

#[test]
fn keep_triangular_writes_the_symmetry_or_refuses() {
    let d = dir().join("tri");
    std::fs::create_dir_all(&d).unwrap();
    let a = d.join("sym.mtx");
    std::fs::write(&a, SYM).unwrap();
    let out = d.join("out.mtx");
    let o = bin()
        .args(["convert", "--keep-triangular"])
        .arg(&a)
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let back = std::fs::read_to_string(&out).unwrap();
    assert!(
        back.starts_with("%%MatrixMarket matrix coordinate real symmetric\n"),
        "{back}"
    );
    // Read back mirrored: the same matrix as the input's.
    let o1 = bin().args(["head"]).arg(&a).output().unwrap();
    let o2 = bin().args(["head"]).arg(&out).output().unwrap();
    assert_eq!(text(&o1).0, text(&o2).0);
    // A .tns or .hrry output cannot say the other triangle is implied.
    for name in ["out.tns", "out.hrry"] {
        let o = bin()
            .args(["convert", "--keep-triangular"])
            .arg(&a)
            .arg(d.join(name))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(
            text(&o).1.contains("--keep-triangular keeps one triangle"),
            "{}",
            text(&o).1
        );
        assert!(!d.join(name).exists());
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// `cmd` run with `stdin` as its standard input.
fn piped(cmd: &mut Command, stdin: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    o
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

/// gzip input by path and through a pipe, `-` for standard input and
/// output with --from / --to: what a user pipes gives what the files give.
#[test]
fn gzip_and_pipes_read_and_write_as_files_do() {
    let d = dir().join("pipes");
    std::fs::create_dir_all(&d).unwrap();
    let (a, gz, t) = (d.join("a.mtx"), d.join("a.mtx.gz"), d.join("a.tns"));
    std::fs::write(&a, SYM).unwrap();
    std::fs::write(&gz, gzip(SYM.as_bytes())).unwrap();
    let o = bin().args(["convert"]).arg(&a).arg(&t).output().unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let want = std::fs::read_to_string(&t).unwrap();
    // A .mtx.gz path, and the same bytes under a name that says .mtx.
    let o = bin()
        .args(["convert", "--to", "tns"])
        .arg(&gz)
        .arg("-")
        .output()
        .unwrap();
    assert_eq!(text(&o).0, want, "{:?}", text(&o));
    // Standard input (gzip or not) to standard output.
    for bytes in [SYM.as_bytes().to_vec(), gzip(SYM.as_bytes())] {
        let o = piped(
            bin().args(["convert", "--from", "mtx", "-", "--to", "tns", "-"]),
            &bytes,
        );
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        assert_eq!(out, want);
        assert!(err.contains("- -> -: 1 tensor, 4 entries"), "{err}");
        let o = piped(bin().args(["--from", "mtx", "validate", "-"]), &bytes);
        assert!(
            text(&o)
                .0
                .starts_with("-: valid, 3 x 3 float64 with 4 entries"),
            "{:?}",
            text(&o)
        );
    }
    // A .hrry file through standard input.
    let h = d.join("a.hrry");
    assert!(bin()
        .arg("convert")
        .arg(&a)
        .arg(&h)
        .status()
        .unwrap()
        .success());
    let o = piped(
        bin().args(["head", "--from", "hrry", "-", "-n", "2"]),
        &std::fs::read(&h).unwrap(),
    );
    assert_eq!(text(&o).0, "1 1 4.0\n1 2 -1.5\n", "{:?}", text(&o));
    std::fs::remove_dir_all(&d).unwrap();
}

/// What the tool refuses rather than do something the user did not mean,
/// each with exit 1 and a message that names the path and the way out.
#[test]
fn refusals_name_the_path_and_the_way_out() {
    let d = dir().join("refuse");
    std::fs::create_dir_all(&d).unwrap();
    let a = d.join("a.mtx");
    let t = d.join("a.tns");
    std::fs::write(&a, SYM).unwrap();
    std::fs::write(&t, "1 1 1.0\n").unwrap();
    let link = d.join("link.mtx");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let p = |x: &std::path::Path| x.display().to_string();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["convert".into(), p(&a), p(&a)],
            format!("{}: this is the input file", p(&a)),
        ),
        (
            vec!["convert".into(), p(&a), p(&link)],
            format!("{}: this is the input file", p(&link)),
        ),
        (
            vec![
                "convert".into(),
                "--shape".into(),
                "3,3".into(),
                p(&a),
                p(&t),
            ],
            format!(
                "{}: --shape gives the shape of a FROSTT (.tns) tensor",
                p(&a)
            ),
        ),
        (
            vec!["info".into(), "--keep-triangular".into(), p(&t)],
            format!(
                "{}: --keep-triangular applies to symmetric Matrix Market files",
                p(&t)
            ),
        ),
        (
            vec!["convert".into(), "--name".into(), "K".into(), p(&a), p(&t)],
            format!("{}: --name names the tensor in a .hrry output", p(&t)),
        ),
        (
            vec![
                "convert".into(),
                "--precision".into(),
                "3".into(),
                p(&a),
                p(&d.join("x.hrry")),
            ],
            "--precision sets the digits of text output".into(),
        ),
        (
            vec!["convert".into(), p(&a), p(&d.join("x.mtx.gz"))],
            "gzip output is not written".into(),
        ),
        (
            vec![
                "convert".into(),
                "--to".into(),
                "hrry".into(),
                p(&a),
                "-".into(),
            ],
            "-: a Hurray file is written to a path".into(),
        ),
        (
            vec!["info".into(), "-".into()],
            "-: standard input has no extension to tell its format; say --from".into(),
        ),
        (
            vec!["convert".into(), p(&a), "-".into()],
            "-: standard output has no extension to tell its format; say --to".into(),
        ),
        (
            vec!["info".into(), p(&d.join("missing.mtx"))],
            format!(
                "{}: cannot read: No such file or directory",
                p(&d.join("missing.mtx"))
            ),
        ),
    ];
    for (args, want) in cases {
        let o = bin().args(&args).output().unwrap();
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&want), "{args:?}: {err:?} lacks {want:?}");
        assert!(!err.contains("os error"), "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        SYM,
        "the input is untouched"
    );
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 3, "nothing else written: {left:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// `convert --symmetry` writes a whole symmetric matrix as half of it and
/// reads back as the same matrix; a matrix without that symmetry is
/// refused, naming the entry; --pattern drops the values.
#[test]
fn symmetry_and_pattern_outputs() {
    let d = dir().join("fold");
    std::fs::create_dir_all(&d).unwrap();
    let (a, half, back) = (d.join("a.mtx"), d.join("half.mtx"), d.join("back.tns"));
    std::fs::write(&a, SYM).unwrap(); // read mirrored: the whole matrix
    let o = bin()
        .args(["convert", "--symmetry", "symmetric"])
        .arg(&a)
        .arg(&half)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let t = std::fs::read_to_string(&half).unwrap();
    assert!(
        t.starts_with("%%MatrixMarket matrix coordinate real symmetric\n"),
        "{t}"
    );
    assert!(t.contains("\n3 3 3\n"), "{t}");
    let whole = |p: &std::path::Path| {
        let o = bin()
            .args(["convert", "--to", "tns"])
            .arg(p)
            .arg("-")
            .output()
            .unwrap();
        text(&o).0
    };
    assert_eq!(whole(&half), whole(&a));
    let o = bin()
        .args(["convert", "--symmetry", "skew-symmetric"])
        .arg(&a)
        .arg(&half)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("is on the diagonal"), "{:?}", text(&o));
    let o = bin()
        .args(["convert", "--pattern", "--to", "mtx"])
        .arg(&a)
        .arg("-")
        .output()
        .unwrap();
    assert!(text(&o)
        .0
        .starts_with("%%MatrixMarket matrix coordinate pattern general\n"));
    let o = bin()
        .args(["convert", "--symmetry", "symmetric"])
        .arg(&a)
        .arg(&back)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o)
        .1
        .contains("--symmetry, --pattern and --array shape a Matrix Market output"));
    std::fs::remove_dir_all(&d).unwrap();
}

/// `--values float64` gives an integer file's values as float64, and a
/// value that float32 cannot hold exactly is an error naming its entry.
#[test]
fn values_are_read_into_the_type_asked_for() {
    let ints = "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 3\n2 2 -7\n";
    let o = piped(
        bin().args(["--from", "mtx", "info", "--values", "float64", "-"]),
        ints.as_bytes(),
    );
    assert!(text(&o).0.contains("type     float64"), "{:?}", text(&o));
    let reals = "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 0.1\n";
    let o = piped(
        bin().args(["--from", "mtx", "validate", "--values", "float32", "-"]),
        reals.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o).1;
    assert!(
        err.contains("entry 0 at (2, 1) (counted from 1): 0.1 would become"),
        "{err}"
    );
    let o = bin()
        .args(["info", "--values", "complex128", "x.mtx"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "a usage error: {:?}", text(&o));
}

/// `info` tells a symmetric file from a general one (banner, stored and
/// expanded entries), and gives rows' fill, the diagonal, the handle's
/// memory and value statistics in 6 significant digits.
#[test]
fn info_says_what_a_solver_author_asks() {
    let d = dir().join("info");
    std::fs::create_dir_all(&d).unwrap();
    let (s, g) = (d.join("s.mtx"), d.join("g.mtx"));
    std::fs::write(&s, SYM).unwrap();
    std::fs::write(
        &g,
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 0.00000006\n2 1 -1.5\n1 3 2.0\n",
    )
    .unwrap();
    let o = bin()
        .args(["info", "-n", "0"])
        .arg(&s)
        .arg(&g)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let (si, gi) = out.split_once("g.mtx:").unwrap();
    for (want, block) in [
        ("banner   matrix coordinate real symmetric", si),
        (
            "entries  4 (3 stored in the file, 1 added as mirror images)",
            si,
        ),
        ("rows     min 1, mean 1.33333, max 2 entries\n", si),
        ("diagonal 2 of 3 stored, 1 missing", si),
        ("memory   96 bytes (values 32, coordinates 64)", si),
        (
            "values   min -1.5, max 4, mean 0.75, stddev 2.3585 (of the stored values)",
            si,
        ),
        ("banner   matrix coordinate real general", gi),
        ("entries  3\n", gi),
        ("rows     min 0, mean 1, max 2 entries; 1 empty row\n", gi),
        ("diagonal 1 of 3 stored, 2 missing", gi),
        (
            "values   min -1.5, max 2, mean 0.166667, stddev 1.43372",
            gi,
        ),
    ] {
        assert!(block.contains(want), "{want:?} missing from\n{block}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
