//! Allocation and transfers: buffers allocated from the device's pool and filled with
//! 0xFF bytes (a NaN for floats, so a value a kernel forgot to write cannot pass for a
//! result); uploads and downloads, transfers of 1 MiB or more passing through a ring of
//! pinned staging buffers, the host copying one with all its cores while the DMA engine
//! fills or empties the others.

use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::{Arc, OnceLock, TryLockError};
use std::time::Instant;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{result, CudaEvent, CudaStream, PinnedHostSlice};
use rayon::prelude::*;
use tachyon_kernels::launch::DeviceCopy;

use crate::buffer::DeviceBuffer;
use crate::context::{Event, GpuContext, HeldStreams, UploadClock};
use crate::error::{DuringExt, GpuError, LayoutError};

/// Transfers below this size go straight from pageable memory: staging them would cost
/// more in synchronisation than it saves.
const STAGED_MIN_BYTES: usize = 1 << 20;

/// Bytes each host thread copies into or out of a staging buffer at a time.
const HOST_COPY_BYTES: usize = 1 << 20;

/// The bytes of `values`, for a copy to write.
fn as_bytes_mut<T: DeviceCopy>(values: &mut [T]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: the copy writes the bytes of `T` values (plain data, valid for any bytes)
    // and never de-initialises a byte; the slice covers exactly `values`' memory.
    unsafe {
        std::slice::from_raw_parts_mut(
            values.as_mut_ptr().cast::<MaybeUninit<u8>>(),
            std::mem::size_of_val(values),
        )
    }
}

/// Page-locked host buffers that large transfers pass through, so that the DMA engine
/// copies at full speed without the driver staging pageable memory itself, and so that
/// the host copies one buffer (with all its cores) while the GPU copies the others.
/// H100, 1M gates, the forward downloads (about 600 MB), two runs each: 2 of 16 MiB
/// took 26-105 ms, 3 of 32 MiB 19-21 ms (20-61 ms in a later run); 2 or 4 of 64 MiB took
/// 23-24 ms but their pinning made the first upload 60-100 ms slower.
pub(crate) struct Staging {
    buffers: Vec<PinnedHostSlice<u8>>,
    /// Recorded on the stream after the transfer that last used each buffer.
    done: Vec<CudaEvent>,
    /// Bytes of each buffer.
    bytes: usize,
}

/// A check of one piece of an array, given the position of its first item.
pub type PieceCheck<'a, T> = dyn Fn(usize, &[T]) -> Result<(), LayoutError> + Sync + 'a;

/// Puts one piece of an array (given the position of its first item) into its staging
/// bytes.
type PieceFill<'a, T> = dyn FnMut(usize, &[T], &mut [u8]) + 'a;

/// Which stream a download is queued on.
#[derive(Clone, Copy)]
enum On<'a> {
    /// The main stream, behind everything queued.
    Main,
    /// The copy stream, behind `event` (recorded on the main stream), while the main
    /// stream computes on.
    CopyAfter(&'a Event),
}

impl GpuContext {
    /// Loads the kernels and allocates the pinned staging buffers now, rather than at
    /// the first launch and the first large transfer: a caller that opens the GPU beside
    /// other work (the command line opens it while it reads the design) takes both off
    /// the first update's path.
    pub fn warm_up(&self) -> Result<(), GpuError> {
        self.kernels()?;
        let streams = self.streams();
        self.with_staging(&streams, |_| Ok(()))?;
        Ok(())
    }

    /// A new buffer of `len` values, every byte set to 0xFF.
    pub fn allocate<T: DeviceCopy>(
        &self,
        during: &'static str,
        len: usize,
    ) -> Result<DeviceBuffer<T>, GpuError> {
        let bytes = DeviceBuffer::<T>::bytes_of(len).max(1);
        let streams = self.streams();
        let started = Instant::now();
        // SAFETY: the memory is uninitialised until the memset below fills every byte;
        // the buffers hold plain data, for which any bytes are valid.
        let memory = unsafe { streams.main.alloc::<u8>(bytes) }
            .map_err(|error| self.allocation_error(during, bytes as u64, error))?;
        let buffer = DeviceBuffer::new(memory, len, self.streams_lock());
        // SAFETY: the address starts the `bytes` bytes just allocated on this stream, and
        // the memset is queued on the same stream.
        unsafe { result::memset_d8_async(buffer.address, 0xFF, bytes, streams.main.cu_stream()) }
            .during("filling a buffer")?;
        UploadClock::add(&self.upload_clock.allocating_ns, started);
        Ok(buffer)
    }

    /// Copies `data` to a new buffer.
    pub fn upload<T: DeviceCopy>(
        &self,
        during: &'static str,
        data: &[T],
    ) -> Result<DeviceBuffer<T>, GpuError> {
        let buffer = self.allocate::<T>(during, data.len())?;
        self.write(&buffer, 0, data)?;
        Ok(buffer)
    }

    /// [`GpuContext::upload`] that also runs `check` on every piece of `data` as it
    /// copies it (`check(first, piece)`, `first` the position of the piece's first
    /// item), on the host threads that copy the piece, while it is in their caches: one
    /// pass over the data instead of two. The copy completes either way; the first
    /// failing piece's error, in order, is returned after it as a layout error, before
    /// any kernel can read the buffer.
    pub fn upload_checked<T: DeviceCopy>(
        &self,
        during: &'static str,
        data: &[T],
        check: &PieceCheck<'_, T>,
    ) -> Result<DeviceBuffer<T>, GpuError> {
        let buffer = self.allocate::<T>(during, data.len())?;
        if std::mem::size_of_val(data) < STAGED_MIN_BYTES {
            check(0, data).map_err(GpuError::Layout)?;
            self.write(&buffer, 0, data)?;
            return Ok(buffer);
        }
        let mut first_error = None;
        self.write_staged(&buffer, 0, data, &mut |first, piece, staged| {
            if let Err(error) = parallel_copy_checked(staged, first, piece, check) {
                first_error.get_or_insert(error);
            }
        })?;
        match first_error {
            Some(error) => Err(GpuError::Layout(error)),
            None => Ok(buffer),
        }
    }

    /// Queues a copy of `data` into `buffer` from value `first` on; returns once `data`
    /// is no longer needed (the last piece may still be in flight).
    ///
    /// # Panics
    ///
    /// When `data` does not fit there.
    pub fn write<T: DeviceCopy>(
        &self,
        buffer: &DeviceBuffer<T>,
        first: usize,
        data: &[T],
    ) -> Result<(), GpuError> {
        assert!(
            first + data.len() <= buffer.len(),
            "write: {} values from {first} do not fit a buffer of {}",
            data.len(),
            buffer.len()
        );
        if std::mem::size_of_val(data) >= STAGED_MIN_BYTES {
            return self.write_staged(buffer, first, data, &mut |_, piece, staged| {
                parallel_copy(staged, as_bytes(piece))
            });
        }
        if !data.is_empty() {
            let target = buffer.address + DeviceBuffer::<T>::bytes_of(first) as u64;
            let streams = self.streams();
            // SAFETY: `target` lies inside `buffer` with room for `data` (checked above);
            // the copy from pageable memory returns once the driver has taken the bytes.
            unsafe { result::memcpy_htod_async(target, as_bytes(data), streams.main.cu_stream()) }
                .during("copying to the GPU")?;
        }
        Ok(())
    }

    /// Sets the values `range` of `buffer` to zero bytes.
    pub fn zero<T: DeviceCopy>(
        &self,
        buffer: &DeviceBuffer<T>,
        range: Range<usize>,
    ) -> Result<(), GpuError> {
        assert!(range.start <= range.end && range.end <= buffer.len());
        let bytes = DeviceBuffer::<T>::bytes_of(range.len());
        if bytes == 0 {
            return Ok(());
        }
        let start = buffer.address + DeviceBuffer::<T>::bytes_of(range.start) as u64;
        let streams = self.streams();
        // SAFETY: the range lies inside the buffer; queued on its stream.
        unsafe { result::memset_d8_async(start, 0, bytes, streams.main.cu_stream()) }
            .during("clearing a buffer")
    }

    /// A new buffer holding a copy of `source`.
    pub fn duplicate<T: DeviceCopy>(
        &self,
        during: &'static str,
        source: &DeviceBuffer<T>,
    ) -> Result<DeviceBuffer<T>, GpuError> {
        self.grown(during, source, source.len(), source.len())
    }

    /// A new buffer of `len` values whose first `keep` values are copied from `source`
    /// (on the device), the others 0xFF bytes as from [`GpuContext::allocate`]: an
    /// array grown in place of `source` (`keep` at most both lengths).
    pub fn grown<T: DeviceCopy>(
        &self,
        during: &'static str,
        source: &DeviceBuffer<T>,
        len: usize,
        keep: usize,
    ) -> Result<DeviceBuffer<T>, GpuError> {
        assert!(
            keep <= source.len() && keep <= len,
            "grown: keep beyond a buffer"
        );
        let copy = self.allocate::<T>(during, len)?;
        let bytes = DeviceBuffer::<T>::bytes_of(keep);
        if bytes > 0 {
            let streams = self.streams();
            // SAFETY: both buffers hold at least `bytes` bytes and are distinct
            // allocations; the copy is queued on their stream, behind the fill.
            unsafe {
                result::memcpy_dtod_async(
                    copy.address,
                    source.address,
                    bytes,
                    streams.main.cu_stream(),
                )
            }
            .during(during)?;
        }
        Ok(copy)
    }

    /// The values `range` of `buffer` as a new vector, after the work queued so far
    /// (waits for it).
    pub fn download<T: DeviceCopy>(
        &self,
        buffer: &DeviceBuffer<T>,
        range: Range<usize>,
    ) -> Result<Vec<T>, GpuError> {
        self.download_vec(On::Main, buffer, range)
    }

    /// The first `len` values of `buffer` as a new vector, copied on the copy stream
    /// once `event` has fired, while the main stream computes on (waits for the copy).
    pub fn download_after<T: DeviceCopy>(
        &self,
        event: &Event,
        buffer: &DeviceBuffer<T>,
        len: usize,
    ) -> Result<Vec<T>, GpuError> {
        self.download_vec(On::CopyAfter(event), buffer, 0..len)
    }

    /// Copies the first `target.len()` values of `buffer` into `target` after the work
    /// queued so far (waits for it): for a host array kept between downloads, whose
    /// pages are mapped already.
    pub fn download_into<T: DeviceCopy>(
        &self,
        buffer: &DeviceBuffer<T>,
        target: &mut [T],
    ) -> Result<(), GpuError> {
        self.copy_to_host(On::Main, buffer, 0, as_bytes_mut(target))
    }

    /// Copies the first `target.len()` values of `buffer` into `target` on the copy
    /// stream once `event` has fired (waits for the copy).
    pub fn download_into_after<T: DeviceCopy>(
        &self,
        event: &Event,
        buffer: &DeviceBuffer<T>,
        target: &mut [T],
    ) -> Result<(), GpuError> {
        self.copy_to_host(On::CopyAfter(event), buffer, 0, as_bytes_mut(target))
    }

    /// The values `range` of `buffer` as a new vector, written once by the copy: filling
    /// the vector first cost 17-58 ms for the 500 MB of results of 1M gates, zeroing
    /// memory the allocator reused on one thread.
    fn download_vec<T: DeviceCopy>(
        &self,
        on: On<'_>,
        buffer: &DeviceBuffer<T>,
        range: Range<usize>,
    ) -> Result<Vec<T>, GpuError> {
        let len = range.len();
        let mut values = Vec::<T>::with_capacity(len);
        let room = &mut values.spare_capacity_mut()[..len];
        // SAFETY: `room` is `len` elements of the vector's spare capacity, seen as their
        // bytes; writing any bytes there is sound.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(
                room.as_mut_ptr().cast::<MaybeUninit<u8>>(),
                std::mem::size_of_val(room),
            )
        };
        self.copy_to_host(on, buffer, range.start, bytes)?;
        // SAFETY: the copy wrote every byte of the first `len` elements, and `T` is
        // plain data, valid for any bytes.
        unsafe { values.set_len(len) };
        Ok(values)
    }

    /// Copies `target.len()` bytes of `source` from value `first` on into `target` and
    /// waits for them. Large copies go through the pinned staging buffers, the GPU
    /// filling one while the host empties another.
    fn copy_to_host<T: DeviceCopy>(
        &self,
        on: On<'_>,
        source: &DeviceBuffer<T>,
        first: usize,
        target: &mut [MaybeUninit<u8>],
    ) -> Result<(), GpuError> {
        const DURING: &str = "copying from the GPU";
        let start = DeviceBuffer::<T>::bytes_of(first);
        assert!(
            start + target.len() <= DeviceBuffer::<T>::bytes_of(source.len()),
            "download: past the end of the buffer"
        );
        // Held until the copy is done and, for a staged one, the staging buffers free.
        let streams = self.streams();
        let stream: &Arc<CudaStream> = match on {
            On::Main => &streams.main,
            On::CopyAfter(event) => {
                streams.copy.wait(&event.0).during(DURING)?;
                &streams.copy
            }
        };
        let cu_stream = stream.cu_stream();
        let pointer = source.address + start as u64;
        let total = target.len();
        let direct = |target: &mut [MaybeUninit<u8>]| -> Result<(), GpuError> {
            if target.is_empty() {
                return Ok(());
            }
            // SAFETY: `pointer` has `target.len()` bytes of `source` after it (asserted
            // above), and `target` has room for them; the host waits for the copy before
            // returning.
            unsafe {
                cudarc::driver::sys::cuMemcpyDtoHAsync_v2(
                    target.as_mut_ptr().cast(),
                    pointer,
                    target.len(),
                    cu_stream,
                )
            }
            .result()
            .during(DURING)?;
            stream.synchronize().during(DURING)
        };
        if total < STAGED_MIN_BYTES {
            return direct(target);
        }
        let staged = self.with_staging(&streams, |staging| {
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
        match staged {
            Some(()) => Ok(()),
            None => direct(target),
        }
    }

    /// The staged copy of [`GpuContext::write`], with `fill(first, piece, staged)`
    /// putting each piece of `data` (its items from position `first`) into its pinned
    /// staging bytes.
    fn write_staged<T: DeviceCopy>(
        &self,
        buffer: &DeviceBuffer<T>,
        first: usize,
        data: &[T],
        fill: &mut PieceFill<'_, T>,
    ) -> Result<(), GpuError> {
        const DURING: &str = "copying to the GPU";
        let base = buffer.address + DeviceBuffer::<T>::bytes_of(first) as u64;
        let streams = self.streams();
        let stream = streams.main.cu_stream();
        let staged = self.with_staging(&streams, |staging| {
            // Whole items per staging buffer.
            let item_bytes = std::mem::size_of::<T>().max(1);
            let items_per_chunk = (staging.bytes / item_bytes).max(1);
            for (index, piece) in data.chunks(items_per_chunk).enumerate() {
                let slot = index % staging.buffers.len();
                // The copy that last read this buffer must be done before it is refilled.
                let waiting = Instant::now();
                staging.done[slot].synchronize().during(DURING)?;
                UploadClock::add(&self.upload_clock.waiting_ns, waiting);
                let filling = Instant::now();
                let pinned = staging.buffers[slot].as_mut_slice().during(DURING)?;
                let pinned = &mut pinned[..std::mem::size_of_val(piece)];
                fill(index * items_per_chunk, piece, pinned);
                UploadClock::add(&self.upload_clock.filling_ns, filling);
                self.upload_clock.staged_bytes.fetch_add(
                    std::mem::size_of_val(piece) as u64,
                    std::sync::atomic::Ordering::Relaxed,
                );
                let offset = (index * items_per_chunk * item_bytes) as u64;
                // SAFETY: `base + offset` lies inside `buffer` (the caller checked that
                // `data` fits) with room for the piece; the source is page-locked and
                // stays untouched until `done[slot]`, recorded right after, has fired.
                unsafe { result::memcpy_htod_async(base + offset, &*pinned, stream) }
                    .during(DURING)?;
                staging.done[slot].record(&streams.main).during(DURING)?;
            }
            Ok(())
        })?;
        if staged.is_none() {
            // The staging buffers are this thread's already (see `with_staging`): one
            // pageable copy, which returns once the driver has taken the bytes.
            let mut bytes = vec![0u8; std::mem::size_of_val(data)];
            fill(0, data, &mut bytes);
            // SAFETY: as for a staged piece, with `data` whole.
            unsafe { result::memcpy_htod_async(base, &bytes[..], stream) }.during(DURING)?;
        }
        Ok(())
    }

    /// Runs `transfer` with the staging buffers, allocating them on first use. Only
    /// with the streams held (`_held`): their lock comes before the staging buffers'.
    ///
    /// `None` (and `transfer` not run) when the buffers are in use further up this very
    /// thread's stack (no other thread can hold them while this one holds the streams).
    /// A holder runs no other job while it copies (`on_copy_threads`), so this is a
    /// guard, not a path taken: should a nested transfer come, it copies directly,
    /// unstaged, where waiting would deadlock.
    fn with_staging<R>(
        &self,
        _held: &HeldStreams<'_>,
        transfer: impl FnOnce(&mut Staging) -> Result<R, GpuError>,
    ) -> Result<Option<R>, GpuError> {
        const DURING: &str = "allocating pinned staging buffers";
        let mut staging = match self.staging.try_lock() {
            Ok(staging) => staging,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return Ok(None),
        };
        if staging.is_none() {
            let (count, bytes) = (self.config().staging_buffers, self.config().staging_bytes);
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
            Some(staging) => transfer(staging).map(Some),
            None => unreachable!("the staging buffers were just allocated"),
        }
    }
}

/// Copies `from` into `to` (of equal length) with every core of the host: one thread
/// cannot keep up with the DMA engine.
fn parallel_copy(to: &mut [u8], from: &[u8]) {
    on_copy_threads(|| {
        to.par_chunks_mut(HOST_COPY_BYTES)
            .zip(from.par_chunks(HOST_COPY_BYTES))
            .for_each(|(to, from)| to.copy_from_slice(from))
    });
}

/// Runs `copy` (host copies with rayon) on the runtime's own copy threads, not the
/// caller's pool. The caller holds the streams' lock, and the global pool's workers may
/// be blocked waiting for it (other users' GPU work run from rayon jobs): a copy queued
/// behind them there would never run. The copy threads only copy and check, never
/// wait for the lock, so the holder always gets its copy done. Without them (the pool
/// could not be started: logged once) the caller's pool copies.
///
/// The holder waits without running anything else. A rayon worker that calls
/// `install` on another pool runs its own pool's jobs while it waits; a job run so,
/// under the lock, can split work to a second worker that then blocks on the lock,
/// and wait for that work: the holder never gets back to release the lock (the hang
/// of two timers sharing a GPU). So a worker hands the copy to a plain thread of its
/// own, which waits for the copy threads without taking jobs.
fn on_copy_threads<R: Send>(copy: impl FnOnce() -> R + Send) -> R {
    static COPY_THREADS: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    let pool = COPY_THREADS.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .thread_name(|index| format!("tachyon-gpu-copy-{index}"))
            .build()
            .map_err(|error| tracing::warn!("no copy threads for GPU transfers: {error}"))
            .ok()
    });
    match pool {
        Some(pool) if rayon::current_thread_index().is_some() => {
            without_taking_jobs(|| pool.install(copy))
        }
        Some(pool) => pool.install(copy),
        None => copy(),
    }
}

/// Runs `work` on a new plain thread and waits for it, so that the calling rayon
/// worker takes no jobs meanwhile (about 20 us for the thread; copies are 1 MB and
/// more). If no thread can be started, `work` runs on the caller (logged).
fn without_taking_jobs<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    let work = std::sync::Mutex::new(Some(work));
    let take = || {
        work.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    };
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("tachyon-gpu-copy-wait".into())
            .spawn_scoped(scope, || take().map(|work| work()));
        match thread {
            Ok(thread) => match thread.join() {
                Ok(Some(result)) => result,
                Ok(None) => unreachable!("the thread runs the work, taken by no one else"),
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(error) => {
                tracing::warn!("no thread to wait for a GPU transfer's copy: {error}");
                take().expect("not taken: the thread did not start")()
            }
        }
    })
}

/// [`parallel_copy`] of `items` (from position `first` of their array) into `to`,
/// running `check` on each piece a thread copies; the first failing piece's error in
/// order.
fn parallel_copy_checked<T: DeviceCopy>(
    to: &mut [u8],
    first: usize,
    items: &[T],
    check: &PieceCheck<'_, T>,
) -> Result<(), LayoutError> {
    let items_per_piece = (HOST_COPY_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    let piece_bytes = items_per_piece * std::mem::size_of::<T>();
    let results: Vec<Result<(), LayoutError>> = on_copy_threads(|| {
        to.par_chunks_mut(piece_bytes.max(1))
            .zip(items.par_chunks(items_per_piece))
            .enumerate()
            .map(|(index, (to, piece))| {
                to.copy_from_slice(as_bytes(piece));
                check(first + index * items_per_piece, piece)
            })
            .collect()
    });
    results.into_iter().collect()
}

/// [`parallel_copy`] into memory that need not be initialised.
fn parallel_copy_out(to: &mut [MaybeUninit<u8>], from: &[u8]) {
    assert_eq!(to.len(), from.len(), "parallel_copy_out: lengths differ");
    on_copy_threads(|| {
        to.par_chunks_mut(HOST_COPY_BYTES)
            .zip(from.par_chunks(HOST_COPY_BYTES))
            .for_each(|(to, from)| {
                // SAFETY: the chunks have the same length (equal slices cut alike), and a
                // shared and an exclusive borrow cannot overlap.
                unsafe {
                    std::ptr::copy_nonoverlapping(from.as_ptr(), to.as_mut_ptr().cast(), from.len())
                }
            })
    });
}

/// `data` as its bytes.
fn as_bytes<T: DeviceCopy>(data: &[T]) -> &[u8] {
    // SAFETY: `DeviceCopy` types are plain data without padding, so every byte of the
    // slice is initialised; the byte slice borrows `data`.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::streams::Locked;

    /// The holder of a context's lock gets its host copies done even when every worker
    /// of the global pool is blocked waiting for that lock (other users' GPU work run
    /// from rayon jobs): the copies run on the runtime's own threads. Without a GPU.
    #[test]
    fn copies_under_the_lock_finish_while_the_global_pool_waits_for_it() {
        let lock = Locked::new(());
        let (held, holding) = mpsc::channel();
        let (go, start) = mpsc::channel::<()>();
        let (done, finished) = mpsc::channel();
        let holder = lock.share();
        std::thread::spawn(move || {
            let _held = holder.hold();
            held.send(()).ok();
            start.recv().ok();
            let from: Vec<u8> = (0..4 * HOST_COPY_BYTES + 5).map(|i| i as u8).collect();
            let mut to = vec![0u8; from.len()];
            parallel_copy(&mut to, &from);
            let mut out = vec![MaybeUninit::<u8>::uninit(); from.len()];
            parallel_copy_out(&mut out, &from);
            let check = |_: usize, _: &[u8]| Ok(());
            let checked = parallel_copy_checked(&mut to, 0, &from, &check);
            done.send(checked.is_ok() && to == from).ok();
        });
        holding.recv().expect("the holder started");
        // Every worker of the global pool waits for the lock.
        let workers = rayon::current_num_threads();
        let waiting = std::sync::Arc::new(AtomicUsize::new(0));
        for _ in 0..workers {
            let (lock, waiting) = (lock.share(), std::sync::Arc::clone(&waiting));
            rayon::spawn(move || {
                waiting.fetch_add(1, Ordering::SeqCst);
                drop(lock.hold());
            });
        }
        while waiting.load(Ordering::SeqCst) < workers {
            std::thread::sleep(Duration::from_millis(1));
        }
        go.send(()).ok();
        let copied = finished.recv_timeout(Duration::from_secs(30));
        assert_eq!(copied, Ok(true), "the copies did not finish under the lock");
    }

    /// A rayon worker waiting for its copy (holding the lock) runs no other job
    /// meanwhile: a job run there could wait for work that waits for the lock. On a pool
    /// of one worker, a job queued before the copy can only run after the caller's job
    /// ends, not during the copy. Without a GPU.
    #[test]
    fn a_worker_waiting_for_its_copy_takes_no_other_job() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a pool of one worker");
        let queued_job_ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ran_during_copy = pool.install(|| {
            let flag = std::sync::Arc::clone(&queued_job_ran);
            // Queued on this worker's own deque: the first job it would take.
            rayon::spawn(move || flag.store(true, Ordering::SeqCst));
            let from: Vec<u8> = (0..8 * HOST_COPY_BYTES).map(|i| i as u8).collect();
            let mut to = vec![0u8; from.len()];
            parallel_copy(&mut to, &from);
            assert_eq!(to, from);
            queued_job_ran.load(Ordering::SeqCst)
        });
        assert!(
            !ran_during_copy,
            "the worker ran a queued job while it waited for its copy"
        );
    }
}
