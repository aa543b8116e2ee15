//! The lock that makes one context safe for several users on several threads.
//!
//! A context is shared by the whole process ([`crate::GpuContext::open`] caches it), and
//! its streams with it: two timers on two threads queue their work on the same stream.
//! Interleaved work is harmless in itself (the stream runs it in the order queued), but
//! a stream being captured into a CUDA graph takes in whatever any thread queues on it:
//! another thread's launch would be replayed with the graph, its buffer's free would
//! become a free node freeing the memory again at each replay, its synchronize or
//! pageable download would invalidate the capture. So every operation that queues on a
//! context's streams, or waits for them, holds this lock, and a capture holds it from
//! its beginning to its end; [`Locked::hold`] is the only way to reach the streams.
//!
//! The lock is reentrant: an upload allocates then writes, a capture runs the caller's
//! launches, a timed region runs the caller's work, each taking the lock again on the
//! thread that holds it. Uncontended it costs one compare-and-swap of the owner's
//! thread id (tens of nanoseconds, against microseconds for queueing a launch).
//!
//! Lock order: this lock first, then the context's `staging` or `kernel_load` mutex
//! (never both: kernels are loaded before a capture or launch, not inside a transfer).
//! Every public operation takes this lock on entry, before reaching either mutex.
//!
//! The holder never waits for anything a thread waiting for the lock could hold up:
//! the GPU, or the runtime's own copy threads, which copy the pieces of staged
//! transfers and never take the lock (`transfer::on_copy_threads`; copying on the
//! global rayon pool, whose workers may all be blocked here running other users' GPU
//! work, could deadlock).
//!
//! The holder never runs another job while it waits: a rayon worker waiting for its
//! copy threads would (rayon's cross-pool `install` takes its own pool's jobs while
//! waiting), and a job run so, under the lock, could split work to a second worker
//! that blocks on the lock and then wait for that work, so the lock would never be
//! released (two timers sharing a GPU hung so). A worker therefore waits for its copy
//! on a plain thread (`transfer::without_taking_jobs`). `staging` is still only
//! `try_lock`ed: a nested transfer finding it taken copies unstaged rather than
//! deadlocking (`GpuContext::with_staging`). What a capture queues, and what
//! [`crate::GpuContext::time`] measures, must be launches alone, never rayon work (the
//! engines' captures are loops of launches): a worker waiting in rayon could run
//! another user's job into the graph.

use std::sync::Arc;

use parking_lot::{ReentrantMutex, ReentrantMutexGuard};

/// `S` (a context's streams) behind a process-wide reentrant lock; clones share it, so
/// that a buffer dropped on any thread frees its memory under the same lock.
pub(crate) struct Locked<S>(Arc<ReentrantMutex<S>>);

impl<S> Locked<S> {
    pub(crate) fn new(streams: S) -> Locked<S> {
        Locked(Arc::new(ReentrantMutex::new(streams)))
    }

    /// The streams, held until the guard drops: no other thread queues meanwhile.
    pub(crate) fn hold(&self) -> ReentrantMutexGuard<'_, S> {
        self.0.lock()
    }

    /// Another handle to the same lock.
    pub(crate) fn share(&self) -> Locked<S> {
        Locked(Arc::clone(&self.0))
    }
}

#[cfg(test)]
mod tests {
    //! The lock's guarantees, without a GPU: a fake stream logs what is queued on it.

    use std::cell::RefCell;
    use std::sync::Barrier;
    use std::thread;
    use std::time::Duration;

    use super::Locked;

    /// A stream that logs `(user, operation)` in queue order.
    type FakeStream = RefCell<Vec<(u32, &'static str)>>;

    fn queue(stream: &Locked<FakeStream>, user: u32, operation: &'static str) {
        stream.hold().borrow_mut().push((user, operation));
    }

    /// A capture (begin, nested launches that take the lock again, end) on one thread
    /// never has another thread's work inside it, and the nesting does not deadlock.
    #[test]
    fn a_capture_holds_the_stream_from_begin_to_end() {
        let stream = Locked::new(FakeStream::default());
        let start = Barrier::new(2);
        thread::scope(|scope| {
            scope.spawn(|| {
                start.wait();
                for _ in 0..200 {
                    queue(&stream, 2, "launch");
                    thread::sleep(Duration::from_micros(20));
                }
            });
            start.wait();
            for _ in 0..20 {
                let held = stream.hold();
                held.borrow_mut().push((1, "begin"));
                for _ in 0..5 {
                    // A launch inside the capture takes the lock again.
                    queue(&stream, 1, "launch");
                    thread::sleep(Duration::from_micros(50));
                }
                held.borrow_mut().push((1, "end"));
            }
        });
        let log = stream.hold().borrow().clone();
        assert_eq!(log.len(), 20 * 7 + 200);
        let mut inside = false;
        for (user, operation) in log {
            match operation {
                "begin" => inside = true,
                "end" => inside = false,
                _ => assert!(!inside || user == 1, "user {user}'s work inside a capture"),
            }
        }
    }

    /// A handle dropped on another thread (a buffer freeing its memory) waits until the
    /// capture holding the lock has ended.
    #[test]
    fn a_drop_elsewhere_waits_for_the_capture() {
        struct Buffer(Locked<FakeStream>);
        impl Drop for Buffer {
            fn drop(&mut self) {
                queue(&self.0, 2, "free");
            }
        }
        let stream = Locked::new(FakeStream::default());
        let buffer = Buffer(stream.share());
        let held = stream.hold();
        held.borrow_mut().push((1, "begin"));
        thread::scope(|scope| {
            scope.spawn(move || drop(buffer));
            thread::sleep(Duration::from_millis(20));
            held.borrow_mut().push((1, "end"));
            drop(held);
        });
        assert_eq!(
            *stream.hold().borrow(),
            [(1, "begin"), (1, "end"), (2, "free")]
        );
    }
}
