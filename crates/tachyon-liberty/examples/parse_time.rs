//! Times `parse_library` on one file (single thread) and prints MB/s:
//! `cargo run --release -p tachyon-liberty --example parse_time -- <file.lib> [repeats]`.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut arguments = std::env::args().skip(1);
    let path = arguments
        .next()
        .ok_or("usage: parse_time <file.lib> [repeats]")?;
    let repeats: usize = arguments.next().map_or(Ok(10), |text| text.parse())?;
    let text = std::fs::read_to_string(&path)?;
    let megabytes = text.len() as f64 / 1e6;
    let mut best_syntax = f64::INFINITY;
    let mut best_full = f64::INFINITY;
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        let statements = tachyon_liberty::syntax::parse(&path, &text)?;
        best_syntax = best_syntax.min(start.elapsed().as_secs_f64());
        drop(statements);
        let start = Instant::now();
        let library = tachyon_liberty::parse_library(&path, &text)?;
        best_full = best_full.min(start.elapsed().as_secs_f64());
        std::hint::black_box(&library);
    }
    let library = tachyon_liberty::parse_library(&path, &text)?;
    let summary = library.summary();
    println!(
        "{path}: {megabytes:.2} MB, {} cells, {} pins, {} timing groups",
        summary.n_cells, summary.n_pins, summary.n_timing_arcs
    );
    println!(
        "syntax only: {:.2} ms ({:.0} MB/s); syntax + model: {:.2} ms ({:.0} MB/s); best of {repeats}",
        best_syntax * 1e3,
        megabytes / best_syntax,
        best_full * 1e3,
        megabytes / best_full
    );
    Ok(())
}
