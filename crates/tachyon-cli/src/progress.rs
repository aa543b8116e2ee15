//! Progress on standard error: a spinner with the elapsed time for each phase of
//! unknown length (loading a file, linking and timing, the path search), a bar for
//! phases that count (writing paths, running an `.ops` script). Shown only when
//! standard error is a terminal and `--quiet` is not given, so logs, pipes and CI see
//! nothing of it; each disappears when its phase ends.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Whether progress is shown, for the whole command.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    shown: bool,
}

impl Progress {
    /// Progress on a terminal unless `quiet`.
    pub fn new(quiet: bool) -> Progress {
        Progress {
            shown: !quiet && std::io::stderr().is_terminal(),
        }
    }

    /// No progress at all.
    pub fn hidden() -> Progress {
        Progress { shown: false }
    }

    /// This progress while results are written to a file (`to_file`) or to standard
    /// output: none when standard output is the same terminal, where a bar would cut
    /// through the results' lines.
    pub fn beside_output(self, to_file: bool) -> Progress {
        if to_file || !std::io::stdout().is_terminal() {
            self
        } else {
            Progress::hidden()
        }
    }

    /// A spinner for a phase of unknown length, until the returned phase is dropped.
    pub fn phase(&self, message: impl Into<Cow<'static, str>>) -> Phase {
        if !self.shown {
            return Phase(ProgressBar::hidden());
        }
        let bar = ProgressBar::new_spinner().with_message(message);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(100));
        Phase(bar)
    }

    /// A bar of `len` steps, until the returned phase is dropped.
    pub fn bar(&self, len: u64, message: impl Into<Cow<'static, str>>) -> Phase {
        if !self.shown {
            return Phase(ProgressBar::hidden());
        }
        let bar = ProgressBar::new(len).with_message(message);
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:40}] {human_pos}/{human_len} ({elapsed}, {eta} left)",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Phase(bar)
    }
}

/// A phase in progress; cleared from the terminal when dropped.
pub struct Phase(ProgressBar);

impl Phase {
    /// Steps done so far (bars).
    pub fn set_position(&self, position: u64) {
        self.0.set_position(position);
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
