//! The runtime's switches. Libraries never read the environment: the `tachyon` binary
//! fills a [`GpuConfig`] (from `TACHYON_GPU_*` variables) and hands it down.

/// Bytes of one pinned staging buffer: large enough that a copy's fixed cost is small
/// against its transfer time, small enough that a few of them cost little to keep (and
/// to allocate: pinning is paid by the first transfer).
pub const STAGING_BYTES: usize = 32 << 20;

/// Staging buffers: the host copies one while the GPU copies the others.
pub const STAGING_BUFFERS: usize = 3;

/// How a GPU is used. The defaults are what the figures are taken with; the other
/// settings exist for measuring. The first [`crate::GpuContext::open`] of a GPU fixes
/// its configuration for the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuConfig {
    /// Pinned staging buffers that large transfers pass through: how many (2 to 8) and
    /// the bytes of each (1 to 256 MiB).
    pub staging_buffers: usize,
    pub staging_bytes: usize,
    /// Whether the device's memory pool keeps freed memory for the next update (the
    /// default) rather than handing it back to the driver at each synchronisation.
    pub keep_freed_memory: bool,
    /// Whether sequences of launches (the level sweeps, the CPPR passes) are captured
    /// once as CUDA graphs and replayed (the default), or launched one by one. The
    /// results are the same.
    pub use_graphs: bool,
    /// Whether the steps of an update run one after the other, the GPU waited for after
    /// each, so that the debug log times each alone (it costs their overlap).
    pub sync_steps: bool,
    /// At most this many bytes count as free device memory (`None`: what the driver
    /// says), so that running out of memory can be tried on any GPU.
    pub memory_limit: Option<u64>,
}

impl Default for GpuConfig {
    fn default() -> Self {
        GpuConfig {
            staging_buffers: STAGING_BUFFERS,
            staging_bytes: STAGING_BYTES,
            keep_freed_memory: true,
            use_graphs: true,
            sync_steps: false,
            memory_limit: None,
        }
    }
}

impl GpuConfig {
    /// This configuration with `count` staging buffers of `mib` MiB, or why not.
    pub fn with_staging(self, count: usize, mib: usize) -> Result<GpuConfig, String> {
        if !(2..=8).contains(&count) || !(1..=256).contains(&mib) {
            return Err(format!(
                "{count} staging buffers of {mib} MiB: expected 2 to 8 buffers of 1 to 256 MiB"
            ));
        }
        Ok(GpuConfig {
            staging_buffers: count,
            staging_bytes: mib << 20,
            ..self
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_sizes_are_bounded() {
        let config = GpuConfig::default().with_staging(4, 64).unwrap();
        assert_eq!(
            (config.staging_buffers, config.staging_bytes),
            (4, 64 << 20)
        );
        assert!(GpuConfig::default().with_staging(1, 64).is_err());
        assert!(GpuConfig::default().with_staging(4, 512).is_err());
    }
}
