//! Rows (CSR) built on all threads: where each row starts, and pairs grouped into rows
//! by key.

use rayon::prelude::*;

/// Where each of `n` rows starts when row `i` holds `count(i)` items, and the total
/// last (`n + 1` entries: CSR starts), summed on all threads: per chunk, then the
/// chunks' starts in order, then each chunk's rows from its start (at a million rows,
/// one thread's pass, with the page faults of the fresh vector, was a serial step of
/// several ms in each CSR built).
pub fn row_starts(n: usize, count: impl Fn(usize) -> u32 + Sync) -> Vec<u32> {
    const ROWS_PER_CHUNK: usize = 1 << 14;
    let chunk_totals: Vec<u32> = (0..n.div_ceil(ROWS_PER_CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let rows = chunk * ROWS_PER_CHUNK..((chunk + 1) * ROWS_PER_CHUNK).min(n);
            rows.map(&count).sum()
        })
        .collect();
    let mut starts = crate::filled(n + 1, 0u32);
    let mut chunk_start = 0u32;
    let chunk_starts: Vec<u32> = chunk_totals
        .iter()
        .map(|&total| {
            let start = chunk_start;
            chunk_start += total;
            start
        })
        .collect();
    starts[n] = chunk_start;
    starts[..n]
        .par_chunks_mut(ROWS_PER_CHUNK)
        .zip(chunk_starts)
        .enumerate()
        .for_each(|(chunk, (part, mut start))| {
            for (offset, place) in part.iter_mut().enumerate() {
                *place = start;
                start += count(chunk * ROWS_PER_CHUNK + offset);
            }
        });
    starts
}

/// Keys per bucket of [`group_rows`]: the rows one work item fills.
const KEYS_PER_BUCKET: usize = 4096;

/// A part's pairs sorted by bucket, and where each bucket's run starts among them
/// (one more entry than buckets).
type ByBucket<V> = (Vec<(u32, V)>, Vec<u32>);

/// `(key, value)` pairs grouped into rows by key, `n_keys` rows: `(starts, values)`,
/// where row `k` is `values[starts[k]..starts[k + 1]]`, its values in the order the
/// pairs come in `parts`, part after part (what one pass in that order, counting then
/// placing, gives). On all threads and without atomics (deterministic): each part is
/// sorted by bucket of [`KEYS_PER_BUCKET`] keys (a stable counting sort), then each
/// bucket counts and places its rows' values, taking its run from every part in order:
/// every scattered write lands in one bucket's few kB. `placeholder` fills the values
/// first (faulting their memory in on all threads).
///
/// # Panics
///
/// If a key is `n_keys` or more.
pub fn group_rows<V: Copy + Send + Sync>(
    n_keys: usize,
    parts: Vec<Vec<(u32, V)>>,
    placeholder: V,
) -> (Vec<u32>, Vec<V>) {
    let n_buckets = n_keys.div_ceil(KEYS_PER_BUCKET);
    let bucket_of = |key: u32| {
        assert!((key as usize) < n_keys, "key {key} past the {n_keys} rows");
        key as usize / KEYS_PER_BUCKET
    };
    // Each part by bucket, with where each bucket's run starts in it.
    let parts: Vec<ByBucket<V>> = parts
        .into_par_iter()
        .map(|part| {
            let mut bounds = vec![0u32; n_buckets + 1];
            for &(key, _) in &part {
                bounds[bucket_of(key) + 1] += 1;
            }
            for bucket in 0..n_buckets {
                bounds[bucket + 1] += bounds[bucket];
            }
            let mut next = bounds.clone();
            let mut sorted = vec![(0, placeholder); part.len()];
            for &(key, value) in &part {
                let next = &mut next[bucket_of(key)];
                sorted[*next as usize] = (key, value);
                *next += 1;
            }
            (sorted, bounds)
        })
        .collect();
    /// The run of a part's pairs in `bucket`.
    fn run<V>((part, bounds): &ByBucket<V>, bucket: usize) -> &[(u32, V)] {
        &part[bounds[bucket] as usize..bounds[bucket + 1] as usize]
    }
    let bucket_sizes: Vec<usize> = (0..n_buckets)
        .into_par_iter()
        .map(|bucket| parts.iter().map(|part| run(part, bucket).len()).sum())
        .collect();
    let total: usize = bucket_sizes.iter().sum();
    let mut starts = crate::filled(n_keys + 1, 0u32);
    starts[n_keys] = u32::try_from(total).expect("rows of at most u32::MAX values");
    let mut values = crate::filled(total, placeholder);
    let mut bucket_values = Vec::with_capacity(n_buckets);
    let mut rest = values.as_mut_slice();
    let mut first = 0u32;
    for &size in &bucket_sizes {
        let (part, tail) = rest.split_at_mut(size);
        bucket_values.push((first, part));
        rest = tail;
        first += size as u32;
    }
    starts[..n_keys]
        .par_chunks_mut(KEYS_PER_BUCKET)
        .zip(bucket_values)
        .enumerate()
        .for_each(|(bucket, (bucket_starts, (first, bucket_values)))| {
            let key_base = bucket * KEYS_PER_BUCKET;
            let runs = || parts.iter().flat_map(|part| run(part, bucket));
            let mut next = vec![0u32; bucket_starts.len()];
            for &(key, _) in runs() {
                next[key as usize - key_base] += 1;
            }
            let mut place = 0u32;
            for (start, next) in bucket_starts.iter_mut().zip(&mut next) {
                *start = first + place;
                let count = *next;
                *next = place;
                place += count;
            }
            for &(key, value) in runs() {
                let next = &mut next[key as usize - key_base];
                bucket_values[*next as usize] = value;
                *next += 1;
            }
        });
    (starts, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One pass in order: count, then place.
    fn grouped_in_one_pass(n_keys: usize, parts: &[Vec<(u32, u32)>]) -> (Vec<u32>, Vec<u32>) {
        let mut starts = vec![0u32; n_keys + 1];
        for &(key, _) in parts.iter().flatten() {
            starts[key as usize + 1] += 1;
        }
        for key in 0..n_keys {
            starts[key + 1] += starts[key];
        }
        let mut next = starts.clone();
        let mut values = vec![0u32; starts[n_keys] as usize];
        for &(key, value) in parts.iter().flatten() {
            values[next[key as usize] as usize] = value;
            next[key as usize] += 1;
        }
        (starts, values)
    }

    #[test]
    fn rows_grouped_on_all_threads_equal_one_pass_in_order() {
        // Keys spread over several buckets, repeated within and across parts, some
        // rows empty, empty parts; values numbered in order so that any reordering
        // within a row shows.
        for (n_keys, n_parts) in [(0, 0), (1, 3), (10, 1), (3 * KEYS_PER_BUCKET + 17, 9)] {
            let mut value = 0u32;
            let mut state = 12345u64;
            let parts: Vec<Vec<(u32, u32)>> = (0..n_parts)
                .map(|part| {
                    let len = if part % 4 == 1 { 0 } else { 500 + part * 311 };
                    (0..len)
                        .map(|_| {
                            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                            value += 1;
                            // Skewed, so that some rows stay empty.
                            let key = ((state >> 33) as usize % n_keys.max(1)) / 2 * 2;
                            (key as u32, value)
                        })
                        .collect()
                })
                .collect();
            if n_keys == 0 && parts.iter().any(|part| !part.is_empty()) {
                continue;
            }
            assert_eq!(
                group_rows(n_keys, parts.clone(), 0),
                grouped_in_one_pass(n_keys, &parts),
                "{n_keys} keys, {n_parts} parts"
            );
            let counts: Vec<u32> = {
                let (starts, _) = grouped_in_one_pass(n_keys, &parts);
                starts.windows(2).map(|pair| pair[1] - pair[0]).collect()
            };
            assert_eq!(
                row_starts(n_keys, |key| counts[key]),
                grouped_in_one_pass(n_keys, &parts).0
            );
        }
    }
}
