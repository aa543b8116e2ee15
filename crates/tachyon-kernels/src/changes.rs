//! What changed between two copies of per-item values (`[f64; 4]` per pin or arc), bit
//! for bit, as one bit per item: how an update over the device's resident state tells
//! the host which values to bring back, instead of bringing back every value for the
//! host to compare. Word `w` holds items `32 * w .. 32 * w + 32`, item `32 * w + b` in
//! bit `b`; a NaN equals a NaN of the same bits ("no value" stays "no value").
//!
//! [`changed_word`] is the one implementation: the GPU's `changed_words` kernel runs it
//! per word, the CPU twin (`tachyon-gba`) over all words.

/// Whether `a` and `b` hold the same bits.
#[inline]
pub fn same_bits(a: &[f64; 4], b: &[f64; 4]) -> bool {
    a.iter().zip(b).all(|(a, b)| a.to_bits() == b.to_bits())
}

/// The words of a bit set of `n_items` items.
#[inline]
pub fn n_words(n_items: usize) -> usize {
    n_items.div_ceil(32)
}

/// Word `word` of the changes from `old` to `new` (as long as each other): bit `b` set
/// when item `32 * word + b` differs.
#[inline]
pub fn changed_word(old: &[[f64; 4]], new: &[[f64; 4]], word: usize) -> u32 {
    let first = word * 32;
    let last = (first + 32).min(new.len()).min(old.len());
    let mut bits = 0u32;
    let mut item = first;
    while item < last {
        if !same_bits(&old[item], &new[item]) {
            bits |= 1 << (item - first);
        }
        item += 1;
    }
    bits
}

/// Calls `each` with every item whose bit is set in `words`, in order.
#[inline]
pub fn for_each_set(words: &[u32], mut each: impl FnMut(u32)) {
    for (word, &bits) in words.iter().enumerate() {
        let mut rest = bits;
        while rest != 0 {
            let bit = rest.trailing_zeros();
            each(word as u32 * 32 + bit);
            rest &= rest - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn marks_the_items_that_differ_bit_for_bit() {
        let nan = f64::NAN;
        let old: Vec<[f64; 4]> = (0..70).map(|i| [i as f64, 0.0, nan, 1.0]).collect();
        let mut new = old.clone();
        new[3][0] = 3.5;
        new[33][3] = -1.0;
        new[69][2] = 0.0;
        new[40][1] = -0.0;
        assert_eq!(n_words(new.len()), 3);
        let words: Vec<u32> = (0..3).map(|word| changed_word(&old, &new, word)).collect();
        assert_eq!(words, [1 << 3, (1 << 1) | (1 << 8), 1 << 5]);
        let mut items = Vec::new();
        for_each_set(&words, |item| items.push(item));
        assert_eq!(items, [3, 33, 40, 69]);
        assert!(same_bits(&[nan; 4], &[nan; 4]));
    }
}
