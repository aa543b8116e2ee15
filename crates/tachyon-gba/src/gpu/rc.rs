//! The RC pass on the GPU: a batch of nets ([`RcNetBatch`]) uploaded with room for the
//! results, and the `rc_nets` kernel's launch shape.

use std::sync::Arc;

use tachyon_gpu::abi::RcNetsArgs;
use tachyon_gpu::{DeviceBuffer, GpuContext, GpuError, LaunchShape};
use tachyon_kernels::N_CONDITIONS;

use super::layout::{RcNetBatch, RcNetsOutput};

/// How the `rc_nets` kernel is spread over a GPU.
///
/// The kernel sweeps each net several times and reads back what it just wrote. From
/// global memory every such step is a trip to L2, so nets of up to `shared_nodes_per_net`
/// nodes are computed in shared memory (one slot of `3 * 4 * shared_nodes_per_net`
/// values per four threads) and copied out once; larger nets run in global memory. The
/// grid holds `blocks_per_multiprocessor` blocks per multiprocessor and each thread loops
/// over the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RcLaunch {
    /// Threads per block: a multiple of 32, at most 1024.
    pub threads_per_block: u32,
    pub blocks_per_multiprocessor: u32,
    /// The largest net computed in shared memory; 0 computes every net in global memory.
    /// Lowered automatically when the block's slots would not fit the GPU's shared memory.
    pub shared_nodes_per_net: u32,
}

/// The default shape is the fastest measured on an H100 (1M nets of 2 to 100 nodes):
/// 256 threads per multiprocessor, global memory only (docs/PERFORMANCE.md).
impl Default for RcLaunch {
    fn default() -> Self {
        RcLaunch {
            threads_per_block: 256,
            blocks_per_multiprocessor: 1,
            shared_nodes_per_net: 0,
        }
    }
}

impl RcLaunch {
    /// Bytes of dynamic shared memory a block needs.
    pub fn shared_bytes_per_block(&self) -> u64 {
        let slots = (self.threads_per_block / N_CONDITIONS as u32) as u64;
        slots * 3 * N_CONDITIONS as u64 * self.shared_nodes_per_net as u64 * 8
    }
}

/// A batch of RC nets on a GPU, with room for the results.
pub struct DeviceRcNets {
    gpu: Arc<GpuContext>,
    n_nets: u32,
    n_nodes: u32,
    net_offsets: DeviceBuffer<u32>,
    parent: DeviceBuffer<u32>,
    res: DeviceBuffer<f64>,
    cap: DeviceBuffer<f64>,
    pub(crate) load: DeviceBuffer<f64>,
    pub(crate) delay: DeviceBuffer<f64>,
    pub(crate) impulse: DeviceBuffer<f64>,
}

impl std::fmt::Debug for DeviceRcNets {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DeviceRcNets")
            .field("n_nets", &self.n_nets)
            .field("n_nodes", &self.n_nodes)
            .finish()
    }
}

impl DeviceRcNets {
    /// Uploads `batch` to `gpu` and allocates its results.
    pub fn upload(gpu: &Arc<GpuContext>, batch: &RcNetBatch) -> Result<DeviceRcNets, GpuError> {
        const DURING: &str = "uploading RC nets";
        gpu.ensure_free(DURING, batch.device_bytes())?;
        let n_values = batch.n_nodes() as usize * N_CONDITIONS;
        Ok(DeviceRcNets {
            gpu: Arc::clone(gpu),
            n_nets: batch.n_nets(),
            n_nodes: batch.n_nodes(),
            net_offsets: gpu.upload(DURING, batch.net_offsets())?,
            parent: gpu.upload(DURING, batch.parent())?,
            res: gpu.upload(DURING, batch.res())?,
            cap: gpu.upload(DURING, batch.cap())?,
            load: gpu.allocate(DURING, n_values)?,
            delay: gpu.allocate(DURING, n_values)?,
            impulse: gpu.allocate(DURING, n_values)?,
        })
    }

    pub fn n_nets(&self) -> u32 {
        self.n_nets
    }

    pub fn n_nodes(&self) -> u32 {
        self.n_nodes
    }

    /// Queues the `rc_nets` kernel with `shape` (returns before it finishes).
    pub fn launch(&self, shape: RcLaunch) -> Result<(), GpuError> {
        if self.n_nets == 0 || self.n_nodes == 0 {
            return Ok(());
        }
        let n_items = self.n_nets as usize * N_CONDITIONS;
        let mut shape = shape;
        shape.threads_per_block = (shape.threads_per_block / 32).clamp(1, 32) * 32;
        while shape.shared_bytes_per_block() > self.gpu.max_shared_bytes_per_block() as u64 {
            shape.shared_nodes_per_net /= 2;
        }
        let blocks = (self.gpu.multiprocessor_count() * shape.blocks_per_multiprocessor.max(1))
            .min(n_items.div_ceil(shape.threads_per_block as usize) as u32)
            .max(1);
        self.gpu.launch(
            LaunchShape {
                blocks,
                threads_per_block: shape.threads_per_block,
                shared_bytes: shape.shared_bytes_per_block() as u32,
            },
            RcNetsArgs {
                net_offsets: self.net_offsets.view(),
                parent: self.parent.view(),
                res: self.res.view(),
                cap: self.cap.view(),
                load: self.load.cells(),
                delay: self.delay.cells(),
                impulse: self.impulse.cells(),
                shared_nodes_per_net: shape.shared_nodes_per_net,
            },
        )
    }

    /// Copies the results of the last launch back (waits for it).
    pub fn download(&self) -> Result<RcNetsOutput, GpuError> {
        let n_values = self.n_nodes as usize * N_CONDITIONS;
        Ok(RcNetsOutput {
            load: self.gpu.download(&self.load, 0..n_values)?,
            delay: self.gpu.download(&self.delay, 0..n_values)?,
            impulse: self.gpu.download(&self.impulse, 0..n_values)?,
        })
    }

    /// Runs the kernel `runs` times with `shape` and returns each run's time in
    /// milliseconds, measured with device events around the launch.
    pub fn time(&self, shape: RcLaunch, runs: usize) -> Result<Vec<f64>, GpuError> {
        (0..runs)
            .map(|_| self.gpu.time(|| self.launch(shape)))
            .collect()
    }
}

/// Runs the RC passes of `batch` on `gpu`: upload, launch, download.
pub fn rc_nets(gpu: &Arc<GpuContext>, batch: &RcNetBatch) -> Result<RcNetsOutput, GpuError> {
    let nets = DeviceRcNets::upload(gpu, batch)?;
    nets.launch(RcLaunch::default())?;
    nets.download()
}
