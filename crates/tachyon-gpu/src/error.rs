//! The errors of the GPU runtime.

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
    #[error("CUDA driver error while launching {kernel}: {source}")]
    Launch {
        kernel: &'static str,
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
    #[error("invalid layout: {0}")]
    Layout(#[from] LayoutError),
    #[error("the embedded PTX lacks the kernel `{name}`: run cargo xtask ptx")]
    MissingKernel { name: &'static str },
    #[error("a launch of {kernel} writes an array that another of its arrays overlaps")]
    OverlappingArrays { kernel: &'static str },
    #[error("{what} is on another GPU")]
    OtherGpu { what: &'static str },
}

/// Why arrays do not describe a valid layout for the kernels (checked on the host
/// before any kernel reads them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("{array} holds {found} values, expected {expected}")]
    LengthMismatch {
        array: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("{what}: {count} is more than a layout can hold ({limit})")]
    TooLarge {
        what: &'static str,
        count: usize,
        limit: usize,
    },
    #[error("{array}[{position}] is {value}, expected below {limit}")]
    IndexOutOfRange {
        array: &'static str,
        position: usize,
        value: u32,
        limit: usize,
    },
    #[error("{array} must be ascending from 0 and end at {end}")]
    BadStarts { array: &'static str, end: usize },
    #[error("the graph has a cycle: only {levelized} of {n_items} items could be levelized")]
    NotAcyclic { levelized: u32, n_items: u32 },
    #[error("the {what} were asked for before they were uploaded")]
    Missing { what: &'static str },
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
