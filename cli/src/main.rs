//! `hurray-coo`: inspect, validate and convert sparse tensor files through
//! libhurray_coo. Formats come from the file extension: `.mtx` (Matrix
//! Market), `.tns` (FROSTT) and `.hrry` (Hurray files, which hold several
//! named tensors and metadata); text may be gzip-compressed (`.mtx.gz`).
//! `-` is standard input or output, with `--from` / `--to` for the format.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use hurray_coo::assemble::{AssembleOptions, Duplicates};
use hurray_coo::io::descriptor::StatsChoice;
use hurray_coo::io::file::{
    FileWriter, HurrayFile, KvValue, OpenMode, WriteOptions as FileWriteOptions,
};
use hurray_coo::io::mtx::{MtxField, MtxHeader, MtxSymmetry};
use hurray_coo::io::{entry_text, mtx, stats, tns, TextOptions, WriteOptions};
use hurray_coo::{Coo, CooError, Options};

const EXIT_CODES: &str = "\
Exit status:
  0  success (validate: the file is a valid tensor)
  1  the input is invalid or could not be read or written (the message
     says where: path, line, column, token)
  2  usage error (unknown option, missing argument)";

#[derive(Parser)]
#[command(
    name = "hurray-coo",
    version,
    about = "Inspect, validate and convert sparse tensor files (Matrix Market .mtx, FROSTT .tns, \
             Hurray .hrry)",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Progress on standard error while reading and writing (percentage,
    /// rate and time left while a file is read): auto shows it for inputs
    /// of 16 MiB or more; never drawn when standard error is not a terminal.
    #[arg(long, value_enum, default_value_t = Progress::Auto, global = true)]
    progress: Progress,
    /// The format of inputs, for `-` (standard input) or a name without a
    /// known extension.
    #[arg(long, value_enum, global = true)]
    from: Option<Format>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Progress {
    Auto,
    Always,
    Never,
}

/// A duplicate policy by its library name, in lower case.
fn policy(s: &str) -> Result<Duplicates, String> {
    Duplicates::from_name(s).ok_or_else(|| {
        let names: Vec<String> = Duplicates::ALL
            .iter()
            .map(|d| d.name().to_ascii_lowercase())
            .collect();
        format!("'{s}' is not a policy; one of {}", names.join(", "))
    })
}

/// A real or integer element type by its name, as its tag.
fn value_type(s: &str) -> Result<u8, String> {
    let real = |t: &&hurray_coo::TypeInfo| !t.name().starts_with("complex") && t.name() != "bool";
    hurray_coo::TYPES
        .iter()
        .filter(real)
        .find(|t| t.name() == s)
        .map(|t| t.tag)
        .ok_or_else(|| {
            let names: Vec<&str> = hurray_coo::TYPES
                .iter()
                .filter(real)
                .map(|t| t.name())
                .collect();
            format!(
                "'{s}' is not a real or integer type; one of {}",
                names.join(", ")
            )
        })
}

#[derive(clap::Args, Clone)]
struct ReadArgs {
    /// What to do with entries that share coordinates: error, sum, first,
    /// last, min or max.
    #[arg(long, default_value = "error", value_parser = policy)]
    duplicates: Duplicates,
    /// Keep the stored triangle of a symmetric Matrix Market file instead
    /// of mirroring it (convert then writes a .mtx output with the input's
    /// symmetry, and refuses other outputs, which have no way to say it).
    #[arg(long)]
    keep_triangular: bool,
    /// Shape of a FROSTT tensor, e.g. 100,200,50 (inferred when absent).
    #[arg(long, value_delimiter = ',')]
    shape: Option<Vec<u64>>,
    /// Threads for parsing, sorting and writing.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Text input: read the values into this type (float64, float32,
    /// int32, ...: any real or integer type), exactly or not at all (a
    /// value that would be rounded or is out of range is an error).
    #[arg(long, value_parser = value_type)]
    values: Option<u8>,
    /// The tensor of a .hrry file to use (by default: every COO tensor for
    /// info and validate, the only one for convert and head).
    #[arg(long)]
    tensor: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Statistics {
    None,
    Counts,
    Full,
}

#[derive(clap::Args, Clone)]
struct HrryArgs {
    /// Name of the tensor in a .hrry output (default: the input's name in
    /// a .hrry input, else the input file's stem).
    #[arg(long)]
    name: Option<String>,
    /// data_buffer_alignment of a .hrry output: a power of two from 4096
    /// to 2097152.
    #[arg(long, default_value_t = 4096)]
    alignment: u32,
    /// Statistics section in each descriptor of a .hrry output.
    #[arg(long, value_enum, default_value_t = Statistics::None)]
    statistics: Statistics,
}

#[derive(Subcommand)]
enum Command {
    /// Type, shape, entries, sortedness, statistics and the first entries.
    #[command(
        after_help = "Example:\n  hurray-coo info bcsstk01.mtx\n  hurray-coo info model.hrry"
    )]
    Info {
        /// The files to describe (.mtx, .tns or .hrry), one after another.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        read: ReadArgs,
        /// How many entries to show.
        #[arg(short = 'n', long, default_value_t = 5)]
        entries: usize,
    },
    /// Check a file: exit status 0 when it is a valid tensor, 1 with the
    /// precise message otherwise.
    #[command(
        after_help = "Example:\n  hurray-coo validate matrix.mtx && echo valid\n  \
                      hurray-coo validate --tensor K system.hrry"
    )]
    Validate {
        /// The files to check (.mtx, .tns or .hrry): every one is checked
        /// and reported, and the exit status is 1 if any is invalid.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Convert between formats, chosen by extension (.mtx, .tns, .hrry). A
    /// .hrry to .hrry conversion copies every COO tensor and the metadata.
    #[command(
        after_help = "Example:\n  hurray-coo convert --threads 2 graph.mtx graph.tns\n  \
                      hurray-coo convert --precision 6 tensor.tns matrix.mtx\n  \
                      hurray-coo convert --name K stiffness.mtx system.hrry\n  \
                      hurray-coo convert --tensor K system.hrry K.mtx"
    )]
    Convert {
        /// The file to read (.mtx, .tns or .hrry; text may be .gz), or -
        /// for standard input (with --from).
        input: PathBuf,
        /// The file to write (.mtx, .tns or .hrry), replaced only once
        /// complete, never one of the inputs; or - for standard output
        /// (with --to; text formats only).
        output: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
        #[command(flatten)]
        hrry: HrryArgs,
        /// Significant digits of real values (1 to 17); shortest
        /// round-trip text when absent.
        #[arg(long)]
        precision: Option<usize>,
        /// The output's format, for `-` (standard output) or a name without
        /// a known extension.
        #[arg(long, value_enum)]
        to: Option<Format>,
        /// Matrix Market output: declare this symmetry and write the lower
        /// triangle only (half the size); refused, naming the first entry
        /// and its mirror image, when the matrix does not have it exactly.
        #[arg(long, value_enum)]
        symmetry: Option<Symmetry>,
        /// Matrix Market output: write the coordinates only (field
        /// pattern), whatever the values.
        #[arg(long)]
        pattern: bool,
        /// Matrix Market output: write the matrix dense (format array),
        /// every value column by column, zeros included.
        #[arg(long, conflicts_with = "pattern")]
        array: bool,
    },
    /// The first entries, one per line, coordinates counted from 1.
    #[command(
        after_help = "Example:\n  hurray-coo head -n 20 tensor.tns\n  hurray-coo head --tensor K system.hrry"
    )]
    Head {
        /// The file to read (.mtx, .tns or .hrry).
        file: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
        /// How many entries to print.
        #[arg(short = 'n', long, default_value_t = 10)]
        lines: usize,
    },
}

/// Why a command stopped: what `main` turns into an exit status.
enum Fail {
    /// A bad input or output (exit 1); the message says where.
    Bad(String),
    /// Standard output was closed by its reader (`| head`): end quietly,
    /// as a Unix tool does.
    Pipe,
    /// Something failed after its message was printed (exit 1).
    Reported,
}

impl From<String> for Fail {
    fn from(m: String) -> Fail {
        Fail::Bad(m)
    }
}

/// Standard output, buffered; a write that fails is an error to return,
/// never a panic (println! panics on a closed pipe).
struct Out(std::io::BufWriter<std::io::StdoutLock<'static>>);

impl Out {
    fn new() -> Out {
        Out(std::io::BufWriter::new(std::io::stdout().lock()))
    }

    fn line(&mut self, args: std::fmt::Arguments<'_>) -> Result<(), Fail> {
        self.0
            .write_fmt(args)
            .and_then(|()| self.0.write_all(b"\n"))
            .map_err(io_fail)
    }

    fn flush(&mut self) -> Result<(), Fail> {
        self.0.flush().map_err(io_fail)
    }
}

fn io_fail(e: std::io::Error) -> Fail {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Fail::Pipe
    } else {
        Fail::Bad(format!("standard output: {e}"))
    }
}

/// println! into an `Out`, returning its error.
macro_rules! say {
    ($out:expr, $($arg:tt)*) => { $out.line(format_args!($($arg)*))? };
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Mtx,
    Tns,
    Hrry,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Symmetry {
    General,
    Symmetric,
    SkewSymmetric,
    Hermitian,
}

impl Symmetry {
    fn of(self) -> MtxSymmetry {
        match self {
            Symmetry::General => MtxSymmetry::General,
            Symmetry::Symmetric => MtxSymmetry::Symmetric,
            Symmetry::SkewSymmetric => MtxSymmetry::SkewSymmetric,
            Symmetry::Hermitian => MtxSymmetry::Hermitian,
        }
    }
}

/// Whether `path` is `-`: standard input or output.
fn is_std(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The format of `path`: `given` (--from, --to), else its extension (a
/// trailing `.gz` looked through: gzip is recognised by its bytes).
fn format_of(path: &Path, given: Option<Format>, flag: &str) -> Result<Format, String> {
    if let Some(f) = given {
        return Ok(f);
    }
    if is_std(path) {
        return Err(format!(
            "-: standard {} has no extension to tell its format; say {flag} mtx, tns or hrry",
            if flag == "--from" { "input" } else { "output" }
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    match name.rsplit_once('.').map(|(_, e)| e) {
        Some("mtx") => Ok(Format::Mtx),
        Some("tns") => Ok(Format::Tns),
        Some("hrry") => Ok(Format::Hrry),
        _ => Err(format!(
            "{}: unknown format; use a .mtx (Matrix Market), .tns (FROSTT) or .hrry (Hurray) \
             file (text may be gzip-compressed, .mtx.gz), or say {flag} mtx, tns or hrry",
            path.display()
        )),
    }
}

/// Standard input, read whole.
fn read_stdin() -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut b = Vec::new();
    std::io::stdin().lock().read_to_end(&mut b).map_err(|e| {
        format!(
            "-: cannot read standard input: {}",
            hurray_coo::io::reason(&e)
        )
    })?;
    Ok(b)
}

/// Whether to show progress for work on `bytes` bytes.
fn shows(mode: Progress, bytes: u64) -> bool {
    match mode {
        Progress::Never => false,
        Progress::Always => true,
        Progress::Auto => bytes >= 16 << 20,
    }
}

/// A spinner with the elapsed time on standard error, for work whose end
/// cannot be told, when asked for and the input is large enough; indicatif
/// hides it when standard error is not a terminal.
fn progress(mode: Progress, what: String, bytes: u64) -> Option<indicatif::ProgressBar> {
    if !shows(mode, bytes) {
        return None;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(what);
    bar.enable_steady_tick(Duration::from_millis(100));
    Some(bar)
}

/// A bar for reading a file of `bytes` bytes: percentage, rate, time left
/// (hidden, as the spinner, when standard error is not a terminal).
fn read_bar(mode: Progress, what: String, bytes: u64) -> Option<indicatif::ProgressBar> {
    if !shows(mode, bytes) {
        return None;
    }
    let bar = indicatif::ProgressBar::new(bytes);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{msg} {percent:>3}% {bar:30} {binary_bytes_per_sec} ({eta} left)",
    ) {
        bar.set_style(style);
    }
    bar.set_message(what);
    bar.tick();
    Some(bar)
}

/// An input: one tensor of a text file, or an open Hurray file whose
/// tensors borrow it.
enum Input {
    /// The tensor and, for Matrix Market, what its banner declared.
    Text(Coo<'static>, Option<MtxHeader>),
    File(HurrayFile),
}

/// Refuse reading options that do not apply to an input of format `f`:
/// silently ignoring one would leave the user believing it was used.
fn options_apply(path: &Path, f: Format, a: &ReadArgs) -> Result<(), String> {
    let kind = match f {
        Format::Mtx => "a Matrix Market file",
        Format::Tns => "a FROSTT file",
        Format::Hrry => "a Hurray file",
    };
    let p = shown(path);
    if a.shape.is_some() && f != Format::Tns {
        return Err(format!(
            "{p}: --shape gives the shape of a FROSTT (.tns) tensor; this is {kind}, which \
             says its own shape"
        ));
    }
    if a.keep_triangular && f != Format::Mtx {
        return Err(format!(
            "{p}: --keep-triangular applies to symmetric Matrix Market files; this is {kind}"
        ));
    }
    if a.values.is_some() && f == Format::Hrry {
        return Err(format!(
            "{p}: --values reads a text file's values into a type; a Hurray file's tensors keep \
             the type they were written with"
        ));
    }
    if a.tensor.is_some() && f != Format::Hrry {
        return Err(format!(
            "{p}: --tensor picks a tensor of a .hrry file; this is {kind}, which holds one"
        ));
    }
    Ok(())
}

fn load(path: &Path, a: &ReadArgs, mode: Progress, from: Option<Format>) -> Result<Input, String> {
    let f = format_of(path, from, "--from")?;
    options_apply(path, f, a)?;
    if f == Format::Hrry {
        let file = match is_std(path) {
            true => HurrayFile::from_bytes(&read_stdin()?),
            false => HurrayFile::open(path, OpenMode::Map),
        };
        return file.map(Input::File).map_err(|e| message(path, e));
    }
    let o = TextOptions {
        assemble: AssembleOptions {
            duplicates: a.duplicates,
            threads: a.threads,
            ..Default::default()
        },
        keep_triangular: a.keep_triangular,
        value_type: a.values,
    };
    let shape = a.shape.as_deref();
    let r = if is_std(path) {
        let text = read_stdin()?;
        match f {
            Format::Mtx => mtx::read_mtx(&text, &o).map(|(c, h)| (c, Some(h))),
            _ => tns::read_tns(&text, shape, &o).map(|c| (c, None)),
        }
    } else {
        let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let bar = read_bar(mode, format!("reading {}", path.display()), bytes);
        let report = |done: u64, _: u64| {
            if let Some(b) = &bar {
                b.set_position(done);
            }
        };
        let r = match f {
            Format::Mtx => {
                mtx::read_mtx_file_reporting(path, &o, &report).map(|(c, h)| (c, Some(h)))
            }
            _ => tns::read_tns_file_reporting(path, shape, &o, &report).map(|c| (c, None)),
        };
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        r
    };
    r.map(|(c, s)| Input::Text(c, s))
        .map_err(|e| message(path, e))
}

/// A tensor of an input: the text file's own, or one borrowing a file.
enum Tensor<'f> {
    Text(&'f Coo<'f>),
    File(Box<Coo<'f>>),
}

impl<'f> std::ops::Deref for Tensor<'f> {
    type Target = Coo<'f>;
    fn deref(&self) -> &Coo<'f> {
        match self {
            Tensor::Text(c) => c,
            Tensor::File(c) => c,
        }
    }
}

/// Which tensors of an input a command works on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pick {
    /// Every COO tensor (or the one --tensor names).
    All,
    /// Exactly one: --tensor, or the file's only COO tensor.
    One,
}

/// The validated tensors of `input` (name, handle), as `pick` says.
fn tensors<'f>(
    input: &'f Input,
    path: &Path,
    a: &ReadArgs,
    pick: Pick,
    mode: Progress,
) -> Result<Vec<(Option<String>, Tensor<'f>)>, String> {
    let file = match input {
        Input::Text(coo, _) => return Ok(vec![(None, Tensor::Text(coo))]),
        Input::File(f) => f,
    };
    let positions: Vec<usize> = match &a.tensor {
        Some(name) => vec![file.position(name).map_err(|e| message(path, e))?],
        None => {
            let coo: Vec<usize> = (0..file.tensors().len())
                .filter(|&i| file.tensors()[i].is_coo())
                .collect();
            if pick == Pick::One && coo.len() != 1 {
                let names: Vec<String> = coo
                    .iter()
                    .map(|&i| format!("{:?}", file.tensors()[i].entry.name))
                    .collect();
                return Err(format!(
                    "{}: the file holds {} COO tensors{}; pick one with --tensor NAME",
                    path.display(),
                    coo.len(),
                    if names.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", names.join(", "))
                    }
                ));
            }
            coo
        }
    };
    let mut out = Vec::new();
    for i in positions {
        let t = &file.tensors()[i];
        let bytes = t.entry.data_length;
        let bar = progress(mode, format!("checking {:?}", t.entry.name), bytes);
        let r = file.coo(i, Options::default());
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        let (coo, _) = r.map_err(|e| message(path, e))?;
        out.push((Some(t.entry.name.clone()), Tensor::File(Box::new(coo))));
    }
    Ok(out)
}

/// How a path is named in messages: `-` as standard input or output.
fn shown(path: &Path) -> String {
    match is_std(path) {
        true => "-".into(),
        false => path.display().to_string(),
    }
}

/// The library's message, with the path in front unless it is there.
fn message(path: &Path, e: CooError) -> String {
    let m = e.to_string();
    let p = shown(path);
    if m.starts_with(&p) {
        m
    } else {
        format!("{p}: {m}")
    }
}

fn shape_text(coo: &Coo<'_>) -> String {
    coo.shape()
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" x ")
}

/// What a tensor is called in output: the path, and its name in a file.
fn label(path: &Path, name: &Option<String>) -> String {
    match name {
        Some(n) => format!("{}:{n}", path.display()),
        None => path.display().to_string(),
    }
}

fn kv_text(v: &KvValue) -> String {
    match v {
        KvValue::String(s) => format!("{s:?}"),
        KvValue::Int64(x) => x.to_string(),
        KvValue::Uint64(x) => x.to_string(),
        KvValue::Float64(x) => x.to_string(),
        KvValue::Bool(x) => x.to_string(),
        KvValue::Bytes(b) => format!("{} bytes", b.len()),
        KvValue::Array(a) => {
            let items: Vec<String> = (0..a.len().min(8))
                .filter_map(|i| a.get(i).map(|x| kv_text(&x)))
                .collect();
            let more = if a.len() > 8 { ", ..." } else { "" };
            format!(
                "[{}{more}] ({} {})",
                items.join(", "),
                a.len(),
                KvValue::tag_name(a.tag())
            )
        }
    }
}

/// The file-level summary of a Hurray file: its tensors of every layout
/// and its metadata.
fn file_summary(out: &mut Out, file: &HurrayFile, path: &Path) -> Result<(), Fail> {
    let c = file.container();
    say!(
        out,
        "{}: Hurray file, {} tensor{}, data_buffer_alignment {}{}",
        path.display(),
        c.tensors.len(),
        if c.tensors.len() == 1 { "" } else { "s" },
        c.header.alignment,
        if c.header.flags & 2 != 0 {
            ", sorted index"
        } else {
            ""
        }
    );
    for t in &c.tensors {
        let ty = hurray_coo::type_info(t.type_tag).map_or("unknown type", |t| t.name());
        let shape: Vec<String> = t.shape.iter().map(u64::to_string).collect();
        let nnz = t.nnz.map(|n| format!(", {n} entries")).unwrap_or_default();
        say!(
            out,
            "  {:?}: {} {} {}{nnz}",
            t.entry.name,
            t.layout_name(),
            ty,
            shape.join(" x ")
        );
    }
    for (k, v) in &c.kv {
        say!(out, "  metadata {k:?} = {}", kv_text(v));
    }
    Ok(())
}

/// `x` with 6 significant digits, as C's `%g` writes it: what a value's
/// statistics need, not the 17 digits of a round trip.
fn g(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let e = x.abs().log10().floor() as i32;
    if (-5..6).contains(&e) {
        let s = format!("{:.*}", (5 - e).max(0) as usize, x);
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        };
        return s;
    }
    let s = format!("{x:.5e}");
    match s.split_once('e') {
        Some((m, ex)) if m.contains('.') => {
            format!("{}e{ex}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

/// Entries per index of the first mode (per row of a matrix): min, mean
/// and max over every row, and how many rows are empty.
fn fill(coo: &Coo<'_>) -> (u64, f64, u64, u64) {
    let rows = coo.shape().first().copied().unwrap_or(0);
    let n = coo.nnz() as usize;
    let mut counts: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    for i in 0..n {
        *counts.entry(coo.entry(i)[0]).or_default() += 1;
    }
    let filled = counts.len() as u64;
    let empty = rows - filled;
    let min = if empty > 0 {
        0
    } else {
        counts.values().copied().min().unwrap_or(0)
    };
    let max = counts.values().copied().max().unwrap_or(0);
    let mean = if rows == 0 {
        0.0
    } else {
        n as f64 / rows as f64
    };
    (min, mean, max, empty)
}

fn field_name(f: MtxField) -> &'static str {
    match f {
        MtxField::Real => "real",
        MtxField::Integer => "integer",
        MtxField::Complex => "complex",
        MtxField::Pattern => "pattern",
    }
}

/// What a solver author asks of a tensor: the file's banner, stored and
/// expanded entries, shape, rows' fill, the diagonal, the handle's memory,
/// the stored values' statistics, the first entries.
fn info(
    out: &mut Out,
    coo: &Coo<'_>,
    banner: Option<&MtxHeader>,
    label: &str,
    n: usize,
) -> Result<(), Fail> {
    let ty = coo.type_info().map_or("unknown", |t| t.name());
    say!(out, "{label}:");
    if let Some(h) = banner {
        say!(
            out,
            "  banner   matrix {} {} {}",
            if h.array { "array" } else { "coordinate" },
            field_name(h.field),
            mtx::symmetry_name(h.symmetry)
        );
    }
    say!(out, "  type     {ty}");
    say!(out, "  shape    {} (rank {})", shape_text(coo), coo.rank());
    match banner {
        Some(h) if h.stored < coo.nnz() => say!(
            out,
            "  entries  {} ({} stored in the file, {} added as mirror images)",
            coo.nnz(),
            h.stored,
            coo.nnz() - h.stored
        ),
        Some(h) if h.stored > coo.nnz() => say!(
            out,
            "  entries  {} ({} stored in the file; duplicates combined or zeros dropped)",
            coo.nnz(),
            h.stored
        ),
        _ => say!(out, "  entries  {}", coo.nnz()),
    }
    say!(
        out,
        "  sorted   {}",
        if coo.is_sorted() { "yes" } else { "no" }
    );
    let s = stats::counts(coo);
    say!(out, "  density  {}", g(1.0 - s.sparsity_ratio));
    if coo.rank() >= 1 {
        let (min, mean, max, empty) = fill(coo);
        say!(
            out,
            "  {}     min {min}, mean {}, max {max} entries{}",
            if coo.rank() == 2 { "rows" } else { "fill" },
            g(mean),
            match (coo.rank(), empty) {
                (2, 0) => String::new(),
                (2, e) => format!("; {e} empty row{}", if e == 1 { "" } else { "s" }),
                (_, e) => format!(" per index of mode 1; {e} empty"),
            }
        );
    }
    if coo.rank() == 2 && coo.shape()[0] == coo.shape()[1] {
        let d = (0..coo.nnz() as usize)
            .filter(|&i| coo.entry(i)[0] == coo.entry(i)[1])
            .count();
        let m = coo.shape()[0];
        match d as u64 {
            x if x == m => say!(out, "  diagonal all {m} stored"),
            0 => say!(out, "  diagonal none of {m} stored"),
            x => say!(out, "  diagonal {x} of {m} stored, {} missing", m - x),
        }
    }
    let (v, c, x) = (
        coo.values().len(),
        std::mem::size_of_val(coo.indices()),
        coo.index_bytes(),
    );
    say!(
        out,
        "  memory   {} bytes (values {v}, coordinates {c}{})",
        v + c + x,
        if x > 0 {
            format!(", index {x}")
        } else {
            String::new()
        }
    );
    if let Some(t) = coo.type_info().filter(|t| !t.name().starts_with("complex")) {
        use hurray_coo::element::decode::{copy_element, to_f64};
        let (mut lo, mut hi, mut sum, mut k) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0u64);
        let (mut nan, mut inf) = (false, false);
        let vals: Vec<f64> = (0..coo.nnz() as usize)
            .map(|i| {
                let mut st = [0u8; 16];
                copy_element(t, coo.values(), i, &mut st);
                to_f64(t, &st).unwrap_or(f64::NAN)
            })
            .collect();
        for &x in &vals {
            nan |= x.is_nan();
            inf |= x.is_infinite();
            if x.is_finite() {
                lo = lo.min(x);
                hi = hi.max(x);
                sum += x;
                k += 1;
            }
        }
        if k > 0 {
            let mean = sum / k as f64;
            let var = vals
                .iter()
                .filter(|x| x.is_finite())
                .map(|x| (x - mean) * (x - mean))
                .sum::<f64>()
                / k as f64;
            say!(
                out,
                "  values   min {}, max {}, mean {}, stddev {} (of the stored values{}){}{}",
                g(lo),
                g(hi),
                g(mean),
                g(var.sqrt()),
                if nan || inf { ", finite ones" } else { "" },
                if nan { ", has NaN" } else { "" },
                if inf { ", has Inf" } else { "" }
            );
        }
    }
    let shown = n.min(coo.nnz() as usize);
    if shown > 0 {
        say!(out, "  first {shown} entries (counted from 1):");
        for i in 0..shown {
            if let Some(line) = entry_text(coo, i) {
                say!(out, "    {line}");
            }
        }
    }
    Ok(())
}

fn stats_choice(s: Statistics) -> StatsChoice {
    match s {
        Statistics::None => StatsChoice::None,
        Statistics::Counts => StatsChoice::Counts,
        Statistics::Full => StatsChoice::Full,
    }
}

/// Write `tensors` (and the metadata of a .hrry input) as the Hurray file
/// `output`.
fn write_hrry(
    output: &Path,
    input: &Path,
    source: &Input,
    tensors: &[(Option<String>, Tensor<'_>)],
    h: &HrryArgs,
) -> Result<(), CooError> {
    let opts = FileWriteOptions {
        alignment: h.alignment,
        sorted_index: false,
        stats: stats_choice(h.statistics),
    };
    let mut w = FileWriter::create(output, opts)?;
    if let Input::File(f) = source {
        for (k, v) in f.kv() {
            w.add_kv(k, v.clone())?;
        }
    }
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tensor".into());
    for (name, coo) in tensors {
        let name = match (&h.name, name) {
            (Some(n), _) if tensors.len() == 1 => n.clone(),
            (_, Some(n)) => n.clone(),
            _ => stem.clone(),
        };
        w.add_coo(&name, coo)?;
    }
    w.finish()
}

/// Run `f` on each of `files`, reporting a file's failure on standard
/// error and going on with the next; `Reported` at the end if any failed.
fn each_file(
    out: &mut Out,
    files: &[PathBuf],
    mut f: impl FnMut(&mut Out, &Path) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let mut failed = false;
    for p in files {
        match f(out, p) {
            Ok(()) => {}
            Err(Fail::Bad(m)) => {
                // What the earlier files printed comes first.
                out.flush()?;
                eprintln!("hurray-coo: {m}");
                failed = true;
            }
            Err(e) => return Err(e),
        }
    }
    if failed {
        Err(Fail::Reported)
    } else {
        Ok(())
    }
}

/// The symmetry to write a converted matrix with: `general`, unless the
/// caller kept the stored triangle of a symmetric file, which only a
/// Matrix Market output can say is half of the matrix.
fn output_symmetry(
    source: &Input,
    a: &ReadArgs,
    input: &Path,
    output: &Path,
    out_format: Format,
) -> Result<MtxSymmetry, Fail> {
    let symmetry = match source {
        Input::Text(_, Some(h)) if a.keep_triangular => h.symmetry,
        _ => MtxSymmetry::General,
    };
    if symmetry != MtxSymmetry::General && out_format != Format::Mtx {
        return Err(Fail::Bad(format!(
            "{}: --keep-triangular keeps one triangle of the symmetric matrix in {}, and {} \
             has no way to say that the other triangle is implied, so it would hold another \
             matrix; write a .mtx file, or drop --keep-triangular to write the whole matrix",
            output.display(),
            input.display(),
            output.display()
        )));
    }
    Ok(symmetry)
}

/// Refuse an output the tool would write wrongly: the input itself (it
/// would be replaced by what is read from it, comments lost), gzip (not
/// written: pipe standard output into gzip), a Hurray file on standard
/// output (written through a temporary file renamed into place), and
/// options that do not apply to the output's format.
fn check_output(
    input: &Path,
    output: &Path,
    f: Format,
    h: &HrryArgs,
    precision: Option<usize>,
) -> Result<(), String> {
    let o = shown(output);
    if !is_std(input) && !is_std(output) && same_file(input, output) {
        return Err(format!(
            "{o}: this is the input file; writing it would replace what is being read (its \
             comments too); write to another file and rename it"
        ));
    }
    if output
        .file_name()
        .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(".gz"))
    {
        return Err(format!(
            "{o}: gzip output is not written; write to - and pipe it into gzip \
             (hurray-coo convert --to mtx IN - | gzip > OUT.mtx.gz)"
        ));
    }
    if is_std(output) && f == Format::Hrry {
        return Err(
            "-: a Hurray file is written to a path (through a temporary file renamed into \
             place), not to standard output; give a file name"
                .into(),
        );
    }
    if f != Format::Hrry && h.name.is_some() {
        return Err(format!(
            "{o}: --name names the tensor in a .hrry output; a text file holds one, unnamed"
        ));
    }
    if f == Format::Hrry && precision.is_some() {
        return Err(format!(
            "{o}: --precision sets the digits of text output; a .hrry file keeps every value \
             exactly"
        ));
    }
    Ok(())
}

/// Whether `a` and `b` are the same existing file (a link or another
/// spelling of the path included).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

fn run(cli: Cli, out: &mut Out) -> Result<(), Fail> {
    let mode = cli.progress;
    let from = cli.from;
    match cli.command {
        Command::Info {
            files,
            read: a,
            entries,
        } => each_file(out, &files, |out, f| {
            let input = load(f, &a, mode, from)?;
            if let Input::File(file) = &input {
                file_summary(out, file, f)?;
            }
            let banner = match &input {
                Input::Text(_, h) => h.as_ref(),
                Input::File(_) => None,
            };
            for (name, coo) in tensors(&input, f, &a, Pick::All, mode)? {
                info(out, &coo, banner, &label(f, &name), entries)?;
            }
            Ok(())
        }),
        Command::Validate { files, read: a } => each_file(out, &files, |out, f| {
            let input = load(f, &a, mode, from)?;
            for (name, coo) in tensors(&input, f, &a, Pick::All, mode)? {
                say!(
                    out,
                    "{}: valid, {} {} with {} entries",
                    label(f, &name),
                    shape_text(&coo),
                    coo.type_info().map_or("unknown", |t| t.name()),
                    coo.nnz()
                );
            }
            if let Input::File(file) = &input {
                if a.tensor.is_none() {
                    for t in file.tensors().iter().filter(|t| !t.is_coo()) {
                        say!(
                            out,
                            "{}:{}: not checked ({} layout; this tool checks COO tensors)",
                            f.display(),
                            t.entry.name,
                            t.layout_name()
                        );
                    }
                }
            }
            Ok(())
        }),
        Command::Convert {
            input,
            output,
            read: a,
            hrry,
            precision,
            to,
            symmetry: asked,
            pattern,
            array,
        } => {
            let out_format = format_of(&output, to, "--to")?;
            check_output(&input, &output, out_format, &hrry, precision)?;
            if (asked.is_some() || pattern || array) && out_format != Format::Mtx {
                return Err(Fail::Bad(format!(
                    "{}: --symmetry, --pattern and --array shape a Matrix Market output; this \
                     output is not one",
                    shown(&output)
                )));
            }
            if asked.is_some() && a.keep_triangular {
                return Err(Fail::Bad(
                    "--keep-triangular writes the input's own symmetry; --symmetry folds a whole \
                     matrix: give one of them"
                        .into(),
                ));
            }
            let source = load(&input, &a, mode, from)?;
            let symmetry = output_symmetry(&source, &a, &input, &output, out_format)?;
            let pick = if out_format == Format::Hrry {
                Pick::All
            } else {
                Pick::One
            };
            let list = tensors(&source, &input, &a, pick, mode)?;
            let nnz: u64 = list.iter().map(|(_, c)| c.nnz()).sum();
            let o = WriteOptions {
                precision,
                threads: a.threads,
                pattern,
                array,
            };
            // The stored triangle (--keep-triangular), or the whole matrix
            // folded to the symmetry asked for.
            let write_mtx = |coo: &Coo<'_>, text: &mut Vec<u8>| match asked {
                Some(s) => mtx::write_mtx_symmetric(coo, s.of(), &o, text),
                None => mtx::write_mtx_as(coo, symmetry, &o, text),
            };
            let write_mtx_file = |coo: &Coo<'_>| match asked {
                Some(s) => mtx::write_mtx_file_symmetric(coo, s.of(), &output, &o),
                None => mtx::write_mtx_file_as(coo, symmetry, &output, &o),
            };
            let bar = progress(
                mode,
                format!("writing {}", shown(&output)),
                nnz.saturating_mul(24),
            );
            let r = if is_std(&output) {
                let mut text = Vec::new();
                let r = match out_format {
                    Format::Mtx => write_mtx(&list[0].1, &mut text),
                    _ => tns::write_tns(&list[0].1, &o, &mut text),
                };
                r.map(|()| text)
            } else {
                match out_format {
                    Format::Mtx => write_mtx_file(&list[0].1),
                    Format::Tns => tns::write_tns_file(&list[0].1, &output, &o),
                    Format::Hrry => write_hrry(&output, &input, &source, &list, &hrry),
                }
                .map(|()| Vec::new())
            };
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            let text = r.map_err(|e| message(&output, e))?;
            if is_std(&output) {
                out.0.write_all(&text).map_err(io_fail)?;
                out.flush()?;
            }
            eprintln!(
                "{} -> {}: {} tensor{}, {nnz} entries",
                shown(&input),
                shown(&output),
                list.len(),
                if list.len() == 1 { "" } else { "s" }
            );
            Ok(())
        }
        Command::Head {
            file,
            read: a,
            lines,
        } => {
            let input = load(&file, &a, mode, from)?;
            let list = tensors(&input, &file, &a, Pick::One, mode)?;
            let coo = &list[0].1;
            for i in 0..lines.min(coo.nnz() as usize) {
                if let Some(line) = entry_text(coo, i) {
                    say!(out, "{line}");
                }
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    // Usage errors exit 2 (clap's own exit), --help and --version 0.
    let cli = Cli::parse();
    let mut out = Out::new();
    let r = run(cli, &mut out).and_then(|()| out.flush());
    match r {
        Ok(()) | Err(Fail::Pipe) => ExitCode::SUCCESS,
        Err(Fail::Reported) => ExitCode::from(1),
        Err(Fail::Bad(m)) => {
            // What was printed before the failure goes out first; a closed
            // pipe then changes nothing.
            let _ = out.flush();
            eprintln!("hurray-coo: {m}");
            ExitCode::from(1)
        }
    }
}
