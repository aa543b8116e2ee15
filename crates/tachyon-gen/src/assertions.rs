//! The small text files: `.timing` assertions, the `.tau2015` manifest and `.ops` queries.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::estimate::ClockEstimate;
use crate::names::CLOCK_PORT;
use crate::netlist::Netlist;
use crate::text::TextFile;
use crate::{GenConfig, GenError};

/// How many primary outputs and flip-flop D pins the `.ops` file queries.
const QUERIED_PINS_PER_KIND: u32 = 4;

/// Writes `<name>.timing`: the clock, input arrival times and slews, output required
/// times and loads.
pub(crate) fn write_timing(
    out_dir: &Path,
    config: &GenConfig,
    netlist: &Netlist,
    clock: ClockEstimate,
) -> Result<(PathBuf, u64), GenError> {
    let mut text = String::new();
    let slew = format_number(config.input_slew_ps);
    let _ = writeln!(
        text,
        "clock {CLOCK_PORT} {} 50",
        format_number(clock.period)
    );
    let _ = writeln!(text, "at {CLOCK_PORT} 0 0 0 0");
    let _ = writeln!(text, "slew {CLOCK_PORT} {slew} {slew} {slew} {slew}");
    // Data inputs arrive one clock latency after the edge, as if launched by flip-flops
    // outside the design; outputs are required one period later.
    let arrival = format_number(clock.latency);
    for input in 0..netlist.n_primary_inputs {
        let _ = writeln!(text, "at in{input} {arrival} {arrival} {arrival} {arrival}");
        let _ = writeln!(text, "slew in{input} {slew} {slew} {slew} {slew}");
    }
    let required = format_number(clock.period + clock.latency);
    let load = format_number(config.output_load_ff);
    for output in 0..netlist.n_primary_outputs {
        let _ = writeln!(text, "rat out{output} 0 0 {required} {required}");
        let _ = writeln!(text, "load out{output} {load}");
    }
    write_small_file(&out_dir.join(format!("{}.timing", config.name)), &text)
}

/// Writes `<name>.tau2015`: the one-line list of the design's files.
pub(crate) fn write_manifest(out_dir: &Path, name: &str) -> Result<(PathBuf, u64), GenError> {
    let text = format!("{name}_Early.lib {name}_Late.lib {name}.spef {name}.v\n");
    write_small_file(&out_dir.join(format!("{name}.tau2015")), &text)
}

/// Writes `<name>.ops`: timing queries on a few outputs and flip-flop D pins, then the
/// ten worst paths.
pub(crate) fn write_ops(
    out_dir: &Path,
    name: &str,
    netlist: &Netlist,
) -> Result<(PathBuf, u64), GenError> {
    let mut pins = Vec::new();
    for output in spread(netlist.n_primary_outputs, QUERIED_PINS_PER_KIND) {
        pins.push(format!("out{output}"));
    }
    for flip_flop in spread(netlist.n_flip_flops, QUERIED_PINS_PER_KIND) {
        pins.push(format!("ff{flip_flop}:D"));
    }
    let mut text = String::new();
    for pin in &pins {
        for query in ["report_at", "report_rat", "report_slack"] {
            for condition in ["", " -fall", " -late", " -late -fall"] {
                let _ = writeln!(text, "{query} -pin {pin}{condition}");
            }
        }
    }
    text.push_str("report_worst_paths -numPaths 10\n");
    write_small_file(&out_dir.join(format!("{name}.ops")), &text)
}

/// Up to `count` indices spread evenly over `0..total`.
fn spread(total: u32, count: u32) -> impl Iterator<Item = u32> {
    let taken = count.min(total);
    (0..taken).map(move |position| {
        (u64::from(position) * u64::from(total) / u64::from(taken.max(1))) as u32
    })
}

/// A number without a trailing `.0`, with at most one decimal.
fn format_number(value: f64) -> String {
    let tenths = (value * 10.0).round() as i64;
    if tenths % 10 == 0 {
        format!("{}", tenths / 10)
    } else {
        format!("{:.1}", tenths as f64 / 10.0)
    }
}

fn write_small_file(path: &Path, text: &str) -> Result<(PathBuf, u64), GenError> {
    let mut file = TextFile::create(path)?;
    file.text(text);
    let bytes = file.finish()?;
    Ok((path.to_path_buf(), bytes))
}
