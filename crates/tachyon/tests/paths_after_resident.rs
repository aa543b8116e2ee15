//! Path queries after full updates over the resident state (`Timer::retime_full`): on
//! the GPU backend the path graph's in-edges are built there from the values the update
//! left on the device, and the endpoints from values gathered there (the values stay
//! there: no query brings them all back). After edits (timed on the CPU, then on the GPU: the mixed
//! strategy's threshold) they are built from the resident state's forward values too,
//! the device brought up to date first when updates on the CPU left it behind. Every
//! path list equals a CPU timer's. On the CPU backend the same steps run over the
//! resident state's CPU twin, which holds no values after a full update (that graph is
//! built on the host) and the host's after edits (the graph's edges then come from the
//! kernels' per-node function over them): what CI checks of the choice and of the
//! edited graph's edges. After edits whose updates run whole over the resident state
//! on the GPU (every frontier), the queries read the values those updates left there,
//! as after a full update, and new parasitics read after them leave the values there.

use std::path::Path;

use tachyon::sdc::parse_ops;
use tachyon::{Backend, Split, Timer};
use tachyon_testkit::GeneratedDesign;

/// Benchmarks with edits in their `.ops` that stay quick in the dev profile.
const BENCHMARKS: &[&str] = &["c17", "s27", "s344", "c432", "simple"];

/// An edit applied to the timer under test and the CPU timer alike.
type Edit = Box<dyn Fn(&mut Timer)>;

fn loaded(tau2015: &Path, backend: &Backend) -> Timer {
    let mut timer = Timer::with_backend(backend.clone());
    timer.load_tau2015(tau2015).expect("loads");
    if matches!(backend, Backend::Cpu) {
        timer.use_resident_twin();
    }
    timer
}

/// A few queries' path lists, `timer`'s equal to `cpu`'s; how many paths.
fn paths_alike(what: &str, timer: &mut Timer, cpu: &mut Timer) -> usize {
    let mut n_paths = 0;
    for (split, only_negative) in [
        (None, false),
        (Some(Split::Late), false),
        (Some(Split::Early), true),
    ] {
        let found = timer.worst_paths(100, split, None, only_negative).unwrap();
        let expected = cpu.worst_paths(100, split, None, only_negative).unwrap();
        assert_eq!(
            found, expected,
            "{what}: {split:?}, negative only {only_negative}"
        );
        n_paths += found.len();
    }
    n_paths
}

/// Edits in three groups: timed on the CPU, on the GPU, whole on the GPU.
type EditGroups = [Vec<Edit>; 3];

/// Path queries after two full updates over the resident state, then after each group
/// of `edits`: the first timed on the CPU, the second on the GPU (over the CPU twin on
/// the CPU backend), the third whole on the GPU followed by `spef` read (when given);
/// and after a `retime_full` following them.
fn check(name: &str, tau2015: &Path, backend: &Backend, edits: &EditGroups, spef: Option<&Path>) {
    let on_gpu = matches!(backend, Backend::Gpu(_));
    let mut timer = loaded(tau2015, backend);
    let mut cpu = Timer::new();
    cpu.load_tau2015(tau2015).expect("loads");
    timer.update_timing().unwrap();
    let mut n_paths = 0;
    for round in 0..2 {
        timer.retime_full().unwrap();
        let what = format!("{name}: after retime_full {round}");
        assert_eq!(timer.holds_values_on_device(), on_gpu, "{what}");
        n_paths += paths_alike(&what, &mut timer, &mut cpu);
        assert_eq!(timer.path_graph_from_device(), on_gpu, "{what}");
        // The queries gathered what they read there: nothing brought back.
        assert_eq!(
            timer.holds_values_on_device(),
            on_gpu,
            "{what}: after the queries"
        );
    }
    let [edits, more, whole] = edits;
    for (threshold, side, edits) in [(usize::MAX, "CPU", edits), (0, "GPU", more)] {
        timer.set_gpu_min_frontier(threshold);
        for edit in edits {
            edit(&mut timer);
            edit(&mut cpu);
        }
        let what = format!("{name}: after {} edits timed on the {side}", edits.len());
        n_paths += paths_alike(&what, &mut timer, &mut cpu);
        assert!(timer.path_graph_from_device(), "{what}");
    }
    timer.set_gpu_whole_frontier(0);
    for edit in whole {
        edit(&mut timer);
        edit(&mut cpu);
        timer.update_timing().unwrap();
    }
    let what = format!("{name}: after {} edits timed whole", whole.len());
    let updated_whole = on_gpu && !whole.is_empty();
    assert_eq!(timer.holds_values_on_device(), updated_whole, "{what}");
    n_paths += paths_alike(&what, &mut timer, &mut cpu);
    assert!(timer.path_graph_from_device(), "{what}");
    // The queries gathered what they read there: nothing brought back.
    assert_eq!(
        timer.holds_values_on_device(),
        updated_whole,
        "{what}: after the queries"
    );
    if let Some(spef) = spef {
        timer.read_spef(spef).unwrap();
        cpu.read_spef(spef).unwrap();
        let what = format!(
            "{name}: {} read after the edits timed whole",
            spef.display()
        );
        // New parasitics read no value: those left on the device stay there.
        assert_eq!(timer.holds_values_on_device(), updated_whole, "{what}");
        n_paths += paths_alike(&what, &mut timer, &mut cpu);
        assert_eq!(
            timer.holds_values_on_device(),
            on_gpu,
            "{what}: after the queries"
        );
    }
    timer.retime_full().unwrap();
    let what = format!("{name}: retime_full after the edits");
    n_paths += paths_alike(&what, &mut timer, &mut cpu);
    assert!(timer.path_graph_from_device(), "{what}");
    println!("{name}: {n_paths} paths alike");
}

/// Resizes of a few of the generated design's gates (`<family>_X<drive>` cells) to
/// another drive, in three groups.
fn generated_edits(design: &GeneratedDesign) -> EditGroups {
    let verilog = design.tau2015().with_extension("v");
    let text = std::fs::read_to_string(verilog).expect("the generated netlist");
    let edits: Vec<Edit> = text
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (cell, instance) = (words.next()?, words.next()?);
            let (family, drive) = cell.rsplit_once("_X")?;
            let other = match drive {
                "1" => "2",
                "2" => "4",
                "4" => "1",
                _ => return None,
            };
            (!family.starts_with("DFF") && !family.starts_with("CLK"))
                .then(|| (instance.to_string(), format!("{family}_X{other}")))
        })
        .step_by(97)
        .take(9)
        .map(|(instance, cell)| -> Edit {
            Box::new(move |timer: &mut Timer| timer.repower_gate(&instance, &cell).unwrap())
        })
        .collect();
    thirds(edits)
}

/// `edits` in three groups of (nearly) equal size, in order.
fn thirds(mut edits: Vec<Edit>) -> EditGroups {
    let size = edits.len().div_ceil(3);
    let whole = edits.split_off((2 * size).min(edits.len()));
    let more = edits.split_off(size.min(edits.len()));
    [edits, more, whole]
}

/// A benchmark's `.ops` edits (its queries left out), in three groups.
fn ops_edits(folder: &Path, name: &str) -> EditGroups {
    let path = folder.join(format!("{name}.ops"));
    let text = std::fs::read_to_string(&path).expect("ops");
    let operations: Vec<_> = parse_ops(&path.display().to_string(), &text)
        .expect("parses")
        .into_iter()
        .filter(|operation| !operation.kind.is_query())
        .collect();
    let edits: Vec<Edit> = operations
        .chunks(operations.len().div_ceil(6).max(1))
        .map(|chunk| -> Edit {
            let (chunk, folder) = (chunk.to_vec(), folder.to_path_buf());
            Box::new(move |timer: &mut Timer| {
                timer
                    .run_ops(&chunk, &folder, &mut std::io::sink())
                    .unwrap();
            })
        })
        .collect();
    thirds(edits)
}

tachyon_testkit::both_backends! {
    /// On each backend.
    fn path_queries_after_resident_full_updates_equal_the_cpu(backend) {
        let design = GeneratedDesign::new("paths-after-resident", 3000, 5);
        let edits = generated_edits(&design);
        assert!(edits.iter().all(|group| !group.is_empty()));
        // Its SPEF read again (the resizes leave its nets alone).
        let spef = design.tau2015().with_extension("spef");
        check("gen3000", design.tau2015(), &backend, &edits, Some(&spef));
        let Some(shared) = tachyon_testkit::shared_dir("paths_after_resident") else {
            return;
        };
        for name in BENCHMARKS {
            let folder = shared.join("tau2015").join(name);
            let edits = ops_edits(&folder, name);
            let tau2015 = folder.join(format!("{name}.tau2015"));
            check(name, &tau2015, &backend, &edits, None);
        }
    }
}
