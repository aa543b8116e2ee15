//! Snapshot tests over the hand-written fixtures in `tests/fixtures/{ok,err}`, and a
//! no-panic check on every prefix of them.

use std::path::{Path, PathBuf};

use tachyon_sdc::{parse_ops, parse_sdc, parse_tau2015, parse_timing};

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", folder.display());
    files
}

/// Parses `text` with the reader its extension names; renders the result (or the
/// error) as text for a snapshot.
fn render(file_name: &str, text: &str) -> Result<String, String> {
    let extension = file_name.rsplit('.').next().unwrap_or("");
    match extension {
        "sdc" => {
            let sdc = parse_sdc(file_name, text).map_err(|error| error.to_string())?;
            let assertions = match sdc.to_assertions() {
                Ok(assertions) => format!("{assertions:#?}"),
                Err(error) => format!("error: {error}"),
            };
            Ok(format!("{sdc:#?}\n\nto_assertions: {assertions}"))
        }
        "timing" => parse_timing(file_name, text)
            .map(|assertions| format!("{assertions:#?}"))
            .map_err(|error| error.to_string()),
        "ops" => parse_ops(file_name, text)
            .map(|operations| format!("{operations:#?}"))
            .map_err(|error| error.to_string()),
        "tau2015" => parse_tau2015(file_name, text)
            .map(|files| format!("{files:#?}"))
            .map_err(|error| error.to_string()),
        _ => panic!("fixture with an unknown extension: {file_name}"),
    }
}

fn file_name_and_text(path: &Path) -> (String, String) {
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    (file_name, text)
}

#[test]
fn ok_fixtures() {
    for path in fixtures("ok") {
        let (file_name, text) = file_name_and_text(&path);
        let rendered = render(&file_name, &text).unwrap_or_else(|error| panic!("{error}"));
        insta::assert_snapshot!(format!("ok_{file_name}"), rendered);
    }
}

#[test]
fn err_fixtures() {
    for path in fixtures("err") {
        let (file_name, text) = file_name_and_text(&path);
        let error = match render(&file_name, &text) {
            Ok(rendered) => panic!("{file_name} should fail but gave {rendered}"),
            Err(error) => error,
        };
        insta::assert_snapshot!(format!("err_{file_name}"), error);
    }
}

/// Every prefix of every fixture (cut at each character boundary) gives Ok or Err,
/// never a panic.
#[test]
fn truncated_prefixes_do_not_panic() {
    for path in fixtures("ok").into_iter().chain(fixtures("err")) {
        let (_, text) = file_name_and_text(&path);
        for (cut, _) in text.char_indices() {
            let prefix = &text[..cut];
            for file_name in ["t.sdc", "t.timing", "t.ops", "t.tau2015"] {
                let _ = render(file_name, prefix);
            }
        }
    }
}

/// Found by `random_text_does_not_panic`: an octal escape beyond a byte made the Tcl
/// interpreter panic. It is refused where it is written; one built at run time (which
/// the command split cannot see) is the command's error.
#[test]
fn octal_escapes_beyond_a_byte_are_errors() {
    let error = render("t.sdc", "#\n\\400\\").expect_err("refused");
    assert!(
        error.contains("t.sdc:2:1") && error.contains("octal escape"),
        "{error}"
    );
    let error =
        render("t.sdc", "set b \\\\\nset c \"${b}400\"\nset d [subst $c]").expect_err("refused");
    assert!(
        error.contains("t.sdc:3") && error.contains("internal error"),
        "{error}"
    );
}

proptest::proptest! {
    /// Random text over the characters that matter to the readers never panics.
    #[test]
    fn random_text_does_not_panic(text in "[a-z_ 0-9.\\-\\[\\]{}\"\\\\;#\n:/*]{0,80}") {
        for file_name in ["t.sdc", "t.timing", "t.ops", "t.tau2015"] {
            let _ = render(file_name, &text);
        }
    }
}
