//! The `tachyon` command: timing reports, TAU 2015 flows, an interactive shell, the
//! parsers, the design generator and its cone-size measurement.

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
    /// Worker threads for the parallel phases (default: all cores).
    #[arg(long, global = true)]
    threads: Option<usize>,
    /// No progress bars (they are shown on standard error only when it is a terminal),
    /// and for `parse`, nothing on standard output.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Time a design and report its summary and worst paths (text, JSON, TAU; SVG
    /// histogram).
    Report(report::ReportArgs),
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    if let Some(threads) = cli.threads {
        if let Err(error) = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
        {
            eprintln!("error: cannot set up {threads} worker threads: {error}");
            return ExitCode::FAILURE;
        }
    }
    let progress = progress::Progress::new(cli.quiet);
    let result = match cli.command {
        Command::Report(args) => report::run(args, progress),
        Command::Parse(args) => parse::run(args, cli.quiet, progress),
        Command::Tau(args) => tau::run(args, progress),
        Command::Shell(args) => shell::run(args, progress),
        Command::Gen(args) => gen::run(args, progress),
        Command::Paths(args) => paths::run(args, progress),
        Command::Cones(args) => cones::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Which timing backend a command asks for.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum DeviceChoice {
    /// The CPU backend (rayon).
    Cpu,
    /// The GPU backend.
    Gpu,
    /// The GPU when present and the design is large enough, else the CPU.
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
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}
