//! Every way the generator writes a design's constraints and checks means the same to
//! the project's timer: the SDC and the `.timing` file, and the two layouts of the
//! libraries' checks, give the same arrival, slew, required time and slack at every pin
//! (equal as numbers: the SDC's early output required time is `-0` where the `.timing`
//! file says `0`; every other value is bit for bit the same).

use std::path::{Path, PathBuf};

use tachyon::{Split, Timer, Transition};
use tachyon_gen::{generate, CheckGroups, GenConfig};

fn generate_into(test_name: &str, check_groups: CheckGroups) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test_name);
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = GenConfig::new(3000, 4);
    config.cone_samples = 0;
    config.check_groups = check_groups;
    generate(&config, &dir).expect("generation succeeds");
    dir
}

fn timer_with(dir: &Path, constraints: &str) -> Timer {
    let name = "gen3000";
    let mut timer = Timer::new();
    timer
        .read_celllib(Some(Split::Early), dir.join(format!("{name}_Early.lib")))
        .expect("early library");
    timer
        .read_celllib(Some(Split::Late), dir.join(format!("{name}_Late.lib")))
        .expect("late library");
    timer
        .read_verilog(dir.join(format!("{name}.v")))
        .expect("Verilog");
    timer
        .read_spef(dir.join(format!("{name}.spef")))
        .expect("SPEF");
    let constraints = dir.join(format!("{name}{constraints}"));
    if constraints
        .extension()
        .is_some_and(|extension| extension == "sdc")
    {
        timer.read_sdc_as_assertions(constraints).expect("SDC");
    } else {
        timer.read_timing(constraints).expect(".timing");
    }
    timer
}

/// Arrival, slew, required time and slack of every pin and condition, with zeros of
/// either sign made equal; and how many pins have a slack.
fn every_value(timer: &mut Timer) -> (Vec<[Option<u64>; 4]>, usize) {
    let pins: Vec<String> = {
        let (graph, _) = timer.timing().expect("timing");
        graph.pins().iter().map(|pin| pin.name.clone()).collect()
    };
    let bits = |value: f64| if value == 0.0 { 0 } else { value.to_bits() };
    let mut values = Vec::new();
    for pin in &pins {
        for split in [Split::Early, Split::Late] {
            for transition in [Transition::Rise, Transition::Fall] {
                values.push(
                    [
                        timer.at(pin, split, transition).expect("at"),
                        timer.slew(pin, split, transition).expect("slew"),
                        timer.rat(pin, split, transition).expect("rat"),
                        timer.slack(pin, split, transition).expect("slack"),
                    ]
                    .map(|value| value.map(bits)),
                );
            }
        }
    }
    let constrained = values.iter().filter(|value| value[3].is_some()).count();
    (values, constrained)
}

#[test]
fn sdc_and_timing_files_give_the_same_answers() {
    let dir = generate_into("sdc_equals_timing", CheckGroups::Tau);
    let (from_timing, constrained) = every_value(&mut timer_with(&dir, ".timing"));
    let (from_sdc, _) = every_value(&mut timer_with(&dir, ".sdc"));
    assert!(from_timing.len() > 30_000, "{} values", from_timing.len());
    assert!(constrained > from_timing.len() / 2, "{constrained} slacks");
    let first_difference = from_timing
        .iter()
        .zip(&from_sdc)
        .position(|(timing, sdc)| timing != sdc);
    assert_eq!(first_difference, None, "values differ");
}

#[test]
fn both_check_layouts_give_the_same_answers() {
    let tau = generate_into("checks_tau", CheckGroups::Tau);
    let both = generate_into("checks_both", CheckGroups::Both);
    let (from_tau, _) = every_value(&mut timer_with(&tau, ".timing"));
    let (from_both, _) = every_value(&mut timer_with(&both, ".timing"));
    assert_eq!(from_tau.len(), from_both.len());
    let first_difference = from_tau
        .iter()
        .zip(&from_both)
        .position(|(tau, both)| tau != both);
    assert_eq!(first_difference, None, "values differ");
}
