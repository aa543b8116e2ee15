//! The hand-made design of `testdata/tiny`, for the targets that link what they parse
//! against a real design: libraries and netlist are read once per fuzzing process.

use std::path::PathBuf;
use std::sync::OnceLock;

use tachyon_link::Design;

/// `testdata/<name>` of the repository.
pub fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(testdata("tiny").join(name)).expect("testdata/tiny is readable")
}

/// The tiny libraries, bound early and late, with no netlist.
#[allow(dead_code)]
pub fn with_libraries() -> &'static Design {
    static DESIGN: OnceLock<Design> = OnceLock::new();
    DESIGN.get_or_init(|| {
        let mut design = Design::new();
        for (split, file) in [
            (tachyon::Split::Early, "tiny_Early.lib"),
            (tachyon::Split::Late, "tiny_Late.lib"),
        ] {
            let library = tachyon_liberty::parse_library(file, &read(file)).expect("parses");
            design.set_library(Some(split), &library);
        }
        design
    })
}

/// The whole tiny design: libraries, netlist, parasitics and assertions.
#[allow(dead_code)]
pub fn design() -> &'static Design {
    static DESIGN: OnceLock<Design> = OnceLock::new();
    DESIGN.get_or_init(|| {
        let mut design = with_libraries().clone();
        let verilog = read("tiny.v");
        let netlist = tachyon_verilog::parse_netlist("tiny.v", &verilog).expect("parses");
        design.set_netlist(&netlist).expect("links");
        let spef_text = read("tiny.spef");
        let spef = tachyon_spef::parse_spef("tiny.spef", &spef_text).expect("parses");
        design.annotate(&spef).expect("annotates");
        let assertions = tachyon_sdc::parse_timing("tiny.timing", &read("tiny.timing"))
            .expect("parses");
        design.set_assertions(assertions);
        design
    })
}

/// Asserts that `design` reads as `before` did: a failed command changes nothing.
#[allow(dead_code)]
pub fn assert_unchanged(design: &Design, before: &str, what: &str) {
    let after = format!("{design:?}");
    assert!(after == before, "a failed {what} changed the design");
}
