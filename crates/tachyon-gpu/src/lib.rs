//! The GPU runtime of Tachyon: everything about running kernels, nothing about timing.
//!
//! - [`GpuContext`]: one per device, opened on demand and cached for the process, with
//!   its stream, a second stream for downloads, and the device's memory pool kept warm.
//!   Shared by every user on every thread: each operation that queues on its streams
//!   holds their reentrant lock, a graph capture from its beginning to its end.
//! - [`device`]: is there a driver, which GPUs exist.
//! - [`DeviceBuffer`]: typed arrays in device memory ([`GpuContext::allocate`],
//!   [`GpuContext::upload`], [`GpuContext::download`], ...): large transfers pass
//!   through pinned staging buffers copied by all host cores.
//! - [`GpuContext::launch`]: typed, safe launches. Each kernel's arguments are one
//!   `#[repr(C)]` struct of `tachyon_kernels::launch`, shared with the entry point; the
//!   registry loads every kernel of the embedded PTX once ([`ptx`] holds it, refreshed
//!   by `cargo xtask ptx`; a test fails when it is stale).
//! - [`GpuContext::run_replayed`]: sequences of launches captured as CUDA graphs.
//! - [`check`]: the checks engines run on their layouts before any kernel reads them.
//! - [`GpuConfig`]: the switches for measuring, filled by the binary.
//! - [`ending`]: how a binary ends its process without waiting for the driver's
//!   release of the GPU (a fork at its start, as linkers such as mold do).
//!
//! The engines own their GPU halves (`tachyon-gba`, `tachyon-cppr`, `tachyon-paths`'
//! `gpu` modules) on top of this crate. `cudarc` loads the CUDA driver at run time
//! (`dynamic-loading`), so this crate builds, links and runs on machines without CUDA;
//! [`GpuContext::open`] reports a missing driver or device as an error, never a panic.

// The one crate allowed to use `unsafe` (besides the kernel entry points): raw device
// memory, transfers and kernel launches, and the process calls of [`ending`]. Every
// block says why it is sound.
#![allow(unsafe_code)]

mod buffer;
pub mod check;
mod config;
mod context;
pub mod device;
pub mod ending;
mod error;
mod launch;
pub mod ptx;
mod streams;
mod transfer;

pub use buffer::DeviceBuffer;
pub use config::{GpuConfig, STAGING_BUFFERS, STAGING_BYTES};
pub use context::{Event, GpuContext, UploadTimes};
pub use device::{devices, driver_present, GpuInfo};
pub use error::{GpuError, LayoutError};
pub use launch::{LaunchShape, Replay};
pub use tachyon_kernels::launch as abi;
pub use transfer::PieceCheck;

#[cfg(test)]
mod tests;
