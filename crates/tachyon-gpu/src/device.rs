//! Device discovery: is there a driver, which GPUs exist.

use std::fmt;

use cudarc::driver::result;

use crate::error::{DuringExt, GpuError};

/// Whether the CUDA driver library (libcuda) can be loaded. Everything else in this crate
/// that talks to the driver checks this first: cudarc panics when it needs the library
/// and cannot find it.
pub fn driver_present() -> bool {
    // SAFETY: this loads libcuda (if found) through libloading, which runs the library's
    // initialisers; that is how every CUDA program loads its driver, and cudarc keeps no
    // state from this probe.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// What a GPU is, as found by [`devices`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInfo {
    pub ordinal: u32,
    pub name: String,
    /// Total device memory in bytes.
    pub total_memory: u64,
    /// Compute capability `(major, minor)`, e.g. `(9, 0)` for Hopper.
    pub compute_capability: (i32, i32),
}

impl fmt::Display for GpuInfo {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "GPU {}: {} (sm_{}{}, {:.1} GiB)",
            self.ordinal,
            self.name,
            self.compute_capability.0,
            self.compute_capability.1,
            self.total_memory as f64 / (1u64 << 30) as f64
        )
    }
}

/// Every GPU the driver reports, without creating contexts. An error when there is no
/// driver; an empty list when the driver sees no GPU.
pub fn devices() -> Result<Vec<GpuInfo>, GpuError> {
    if !driver_present() {
        return Err(GpuError::NoDriver);
    }
    result::init().during("initialising the driver")?;
    let count = result::device::get_count().during("counting GPUs")?;
    let mut found = Vec::new();
    for ordinal in 0..count.max(0) {
        let device = result::device::get(ordinal).during("opening a GPU")?;
        let name = result::device::get_name(device).during("reading a GPU's name")?;
        // SAFETY: `device` is a valid handle just returned by the driver.
        let total_memory =
            unsafe { result::device::total_mem(device) }.during("reading a GPU's memory")?;
        use cudarc::driver::sys::CUdevice_attribute::{
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as MAJOR,
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as MINOR,
        };
        // SAFETY: `device` is a valid handle and both attributes are plain integers.
        let compute_capability = unsafe {
            (
                result::device::get_attribute(device, MAJOR),
                result::device::get_attribute(device, MINOR),
            )
        };
        found.push(GpuInfo {
            ordinal: ordinal as u32,
            name,
            total_memory: total_memory as u64,
            compute_capability: (
                compute_capability
                    .0
                    .during("reading a GPU's compute capability")?,
                compute_capability
                    .1
                    .during("reading a GPU's compute capability")?,
            ),
        });
    }
    Ok(found)
}
