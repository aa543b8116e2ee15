//! `GpuContext`: one CUDA context per device, its streams and memory pool.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cudarc::driver::sys::{self, CUdevice_attribute, CUevent_flags, CUresult};
use cudarc::driver::{result, CudaContext, CudaEvent, CudaStream, DriverError};

use crate::config::GpuConfig;
use crate::device::driver_present;
use crate::error::{DuringExt, GpuError};
use crate::launch::Registry;
use crate::streams::Locked;
use crate::transfer::Staging;

/// The contexts opened so far, one per device ordinal, shared by the whole process.
static CONTEXTS: Mutex<Vec<Arc<GpuContext>>> = Mutex::new(Vec::new());

/// One GPU: its CUDA context, a stream all work is queued on and a second one for
/// downloads, the kernels (loaded on first use) and the staging buffers of large
/// transfers. Safe to share between threads and users: every operation that queues on
/// the streams holds their lock (see `streams`), a capture for its whole length.
pub struct GpuContext {
    ordinal: u32,
    name: String,
    multiprocessor_count: u32,
    /// The most dynamic shared memory one block may ask for (after opting in).
    max_shared_bytes_per_block: u32,
    config: GpuConfig,
    pub(crate) context: Arc<CudaContext>,
    /// The streams, reached only through their lock ([`GpuContext::streams`]), which
    /// comes before `kernel_load` and `staging` in lock order.
    streams: Locked<Streams>,
    pub(crate) kernels: OnceLock<Registry>,
    /// Serialises the first load of the kernels, so the module is loaded once.
    pub(crate) kernel_load: Mutex<()>,
    /// Allocated on the first large transfer; the lock serialises transfers using it.
    pub(crate) staging: Mutex<Option<Staging>>,
    /// Where the host's time in uploads went, summed ([`GpuContext::upload_clock`]).
    pub(crate) upload_clock: UploadClock,
}

/// The host's time in uploads since the context opened, summed over all threads:
/// allocating (and queueing the fill of) buffers, filling the pinned staging buffers,
/// and waiting for the copy engine to free one; and the bytes staged. A caller reads
/// it before and after a step to see what bounds that step's copies.
#[derive(Debug, Default)]
pub(crate) struct UploadClock {
    pub(crate) allocating_ns: std::sync::atomic::AtomicU64,
    pub(crate) filling_ns: std::sync::atomic::AtomicU64,
    pub(crate) waiting_ns: std::sync::atomic::AtomicU64,
    pub(crate) staged_bytes: std::sync::atomic::AtomicU64,
}

/// A reading of a context's upload clock ([`GpuContext::upload_clock`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UploadTimes {
    pub allocating: std::time::Duration,
    pub filling: std::time::Duration,
    pub waiting: std::time::Duration,
    pub staged_bytes: u64,
}

impl UploadTimes {
    /// What passed from `earlier` to this reading.
    pub fn since(&self, earlier: &UploadTimes) -> UploadTimes {
        UploadTimes {
            allocating: self.allocating.saturating_sub(earlier.allocating),
            filling: self.filling.saturating_sub(earlier.filling),
            waiting: self.waiting.saturating_sub(earlier.waiting),
            staged_bytes: self.staged_bytes.saturating_sub(earlier.staged_bytes),
        }
    }
}

impl UploadClock {
    /// Adds the time since `started` to `counter`.
    pub(crate) fn add(counter: &std::sync::atomic::AtomicU64, started: std::time::Instant) {
        let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        counter.fetch_add(ns, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A context's two streams.
pub(crate) struct Streams {
    /// All kernels, allocations, uploads, frees and captures.
    pub(crate) main: Arc<CudaStream>,
    /// Downloads of results that are final while `main` computes on (each after an
    /// [`Event`] recorded on `main` behind the kernels that wrote them).
    pub(crate) copy: Arc<CudaStream>,
}

/// The streams while their lock is held.
pub(crate) type HeldStreams<'a> = parking_lot::ReentrantMutexGuard<'a, Streams>;

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

/// A point in the main stream's work: recorded behind some launches, waited for by the
/// copy stream before it downloads what they wrote.
pub struct Event(pub(crate) CudaEvent);

impl fmt::Debug for Event {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("Event")
    }
}

impl GpuContext {
    /// The context of GPU `ordinal`, created on first use with `config` and shared
    /// afterwards (the first opening's configuration holds). Fails cleanly (never
    /// panics) when there is no driver or no such GPU.
    pub fn open(ordinal: u32, config: &GpuConfig) -> Result<Arc<GpuContext>, GpuError> {
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
        // SAFETY: every buffer of this context is allocated, written and freed on the
        // main stream alone, by whichever thread or user, each under the streams' lock
        // (a buffer's drop included), so their order on the stream is the order of the
        // host's calls. The only other stream, the copy stream, just reads buffers into
        // host memory, each copy queued (under the same lock) after waiting on an event
        // recorded on the main stream behind the buffer's writers, and the host waits for
        // that copy before anything else can touch or free the buffer. Captures hold the
        // lock from begin to end, so no other thread's work (nor a free) enters a graph.
        unsafe { context.disable_event_tracking() };
        // A stream of our own rather than the legacy default stream: work on it can be
        // captured into CUDA graphs and does not serialise with other libraries' work.
        let stream = context.new_stream().during("creating a stream")?;
        let copy_stream = context.new_stream().during("creating a stream")?;
        if context.has_async_alloc() && config.keep_freed_memory {
            keep_freed_memory(&context)?;
        }
        let opened = Arc::new(GpuContext {
            ordinal,
            name,
            multiprocessor_count,
            max_shared_bytes_per_block,
            config: *config,
            context,
            streams: Locked::new(Streams {
                main: stream,
                copy: copy_stream,
            }),
            kernels: OnceLock::new(),
            kernel_load: Mutex::new(()),
            staging: Mutex::new(None),
            upload_clock: UploadClock::default(),
        });
        contexts.push(Arc::clone(&opened));
        Ok(opened)
    }

    pub fn ordinal(&self) -> u32 {
        self.ordinal
    }

    /// The host's time in uploads so far ([`UploadTimes`]).
    pub fn upload_clock(&self) -> UploadTimes {
        use std::sync::atomic::Ordering::Relaxed;
        let clock = &self.upload_clock;
        let duration =
            |ns: &std::sync::atomic::AtomicU64| std::time::Duration::from_nanos(ns.load(Relaxed));
        UploadTimes {
            allocating: duration(&clock.allocating_ns),
            filling: duration(&clock.filling_ns),
            waiting: duration(&clock.waiting_ns),
            staged_bytes: clock.staged_bytes.load(Relaxed),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn multiprocessor_count(&self) -> u32 {
        self.multiprocessor_count
    }

    /// The most dynamic shared memory a block of a launch may have.
    pub fn max_shared_bytes_per_block(&self) -> u32 {
        self.max_shared_bytes_per_block
    }

    /// The configuration this GPU was opened with.
    pub fn config(&self) -> &GpuConfig {
        &self.config
    }

    /// `(free, total)` device memory in bytes; free counts the memory that buffers of
    /// this process freed and its pool keeps for the next ones ([`keep_freed_memory`]),
    /// at most [`GpuConfig::memory_limit`].
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
        let free = free as u64 + kept;
        Ok((
            self.config
                .memory_limit
                .map_or(free, |limit| free.min(limit)),
            total as u64,
        ))
    }

    /// Makes the device's pool hold `bytes` (allocated and freed at once) unless it
    /// holds them already, so that the allocations to come take memory the pool has
    /// instead of mapping new memory one by one: a caller that knows a large upload is
    /// coming runs this beside the host work before it. Does nothing when freed memory
    /// goes back to the driver (no pool, or [`GpuConfig::keep_freed_memory`] off) or
    /// when that much is not free (the upload then fails or not as it would have).
    pub fn reserve(&self, bytes: u64) -> Result<(), GpuError> {
        if !(self.context.has_async_alloc() && self.config.keep_freed_memory) {
            return Ok(());
        }
        let kept = kept_pool_memory(&self.context)?;
        let (free, _) = self.memory()?;
        if kept >= bytes || bytes > free {
            return Ok(());
        }
        let streams = self.streams();
        let missing = usize::try_from(bytes - kept).unwrap_or(usize::MAX);
        // SAFETY: the memory is never read or written: it is freed (back to the pool,
        // on the same stream) as soon as it is allocated.
        let memory = unsafe { streams.main.alloc::<u8>(missing) }
            .map_err(|error| self.allocation_error("reserving device memory", bytes, error))?;
        drop(memory);
        Ok(())
    }

    /// Fails with [`GpuError::OutOfMemory`] unless `needed` bytes are free.
    pub fn ensure_free(&self, during: &'static str, needed: u64) -> Result<(), GpuError> {
        let (free, total) = self.memory()?;
        if needed > free {
            return Err(self.out_of_memory(during, needed, free, total));
        }
        Ok(())
    }

    /// The error for work that does not fit: `needed` bytes (`u64::MAX`: beyond what a
    /// layout's `u32` indices can address).
    pub fn out_of_room(&self, during: &'static str, needed: u64) -> GpuError {
        let (free, total) = self.memory().unwrap_or((0, 0));
        self.out_of_memory(during, needed, free, total)
    }

    fn out_of_memory(&self, during: &'static str, needed: u64, free: u64, total: u64) -> GpuError {
        GpuError::OutOfMemory {
            ordinal: self.ordinal,
            during,
            needed,
            free,
            total,
        }
    }

    /// Turns an allocation failure into [`GpuError::OutOfMemory`] where it is one.
    pub(crate) fn allocation_error(
        &self,
        during: &'static str,
        needed: u64,
        error: DriverError,
    ) -> GpuError {
        if error.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            self.out_of_room(during, needed)
        } else {
            GpuError::Driver {
                during,
                source: error,
            }
        }
    }

    /// The streams, locked until the guard drops (reentrant: the thread holding them
    /// may take them again). Every operation that queues work holds them.
    pub(crate) fn streams(&self) -> HeldStreams<'_> {
        self.streams.hold()
    }

    /// Another handle to the streams' lock, for a buffer to free its memory under it.
    pub(crate) fn streams_lock(&self) -> Locked<Streams> {
        self.streams.share()
    }

    /// Waits until all work queued on this GPU has finished (other users' too: the
    /// stream is shared). Holds the streams meanwhile, so no capture can be under way
    /// (waiting on a capturing stream would invalidate it).
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.streams()
            .main
            .synchronize()
            .during("waiting for the GPU")
    }

    /// With [`GpuConfig::sync_steps`], waits for the queued work so that the debug log
    /// can tell kernel time from transfer time; returns whether it waited.
    pub fn sync_step(&self) -> Result<bool, GpuError> {
        if !self.config.sync_steps {
            return Ok(false);
        }
        self.synchronize()?;
        Ok(true)
    }

    /// A new event for ordering the copy stream behind the main stream (no timing).
    pub fn new_event(&self) -> Result<Event, GpuError> {
        let flags = Some(CUevent_flags::CU_EVENT_DISABLE_TIMING);
        self.context
            .new_event(flags)
            .map(Event)
            .during("creating an event")
    }

    /// Records `event` behind the work queued so far on the main stream.
    pub fn record(&self, event: &Event) -> Result<(), GpuError> {
        event
            .0
            .record(&self.streams().main)
            .during("recording an event")
    }

    /// Runs `work` with the main stream's time measured by device events around it, in
    /// milliseconds (waits for the work). The streams are held throughout, so the time
    /// is `work`'s alone; `work` should only launch (see [`GpuContext::run_replayed`]).
    pub fn time(&self, work: impl FnOnce() -> Result<(), GpuError>) -> Result<f64, GpuError> {
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.context.new_event(flags).during("creating an event")?;
        let end = self.context.new_event(flags).during("creating an event")?;
        let streams = self.streams();
        start.record(&streams.main).during("recording an event")?;
        work()?;
        end.record(&streams.main).during("recording an event")?;
        end.synchronize().during("waiting for timed work")?;
        Ok(f64::from(
            start.elapsed_ms(&end).during("reading an event")?,
        ))
    }
}

/// Lets the device's memory pool, which buffers are allocated from and freed to in
/// stream order, keep freed memory instead of handing it back to the driver at each
/// synchronisation (its default). An update allocates and frees the same buffers as the
/// one before (1M gates: about 1.5 GB), and mapping them afresh each time cost more than
/// reusing them. The memory stays with the process; [`GpuContext::memory`] counts it
/// as free.
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
