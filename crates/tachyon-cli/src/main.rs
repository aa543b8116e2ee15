//! The `tachyon` command: parse files, run TAU 2015 flows, an interactive shell, and the
//! design generator.

mod gen;
mod parse;
mod paths;
mod peak_memory;
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
    /// Worker threads for the parallel phases (default: all cores; at most
    /// 4 per core, more only add contention).
    #[arg(long, global = true)]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    if let Some(threads) = cli.threads {
        let threads = capped_threads(threads);
        if let Err(error) = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
        {
            eprintln!("error: cannot set up {threads} worker threads: {error}");
            return ExitCode::FAILURE;
        }
    }
    let result = match cli.command {
        Command::Parse(args) => parse::run(args),
        Command::Tau(args) => tau::run(args),
        Command::Shell(args) => shell::run(args),
        Command::Gen(args) => gen::run(args),
        Command::Paths(args) => paths::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stops early (`tachyon parse ... | head -1`) closes the pipe:
        // end quietly, as Unix tools do.
        Err(error) if is_closed_output(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
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
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}
