//! The GPU host side of Tachyon: the embedded PTX of `tachyon-kernels`, device discovery
//! and backend selection, and typed launchers that upload a batch, run a kernel and
//! download the results.
//!
//! - [`batch`]: the validated flat layouts the kernels work on ([`RcNetBatch`]). Validation happens once, on construction, so launches cannot read out
//!   of bounds.
//! - [`twin`]: the CPU twin of every kernel (rayon). It calls the same
//!   `tachyon_kernels` functions as the GPU, so results are bit-identical.
//! - [`device`]: is there a driver, which GPUs exist, and [`select`] for
//!   `--device cpu|gpu|auto`.
//! - [`cppr`]: CPPR grouping passes (the network uploaded once per split, a CUDA graph
//!   of its level launches replayed per pass, passes shared among GPUs).
//! - [`GpuContext`]: one per device, created on demand and cached; it loads the PTX lazily,
//!   once, and owns the launchers.
//!
//! `cudarc` loads the CUDA driver at run time (`dynamic-loading`), so this crate builds,
//! links and runs on machines without CUDA; only [`GpuContext::open`] needs a GPU, and it
//! reports a missing driver or device as an error, never a panic.

// The one crate allowed to use `unsafe` (besides the kernel entry points): raw device
// memory and kernel launches. Every block says why it is sound.
#![allow(unsafe_code)]

pub mod batch;
mod context;
pub mod cppr;
pub mod device;
mod error;
pub mod paths;
pub mod ptx;
mod timing;
pub mod twin;

pub use batch::{BatchError, RcNetBatch, RcNetsOutput};
pub use context::{DeviceRcNets, GpuContext, RcLaunch};
pub use device::{devices, driver_present, select, Device, GpuInfo, SelectedBackend};
pub use error::GpuError;
pub use timing::{
    sync_steps, CpprValues, DeviceTiming, ForwardResults, ParasiticsLayout, TimingLayout,
    WireOutputs,
};

#[cfg(test)]
mod tests;
