//! The `tachyon` command: timing reports, TAU 2015 flows, an interactive shell, the
//! parsers, the design generator and its cone-size measurement, and the incremental
//! timing benchmark (`bench-edits`).

/// `println!` that returns the write's error (a closed pipe) instead of panicking: the
/// caller hands it up, and `main` ends quietly on a closed output.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `print!` likewise.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `eprintln!` that never panics: a summary, a notice or an error for a stderr that is
/// closed (`tachyon gen ... 2>&1 | head -1`) is dropped, as there is no one to tell.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// `eprint!` likewise.
macro_rules! err_print {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr().lock(), $($arg)*);
    }};
}

mod bench_edits;
mod bench_full;
mod bench_resident;
mod cones;
mod gen;
mod parse;
mod paths;
mod peak_memory;
mod progress;
mod report;
mod shell;
mod tau;

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use tachyon::gpu::ending::Ending;

/// mimalloc instead of the system allocator: parsing a large SPEF makes tens of millions
/// of small allocations from every rayon thread, where glibc's per-thread arenas grow by
/// `mprotect` and realloc by copying (about a third of single-threaded SPEF parse time
/// went to the kernel and `memmove`). The library crates leave the choice to their users.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "tachyon",
    version,
    about = "Static timing analysis, on CPU and GPU"
)]
struct Cli {
    /// More log output (-v: info, -vv: debug, -vvv: trace). RUST_LOG overrides it.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Worker threads for the parallel phases (default: all cores; at most
    /// 4 per core, more only add contention).
    #[arg(long, global = true)]
    threads: Option<usize>,
    /// No progress bars (they are shown on standard error only when it is a terminal),
    /// and for `parse`, nothing on standard output.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(subcommand)]
    command: Command,
}

/// Where timing runs, for every command that times (`tau`, `shell`, `paths`).
#[derive(clap::Args, Clone)]
pub struct BackendArgs {
    /// Timing backend. `gpu` without a usable GPU is an error; `auto` takes the GPU for
    /// large designs and times on the CPU otherwise, or when no GPU is usable (one log
    /// line says so). Results are identical.
    #[arg(long, value_enum, default_value = "auto", global = true)]
    device: DeviceChoice,
    /// The most GPUs the GPU backend uses for the CPPR passes (default: all of them).
    #[arg(long, value_name = "N", global = true)]
    gpus: Option<usize>,
    /// The mixed strategy's threshold on the GPU backend: an incremental update whose
    /// frontier has at least N dirty pins and nets runs on the GPU over the design kept
    /// there, a smaller one on the CPU (0: always the GPU). Also
    /// `TACHYON_GPU_MIN_FRONTIER`; the default was measured (docs/PERFORMANCE.md).
    #[arg(long, value_name = "N", global = true)]
    gpu_min_frontier: Option<usize>,
}

impl BackendArgs {
    /// The backend these flags (and the `TACHYON_GPU_*` environment variables, and for
    /// measuring `TACHYON_CPPR_HOST_FACTOR=N`, `TACHYON_GPU_WHOLE_FRONTIER=N`, `TACHYON_RC_LAYOUT=host|device` and
    /// `TACHYON_RC_EDITS=host|device`) ask
    /// for, or `device` instead of `--device` when given.
    pub fn select(&self, device: Option<tachyon::Device>) -> anyhow::Result<tachyon::Backend> {
        let from_environment = match std::env::var("TACHYON_GPU_MIN_FRONTIER") {
            Ok(value) => Some(value.trim().parse::<usize>().map_err(|_| {
                anyhow::anyhow!("TACHYON_GPU_MIN_FRONTIER={value}: expected a count")
            })?),
            Err(_) => None,
        };
        let cppr_host_factor = match std::env::var("TACHYON_CPPR_HOST_FACTOR") {
            Ok(value) => Some(value.trim().parse::<usize>().map_err(|_| {
                anyhow::anyhow!("TACHYON_CPPR_HOST_FACTOR={value}: expected a count")
            })?),
            Err(_) => None,
        };
        let gpu_whole_frontier = match std::env::var("TACHYON_GPU_WHOLE_FRONTIER") {
            Ok(value) => Some(value.trim().parse::<usize>().map_err(|_| {
                anyhow::anyhow!("TACHYON_GPU_WHOLE_FRONTIER={value}: expected a count")
            })?),
            Err(_) => None,
        };
        let rc_layout_on_device = match std::env::var("TACHYON_RC_LAYOUT").as_deref() {
            Ok("device") => true,
            Ok("host") | Err(_) => false,
            Ok(other) => anyhow::bail!("TACHYON_RC_LAYOUT={other}: expected host or device"),
        };
        let rc_edits_on_device = match std::env::var("TACHYON_RC_EDITS").as_deref() {
            Ok("device") => true,
            Ok("host") | Err(_) => false,
            Ok(other) => anyhow::bail!("TACHYON_RC_EDITS={other}: expected host or device"),
        };
        let config = tachyon::BackendConfig {
            gpu_limit: self.gpus,
            gpu_min_frontier: self.gpu_min_frontier.or(from_environment),
            cppr_host_factor,
            gpu_whole_frontier,
            rc_layout_on_device,
            rc_edits_on_device,
            gpu: gpu_config_from_environment()?,
        };
        let device = device.unwrap_or(self.device.into());
        tachyon::Backend::select(device, &config)
            .map_err(|error| anyhow::anyhow!("--device {device}: {error}"))
    }
}

/// The GPU runtime's switches for measuring, from the environment (only the binary reads
/// it): `TACHYON_GPU_STAGING=count,MiB` sizes the pinned staging buffers,
/// `TACHYON_GPU_RELEASE_MEMORY` lets the driver take freed device memory back at each
/// synchronisation, `TACHYON_GPU_NO_GRAPHS` launches the level sweeps one by one instead
/// of replaying CUDA graphs, `TACHYON_GPU_SYNC_STEPS` runs an update's steps one after the
/// other, each waited for, so the debug log times each alone;
/// `TACHYON_GPU_MEMORY_LIMIT=bytes` counts at most that much device memory as free (to
/// try running out of it).
fn gpu_config_from_environment() -> anyhow::Result<tachyon::gpu::GpuConfig> {
    let set = |name: &str| std::env::var_os(name).is_some();
    let mut config = tachyon::gpu::GpuConfig {
        keep_freed_memory: !set("TACHYON_GPU_RELEASE_MEMORY"),
        use_graphs: !set("TACHYON_GPU_NO_GRAPHS"),
        sync_steps: set("TACHYON_GPU_SYNC_STEPS"),
        ..Default::default()
    };
    if let Ok(value) = std::env::var("TACHYON_GPU_MEMORY_LIMIT") {
        config.memory_limit = Some(value.trim().parse().map_err(|_| {
            anyhow::anyhow!("TACHYON_GPU_MEMORY_LIMIT={value}: expected a number of bytes")
        })?);
    }
    if let Ok(value) = std::env::var("TACHYON_GPU_STAGING") {
        let parsed = value
            .split_once(',')
            .and_then(|(count, mib)| Some((count.trim().parse().ok()?, mib.trim().parse().ok()?)));
        let Some((count, mib)) = parsed else {
            anyhow::bail!("TACHYON_GPU_STAGING={value}: expected count,MiB (e.g. 3,32)");
        };
        config = config
            .with_staging(count, mib)
            .map_err(|error| anyhow::anyhow!("TACHYON_GPU_STAGING={value}: {error}"))?;
    }
    Ok(config)
}

/// `TACHYON_MEMORY_LIMIT=size` (`1500000`, `512m`, `8g`): the memory limit the timer
/// checks its estimates against, in place of the system's (a malformed value is
/// ignored with a warning, as the limit only guards against running out).
fn set_memory_limit_from_environment() {
    let Ok(text) = std::env::var("TACHYON_MEMORY_LIMIT") else {
        return;
    };
    match tachyon::parse_memory_size(&text) {
        Some(bytes) => tachyon::set_memory_limit(Some((bytes, "TACHYON_MEMORY_LIMIT"))),
        None => tracing::warn!(
            value = %text,
            "TACHYON_MEMORY_LIMIT is not a size such as 8g; ignored"
        ),
    }
}

#[derive(Subcommand)]
enum Command {
    /// Time a design and report its summary and worst paths (text, JSON, TAU; SVG
    /// histogram).
    Report(Box<report::ReportArgs>),
    /// Parse files and print a summary of each (counts, time, MB/s).
    Parse(parse::ParseArgs),
    /// Run a TAU 2015 flow: load the design, run the .ops, print the answers.
    Tau(tau::TauArgs),
    /// Read OpenTimer-style commands from a script or standard input.
    Shell(shell::ShellArgs),
    /// Generate a TAU 2015 design (Verilog, SPEF, Liberty, assertions, ops).
    Gen(gen::GenArgs),
    /// Time a design, then find its k worst paths on the CPU or the GPU, with timings.
    Paths(paths::PathsArgs),
    /// Measure fan-in and fan-out cone sizes of a design (from its Liberty and Verilog).
    Cones(cones::ConesArgs),
    /// Measure incremental timing: load a design, then time a random mix of edits, each
    /// followed by a query, pair by pair, against full updates (optionally writing the
    /// sequence as a TAU 2015 .ops).
    BenchEdits(bench_edits::BenchEditsArgs),
    /// Measure the mixed strategy's crossover: updates after change files of growing
    /// size, on the CPU and on the GPU over the resident design (docs/PERFORMANCE.md).
    BenchResident(bench_resident::BenchResidentArgs),
    /// Measure the full update over the resident GPU state against the CPU backend's
    /// full update (docs/PERFORMANCE.md).
    BenchFull(bench_full::BenchFullArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Before any thread starts: the process forks here (`tachyon::gpu::ending`).
    let ending = match forked_ending() {
        Ok(fork) => Ending::begin(fork),
        Err(error) => {
            errln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    init_logging(cli.verbose);
    set_memory_limit_from_environment();
    // With the last line below, what a run costs outside its steps (start, exit).
    tracing::debug!("started");
    if let Some(threads) = cli.threads {
        let threads = capped_threads(threads);
        if let Err(error) = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
        {
            errln!("error: cannot set up {threads} worker threads: {error}");
            return ending.end(1);
        }
    }
    let progress = progress::Progress::new(cli.quiet);
    let result = match cli.command {
        Command::Report(args) => report::run(*args, &cli.backend, progress),
        Command::Parse(args) => parse::run(args, cli.quiet, progress),
        Command::Tau(args) => tau::run(args, &cli.backend, progress),
        Command::Shell(args) => shell::run(args, &cli.backend, progress),
        Command::Gen(args) => gen::run(args, progress),
        Command::Paths(args) => paths::run(args, &cli.backend, progress),
        Command::Cones(args) => cones::run(args),
        Command::BenchEdits(args) => bench_edits::run(args, &cli.backend, progress),
        Command::BenchResident(args) => bench_resident::run(args, &cli.backend, progress),
        Command::BenchFull(args) => bench_full::run(args, &cli.backend, progress),
    };
    tracing::debug!("finished: the process exits");
    let code = match result {
        Ok(()) => 0,
        // A reader that stops early (`tachyon parse ... | head -1`) closes the pipe:
        // end quietly, as Unix tools do.
        Err(error) if is_closed_output(&error) => 0,
        Err(error) => {
            errln!("error: {error:#}");
            1
        }
    };
    // Everything is written: the parent that waits exits now with `code`, and this
    // process tears down (GPU context, memory) after it (`tachyon::gpu::ending`).
    ending.end(code)
}

/// Whether the process forks at its start to end sooner (`tachyon::gpu::ending`):
/// yes unless `TACHYON_EXIT=normal`, or under a CUDA profiler (Nsight Systems and
/// Compute inject themselves through `CUDA_INJECTION64_PATH` and trace the process they
/// start, not a child forked without exec).
fn forked_ending() -> Result<bool, String> {
    let choice = std::env::var("TACHYON_EXIT").unwrap_or_default();
    let fork = match choice.trim() {
        "normal" => false,
        "" | "fork" => true,
        other => return Err(format!("TACHYON_EXIT={other}: expected normal or fork")),
    };
    Ok(fork && std::env::var_os("CUDA_INJECTION64_PATH").is_none())
}

/// The most worker threads per core: beyond a few per core they only contend (4,000
/// threads took 79 s on a 27-gate design; 100,000 could not be created).
const MAX_THREADS_PER_CORE: usize = 4;

/// `threads`, capped at [`MAX_THREADS_PER_CORE`] per core with a warning (0 keeps
/// rayon's default, one per core).
fn capped_threads(threads: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let most = cores * MAX_THREADS_PER_CORE;
    if threads > most {
        tracing::warn!(
            asked = threads,
            cores,
            using = most,
            "--threads is capped at {MAX_THREADS_PER_CORE} per core"
        );
        return most;
    }
    threads
}

/// Whether `error` comes from writing to a closed pipe.
pub(crate) fn is_closed_output(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        let io_error = cause.downcast_ref::<std::io::Error>().or_else(|| {
            cause
                .downcast_ref::<tachyon::TimerError>()
                .and_then(tachyon::TimerError::write_error)
        });
        io_error.is_some_and(|io_error| io_error.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The `--device` values.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum DeviceChoice {
    /// The CPU backend (rayon).
    Cpu,
    /// The GPU backend.
    Gpu,
    /// The GPU for large designs when one is usable, else the CPU.
    Auto,
}

impl From<DeviceChoice> for tachyon::Device {
    fn from(choice: DeviceChoice) -> Self {
        match choice {
            DeviceChoice::Cpu => tachyon::Device::Cpu,
            DeviceChoice::Gpu => tachyon::Device::Gpu,
            DeviceChoice::Auto => tachyon::Device::Auto,
        }
    }
}

/// Logs go to standard error so that answers on standard output stay machine-readable.
fn init_logging(verbose: u8) {
    let default_level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}
