//! Tachyon static timing analysis: the [`Timer`] API and re-exports of the component
//! crates.
//!
//! Timing runs on the CPU or a GPU ([`Backend`], chosen once with [`Backend::select`]);
//! the GPU backend needs the `gpu` cargo feature (on by default), without which this
//! crate builds no CUDA code at all.
//!
//! ```no_run
//! use tachyon::{Split, Timer, Transition};
//! let mut timer = Timer::new();
//! timer.load_tau2015("design/design.tau2015").unwrap();
//! let slack = timer.slack("out", Split::Late, Transition::Rise).unwrap();
//! ```

mod backend;
pub mod input;
mod memory;
pub use memory::{parse_size as parse_memory_size, set_memory_limit};
mod timer;

pub use tachyon_cppr as cppr;
pub use tachyon_gba as gba;
pub use tachyon_graph as graph;
pub use tachyon_kernels as kernels;
pub use tachyon_liberty as liberty;
pub use tachyon_link as link;
pub use tachyon_paths as paths;
pub use tachyon_report as report;
pub use tachyon_sdc as sdc;
pub use tachyon_spef as spef;
pub use tachyon_sta as sta;
pub use tachyon_verilog as verilog;

/// The GPU runtime (with the `gpu` feature): its configuration, errors and contexts.
#[cfg(feature = "gpu")]
pub use tachyon_gpu as gpu;

pub use backend::{
    Backend, BackendConfig, Device, GpuBackend, AUTO_GPU_MIN_PINS, GPU_MIN_FRONTIER,
    GPU_WHOLE_FRONTIER,
};
pub use tachyon_kernels::{Split, Transition};
pub use tachyon_link::TimingGroupPolicy;
pub use timer::{
    default_writer_options, read_checked, BackendComparison, CpprWork, DesignInput, EndpointCounts,
    InputError, OpsSummary, PathSelection, PhaseTiming, PinInfo, Retime, SdcTiming, SelectedPaths,
    Timer, TimerError, UpdateStats, WantedPaths, SDC_PATHS_NOTE,
};
