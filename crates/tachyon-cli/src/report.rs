//! `tachyon report`: times a design (a `.tau2015`, or the files one by one) and writes
//! its timing summary (WNS, TNS and failing endpoints per split, the worst endpoints)
//! and its K worst paths, as a human report, JSON Lines or the TAU format, optionally
//! with an SVG histogram of the endpoint slacks. The shell's `report_timing` and
//! `report_checks` write through the same code ([`shell_command`]).

use anyhow::{bail, Context};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tachyon::report::{Fields, Format, ReportedPath, TextStyle, WriterOptions, WriterStats};
use tachyon::{DesignInput, PathSelection, Split, Timer, TimingGroupPolicy};

use crate::peak_memory::{cpu_seconds, peak_resident_bytes, reset_peak_resident, resident_bytes};
use crate::progress::Progress;

/// Arguments of `tachyon report`.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// A `.tau2015` file: its libraries, netlist and parasitics, and the `.timing`
    /// beside it. Without it, give the files with --lib/--verilog/--spef/--sdc.
    design: Option<PathBuf>,
    /// A Liberty library for both splits.
    #[arg(long)]
    lib: Option<PathBuf>,
    /// The early (hold, min) Liberty library.
    #[arg(long)]
    early_lib: Option<PathBuf>,
    /// The late (setup, max) Liberty library.
    #[arg(long)]
    late_lib: Option<PathBuf>,
    /// The gate-level netlist.
    #[arg(long)]
    verilog: Option<PathBuf>,
    /// Parasitics (several: read in order, later nets replace earlier ones).
    #[arg(long)]
    spef: Vec<PathBuf>,
    /// SDC assertions.
    #[arg(long)]
    sdc: Option<PathBuf>,
    /// TAU 2015 `.timing` assertions (read after the `.tau2015`'s own).
    #[arg(long)]
    timing: Option<PathBuf>,
    /// How many worst paths to write (0: the summary only).
    #[arg(long, value_name = "K", default_value_t = 5)]
    paths: usize,
    /// At most N paths per endpoint (and split).
    #[arg(long, value_name = "N")]
    per_endpoint: Option<usize>,
    /// Only paths of this split (default: both).
    #[arg(long, value_enum)]
    split: Option<SplitChoice>,
    /// Only paths of negative slack.
    #[arg(long)]
    violating: bool,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatChoice,
    /// Write the report here instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Also draw the endpoint slack histogram of both splits as SVG here.
    #[arg(long, value_name = "FILE.svg")]
    histogram: Option<PathBuf>,
    /// Worst endpoints listed in the summary.
    #[arg(long, value_name = "N", default_value_t = 10)]
    worst_endpoints: usize,
    /// Turn common path pessimism removal off.
    #[arg(long)]
    no_cppr: bool,
    /// Which Liberty timing() groups become arcs (as for `tachyon tau`).
    #[arg(long, value_enum, default_value = "all")]
    timing_groups: crate::tau::TimingGroups,
    /// Threads of the report writer in all: one writes, the others format paths; 1
    /// formats and writes on one thread (default: --threads, or every core).
    #[arg(long, value_name = "N")]
    writer_threads: Option<usize>,
    /// Paths a writer thread formats at a time.
    #[arg(long, value_name = "PATHS", default_value_t = WriterOptions::DEFAULT_WORKGROUP)]
    workgroup: usize,
    /// How many paths the formatting threads may run ahead of the writing one (0:
    /// eight workgroups per formatting thread).
    #[arg(long, value_name = "PATHS", default_value_t = 0)]
    window: usize,
    /// Write per-phase times, the writer's figures and peak memory as JSON here.
    #[arg(long)]
    timings_json: Option<PathBuf>,
    /// For benchmarks (`cargo xtask bench report`): write the report once per
    /// `THREADS:WORKGROUP[:WINDOW]` given (each write replaces the last), with the
    /// figures of each in --timings-json.
    #[arg(
        long,
        hide = true,
        value_delimiter = ',',
        value_name = "THREADS:WORKGROUP"
    )]
    writer_sweep: Vec<String>,
}

/// One write of the report and what it cost.
struct WriteFigures {
    stats: WriterStats,
    /// The most memory the process held while writing, over what it held before.
    extra_resident_bytes: Option<u64>,
}

/// `--split` values.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SplitChoice {
    /// Hold, min.
    Early,
    /// Setup, max.
    Late,
}

impl From<SplitChoice> for Split {
    fn from(choice: SplitChoice) -> Split {
        match choice {
            SplitChoice::Early => Split::Early,
            SplitChoice::Late => Split::Late,
        }
    }
}

/// `--format` values.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatChoice {
    /// A human report in the style of OpenSTA's report_checks.
    Text,
    /// JSON Lines: a summary line, then one line per path.
    Json,
    /// The TAU 2015 report_worst_paths format.
    Tau,
}

impl From<FormatChoice> for Format {
    fn from(choice: FormatChoice) -> Format {
        match choice {
            FormatChoice::Text => Format::Text,
            FormatChoice::Json => Format::Json,
            FormatChoice::Tau => Format::Tau,
        }
    }
}

/// The input files the arguments name, in reading order.
fn inputs(args: &ReportArgs) -> anyhow::Result<Vec<DesignInput>> {
    let mut inputs = match &args.design {
        Some(design) => Timer::tau2015_inputs(design)
            .with_context(|| format!("reading {}", design.display()))?,
        None => Vec::new(),
    };
    if let Some(lib) = &args.lib {
        inputs.push(DesignInput::Liberty(None, lib.clone()));
    }
    if let Some(lib) = &args.early_lib {
        inputs.push(DesignInput::Liberty(Some(Split::Early), lib.clone()));
    }
    if let Some(lib) = &args.late_lib {
        inputs.push(DesignInput::Liberty(Some(Split::Late), lib.clone()));
    }
    inputs.extend(args.verilog.iter().cloned().map(DesignInput::Verilog));
    inputs.extend(args.spef.iter().cloned().map(DesignInput::Spef));
    inputs.extend(args.timing.iter().cloned().map(DesignInput::Timing));
    inputs.extend(args.sdc.iter().cloned().map(DesignInput::Sdc));
    if inputs.is_empty() {
        bail!("no design: give a .tau2015 file, or --lib, --verilog (and --spef, --sdc)");
    }
    Ok(inputs)
}

/// Reads `inputs` in order (the SPEF read and parsed meanwhile: `Timer::read_inputs`),
/// each with a spinner.
pub fn load(timer: &mut Timer, inputs: &[DesignInput], progress: Progress) -> anyhow::Result<()> {
    let mut phase = None;
    timer.read_inputs(inputs, |input| {
        phase = None;
        phase = Some(progress.phase(format!("reading {}", input.path().display())));
    })?;
    Ok(())
}

/// Runs `load` (reading the design into `timer`) while the backend that `backend` and
/// `device` ask for is opened on another thread (creating a GPU context takes a few
/// hundred ms), then gives the timer that backend. The errors are those of opening the
/// backend first: its error, else `load`'s.
pub fn load_while_opening(
    timer: &mut Timer,
    backend: &crate::BackendArgs,
    device: Option<tachyon::Device>,
    load: impl FnOnce(&mut Timer) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let (opened, loaded) = std::thread::scope(|scope| {
        let opening = scope.spawn(|| backend.select(device));
        let loaded = load(timer);
        let opened = opening
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (opened, loaded)
    });
    timer.set_backend(opened?);
    loaded
}

/// Times the design, with a spinner.
pub fn update_timing(timer: &mut Timer, progress: Progress) -> anyhow::Result<()> {
    let _phase = progress.phase("timing: linking, levelizing, rc, arrivals, required times, cppr");
    timer.update_timing()?;
    Ok(())
}

pub fn run(
    args: ReportArgs,
    backend: &crate::BackendArgs,
    progress: Progress,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut timer = Timer::new();
    timer.set_cppr(!args.no_cppr);
    timer.set_timing_group_policy(match args.timing_groups {
        crate::tau::TimingGroups::All => TimingGroupPolicy::KeepAll,
        crate::tau::TimingGroups::LastPerRelatedPin => TimingGroupPolicy::LastPerRelatedPin,
    });
    load_while_opening(&mut timer, backend, None, |timer| {
        load(timer, &inputs(&args)?, progress)
    })?;
    if args.format == FormatChoice::Tau && timer.uses_sdc() {
        // Said before the design is timed rather than after.
        bail!("{}", tachyon::report::TAU_FORMAT_NEEDS_TAU_PATHS);
    }
    update_timing(&mut timer, progress)?;
    let summary = timer.report_summary(args.worst_endpoints)?;

    let search_started = Instant::now();
    let selection = PathSelection {
        paths: args.paths,
        per_endpoint: args.per_endpoint,
        split: args.split.map(Split::from),
        only_negative: args.violating,
        per_group: false,
    };
    let selected = {
        let _phase = progress.phase(format!("finding the {} worst paths", args.paths));
        timer.select_paths(&selection)?
    };
    let search_seconds = search_started.elapsed().as_secs_f64();
    for note in &selected.notes {
        errln!("note: {note}");
    }
    if !selected.complete {
        errln!(
            "warning: --per-endpoint {}: the {} worst paths hold only {} within the limit; \
             reporting those (the exact beginning of the list)",
            args.per_endpoint.unwrap_or(0),
            selected.searched,
            selected.paths.len()
        );
    }

    let mut options = WriterOptions::with_threads(
        args.writer_threads
            .unwrap_or_else(rayon::current_num_threads),
    );
    options.workgroup = args.workgroup;
    options.window = args.window;
    let writes = if args.writer_sweep.is_empty() {
        vec![options]
    } else {
        args.writer_sweep
            .iter()
            .map(|text| parse_writer_options(text))
            .collect::<anyhow::Result<Vec<_>>>()?
    };
    // The peak so far: the writes below start it afresh to measure themselves.
    let peak_before_writes = peak_resident_bytes();
    let mut figures = Vec::new();
    for options in &writes {
        // A benchmark's writes each start from a fresh file, as `dd` does: truncating
        // the last one's gigabytes would fall on the next write.
        if let (false, Some(path)) = (args.writer_sweep.is_empty(), &args.output) {
            let _ = std::fs::remove_file(path);
        }
        let extra_before = resident_bytes().filter(|_| reset_peak_resident());
        let stats = write_report(
            &mut timer,
            &args,
            &summary,
            &selected.paths,
            options,
            progress,
        )?;
        figures.push(WriteFigures {
            stats,
            extra_resident_bytes: extra_before
                .zip(peak_resident_bytes())
                .map(|(before, peak)| peak.saturating_sub(before)),
        });
    }
    if let Some(path) = &args.histogram {
        let title = args
            .design
            .as_deref()
            .or(args.verilog.as_deref())
            .and_then(Path::file_stem)
            .map_or_else(
                || "endpoint slack".to_string(),
                |name| format!("{}: endpoint slack", name.to_string_lossy()),
            );
        let svg = tachyon::report::histogram::histogram_svg(&summary, &title)?;
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.timings_json {
        let peak = peak_before_writes.max(peak_resident_bytes());
        write_timings_json(&timer, path, &figures, search_seconds, peak, started)?;
    }
    // As in `tachyon tau`: the process ends here and the system takes the memory back
    // at once, faster than freeing a large design piece by piece.
    std::mem::forget(timer);
    Ok(())
}

/// `THREADS:WORKGROUP[:WINDOW]`.
fn parse_writer_options(text: &str) -> anyhow::Result<WriterOptions> {
    let numbers: Vec<usize> = text
        .split(':')
        .map(|number| number.parse::<usize>())
        .collect::<Result<_, _>>()
        .with_context(|| {
            format!("--writer-sweep: expected THREADS:WORKGROUP[:WINDOW], found \"{text}\"")
        })?;
    match numbers[..] {
        [threads, workgroup] => Ok(WriterOptions {
            threads,
            workgroup,
            window: 0,
        }),
        [threads, workgroup, window] => Ok(WriterOptions {
            threads,
            workgroup,
            window,
        }),
        _ => bail!("--writer-sweep: expected THREADS:WORKGROUP[:WINDOW], found \"{text}\""),
    }
}

/// Writes the summary and the paths to the output, through the ordered writer split as
/// `options` says.
fn write_report(
    timer: &mut Timer,
    args: &ReportArgs,
    summary: &tachyon::report::Summary,
    paths: &[ReportedPath],
    options: &WriterOptions,
    progress: Progress,
) -> anyhow::Result<WriterStats> {
    let format = Format::from(args.format);
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    tachyon::report::write_summary(&mut out, summary, format, paths.len())?;
    let bar = progress
        .beside_output(args.output.is_some())
        .bar(paths.len() as u64, "writing paths");
    let on_progress = |written: usize| bar.set_position(written as u64);
    let stats = timer.write_paths(
        &mut out,
        paths,
        format,
        &TextStyle::default(),
        options,
        Some(&on_progress),
    )?;
    out.flush()?;
    Ok(stats)
}

fn write_timings_json(
    timer: &Timer,
    path: &Path,
    figures: &[WriteFigures],
    search_seconds: f64,
    peak_resident: Option<u64>,
    started: Instant,
) -> anyhow::Result<()> {
    let phases: serde_json::Map<String, serde_json::Value> = timer
        .phase_timings()
        .iter()
        .map(|phase| (phase.phase.to_string(), phase.duration.as_secs_f64().into()))
        .collect();
    let writes: Vec<serde_json::Value> = figures
        .iter()
        .map(|figures| {
            let stats = &figures.stats;
            serde_json::json!({
                "threads": stats.threads,
                "workgroup": stats.workgroup,
                "window": stats.window,
                "paths": stats.items,
                "bytes": stats.bytes,
                "collect_seconds": stats.collect_seconds,
                "write_seconds": stats.write_seconds,
                "wait_seconds": stats.wait_seconds,
                "wall_seconds": stats.wall_seconds,
                "peak_buffered_bytes": stats.peak_buffered_bytes,
                "extra_resident_bytes": figures.extra_resident_bytes,
            })
        })
        .collect();
    let last = figures
        .last()
        .map(|figures| figures.stats)
        .unwrap_or_default();
    let document = serde_json::json!({
        "phases": phases,
        "search_seconds": search_seconds,
        "paths": last.items,
        "bytes": last.bytes,
        "writer": writes.last(),
        "writes": writes,
        "seconds": started.elapsed().as_secs_f64(),
        "peak_rss_bytes": peak_resident,
        "cpu_user_seconds": cpu_seconds().map(|(user, _)| user),
        "cpu_system_seconds": cpu_seconds().map(|(_, system)| system),
    });
    std::fs::write(path, serde_json::to_string_pretty(&document)?)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The shell's `report_timing [-num_paths K] [-early|-late]` and `report_checks
/// [-path_delay min|max|min_max] [-group_count|-group_path_count N]
/// [-endpoint_count|-endpoint_path_count N] [-format
/// full|full_clock|full_clock_expanded|json|tau] [-fields {slew cap input_pins fanout}]
/// [-digits N] [-sort_by_slack|-sort_by slack|group]`, their arguments checked by the
/// shell (`crate::shell::Syntax`): the paths through the same writer and formats as
/// `tachyon report`, text printed as `style` says unless the options say otherwise.
/// `report_checks` lists up to N paths per path group (one per endpoint unless
/// `-endpoint_count`), min paths before max paths, as OpenSTA does; options that
/// OpenSTA has and Tachyon does not (`-unique_paths_to_endpoint`, `-unconstrained`,
/// other formats and fields) are errors that say so (the shell puts the command's name
/// and line before them). Notes about the list go to standard error.
pub fn shell_command(
    timer: &mut Timer,
    command: &str,
    arguments: &crate::shell::Arguments,
    out: &mut dyn Write,
    style: TextStyle,
) -> anyhow::Result<()> {
    let mut style = style;
    let mut selections: Vec<PathSelection> = Vec::new();
    let mut format = Format::Text;
    let mut sort_by_slack = false;
    if command == "report_timing" {
        let mut selection = PathSelection::worst(arguments.count("-num_paths")?.unwrap_or(1));
        selection.split = arguments.split();
        selections.push(selection);
    } else {
        for unsupported in ["-unique_paths_to_endpoint", "-unconstrained"] {
            if arguments.has(unsupported) {
                bail!("{unsupported} is not supported");
            }
        }
        sort_by_slack = match (arguments.has("-sort_by_slack"), arguments.value("-sort_by")) {
            (true, Some("group")) => {
                bail!("-sort_by_slack and -sort_by group contradict each other")
            }
            (_, Some("slack")) | (true, None) => true,
            (false, Some("group") | None) => false,
            (_, Some(value)) => bail!("expected group or slack after -sort_by, found \"{value}\""),
        };
        let splits = match arguments.value("-path_delay").unwrap_or("max") {
            "max" => vec![Split::Late],
            "min" => vec![Split::Early],
            "min_max" => vec![Split::Early, Split::Late],
            value => bail!(
                "expected min, max or min_max after -path_delay, found \"{value}\" (max_rise, min_fall and the like are not supported)"
            ),
        };
        let paths = match arguments.value("-group_count") {
            Some(_) => arguments.count("-group_count")?,
            None => arguments.count("-group_path_count")?,
        };
        let per_endpoint = match arguments.value("-endpoint_count") {
            Some(_) => arguments.count("-endpoint_count")?,
            None => arguments.count("-endpoint_path_count")?,
        };
        let selection = PathSelection {
            per_endpoint: Some(per_endpoint.unwrap_or(1)),
            per_group: true,
            ..PathSelection::worst(paths.unwrap_or(1))
        };
        if let Some(value) = arguments.value("-format") {
            (format, style.clock_paths) = match value {
                "full" => (Format::Text, false),
                "full_clock" | "full_clock_expanded" => (Format::Text, true),
                "json" => (Format::Json, style.clock_paths),
                "tau" => (Format::Tau, style.clock_paths),
                _ => bail!(
                    "expected full, full_clock, full_clock_expanded, json or tau after -format, found \"{value}\" (OpenSTA's end, summary, slack_only and shorter formats are not supported)"
                ),
            };
        }
        if let Some(value) = arguments.value("-fields") {
            style.fields = fields(value)?;
        }
        if let Some(value) = arguments.value("-digits") {
            style.digits = value
                .parse::<usize>()
                .ok()
                .filter(|digits| *digits <= 12)
                .with_context(|| {
                    format!(
                        "expected a number of digits (0 to 12) after -digits, found \"{value}\""
                    )
                })?;
        }
        selections.extend(splits.into_iter().map(|split| PathSelection {
            split: Some(split),
            ..selection
        }));
    }
    let mut paths = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for selection in selections {
        let selected = timer.select_paths(&selection)?;
        for note in selected.notes {
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        paths.extend(selected.paths);
    }
    for note in &notes {
        errln!("note: {note}");
    }
    if sort_by_slack {
        paths.sort_by(|a, b| a.slack().total_cmp(&b.slack()));
    }
    if paths.is_empty() && format == Format::Text {
        writeln!(out, "No paths found.")?;
        return Ok(());
    }
    timer.write_paths(
        out,
        &paths,
        format,
        &style,
        &tachyon::default_writer_options(),
        None,
    )?;
    Ok(())
}

/// `-fields {...}`: OpenSTA's field names (or their beginnings, as OpenSTA matches
/// them).
fn fields(list: &str) -> anyhow::Result<Fields> {
    let mut fields = Fields::NONE;
    for field in list
        .split(|c: char| c.is_whitespace() || c == '{' || c == '}')
        .filter(|field| !field.is_empty())
    {
        if field.starts_with("cap") {
            fields.capacitance = true;
        } else if field.starts_with("slew") {
            fields.slew = true;
        } else if field.starts_with("fanout") {
            fields.fanout = true;
        } else if field.starts_with("input") {
            fields.input_pins = true;
        } else {
            bail!(
                "the field \"{field}\" is not supported (Tachyon's report_checks has slew, cap, input_pins and fanout)"
            );
        }
    }
    Ok(fields)
}
