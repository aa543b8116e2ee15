//! `report_worst_paths` against the TAU 2015 goldens.
//!
//! Runs the whole `.ops` of every benchmark that has path queries (edits included) and
//! compares each path block with the golden: type, E/L, slack within 0.01 ps, pin
//! count and pin list exactly. Paths of equal slack (within the tolerance) may come in
//! either order. Also checks that the most critical path of every test has exactly the
//! engine's post-CPPR test slack. The goldens are checked on the CPU backend and, where
//! a GPU is usable, on the GPU backend (the GPU's path search).

use std::path::Path;

use tachyon::graph::TestKind;
use tachyon::sdc::{parse_ops, OperationKind};
use tachyon::{Backend, Timer, Transition};
use tachyon_paths::{worst_paths, PathKind, PathQuery};

const TOLERANCE_PS: f64 = 0.01;

/// One path block of a `report_worst_paths` answer.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    kind: String,
    slack: f64,
    split: String,
    pins: Vec<String>,
}

/// Parses `report_worst_paths <n>` and its blocks from `lines`, starting at `*cursor`.
fn parse_answer(lines: &[&str], cursor: &mut usize) -> Vec<Block> {
    let header = lines.get(*cursor).copied().unwrap_or_default();
    *cursor += 1;
    let mut words = header.split_whitespace();
    assert_eq!(words.next(), Some("report_worst_paths"), "header: {header}");
    let n_paths: usize = words.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let mut blocks = Vec::new();
    for _ in 0..n_paths {
        let line = lines.get(*cursor).copied().unwrap_or_default();
        *cursor += 1;
        // `Path <i>: <Type> <slack> <npins> <E|L>`
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(words.len() >= 6, "path line: {line}");
        let n_pins: usize = words[4].parse().unwrap_or(0);
        let pins = lines[*cursor..*cursor + n_pins]
            .iter()
            .map(|line| line.trim().to_string())
            .collect();
        *cursor += n_pins;
        blocks.push(Block {
            kind: words[2].to_string(),
            slack: words[3].parse().unwrap_or(f64::NAN),
            split: words[5].to_string(),
            pins,
        });
    }
    blocks
}

/// Whether `got` matches `want`, allowing paths of equal slack to swap.
fn blocks_match(got: &[Block], want: &[Block]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} paths, golden {}", got.len(), want.len()));
    }
    let mut used = vec![false; got.len()];
    for (rank, wanted) in want.iter().enumerate() {
        let same = |block: &Block| {
            block.kind == wanted.kind
                && block.split == wanted.split
                && (block.slack - wanted.slack).abs() <= TOLERANCE_PS
                && block.pins == wanted.pins
        };
        // The same rank, or another rank of equal slack.
        let found = (0..got.len()).find(|&index| {
            !used[index]
                && (got[index].slack - got[rank].slack).abs() <= TOLERANCE_PS
                && same(&got[index])
        });
        match found {
            Some(index) => used[index] = true,
            None => {
                return Err(format!(
                    "rank {}: golden {} {:.3} {} {} pins {:?}; got {} {:.3} {} {} pins {:?}",
                    rank + 1,
                    wanted.kind,
                    wanted.slack,
                    wanted.split,
                    wanted.pins.len(),
                    wanted.pins,
                    got[rank].kind,
                    got[rank].slack,
                    got[rank].split,
                    got[rank].pins.len(),
                    got[rank].pins
                ))
            }
        }
    }
    Ok(())
}

/// (queries compared, queries matching, first mismatches).
fn run_benchmark(folder: &Path, backend: &Backend) -> Option<(usize, usize, Vec<String>)> {
    let name = folder.file_name()?.to_str()?.to_string();
    let ops_path = folder.join(format!("{name}.ops"));
    let output_path = folder.join(format!("{name}.output"));
    let ops_text = std::fs::read_to_string(&ops_path).ok()?;
    if !ops_text.contains("report_worst_paths") {
        return None;
    }
    let operations = parse_ops(&ops_path.display().to_string(), &ops_text).unwrap();
    let golden_text = std::fs::read_to_string(&output_path).ok()?;
    let golden: Vec<&str> = golden_text.lines().collect();
    let mut timer = Timer::with_backend(backend.clone());
    timer
        .load_tau2015(folder.join(format!("{name}.tau2015")))
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    let mut golden_line = 0;
    let (mut compared, mut matching, mut mismatches) = (0, 0, Vec::new());
    for operation in &operations {
        let mut answer = Vec::new();
        timer
            .run_ops(std::slice::from_ref(operation), folder, &mut answer)
            .unwrap_or_else(|error| panic!("{name}: line {}: {error}", operation.line));
        if let OperationKind::ReportWorstPaths { .. } = operation.kind {
            let want = parse_answer(&golden, &mut golden_line);
            let answer = String::from_utf8(answer).unwrap();
            let answer_lines: Vec<&str> = answer.lines().collect();
            let got = parse_answer(&answer_lines, &mut 0);
            compared += 1;
            match blocks_match(&got, &want) {
                Ok(()) => matching += 1,
                Err(why) => mismatches.push(format!("{name} line {}: {why}", operation.line)),
            }
        } else if operation.kind.is_query() {
            golden_line += 1;
        }
    }
    Some((compared, matching, mismatches))
}

tachyon_testkit::both_backends! {
    /// The paths of every benchmark's `report_worst_paths`, timed and searched on each
    /// backend.
    fn worst_paths_match_the_goldens(backend) {
        paths_match(&backend);
    }
}

fn paths_match(backend: &Backend) {
    let Some(shared) = tachyon_testkit::shared_dir("tau2015_paths") else {
        return;
    };
    let mut total = (0, 0);
    let mut all_mismatches = Vec::new();
    for folder in tachyon_testkit::tau2015_benchmarks(&shared) {
        let Some((compared, matching, mismatches)) = run_benchmark(&folder, backend) else {
            continue;
        };
        println!(
            "{}: {matching}/{compared} report_worst_paths answers match",
            folder.display()
        );
        total.0 += compared;
        total.1 += matching;
        all_mismatches.extend(mismatches);
    }
    for mismatch in &all_mismatches {
        println!("MISMATCH {mismatch}");
    }
    println!("total: {}/{} answers match", total.1, total.0);
    assert!(
        all_mismatches.is_empty(),
        "{} mismatches",
        all_mismatches.len()
    );
}

#[test]
fn worst_path_of_each_test_has_the_engine_slack_on_s27() {
    let Some(shared) = tachyon_testkit::shared_dir("tau2015_paths") else {
        return;
    };
    let folder = shared.join("tau2015/s27");
    let mut timer = Timer::new();
    timer.load_tau2015(folder.join("s27.tau2015")).unwrap();
    let (graph, data) = timer.timing().unwrap();
    let mut checked = 0;
    for (index, test) in graph.tests().iter().enumerate() {
        let split = test.kind.split();
        let query = PathQuery {
            split: Some(split),
            endpoint: Some(test.data),
            ..PathQuery::top(256)
        };
        let paths = worst_paths(graph, data, &query);
        let kind = match test.kind {
            TestKind::Setup => PathKind::Setup,
            TestKind::Hold => PathKind::Hold,
        };
        for transition in Transition::BOTH {
            let engine = data.tests[index].slack[transition.index()];
            let best = paths
                .iter()
                .find(|path| path.kind == kind && path.pins[0].1 == transition)
                .map(|path| path.slack);
            match best {
                Some(best) => {
                    assert!(
                        (best - engine).abs() < 1e-9,
                        "{} {split:?} {transition:?}: path {best}, engine {engine}",
                        graph.pin(test.data).name
                    );
                    checked += 1;
                }
                None => assert!(!engine.is_finite() || paths.len() == 256),
            }
        }
    }
    assert!(checked > 0);
    println!("{checked} test slacks equal their worst path's slack");
}

/// The path graph's in-edges from the timing arrays the GPU keeps resident (the CPU twin
/// of the GPU's passes, `tachyon_paths::resident`) equal the host build's bit for bit
/// on a generated design and every TAU benchmark (timed on the CPU; the GPU's are
/// checked against the twin on the device, `tachyon-paths`' tests).
#[test]
fn resident_edges_equal_the_host_build() {
    let generated = tachyon_testkit::GeneratedDesign::new("resident-edges", 3000, 7);
    let mut designs = vec![generated.tau2015().to_path_buf()];
    if let Some(shared) = tachyon_testkit::shared_dir("tau2015_paths") {
        designs.extend(
            tachyon_testkit::tau2015_benchmarks(&shared)
                .iter()
                .map(|folder| tachyon_testkit::tau2015_file(folder)),
        );
    }
    for design in &designs {
        let mut timer = Timer::with_backend(Backend::Cpu);
        timer
            .load_tau2015(design)
            .unwrap_or_else(|error| panic!("{}: {error}", design.display()));
        let (graph, data) = timer
            .timing()
            .unwrap_or_else(|error| panic!("{}: {error}", design.display()));
        let trees = tachyon_paths::flat::clock_trees(graph, data, None);
        let flat = tachyon_gba::FlatTiming::build(graph);
        let twin = tachyon_paths::resident::edges_of_host_timing(
            graph,
            (&flat.fanin_start, &flat.fanin_arcs, &flat.arcs),
            &flat.primary_inputs,
            data,
            &trees,
        );
        let host = tachyon_paths::flat::FlatGraph::with_trees(graph, data, trees);
        let expected = host.edges();
        let bits = |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert!(
            twin.edge_start == expected.edge_start
                && twin.edge_from == expected.edge_from
                && twin.edge_launch == expected.edge_launch
                && bits(&twin.edge_value) == bits(expected.edge_value),
            "{}: the edges from the resident arrays differ from the host build's",
            design.display()
        );
        println!("{}: {} edges alike", design.display(), twin.edge_from.len());
    }
}
