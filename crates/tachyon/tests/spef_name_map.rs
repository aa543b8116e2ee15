//! A SPEF that names instances and nets through `*NAME_MAP` (so node names reach the
//! linker split in two: the mapped name and the `:pin` or `:k` suffix) annotates the
//! design exactly as the same SPEF with the names written out.

use std::path::Path;

use tachyon::Timer;

/// `tiny.spef` with its instance and net names mapped to `*1`, `*2`, ...
fn with_name_map(spef: &str) -> String {
    let names = ["cb1", "cb2", "cb3", "ff1", "g1", "g4", "c1", "q1", "n1"];
    let map_token = |token: &str| -> String {
        let (name, rest) = match token.split_once(':') {
            Some((name, rest)) => (name, Some(rest)),
            None => (token, None),
        };
        match names.iter().position(|&known| known == name) {
            Some(index) => match rest {
                Some(rest) => format!("*{}:{rest}", index + 1),
                None => format!("*{}", index + 1),
            },
            None => token.to_string(),
        }
    };
    let mut out = String::new();
    for line in spef.lines() {
        if line.starts_with("*D_NET") {
            out.push_str("*NAME_MAP\n");
            for (index, name) in names.iter().enumerate() {
                out.push_str(&format!("*{} {name}\n", index + 1));
            }
            out.push('\n');
            out.push_str(
                &spef[spef.find(line).unwrap_or(0)..]
                    .lines()
                    .map(|line| line.split(' ').map(map_token).collect::<Vec<_>>().join(" "))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            out.push('\n');
            return out;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn name_mapped_spef_annotates_as_the_plain_one() {
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiny");
    let folder = std::env::temp_dir().join(format!("tachyon-name-map-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    for file in [
        "tiny.tau2015",
        "tiny.timing",
        "tiny.v",
        "tiny_Early.lib",
        "tiny_Late.lib",
    ] {
        std::fs::copy(tiny.join(file), folder.join(file)).unwrap();
    }
    let spef = std::fs::read_to_string(tiny.join("tiny.spef")).unwrap();
    let mapped = with_name_map(&spef);
    assert!(mapped.contains("*NAME_MAP") && mapped.contains("*D_NET *7"));
    std::fs::write(folder.join("tiny.spef"), mapped).unwrap();

    let mut plain = Timer::new();
    plain.load_tau2015(tiny.join("tiny.tau2015")).unwrap();
    let mut named = Timer::new();
    named.load_tau2015(folder.join("tiny.tau2015")).unwrap();
    let (_, plain_data) = plain.timing().unwrap();
    let plain_data = plain_data.clone();
    let (_, named_data) = named.timing().unwrap();
    let differences = tachyon::gba::compare(&plain_data, named_data);
    assert!(differences.compared > 0);
    assert_eq!(differences.total(), 0, "{differences:?}");
    // The parasitics were read: some wire has a delay.
    assert!(named_data
        .wire_delay
        .iter()
        .any(|delay| delay.iter().any(|&value| value > 0.0)));
    std::fs::remove_dir_all(&folder).ok();
}
