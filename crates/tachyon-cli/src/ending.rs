//! How the process ends, once everything the user asked for is written.
//!
//! A GPU run's last ~0.15 s went to tearing the process down after its last step: the
//! CUDA driver's exit handlers (destroying the context: device memory, pinned staging
//! buffers, its threads) and the kernel taking back a few GB of memory. None of it
//! changes an output byte or the exit status. So, by default, `main` flushes standard
//! output and ends with `_exit` ([`Ending::Fast`]): the exit handlers are skipped, and
//! the kernel frees the process's memory and closes its GPU handles as it would anyway.
//! Under a CUDA profiler (which writes its trace from an exit handler) the process
//! exits normally.
//!
//! `TACHYON_EXIT` (read by the binary alone, for measuring) picks another ending:
//! `normal` (return from `main`: every exit handler runs), `fast` (the default), or
//! `fork`: the process forks at its start; the parent only waits for the child to say
//! its exit status (after it has written everything and closed standard output and
//! error, so a reader of a pipe sees the end) and exits with it, while the child tears
//! down alone, still holding the GPU for that time (docs/PERFORMANCE.md).

use std::io::Write;
use std::process::ExitCode;

/// How `main` ends the process (module documentation).
#[derive(Debug)]
pub enum Ending {
    /// Return from `main`; the exit handlers run.
    Normal,
    /// Flush standard output, then `_exit`.
    Fast,
    /// The child of [`Ending::begin`]'s fork, with the pipe its parent waits on.
    #[cfg(target_os = "linux")]
    Forked(std::os::fd::OwnedFd),
}

/// What `TACHYON_EXIT` may say.
const CHOICES: &str = "normal, fast or fork";

impl Ending {
    /// The ending `TACHYON_EXIT` asks for ([`Ending::Fast`] by default). With `fork`
    /// the process forks here (it must still have one thread): only the child returns.
    pub fn begin() -> Result<Ending, String> {
        let choice = std::env::var("TACHYON_EXIT").ok();
        let fast = || match profiled() {
            true => Ending::Normal,
            false => Ending::Fast,
        };
        match choice.as_deref().map(str::trim) {
            None | Some("fast") => Ok(fast()),
            Some("normal") => Ok(Ending::Normal),
            #[cfg(target_os = "linux")]
            Some("fork") => Ok(fork::split().unwrap_or_else(fast)),
            Some(other) => Err(format!("TACHYON_EXIT={other}: expected {CHOICES}")),
        }
    }

    /// Ends the process with `code`, everything written (the messages on standard
    /// error included); returns only to let `main` return ([`Ending::Normal`], and the
    /// forked child, which then tears down alone).
    pub fn end(self, code: u8) -> ExitCode {
        // What the runtime would flush at exit (a closed output cannot be told).
        let _ = std::io::stdout().flush();
        match self {
            Ending::Normal => {}
            Ending::Fast => fast_exit(code),
            #[cfg(target_os = "linux")]
            Ending::Forked(pipe) => fork::report(pipe, code),
        }
        ExitCode::from(code)
    }
}

/// Whether a CUDA profiler is attached (Nsight Systems and Compute inject themselves
/// through this variable and write what they gathered from an exit handler).
fn profiled() -> bool {
    std::env::var_os("CUDA_INJECTION64_PATH").is_some()
}

/// Ends the process at once with `code`, skipping the exit handlers.
#[allow(unsafe_code)]
fn fast_exit(code: u8) -> ! {
    // SAFETY: `_exit` ends the process; nothing of it runs afterwards. Standard output
    // is flushed ([`Ending::end`]), standard error is unbuffered, and every file the
    // commands write is flushed and closed before `main` ends.
    unsafe { libc::_exit(i32::from(code)) }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod fork {
    use super::{fast_exit, Ending};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// Forks: the child returns its ending, the parent waits for the child's status
    /// and exits with it (never returns). None when the pipe or the fork fails.
    pub(super) fn split() -> Option<Ending> {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return None;
        }
        // SAFETY: the descriptors were just opened and are owned here alone.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: called before `main` starts any thread (the process has one), so the
        // child may do anything.
        match unsafe { libc::fork() } {
            -1 => None,
            0 => {
                drop(read);
                Some(Ending::Forked(write))
            }
            child => {
                drop(write);
                wait_for(read, child)
            }
        }
    }

    /// The parent: exits with the status byte the child writes, or when the child
    /// ends without writing one (a panic, a signal), as the child ended.
    fn wait_for(read: OwnedFd, child: libc::pid_t) -> ! {
        let mut byte = 0u8;
        loop {
            // SAFETY: reads at most one byte into `byte`.
            let n = unsafe { libc::read(read.as_raw_fd(), (&raw mut byte).cast(), 1) };
            if n == 1 {
                fast_exit(byte);
            }
            if n == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                break;
            }
        }
        let mut status = 0;
        // SAFETY: waits for our own child.
        while unsafe { libc::waitpid(child, &raw mut status, 0) } == -1
            && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {}
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            // SAFETY: restores the default action and ends by the child's signal.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
            fast_exit(128u8.wrapping_add(signal as u8));
        }
        fast_exit(if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) as u8 } else { 1 })
    }

    /// The child, done: closes standard output and error (a reader of a pipe sees the
    /// end once the parent exits), then tells the parent `code`.
    pub(super) fn report(pipe: OwnedFd, code: u8) {
        if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
            // SAFETY: replaces descriptors 1 and 2 by /dev/null, which stays open.
            unsafe {
                libc::dup2(null.as_raw_fd(), 1);
                libc::dup2(null.as_raw_fd(), 2);
            }
        }
        // SAFETY: writes one byte from `code`.
        let _ = unsafe { libc::write(pipe.as_raw_fd(), (&raw const code).cast(), 1) };
        drop(pipe);
    }
}
