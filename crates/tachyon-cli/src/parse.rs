//! `tachyon parse <files...>`: parses each file with the parser its format needs and
//! prints one summary line per file (counts, size, parse time, MB/s). A parse error
//! stops with `file:line:column: expected ..., found ...` and a non-zero exit.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Files at least this large get a progress bar while they are read and parsed.
const PROGRESS_THRESHOLD_BYTES: u64 = 4 << 20;

/// Arguments of `tachyon parse`.
#[derive(clap::Args)]
pub struct ParseArgs {
    /// Files to parse: .lib, .v, .spef, .sdc, .timing, .ops, .tau2015 (others are
    /// recognised by their first word).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Also write the per-file results as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// The file formats `tachyon parse` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Liberty,
    Verilog,
    Spef,
    Sdc,
    Timing,
    Ops,
    Tau2015,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Liberty => "liberty",
            Format::Verilog => "verilog",
            Format::Spef => "spef",
            Format::Sdc => "sdc",
            Format::Timing => "timing",
            Format::Ops => "ops",
            Format::Tau2015 => "tau2015",
        }
    }

    /// The format by extension, else by the file's first word.
    fn detect(path: &Path, text: &str) -> Option<Format> {
        let by_extension = match path.extension().and_then(|extension| extension.to_str()) {
            Some("lib") => Some(Format::Liberty),
            Some("v") => Some(Format::Verilog),
            Some("spef") => Some(Format::Spef),
            Some("sdc") => Some(Format::Sdc),
            Some("timing") => Some(Format::Timing),
            Some("ops") => Some(Format::Ops),
            Some("tau2015") => Some(Format::Tau2015),
            _ => None,
        };
        by_extension.or_else(|| {
            let first_word = first_word_after_comments(text);
            match first_word {
                "library" => Some(Format::Liberty),
                "module" => Some(Format::Verilog),
                "*SPEF" => Some(Format::Spef),
                "create_clock" => Some(Format::Sdc),
                _ => None,
            }
        })
    }
}

/// The first word of `text` after white space and `/* */` or `//` comments, with any
/// `(` that follows it cut off ("library(x)" gives "library").
fn first_word_after_comments(text: &str) -> &str {
    let mut rest = text.trim_start();
    loop {
        if let Some(after_open) = rest.strip_prefix("/*") {
            rest = after_open
                .find("*/")
                .map_or("", |close| &after_open[close + 2..])
                .trim_start();
        } else if rest.starts_with("//") {
            rest = rest
                .find('\n')
                .map_or("", |newline| &rest[newline..])
                .trim_start();
        } else {
            break;
        }
    }
    let word = rest.split_whitespace().next().unwrap_or("");
    word.split('(').next().unwrap_or("")
}

/// The measured result for one file.
#[derive(serde::Serialize)]
struct FileReport {
    path: String,
    kind: &'static str,
    bytes: u64,
    seconds: f64,
    summary: String,
}

/// `quiet` (the global `--quiet`) prints nothing on standard output (with `--json`,
/// for benchmarks).
pub fn run(
    args: ParseArgs,
    quiet: bool,
    progress: crate::progress::Progress,
) -> anyhow::Result<()> {
    use std::io::Write;
    let mut reports = Vec::new();
    let mut out = std::io::stdout().lock();
    for path in &args.files {
        let report = {
            let _phase = progress.phase(format!("parsing {}", path.display()));
            parse_file(path)?
        };
        if !quiet {
            writeln!(
                out,
                "{}: {}: {}; {:.2} MB in {:.2} ms ({:.1} MB/s)",
                report.path,
                report.kind,
                report.summary,
                report.bytes as f64 / 1e6,
                report.seconds * 1e3,
                report.bytes as f64 / 1e6 / report.seconds.max(1e-9),
            )?;
            out.flush()?;
        }
        reports.push(report);
    }
    if let Some(json_path) = &args.json {
        let document = serde_json::json!({ "files": reports });
        std::fs::write(json_path, serde_json::to_string_pretty(&document)?)
            .with_context(|| format!("cannot write {}", json_path.display()))?;
    }
    Ok(())
}

fn parse_file(path: &Path) -> anyhow::Result<FileReport> {
    let display_name = path.display().to_string();
    let size = std::fs::metadata(path)
        .with_context(|| format!("cannot read {display_name}"))?
        .len();
    let progress =
        (size >= PROGRESS_THRESHOLD_BYTES).then(|| reading_progress_bar(size, &display_name));
    let text = read_text(path, progress.as_ref())
        .with_context(|| format!("cannot read {display_name}"))?;
    let format =
        Format::detect(tachyon::input::uncompressed_name(path), &text).with_context(|| {
            format!("{display_name}: cannot tell the file format (by extension or first word)")
        })?;
    if let Some(bar) = &progress {
        bar.set_style(
            ProgressStyle::with_template("{spinner} parsing {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(100));
    }
    let (summary, seconds) = summarize(format, &display_name, &text)?;
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    Ok(FileReport {
        path: display_name,
        kind: format.name(),
        bytes: text.len() as u64,
        seconds,
        summary,
    })
}

fn reading_progress_bar(size: u64, name: &str) -> ProgressBar {
    let bar = ProgressBar::new(size);
    bar.set_style(
        ProgressStyle::with_template(
            "reading {msg} {bar:40} {bytes}/{total_bytes} {bytes_per_sec}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(name.to_string());
    bar
}

/// Reads the whole file as UTF-8 (decompressing gzip data), advancing the progress bar
/// as chunks arrive.
fn read_text(path: &Path, progress: Option<&ProgressBar>) -> anyhow::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut bytes =
        Vec::with_capacity(file.metadata().map(|meta| meta.len() as usize).unwrap_or(0));
    let mut chunk = vec![0u8; 8 << 20];
    loop {
        let n_read = file.read(&mut chunk)?;
        if n_read == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..n_read]);
        if let Some(bar) = progress {
            bar.inc(n_read as u64);
        }
    }
    Ok(tachyon::input::decode(bytes)?)
}

/// Runs `parse` and returns its result with the seconds it took. Only the parser is
/// timed: not the summary computed from its model, nor the model's release.
fn timed<T>(parse: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<(T, f64)> {
    let started = Instant::now();
    let model = parse()?;
    Ok((model, started.elapsed().as_secs_f64()))
}

/// Parses `text` as `format`; describes what it holds, with the parse time in seconds.
fn summarize(format: Format, name: &str, text: &str) -> anyhow::Result<(String, f64)> {
    let seconds;
    let summary = match format {
        Format::Liberty => {
            let library;
            (library, seconds) = timed(|| Ok(tachyon_liberty::parse_library(name, text)?))?;
            let summary = library.summary();
            format!(
                "{} cells, {} pins, {} timing arcs, {} templates",
                summary.n_cells, summary.n_pins, summary.n_timing_arcs, summary.n_templates
            )
        }
        Format::Verilog => {
            let netlist;
            (netlist, seconds) = timed(|| Ok(tachyon_verilog::parse_netlist(name, text)?))?;
            netlist.summary().to_string()
        }
        Format::Spef => {
            let spef;
            (spef, seconds) = timed(|| Ok(tachyon_spef::parse_spef(name, text)?))?;
            let summary = spef.summary();
            format!(
                "{} nets, {} RC nodes, {} resistors, {} capacitors ({} coupling), {} ports",
                summary.nets,
                summary.rc_nodes,
                summary.resistors,
                summary.capacitors,
                summary.coupling_capacitors,
                summary.ports
            )
        }
        Format::Sdc => {
            let sdc;
            (sdc, seconds) = timed(|| Ok(tachyon_sdc::parse_sdc(name, text)?))?;
            format!(
                "{} timing commands ({} command names not applied)",
                sdc.count_commands(),
                sdc.notes.len()
            )
        }
        Format::Timing => {
            let assertions;
            (assertions, seconds) = timed(|| Ok(tachyon_sdc::parse_timing(name, text)?))?;
            tachyon_sdc::count_assertions(&assertions).to_string()
        }
        Format::Ops => {
            let operations;
            (operations, seconds) = timed(|| Ok(tachyon_sdc::parse_ops(name, text)?))?;
            tachyon_sdc::count_operations(&operations).to_string()
        }
        Format::Tau2015 => {
            let files;
            (files, seconds) = timed(|| Ok(tachyon_sdc::parse_tau2015(name, text)?))?;
            format!(
                "early {}, late {}, spef {}, verilog {}",
                files.early_liberty, files.late_liberty, files.spef, files.verilog
            )
        }
    };
    Ok((summary, seconds))
}
