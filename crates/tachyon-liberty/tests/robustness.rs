//! Truncated and mutated inputs give `Ok` or `Err`, never a panic.

use proptest::prelude::*;
use tachyon_liberty::parse_library;

const FIXTURE: &str = include_str!("fixtures/ok/ns_pf_units.lib");

/// Byte-cut prefixes at every character boundary.
#[test]
fn every_prefix_parses_or_errors() {
    for (cut, _) in FIXTURE.char_indices() {
        let _ = parse_library("prefix.lib", &FIXTURE[..cut]);
    }
}

/// Liberty's punctuation and some troublesome characters.
const INSERTS: &[&str] = &[
    "(", ")", "{", "}", ";", ":", ",", "\"", "\\", "/*", "//", "\n", "é", "1e999", "-",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn mutated_fixture_parses_or_errors(
        position in 0..FIXTURE.len(),
        delete_len in 0usize..8,
        insert_idx in 0..INSERTS.len(),
    ) {
        let mut start = position;
        while !FIXTURE.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + delete_len).min(FIXTURE.len());
        while !FIXTURE.is_char_boundary(end) {
            end -= 1;
        }
        let insert = INSERTS.get(insert_idx).copied().unwrap_or("");
        let text = format!("{}{}{}", &FIXTURE[..start], insert, &FIXTURE[end..]);
        let _ = parse_library("mutated.lib", &text);
    }

    #[test]
    fn arbitrary_text_parses_or_errors(text in "[a-z(){};:,\"\\\\/* \n0-9.]{0,200}") {
        let _ = parse_library("arbitrary.lib", &text);
    }
}
