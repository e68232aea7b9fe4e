//! `hurray-coo`: inspect, validate and convert sparse tensor files through
//! libhurray_coo. Formats come from the file extension: `.mtx` (Matrix
//! Market) and `.tns` (FROSTT). Hurray files (`.hrry`) are not supported
//! yet and are refused by name.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use hurray_coo::assemble::{AssembleOptions, Duplicates};
use hurray_coo::io::{entry_text, mtx, stats, tns, TextOptions, WriteOptions};
use hurray_coo::{Coo, CooError};

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
    about = "Inspect, validate and convert sparse tensor files (Matrix Market .mtx, FROSTT .tns)",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Progress on standard error while reading and writing: auto shows it
    /// for inputs of 16 MiB or more when standard error is a terminal.
    #[arg(long, value_enum, default_value_t = Progress::Auto, global = true)]
    progress: Progress,
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

#[derive(clap::Args, Clone)]
struct ReadArgs {
    /// What to do with entries that share coordinates: error, sum, first,
    /// last, min or max.
    #[arg(long, default_value = "error", value_parser = policy)]
    duplicates: Duplicates,
    /// Keep the stored triangle of a symmetric Matrix Market file.
    #[arg(long)]
    keep_triangular: bool,
    /// Shape of a FROSTT tensor, e.g. 100,200,50 (inferred when absent).
    #[arg(long, value_delimiter = ',')]
    shape: Option<Vec<u64>>,
    /// Threads for parsing, sorting and writing.
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

#[derive(Subcommand)]
enum Command {
    /// Type, shape, entries, sortedness, statistics and the first entries.
    #[command(after_help = "Example:\n  hurray-coo info bcsstk01.mtx")]
    Info {
        files: Vec<PathBuf>,
        #[command(flatten)]
        read: ReadArgs,
        /// How many entries to show.
        #[arg(short = 'n', long, default_value_t = 5)]
        entries: usize,
    },
    /// Check a file: exit status 0 when it is a valid tensor, 1 with the
    /// precise message otherwise.
    #[command(after_help = "Example:\n  hurray-coo validate matrix.mtx && echo valid")]
    Validate {
        files: Vec<PathBuf>,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Convert between formats, chosen by extension (.mtx, .tns).
    #[command(
        after_help = "Example:\n  hurray-coo convert --threads 2 graph.mtx graph.tns\n  \
                      hurray-coo convert --precision 6 tensor.tns matrix.mtx"
    )]
    Convert {
        input: PathBuf,
        output: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
        /// Significant digits of real values (1 to 17); shortest
        /// round-trip text when absent.
        #[arg(long)]
        precision: Option<usize>,
    },
    /// The first entries, one per line, coordinates counted from 1.
    #[command(after_help = "Example:\n  hurray-coo head -n 20 tensor.tns")]
    Head {
        file: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
        #[arg(short = 'n', long, default_value_t = 10)]
        lines: usize,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Mtx,
    Tns,
}

fn format_of(path: &Path) -> Result<Format, String> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
    {
        Some(e) if e == "mtx" => Ok(Format::Mtx),
        Some(e) if e == "tns" => Ok(Format::Tns),
        Some(e) if e == "hrry" => Err(format!(
            "{}: Hurray files (.hrry) are not supported by this version yet",
            path.display()
        )),
        _ => Err(format!(
            "{}: unknown format; use a .mtx (Matrix Market) or .tns (FROSTT) file",
            path.display()
        )),
    }
}

/// A spinner with the elapsed time on standard error, when asked for and
/// the input is large enough; indicatif hides it when standard error is
/// not a terminal.
fn progress(mode: Progress, what: String, bytes: u64) -> Option<indicatif::ProgressBar> {
    let show = match mode {
        Progress::Never => false,
        Progress::Always => true,
        Progress::Auto => bytes >= 16 << 20,
    };
    if !show {
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

fn read(path: &Path, a: &ReadArgs, mode: Progress) -> Result<Coo<'static>, String> {
    let f = format_of(path)?;
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let bar = progress(mode, format!("reading {}", path.display()), bytes);
    let o = TextOptions {
        assemble: AssembleOptions {
            duplicates: a.duplicates,
            threads: a.threads,
            ..Default::default()
        },
        keep_triangular: a.keep_triangular,
    };
    let r = match f {
        Format::Mtx => mtx::read_mtx_file(path, &o).map(|x| x.0),
        Format::Tns => tns::read_tns_file(path, a.shape.as_deref(), &o),
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    r.map_err(|e| message(path, e))
}

/// The library's message, with the path in front unless it is there.
fn message(path: &Path, e: CooError) -> String {
    let m = e.to_string();
    let p = path.display().to_string();
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

fn info(coo: &Coo<'_>, path: &Path, n: usize) {
    let ty = coo.type_info().map_or("unknown", |t| t.name());
    println!("{}:", path.display());
    println!("  type     {ty}");
    println!("  shape    {} (rank {})", shape_text(coo), coo.rank());
    println!("  entries  {}", coo.nnz());
    println!("  sorted   {}", if coo.is_sorted() { "yes" } else { "no" });
    let s = stats::compute(coo);
    println!("  density  {:.3e}", 1.0 - s.sparsity_ratio);
    if s.computed_mask & stats::mask::VALUE_STATS != 0 {
        println!(
            "  values   min {} max {} mean {} stddev {}{}{}",
            s.value_min,
            s.value_max,
            s.value_mean,
            s.value_stddev,
            if s.has_nan { ", has NaN" } else { "" },
            if s.has_inf { ", has Inf" } else { "" }
        );
    }
    let shown = n.min(coo.nnz() as usize);
    if shown > 0 {
        println!("  first {shown} entries (counted from 1):");
        for i in 0..shown {
            if let Some(line) = entry_text(coo, i) {
                println!("    {line}");
            }
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Info {
            files,
            read: a,
            entries,
        } => {
            if files.is_empty() {
                return Err("info: give at least one file".into());
            }
            for f in &files {
                let coo = read(f, &a, cli.progress)?;
                info(&coo, f, entries);
            }
            Ok(())
        }
        Command::Validate { files, read: a } => {
            if files.is_empty() {
                return Err("validate: give at least one file".into());
            }
            for f in &files {
                let coo = read(f, &a, cli.progress)?;
                println!(
                    "{}: valid, {} {} with {} entries",
                    f.display(),
                    shape_text(&coo),
                    coo.type_info().map_or("unknown", |t| t.name()),
                    coo.nnz()
                );
            }
            Ok(())
        }
        Command::Convert {
            input,
            output,
            read: a,
            precision,
        } => {
            let out_format = format_of(&output)?;
            let coo = read(&input, &a, cli.progress)?;
            let o = WriteOptions {
                precision,
                threads: a.threads,
            };
            let bar = progress(
                cli.progress,
                format!("writing {}", output.display()),
                coo.nnz().saturating_mul(24),
            );
            let r = match out_format {
                Format::Mtx => mtx::write_mtx_file(&coo, &output, &o),
                Format::Tns => tns::write_tns_file(&coo, &output, &o),
            };
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            r.map_err(|e| message(&output, e))?;
            eprintln!(
                "{} -> {}: {} entries",
                input.display(),
                output.display(),
                coo.nnz()
            );
            Ok(())
        }
        Command::Head {
            file,
            read: a,
            lines,
        } => {
            let coo = read(&file, &a, cli.progress)?;
            for i in 0..lines.min(coo.nnz() as usize) {
                if let Some(line) = entry_text(&coo, i) {
                    println!("{line}");
                }
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            eprintln!("hurray-coo: {m}");
            ExitCode::from(1)
        }
    }
}
