//! `GpuContext`: one CUDA context per device, the lazily loaded kernels, and the typed
//! launchers.

use std::fmt;
use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cudarc::driver::sys::{
    self, CUdevice_attribute, CUevent_flags, CUfunction_attribute, CUgraphInstantiate_flags,
    CUresult, CUstreamCaptureMode,
};
use cudarc::driver::{
    result, CudaContext, CudaEvent, CudaFunction, CudaGraph, CudaSlice, CudaStream, DevicePtr,
    DevicePtrMut, DeviceRepr, DriverError, LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use rayon::prelude::*;
use tachyon_kernels::N_CONDITIONS;

use crate::batch::{BatchError, RcNetBatch, RcNetsOutput};
use crate::device::driver_present;
use crate::error::{DuringExt, GpuError};
use crate::ptx::KERNELS_PTX;

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
/// 256 threads per multiprocessor, global memory only, 31 ms (25 ms with nets ordered by
/// size). All threads (2048 per multiprocessor) took 37 ms; the shared-memory shapes took
/// 42 to 107 ms, because the few threads that fit the shared memory cannot hide the
/// latency of each net's serial chain of dependent steps.
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

/// Bytes of one pinned staging buffer: large enough that a copy's fixed cost is small
/// against its transfer time, small enough that a few of them cost little to keep (and
/// to allocate: pinning is paid by the first transfer).
pub(crate) const STAGING_BYTES: usize = 32 << 20;

/// Staging buffers: the host copies one while the GPU copies the others. H100, 1M
/// gates, the forward downloads (about 600 MB), two runs each: 2 of 16 MiB took 26-105
/// ms, 3 of 32 MiB 19-21 ms (20-61 ms in a later run); 2 or 4 of 64 MiB took 23-24 ms
/// but their pinning made the first upload 60-100 ms slower.
const STAGING_BUFFERS: usize = 3;

/// Transfers below this size go straight from pageable memory: staging them would cost
/// more in synchronisation than it saves.
const STAGED_MIN_BYTES: usize = 1 << 20;

/// Bytes each host thread copies into or out of a staging buffer at a time.
const HOST_COPY_BYTES: usize = 1 << 20;

/// Page-locked host buffers that large transfers pass through, so that the DMA engine
/// copies at full speed without the driver staging pageable memory itself, and so that
/// the host copies one buffer (with all its cores) while the GPU copies the others.
struct Staging {
    buffers: Vec<PinnedHostSlice<u8>>,
    /// Recorded on the stream after the transfer that last used each buffer.
    done: Vec<CudaEvent>,
    /// Bytes of each buffer.
    bytes: usize,
}

/// The staging buffers' count and size: [`STAGING_BUFFERS`] of [`STAGING_BYTES`], or
/// what `TACHYON_GPU_STAGING=count,MiB` says (a diagnostics switch for measuring
/// transfers; 2 to 8 buffers of 1 to 256 MiB).
fn staging_shape() -> (usize, usize) {
    let Ok(value) = std::env::var("TACHYON_GPU_STAGING") else {
        return (STAGING_BUFFERS, STAGING_BYTES);
    };
    let parse = || {
        let (count, mib) = value.split_once(',')?;
        let (count, mib) = (
            count.trim().parse().ok()?,
            mib.trim().parse::<usize>().ok()?,
        );
        ((2..=8).contains(&count) && (1..=256).contains(&mib)).then_some((count, mib << 20))
    };
    parse().unwrap_or_else(|| {
        tracing::warn!(
            value,
            "TACHYON_GPU_STAGING expects count,MiB (2 to 8 buffers of 1 to 256 MiB): using the default"
        );
        (STAGING_BUFFERS, STAGING_BYTES)
    })
}

/// Copies `from` into `to` (of equal length) with every core of the host: one thread
/// cannot keep up with the DMA engine.
fn parallel_copy(to: &mut [u8], from: &[u8]) {
    to.par_chunks_mut(HOST_COPY_BYTES)
        .zip(from.par_chunks(HOST_COPY_BYTES))
        .for_each(|(to, from)| to.copy_from_slice(from));
}

/// A check of one piece of an array, given the position of its first item.
pub(crate) type PieceCheck<'a, T> = dyn Fn(usize, &[T]) -> Result<(), BatchError> + Sync + 'a;

/// Puts one piece of an array (given the position of its first item) into its staging
/// bytes.
type PieceFill<'a, T> = dyn FnMut(usize, &[T], &mut [u8]) + 'a;

/// [`parallel_copy`] of `items` (from position `first` of their array) into `to`,
/// running `check` on each piece a thread copies; the first failing piece's error in
/// order.
fn parallel_copy_checked<T: DeviceRepr + Sync>(
    to: &mut [u8],
    first: usize,
    items: &[T],
    check: &PieceCheck<'_, T>,
) -> Result<(), BatchError> {
    let items_per_piece = (HOST_COPY_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    let piece_bytes = items_per_piece * std::mem::size_of::<T>();
    let results: Vec<Result<(), BatchError>> = to
        .par_chunks_mut(piece_bytes.max(1))
        .zip(items.par_chunks(items_per_piece))
        .enumerate()
        .map(|(index, (to, piece))| {
            to.copy_from_slice(as_bytes(piece));
            check(first + index * items_per_piece, piece)
        })
        .collect();
    results.into_iter().collect()
}

/// [`parallel_copy`] into memory that need not be initialised.
fn parallel_copy_out(to: &mut [MaybeUninit<u8>], from: &[u8]) {
    assert_eq!(to.len(), from.len(), "parallel_copy_out: lengths differ");
    to.par_chunks_mut(HOST_COPY_BYTES)
        .zip(from.par_chunks(HOST_COPY_BYTES))
        .for_each(|(to, from)| {
            // SAFETY: the chunks have the same length (equal slices cut alike), and a
            // shared and an exclusive borrow cannot overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(from.as_ptr(), to.as_mut_ptr().cast(), from.len())
            }
        });
}

/// `data` as its bytes.
fn as_bytes<T: DeviceRepr>(data: &[T]) -> &[u8] {
    // SAFETY: `DeviceRepr` types are plain data (integers, floats) without padding, so
    // every byte of the slice is initialised; the byte slice borrows `data`.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

/// Lets the device's memory pool, which buffers are allocated from and freed to in
/// stream order, keep freed memory instead of handing it back to the driver at each
/// synchronisation (its default). An update allocates and frees the same buffers as the
/// one before (1M gates: about 1.5 GB), and mapping them afresh each time cost more than
/// reusing them. The memory stays with the process; [`GpuContext::memory`] counts it
/// as free. `TACHYON_GPU_RELEASE_MEMORY` (a diagnostics switch) keeps the default.
fn keep_freed_memory(context: &CudaContext) -> Result<(), GpuError> {
    let mut threshold = u64::MAX;
    let pool = default_pool(context)?;
    // SAFETY: `pool` is the device's default pool, valid while the context lives; the
    // release threshold attribute takes a `u64` by pointer.
    unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    }
    .result()
    .during("keeping freed device memory in the pool")
}

/// Bytes the device's default pool holds that no buffer uses.
fn kept_pool_memory(context: &CudaContext) -> Result<u64, GpuError> {
    const DURING: &str = "reading the memory pool's size";
    let pool = default_pool(context)?;
    let attribute = |attribute| {
        let mut value = 0u64;
        // SAFETY: as in `keep_freed_memory`; both attributes are `u64`s.
        unsafe { sys::cuMemPoolGetAttribute(pool, attribute, (&mut value as *mut u64).cast()) }
            .result()
            .during(DURING)
            .map(|()| value)
    };
    let reserved = attribute(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
    let used = attribute(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
    Ok(reserved.saturating_sub(used))
}

/// The default memory pool of `context`'s device.
fn default_pool(context: &CudaContext) -> Result<sys::CUmemoryPool, GpuError> {
    context.bind_to_thread().during("binding the context")?;
    let mut pool = std::mem::MaybeUninit::uninit();
    // SAFETY: writes the pool handle of a valid device into `pool` on success.
    unsafe { sys::cuDeviceGetDefaultMemPool(pool.as_mut_ptr(), context.cu_device()) }
        .result()
        .during("finding the device's memory pool")?;
    // SAFETY: initialised by the successful call above.
    Ok(unsafe { pool.assume_init() })
}

/// A CUDA graph captured by [`GpuContext::capture`], replayed on the stream it was
/// captured on.
pub(crate) struct CapturedGraph(CudaGraph);

// SAFETY: the CUDA driver lets any thread use a graph as long as no two calls on it run
// at the same time. `CapturedGraph` is `Send` but not `Sync`, so one thread at a time
// holds it, and its owner (a timing or CPPR network on the device) moves between
// threads only as a whole.
unsafe impl Send for CapturedGraph {}

impl CapturedGraph {
    /// Queues the graph on its stream.
    pub(crate) fn launch(&self) -> Result<(), GpuError> {
        self.0.launch().during("launching a CUDA graph")
    }
}

/// The contexts opened so far, one per device ordinal, shared by the whole process.
static CONTEXTS: Mutex<Vec<Arc<GpuContext>>> = Mutex::new(Vec::new());

/// The kernels of the embedded PTX, loaded into one context.
pub(crate) struct Kernels {
    pub(crate) rc_nets: CudaFunction,
    pub(crate) forward_level: CudaFunction,
    pub(crate) evaluate_tests: CudaFunction,
    pub(crate) backward_level: CudaFunction,
    pub(crate) gather_parasitics: CudaFunction,
    pub(crate) scatter_quads: CudaFunction,
    pub(crate) fill_f64: CudaFunction,
    pub(crate) cppr_fill: CudaFunction,
    pub(crate) cppr_level: CudaFunction,
    pub(crate) cppr_gather: CudaFunction,
    pub(crate) levelize_waits: CudaFunction,
    pub(crate) levelize_exclude: CudaFunction,
    pub(crate) levelize_sources: CudaFunction,
    pub(crate) levelize_frontier: CudaFunction,
}

/// One GPU: its CUDA context and stream, and the kernels (loaded on first use).
pub struct GpuContext {
    ordinal: u32,
    name: String,
    multiprocessor_count: u32,
    /// The most dynamic shared memory one block may ask for (after opting in).
    max_shared_bytes_per_block: u32,
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Downloads of results that are final while `stream` computes on (each after an
    /// event recorded on `stream` behind the kernels that wrote them).
    copy_stream: Arc<CudaStream>,
    kernels: OnceLock<Kernels>,
    /// Serialises the first load of the kernels, so the module is loaded once.
    kernel_load: Mutex<()>,
    /// Allocated on the first large transfer; the lock serialises transfers using it.
    staging: Mutex<Option<Staging>>,
}

impl fmt::Debug for GpuContext {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("GpuContext")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("kernels_loaded", &self.kernels.get().is_some())
            .finish()
    }
}

/// A batch of RC nets uploaded to a GPU, with room for the results.
pub struct DeviceRcNets {
    n_nets: u32,
    n_nodes: u32,
    net_offsets: CudaSlice<u32>,
    parent: CudaSlice<u32>,
    res: CudaSlice<f64>,
    cap: CudaSlice<f64>,
    load: CudaSlice<f64>,
    delay: CudaSlice<f64>,
    impulse: CudaSlice<f64>,
}

impl fmt::Debug for DeviceRcNets {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("DeviceRcNets")
            .field("n_nets", &self.n_nets)
            .field("n_nodes", &self.n_nodes)
            .finish()
    }
}

impl DeviceRcNets {
    pub fn n_nets(&self) -> u32 {
        self.n_nets
    }

    pub fn n_nodes(&self) -> u32 {
        self.n_nodes
    }

    /// The results of the last launch: downstream capacitance, delay and impulse per node
    /// and condition.
    pub(crate) fn load(&self) -> &CudaSlice<f64> {
        &self.load
    }

    pub(crate) fn delay(&self) -> &CudaSlice<f64> {
        &self.delay
    }

    pub(crate) fn impulse(&self) -> &CudaSlice<f64> {
        &self.impulse
    }
}

impl GpuContext {
    /// The context of GPU `ordinal`, created on first use and shared afterwards. Fails
    /// cleanly (never panics) when there is no driver or no such GPU.
    pub fn open(ordinal: u32) -> Result<Arc<GpuContext>, GpuError> {
        let mut contexts = CONTEXTS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = contexts.iter().find(|context| context.ordinal == ordinal) {
            return Ok(Arc::clone(found));
        }
        if !driver_present() {
            return Err(GpuError::NoDriver);
        }
        match result::init() {
            Err(DriverError(CUresult::CUDA_ERROR_NO_DEVICE)) => return Err(GpuError::NoDevice),
            other => other.during("initialising the driver")?,
        }
        let count = CudaContext::device_count().during("counting GPUs")?.max(0) as u32;
        if count == 0 {
            return Err(GpuError::NoDevice);
        }
        if ordinal >= count {
            return Err(GpuError::NoSuchDevice { ordinal, count });
        }
        let context = CudaContext::new(ordinal as usize).during("creating a context")?;
        let name = context.name().during("reading the GPU's name")?;
        let multiprocessor_count = context
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .during("reading the multiprocessor count")?
            .max(1) as u32;
        let max_shared_bytes_per_block = context
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .during("reading the shared memory size")?
            .max(0) as u32;
        // Kernels and uploads of this context go to one stream, so cudarc's per-buffer
        // event tracking (an event recorded per argument of every launch once a second
        // stream exists) would only cost time.
        // SAFETY: every buffer of this context is allocated, written and freed on
        // `stream` alone (the path search uses the same stream). The only other stream,
        // `copy_stream`, just reads buffers into host memory, each copy queued after
        // waiting on an event recorded on `stream` behind the buffer's writers, and the
        // host waits for that copy before anything else can touch or free the buffer.
        unsafe { context.disable_event_tracking() };
        // A stream of our own rather than the legacy default stream: work on it can be
        // captured into CUDA graphs and does not serialise with other libraries' work.
        let stream = context.new_stream().during("creating a stream")?;
        let copy_stream = context.new_stream().during("creating a stream")?;
        if context.has_async_alloc() && std::env::var_os("TACHYON_GPU_RELEASE_MEMORY").is_none() {
            keep_freed_memory(&context)?;
        }
        let opened = Arc::new(GpuContext {
            ordinal,
            name,
            multiprocessor_count,
            max_shared_bytes_per_block,
            context,
            stream,
            copy_stream,
            kernels: OnceLock::new(),
            kernel_load: Mutex::new(()),
            staging: Mutex::new(None),
        });
        contexts.push(Arc::clone(&opened));
        Ok(opened)
    }

    pub fn ordinal(&self) -> u32 {
        self.ordinal
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn multiprocessor_count(&self) -> u32 {
        self.multiprocessor_count
    }

    /// `(free, total)` device memory in bytes; free counts the memory that buffers of
    /// this process freed and its pool keeps for the next ones ([`keep_freed_memory`]).
    pub fn memory(&self) -> Result<(u64, u64), GpuError> {
        let (free, total) = self
            .context
            .mem_get_info()
            .during("reading the free memory")?;
        let kept = if self.context.has_async_alloc() {
            kept_pool_memory(&self.context)?
        } else {
            0
        };
        Ok((free as u64 + kept, total as u64))
    }

    /// The stream all work of this context is queued on.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The stream that downloads results while [`GpuContext::stream`] computes on; work
    /// on it must wait for an event recorded on `stream` after the data's writers.
    pub(crate) fn copy_stream(&self) -> &Arc<CudaStream> {
        &self.copy_stream
    }

    /// The CUDA context (for the path search driver, which loads its own kernels).
    pub(crate) fn cuda_context(&self) -> &Arc<CudaContext> {
        &self.context
    }

    /// Waits until all work queued on this GPU has finished.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream.synchronize().during("waiting for the GPU")
    }

    /// The kernels, loading the embedded PTX into this context on first use.
    pub(crate) fn kernels(&self) -> Result<&Kernels, GpuError> {
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
        let function = |name: &'static str| {
            module
                .load_function(name)
                .map_err(|_| GpuError::MissingKernel { name })
        };
        let kernels = Kernels {
            rc_nets: function("rc_nets")?,
            forward_level: function("forward_level")?,
            evaluate_tests: function("evaluate_tests")?,
            backward_level: function("backward_level")?,
            gather_parasitics: function("gather_parasitics")?,
            scatter_quads: function("scatter_quads")?,
            fill_f64: function("fill_f64")?,
            cppr_fill: function("cppr_fill")?,
            cppr_level: function("cppr_level")?,
            cppr_gather: function("cppr_gather")?,
            levelize_waits: function("levelize_waits")?,
            levelize_exclude: function("levelize_exclude")?,
            levelize_sources: function("levelize_sources")?,
            levelize_frontier: function("levelize_frontier")?,
        };
        tracing::debug!(gpu = self.ordinal, "loaded the kernels");
        Ok(self.kernels.get_or_init(|| kernels))
    }

    /// Captures the work `launch` queues on this context's stream into a CUDA graph
    /// (`None` when it queued nothing), to be replayed with one launch. The kernels
    /// are loaded first: a module load cannot be captured.
    pub(crate) fn capture(
        &self,
        launch: impl FnOnce() -> Result<(), GpuError>,
    ) -> Result<Option<CapturedGraph>, GpuError> {
        const DURING: &str = "capturing launches into a CUDA graph";
        self.kernels()?;
        self.stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .during(DURING)?;
        let launched = launch();
        // The capture ends whatever happened, so the stream is usable again.
        let captured = self.stream.end_capture(CUgraphInstantiate_flags(0));
        launched?;
        Ok(captured.during(DURING)?.map(CapturedGraph))
    }

    /// Fails with [`GpuError::OutOfMemory`] unless `needed` bytes are free.
    pub(crate) fn ensure_free(&self, during: &'static str, needed: u64) -> Result<(), GpuError> {
        let (free, total) = self.memory()?;
        if needed > free {
            return Err(GpuError::OutOfMemory {
                ordinal: self.ordinal,
                during,
                needed,
                free,
                total,
            });
        }
        Ok(())
    }

    /// Turns an allocation failure into [`GpuError::OutOfMemory`] where it is one.
    fn allocation_error(&self, during: &'static str, needed: u64, error: DriverError) -> GpuError {
        if error.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let (free, total) = self.memory().unwrap_or((0, 0));
            GpuError::OutOfMemory {
                ordinal: self.ordinal,
                during,
                needed,
                free,
                total,
            }
        } else {
            GpuError::Driver {
                during,
                source: error,
            }
        }
    }

    /// Copies `data` to a new device buffer (of at least one element: the driver rejects
    /// empty allocations).
    pub(crate) fn upload<T: DeviceRepr>(
        &self,
        during: &'static str,
        data: &[T],
    ) -> Result<CudaSlice<T>, GpuError> {
        let mut buffer = self.allocate_poisoned::<T>(during, data.len())?;
        self.copy_to_device(data, &mut buffer)?;
        Ok(buffer)
    }

    /// [`GpuContext::upload`] that also runs `check` on every piece of `data` as it
    /// copies it (`check(first, piece)`, `first` the position of the piece's first
    /// item), on the host threads that copy the piece, while it is in their caches: one
    /// pass over the data instead of two. The copy completes either way; the first
    /// failing piece's error, in order, is returned after it as a layout error, before
    /// any kernel can read the buffer.
    pub(crate) fn upload_checked<T: DeviceRepr + Sync>(
        &self,
        during: &'static str,
        data: &[T],
        check: &PieceCheck<'_, T>,
    ) -> Result<CudaSlice<T>, GpuError> {
        let mut buffer = self.allocate_poisoned::<T>(during, data.len())?;
        if std::mem::size_of_val(data) < STAGED_MIN_BYTES {
            check(0, data).map_err(GpuError::Layout)?;
            self.copy_to_device(data, &mut buffer)?;
            return Ok(buffer);
        }
        let mut first_error = None;
        self.copy_to_device_with(data, &mut buffer, &mut |first, piece, staged| {
            if let Err(error) = parallel_copy_checked(staged, first, piece, check) {
                first_error.get_or_insert(error);
            }
        })?;
        match first_error {
            Some(error) => Err(GpuError::Layout(error)),
            None => Ok(buffer),
        }
    }

    /// Runs `transfer` with the staging buffers, allocating them on first use.
    fn with_staging<R>(
        &self,
        transfer: impl FnOnce(&mut Staging) -> Result<R, GpuError>,
    ) -> Result<R, GpuError> {
        const DURING: &str = "allocating pinned staging buffers";
        let mut staging = self.staging.lock().unwrap_or_else(PoisonError::into_inner);
        if staging.is_none() {
            let (count, bytes) = staging_shape();
            let pinned = || {
                // SAFETY: the buffers are only read after a transfer wrote them (the
                // host copy or a device-to-host copy fills every byte it then reads).
                // Flags 0 (not write-combined): the host also reads them back.
                unsafe { self.context.alloc_pinned_with_flags::<u8>(bytes, 0) }.during(DURING)
            };
            let event = || {
                let flags = Some(CUevent_flags::CU_EVENT_DISABLE_TIMING);
                self.context.new_event(flags).during(DURING)
            };
            *staging = Some(Staging {
                buffers: (0..count).map(|_| pinned()).collect::<Result<_, _>>()?,
                done: (0..count).map(|_| event()).collect::<Result<_, _>>()?,
                bytes,
            });
        }
        match staging.as_mut() {
            Some(staging) => transfer(staging),
            None => unreachable!("the staging buffers were just allocated"),
        }
    }

    /// Queues a copy of `data` into the start of `target`. Large copies go through the
    /// pinned staging buffers, the host filling one while the GPU copies the other;
    /// returns once `data` is no longer needed (the last chunk may still be in flight).
    pub(crate) fn copy_to_device<T: DeviceRepr>(
        &self,
        data: &[T],
        target: &mut CudaSlice<T>,
    ) -> Result<(), GpuError> {
        if std::mem::size_of_val(data) < STAGED_MIN_BYTES {
            assert!(
                target.len() >= data.len(),
                "copy_to_device: target too short"
            );
            if !data.is_empty() {
                self.stream
                    .memcpy_htod(data, target)
                    .during("copying to the GPU")?;
            }
            return Ok(());
        }
        self.copy_to_device_with(data, target, &mut |_, piece, staged| {
            parallel_copy(staged, as_bytes(piece))
        })
    }

    /// The staged copy of [`GpuContext::copy_to_device`], with `fill(first, piece,
    /// staged)` putting each piece of `data` (its items from position `first`) into its
    /// pinned staging bytes.
    fn copy_to_device_with<T: DeviceRepr>(
        &self,
        data: &[T],
        target: &mut CudaSlice<T>,
        fill: &mut PieceFill<'_, T>,
    ) -> Result<(), GpuError> {
        const DURING: &str = "copying to the GPU";
        assert!(
            target.len() >= data.len(),
            "copy_to_device: target too short"
        );
        let stream = self.stream.cu_stream();
        let (pointer, record) = target.device_ptr_mut(&self.stream);
        self.with_staging(|staging| {
            // Whole items per staging buffer.
            let item_bytes = std::mem::size_of::<T>().max(1);
            let items_per_chunk = (staging.bytes / item_bytes).max(1);
            for (index, piece) in data.chunks(items_per_chunk).enumerate() {
                let slot = index % staging.buffers.len();
                // The copy that last read this buffer must be done before it is refilled.
                staging.done[slot].synchronize().during(DURING)?;
                let buffer = staging.buffers[slot].as_mut_slice().during(DURING)?;
                let buffer = &mut buffer[..std::mem::size_of_val(piece)];
                fill(index * items_per_chunk, piece, buffer);
                let offset = (index * items_per_chunk * item_bytes) as u64;
                // SAFETY: `pointer + offset` lies inside `target` (its length was checked
                // above) with room for the piece; the source is page-locked and stays
                // untouched until `done[slot]`, recorded right after, has fired.
                unsafe { result::memcpy_htod_async(pointer + offset, &*buffer, stream) }
                    .during(DURING)?;
                staging.done[slot].record(&self.stream).during(DURING)?;
            }
            Ok(())
        })?;
        drop(record);
        Ok(())
    }

    /// Copies the start of `source` into `target` and waits for it. Large copies go
    /// through the pinned staging buffers, the GPU filling one while the host empties the
    /// other.
    pub(crate) fn copy_to_host<T: DeviceRepr>(
        &self,
        source: &CudaSlice<T>,
        target: &mut [T],
    ) -> Result<(), GpuError> {
        self.copy_to_host_on(&self.stream, source, target)
    }

    /// [`GpuContext::copy_to_host`] queued on `stream` (this context's `stream` or
    /// `copy_stream`).
    pub(crate) fn copy_to_host_on<T: DeviceRepr>(
        &self,
        stream: &Arc<CudaStream>,
        source: &CudaSlice<T>,
        target: &mut [T],
    ) -> Result<(), GpuError> {
        // SAFETY: the copy writes the bytes of `T` values (plain data, valid for any
        // bytes) and never de-initialises a byte.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(
                target.as_mut_ptr().cast::<MaybeUninit<u8>>(),
                std::mem::size_of_val(target),
            )
        };
        self.copy_bytes_to_host(stream, source, bytes)
    }

    /// The first `len` elements of `source` as a new vector, queued on `stream` and
    /// waited for. The copy writes each element once: filling the vector first (as a
    /// `&mut [T]` to copy into needs) cost 17-58 ms for the 500 MB of results of 1M
    /// gates, zeroing memory the allocator reused on one thread.
    ///
    /// The elements may be groups of the buffer's (`[f64; 4]` from a buffer of `f64`).
    pub(crate) fn download_vec<T: DeviceRepr, U: DeviceRepr>(
        &self,
        stream: &Arc<CudaStream>,
        source: &CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<U>, GpuError> {
        let mut values = Vec::<U>::with_capacity(len);
        let room = &mut values.spare_capacity_mut()[..len];
        // SAFETY: `room` is `len` elements of the vector's spare capacity, seen as their
        // bytes; writing any bytes there is sound.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(
                room.as_mut_ptr().cast::<MaybeUninit<u8>>(),
                std::mem::size_of_val(room),
            )
        };
        self.copy_bytes_to_host(stream, source, bytes)?;
        // SAFETY: the copy wrote every byte of the first `len` elements, and `U` (plain
        // data: integers, floats and arrays of them) is valid for any bytes.
        unsafe { values.set_len(len) };
        Ok(values)
    }

    /// Copies the first `target.len()` bytes of `source` into `target` and waits for
    /// them. Large copies go through the pinned staging buffers, the GPU filling one
    /// while the host empties the other.
    fn copy_bytes_to_host<T: DeviceRepr>(
        &self,
        stream: &Arc<CudaStream>,
        source: &CudaSlice<T>,
        target: &mut [MaybeUninit<u8>],
    ) -> Result<(), GpuError> {
        const DURING: &str = "copying from the GPU";
        assert!(
            std::mem::size_of::<T>() * source.len() >= target.len(),
            "copy_to_host: source too short"
        );
        let cu_stream = stream.cu_stream();
        let (pointer, record) = source.device_ptr(stream);
        let total = target.len();
        if total < STAGED_MIN_BYTES {
            if total > 0 {
                // SAFETY: `pointer` has `total` bytes of `source` after it, and `target`
                // has room for them; the host waits for the copy before returning.
                unsafe {
                    sys::cuMemcpyDtoHAsync_v2(target.as_mut_ptr().cast(), pointer, total, cu_stream)
                }
                .result()
                .during(DURING)?;
                stream.synchronize().during(DURING)?;
            }
            drop(record);
            return Ok(());
        }
        self.with_staging(|staging| {
            let (count, bytes) = (staging.buffers.len(), staging.bytes);
            let n_chunks = total.div_ceil(bytes);
            let chunk_range = |index: usize| index * bytes..((index + 1) * bytes).min(total);
            let queue = |staging: &mut Staging, index: usize| -> Result<(), GpuError> {
                let slot = index % count;
                let range = chunk_range(index);
                // The buffer's last transfer may have been queued on another stream.
                stream.wait(&staging.done[slot]).during(DURING)?;
                let buffer = staging.buffers[slot].as_mut_slice().during(DURING)?;
                // SAFETY: `pointer + range.start` lies inside `source` with `range.len()`
                // bytes after it; the host reads the page-locked buffer only after
                // `done[slot]`, recorded right after, has fired.
                unsafe {
                    result::memcpy_dtoh_async(
                        &mut buffer[..range.len()],
                        pointer + range.start as u64,
                        cu_stream,
                    )
                }
                .during(DURING)?;
                staging.done[slot].record(stream).during(DURING)
            };
            // Every buffer in flight; each one emptied is refilled with the chunk
            // `count` places on.
            for index in 0..count.min(n_chunks) {
                queue(staging, index)?;
            }
            for index in 0..n_chunks {
                let slot = index % count;
                staging.done[slot].synchronize().during(DURING)?;
                let range = chunk_range(index);
                let buffer = staging.buffers[slot].as_slice().during(DURING)?;
                parallel_copy_out(&mut target[range.clone()], &buffer[..range.len()]);
                if index + count < n_chunks {
                    queue(staging, index + count)?;
                }
            }
            Ok(())
        })?;
        drop(record);
        Ok(())
    }

    /// A new device buffer of `len` elements (at least one), every byte set to 0xFF: a NaN
    /// for floats, so an element a kernel forgot to write cannot pass for a result.
    pub(crate) fn allocate_poisoned<T: DeviceRepr>(
        &self,
        during: &'static str,
        len: usize,
    ) -> Result<CudaSlice<T>, GpuError> {
        let len = len.max(1);
        let bytes = (len * std::mem::size_of::<T>()) as u64;
        // SAFETY: the memory is uninitialised until the memset below fills every byte;
        // the buffers hold plain integers and floats, for which any bytes are valid.
        let mut buffer = unsafe { self.stream.alloc::<T>(len) }
            .map_err(|error| self.allocation_error(during, bytes, error))?;
        let stream = self.stream.cu_stream();
        let (pointer, record) = buffer.device_ptr_mut(&self.stream);
        // SAFETY: `pointer` addresses the `bytes` bytes just allocated on this stream, and
        // the memset is queued on the same stream.
        unsafe { result::memset_d8_async(pointer, 0xFF, bytes as usize, stream) }
            .during("filling a buffer")?;
        // The record marks the buffer as written once the memset is queued.
        drop(record);
        Ok(buffer)
    }

    /// Bytes of device memory an RC batch of `n_nets` nets and `n_nodes` nodes takes.
    pub fn rc_nets_bytes(n_nets: u32, n_nodes: u32) -> u64 {
        let (n_nets, n_nodes) = (n_nets as u64, n_nodes as u64);
        let per_node = 4 + 8 + 4 * N_CONDITIONS as u64 * 8;
        4 * (n_nets + 1) + n_nodes * per_node
    }

    /// Uploads an RC batch and allocates its outputs.
    pub fn upload_rc_nets(&self, batch: &RcNetBatch) -> Result<DeviceRcNets, GpuError> {
        const DURING: &str = "uploading RC nets";
        let (n_nets, n_nodes) = (batch.n_nets(), batch.n_nodes());
        self.ensure_free(DURING, Self::rc_nets_bytes(n_nets, n_nodes))?;
        let n_values = n_nodes as usize * N_CONDITIONS;
        Ok(DeviceRcNets {
            n_nets,
            n_nodes,
            net_offsets: self.upload(DURING, batch.net_offsets())?,
            parent: self.upload(DURING, batch.parent())?,
            res: self.upload(DURING, batch.res())?,
            cap: self.upload(DURING, batch.cap())?,
            load: self.allocate_poisoned(DURING, n_values)?,
            delay: self.allocate_poisoned(DURING, n_values)?,
            impulse: self.allocate_poisoned(DURING, n_values)?,
        })
    }

    /// Queues the `rc_nets` kernel on an uploaded batch (returns before it finishes).
    pub fn launch_rc_nets(&self, nets: &mut DeviceRcNets) -> Result<(), GpuError> {
        self.launch_rc_nets_with(nets, RcLaunch::default())
    }

    /// Queues the `rc_nets` kernel with an explicit launch shape.
    pub fn launch_rc_nets_with(
        &self,
        nets: &mut DeviceRcNets,
        shape: RcLaunch,
    ) -> Result<(), GpuError> {
        if nets.n_nets == 0 || nets.n_nodes == 0 {
            return Ok(());
        }
        let kernels = self.kernels()?;
        let n_items = nets.n_nets * N_CONDITIONS as u32;
        let mut shape = shape;
        shape.threads_per_block = (shape.threads_per_block / 32).clamp(1, 32) * 32;
        while shape.shared_bytes_per_block() > self.max_shared_bytes_per_block as u64 {
            shape.shared_nodes_per_net /= 2;
        }
        let shared_bytes = shape.shared_bytes_per_block() as u32;
        if shared_bytes > 48 * 1024 {
            // Above 48 KiB a kernel must opt in to its dynamic shared memory size.
            kernels
                .rc_nets
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shared_bytes as i32,
                )
                .during("raising the shared memory limit of rc_nets")?;
        }
        let blocks = (self.multiprocessor_count * shape.blocks_per_multiprocessor.max(1))
            .min(n_items.div_ceil(shape.threads_per_block))
            .max(1);
        let config = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (shape.threads_per_block, 1, 1),
            shared_mem_bytes: shared_bytes,
        };
        let mut launch = self.stream.launch_builder(&kernels.rc_nets);
        launch
            .arg(&nets.n_nets)
            .arg(&nets.net_offsets)
            .arg(&nets.parent)
            .arg(&nets.res)
            .arg(&nets.cap)
            .arg(&mut nets.load)
            .arg(&mut nets.delay)
            .arg(&mut nets.impulse)
            .arg(&shape.shared_nodes_per_net);
        // SAFETY: the arguments match the kernel's signature (`ptx_entry::rc_nets`) in
        // order and type. The batch was validated by `RcNetBatch::new` (ascending offsets
        // ending at the node count, local parents before their nodes) and the buffers
        // were sized from it: `n_nets + 1` offsets, `n_nodes` parents and resistances,
        // `4 * n_nodes` values for the capacitances and each output. The outputs are
        // separate allocations, so they overlap no input. Any grid covers the work: the
        // kernel loops over its items with the grid's stride. The block size is a multiple
        // of 32 (so of 4), and the launch provides the shared memory of its
        // `threads_per_block / 4` slots of `shared_nodes_per_net` nodes.
        unsafe { launch.launch(config) }.during("launching rc_nets")?;
        Ok(())
    }

    /// Copies the results of an uploaded batch back (waits for the kernel).
    pub fn download_rc_nets(&self, nets: &DeviceRcNets) -> Result<RcNetsOutput, GpuError> {
        let n_values = nets.n_nodes as usize * N_CONDITIONS;
        let download = |buffer: &CudaSlice<f64>| {
            let mut values = vec![0.0; n_values];
            self.copy_to_host(buffer, &mut values)?;
            Ok::<_, GpuError>(values)
        };
        Ok(RcNetsOutput {
            load: download(&nets.load)?,
            delay: download(&nets.delay)?,
            impulse: download(&nets.impulse)?,
        })
    }

    /// Runs the RC passes of a batch on this GPU: upload, launch, download.
    pub fn rc_nets(&self, batch: &RcNetBatch) -> Result<RcNetsOutput, GpuError> {
        let mut nets = self.upload_rc_nets(batch)?;
        self.launch_rc_nets(&mut nets)?;
        self.download_rc_nets(&nets)
    }

    /// Runs the `rc_nets` kernel `runs` times on an uploaded batch and returns each run's
    /// time in milliseconds, measured with device events around the launch.
    pub fn time_rc_nets(
        &self,
        nets: &mut DeviceRcNets,
        shape: RcLaunch,
        runs: usize,
    ) -> Result<Vec<f64>, GpuError> {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
            let start = self.context.new_event(flags).during("creating an event")?;
            let end = self.context.new_event(flags).during("creating an event")?;
            start.record(&self.stream).during("recording an event")?;
            self.launch_rc_nets_with(nets, shape)?;
            end.record(&self.stream).during("recording an event")?;
            end.synchronize().during("running rc_nets")?;
            times.push(f64::from(
                start.elapsed_ms(&end).during("reading an event")?,
            ));
        }
        Ok(times)
    }
}
