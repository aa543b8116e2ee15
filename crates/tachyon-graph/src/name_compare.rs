//! Equality and order of names (short byte strings) by 8-byte words.
//!
//! Linking a million-gate design compares tens of millions of short names (index
//! lookups, sorts by name, SPEF node names). glibc's vectorized `memcmp`, which `==` and
//! `cmp` on strings call, cost up to ten times more than comparing machine words on the
//! developer VM (profiled: one `memcmp` per comparison was most of converting the SPEF
//! nets). These give the same answers as `==` and `Ord` on the bytes.

use std::cmp::Ordering;

/// Up to 8 bytes as one word, big-endian (so words order as the bytes do), zero-padded.
/// A full word is one load. A shorter one is two loads of a fixed size that overlap
/// (its first and its last 4 or 2 bytes), each shifted to where its bytes belong: the
/// bytes both hold land on the same bits. (A copy of a variable length is a `memcpy`
/// call, and building the word byte by byte was a few percent of linking a
/// million-gate design.)
#[inline]
fn word(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let be32 = |at: usize| {
        u64::from(u32::from_be_bytes([
            bytes[at],
            bytes[at + 1],
            bytes[at + 2],
            bytes[at + 3],
        ]))
    };
    let be16 = |at: usize| u64::from(u16::from_be_bytes([bytes[at], bytes[at + 1]]));
    match n {
        8.. => u64::from_be_bytes([
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
        ]),
        // Byte `i` belongs at bits `56 - 8 * i`; the last load's first byte is byte
        // `n - 4` (or `n - 2`).
        4..=7 => (be32(0) << 32) | (be32(n - 4) << (64 - 8 * n)),
        2..=3 => (be16(0) << 48) | (be16(n - 2) << (64 - 8 * n)),
        1 => u64::from(bytes[0]) << 56,
        _ => 0,
    }
}

/// The first 8 bytes of `name` as a number (big-endian, zero-padded): names whose
/// prefixes differ order as their prefixes do (see [`name_order`] for ties).
#[inline]
pub fn name_prefix(name: &str) -> u64 {
    let bytes = name.as_bytes();
    word(&bytes[..bytes.len().min(8)])
}

/// Whether `a == b`.
#[inline]
pub fn names_equal(a: &str, b: &str) -> bool {
    bytes_equal(a.as_bytes(), b.as_bytes())
}

/// Whether two byte strings are equal.
#[inline]
pub fn bytes_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut a, mut b) = (a, b);
    while a.len() > 8 {
        let ((a_word, a_rest), (b_word, b_rest)) = (a.split_at(8), b.split_at(8));
        if word(a_word) != word(b_word) {
            return false;
        }
        (a, b) = (a_rest, b_rest);
    }
    word(a) == word(b)
}

/// `a.cmp(b)` (lexicographic by bytes).
#[inline]
pub fn name_order(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        let (x_now, x_rest) = x.split_at(x.len().min(8));
        let (y_now, y_rest) = y.split_at(y.len().min(8));
        // Zero padding only ties a string with a longer one that continues with zero
        // bytes; the lengths break that tie below.
        match word(x_now).cmp(&word(y_now)) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        if x_rest.is_empty() || y_rest.is_empty() {
            return x.len().cmp(&y.len());
        }
        (x, y) = (x_rest, y_rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_every_short_length_are_the_bytes_zero_padded() {
        let bytes: Vec<u8> = (0..16u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(0xa1))
            .collect();
        for start in 0..8 {
            for len in 0..=8 {
                let part = &bytes[start..start + len];
                let mut padded = [0u8; 8];
                padded[..len].copy_from_slice(part);
                assert_eq!(word(part), u64::from_be_bytes(padded), "{part:?}");
            }
        }
    }

    #[test]
    fn agree_with_the_standard_comparisons() {
        let names = [
            "",
            "a",
            "ab",
            "a\0",
            "ab\0",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
            "abcdefgi",
            "g10:A",
            "g1:A",
            "g1:B",
            "g1",
            "n123456789012345:17",
            "n123456789012345:7",
            "\u{e9}t\u{e9}",
            "zz",
        ];
        for a in names {
            for b in names {
                assert_eq!(names_equal(a, b), a == b, "{a:?} == {b:?}");
                assert_eq!(name_order(a, b), a.cmp(b), "{a:?} cmp {b:?}");
                let by_prefix = name_prefix(a).cmp(&name_prefix(b));
                if by_prefix != Ordering::Equal {
                    assert_eq!(by_prefix, a.cmp(b), "{a:?} prefix cmp {b:?}");
                }
            }
        }
    }
}
