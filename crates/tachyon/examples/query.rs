//! Runs a TAU 2015 benchmark's `.ops` up to a line and prints the timing of some pins:
//! `cargo run -p tachyon --example query -- <folder> <last_line> <pin>...`.

use std::path::Path;

use tachyon::sdc::parse_ops;
use tachyon::{Split, Timer, Transition};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let folder = Path::new(&arguments[0]);
    let last_line: u32 = arguments[1].parse()?;
    let name = folder.file_name().unwrap().to_string_lossy().to_string();
    let mut timer = Timer::new();
    timer.load_tau2015(folder.join(format!("{name}.tau2015")))?;
    let ops_path = folder.join(format!("{name}.ops"));
    let operations = match std::fs::read_to_string(ops_path) {
        Ok(text) => parse_ops("ops", &text)?,
        Err(_) => Vec::new(),
    };
    let edits: Vec<_> = operations
        .into_iter()
        .filter(|operation| operation.line <= last_line && !operation.kind.is_query())
        .collect();
    timer.run_ops(&edits, folder, &mut std::io::sink())?;
    timer.update_timing()?;
    for phase in timer.phase_timings() {
        eprintln!("{:>10}: {:?}", phase.phase, phase.duration);
    }
    for pin in &arguments[2..] {
        for split in Split::BOTH {
            for transition in Transition::BOTH {
                println!(
                    "{pin} {split:?} {transition:?}: at {:?} slew {:?} rat {:?} slack {:?}",
                    timer.at(pin, split, transition)?,
                    timer.slew(pin, split, transition)?,
                    timer.rat(pin, split, transition)?,
                    timer.slack(pin, split, transition)?
                );
            }
        }
    }
    Ok(())
}
