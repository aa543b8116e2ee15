//! Device discovery and backend selection (`--device cpu|gpu|auto`).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use cudarc::driver::result;

use crate::context::GpuContext;
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

/// The backend a user asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Device {
    /// The CPU backend, even where a GPU exists.
    Cpu,
    /// The first GPU; an error when there is none.
    Gpu,
    /// The first GPU when one is usable, else the CPU (with one log line saying why).
    #[default]
    Auto,
}

impl FromStr for Device {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "cpu" => Ok(Device::Cpu),
            "gpu" => Ok(Device::Gpu),
            "auto" => Ok(Device::Auto),
            other => Err(format!(
                "unknown device `{other}`: expected cpu, gpu or auto"
            )),
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
            Device::Auto => "auto",
        })
    }
}

/// The backend chosen by [`select`].
#[derive(Debug, Clone)]
pub enum SelectedBackend {
    Cpu,
    Gpu(Arc<GpuContext>),
}

impl SelectedBackend {
    pub fn is_gpu(&self) -> bool {
        matches!(self, SelectedBackend::Gpu(_))
    }
}

/// Chooses the backend for `requested`. `Gpu` fails when no GPU is usable; `Auto` then
/// falls back to the CPU and logs one line saying why.
pub fn select(requested: Device) -> Result<SelectedBackend, GpuError> {
    match requested {
        Device::Cpu => Ok(SelectedBackend::Cpu),
        Device::Gpu => Ok(SelectedBackend::Gpu(GpuContext::open(0)?)),
        Device::Auto => match GpuContext::open(0) {
            Ok(context) => Ok(SelectedBackend::Gpu(context)),
            Err(reason) => {
                tracing::info!("no usable GPU ({reason}); using the CPU backend");
                Ok(SelectedBackend::Cpu)
            }
        },
    }
}
