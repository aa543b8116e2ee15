//! Project tasks, run as `cargo xtask <task>` (alias in `.cargo/config.toml`):
//!
//! - `ptx`: compile `tachyon-kernels` to PTX with the nightly nvptx target and write it
//!   into `crates/tachyon-gpu/ptx/` with a hash of the kernel sources.
//! - `gen`: write a generated TAU 2015 design.
//! - `bench`: run the whole flow on TAU benchmarks and generated designs, per phase
//!   (`bench parse`: parser throughput; `bench report`: the report writer; `bench
//!   incremental`: edit+query pairs against full updates).

mod bench;
mod bench_incremental;
mod bench_report;
mod bench_resident;
mod cli_binary;
mod gen;
mod ptx;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "xtask", about = "Tachyon project tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build the GPU kernels to PTX and refresh the committed copy.
    Ptx(ptx::PtxArgs),
    /// Generate a TAU 2015 design.
    Gen(gen::GenArgs),
    /// Benchmark the flow per phase.
    Bench(Box<bench::BenchArgs>),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().task {
        Task::Ptx(args) => ptx::run(args),
        Task::Gen(args) => gen::run(args),
        Task::Bench(args) => bench::run(*args),
    }
}
