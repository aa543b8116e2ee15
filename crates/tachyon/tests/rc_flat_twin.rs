//! The GPU's RC path (the flat RC layout, the batch RC pass and the per-pin and per-net
//! gathers), here through its CPU twins, gives bit for bit what the CPU backend's
//! `compute_parasitics` stores.

use tachyon::gba::{compute_parasitics, FlatParasitics};
use tachyon::graph::TimingData;
use tachyon::kernels::propagate::{gather_load, gather_wire};
use tachyon::Timer;

#[test]
fn flat_rc_twin_equals_compute_parasitics() {
    let folder = std::env::temp_dir().join(format!("tachyon-rc-twin-{}", std::process::id()));
    let config = tachyon_gen::GenConfig::new(3000, 5);
    tachyon_gen::generate(&config, &folder).unwrap();
    let mut timer = Timer::new();
    timer
        .load_tau2015(folder.join(format!("{}.tau2015", config.name)))
        .unwrap();
    let (graph, _) = timer.timing().unwrap();
    let mut reference = TimingData::new(
        graph.n_pins() as usize,
        graph.nets().len(),
        graph.arcs().len(),
        graph.tests().len(),
    );
    compute_parasitics(graph, &mut reference);

    let flat = FlatParasitics::build(graph);
    let batch = tachyon_gpu::RcNetBatch::new(flat.net_offsets, flat.parent, flat.res, flat.cap)
        .expect("a valid batch");
    let nodes = tachyon_gpu::twin::rc_nets(&batch);
    let bits = |values: [f64; 4]| values.map(f64::to_bits);
    let mut n_sources = 0;
    for pin in 0..graph.n_pins() as usize {
        let (delay, impulse) = gather_wire(flat.pin_source[pin], &nodes.delay, &nodes.impulse);
        n_sources += usize::from(flat.pin_source[pin] != tachyon::kernels::propagate::NONE);
        assert_eq!(
            bits(delay),
            bits(reference.wire_delay[pin]),
            "pin {pin} delay"
        );
        assert_eq!(
            bits(impulse),
            bits(reference.wire_impulse[pin]),
            "pin {pin} impulse"
        );
    }
    for net in 0..graph.nets().len() {
        let load = gather_load(flat.net_root[net], &nodes.load, flat.net_lumped[net]);
        assert_eq!(bits(load), bits(reference.net_load[net]), "net {net} load");
    }
    assert!(n_sources > graph.nets().len(), "the design has RC trees");
    std::fs::remove_dir_all(&folder).ok();
}
