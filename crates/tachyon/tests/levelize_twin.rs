//! The frontier levelization the GPU runs (here through its CPU twin) puts every pin in
//! the level the graph's own levelization gives it, primary inputs first.

use std::collections::BTreeSet;

use tachyon::gba::FlatTiming;
use tachyon::Timer;

#[test]
fn frontier_levels_equal_the_graph_levels() {
    let folder = std::env::temp_dir().join(format!("tachyon-levelize-{}", std::process::id()));
    let config = tachyon_gen::GenConfig::new(2000, 11);
    tachyon_gen::generate(&config, &folder).unwrap();
    let mut timer = Timer::new();
    timer
        .load_tau2015(folder.join(format!("{}.tau2015", config.name)))
        .unwrap();
    let (graph, _) = timer.timing().unwrap();
    let flat = FlatTiming::build(graph);
    let (level_start, level_pins) = tachyon_gpu::twin::levelize(
        &flat.fanin_start,
        &flat.fanout_start,
        &flat.fanout_arcs,
        &flat.arcs,
        &flat.primary_inputs,
    )
    .expect("the graph is acyclic");
    assert_eq!(level_start.len() as u32, graph.n_levels() + 1);
    for level in 0..graph.n_levels() {
        let range = level_start[level as usize] as usize..level_start[level as usize + 1] as usize;
        let ours: BTreeSet<u32> = level_pins[range].iter().copied().collect();
        let graphs: BTreeSet<u32> = graph.level(level).iter().map(|pin| pin.0).collect();
        assert_eq!(ours, graphs, "level {level}");
    }
    let n_inputs = flat.primary_inputs.len();
    assert_eq!(&level_pins[..n_inputs], flat.primary_inputs.as_slice());
    std::fs::remove_dir_all(&folder).ok();
}
