//! Storing what a parallel step computed into the per-pin and per-arc arrays. A step
//! reads the arrays it writes (the values of earlier levels), so its chunks compute into
//! small vectors first; these helpers then write those out on all threads rather than
//! on one (a fifth of the arrival sweep at 1M gates on 2 threads, more on many cores).

use rayon::prelude::*;

/// How many pins or arcs ahead the one-thread store fetches its targets.
const STORE_AHEAD: usize = 16;

/// The most parts a scatter is split into: every part reads all the entries, so more
/// parts than this cost more reading than the writes they share out.
const MOST_PARTS: usize = 4;

/// Below this many entries, one thread writes them.
const PARALLEL_ENTRIES: usize = 1 << 14;

/// `target` cut at the chunks of `pins` (`chunk` pins each): part `k` runs from chunk
/// `k`'s first pin to its last, with that first pin's index. The parts do not overlap
/// when `pins` is increasing, as a level of the flat layout is; `None` otherwise.
pub(crate) fn parts_per_chunk<'a, T>(
    target: &'a mut [T],
    pins: &[u32],
    chunk: usize,
) -> Option<Vec<(usize, &'a mut [T])>> {
    if !pins.is_sorted()
        || pins
            .last()
            .is_some_and(|&last| last as usize >= target.len())
    {
        return None;
    }
    let mut parts = Vec::with_capacity(pins.len().div_ceil(chunk));
    let (mut rest, mut rest_start) = (target, 0usize);
    for pins in pins.chunks(chunk) {
        let (first, last) = (pins[0] as usize, pins[pins.len() - 1] as usize);
        let (_, from_first) = rest.split_at_mut(first - rest_start);
        let (part, tail) = from_first.split_at_mut(last + 1 - first);
        parts.push((first, part));
        (rest, rest_start) = (tail, last + 1);
    }
    Some(parts)
}

/// Writes every entry of `lists` (as `entry` gives its index and value) into `target`.
/// Each thread owns one range of `target` and takes the entries that fall in it from
/// every list, so the scattered writes are shared out.
pub(crate) fn scatter<E: Sync, T: Send>(
    target: &mut [T],
    lists: &[&[E]],
    entry: impl Fn(&E) -> (usize, T) + Sync,
) {
    let n_entries: usize = lists.iter().map(|list| list.len()).sum();
    let parts = rayon::current_num_threads().clamp(1, MOST_PARTS);
    if parts == 1 || n_entries < PARALLEL_ENTRIES || target.is_empty() {
        // One thread, fetching a few targets ahead.
        for list in lists {
            for (position, item) in list.iter().enumerate() {
                if let Some(ahead) = list.get(position + STORE_AHEAD) {
                    tachyon_graph::prefetch(target, entry(ahead).0);
                }
                let (index, value) = entry(item);
                target[index] = value;
            }
        }
        return;
    }
    let part_len = target.len().div_ceil(parts);
    target
        .par_chunks_mut(part_len)
        .enumerate()
        .for_each(|(part, range)| {
            let first = part * part_len;
            for list in lists {
                for item in list.iter() {
                    let (index, value) = entry(item);
                    if let Some(slot) = range.get_mut(index.wrapping_sub(first)) {
                        *slot = value;
                    }
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_follow_the_chunks_of_increasing_pins() {
        let mut target = [0u32; 10];
        let pins = [1, 2, 4, 5, 9];
        let parts = parts_per_chunk(&mut target, &pins, 2).expect("increasing");
        let shapes: Vec<(usize, usize)> = parts
            .iter()
            .map(|(first, part)| (*first, part.len()))
            .collect();
        assert_eq!(shapes, [(1, 2), (4, 2), (9, 1)]);
        assert!(parts_per_chunk(&mut target, &[3, 1], 2).is_none());
        assert!(parts_per_chunk(&mut target, &[3, 10], 2).is_none());
    }

    #[test]
    fn a_scatter_writes_every_entry_on_any_number_of_threads() {
        let lists: Vec<Vec<(usize, u64)>> = (0..5)
            .map(|list| {
                (0..20_000)
                    .map(|k| ((k * 7919 + list * 13) % 100_003, k as u64 + 1))
                    .collect()
            })
            .collect();
        let lists: Vec<&[(usize, u64)]> = lists.iter().map(|list| &list[..]).collect();
        let mut expected = vec![0u64; 100_003];
        for list in &lists {
            for &(index, value) in *list {
                expected[index] = value;
            }
        }
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut target = vec![0u64; 100_003];
            pool.install(|| scatter(&mut target, &lists, |&(index, value)| (index, value)));
            assert_eq!(target, expected, "{threads} threads");
        }
    }
}
