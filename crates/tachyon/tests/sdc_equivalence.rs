//! Reading the SDC instead of the `.timing` gives the same timing.

use tachyon::{Split, Timer, Transition};

#[test]
fn sdc_and_timing_assertions_time_alike() {
    let Some(shared) = tachyon_testkit::shared_dir("sdc_and_timing_assertions_time_alike") else {
        return;
    };
    for name in ["c17", "s27", "simple"] {
        let folder = shared.join("tau2015").join(name);
        let mut from_timing = Timer::new();
        from_timing
            .load_tau2015(folder.join(format!("{name}.tau2015")))
            .unwrap();
        let mut from_sdc = Timer::new();
        from_sdc
            .read_celllib(Some(Split::Early), folder.join(format!("{name}_Early.lib")))
            .unwrap();
        from_sdc
            .read_celllib(Some(Split::Late), folder.join(format!("{name}_Late.lib")))
            .unwrap();
        from_sdc
            .read_verilog(folder.join(format!("{name}.v")))
            .unwrap();
        from_sdc
            .read_spef(folder.join(format!("{name}.spef")))
            .unwrap();
        from_sdc
            .read_sdc_as_assertions(folder.join(format!("{name}.sdc")))
            .unwrap();
        let pins: Vec<String> = {
            let (graph, _) = from_timing.timing().unwrap();
            graph.pins().iter().map(|pin| pin.name.clone()).collect()
        };
        for pin in &pins {
            for split in Split::BOTH {
                for transition in Transition::BOTH {
                    assert_eq!(
                        from_timing.slack(pin, split, transition).unwrap(),
                        from_sdc.slack(pin, split, transition).unwrap(),
                        "{name}: {pin} {split:?} {transition:?}"
                    );
                }
            }
        }
    }
}
