//! The generated SDC and `.timing` files constrain the design identically: the project's
//! timer gives the same arrival, slew, required time and slack everywhere with either
//! one (equal as numbers: the SDC's early output required time is `-0`, the `.timing`
//! file's `0`; every other value is bit for bit the same).

use std::path::Path;

use tachyon::{Split, Timer, Transition};
use tachyon_gen::{generate, GenConfig};

fn timer_with(dir: &Path, name: &str, constraints: &str) -> Timer {
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
        timer.read_sdc(constraints).expect("SDC");
    } else {
        timer.read_timing(constraints).expect(".timing");
    }
    timer
}

#[test]
fn sdc_and_timing_files_give_the_same_answers() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sdc_equals_timing");
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = GenConfig::new(3000, 4);
    config.cone_samples = 0;
    generate(&config, &dir).expect("generation succeeds");
    let mut from_timing = timer_with(&dir, "gen3000", ".timing");
    let mut from_sdc = timer_with(&dir, "gen3000", ".sdc");
    let pins: Vec<String> = {
        let (graph, _) = from_timing.timing().expect("timing");
        graph.pins().iter().map(|pin| pin.name.clone()).collect()
    };
    let mut compared = 0;
    let mut constrained = 0;
    for pin in &pins {
        for split in [Split::Early, Split::Late] {
            for transition in [Transition::Rise, Transition::Fall] {
                let values = |timer: &mut Timer| {
                    [
                        timer.at(pin, split, transition).expect("at"),
                        timer.slew(pin, split, transition).expect("slew"),
                        timer.rat(pin, split, transition).expect("rat"),
                        timer.slack(pin, split, transition).expect("slack"),
                    ]
                    .map(|value| value.map(|value| if value == 0.0 { 0 } else { value.to_bits() }))
                };
                let expected = values(&mut from_timing);
                assert_eq!(
                    values(&mut from_sdc),
                    expected,
                    "{pin} {split:?} {transition:?}"
                );
                compared += 1;
                constrained += usize::from(expected[3].is_some());
            }
        }
    }
    assert!(compared > 30_000, "{compared} values compared");
    assert!(
        constrained > compared / 2,
        "{constrained} of {compared} have a slack"
    );
    assert_eq!(
        from_sdc
            .worst_negative_slack(Split::Late)
            .expect("wns")
            .to_bits(),
        from_timing
            .worst_negative_slack(Split::Late)
            .expect("wns")
            .to_bits()
    );
}
