//! A differential test of incremental timing: random sequences of every edit kind
//! (`repower_gate`, `insert_gate`, `remove_gate`, `insert_net`, `remove_net`,
//! `connect_pin`, `disconnect_pin`, `read_spef` of a change file naming a few nets),
//! including edits that fail, with queries between them. Edits keep one driver per net
//! (a net with two drivers does not link since issue 22), so sequences run their full
//! length; at a low rate a deliberate second driver must be refused alike by both
//! timers, and is then undone. Each answer of a timer under
//! `Retime::Incremental` (at, rat, slew, slack for both splits and transitions,
//! WNS/TNS, the worst paths) must equal bit for bit the answer of a timer under
//! `Retime::Full`, which rebuilds the graph from the design and re-times everything.
//! Edits pile up (one step in two asks nothing), then queries of random kinds on
//! random pins come first, while the edits' dirty state is there: arrivals and slews
//! then bring up to date only their pins' fan-in cones, and the queries after them
//! (and the end of the sequence) must still see a whole update's values.
//!
//! The incremental timer runs on the GPU backend where a GPU is usable (required under
//! `TACHYON_REQUIRE_GPU=1`), else on the CPU with the resident state's CPU twin; by the
//! sequence's seed, its mixed strategy's threshold sends every update to the resident
//! state, none, or those with frontiers of a few pins (alternating within a sequence).
//!
//! Designs: small TAU 2015 benchmarks of `../shared` (skipped with a message when it is
//! absent, failing instead under `TACHYON_REQUIRE_SHARED=1`) and generated ones. CI runs
//! a few sequences per design; `TACHYON_DIFF_SEQUENCES=N` runs N sequences in all
//! (spread over the designs) for a longer check.

use std::path::{Path, PathBuf};

use tachyon::graph::PinId;
use tachyon::{Backend, Retime, Split, Timer, TimingGroupPolicy, Transition};
use tachyon_testkit::SplitMix64;

const TAU_DESIGNS: &[&str] = &["c17", "s27", "s344", "c432", "simple"];
/// Steps (edits, each followed by a few queries) per sequence.
const STEPS: usize = 24;
/// Sequences per design in the default (CI) run.
const CI_SEQUENCES_PER_DESIGN: usize = 3;

/// What a sequence may pick its edits from.
struct Names {
    /// Instances with their cells.
    instances: Vec<(String, String)>,
    cells: Vec<String>,
    nets: Vec<String>,
    pins: Vec<String>,
    /// The design's SPEF, cut into its header and one block per net.
    spef_header: String,
    spef_nets: Vec<(String, String)>,
}

fn loaded(tau2015: &Path, retime: Retime) -> Timer {
    loaded_on(tau2015, retime, Backend::Cpu)
}

/// The GPU backend where a GPU is usable (an error under `TACHYON_REQUIRE_GPU=1`
/// without one), else the CPU. Sequences of odd seeds lay the dirty nets' RC trees out
/// on the device from their raw networks (`BackendConfig::rc_edits_on_device`).
fn incremental_backend(seed: u64) -> Backend {
    let config = tachyon::BackendConfig {
        rc_edits_on_device: seed % 2 == 1,
        ..Default::default()
    };
    match Backend::select(tachyon::Device::Gpu, &config) {
        Ok(backend) => backend,
        Err(reason) => {
            if std::env::var("TACHYON_REQUIRE_GPU").is_ok_and(|value| value == "1") {
                panic!("TACHYON_REQUIRE_GPU=1 but no usable GPU: {reason}");
            }
            Backend::Cpu
        }
    }
}

/// The incremental timer of sequence `seed`: its mixed strategy's threshold by the
/// seed (the backend's, every update on the resident state, or frontiers of at least
/// a few pins there and, on the GPU, of a dozen or more whole there), over the GPU's
/// resident state or its CPU twin.
fn incremental_timer(tau2015: &Path, seed: u64) -> Timer {
    let backend = incremental_backend(seed);
    let on_cpu = matches!(backend, Backend::Cpu);
    let mut timer = Timer::with_backend(backend);
    timer.set_retime(Retime::Incremental);
    match seed % 3 {
        0 => {}
        mode => {
            if on_cpu {
                timer.use_resident_twin();
            }
            timer.set_gpu_min_frontier(if mode == 1 { 0 } else { 6 });
            if mode == 2 {
                timer.set_gpu_whole_frontier(12);
            }
        }
    }
    timer.set_timing_group_policy(TimingGroupPolicy::LastPerRelatedPin);
    timer.load_tau2015(tau2015).expect("loads");
    timer
}

fn loaded_on(tau2015: &Path, retime: Retime, backend: Backend) -> Timer {
    let mut timer = Timer::with_backend(backend);
    timer.set_retime(retime);
    timer.set_timing_group_policy(TimingGroupPolicy::LastPerRelatedPin);
    timer.load_tau2015(tau2015).expect("loads");
    timer
}

fn names_of(tau2015: &Path, timer: &mut Timer) -> Names {
    let folder = tau2015.parent().expect("folder");
    let listed = std::fs::read_to_string(tau2015).expect("tau2015");
    let files: Vec<&str> = listed.split_whitespace().collect();
    let library = std::fs::read_to_string(folder.join(files[0])).expect("library");
    let mut cells: Vec<String> = library
        .lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("cell")?;
            let rest = rest.trim_start().strip_prefix('(')?;
            let name = rest.split(')').next()?.trim().trim_matches('"');
            Some(name.to_string())
        })
        .collect();
    cells.sort();
    cells.dedup();
    let spef = std::fs::read_to_string(folder.join(files[2])).expect("spef");
    let verilog_text = std::fs::read_to_string(folder.join(files[3])).expect("verilog");
    let netlist = tachyon::verilog::parse_netlist("design.v", &verilog_text).expect("parses");
    let cell_of: std::collections::HashMap<String, String> = netlist
        .modules
        .iter()
        .flat_map(|module| module.instances.iter())
        .map(|instance| (instance.name.to_string(), instance.cell.to_string()))
        .collect();
    let (graph, _) = timer.timing().expect("times");
    // Instances as the graph names them (hierarchy flattened), with their cells where
    // the netlist is flat (else any cell: resizing then mostly changes the cell).
    let mut instances: Vec<(String, String)> = graph
        .pins()
        .iter()
        .filter_map(|pin| {
            pin.name
                .rsplit_once(':')
                .map(|(instance, _)| instance.to_string())
        })
        .map(|instance| {
            let cell = cell_of
                .get(&instance)
                .cloned()
                .unwrap_or_else(|| cells[0].clone());
            (instance, cell)
        })
        .collect();
    instances.dedup();
    let nets = graph.nets().iter().map(|net| net.name.clone()).collect();
    let pins = graph.pins().iter().map(|pin| pin.name.clone()).collect();
    let mut blocks = spef.split("*D_NET");
    let spef_header = blocks.next().unwrap_or_default().to_string();
    let spef_nets = blocks
        .map(|block| {
            let name = block.split_whitespace().next().unwrap_or_default();
            (name.to_string(), format!("*D_NET{block}"))
        })
        .collect();
    Names {
        instances,
        cells,
        nets,
        pins,
        spef_header,
        spef_nets,
    }
}

/// `block` with every value of its `*CAP` and `*RES` lines scaled by `factor`.
fn scaled_block(block: &str, factor: f64) -> String {
    let mut out = String::new();
    let mut section = "";
    for line in block.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('*') {
            section = trimmed.split_whitespace().next().unwrap_or_default();
            out.push_str(line);
        } else if (section == "*CAP" || section == "*RES") && !trimmed.is_empty() {
            let mut tokens: Vec<String> = trimmed.split_whitespace().map(str::to_string).collect();
            if let Some(last) = tokens.last_mut() {
                if let Ok(value) = last.parse::<f64>() {
                    *last = format!("{:.4}", value * factor);
                }
            }
            out.push_str(&tokens.join(" "));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The family of a cell (`NAND2` of `NAND2_X4`), for resizing within it.
fn family(cell: &str) -> &str {
    cell.rsplit_once("_X").map_or(cell, |(family, _)| family)
}

/// Counts of what a run compared.
#[derive(Default, Debug)]
struct Counts {
    sequences: usize,
    edits: usize,
    failed_edits: usize,
    values: usize,
    incremental_updates: usize,
    /// Incremental updates that ran over the resident state (GPU or its CPU twin).
    resident_updates: usize,
    full_fallbacks: usize,
    /// Sequences ended by an edit after which the design no longer links.
    unlinkable_ends: usize,
    /// Deliberate second drivers that both timers refused alike (then undone).
    second_drivers_refused: usize,
    /// Updates that brought up to date only a query's cone or region.
    partial_updates: usize,
    /// Of those, the rat and slack queries' (their pin's fan-out region, the tests it
    /// reaches and their CPPR).
    region_updates: usize,
}

/// The connectivity of the design as it is now (from the full timer's graph), so that
/// the generator connects a driver only to a net without one: a net with two drivers
/// does not link (since issue 22) and would end the sequence.
struct Connectivity {
    /// Nets with a driver, in graph order, with their driver.
    driven: Vec<(String, String)>,
    /// Driver pins (primary inputs, cell outputs), in graph order, with their net.
    drivers: Vec<(String, Option<String>)>,
    /// Every pin of the graph: whether it drives its net.
    is_driver: std::collections::HashMap<String, bool>,
}

fn connectivity(timer: &mut Timer) -> Connectivity {
    let (graph, _) = timer.timing().expect("timed");
    let net_name = |net: Option<tachyon::graph::NetId>| net.map(|net| graph.net(net).name.clone());
    let driven = graph
        .nets()
        .iter()
        .filter_map(|net| Some((net.name.clone(), graph.pin(net.driver?).name.clone())))
        .collect();
    let drivers = graph
        .pins()
        .iter()
        .filter(|pin| pin.kind.is_driver())
        .map(|pin| (pin.name.clone(), net_name(pin.net)))
        .collect();
    let is_driver = graph
        .pins()
        .iter()
        .map(|pin| (pin.name.clone(), pin.kind.is_driver()))
        .collect();
    Connectivity {
        driven,
        drivers,
        is_driver,
    }
}

fn same_value(
    context: &str,
    ours: Result<Option<f64>, tachyon::TimerError>,
    theirs: Result<Option<f64>, tachyon::TimerError>,
) {
    match (ours, theirs) {
        (Ok(ours), Ok(theirs)) => assert_eq!(
            ours.map(f64::to_bits),
            theirs.map(f64::to_bits),
            "{context}: incremental {ours:?}, full {theirs:?}"
        ),
        (Err(_), Err(_)) => {}
        (ours, theirs) => panic!(
            "{context}: incremental {:?}, full {:?}",
            ours.map_err(|e| e.to_string()),
            theirs.map_err(|e| e.to_string())
        ),
    }
}

fn compare_pin(
    incremental: &mut Timer,
    full: &mut Timer,
    pin: &str,
    context: &str,
    counts: &mut Counts,
) {
    for split in [Split::Early, Split::Late] {
        for transition in [Transition::Rise, Transition::Fall] {
            let at = format!("{context}: at {pin} {split:?} {transition:?}");
            same_value(
                &at,
                incremental.at(pin, split, transition),
                full.at(pin, split, transition),
            );
            let slew = format!("{context}: slew {pin} {split:?} {transition:?}");
            same_value(
                &slew,
                incremental.slew(pin, split, transition),
                full.slew(pin, split, transition),
            );
            let rat = format!("{context}: rat {pin} {split:?} {transition:?}");
            same_value(
                &rat,
                incremental.rat(pin, split, transition),
                full.rat(pin, split, transition),
            );
            let slack = format!("{context}: slack {pin} {split:?} {transition:?}");
            same_value(
                &slack,
                incremental.slack(pin, split, transition),
                full.slack(pin, split, transition),
            );
            counts.values += 4;
        }
    }
}

/// One query of a random kind (at, slew, rat, slack on a random pin, split and
/// transition; WNS or TNS) asked of both timers: the same answer bit for bit.
fn random_query(
    random: &mut SplitMix64,
    incremental: &mut Timer,
    full: &mut Timer,
    pins: &[String],
    context: &str,
    counts: &mut Counts,
) {
    let pin = &pins[random.below(pins.len())];
    let split = [Split::Early, Split::Late][random.below(2)];
    let transition = [Transition::Rise, Transition::Fall][random.below(2)];
    // Mostly arrivals and slews, the queries that may leave dirty state behind.
    let kind = random.below(12);
    let what = format!("{context}: query {kind} {pin} {split:?} {transition:?}");
    let ask = |timer: &mut Timer| match kind {
        0..=5 => timer.at(pin, split, transition),
        6 | 7 => timer.slew(pin, split, transition),
        8 => timer.rat(pin, split, transition),
        9 => timer.slack(pin, split, transition),
        10 => timer.worst_negative_slack(split).map(Some),
        _ => timer.total_negative_slack(split).map(Some),
    };
    let ours = ask(incremental);
    count_partial_updates(incremental, matches!(kind, 8 | 9), counts);
    match (ours, ask(full)) {
        // "Nothing is timed" for WNS/TNS: the same error both ways.
        (Err(ours), Err(theirs)) => assert_eq!(ours.to_string(), theirs.to_string(), "{what}"),
        (ours, theirs) => same_value(&what, ours, theirs),
    }
    counts.values += 1;
}

/// Counts the partial updates since the last call (`region`: a rat or slack query's).
fn count_partial_updates(incremental: &mut Timer, region: bool, counts: &mut Counts) {
    for update in incremental.take_update_history() {
        if update.partial {
            counts.partial_updates += 1;
            counts.region_updates += usize::from(region);
        }
    }
}

fn compare_summary(incremental: &mut Timer, full: &mut Timer, context: &str, counts: &mut Counts) {
    for split in [Split::Early, Split::Late] {
        // Both timers answer alike: a value (bit for bit), or the same error (since
        // issue 22, "nothing is timed" when no endpoint has a slack).
        let answer = |value: Result<f64, tachyon::TimerError>| {
            value.map(f64::to_bits).map_err(|error| error.to_string())
        };
        let wns = (
            answer(incremental.worst_negative_slack(split)),
            answer(full.worst_negative_slack(split)),
        );
        assert_eq!(wns.0, wns.1, "{context}: WNS {split:?}");
        let tns = (
            answer(incremental.total_negative_slack(split)),
            answer(full.total_negative_slack(split)),
        );
        assert_eq!(tns.0, tns.1, "{context}: TNS {split:?}");
        counts.values += 2;
    }
    let paths = |timer: &mut Timer| -> Vec<(u64, Vec<(String, Transition)>)> {
        let found = timer.worst_paths(8, None, None, false).expect("paths");
        let (graph, _) = timer.timing().expect("timed");
        let mut described: Vec<(u64, Vec<(String, Transition)>)> = found
            .iter()
            .map(|path| {
                let pins = path
                    .pins
                    .iter()
                    .map(|&(pin, transition)| (graph.pin(pin).name.clone(), transition))
                    .collect();
                (path.slack.to_bits(), pins)
            })
            .collect();
        // Paths of equal slack may come in any order.
        described.sort_by(|a, b| {
            (f64::from_bits(a.0), &a.1)
                .partial_cmp(&(f64::from_bits(b.0), &b.1))
                .expect("ordered")
        });
        described
    };
    let (ours, theirs) = (paths(incremental), paths(full));
    assert_eq!(ours, theirs, "{context}: worst paths");
    counts.values += ours.len();
}

/// One random sequence of edits and queries on a fresh pair of timers.
fn run_sequence(tau2015: &Path, names: &Names, seed: u64, scratch: &Path, counts: &mut Counts) {
    let mut random = SplitMix64(seed);
    let mut incremental = incremental_timer(tau2015, seed);
    let mut full = loaded(tau2015, Retime::Full);
    // One sequence in four without CPPR.
    let cppr = seed % 4 != 3;
    incremental.set_cppr(cppr);
    full.set_cppr(cppr);
    let label = tau2015
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("design");
    let mut instances = names.instances.clone();
    let mut nets = names.nets.clone();
    let mut pins = names.pins.clone();
    // Timed once before the edits, so that edits follow the graph in place.
    incremental
        .worst_negative_slack(Split::Late)
        .expect("times");
    full.worst_negative_slack(Split::Late).expect("times");
    // Whether no edit waits for a query (the incremental timer is up to date).
    let mut up_to_date = true;
    for step in 0..STEPS {
        let context = format!("{label} seed {seed} step {step}");
        let pick =
            |random: &mut SplitMix64, list: &[String]| list[random.below(list.len())].clone();
        let now = connectivity(&mut full);
        let kind = random.below(100);
        type Edit = Box<dyn Fn(&mut Timer) -> Result<(), tachyon::TimerError>>;
        // What undoes a deliberate second driver once both timers have refused it.
        let mut undo: Option<Edit> = None;
        let (description, edit): (String, Edit) = if kind < 35 {
            let (instance, cell) = instances[random.below(instances.len())].clone();
            let same_family: Vec<String> = names
                .cells
                .iter()
                .filter(|other| family(other) == family(&cell))
                .cloned()
                .collect();
            let new_cell = if random.below(10) < 8 && !same_family.is_empty() {
                pick(&mut random, &same_family)
            } else {
                pick(&mut random, &names.cells)
            };
            if let Some(entry) = instances.iter_mut().find(|(name, _)| *name == instance) {
                entry.1 = new_cell.clone();
            }
            (
                format!("repower_gate {instance} {new_cell}"),
                Box::new(move |timer| timer.repower_gate(&instance, &new_cell)),
            )
        } else if kind < 50 && !now.driven.is_empty() {
            // A buffer on a driven net, as TAU's .ops insert one: the driver moves to a
            // new net that the buffer's input sinks; the buffer's output drives the old
            // net and its sinks.
            let buffer = format!("FZ_G{seed}_{step}");
            let net = format!("FZ_N{seed}_{step}");
            let cell = names
                .cells
                .iter()
                .find(|cell| cell.starts_with("BUF"))
                .cloned()
                .unwrap_or_else(|| pick(&mut random, &names.cells));
            let (old_net, driver) = now.driven[random.below(now.driven.len())].clone();
            instances.push((buffer.clone(), cell.clone()));
            nets.push(net.clone());
            for pin in ["A", "Z", "ZN", "Y", "I"] {
                pins.push(format!("{buffer}:{pin}"));
            }
            let description = format!("buffer {buffer} ({cell}) between {driver} and {old_net}");
            (
                description,
                Box::new(move |timer| {
                    timer.insert_gate(&buffer, &cell)?;
                    timer.insert_net(&net)?;
                    timer.disconnect_pin(&driver)?;
                    timer.connect_pin(&driver, &net)?;
                    timer.connect_pin(&format!("{buffer}:A"), &net)?;
                    timer.connect_pin(&format!("{buffer}:Z"), &old_net)
                }),
            )
        } else if kind < 55 {
            let (instance, _) = instances[random.below(instances.len())].clone();
            (
                format!("remove_gate {instance}"),
                Box::new(move |timer| timer.remove_gate(&instance)),
            )
        } else if kind < 62 {
            let net = if random.below(2) == 0 {
                format!("FZ_NET{seed}_{step}")
            } else {
                pick(&mut random, &nets)
            };
            nets.push(net.clone());
            (
                format!("insert_net {net}"),
                Box::new(move |timer| timer.insert_net(&net)),
            )
        } else if kind < 66 {
            let net = pick(&mut random, &nets);
            (
                format!("remove_net {net}"),
                Box::new(move |timer| timer.remove_net(&net)),
            )
        } else if kind < 76 {
            let pin = pick(&mut random, &pins);
            // A sink may join any net; a driver (or a pin the graph does not hold: a
            // removed gate's, an unconnected new one's) only a net without a driver, or
            // the net it drives.
            let sink = now.is_driver.get(&pin) == Some(&false);
            let driverless: Vec<String> = nets
                .iter()
                .filter(|net| {
                    now.driven
                        .iter()
                        .all(|(driven, driver)| driven != *net || *driver == pin)
                })
                .cloned()
                .collect();
            let net = if sink {
                pick(&mut random, &nets)
            } else if !driverless.is_empty() {
                pick(&mut random, &driverless)
            } else {
                // No such net: fails.
                format!("FZ_NONE{seed}_{step}")
            };
            (
                format!("connect_pin {pin} {net}"),
                Box::new(move |timer| timer.connect_pin(&pin, &net)),
            )
        } else if kind < 84 {
            let pin = pick(&mut random, &pins);
            (
                format!("disconnect_pin {pin}"),
                Box::new(move |timer| timer.disconnect_pin(&pin)),
            )
        } else if kind < 95 && !names.spef_nets.is_empty() {
            let mut text = names.spef_header.clone();
            let mut named = Vec::new();
            for _ in 0..random.between(1, 3) {
                let (net, block) = &names.spef_nets[random.below(names.spef_nets.len())];
                named.push(net.clone());
                text.push_str(&scaled_block(block, random.uniform(0.5, 2.0)));
            }
            let path = scratch.join(format!("change_{seed}_{step}.spef"));
            std::fs::write(&path, text).expect("writes");
            (
                format!("read_spef {}", named.join(" ")),
                Box::new(move |timer| timer.read_spef(&path)),
            )
        } else if kind < 98 && now.driven.len() > 1 {
            // Deliberately a second driver on a driven net: the design no longer links
            // and both timers must refuse it alike; the pin then goes back to its net.
            let (net, driver) = now.driven[random.below(now.driven.len())].clone();
            let others: Vec<&(String, Option<String>)> = now
                .drivers
                .iter()
                .filter(|(other, its_net)| *other != driver && its_net.as_ref() != Some(&net))
                .collect();
            let (second, its_net) = others[random.below(others.len())].clone();
            let back = second.clone();
            let back_to_its_net: Edit = match its_net {
                Some(its_net) => Box::new(move |timer| timer.connect_pin(&back, &its_net)),
                None => Box::new(move |timer| timer.disconnect_pin(&back)),
            };
            undo = Some(back_to_its_net);
            (
                format!("second driver: connect_pin {second} {net} (driven by {driver})"),
                Box::new(move |timer| timer.connect_pin(&second, &net)),
            )
        } else {
            (
                "repower_gate of a cell that does not exist".to_string(),
                Box::new(|timer| timer.repower_gate("no_such_instance", "NO_SUCH_CELL")),
            )
        };
        let context = format!("{context} ({description})");
        if std::env::var_os("TACHYON_DIFF_SEED").is_some() {
            eprintln!("{context}");
        }
        // Up to date before the edit (when the design times and no earlier edit waits
        // for a query), so that a failed edit can be seen to leave nothing to re-time.
        let timed_before = up_to_date && incremental.timing().is_ok();
        incremental.take_update_history();
        let outcomes = (edit(&mut incremental), edit(&mut full));
        counts.edits += 1;
        match outcomes {
            (Ok(()), Ok(())) => {}
            (Err(_), Err(_)) => {
                counts.failed_edits += 1;
                // A failed edit leaves the design, the graph and the timing as they
                // were: nothing is dirty, the next query re-times nothing. (A buffer
                // insertion is several commands: those before the failing one apply.)
                if timed_before && !context.contains("(buffer ") {
                    assert!(incremental.timing().is_ok(), "{context}: timed before");
                    let updates = incremental.take_update_history();
                    assert!(
                        updates.is_empty(),
                        "{context}: the failed edit left work to re-time: {updates:?}"
                    );
                }
            }
            (ours, theirs) => panic!(
                "{context}: incremental {:?}, full {:?}",
                ours.map_err(|e| e.to_string()),
                theirs.map_err(|e| e.to_string())
            ),
        }
        // Edits pile up: one step in two (not the last, not a deliberate second driver)
        // ends without queries, so that the next queries see what several edits left.
        if undo.is_none() && step + 1 < STEPS && random.below(2) == 0 {
            up_to_date = false;
            continue;
        }
        // Random queries on random pins (mostly far from the edits) while the edits'
        // dirty state is still there: arrivals and slews pull only their pins' fan-in
        // cones, leaving the rest for the queries after them.
        for _ in 0..random.between(1, 6) {
            random_query(
                &mut random,
                &mut incremental,
                &mut full,
                &pins,
                &context,
                counts,
            );
        }
        up_to_date = true;
        // An edit may leave a design that no longer links (a net with two drivers is an
        // error since issue 22): both timers must say so alike, and the sequence ends.
        let why = |timer: &mut Timer| timer.timing().err().map(|error| error.to_string());
        match (why(&mut incremental), why(&mut full)) {
            (None, None) => assert!(
                undo.is_none(),
                "{context}: a net with two drivers was not refused"
            ),
            (Some(ours), Some(theirs)) if undo.is_some() => {
                assert_eq!(ours, theirs, "{context}: both timers refuse it alike");
                let undo = undo.expect("an undo");
                let undone = (undo(&mut incremental), undo(&mut full));
                assert!(
                    undone.0.is_ok() && undone.1.is_ok(),
                    "{context}: undone: {undone:?}"
                );
                let after = (why(&mut incremental), why(&mut full));
                assert_eq!(after, (None, None), "{context}: links again once undone");
                counts.second_drivers_refused += 1;
            }
            (Some(ours), Some(theirs)) => {
                assert_eq!(
                    ours, theirs,
                    "{context}: both timers refuse the design alike"
                );
                eprintln!("{context}: the design no longer links, the sequence ends: {ours}");
                counts.unlinkable_ends += 1;
                counts.sequences += 1;
                return;
            }
            (ours, theirs) => panic!("{context}: incremental {ours:?}, full {theirs:?}"),
        }
        let pin = pick(&mut random, &pins);
        compare_pin(&mut incremental, &mut full, &pin, &context, counts);
        if std::env::var_os("TACHYON_DIFF_SEED").is_some() {
            // Replaying: every pin after every step, to find the first difference.
            let (graph, _) = full.timing().expect("timed");
            let all: Vec<String> = graph.pins().iter().map(|pin| pin.name.clone()).collect();
            if std::env::var_os("TACHYON_DIFF_DUMP").is_some() {
                let pin = std::env::var("TACHYON_DIFF_DUMP").unwrap();
                eprintln!(" incremental:");
                dump(&mut incremental, &pin);
                eprintln!(" full:");
                dump(&mut full, &pin);
            }
            for pin in &all {
                compare_pin(&mut incremental, &mut full, pin, &context, counts);
            }
        }
        let stats = incremental.stats();
        if stats.full {
            counts.full_fallbacks += 1;
        } else {
            counts.incremental_updates += 1;
            counts.resident_updates += usize::from(incremental.last_update_on_gpu());
        }
        if step % 6 == 5 || step + 1 == STEPS {
            compare_summary(&mut incremental, &mut full, &context, counts);
        }
    }
    // At the end, every pin.
    let (graph, _) = full.timing().expect("timed");
    let all: Vec<String> = graph.pins().iter().map(|pin| pin.name.clone()).collect();
    for pin in &all {
        compare_pin(
            &mut incremental,
            &mut full,
            pin,
            &format!("{label} seed {seed} end"),
            counts,
        );
    }
    counts.sequences += 1;
}

/// How many sequences to run on `n_designs` designs: per design in CI, or the total
/// that `TACHYON_DIFF_SEQUENCES` asks for, spread over them.
fn sequences_per_design(n_designs: usize) -> usize {
    match std::env::var("TACHYON_DIFF_SEQUENCES")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        Some(total) => total.div_ceil(n_designs.max(1)),
        None => CI_SEQUENCES_PER_DESIGN,
    }
}

/// The tests run at once (the test harness's threads), their incremental timers sharing
/// the GPU's one context: on purpose, as a library user's timers on several threads
/// would (see also `gpu_threads.rs`).
fn run_designs(designs: &[PathBuf], first_seed: u64) -> Counts {
    let scratch = std::env::temp_dir().join(format!(
        "tachyon-incremental-fuzz-{}-{first_seed}",
        std::process::id()
    ));
    std::fs::create_dir_all(&scratch).expect("scratch");
    let mut counts = Counts::default();
    let per_design = sequences_per_design(designs.len());
    for (index, tau2015) in designs.iter().enumerate() {
        let mut probe = loaded(tau2015, Retime::Full);
        let names = names_of(tau2015, &mut probe);
        for sequence in 0..per_design {
            let seed = first_seed + (index * 100_000 + sequence) as u64;
            // `TACHYON_DIFF_SEED=S` replays one failing sequence.
            let only = std::env::var("TACHYON_DIFF_SEED").ok();
            if only.is_some_and(|only| only != seed.to_string()) {
                continue;
            }
            run_sequence(tau2015, &names, seed, &scratch, &mut counts);
        }
    }
    std::fs::remove_dir_all(&scratch).ok();
    counts
}

#[test]
fn incremental_equals_full_on_tau_designs() {
    let Some(shared) = tachyon_testkit::shared_dir("incremental_fuzz") else {
        return;
    };
    let designs: Vec<PathBuf> = TAU_DESIGNS
        .iter()
        .map(|name| {
            shared
                .join("tau2015")
                .join(name)
                .join(format!("{name}.tau2015"))
        })
        .collect();
    let counts = run_designs(&designs, 1);
    println!("TAU designs: {counts:?}");
    assert!(
        counts.incremental_updates > 0,
        "some updates ran incrementally"
    );
}

#[test]
fn incremental_equals_full_on_generated_designs() {
    let designs = [
        tachyon_testkit::GeneratedDesign::new("incremental_fuzz_a", 300, 11),
        tachyon_testkit::GeneratedDesign::new("incremental_fuzz_b", 800, 12),
    ];
    let paths: Vec<PathBuf> = designs
        .iter()
        .map(|design| design.tau2015().to_path_buf())
        .collect();
    let counts = run_designs(&paths, 1_000_000);
    println!("generated designs: {counts:?}");
    assert!(
        counts.incremental_updates > 0,
        "some updates ran incrementally"
    );
    assert!(
        counts.resident_updates > 0,
        "some updates ran over the resident state"
    );
    assert!(
        counts.partial_updates > 0,
        "some queries brought up to date only their cones"
    );
    assert!(
        counts.region_updates > 0,
        "some rat or slack queries brought up to date only their regions"
    );
}
fn dump(timer: &mut Timer, pin: &str) {
    let (graph, data) = timer.timing().expect("timed");
    let id = graph.pin_by_name(pin).expect("pin");
    let p = graph.pin(id);
    eprintln!(
        "  {pin}: net {:?} arrival {:?} slew {:?}",
        p.net.map(|n| graph.net(n).name.clone()),
        data.arrival[id.index()],
        data.slew[id.index()]
    );
    if let Some(net) = p.net {
        let n = graph.net(net);
        eprintln!(
            "    load {:?} tree {:?} sinks {:?}",
            data.net_load[net.index()],
            n.parasitics.map(|s| s.n_nodes),
            n.sinks
                .iter()
                .map(|s| (graph.pin(*s).name.clone(), data.wire_delay[s.index()][0]))
                .collect::<Vec<_>>()
        );
    }
    for &arc in graph.fanin(id) {
        let a = graph.arc(arc);
        eprintln!(
            "    fanin from {} delay {:?} from-arrival {:?} slew {:?}",
            graph.pin(a.from).name,
            data.arc_delay[arc.index()],
            data.arrival[a.from.index()],
            data.slew[a.from.index()]
        );
    }
}

/// Edits that name a net by either of its names after `assign out = w4` joined them
/// (`testdata/robustness/assign.v`) are followed in place on the joined net: every pin
/// equals a full re-time bit for bit after each edit.
#[test]
fn edits_of_nets_joined_by_assign_equal_a_full_retime() {
    let testdata = tachyon_testkit::repo_root().join("testdata");
    let tiny = testdata.join("tiny");
    let spef = std::fs::read_to_string(tiny.join("tiny.spef")).expect("spef");
    let header = &spef[..spef.find("*D_NET").expect("a net")];
    let out_block = spef[spef.find("*D_NET out").expect("out's net")..]
        .split_inclusive("*END")
        .next()
        .expect("out's block");
    // The joined net's parasitics under its other name, with other values.
    let change = format!(
        "{header}{}\n",
        out_block
            .replace("*D_NET out", "*D_NET w4")
            .replace("1.5", "2.5")
    );
    let scratch =
        std::env::temp_dir().join(format!("tachyon-incremental-assign-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch");
    let change_path = scratch.join("w4.spef");
    std::fs::write(&change_path, change).expect("written");

    let load = |retime| {
        let mut timer = Timer::new();
        timer.set_retime(retime);
        timer
            .read_celllib(Some(Split::Early), tiny.join("tiny_Early.lib"))
            .expect("early library");
        timer
            .read_celllib(Some(Split::Late), tiny.join("tiny_Late.lib"))
            .expect("late library");
        timer
            .read_verilog(testdata.join("robustness/assign.v"))
            .expect("netlist");
        timer.read_spef(tiny.join("tiny.spef")).expect("spef");
        timer.read_timing(tiny.join("tiny.timing")).expect("timing");
        timer.timing().expect("times");
        timer
    };
    let (mut incremental, mut full) = (load(Retime::Incremental), load(Retime::Full));
    type Edit<'a> = Box<dyn Fn(&mut Timer) -> Result<(), tachyon::TimerError> + 'a>;
    let edits: Vec<(&str, Edit<'_>)> = vec![
        ("read_spef w4", Box::new(|t| t.read_spef(&change_path))),
        ("insert_net w4", Box::new(|t| t.insert_net("w4"))),
        (
            "read_spef out",
            Box::new(|t| t.read_spef(tiny.join("tiny.spef"))),
        ),
        (
            "disconnect_pin g4:Z",
            Box::new(|t| t.disconnect_pin("g4:Z")),
        ),
        (
            "connect_pin g4:Z w4",
            Box::new(|t| t.connect_pin("g4:Z", "w4")),
        ),
        (
            "read_spef w4 again",
            Box::new(|t| t.read_spef(&change_path)),
        ),
        ("remove_net w4", Box::new(|t| t.remove_net("w4"))),
        ("insert_net out", Box::new(|t| t.insert_net("out"))),
        (
            "connect_pin g4:Z out",
            Box::new(|t| t.connect_pin("g4:Z", "out")),
        ),
        (
            "connect_pin out w4",
            Box::new(|t| t.connect_pin("out", "w4")),
        ),
        (
            "read_spef out again",
            Box::new(|t| t.read_spef(tiny.join("tiny.spef"))),
        ),
    ];
    let mut counts = Counts::default();
    for (context, edit) in &edits {
        match (edit(&mut incremental), edit(&mut full)) {
            (Ok(()), Ok(())) => {}
            (Err(_), Err(_)) => counts.failed_edits += 1,
            (ours, theirs) => panic!(
                "{context}: incremental {:?}, full {:?}",
                ours.map_err(|e| e.to_string()),
                theirs.map_err(|e| e.to_string())
            ),
        }
        let (graph, _) = full.timing().expect("timed");
        let all: Vec<String> = graph.pins().iter().map(|pin| pin.name.clone()).collect();
        for pin in &all {
            compare_pin(&mut incremental, &mut full, pin, context, &mut counts);
        }
        if !incremental.stats().full {
            counts.incremental_updates += 1;
        }
    }
    std::fs::remove_dir_all(&scratch).ok();
    println!("assign: {counts:?}");
    assert_eq!(counts.failed_edits, 0, "every edit applies");
    assert!(counts.incremental_updates > 0, "some updates ran in place");
}

/// A rat query brings up to date only its pin's region; what it leaves (the edits' effects
/// outside it, the tests it does not reach, the backward frontier outside it) stays
/// pending, and the queries after it still see a whole update's values: rat and at on a
/// pin elsewhere, rat on the first pin again, WNS/TNS and the worst paths, every pin.
#[test]
fn a_region_query_leaves_the_rest_for_the_queries_after_it() {
    let design = tachyon_testkit::GeneratedDesign::new("incremental_region", 800, 13);
    let tau2015 = design.tau2015();
    let mut incremental = loaded(tau2015, Retime::Incremental);
    let mut full = loaded(tau2015, Retime::Full);
    let names = names_of(tau2015, &mut full);
    let gates: Vec<&(String, String)> = names
        .instances
        .iter()
        .filter(|(name, _)| name.starts_with('g') && name[1..].parse::<u32>().is_ok())
        .collect();
    let resize = |timers: [&mut Timer; 2], (instance, cell): &(String, String)| {
        let other = names
            .cells
            .iter()
            .find(|other| family(other) == family(cell) && *other != cell)
            .expect("another size");
        for timer in timers {
            timer.repower_gate(instance, other).expect("resizes");
        }
    };
    let pin_of = |instance: &str| {
        names
            .pins
            .iter()
            .find(|pin| pin.starts_with(&format!("{instance}:")))
            .expect("a pin")
            .clone()
    };
    let mut counts = Counts::default();
    // Timed, so that edits follow the graph in place; a first edit and a whole
    // incremental update, which finds the clock network.
    incremental.timing().expect("times");
    resize([&mut incremental, &mut full], gates[gates.len() / 2]);
    compare_summary(&mut incremental, &mut full, "first edit", &mut counts);
    // Edits in two places apart (neither reaches the other), then a rat on each place's
    // pin: each pulls its region only.
    let a = gates[3];
    let pin_a = pin_of(&a.0);
    let (graph, _) = full.timing().expect("timed");
    let id = |name: &str| graph.pin_by_name(name).expect("a pin");
    let b = gates
        .iter()
        .rev()
        .find(|(instance, _)| {
            let pin_b = pin_of(instance);
            !reaches(graph, id(&pin_a), id(&pin_b)) && !reaches(graph, id(&pin_b), id(&pin_a))
        })
        .expect("a gate apart");
    let pin_b = pin_of(&b.0);
    resize([&mut incremental, &mut full], a);
    resize([&mut incremental, &mut full], b);
    incremental.take_update_history();
    let mut timers = [&mut incremental, &mut full];
    ask_both(&mut timers, &pin_a, "rat", &mut counts);
    assert_eq!(
        counts.region_updates, 1,
        "the rat on {pin_a} pulled its region"
    );
    ask_both(&mut timers, &pin_b, "at", &mut counts);
    ask_both(&mut timers, &pin_b, "slack", &mut counts);
    assert_eq!(
        counts.region_updates, 2,
        "the slack on {pin_b} pulled its region"
    );
    ask_both(&mut timers, &pin_a, "rat", &mut counts);
    compare_summary(
        &mut incremental,
        &mut full,
        "after the regions",
        &mut counts,
    );
    let (graph, _) = full.timing().expect("timed");
    let all: Vec<String> = graph.pins().iter().map(|pin| pin.name.clone()).collect();
    for pin in &all {
        compare_pin(&mut incremental, &mut full, pin, "every pin", &mut counts);
    }
    println!("region: {counts:?}");
}

/// `what` (at, rat or slack) of `pin` for both splits and transitions, asked of the
/// incremental timer and the full one: the same bits.
fn ask_both(timers: &mut [&mut Timer; 2], pin: &str, what: &str, counts: &mut Counts) {
    for split in [Split::Early, Split::Late] {
        for transition in [Transition::Rise, Transition::Fall] {
            let ask = |timer: &mut Timer| match what {
                "rat" => timer.rat(pin, split, transition),
                "slack" => timer.slack(pin, split, transition),
                _ => timer.at(pin, split, transition),
            };
            let ours = ask(timers[0]);
            count_partial_updates(timers[0], what != "at", counts);
            let context = format!("{what} {pin} {split:?} {transition:?}");
            same_value(&context, ours, ask(timers[1]));
        }
    }
}

/// Whether `to` is in the fan-out cone of `from`.
fn reaches(graph: &tachyon::graph::TimingGraph, from: PinId, to: PinId) -> bool {
    let mut seen = std::collections::HashSet::from([from]);
    let mut stack = vec![from];
    while let Some(pin) = stack.pop() {
        if pin == to {
            return true;
        }
        for &next in graph.fanout_pins(pin) {
            if seen.insert(next) {
                stack.push(next);
            }
        }
    }
    false
}
