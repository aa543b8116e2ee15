//! How the process ends, once everything the user asked for is written.
//!
//! A GPU run's last ~0.17 s (1M gates, H100) pass after its last step, in the kernel:
//! the GPU's context and memory are released when the process's device files close,
//! and a few GB of host memory are freed (~30 ms of it, mostly huge pages). Ending
//! with `_exit` instead of `exit` measured the same: that time is not the exit
//! handlers'. Nothing in it changes an output byte or the exit status, so on Linux
//! the process does as linkers such as mold do ([`Ending::Forked`]):
//! - it forks at its start, before any thread exists; the parent only waits;
//! - the child does the work, writes everything, flushes standard output, replaces
//!   standard output and error by `/dev/null` (so a reader of a pipe sees the end once
//!   the parent is gone), and writes its exit status into a pipe;
//! - the parent exits with that status at once, and the child tears down alone,
//!   holding the GPU and its memory for that time. The next process's GPU open right
//!   after measured as usual (docs/PERFORMANCE.md).
//!
//! Outputs, error messages and exit statuses are the same as a process's own: a child
//! that ends without saying its status (a panic, a signal) is waited for, and the
//! parent exits with its status or by its signal. Until it says its status the child
//! dies with its parent (`PR_SET_PDEATHSIG`), so killing the process the shell started
//! stops the work. What a parent learns from `wait` besides the status (`time`'s CPU
//! times, `/usr/bin/time`'s peak memory) is the waiting process's alone: the binary
//! asks for [`Ending::Normal`] (`TACHYON_EXIT=normal`, and under a CUDA profiler) to
//! measure those. Under valgrind the work is in the child's output file.
//!
//! It lives in the GPU runtime because the cost it hides is the driver's, and because
//! this is the crate allowed the system calls (`fork`, `pipe`, `prctl`, `dup2`) it needs.

use std::io::Write;
use std::process::ExitCode;

/// How `main` ends the process (module documentation).
#[derive(Debug)]
pub enum Ending {
    /// Return from `main`: the process tears down before its parent sees it end.
    Normal,
    /// The child of [`Ending::begin`]'s fork, with the pipe its parent waits on.
    #[cfg(target_os = "linux")]
    Forked(std::os::fd::OwnedFd),
}

impl Ending {
    /// The ending for this process: with `fork`, [`Ending::Forked`] on Linux (it forks
    /// here, so the process must still have one thread: only the child returns), else
    /// and where the fork fails [`Ending::Normal`].
    pub fn begin(fork: bool) -> Ending {
        if !fork {
            return Ending::Normal;
        }
        #[cfg(target_os = "linux")]
        return fork::split().unwrap_or(Ending::Normal);
        #[cfg(not(target_os = "linux"))]
        Ending::Normal
    }

    /// Ends the work with exit status `code`, everything written (the messages on
    /// standard error included); `main` returns what it gives.
    pub fn end(self, code: u8) -> ExitCode {
        // What the runtime would flush at exit (a closed output cannot be told).
        let _ = std::io::stdout().flush();
        match self {
            Ending::Normal => {}
            #[cfg(target_os = "linux")]
            Ending::Forked(pipe) => fork::report(pipe, code),
        }
        ExitCode::from(code)
    }
}

#[cfg(target_os = "linux")]
mod fork {
    use super::Ending;
    use std::io::{Error, ErrorKind};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// Forks: the child returns its ending, the parent waits for the child's status
    /// and exits with it (never returns). None when the pipe or the fork fails.
    pub(super) fn split() -> Option<Ending> {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return None;
        }
        // SAFETY: the two descriptors were just opened and are owned here alone.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: `main` calls this before it starts any thread (the process has one),
        // so the child may do anything.
        match unsafe { libc::fork() } {
            -1 => None,
            0 => {
                drop(read);
                // SAFETY: prctl, getppid and raise have no memory preconditions.
                unsafe {
                    // Until it reports, the child dies with the parent (a `kill` of
                    // the process the shell started stops the work) ...
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    // ... including one that died before the line above.
                    if libc::getppid() != parent {
                        libc::raise(libc::SIGKILL);
                    }
                }
                Some(Ending::Forked(write))
            }
            child => {
                drop(write);
                wait_for(&read, child)
            }
        }
    }

    /// The parent: exits with the status byte the child writes or, when the child ends
    /// without writing one (a panic, a signal), with the child's own ending.
    fn wait_for(read: &OwnedFd, child: libc::pid_t) -> ! {
        let mut byte = 0u8;
        loop {
            // SAFETY: reads at most one byte into `byte`.
            let n = unsafe { libc::read(read.as_raw_fd(), (&raw mut byte).cast(), 1) };
            if n == 1 {
                exit_now(i32::from(byte));
            }
            if n == 0 || Error::last_os_error().kind() != ErrorKind::Interrupted {
                break;
            }
        }
        let mut status = 0;
        // SAFETY: waits for our own child, writing its status into `status`.
        while unsafe { libc::waitpid(child, &raw mut status, 0) } == -1
            && Error::last_os_error().kind() == ErrorKind::Interrupted
        {}
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            // SAFETY: restores the signal's default action and raises it: the parent
            // ends as the child did.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
            exit_now(128 + signal);
        }
        exit_now(match libc::WIFEXITED(status) {
            true => libc::WEXITSTATUS(status),
            false => 1,
        })
    }

    /// Ends the parent: it wrote nothing and holds nothing to flush or release.
    fn exit_now(code: i32) -> ! {
        // SAFETY: `_exit` ends the process; nothing of it runs afterwards.
        unsafe { libc::_exit(code) }
    }

    /// The child, done: closes standard output and error (a reader of a pipe sees the
    /// end once the parent exits), then tells the parent `code`, and no longer dies with
    /// it (it tears down after the parent is gone).
    pub(super) fn report(pipe: OwnedFd, code: u8) {
        if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
            // SAFETY: replaces descriptors 1 and 2 by /dev/null, open until then.
            unsafe {
                libc::dup2(null.as_raw_fd(), 1);
                libc::dup2(null.as_raw_fd(), 2);
            }
        }
        // SAFETY: prctl has no memory preconditions; the write reads one byte of `code`.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, 0);
            libc::write(pipe.as_raw_fd(), (&raw const code).cast(), 1);
        }
        drop(pipe);
    }
}
