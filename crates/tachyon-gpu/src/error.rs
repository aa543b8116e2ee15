//! The errors of the GPU host side.

use cudarc::driver::DriverError;

/// Why a GPU could not be used, or a GPU operation failed.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("no CUDA driver found (libcuda could not be loaded)")]
    NoDriver,
    #[error("the CUDA driver reports no GPU")]
    NoDevice,
    #[error("GPU {ordinal} does not exist ({count} found)")]
    NoSuchDevice { ordinal: u32, count: u32 },
    #[error("CUDA driver error while {during}: {source}")]
    Driver {
        during: &'static str,
        source: DriverError,
    },
    #[error(
        "GPU {ordinal} is out of memory while {during}: {needed} bytes needed, \
         {free} bytes free of {total}"
    )]
    OutOfMemory {
        ordinal: u32,
        during: &'static str,
        needed: u64,
        free: u64,
        total: u64,
    },
    #[error("invalid timing layout: {0}")]
    Layout(#[from] crate::batch::BatchError),
    #[error("the RC pass was asked for before the parasitics were uploaded")]
    NoParasitics,
    #[error("a CPPR network shape was uploaded to another GPU than the timing data")]
    ShapeOnAnotherGpu,
    #[error("the timing graph has a cycle: only {levelized} of {n_pins} pins could be levelized")]
    NotAcyclic { levelized: u32, n_pins: u32 },
    #[error("the embedded PTX lacks the kernel `{name}`: run cargo xtask ptx")]
    MissingKernel { name: &'static str },
}

/// Attaches what was being done to a driver error.
pub(crate) trait DuringExt<T> {
    fn during(self, during: &'static str) -> Result<T, GpuError>;
}

impl<T> DuringExt<T> for Result<T, DriverError> {
    fn during(self, during: &'static str) -> Result<T, GpuError> {
        self.map_err(|source| GpuError::Driver { during, source })
    }
}
