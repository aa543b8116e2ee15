//! Several timers on the GPU backend, each driven by its own thread at the same time,
//! share the process's one context per GPU (and its streams, graph captures and memory
//! pool). Each thread loads a generated design, then edits it (resizes, buffer
//! insertions), re-times incrementally (on the resident state and off it, with CPPR on
//! for some threads) and queries values, WNS/TNS and the worst paths; every answer must
//! equal bit for bit the answer of a CPU timer fully re-timing the same design.
//! Prints "skipped" where no GPU is usable and fails there under `TACHYON_REQUIRE_GPU=1`.
#![cfg(feature = "gpu")]

use std::path::Path;

use tachyon::{Backend, BackendConfig, Device, Retime, Split, Timer, Transition};
use tachyon_testkit::{gpu_or_skip, GeneratedDesign, SplitMix64};

const THREADS: u64 = 4;
/// Edits per thread, each followed by queries.
const STEPS: usize = 12;

/// An instance of a generated design: its name, cell and `(port, net)` connections.
type Instance = (String, String, Vec<(String, String)>);

/// The instances of a generated design, from its Verilog (one instance a line).
fn instances(tau2015: &Path) -> Vec<Instance> {
    let verilog = tau2015.with_extension("v");
    let text = std::fs::read_to_string(&verilog).expect("verilog");
    text.lines()
        .filter_map(|line| {
            let (head, ports) = line.trim().split_once('(')?;
            let mut words = head.split_whitespace();
            let (cell, name) = (words.next()?, words.next()?);
            if !cell.contains("_X") {
                return None;
            }
            let connections = ports
                .split(".")
                .skip(1)
                .filter_map(|port| {
                    let (port, net) = port.split_once('(')?;
                    let net = net.split(')').next()?;
                    Some((port.trim().to_string(), net.trim().to_string()))
                })
                .collect();
            Some((name.to_string(), cell.to_string(), connections))
        })
        .collect()
}

fn timer(tau2015: &Path, backend: Backend, retime: Retime, cppr: bool) -> Timer {
    let mut timer = Timer::with_backend(backend);
    timer.set_retime(retime);
    timer.load_tau2015(tau2015).expect("loads");
    timer.set_cppr(cppr);
    timer
}

/// The answers of one timer that a thread compares: values at `pins`, WNS/TNS, and the
/// worst paths (pin names and slack bits; equal slacks sorted by pins).
fn answers(timer: &mut Timer, pins: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for pin in pins {
        for split in [Split::Early, Split::Late] {
            for transition in [Transition::Rise, Transition::Fall] {
                let bits = |value: Result<Option<f64>, tachyon::TimerError>| {
                    value
                        .map(|value| value.map(f64::to_bits))
                        .map_err(|error| error.to_string())
                };
                out.push(format!(
                    "{pin} {split:?} {transition:?}: at {:?} slew {:?} rat {:?} slack {:?}",
                    bits(timer.at(pin, split, transition)),
                    bits(timer.slew(pin, split, transition)),
                    bits(timer.rat(pin, split, transition)),
                    bits(timer.slack(pin, split, transition)),
                ));
            }
        }
    }
    for split in [Split::Early, Split::Late] {
        let bits = |value: Result<f64, tachyon::TimerError>| {
            value.map(f64::to_bits).map_err(|error| error.to_string())
        };
        out.push(format!(
            "{split:?}: WNS {:?} TNS {:?}",
            bits(timer.worst_negative_slack(split)),
            bits(timer.total_negative_slack(split))
        ));
    }
    let found = timer.worst_paths(10, None, None, false).expect("paths");
    let (graph, _) = timer.timing().expect("timed");
    let mut paths: Vec<(f64, String)> = found
        .iter()
        .map(|path| {
            let pins: Vec<String> = path
                .pins
                .iter()
                .map(|&(pin, transition)| format!("{}/{transition:?}", graph.pin(pin).name))
                .collect();
            (
                path.slack,
                format!("{:x} {}", path.slack.to_bits(), pins.join(" ")),
            )
        })
        .collect();
    paths.sort_by(|a, b| a.partial_cmp(b).expect("ordered"));
    out.extend(paths.into_iter().map(|(_, path)| path));
    out
}

/// One thread's work: a GPU timer and a CPU reference on its own design, edited alike.
/// Returns the answers compared, the edits applied and the updates on the resident state.
fn drive(thread: u64, tau2015: &Path, backend: &Backend) -> (usize, usize, usize) {
    let cppr = thread % 2 == 1;
    let mut gpu = timer(tau2015, backend.clone(), Retime::Incremental, cppr);
    // Every update over the resident state on half the threads, the backend's mixed
    // strategy on the others.
    if thread % 2 == 0 {
        gpu.set_gpu_min_frontier(0);
    }
    let mut cpu = timer(tau2015, Backend::Cpu, Retime::Full, cppr);
    let instances = instances(tau2015);
    let pins: Vec<String> = {
        let (graph, _) = cpu.timing().expect("times");
        graph.pins().iter().map(|pin| pin.name.clone()).collect()
    };
    let mut random = SplitMix64(thread * 7919 + 1);
    let (mut compared, mut edits, mut on_gpu) = (0, 0, 0);
    let mut check = |gpu: &mut Timer, cpu: &mut Timer, context: &str, random: &mut SplitMix64| {
        let sample: Vec<String> = (0..40)
            .map(|_| pins[random.below(pins.len())].clone())
            .collect();
        let (ours, theirs) = (answers(gpu, &sample), answers(cpu, &sample));
        assert_eq!(ours, theirs, "thread {thread}: {context}");
        compared += ours.len();
    };
    check(&mut gpu, &mut cpu, "loaded", &mut random);
    for step in 0..STEPS {
        let (name, cell, connections) = &instances[random.below(instances.len())];
        let context = format!("step {step}");
        let size = [1, 2, 4][random.below(3)];
        let both = |timer: &mut Timer| -> Result<(), tachyon::TimerError> {
            if step % 3 == 2 {
                // A buffer between a net and one of its loads (inputs only).
                let Some((port, net)) = connections
                    .iter()
                    .find(|(port, _)| port != "Z" && port != "Q" && port != "CK")
                else {
                    return Ok(());
                };
                let (buffer, fresh) = (format!("tb{thread}_{step}"), format!("tn{thread}_{step}"));
                let sink = format!("{name}:{port}");
                timer.insert_net(&fresh)?;
                timer.insert_gate(&buffer, "BUF_X2")?;
                timer.disconnect_pin(&sink)?;
                timer.connect_pin(&format!("{buffer}:A"), net)?;
                timer.connect_pin(&format!("{buffer}:Z"), &fresh)?;
                timer.connect_pin(&sink, &fresh)
            } else {
                let family = cell.rsplit_once("_X").map_or(cell.as_str(), |(f, _)| f);
                timer.repower_gate(name, &format!("{family}_X{size}"))
            }
        };
        let (ours, theirs) = (both(&mut gpu), both(&mut cpu));
        assert_eq!(
            ours.as_ref().map_err(ToString::to_string),
            theirs.as_ref().map_err(ToString::to_string),
            "thread {thread}: {context}: the edit"
        );
        edits += usize::from(ours.is_ok());
        check(&mut gpu, &mut cpu, &context, &mut random);
        on_gpu += usize::from(gpu.last_update_on_gpu());
    }
    (compared, edits, on_gpu)
}

#[test]
fn timers_on_several_threads_share_the_gpu_and_equal_the_cpu() {
    let opened = Backend::select(Device::Gpu, &BackendConfig::default());
    let Some(backend) = gpu_or_skip(
        "timers_on_several_threads_share_the_gpu_and_equal_the_cpu",
        opened,
    ) else {
        return;
    };
    let designs: Vec<GeneratedDesign> = (0..THREADS)
        .map(|thread| {
            GeneratedDesign::new(
                &format!("gpu-threads-{thread}"),
                1500 + 700 * thread,
                40 + thread,
            )
        })
        .collect();
    let totals: Vec<(usize, usize, usize)> = std::thread::scope(|scope| {
        let running: Vec<_> = designs
            .iter()
            .enumerate()
            .map(|(thread, design)| {
                let backend = &backend;
                scope.spawn(move || drive(thread as u64, design.tau2015(), backend))
            })
            .collect();
        running
            .into_iter()
            .map(|thread| thread.join().expect("thread"))
            .collect()
    });
    for (thread, (compared, edits, on_gpu)) in totals.iter().enumerate() {
        println!(
            "thread {thread}: {edits} edits, {on_gpu} updates on the resident state, \
             {compared} answers compared"
        );
        assert!(*edits > 0, "thread {thread}: some edits applied");
        // The threads whose every update goes to the resident state used it.
        if thread % 2 == 0 {
            assert!(*on_gpu > 0, "thread {thread}: updates on the GPU");
        }
    }
}
