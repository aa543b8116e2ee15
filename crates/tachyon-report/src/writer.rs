//! The ordered pipelined writer: items (paths, in slack order) are formatted by
//! collector threads and written by one writer thread strictly in order.
//!
//! The items are handed out in workgroups: a collector claims the next workgroup (one
//! atomic `fetch_add`), formats each of its items into the workgroup's buffer and sends
//! the buffer to the writer. The writer (the calling thread) writes the buffers in item
//! order as they arrive, holding early arrivals until their turn, and drops each buffer
//! once written. Each item has a status in a ring of `window` slots (pending,
//! collecting, ready, written): a collector claims the slots of its workgroup and may
//! only do so when the items that held those slots one lap earlier are written, so the
//! collectors never run more than `window` items ahead of the writer and memory stays
//! bounded whatever the item count.
//!
//! The buffers travel over a channel (std's `mpsc`, lock-free while nobody sleeps):
//! moving a `Vec` from one thread to another through a shared slot would need a lock
//! or `unsafe` code, which the workspace denies. The status ring, the claim counter and
//! the written counter are plain atomics; nothing on the hot path takes a mutex.
//!
//! Every item is formatted on its own (its bytes depend on its index only) and the
//! buffers are written in index order, so the output is byte-identical for any thread
//! count, workgroup size and window.

use std::io::{self, IoSlice, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// An item not claimed yet (or, in the ring, a slot whose item has been written).
const PENDING: u8 = 0;
/// A collector is formatting the item.
const COLLECTING: u8 = 1;
/// The item's bytes are formatted and on their way to the writer.
const READY: u8 = 2;
/// The item's bytes are written; its slot is free for the item one lap later.
const WRITTEN: u8 = 3;

/// The single-threaded writer formats into a buffer of this size before each write.
const OUTPUT_BUFFER_BYTES: usize = 1 << 20;

/// The pipelined writer hands the buffers of consecutive workgroups to one vectored
/// write, up to this many buffers or [`BATCH_BYTES`] bytes: the buffers go to the
/// file as they are, with no copy into an output buffer (the writing thread is the one
/// thread every byte passes through).
const BATCH_BUFFERS: usize = 256;
const BATCH_BYTES: usize = 16 << 20;

/// Written buffers a collector keeps for its next workgroups.
const SPARE_BUFFERS: usize = 4;

/// How a report is split among threads (the tuning knobs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterOptions {
    /// Threads in all: the writer (the calling thread) and `threads - 1` collectors.
    /// With 1, the calling thread formats and writes every item itself (the
    /// single-threaded writer).
    pub threads: usize,
    /// Items a collector claims at a time.
    pub workgroup: usize,
    /// How many items the collectors may run ahead of the writer (raised to one
    /// workgroup per collector when smaller); 0 picks
    /// [`WriterOptions::DEFAULT_WINDOW_GROUPS`] workgroups per collector.
    pub window: usize,
}

impl WriterOptions {
    /// The default workgroup (measured: see the crate's closing note in the README).
    pub const DEFAULT_WORKGROUP: usize = 32;
    /// Workgroups per collector in the default window.
    pub const DEFAULT_WINDOW_GROUPS: usize = 8;

    /// `threads` threads in all, the default workgroup and window.
    pub fn with_threads(threads: usize) -> WriterOptions {
        WriterOptions {
            threads: threads.max(1),
            workgroup: WriterOptions::DEFAULT_WORKGROUP,
            window: 0,
        }
    }

    fn collectors(&self) -> usize {
        self.threads.saturating_sub(1)
    }

    fn workgroup(&self) -> usize {
        self.workgroup.max(1)
    }

    /// The window in items: at least one workgroup per collector, a whole number of
    /// workgroups.
    fn window(&self) -> usize {
        let workgroup = self.workgroup();
        let collectors = self.collectors().max(1);
        let wanted = if self.window == 0 {
            WriterOptions::DEFAULT_WINDOW_GROUPS * collectors * workgroup
        } else {
            self.window
        };
        wanted.max(collectors * workgroup).div_ceil(workgroup) * workgroup
    }
}

impl Default for WriterOptions {
    /// One thread per core.
    fn default() -> Self {
        WriterOptions::with_threads(thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

/// What one report cost, for benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WriterStats {
    /// Items written.
    pub items: usize,
    /// Bytes written.
    pub bytes: u64,
    /// Threads in all (1: single-threaded).
    pub threads: usize,
    /// The workgroup used.
    pub workgroup: usize,
    /// The window used (items).
    pub window: usize,
    /// Seconds spent gathering and formatting items, summed over the threads that did.
    pub collect_seconds: f64,
    /// Seconds the writer spent in `write` calls.
    pub write_seconds: f64,
    /// Seconds the writer waited for the next buffer.
    pub wait_seconds: f64,
    /// Seconds from start to the last byte flushed.
    pub wall_seconds: f64,
    /// The most bytes formatted and not yet written at any time (the writer's own
    /// memory: flat once the window is full).
    pub peak_buffered_bytes: u64,
}

/// Formats item `index` into `buffer` (appending).
pub type FormatItem<'a> = dyn Fn(usize, &mut Vec<u8>) + Sync + 'a;

/// Told the number of items written so far, now and then (from the writer thread).
pub type Progress<'a> = dyn Fn(usize) + Sync + 'a;

/// Writes items `0..n_items`, each formatted by `format`, to `out` in index order (see
/// the module documentation). `progress` hears how many are written after each
/// workgroup. On a write error the collectors stop and the error is returned.
pub fn write_ordered(
    out: &mut dyn Write,
    n_items: usize,
    options: &WriterOptions,
    format: &FormatItem<'_>,
    progress: Option<&Progress<'_>>,
) -> io::Result<WriterStats> {
    let started = Instant::now();
    let workgroup = options.workgroup();
    let n_groups = n_items.div_ceil(workgroup);
    let mut stats = WriterStats {
        items: n_items,
        threads: options.threads.max(1),
        workgroup,
        window: options.window(),
        ..WriterStats::default()
    };
    // With one workgroup there is nothing to overlap.
    if options.collectors() == 0 || n_groups <= 1 {
        stats.threads = 1;
        write_sequential(out, n_items, workgroup, format, progress, &mut stats)?;
    } else {
        write_pipelined(out, n_items, options, format, progress, &mut stats)?;
    }
    let flush_started = Instant::now();
    out.flush()?;
    stats.write_seconds += flush_started.elapsed().as_secs_f64();
    stats.wall_seconds = started.elapsed().as_secs_f64();
    Ok(stats)
}

/// The single-threaded writer: format items into one buffer, write it whenever it
/// holds [`OUTPUT_BUFFER_BYTES`], on the calling thread.
fn write_sequential(
    out: &mut dyn Write,
    n_items: usize,
    workgroup: usize,
    format: &FormatItem<'_>,
    progress: Option<&Progress<'_>>,
    stats: &mut WriterStats,
) -> io::Result<()> {
    let mut buffer = Vec::with_capacity(OUTPUT_BUFFER_BYTES + OUTPUT_BUFFER_BYTES / 4);
    let mut first = 0;
    while first < n_items {
        let end = (first + workgroup).min(n_items);
        let collect_started = Instant::now();
        for index in first..end {
            format(index, &mut buffer);
        }
        stats.collect_seconds += collect_started.elapsed().as_secs_f64();
        stats.peak_buffered_bytes = stats.peak_buffered_bytes.max(buffer.len() as u64);
        if buffer.len() >= OUTPUT_BUFFER_BYTES || end == n_items {
            let write_started = Instant::now();
            out.write_all(&buffer)?;
            stats.write_seconds += write_started.elapsed().as_secs_f64();
            stats.bytes += buffer.len() as u64;
            buffer.clear();
        }
        first = end;
        if let Some(progress) = progress {
            progress(first);
        }
    }
    Ok(())
}

/// Writes all of `buffers`, in order, with vectored writes.
fn write_all_vectored<'a>(
    out: &mut dyn Write,
    buffers: impl Iterator<Item = &'a [u8]>,
) -> io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = buffers
        .filter(|buffer| !buffer.is_empty())
        .map(IoSlice::new)
        .collect();
    let mut slices = slices.as_mut_slice();
    while !slices.is_empty() {
        match out.write_vectored(slices) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "failed to write the whole report",
                ))
            }
            Ok(written) => IoSlice::advance_slices(&mut slices, written),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// What the collectors and the writer share.
struct Pipeline {
    n_items: usize,
    workgroup: usize,
    n_groups: usize,
    /// The next workgroup to claim.
    next_group: AtomicUsize,
    /// Items written so far (the writer's frontier).
    written: AtomicUsize,
    /// Per item `index % window`: the status of the item that holds the slot.
    status: Box<[AtomicU8]>,
    /// Set when the writer gives up (a write failed): collectors stop.
    stopped: AtomicBool,
    /// Bytes formatted and not yet written, and their peak.
    buffered: AtomicU64,
    peak_buffered: AtomicU64,
    /// Nanoseconds the collectors spent formatting.
    collect_nanos: AtomicU64,
}

impl Pipeline {
    fn slot(&self, index: usize) -> &AtomicU8 {
        &self.status[index % self.status.len()]
    }

    /// Whether the slots of workgroup `group` are free: every item one lap before its
    /// items is written (counted by the writer's frontier rather than read from the
    /// slots, whose previous item may not have been claimed yet).
    fn group_fits(&self, group: usize) -> bool {
        let end = ((group + 1) * self.workgroup).min(self.n_items);
        end <= self.written.load(Ordering::Acquire) + self.status.len()
    }

    /// Claims the next workgroup for the writing thread itself, if it fits in the
    /// window now (the writer cannot wait for room: it is what makes room).
    fn claim_fitting(&self) -> Option<usize> {
        let mut group = self.next_group.load(Ordering::Relaxed);
        loop {
            if group >= self.n_groups || !self.group_fits(group) {
                return None;
            }
            match self.next_group.compare_exchange_weak(
                group,
                group + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(group),
                Err(current) => group = current,
            }
        }
    }

    /// Formats the items of workgroup `group` into `buffer` (emptied first), moving
    /// their status from collecting to ready.
    fn format_group(&self, group: usize, buffer: &mut Vec<u8>, format: &FormatItem<'_>) {
        let first = group * self.workgroup;
        let end = (first + self.workgroup).min(self.n_items);
        let started = Instant::now();
        buffer.clear();
        for index in first..end {
            debug_assert!(matches!(
                self.slot(index).load(Ordering::Acquire),
                PENDING | WRITTEN
            ));
            self.slot(index).store(COLLECTING, Ordering::Relaxed);
            format(index, buffer);
            self.slot(index).store(READY, Ordering::Release);
        }
        self.collect_nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        let buffered = self
            .buffered
            .fetch_add(buffer.len() as u64, Ordering::Relaxed)
            + buffer.len() as u64;
        self.peak_buffered.fetch_max(buffered, Ordering::Relaxed);
    }

    /// Collector `collector`: claim workgroups until none is left, format each into a
    /// buffer (one the writer gave back when there is one) and send it.
    fn collect(
        &self,
        collector: usize,
        format: &FormatItem<'_>,
        sender: &mpsc::Sender<Formatted>,
        returned: &mpsc::Receiver<Vec<u8>>,
    ) {
        let _stop_on_panic = StopOnPanic(&self.stopped);
        let mut capacity = 0;
        let mut spares: Vec<Vec<u8>> = Vec::new();
        loop {
            let group = self.next_group.fetch_add(1, Ordering::Relaxed);
            if group >= self.n_groups {
                return;
            }
            // The oldest unwritten workgroup always fits (the window holds one
            // workgroup per collector), so this wait ends.
            let mut spins = 0u32;
            while !self.group_fits(group) {
                if self.stopped.load(Ordering::Relaxed) {
                    return;
                }
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    thread::park_timeout(Duration::from_micros(200));
                }
            }
            // A written buffer back from the writer, so that its memory is not given
            // back to the system and faulted in again; else one about the size of the
            // last workgroup's, so it seldom grows. A few spares at most are kept, so
            // the buffers in all stay about the window's.
            while let Ok(buffer) = returned.try_recv() {
                if spares.len() < SPARE_BUFFERS {
                    spares.push(buffer);
                }
            }
            let mut buffer = spares.pop().unwrap_or_else(|| Vec::with_capacity(capacity));
            self.format_group(group, &mut buffer, format);
            capacity = buffer.len() + buffer.len() / 8;
            let formatted = Formatted {
                group,
                collector,
                buffer,
            };
            if sender.send(formatted).is_err() {
                return;
            }
        }
    }
}

/// A formatted workgroup on its way to the writer.
struct Formatted {
    group: usize,
    /// Which collector formatted it (the buffer goes back there once written).
    collector: usize,
    buffer: Vec<u8>,
}

/// Sets the stop flag when a collector unwinds, so that the writer and the other
/// collectors (which may wait for the lost workgroup) give up instead of waiting.
struct StopOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// The pipelined writer: `threads - 1` collectors, the calling thread writes.
fn write_pipelined(
    out: &mut dyn Write,
    n_items: usize,
    options: &WriterOptions,
    format: &FormatItem<'_>,
    progress: Option<&Progress<'_>>,
    stats: &mut WriterStats,
) -> io::Result<()> {
    let workgroup = options.workgroup();
    let window = options.window();
    let pipeline = Pipeline {
        n_items,
        workgroup,
        n_groups: n_items.div_ceil(workgroup),
        next_group: AtomicUsize::new(0),
        written: AtomicUsize::new(0),
        status: (0..window).map(|_| AtomicU8::new(PENDING)).collect(),
        stopped: AtomicBool::new(false),
        buffered: AtomicU64::new(0),
        peak_buffered: AtomicU64::new(0),
        collect_nanos: AtomicU64::new(0),
    };
    let n_collectors = options.collectors().min(pipeline.n_groups);
    let (sender, receiver) = mpsc::channel::<Formatted>();
    let result = thread::scope(|scope| {
        let mut give_back: Vec<mpsc::Sender<Vec<u8>>> = Vec::with_capacity(n_collectors);
        let collectors: Vec<thread::ScopedJoinHandle<'_, ()>> = (0..n_collectors)
            .map(|collector| {
                let sender = sender.clone();
                let (back, returned) = mpsc::channel::<Vec<u8>>();
                give_back.push(back);
                let pipeline = &pipeline;
                scope.spawn(move || pipeline.collect(collector, format, &sender, &returned))
            })
            .collect();
        drop(sender);
        let writer = Writer {
            pipeline: &pipeline,
            receiver: &receiver,
            give_back: &give_back,
            collectors: &collectors,
            format,
        };
        let result = writer.write_in_order(out, progress, stats);
        if result.is_err() {
            pipeline.stopped.store(true, Ordering::Relaxed);
        }
        // Dropping the receiver makes every later send fail, so collectors stop.
        drop(receiver);
        result
    });
    stats.collect_seconds = pipeline.collect_nanos.load(Ordering::Relaxed) as f64 * 1e-9;
    stats.peak_buffered_bytes = pipeline.peak_buffered.load(Ordering::Relaxed);
    result
}

/// The writing thread's side of the pipeline.
struct Writer<'a, 'scope> {
    pipeline: &'a Pipeline,
    receiver: &'a mpsc::Receiver<Formatted>,
    /// Per collector, where its written buffers go back.
    give_back: &'a [mpsc::Sender<Vec<u8>>],
    collectors: &'a [thread::ScopedJoinHandle<'scope, ()>],
    format: &'a FormatItem<'a>,
}

/// The `collector` of a workgroup the writing thread formatted itself.
const WRITER: usize = usize::MAX;

impl Writer<'_, '_> {
    /// The writer's loop: workgroup buffers in order, early ones held in a ring until
    /// their turn (a window's worth at most); each write takes every consecutive
    /// buffer that has arrived. When the next buffer is not there and a workgroup fits
    /// in the window, the writer formats that workgroup itself rather than wait, so
    /// that no thread idles (on few cores the pipeline is then never slower than the
    /// single-threaded writer).
    fn write_in_order(
        &self,
        out: &mut dyn Write,
        progress: Option<&Progress<'_>>,
        stats: &mut WriterStats,
    ) -> io::Result<()> {
        let pipeline = self.pipeline;
        let ring_len = pipeline.status.len() / pipeline.workgroup + 1;
        let mut held: Vec<Option<Formatted>> = (0..ring_len).map(|_| None).collect();
        let mut batch: Vec<Formatted> = Vec::with_capacity(BATCH_BUFFERS);
        let mut own_spares: Vec<Vec<u8>> = Vec::new();
        let mut next_group = 0;
        while next_group < pipeline.n_groups {
            while held[next_group % ring_len].is_none() {
                match self.receiver.try_recv() {
                    Ok(formatted) => {
                        let slot = formatted.group % ring_len;
                        held[slot] = Some(formatted);
                        continue;
                    }
                    Err(mpsc::TryRecvError::Empty | mpsc::TryRecvError::Disconnected) => {}
                }
                if let Some(group) = pipeline.claim_fitting() {
                    let mut buffer = own_spares.pop().unwrap_or_default();
                    pipeline.format_group(group, &mut buffer, self.format);
                    held[group % ring_len] = Some(Formatted {
                        group,
                        collector: WRITER,
                        buffer,
                    });
                    continue;
                }
                let wait_started = Instant::now();
                let received = self.receiver.recv_timeout(Duration::from_millis(100));
                stats.wait_seconds += wait_started.elapsed().as_secs_f64();
                match received {
                    Ok(formatted) => {
                        let slot = formatted.group % ring_len;
                        held[slot] = Some(formatted);
                    }
                    Err(mpsc::RecvTimeoutError::Timeout)
                        if !pipeline.stopped.load(Ordering::Relaxed) => {}
                    Err(_) => {
                        return Err(io::Error::other(
                            "report writer: a collector thread stopped early",
                        ))
                    }
                }
            }
            // Whatever else has arrived joins this write.
            while let Ok(formatted) = self.receiver.try_recv() {
                let slot = formatted.group % ring_len;
                held[slot] = Some(formatted);
            }
            let mut batch_bytes = 0;
            while next_group + batch.len() < pipeline.n_groups
                && batch.len() < BATCH_BUFFERS
                && batch_bytes < BATCH_BYTES
            {
                let Some(formatted) = held[(next_group + batch.len()) % ring_len].take() else {
                    break;
                };
                batch_bytes += formatted.buffer.len();
                batch.push(formatted);
            }
            let write_started = Instant::now();
            write_all_vectored(out, batch.iter().map(|formatted| &formatted.buffer[..]))?;
            stats.write_seconds += write_started.elapsed().as_secs_f64();
            stats.bytes += batch_bytes as u64;
            pipeline
                .buffered
                .fetch_sub(batch_bytes as u64, Ordering::Relaxed);
            let first = next_group * pipeline.workgroup;
            next_group += batch.len();
            let end = (next_group * pipeline.workgroup).min(pipeline.n_items);
            for index in first..end {
                debug_assert_eq!(pipeline.slot(index).load(Ordering::Acquire), READY);
                pipeline.slot(index).store(WRITTEN, Ordering::Release);
            }
            pipeline.written.store(end, Ordering::Release);
            for formatted in batch.drain(..) {
                if formatted.collector == WRITER {
                    if own_spares.len() < SPARE_BUFFERS {
                        own_spares.push(formatted.buffer);
                    }
                    continue;
                }
                // A collector that has finished no longer takes buffers: this one is
                // then freed.
                let _ = self.give_back[formatted.collector].send(formatted.buffer);
            }
            // Collectors waiting for the window wake up at once rather than at their
            // next timeout (an unpark of a running thread is one atomic swap).
            for collector in self.collectors {
                collector.thread().unpark();
            }
            if let Some(progress) = progress {
                progress(end);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format_item(index: usize, buffer: &mut Vec<u8>) {
        // Items of uneven length, so that workgroups differ in size.
        for _ in 0..(index % 7) + 1 {
            buffer.extend_from_slice(format!("item {index}\n").as_bytes());
        }
    }

    fn written(n_items: usize, options: WriterOptions) -> (Vec<u8>, WriterStats) {
        let mut out = Vec::new();
        let stats = write_ordered(&mut out, n_items, &options, &format_item, None).unwrap();
        (out, stats)
    }

    #[test]
    fn output_is_identical_for_any_split() {
        let (expected, _) = written(
            5000,
            WriterOptions {
                threads: 1,
                workgroup: 1,
                window: 0,
            },
        );
        for threads in [1, 2, 3, 8, 64] {
            for workgroup in [1, 7, 32, 1000, 10_000] {
                for window in [0, 1, 100] {
                    let options = WriterOptions {
                        threads,
                        workgroup,
                        window,
                    };
                    let (out, stats) = written(5000, options);
                    assert!(out == expected, "{options:?}");
                    assert_eq!(stats.bytes, expected.len() as u64);
                    assert_eq!(stats.items, 5000);
                }
            }
        }
    }

    #[test]
    fn no_items_write_nothing() {
        for threads in [1, 4] {
            let (out, stats) = written(0, WriterOptions::with_threads(threads));
            assert!(out.is_empty());
            assert_eq!(stats.bytes, 0);
        }
    }

    #[test]
    fn buffered_bytes_stay_within_the_window() {
        // Every item is 1000 bytes; a window of 64 items holds at most 64 000 of
        // them formatted and unwritten (plus one workgroup per collector waiting to
        // be sent is impossible: a collector claims only inside the window).
        let format = |_: usize, buffer: &mut Vec<u8>| buffer.extend_from_slice(&[b'x'; 1000]);
        let options = WriterOptions {
            threads: 4,
            workgroup: 8,
            window: 64,
        };
        let mut out = io::sink();
        let stats = write_ordered(&mut out, 20_000, &options, &format, None).unwrap();
        assert_eq!(stats.bytes, 20_000_000);
        assert!(
            stats.peak_buffered_bytes <= 64_000,
            "{}",
            stats.peak_buffered_bytes
        );
    }

    #[test]
    fn progress_reaches_the_item_count() {
        let last = AtomicUsize::new(0);
        let progress = |written: usize| {
            last.fetch_max(written, Ordering::Relaxed);
        };
        let mut out = io::sink();
        write_ordered(
            &mut out,
            1234,
            &WriterOptions::with_threads(3),
            &format_item,
            Some(&progress),
        )
        .unwrap();
        assert_eq!(last.load(Ordering::Relaxed), 1234);
    }

    /// A sink that fails after some bytes.
    struct Failing(usize);

    impl Write for Failing {
        fn write(&mut self, buffer: &[u8]) -> io::Result<usize> {
            if self.0 < buffer.len() {
                return Err(io::Error::other("disk full"));
            }
            self.0 -= buffer.len();
            Ok(buffer.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_write_error_stops_the_collectors_and_comes_back() {
        for threads in [1, 4] {
            let mut out = Failing(10_000);
            let options = WriterOptions {
                threads,
                workgroup: 4,
                window: 16,
            };
            let format = |_: usize, buffer: &mut Vec<u8>| buffer.extend_from_slice(&[b'x'; 5000]);
            let error = write_ordered(&mut out, 100_000, &options, &format, None).unwrap_err();
            assert_eq!(error.to_string(), "disk full");
        }
    }
}
