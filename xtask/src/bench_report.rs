//! `cargo xtask bench report`: the report writer on generated (or TAU) designs.
//!
//! Per design and format, one `tachyon report` process per path count times the
//! design, finds the paths once and writes the report several times (its hidden
//! `--writer-sweep`): single-threaded and pipelined alternately, `--runs` of each. Each
//! write reports its collect time (D: gathering and formatting, summed over the
//! threads that format), its write time (F: the writing thread in `write` calls), its
//! wall time, the writer's peak of formatted-but-unwritten bytes and the process's
//! peak memory over what it held before the write. Then `dd` writes the same byte
//! count to the same place (the disk's own speed; neither syncs, both go through the
//! page cache). With `--sweep`, the writer's knobs (threads, workgroup, window) are
//! swept at the largest path count.

use crate::bench::{median, BenchArgs, Design};
use anyhow::Context;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The default workgroup, as `tachyon report` has it.
const WORKGROUP: usize = 32;

/// One write's figures, from the binary's `--timings-json`.
#[derive(Clone)]
struct Write {
    threads: usize,
    workgroup: usize,
    window: usize,
    bytes: u64,
    collect: f64,
    write: f64,
    wait: f64,
    wall: f64,
    peak_buffered: u64,
    extra_resident: Option<u64>,
    /// Process time outside the writes (load, timing, path search, summary).
    before: f64,
    /// The process's peak resident memory before the writes.
    process_peak: u64,
}

impl Write {
    fn end_to_end(&self) -> f64 {
        self.before + self.wall
    }

    fn megabytes_per_second(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.wall
    }
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

pub fn run(args: &BenchArgs, binary: &Path, designs: &[Design]) -> anyhow::Result<()> {
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |threads| threads.get()));
    let work_dir = crate::cli_binary::workspace_root().join(&args.work_dir);
    std::fs::create_dir_all(&work_dir)?;
    let mut document = Vec::new();
    for design in designs {
        for format in &args.formats {
            let results = bench_format(args, binary, design, format, threads, &work_dir)?;
            document.push(serde_json::json!({
                "design": design.name,
                "format": format,
                "threads": threads,
                "results": results,
            }));
        }
    }
    if let Some(json_path) = &args.json {
        let document = serde_json::json!({"kind": "report", "runs": document});
        std::fs::write(json_path, serde_json::to_string_pretty(&document)?)?;
    }
    Ok(())
}

/// The path counts of the memory curve.
fn counts(args: &BenchArgs) -> Vec<usize> {
    if !args.counts.is_empty() {
        return args.counts.clone();
    }
    let mut counts: Vec<usize> = [1000, 100, 10, 1]
        .iter()
        .map(|divisor| args.paths / divisor)
        .filter(|&count| count >= 1000 || count == args.paths)
        .collect();
    counts.dedup();
    counts
}

fn bench_format(
    args: &BenchArgs,
    binary: &Path,
    design: &Design,
    format: &str,
    threads: usize,
    work_dir: &Path,
) -> anyhow::Result<Value> {
    let output = work_dir.join(format!("report-{}.{format}", design.name));
    let runs = args.runs.max(1);
    // Pipelined first, then single-threaded, alternately.
    let mut configs = Vec::new();
    for _ in 0..runs {
        configs.push(format!("{threads}:{WORKGROUP}"));
        configs.push(format!("1:{WORKGROUP}"));
    }
    let mut rows = Vec::new();
    for count in counts(args) {
        let writes = run_writes(args, binary, design, format, count, &configs, &output)?;
        let bytes = writes.first().map_or(0, |write| write.bytes);
        let disk = disk_seconds(&output, bytes, runs)?;
        rows.push((count, writes, bytes, disk));
    }
    print_main_table(design, format, threads, &rows);
    let mut sweep = Vec::new();
    if args.sweep {
        let largest = rows.iter().map(|row| row.0).max().unwrap_or(args.paths);
        let configs = sweep_configs(threads);
        sweep = run_writes(args, binary, design, format, largest, &configs, &output)?;
        print_sweep_table(design, format, largest, &sweep);
    }
    let _ = std::fs::remove_file(&output);
    let as_json = |write: &Write| {
        serde_json::json!({
            "threads": write.threads, "workgroup": write.workgroup, "window": write.window,
            "bytes": write.bytes, "collect_seconds": write.collect, "write_seconds": write.write,
            "wait_seconds": write.wait, "wall_seconds": write.wall,
            "end_to_end_seconds": write.end_to_end(),
            "peak_buffered_bytes": write.peak_buffered,
            "extra_resident_bytes": write.extra_resident,
            "process_peak_bytes": write.process_peak,
        })
    };
    Ok(serde_json::json!({
        "counts": rows.iter().map(|(count, writes, bytes, disk)| serde_json::json!({
            "paths": count, "bytes": bytes, "dd_seconds": disk,
            "writes": writes.iter().map(as_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "sweep": sweep.iter().map(as_json).collect::<Vec<_>>(),
    }))
}

/// The knobs swept: the thread split (writer threads in all, one of them writing),
/// the workgroup, and the window.
fn sweep_configs(threads: usize) -> Vec<String> {
    let mut configs = vec![format!("1:{WORKGROUP}")];
    let mut thread_counts = vec![2, threads / 2, threads, threads * 2];
    thread_counts.retain(|&count| count >= 2);
    thread_counts.dedup();
    for count in thread_counts {
        configs.push(format!("{count}:{WORKGROUP}"));
    }
    for workgroup in [1, 8, 128, 512] {
        configs.push(format!("{threads}:{workgroup}"));
    }
    let collectors = threads.saturating_sub(1).max(1);
    // The smallest window (one workgroup per collector) and a large one.
    configs.push(format!("{threads}:{WORKGROUP}:{}", collectors * WORKGROUP));
    configs.push(format!(
        "{threads}:{WORKGROUP}:{}",
        64 * collectors * WORKGROUP
    ));
    configs
}

/// One `tachyon report` process writing the report once per config.
fn run_writes(
    args: &BenchArgs,
    binary: &Path,
    design: &Design,
    format: &str,
    count: usize,
    configs: &[String],
    output: &Path,
) -> anyhow::Result<Vec<Write>> {
    let timings = output.with_extension("timings.json");
    let started = Instant::now();
    let mut command = Command::new(binary);
    if let Some(threads) = args.threads {
        command.args(["--threads", &threads.to_string()]);
    }
    let status = command
        .args(["--quiet", "report"])
        .arg(&design.tau2015)
        .args(["--device", &args.device])
        .args(["--paths", &count.to_string(), "--format", format, "-o"])
        .arg(output)
        .arg("--timings-json")
        .arg(&timings)
        .arg("--writer-sweep")
        .arg(configs.join(","))
        .status()
        .context("cannot run tachyon report")?;
    anyhow::ensure!(status.success(), "tachyon report {} failed", design.name);
    eprintln!(
        "bench: {} {format} {count} paths: {} writes in {:.1} s",
        design.name,
        configs.len(),
        started.elapsed().as_secs_f64()
    );
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&timings)?)?;
    let _ = std::fs::remove_file(&timings);
    let writes = document["writes"].as_array().cloned().unwrap_or_default();
    let walls: f64 = writes
        .iter()
        .filter_map(|write| write["wall_seconds"].as_f64())
        .sum();
    let before = document["seconds"].as_f64().unwrap_or(f64::NAN) - walls;
    let process_peak = document["peak_rss_bytes"].as_u64().unwrap_or(0);
    Ok(writes
        .iter()
        .map(|write| Write {
            threads: write["threads"].as_u64().unwrap_or(0) as usize,
            workgroup: write["workgroup"].as_u64().unwrap_or(0) as usize,
            window: write["window"].as_u64().unwrap_or(0) as usize,
            bytes: write["bytes"].as_u64().unwrap_or(0),
            collect: write["collect_seconds"].as_f64().unwrap_or(f64::NAN),
            write: write["write_seconds"].as_f64().unwrap_or(f64::NAN),
            wait: write["wait_seconds"].as_f64().unwrap_or(f64::NAN),
            wall: write["wall_seconds"].as_f64().unwrap_or(f64::NAN),
            peak_buffered: write["peak_buffered_bytes"].as_u64().unwrap_or(0),
            extra_resident: write["extra_resident_bytes"].as_u64(),
            before,
            process_peak,
        })
        .collect())
}

/// The median time `dd` takes to write `bytes` (rounded up to MiB) to `output`, fresh
/// each time, through the page cache as the report does.
fn disk_seconds(output: &Path, bytes: u64, runs: usize) -> anyhow::Result<f64> {
    let mebibytes = bytes.div_ceil(1 << 20).max(1);
    let mut seconds = Vec::new();
    for _ in 0..runs {
        let _ = std::fs::remove_file(output);
        let started = Instant::now();
        let status = Command::new("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", output.display()))
            .args(["bs=1M", &format!("count={mebibytes}"), "status=none"])
            .status()
            .context("cannot run dd")?;
        anyhow::ensure!(status.success(), "dd failed");
        // dd wrote whole MiB: its time scaled to the report's byte count.
        seconds.push(started.elapsed().as_secs_f64() * bytes as f64 / (mebibytes << 20) as f64);
    }
    Ok(median(seconds).unwrap_or(f64::NAN))
}

/// The medians of the writes of `threads` threads.
fn medians(writes: &[Write], threads: usize) -> Option<Write> {
    let chosen: Vec<&Write> = writes
        .iter()
        .filter(|write| (write.threads == 1) == (threads == 1))
        .collect();
    let first = (*chosen.first()?).clone();
    let of = |value: fn(&Write) -> f64| median(chosen.iter().map(|write| value(write)).collect());
    Some(Write {
        collect: of(|write| write.collect)?,
        write: of(|write| write.write)?,
        wait: of(|write| write.wait)?,
        wall: of(|write| write.wall)?,
        peak_buffered: chosen.iter().map(|write| write.peak_buffered).max()?,
        extra_resident: chosen.iter().filter_map(|write| write.extra_resident).max(),
        ..first
    })
}

type Row = (usize, Vec<Write>, u64, f64);

fn print_main_table(design: &Design, format: &str, threads: usize, rows: &[Row]) {
    println!(
        "\nreport writer on {}, format {format}, {threads} threads (medians; D = collect: \
         gathering and formatting, summed over the formatting threads; F = write: the \
         writing thread in write calls)",
        design.name
    );
    println!(
        "{:>9} {:>9} {:<9} {:>4} {:>9} {:>9} {:>9} {:>9} {:>8} {:>10} {:>8} {:>10} {:>10}",
        "paths",
        "MB",
        "writer",
        "thr",
        "D s",
        "F s",
        "wait s",
        "report s",
        "MB/s",
        "e2e s",
        "speedup",
        "buffer MB",
        "+RSS MB"
    );
    for (count, writes, bytes, disk) in rows {
        let single = medians(writes, 1);
        let pipelined = medians(writes, threads);
        for (name, write) in [("single", &single), ("pipelined", &pipelined)] {
            let Some(write) = write else { continue };
            let speedup = single
                .as_ref()
                .map_or(f64::NAN, |single| single.wall / write.wall);
            println!(
                "{count:>9} {:>9.1} {name:<9} {:>4} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>8.0} {:>10.3} {:>7.2}x {:>10.2} {:>10.1}",
                mb(*bytes),
                write.threads,
                write.collect,
                write.write,
                write.wait,
                write.wall,
                write.megabytes_per_second(),
                write.end_to_end(),
                speedup,
                mb(write.peak_buffered),
                write.extra_resident.map_or(f64::NAN, mb),
            );
        }
        let disk_rate = mb(*bytes) / disk;
        let ratio = pipelined
            .as_ref()
            .map_or(f64::NAN, |write| write.megabytes_per_second() / disk_rate);
        println!(
            "{count:>9} {:>9.1} {:<9} {:>4} {:>9} {:>9} {:>9} {:>9.3} {:>8.0}   pipelined at {:.0}% of the disk's speed; process peak {:.0} MB",
            mb(*bytes),
            "dd",
            "",
            "",
            "",
            "",
            disk,
            disk_rate,
            ratio * 100.0,
            writes.first().map_or(0.0, |write| mb(write.process_peak)),
        );
    }
    println!(
        "(buffer MB: the writer's peak of formatted, unwritten bytes; +RSS MB: the \
         process's peak memory during the write over what it held before; e2e s: the \
         process's time outside the writes (load, timing, path search) plus the write)"
    );
}

fn print_sweep_table(design: &Design, format: &str, count: usize, writes: &[Write]) {
    println!(
        "\nwriter knobs on {}, format {format}, {count} paths (one write each)",
        design.name
    );
    println!(
        "{:>7} {:>9} {:>8} {:>9} {:>8} {:>9} {:>9} {:>9} {:>10} {:>10}",
        "threads",
        "workgroup",
        "window",
        "report s",
        "MB/s",
        "D s",
        "F s",
        "wait s",
        "buffer MB",
        "+RSS MB"
    );
    for write in writes {
        println!(
            "{:>7} {:>9} {:>8} {:>9.3} {:>8.0} {:>9.3} {:>9.3} {:>9.3} {:>10.2} {:>10.1}",
            write.threads,
            write.workgroup,
            if write.threads == 1 {
                "-".to_string()
            } else {
                write.window.to_string()
            },
            write.wall,
            write.megabytes_per_second(),
            write.collect,
            write.write,
            write.wait,
            mb(write.peak_buffered),
            write.extra_resident.map_or(f64::NAN, mb),
        );
    }
}
