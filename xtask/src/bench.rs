//! `cargo xtask bench`: runs the release `tachyon` binary on TAU benchmark folders and
//! generated designs, several runs each, and prints a table of medians per phase plus
//! peak memory (and JSON for tracking over time). `cargo xtask bench parse` measures
//! parser throughput (MB/s) per format instead, `cargo xtask bench report` the report
//! writer (`bench_report`), `cargo xtask bench incremental` edits against full updates
//! (`bench_incremental`).
//!
//! The binary reports its own phase times and peak memory through `--timings-json`, so
//! every number comes from one process per run and nothing here depends on the engine's
//! internals.

use crate::cli_binary::{self, workspace_root};
use anyhow::Context;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The phases in report order, as the binary names them and as the table heads them;
/// the binary reports those it has built (`flatten` on both backends, `upload` only on
/// the GPU backend).
const PHASES: [(&str, &str); 10] = [
    ("parse", "parse"),
    ("link", "link"),
    ("levelize", "levelize"),
    ("flatten", "flatten"),
    ("gpu layout + upload", "upload"),
    ("rc", "rc"),
    ("propagate", "propagate"),
    ("cppr", "cppr"),
    ("paths", "paths"),
    ("report", "report"),
];

/// What to measure.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchKind {
    /// The whole timing flow, per phase.
    Flow,
    /// Parser throughput per format.
    Parse,
    /// The report writer: single-threaded against pipelined, memory against path
    /// count, the disk's own write speed, the writer's knobs.
    Report,
    /// Incremental timing: edit+query pairs against full updates (`tachyon
    /// bench-edits`), peak memory against a full-timing run, optionally OpenTimer.
    Incremental,
    /// The full update over the resident GPU state against the CPU backend's, `--runs`
    /// of each (`tachyon bench-full`).
    Resident,
}

/// Arguments of `cargo xtask bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// What to measure.
    #[arg(value_enum, default_value = "flow")]
    kind: BenchKind,
    /// TAU 2015 benchmark folders (default: every folder of ../shared/tau2015).
    #[arg(long, num_args = 1..)]
    tau: Vec<PathBuf>,
    /// Generated design sizes, comma separated (e.g. 100k,1m).
    #[arg(long, value_delimiter = ',')]
    gen: Vec<String>,
    /// Timing backend: cpu, gpu or auto.
    #[arg(long, default_value = "cpu")]
    pub(crate) device: String,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// Paths to find and report after timing (the paths and report phases; 0 skips them).
    #[arg(long, default_value_t = 1000)]
    pub(crate) paths: usize,
    /// Runs per design; the table shows medians.
    #[arg(long, default_value_t = 3)]
    pub(crate) runs: usize,
    /// Also write the results as JSON here.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Where generated designs are written (and reused between runs), and for
    /// `report`, the reports.
    #[arg(long, default_value = "target/bench")]
    pub(crate) work_dir: PathBuf,
    /// `report`: the formats to measure (tau, text, json).
    #[arg(long, value_delimiter = ',', default_value = "tau,text")]
    pub(crate) formats: Vec<String>,
    /// `report`: path counts for the memory curve (default: --paths divided by 1000,
    /// 100 and 10, and --paths itself, from 1000 up).
    #[arg(long, value_delimiter = ',')]
    pub(crate) counts: Vec<usize>,
    /// `report`: also sweep the writer's knobs (threads, workgroup, window) at --paths.
    #[arg(long)]
    pub(crate) sweep: bool,
    /// `incremental`: edit+query pairs per design.
    #[arg(long, default_value_t = 1000)]
    pub(crate) edits: usize,
    /// `incremental`: how updates after edits re-time (`incremental` or `full`).
    #[arg(long, default_value = "incremental")]
    pub(crate) retime: String,
    /// `incremental`: the seed of the edit sequence (designs are generated with seed 1).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// `incremental`: full updates timed after the pairs (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub(crate) full_updates: usize,
    /// `incremental`: write each design's sequence as a TAU 2015 design with its `.ops`
    /// under DIR/<design>-ops.
    #[arg(long, value_name = "DIR")]
    pub(crate) write_ops: Option<PathBuf>,
    /// `incremental`: also run the sequence's `.ops` through OpenTimer's `ot-tau15` (this
    /// binary) and `tachyon tau`, and report the ratio.
    #[arg(long, value_name = "OT_TAU15")]
    pub(crate) opentimer: Option<PathBuf>,
}

/// One design to run: a display name and its `.tau2015` file.
pub(crate) struct Design {
    pub(crate) name: String,
    pub(crate) tau2015: PathBuf,
}

pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    let binary = cli_binary::build_release()?;
    let designs = collect_designs(&args, &binary)?;
    match args.kind {
        BenchKind::Flow => bench_flow(&args, &binary, &designs),
        BenchKind::Parse => bench_parse(&args, &binary, &designs),
        BenchKind::Report => crate::bench_report::run(&args, &binary, &designs),
        BenchKind::Incremental => crate::bench_incremental::run(&args, &binary, &designs),
        BenchKind::Resident => crate::bench_resident::run(&args, &binary, &designs),
    }
}

fn collect_designs(args: &BenchArgs, binary: &Path) -> anyhow::Result<Vec<Design>> {
    let mut designs = Vec::new();
    let tau_folders =
        if args.tau.is_empty() && args.gen.is_empty() && args.kind != BenchKind::Incremental {
            default_tau_folders()
        } else {
            args.tau.clone()
        };
    for folder in tau_folders {
        let name = folder
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| folder.display().to_string());
        let tau2015 = folder.join(format!("{name}.tau2015"));
        if tau2015.is_file() {
            designs.push(Design { name, tau2015 });
        } else {
            eprintln!("bench: skipping {}: no {name}.tau2015", folder.display());
        }
    }
    for size in &args.gen {
        designs.push(generated_design(args, binary, size)?);
    }
    Ok(designs)
}

fn default_tau_folders() -> Vec<PathBuf> {
    tachyon_testkit::tau2015_benchmarks(&workspace_root().join("../shared"))
}

/// Generates (once) the design of `size` gates under the work folder.
fn generated_design(args: &BenchArgs, binary: &Path, size: &str) -> anyhow::Result<Design> {
    let name = format!("gen{size}");
    let folder = workspace_root().join(&args.work_dir).join(&name);
    let tau2015 = folder.join(format!("{name}.tau2015"));
    if !tau2015.is_file() {
        eprintln!("bench: generating {name} into {}", folder.display());
        let status = Command::new(binary)
            .args(["gen", "--gates", size, "--seed", "1", "--name", &name])
            .arg("--out")
            .arg(&folder)
            .status()
            .context("cannot run tachyon gen")?;
        anyhow::ensure!(status.success(), "tachyon gen --gates {size} failed");
    }
    Ok(Design { name, tau2015 })
}

fn thread_args(args: &BenchArgs) -> Vec<String> {
    args.threads
        .map(|threads| vec!["--threads".to_string(), threads.to_string()])
        .unwrap_or_default()
}

fn paths_args(args: &BenchArgs) -> Vec<String> {
    if args.paths == 0 {
        Vec::new()
    } else {
        vec!["--paths".to_string(), args.paths.to_string()]
    }
}

fn bench_flow(args: &BenchArgs, binary: &Path, designs: &[Design]) -> anyhow::Result<()> {
    let report_path =
        std::env::temp_dir().join(format!("tachyon-bench-{}.json", std::process::id()));
    let mut results = Vec::new();
    for design in designs {
        let mut runs = Vec::new();
        for _ in 0..args.runs.max(1) {
            let status = Command::new(binary)
                .args(thread_args(args))
                .arg("tau")
                .arg(&design.tau2015)
                .args([
                    "--skip-ops",
                    "--device",
                    &args.device,
                    "--output",
                    "/dev/null",
                ])
                .args(paths_args(args))
                .arg("--timings-json")
                .arg(&report_path)
                .status()
                .context("cannot run tachyon tau")?;
            anyhow::ensure!(status.success(), "tachyon tau {} failed", design.name);
            let text = std::fs::read_to_string(&report_path)?;
            runs.push(serde_json::from_str::<Value>(&text)?);
        }
        results.push((design.name.clone(), runs));
    }
    print_flow_table(&results);
    if let Some(json_path) = &args.json {
        let document = serde_json::json!({
            "kind": "flow",
            "device": args.device,
            "threads": args.threads,
            "designs": results.iter().map(|(name, runs)| serde_json::json!({"name": name, "runs": runs})).collect::<Vec<_>>(),
        });
        std::fs::write(json_path, serde_json::to_string_pretty(&document)?)?;
    }
    Ok(())
}

pub(crate) fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(values[values.len() / 2])
}

fn print_flow_table(results: &[(String, Vec<Value>)]) {
    print!("{:<12} {:>9}", "design", "pins");
    for (_, heading) in PHASES {
        print!(" {heading:>9}");
    }
    println!(
        " {:>9} {:>9} {:>7} {:>10}",
        "total", "peak MB", "sys s", "WNS late"
    );
    for (name, runs) in results {
        let last = runs.last().cloned().unwrap_or(Value::Null);
        print!("{name:<12} {:>9}", last["pins"].as_u64().unwrap_or(0));
        for (phase, _) in PHASES {
            let seconds: Vec<f64> = runs
                .iter()
                .filter_map(|run| run["phases"][phase].as_f64())
                .collect();
            match median(seconds) {
                Some(value) => print!(" {:>8.1}m", value * 1e3),
                None => print!(" {:>9}", "-"),
            }
        }
        let totals: Vec<f64> = runs
            .iter()
            .map(|run| {
                PHASES
                    .iter()
                    .filter_map(|(phase, _)| run["phases"][*phase].as_f64())
                    .sum()
            })
            .collect();
        let peak = runs
            .iter()
            .filter_map(|run| run["peak_rss_bytes"].as_u64())
            .max()
            .unwrap_or(0);
        let system: Vec<f64> = runs
            .iter()
            .filter_map(|run| run["cpu_system_seconds"].as_f64())
            .collect();
        println!(
            " {:>8.1}m {:>9.0} {:>7.2} {:>10.3}",
            median(totals).unwrap_or(0.0) * 1e3,
            peak as f64 / 1e6,
            median(system).unwrap_or(f64::NAN),
            last["wns_late"].as_f64().unwrap_or(f64::NAN)
        );
    }
    println!("(times are medians in ms; '-' = phase not run on this backend or not built yet)");
    println!(
        "(sys s: the median system CPU time of a whole run, parsing included: mostly page \
         faults on fresh memory, which swing between runs on a VM that returns freed memory \
         to its host)"
    );
    for (name, runs) in results {
        if let Some(histogram) = runs.last().and_then(|run| run.get("slack_histogram")) {
            print_histogram(name, histogram);
        }
    }
}

fn print_histogram(name: &str, histogram: &Value) {
    let (Some(edges), Some(counts)) = (
        histogram["edges"].as_array(),
        histogram["counts"].as_array(),
    ) else {
        return;
    };
    let largest = counts
        .iter()
        .filter_map(Value::as_u64)
        .max()
        .unwrap_or(1)
        .max(1);
    println!("\nlate endpoint slack histogram of {name} (ps):");
    for (index, count) in counts.iter().enumerate() {
        let count = count.as_u64().unwrap_or(0);
        let low = edges.get(index).and_then(Value::as_f64).unwrap_or(f64::NAN);
        let high = edges
            .get(index + 1)
            .and_then(Value::as_f64)
            .unwrap_or(f64::NAN);
        let bar = "#".repeat(((count * 50) / largest) as usize);
        println!("{low:>10.1} .. {high:>10.1} {count:>8} {bar}");
    }
}

/// Parser throughput: every input file of each design through `tachyon parse --json`.
fn bench_parse(args: &BenchArgs, binary: &Path, designs: &[Design]) -> anyhow::Result<()> {
    let report_path =
        std::env::temp_dir().join(format!("tachyon-parse-{}.json", std::process::id()));
    let mut rows = Vec::new();
    for design in designs {
        let folder = design
            .tau2015
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut files = vec![design.tau2015.clone()];
        if let Ok(line) = std::fs::read_to_string(&design.tau2015) {
            files.extend(line.split_whitespace().map(|name| folder.join(name)));
        }
        for file in files.iter().skip(1) {
            let mut seconds = Vec::new();
            let mut kind = String::new();
            let mut bytes = 0;
            for _ in 0..args.runs.max(1) {
                let status = Command::new(binary)
                    .args(thread_args(args))
                    .args(["parse", "--quiet", "--json"])
                    .arg(&report_path)
                    .arg(file)
                    .status()
                    .context("cannot run tachyon parse")?;
                anyhow::ensure!(status.success(), "tachyon parse {} failed", file.display());
                let report: Value = serde_json::from_str(&std::fs::read_to_string(&report_path)?)?;
                let entry = &report["files"][0];
                kind = entry["kind"].as_str().unwrap_or("?").to_string();
                bytes = entry["bytes"].as_u64().unwrap_or(0);
                seconds.push(entry["seconds"].as_f64().unwrap_or(f64::NAN));
            }
            let median_seconds = median(seconds).unwrap_or(f64::NAN);
            rows.push(serde_json::json!({
                "design": design.name,
                "file": file.file_name().map(|name| name.to_string_lossy().into_owned()),
                "kind": kind,
                "bytes": bytes,
                "seconds": median_seconds,
                "mb_per_s": bytes as f64 / 1e6 / median_seconds,
            }));
        }
    }
    println!(
        "{:<12} {:<26} {:<8} {:>10} {:>10} {:>9}",
        "design", "file", "format", "MB", "ms", "MB/s"
    );
    for row in &rows {
        println!(
            "{:<12} {:<26} {:<8} {:>10.2} {:>10.2} {:>9.1}",
            row["design"].as_str().unwrap_or(""),
            row["file"].as_str().unwrap_or(""),
            row["kind"].as_str().unwrap_or(""),
            row["bytes"].as_f64().unwrap_or(0.0) / 1e6,
            row["seconds"].as_f64().unwrap_or(f64::NAN) * 1e3,
            row["mb_per_s"].as_f64().unwrap_or(f64::NAN),
        );
    }
    if let Some(json_path) = &args.json {
        let document = serde_json::json!({"kind": "parse", "threads": args.threads, "files": rows});
        std::fs::write(json_path, serde_json::to_string_pretty(&document)?)?;
    }
    Ok(())
}
