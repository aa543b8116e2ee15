//! Snapshot tests driven by the fixture folders: every file in `fixtures/ok` parses and its
//! model is snapshotted; every file in `fixtures/err` fails and its message is snapshotted.
//! Also: truncated prefixes never panic, and parallel parsing equals sequential parsing.

use std::path::{Path, PathBuf};

use tachyon_spef::{parse_spef, parse_spef_with, ParseOptions};

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap_or_else(|error| panic!("{}: {error}", folder.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "spef")
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", folder.display());
    files
}

fn read(path: &Path) -> (String, String) {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    (name, text)
}

#[test]
fn ok_fixtures_parse_to_their_snapshots() {
    for path in fixtures("ok") {
        let (name, text) = read(&path);
        let spef = parse_spef(&name, &text).unwrap_or_else(|error| panic!("{error}"));
        insta::assert_debug_snapshot!(format!("ok__{name}"), (spef.summary(), &spef));
    }
}

#[test]
fn err_fixtures_fail_with_their_snapshots() {
    for path in fixtures("err") {
        let (name, text) = read(&path);
        let message = match parse_spef(&name, &text) {
            Ok(_) => panic!("{name} parsed without error"),
            Err(error) => error.to_string(),
        };
        insta::assert_snapshot!(format!("err__{name}"), message);
    }
}

#[test]
fn truncated_prefixes_never_panic() {
    for path in fixtures("ok") {
        let (name, text) = read(&path);
        for end in (0..=text.len()).filter(|&end| text.is_char_boundary(end)) {
            let prefix = &text[..end];
            let parallel = parse_spef(&name, prefix);
            let sequential = parse_spef_with(&name, prefix, &ParseOptions { parallel: false });
            assert_eq!(parallel, sequential, "{name} cut at {end}");
        }
    }
}

#[test]
fn parallel_and_sequential_models_are_identical() {
    for path in fixtures("ok") {
        let (name, text) = read(&path);
        let parallel = parse_spef(&name, &text);
        let sequential = parse_spef_with(&name, &text, &ParseOptions { parallel: false });
        assert_eq!(parallel, sequential, "{name}");
    }
}

proptest::proptest! {
    /// Random streams of SPEF-like tokens give a model or an error, never a panic, and
    /// the same answer in parallel and sequentially.
    #[test]
    fn random_token_streams_never_panic(
        tokens in proptest::collection::vec(
            "(\\*D_NET|\\*R_NET|\\*END|\\*CONN|\\*CAP|\\*RES|\\*INDUC|\\*NAME_MAP|\\*PORTS|\\*[0-9]{1,2}(:[0-9A-Z])?|\\*[CLSDIPNV]|[IOB]|[a-z]{1,3}(:[0-9])?|[0-9]{1,3}(\\.[0-9]{1,3})?|//|\\\\|\"|\\n|é)",
            0..80,
        )
    ) {
        let text = tokens.join(" ");
        let parallel = parse_spef("random.spef", &text);
        let sequential = parse_spef_with("random.spef", &text, &ParseOptions { parallel: false });
        proptest::prop_assert_eq!(parallel, sequential);
    }
}
