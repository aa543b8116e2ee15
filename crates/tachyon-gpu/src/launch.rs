//! The kernel registry, typed launches and CUDA graph capture.
//!
//! The embedded PTX is loaded into a context once, on first use, and every kernel of
//! [`Kernel::ALL`] is looked up then (a missing one is an error naming it). A launch is
//! typed by its argument struct ([`KernelArgs`], declared in `tachyon_kernels::launch`
//! and read by the entry point as its one parameter), so the kernel it starts and the
//! layout of what it passes cannot disagree.

use std::sync::{Arc, PoisonError};

use cudarc::driver::sys::{CUfunction_attribute, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{
    CudaFunction, CudaGraph, CudaModule, DeviceRepr, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use tachyon_kernels::launch::{ArrayUse, Kernel, KernelArgs};

use crate::context::GpuContext;
use crate::error::{DuringExt, GpuError};
use crate::ptx::KERNELS_PTX;

/// Dynamic shared memory a block may have without opting in.
const DEFAULT_SHARED_BYTES: u32 = 48 * 1024;

/// The kernels of the embedded PTX, loaded into one context: `functions[kernel as
/// usize]`.
pub(crate) struct Registry {
    functions: Vec<CudaFunction>,
    _module: Arc<CudaModule>,
}

/// The grid of a one-dimensional launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    pub blocks: u32,
    pub threads_per_block: u32,
    /// Dynamic shared memory per block.
    pub shared_bytes: u32,
}

impl LaunchShape {
    /// A thread per item, `threads_per_block` to a block (at least one block).
    pub fn per_item(n_items: usize, threads_per_block: u32) -> LaunchShape {
        let blocks = n_items.div_ceil(threads_per_block as usize).max(1);
        LaunchShape {
            blocks: blocks.min(u32::MAX as usize) as u32,
            threads_per_block,
            shared_bytes: 0,
        }
    }

    /// At most `max_blocks` blocks for `n_items` items, for kernels whose threads loop
    /// over the items with the grid's stride.
    pub fn grid_stride(n_items: usize, threads_per_block: u32, max_blocks: u32) -> LaunchShape {
        LaunchShape {
            blocks: LaunchShape::per_item(n_items, threads_per_block)
                .blocks
                .clamp(1, max_blocks.max(1)),
            ..LaunchShape::per_item(n_items, threads_per_block)
        }
    }
}

/// A kernel's argument struct as the one parameter of a launch.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct Parameter<A>(A);

// SAFETY: every `KernelArgs` type is a `repr(C)` struct of integers, floats and views
// (an address and a length), declared once in `tachyon_kernels::launch` and taken by
// value by its entry point; its size is checked against the PTX's parameter by a test
// and by `cargo xtask ptx`. The bytes copied into the launch are the bytes the kernel
// reads.
unsafe impl<A: KernelArgs> DeviceRepr for Parameter<A> {}

impl GpuContext {
    /// The kernels, loading the embedded PTX into this context on first use.
    pub(crate) fn kernels(&self) -> Result<&Registry, GpuError> {
        if let Some(kernels) = self.kernels.get() {
            return Ok(kernels);
        }
        let _loading = self
            .kernel_load
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(kernels) = self.kernels.get() {
            return Ok(kernels);
        }
        let module = self
            .context
            .load_module(Ptx::from_src(KERNELS_PTX))
            .during("loading the embedded PTX")?;
        let functions = Kernel::ALL
            .iter()
            .map(|kernel| {
                module
                    .load_function(kernel.name())
                    .map_err(|_| GpuError::MissingKernel {
                        name: kernel.name(),
                    })
            })
            .collect::<Result<_, _>>()?;
        tracing::debug!(gpu = self.ordinal(), "loaded the kernels");
        Ok(self.kernels.get_or_init(|| Registry {
            functions,
            _module: module,
        }))
    }

    /// Queues the kernel of `args` on this GPU's stream (returns before it runs).
    ///
    /// Safe: the arrays of `args` are views the runtime made of live buffers (freed in
    /// stream order, after this launch), no array the kernel writes overlaps another
    /// array of the launch (checked here), and the kernels index them through slices of
    /// their true lengths, so a bad index traps instead of touching stray memory. What
    /// this cannot check (that a level's pins are distinct, that inputs come from
    /// earlier levels) decides whether results are right, and is the engines' layout
    /// validation's job.
    ///
    /// Takes the streams' lock (once per launch, uncontended a compare-and-swap), so a
    /// launch from another thread never enters this thread's capture.
    pub fn launch<A: KernelArgs>(&self, shape: LaunchShape, args: A) -> Result<(), GpuError> {
        let kernel = A::KERNEL;
        check_no_overlap(&args, kernel)?;
        let streams = self.streams();
        let function = &self.kernels()?.functions[kernel as usize];
        if shape.shared_bytes > DEFAULT_SHARED_BYTES {
            // Above 48 KiB a kernel must opt in to its dynamic shared memory size.
            function
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shape.shared_bytes as i32,
                )
                .map_err(|source| GpuError::Launch {
                    kernel: kernel.name(),
                    source,
                })?;
        }
        let config = LaunchConfig {
            grid_dim: (shape.blocks.max(1), 1, 1),
            block_dim: (shape.threads_per_block, 1, 1),
            shared_mem_bytes: shape.shared_bytes,
        };
        let parameter = Parameter(args);
        let mut launch = streams.main.launch_builder(function);
        launch.arg(&parameter);
        // SAFETY: see the function's documentation: the parameter is the kernel's own
        // argument struct, its arrays live views that no written array overlaps.
        unsafe { launch.launch(config) }.map_err(|source| GpuError::Launch {
            kernel: kernel.name(),
            source,
        })?;
        Ok(())
    }

    /// Captures the work `queue` puts on this context's stream into a CUDA graph
    /// (`None` when it queued nothing), to be replayed with one launch. The kernels are
    /// loaded first: a module load cannot be captured. The streams are held from before
    /// the capture begins until after it ends: any work queued on the stream meanwhile,
    /// from any thread, would be captured, so only this thread's `queue` may queue.
    fn capture(
        &self,
        queue: impl FnOnce() -> Result<(), GpuError>,
    ) -> Result<Option<CapturedGraph>, GpuError> {
        const DURING: &str = "capturing launches into a CUDA graph";
        let streams = self.streams();
        self.kernels()?;
        streams
            .main
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .during(DURING)?;
        let queued = queue();
        // The capture ends whatever happened, so the stream is usable again.
        let captured = streams.main.end_capture(CUgraphInstantiate_flags(0));
        drop(streams);
        queued?;
        Ok(captured.during(DURING)?.map(CapturedGraph))
    }

    /// Runs the launches `queue` queues: captured into `replay`'s CUDA graph the first
    /// time and replayed with one launch afterwards, or launched directly where
    /// [`crate::GpuConfig::use_graphs`] is off. Every later run must queue the same
    /// launches on the same buffers, which `replay`'s owner keeps alive beside it.
    ///
    /// `queue` runs with this context's streams locked: it must only launch (no host
    /// parallelism through rayon, which could run another user's GPU work inside the
    /// capture on this thread; no transfers or synchronisation, which a capture refuses).
    pub fn run_replayed(
        &self,
        replay: &mut Replay,
        queue: impl FnOnce() -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        if !self.config().use_graphs {
            return queue();
        }
        if !replay.captured {
            replay.graph = self.capture(queue)?;
            replay.captured = true;
        }
        match &replay.graph {
            // The graph is launched on the main stream, where it was captured.
            Some(graph) => {
                let _streams = self.streams();
                graph.0.launch().during("launching a CUDA graph")
            }
            // Nothing was captured: there is nothing to run.
            None => Ok(()),
        }
    }
}

/// A captured CUDA graph.
struct CapturedGraph(CudaGraph);

// SAFETY: the CUDA driver lets any thread use a graph as long as no two calls on it run
// at the same time. `CapturedGraph` is `Send` but not `Sync`, so one thread at a time
// holds it, and its owner moves between threads only as a whole.
unsafe impl Send for CapturedGraph {}

/// A sequence of launches replayed as one CUDA graph ([`GpuContext::run_replayed`]).
#[derive(Default)]
pub struct Replay {
    graph: Option<CapturedGraph>,
    captured: bool,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Replay")
            .field("captured", &self.captured)
            .finish()
    }
}

/// Fails when an array that `args` writes overlaps another of its arrays: the entry
/// points would see the same memory as a written and a read (or second written) slice.
fn check_no_overlap<A: KernelArgs>(args: &A, kernel: Kernel) -> Result<(), GpuError> {
    let mut arrays: [ArrayUse; 32] = [ArrayUse {
        address: 0,
        bytes: 0,
        written: false,
    }; 32];
    let mut count = 0;
    let mut too_many = false;
    args.visit_arrays(&mut |array| {
        if array.bytes == 0 {
            return;
        }
        match arrays.get_mut(count) {
            Some(slot) => *slot = array,
            None => too_many = true,
        }
        count += 1;
    });
    assert!(!too_many, "{}: more than 32 arrays", kernel.name());
    let arrays = &arrays[..count];
    let overlap = |a: &ArrayUse, b: &ArrayUse| {
        a.address < b.address + b.bytes && b.address < a.address + a.bytes
    };
    for (index, array) in arrays.iter().enumerate() {
        let clashes = arrays[index + 1..]
            .iter()
            .any(|other| (array.written || other.written) && overlap(array, other));
        if clashes {
            return Err(GpuError::OverlappingArrays {
                kernel: kernel.name(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_kernels::launch::{DeviceCells, DeviceSlice, LcaTableLevelArgs};

    fn table_level(previous: (u64, usize), row: (u64, usize)) -> LcaTableLevelArgs<'static> {
        // SAFETY: made-up addresses, never dereferenced: only the check is tested.
        unsafe {
            LcaTableLevelArgs {
                previous: DeviceSlice::from_raw(previous.0, previous.1),
                row: DeviceCells::from_raw(row.0, row.1),
                level: 1,
            }
        }
    }

    #[test]
    fn written_arrays_may_not_overlap_other_arrays() {
        // Two rows of one table, side by side: fine.
        let apart = table_level((0x1000, 8), (0x1040, 8));
        assert!(check_no_overlap(&apart, Kernel::LcaTableLevel).is_ok());
        // The row written over the row read.
        let overlapping = table_level((0x1000, 8), (0x1020, 8));
        assert!(matches!(
            check_no_overlap(&overlapping, Kernel::LcaTableLevel),
            Err(GpuError::OverlappingArrays {
                kernel: "lca_table_level"
            })
        ));
        // Empty arrays touch nothing.
        let empty = table_level((0x1000, 0), (0x1000, 8));
        assert!(check_no_overlap(&empty, Kernel::LcaTableLevel).is_ok());
    }

    #[test]
    fn launch_shapes_cover_their_items() {
        let shape = LaunchShape::per_item(1000, 128);
        assert_eq!((shape.blocks, shape.threads_per_block), (8, 128));
        assert_eq!(LaunchShape::per_item(0, 128).blocks, 1);
        assert_eq!(
            LaunchShape::grid_stride(1 << 30, 256, 65_535).blocks,
            65_535
        );
    }
}
