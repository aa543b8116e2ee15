//! Measures SPEF parse throughput.
//!
//! Synthesizes a TAU-style SPEF (name map, one driver and 1-4 sinks per net, random RC
//! trees of 2-50 nodes) of about `SIZE_MB` megabytes into the temporary folder (reused
//! when already there), then times `parse_spef_with(parallel: false)` and `parse_spef` on
//! rayon pools of each thread count given.
//!
//! `cargo run --release -p tachyon-spef --example throughput -- [SIZE_MB] [THREADS...]`
//! (defaults: 300 MB, 1 and 2 threads). Dropping the model is not timed.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tachyon_spef::{parse_spef, parse_spef_with, ParseOptions};
use tachyon_testkit::SplitMix64;

/// A number in `low..=high` from `random` (SplitMix64: the file is the same on every run).
fn in_range(random: &mut SplitMix64, low: u64, high: u64) -> u64 {
    low + random.next_u64() % (high - low + 1)
}

/// A value with four decimals in `(0, scale]`.
fn value(random: &mut SplitMix64, scale: u64) -> String {
    let ten_thousandths = in_range(random, 1, scale * 10_000);
    format!(
        "{}.{:04}",
        ten_thousandths / 10_000,
        ten_thousandths % 10_000
    )
}

fn synthesize(target_bytes: usize) -> String {
    let mut random = SplitMix64(2015);
    // Size the design from the target: about 1.2 kB of RC data and 30 bytes of name map
    // per net.
    let n_nets = (target_bytes / 1_250).max(1) as u64;
    let n_instances = n_nets;
    let mut text = String::with_capacity(target_bytes + target_bytes / 10);
    text.push_str(
        "*SPEF \"IEEE 1481-1998\"\n*DESIGN \"synthetic\"\n*DATE \"today\"\n*VENDOR \"Tachyon\"\n\
         *PROGRAM \"throughput example\"\n*VERSION \"0.0\"\n*DESIGN_FLOW \"NETLIST_TYPE_VERILOG\"\n\
         *DIVIDER /\n*DELIMITER :\n*BUS_DELIMITER [ ]\n*T_UNIT 1 PS\n*C_UNIT 1 FF\n*R_UNIT 1 KOHM\n\
         *L_UNIT 1 UH\n\n*NAME_MAP\n",
    );
    // Ids 1..=n_nets are nets, the next n_instances ids are instances.
    for net in 1..=n_nets {
        let _ = writeln!(text, "*{net} net_{net}");
    }
    for instance in 1..=n_instances {
        let _ = writeln!(text, "*{} inst_{instance}", n_nets + instance);
    }
    text.push('\n');
    let mut nodes: Vec<String> = Vec::new();
    for net in 1..=n_nets {
        let driver = n_nets + in_range(&mut random, 1, n_instances);
        let n_sinks = in_range(&mut random, 1, 4);
        let n_internal = in_range(&mut random, 2, 50)
            .saturating_sub(1 + n_sinks)
            .max(1);
        nodes.clear();
        nodes.push(format!("*{driver}:Z"));
        let mut connections = format!("*CONN\n*I *{driver}:Z O\n");
        let mut sinks = Vec::new();
        for _ in 0..n_sinks {
            let sink = n_nets + in_range(&mut random, 1, n_instances);
            let _ = writeln!(connections, "*I *{sink}:A I");
            sinks.push(format!("*{sink}:A"));
        }
        for internal in 1..=n_internal {
            nodes.push(format!("*{net}:{internal}"));
        }
        nodes.extend(sinks);
        let mut caps = String::from("*CAP\n");
        let mut total = 0u64;
        for (index, node) in nodes.iter().enumerate() {
            let value = value(&mut random, 1);
            total += 1;
            let _ = writeln!(caps, "{} {node} {value}", index + 1);
        }
        let mut resistors = String::from("*RES\n");
        for index in 1..nodes.len() {
            let parent = in_range(&mut random, 0, index as u64 - 1) as usize;
            let value = value(&mut random, 1);
            let _ = writeln!(
                resistors,
                "{index} {} {} {value}",
                nodes[parent], nodes[index]
            );
        }
        let _ = write!(
            text,
            "*D_NET *{net} {total}.{:04}\n{connections}{caps}{resistors}*END\n\n",
            in_range(&mut random, 0, 9999)
        );
    }
    text
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let mut arguments = std::env::args().skip(1);
    let size_mb: usize = arguments
        .next()
        .and_then(|value| value.parse().ok())
        .unwrap_or(300);
    let mut thread_counts: Vec<usize> = arguments.filter_map(|value| value.parse().ok()).collect();
    if thread_counts.is_empty() {
        thread_counts = vec![1, 2];
    }
    let path = std::env::temp_dir().join(format!("tachyon-spef-throughput-{size_mb}mb.spef"));
    let text = load_or_synthesize(&path, size_mb << 20);
    let megabytes = text.len() as f64 / 1e6;
    println!("{}: {megabytes:.1} MB", path.display());

    let runs = 3;
    let mut sequential_times = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let spef = parse_spef_with("synthetic.spef", &text, &ParseOptions { parallel: false });
        sequential_times.push(start.elapsed());
        match spef {
            Ok(spef) => drop(spef),
            Err(error) => panic!("{error}"),
        }
    }
    let time = median(&mut sequential_times);
    println!(
        "sequential (parallel: false): median {:.3} s = {:.0} MB/s (best {:.0} MB/s)",
        time.as_secs_f64(),
        megabytes / time.as_secs_f64(),
        megabytes / sequential_times[0].as_secs_f64()
    );
    for &threads in &thread_counts {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap_or_else(|error| panic!("{error}"));
        let mut times = Vec::new();
        let mut summary = None;
        for _ in 0..runs {
            let start = Instant::now();
            let spef = pool.install(|| parse_spef("synthetic.spef", &text));
            times.push(start.elapsed());
            match spef {
                Ok(spef) => {
                    summary.get_or_insert_with(|| spef.summary());
                    drop(spef)
                }
                Err(error) => panic!("{error}"),
            }
        }
        let time = median(&mut times);
        println!(
            "{threads} thread(s): median {:.3} s = {:.0} MB/s (best {:.0} MB/s)",
            time.as_secs_f64(),
            megabytes / time.as_secs_f64(),
            megabytes / times[0].as_secs_f64()
        );
        if threads == thread_counts[0] {
            println!("  {summary:?}");
        }
    }
}

fn load_or_synthesize(path: &PathBuf, target_bytes: usize) -> String {
    if let Ok(text) = std::fs::read_to_string(path) {
        return text;
    }
    let start = Instant::now();
    let text = synthesize(target_bytes);
    if let Err(error) = std::fs::write(path, &text) {
        eprintln!("could not cache {}: {error}", path.display());
    }
    println!(
        "synthesized {} bytes in {:.1} s",
        text.len(),
        start.elapsed().as_secs_f64()
    );
    text
}
