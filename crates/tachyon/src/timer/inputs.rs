//! The files of a design, one at a time: what a `.tau2015` names, so that a caller can
//! read them one by one (and show which one it is reading).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use tachyon_kernels::Split;

use super::{drop_in_parallel, parse_spef_timed, read_checked, Timer, TimerError};

/// One input file of a design and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DesignInput {
    /// A Liberty library for one split, or both (`None`).
    Liberty(Option<Split>, PathBuf),
    /// The gate-level netlist.
    Verilog(PathBuf),
    /// Parasitics.
    Spef(PathBuf),
    /// TAU 2015 `.timing` assertions.
    Timing(PathBuf),
    /// SDC assertions.
    Sdc(PathBuf),
}

impl DesignInput {
    /// The file.
    pub fn path(&self) -> &Path {
        match self {
            DesignInput::Liberty(_, path)
            | DesignInput::Verilog(path)
            | DesignInput::Spef(path)
            | DesignInput::Timing(path)
            | DesignInput::Sdc(path) => path,
        }
    }
}

/// An input of [`Timer::read_inputs`] that failed: which, and why.
#[derive(Debug, thiserror::Error)]
#[error("reading {}", input.path().display())]
pub struct InputError {
    /// The input.
    pub input: DesignInput,
    /// Why it failed.
    #[source]
    pub error: TimerError,
}

impl Timer {
    /// The files a `.tau2015` names (relative to its folder), in reading order: the
    /// early and late libraries, the netlist, the parasitics, and the sibling
    /// `.timing` if there is one.
    pub fn tau2015_inputs(path: impl AsRef<Path>) -> Result<Vec<DesignInput>, TimerError> {
        let path = path.as_ref();
        let text = read_checked(path)?;
        let files = tachyon_sdc::parse_tau2015(&path.display().to_string(), &text)?;
        let folder = path.parent().unwrap_or(Path::new("."));
        let mut inputs = vec![
            DesignInput::Liberty(Some(Split::Early), folder.join(&files.early_liberty)),
            DesignInput::Liberty(Some(Split::Late), folder.join(&files.late_liberty)),
            DesignInput::Verilog(folder.join(&files.verilog)),
            DesignInput::Spef(folder.join(&files.spef)),
        ];
        let timing = path.with_extension("timing");
        if timing.is_file() {
            inputs.push(DesignInput::Timing(timing));
        }
        Ok(inputs)
    }

    /// Reads `inputs` in order, as [`Timer::read_input`] on each would, and stops at
    /// the first that fails (each read is all or nothing, as alone). Meanwhile the first
    /// SPEF that comes after another input is read and parsed on another thread (the
    /// nets in parallel, on a pool of half the threads from 8 threads on: `beside`), so
    /// that it overlaps the libraries and the netlist and their linking; the annotate's
    /// design-independent half is made there too until the SPEF's turn comes. Its nets
    /// are annotated in their turn; the parsed nets and the text are then dropped on a
    /// thread of their own, which may outlive this call. The first `.timing` after
    /// it is read and parsed on a thread of its own from the start, and its assertions
    /// set in its turn. Their errors, and everything else, are those of the reads one by
    /// one.
    /// When the files parsed at once would not fit in memory together, they are read
    /// one by one. `starting` is called as each input's turn comes.
    pub fn read_inputs(
        &mut self,
        inputs: &[DesignInput],
        mut starting: impl FnMut(&DesignInput),
    ) -> Result<(), InputError> {
        let failed = |input: &DesignInput| {
            let input = input.clone();
            move |error| InputError { input, error }
        };
        let Some((early, spef)) = spef_to_overlap(inputs) else {
            for input in inputs {
                starting(input);
                self.read_input(input).map_err(failed(input))?;
            }
            return Ok(());
        };
        let file = spef.display().to_string();
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let parsing = scope.spawn(|| {
                beside(|| {
                    let started = std::time::Instant::now();
                    let text = read_checked(spef)?;
                    tracing::debug!(
                        file,
                        bytes = text.len(),
                        threads = rayon::current_num_threads(),
                        ms = started.elapsed().as_secs_f64() * 1e3,
                        "spef read beside"
                    );
                    ParsedSpef::try_new(text, |text| {
                        let (parsed, time) = parse_spef_timed(&file, text)?;
                        // The annotate's design-independent half, while the netlist is
                        // still being linked (until its turn comes: `stop`).
                        let preparing = std::time::Instant::now();
                        let shapes = tachyon_link::SpefShapes::prepare(&parsed, &stop);
                        tracing::debug!(
                            file,
                            ms = preparing.elapsed().as_secs_f64() * 1e3,
                            "spef nets prepared beside"
                        );
                        Ok(SpefBorrowers {
                            parsed: Some((parsed, shapes, time)),
                            nets: Vec::new(),
                        })
                    })
                })
            });
            let mut parsing = Some(parsing);
            // The first `.timing` after the SPEF, read and parsed meanwhile too (its
            // assertions are set in its turn).
            let timing = inputs
                .iter()
                .enumerate()
                .skip(early + 1)
                .find_map(|(index, input)| match input {
                    DesignInput::Timing(path) => Some((index, path.as_path())),
                    _ => None,
                });
            let mut timing_parsing = timing
                .map(|(index, path)| (index, path, scope.spawn(|| super::parse_timing_file(path))));
            for (index, input) in inputs.iter().enumerate() {
                starting(input);
                if let Some((_, path, parsing)) = timing_parsing.take_if(|(at, ..)| *at == index) {
                    parsing
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                        .and_then(|assertions| self.set_timing(path, assertions))
                        .map_err(failed(input))?;
                    continue;
                }
                if index == early {
                    stop.store(true, Ordering::Relaxed);
                }
                let read = match parsing.take_if(|_| index == early) {
                    Some(parsing) => parsing
                        .join()
                        .inspect(|_| tracing::debug!(file, "spef parse joined"))
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                        .and_then(|mut spef| {
                            spef.with_dependent_mut(|text, borrowers| {
                                let Some((parsed, shapes, time)) = borrowers.parsed.take() else {
                                    return Ok::<(), TimerError>(());
                                };
                                borrowers.nets =
                                    self.annotate_spef(&file, text, parsed, shapes, time)?;
                                Ok(())
                            })?;
                            // The parsed nets, then the text, dropped on a thread of
                            // their own, past the end of the load (at 1M waiting for
                            // them was 15-20 ms of it). The nets go on the global pool:
                            // the check before the graph build (`update_timing`) waits
                            // behind them (20-27 ms at 1M instead of 3-4), but the graph
                            // build, the adjacency and the RC layout then reuse the
                            // freed memory. Measured on an H100 at 1M (stop 33, -vv, two
                            // runs each), from `design loaded` to the forward's first
                            // kernel: 340-356 ms as here; 344-359 ms with the SPEF held
                            // until the first update ends (peak RSS +1.3 GB); 354-369 ms
                            // held to the exit; 356-369 ms dropped by this thread alone
                            // (its drop then takes ~0.3 s).
                            std::thread::spawn(move || {
                                let dropping = std::time::Instant::now();
                                spef.with_dependent_mut(|_, borrowers| {
                                    drop_in_parallel(std::mem::take(&mut borrowers.nets));
                                });
                                drop(spef);
                                tracing::debug!(
                                    ms = dropping.elapsed().as_secs_f64() * 1e3,
                                    "parsed spef dropped after the load"
                                );
                            });
                            Ok(())
                        }),
                    None => self.read_input(input),
                };
                // A failed read ends the load: the SPEF's preparing too.
                read.inspect_err(|_| stop.store(true, Ordering::Relaxed))
                    .map_err(failed(input))?;
            }
            Ok(())
        })
    }

    /// Reads one input file.
    pub fn read_input(&mut self, input: &DesignInput) -> Result<(), TimerError> {
        match input {
            DesignInput::Liberty(split, path) => self.read_celllib(*split, path),
            DesignInput::Verilog(path) => self.read_verilog(path),
            DesignInput::Spef(path) => self.read_spef(path),
            DesignInput::Timing(path) => self.read_timing(path),
            DesignInput::Sdc(path) => self.read_sdc(path),
        }
    }
}

/// What borrows a SPEF read beside ([`Timer::read_inputs`]): the parsed file with the
/// annotate's design-independent half made beside (until the annotate takes them),
/// then the parsed nets the annotate hands back.
struct SpefBorrowers<'text> {
    parsed: Option<(
        tachyon_spef::Spef<'text>,
        tachyon_link::SpefShapes<'text>,
        std::time::Duration,
    )>,
    nets: Vec<tachyon_spef::DNet<'text>>,
}

self_cell::self_cell!(
    /// A SPEF's text owned together with what borrows it, so that both can be dropped
    /// on a thread of their own, past the end of the load ([`Timer::read_inputs`]).
    struct ParsedSpef {
        owner: String,
        #[covariant]
        dependent: SpefBorrowers,
    }
);

/// The fewest threads of the current pool for which the SPEF gets a pool of its own.
const OWN_POOL_MIN: usize = 8;

/// Runs `read` (the SPEF's read and parse beside the inputs before it:
/// [`Timer::read_inputs`]) on a pool of its own with half as many threads as the
/// current one: the netlist's read, parse and link, which the whole load waits for,
/// keep most of the cores. On 16 cores at 1M, sharing one pool made the Verilog parse
/// take 0.28-0.37 s instead of 0.11 s alone, and the SPEF parse (0.19 s alone) still
/// ends about when the netlist is linked. Parsing the SPEF only after the netlist's
/// parse, on the shared pool, was slower: the link's parallel steps, submitted from
/// outside the pool, waited behind the SPEF's queued blocks. Under [`OWN_POOL_MIN`]
/// threads the SPEF shares the current pool, as it did before (measured on 16 cores
/// only; half of a few cores would leave the SPEF's parse alone at the end).
/// Measured again with the annotate's design-independent half made beside (stop 33,
/// H100, 1M, 5 rounds): a SPEF pool of 12 or 16 threads prepares all of it, but the
/// link slows by more (`design loaded` 0.57 and 0.54 s against 0.52 s for 8).
fn beside<T: Send>(read: impl FnOnce() -> T + Send) -> T {
    let threads = rayon::current_num_threads();
    if threads < OWN_POOL_MIN {
        return read();
    }
    match rayon::ThreadPoolBuilder::new()
        .num_threads(threads / 2)
        .thread_name(|index| format!("spef-{index}"))
        .build()
    {
        Ok(pool) => pool.install(read),
        Err(_) => read(),
    }
}

/// The first SPEF input that has another input before it to overlap with (its index
/// and file), unless the files up to it would not fit in memory parsed at once.
fn spef_to_overlap(inputs: &[DesignInput]) -> Option<(usize, &Path)> {
    let (index, path) =
        inputs
            .iter()
            .enumerate()
            .skip(1)
            .find_map(|(index, input)| match input {
                DesignInput::Spef(path) => Some((index, path.as_path())),
                _ => None,
            })?;
    let sizes: Vec<u64> = inputs[..=index]
        .iter()
        .map(|input| std::fs::metadata(input.path()).map_or(0, |meta| meta.len()))
        .collect();
    let needed = sizes
        .iter()
        .map(|&size| crate::memory::parse_bytes(size))
        .sum();
    let what = format!(
        "parsing {} files at once ({})",
        sizes.len(),
        crate::memory::human(sizes.iter().sum())
    );
    crate::memory::check("parse", what, needed).ok()?;
    Some((index, path))
}
