//! Ids by name without a second copy of every name.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::fast_hash::FastHasher;
use crate::name_compare::names_equal;

/// A map from names to `u32` ids that stores no names: the caller owns them (in a
/// vector indexed by id, say) and lends them back through a `name_of` closure.
///
/// One flat open-addressing table (linear probing, power-of-two size) of 8-byte slots,
/// each `tag << 32 | (id + 1)` (0: empty), where the tag is the high half of the
/// name's 64-bit hash and also picks the home slot (its top bits). A lookup thus
/// touches one cache line of the table, then compares names only where a tag matches.
/// Million-entry indices are built in parallel ([`NameIndex::from_distinct`]); the
/// `HashMap` of (hash, id) this replaces was filled one insertion at a time, a serial
/// step of linking large designs. Ids go up to `u32::MAX - 1`.
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    slots: Vec<u64>,
    len: usize,
}

/// How many names ahead a bulk build fetches the home slot of.
const PREFETCH_AHEAD: usize = 16;

/// The table is grown past this fill (numerator over 8).
const MAX_FILL_EIGHTHS: usize = 6;

const EMPTY: u64 = 0;

/// Tables of at least this many slots grow on all threads.
const PARALLEL_REBUILD: usize = 1 << 16;

fn tag_of(hash: u64) -> u32 {
    (hash >> 32) as u32
}

fn slot_value(tag: u32, id: u32) -> u64 {
    debug_assert!(id < u32::MAX, "id {id} does not fit a slot");
    (u64::from(tag) << 32) | (u64::from(id) + 1)
}

fn slot_tag(slot: u64) -> u32 {
    (slot >> 32) as u32
}

fn slot_id(slot: u64) -> u32 {
    (slot as u32).wrapping_sub(1)
}

/// Slots needed for `len` names.
fn capacity_for(len: usize) -> usize {
    (len * 8 / MAX_FILL_EIGHTHS + 1).next_power_of_two().max(16)
}

impl NameIndex {
    /// The hash under which `name` is stored.
    pub fn hash(name: &str) -> u64 {
        let mut hasher = FastHasher::default();
        name.hash(&mut hasher);
        hasher.finish()
    }

    /// The home slot of `tag` in a table of `n_slots` (a power of two).
    fn home(tag: u32, n_slots: usize) -> usize {
        let bits = n_slots.trailing_zeros();
        ((u64::from(tag) << bits) >> 32) as usize
    }

    /// An index of the names `0..hashes.len()` (id = position), built in parallel;
    /// `hashes[id]` is [`NameIndex::hash`] of name `id`. None when two names are equal
    /// (then insert one by one, which says which id holds a name first).
    pub fn from_distinct<'a>(
        hashes: &[u64],
        name_of: impl Fn(u32) -> &'a str + Sync,
    ) -> Option<NameIndex> {
        let n_slots = capacity_for(hashes.len());
        let mask = n_slots - 1;
        let table: Vec<AtomicU64> = (0..n_slots)
            .into_par_iter()
            .map(|_| AtomicU64::new(EMPTY))
            .collect();
        let repeated = AtomicBool::new(false);
        hashes
            .par_iter()
            .enumerate()
            .with_min_len(4096)
            .for_each(|(id, &hash)| {
                // The home slots of the names ahead are scattered: fetched while this
                // one is placed.
                if let Some(&ahead) = hashes.get(id + PREFETCH_AHEAD) {
                    crate::prefetch(&table, Self::home(tag_of(ahead), n_slots));
                }
                let (tag, id) = (tag_of(hash), id as u32);
                let value = slot_value(tag, id);
                let mut position = Self::home(tag, n_slots);
                loop {
                    // Slots only go from empty to full, so a full slot seen here is final.
                    let current = match table[position].compare_exchange(
                        EMPTY,
                        value,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return,
                        Err(current) => current,
                    };
                    if slot_tag(current) == tag
                        && names_equal(name_of(slot_id(current)), name_of(id))
                    {
                        repeated.store(true, Ordering::Relaxed);
                        return;
                    }
                    position = (position + 1) & mask;
                }
            });
        if repeated.into_inner() {
            return None;
        }
        Some(NameIndex {
            slots: table.into_par_iter().map(AtomicU64::into_inner).collect(),
            len: hashes.len(),
        })
    }

    /// Reserves room for `additional` more names.
    pub fn reserve(&mut self, additional: usize) {
        let wanted = capacity_for(self.len + additional);
        if wanted > self.slots.len() {
            self.rebuild(wanted);
        }
    }

    /// Moves every entry into a table of `n_slots` slots (tags alone place them): a
    /// large table on all threads, each entry in the first free slot from its home
    /// (slots only go from empty to full, so every entry stays reachable from its home
    /// with no empty slot between; where entries of one run of slots land depends on
    /// the threads, what a lookup finds does not).
    fn rebuild(&mut self, n_slots: usize) {
        let mask = n_slots - 1;
        if self.slots.len() >= PARALLEL_REBUILD {
            let table: Vec<AtomicU64> = (0..n_slots)
                .into_par_iter()
                .map(|_| AtomicU64::new(EMPTY))
                .collect();
            self.slots
                .par_iter()
                .with_min_len(4096)
                .filter(|&&slot| slot != EMPTY)
                .for_each(|&slot| {
                    let mut position = Self::home(slot_tag(slot), n_slots);
                    while table[position]
                        .compare_exchange(EMPTY, slot, Ordering::Relaxed, Ordering::Relaxed)
                        .is_err()
                    {
                        position = (position + 1) & mask;
                    }
                });
            self.slots = table.into_par_iter().map(AtomicU64::into_inner).collect();
            return;
        }
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; n_slots]);
        for slot in old.into_iter().filter(|&slot| slot != EMPTY) {
            let mut position = Self::home(slot_tag(slot), n_slots);
            while self.slots[position] != EMPTY {
                position = (position + 1) & mask;
            }
            self.slots[position] = slot;
        }
    }

    /// The id of `name`.
    pub fn get<'a>(&self, name: &str, name_of: impl Fn(u32) -> &'a str) -> Option<u32> {
        self.get_hashed(Self::hash(name), name, name_of)
    }

    /// [`NameIndex::get`] with the hash already computed by [`NameIndex::hash`].
    pub fn get_hashed<'a>(
        &self,
        hash: u64,
        name: &str,
        name_of: impl Fn(u32) -> &'a str,
    ) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        self.probe(hash, name, name_of).ok()
    }

    /// Looks for `name` from its home slot: `Ok(id)` where it is, or `Err(slot)`, the
    /// empty slot where it would go. The table must have slots.
    fn probe<'a>(
        &self,
        hash: u64,
        name: &str,
        name_of: impl Fn(u32) -> &'a str,
    ) -> Result<u32, usize> {
        let tag = tag_of(hash);
        let mask = self.slots.len() - 1;
        let mut position = Self::home(tag, self.slots.len());
        loop {
            let slot = self.slots[position];
            if slot == EMPTY {
                return Err(position);
            }
            if slot_tag(slot) == tag && names_equal(name_of(slot_id(slot)), name) {
                return Ok(slot_id(slot));
            }
            position = (position + 1) & mask;
        }
    }

    /// The ids of several names, as [`NameIndex::get_hashed`] gives them (`ids[i]` for
    /// `names[i]`, whose hash is `hashes[i]`), a batch at a time: first the home slots
    /// of the batch are read, then the names of their ids, then the names compared, so
    /// that the cache misses of a batch overlap instead of coming three in a row per
    /// name (most of the time of a lookup into a million-name index).
    pub fn get_batch<'a>(
        &self,
        hashes: &[u64],
        names: &[&str],
        name_of: impl Fn(u32) -> &'a str,
        ids: &mut [Option<u32>],
    ) {
        const BATCH: usize = 16;
        if self.slots.is_empty() {
            ids.fill(None);
            return;
        }
        for ((hashes, names), ids) in hashes
            .chunks(BATCH)
            .zip(names.chunks(BATCH))
            .zip(ids.chunks_mut(BATCH))
        {
            let mut home = [EMPTY; BATCH];
            for (home, &hash) in home.iter_mut().zip(hashes) {
                *home = self.slots[Self::home(tag_of(hash), self.slots.len())];
            }
            let mut candidate = [""; BATCH];
            for ((candidate, &home), &hash) in candidate.iter_mut().zip(&home).zip(hashes) {
                if home != EMPTY && slot_tag(home) == tag_of(hash) {
                    *candidate = name_of(slot_id(home));
                }
            }
            for (index, id) in ids.iter_mut().enumerate() {
                let (home, hash, name) = (home[index], hashes[index], names[index]);
                *id = if home == EMPTY {
                    None
                } else if slot_tag(home) == tag_of(hash) && names_equal(candidate[index], name) {
                    Some(slot_id(home))
                } else {
                    self.get_hashed(hash, name, &name_of)
                };
            }
        }
    }

    /// Records `id` (whose name `name_of` need not know yet) under `name`, or returns
    /// the id that already has that name.
    pub fn insert<'a>(
        &mut self,
        name: &str,
        id: u32,
        name_of: impl Fn(u32) -> &'a str,
    ) -> Option<u32> {
        self.insert_hashed(Self::hash(name), name, id, name_of)
    }

    /// [`NameIndex::insert`] with the hash already computed by [`NameIndex::hash`].
    pub fn insert_hashed<'a>(
        &mut self,
        hash: u64,
        name: &str,
        id: u32,
        name_of: impl Fn(u32) -> &'a str,
    ) -> Option<u32> {
        self.reserve(1);
        match self.probe(hash, name, name_of) {
            Ok(holder) => Some(holder),
            Err(position) => {
                self.slots[position] = slot_value(tag_of(hash), id);
                self.len += 1;
                None
            }
        }
    }

    /// Forgets every name.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.len = 0;
    }

    /// Forgets `name` (which `name_of` must still be able to give for every id in the
    /// table); returns its id, if it was there. The entries after it in its probe run
    /// move back over the hole (backward-shift deletion), so no tombstone slows later
    /// lookups.
    pub fn remove<'a>(&mut self, name: &str, name_of: impl Fn(u32) -> &'a str) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let tag = tag_of(Self::hash(name));
        let mask = self.slots.len() - 1;
        let mut hole = Self::home(tag, self.slots.len());
        let id = loop {
            let slot = self.slots[hole];
            if slot == EMPTY {
                return None;
            }
            if slot_tag(slot) == tag && names_equal(name_of(slot_id(slot)), name) {
                break slot_id(slot);
            }
            hole = (hole + 1) & mask;
        };
        self.slots[hole] = EMPTY;
        self.len -= 1;
        // Move back every later entry of the run whose home is not between the hole
        // and its place (cyclically): it would no longer be found past the hole.
        let mut position = (hole + 1) & mask;
        while self.slots[position] != EMPTY {
            let home = Self::home(slot_tag(self.slots[position]), self.slots.len());
            let distance_to_home = position.wrapping_sub(home) & mask;
            let distance_to_hole = position.wrapping_sub(hole) & mask;
            if distance_to_home >= distance_to_hole {
                self.slots[hole] = self.slots[position];
                self.slots[position] = EMPTY;
                hole = position;
            }
            position = (position + 1) & mask;
        }
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_inserted_names_and_refuses_repeats() {
        let names = ["a", "b", "c"];
        let mut index = NameIndex::default();
        for (id, name) in names.iter().enumerate() {
            assert_eq!(index.insert(name, id as u32, |id| names[id as usize]), None);
        }
        assert_eq!(index.insert("b", 7, |id| names[id as usize]), Some(1));
        assert_eq!(index.get("c", |id| names[id as usize]), Some(2));
        assert_eq!(index.get("d", |id| names[id as usize]), None);
    }

    #[test]
    fn parallel_build_finds_every_name_and_refuses_repeats() {
        let names: Vec<String> = (0..50_000).map(|i| format!("g{i}:A")).collect();
        let hashes: Vec<u64> = names.iter().map(|name| NameIndex::hash(name)).collect();
        let name_of = |id: u32| names[id as usize].as_str();
        let index = NameIndex::from_distinct(&hashes, name_of).expect("distinct");
        for (id, name) in names.iter().enumerate() {
            assert_eq!(index.get(name, name_of), Some(id as u32));
        }
        assert_eq!(index.get("g50000:A", name_of), None);
        let asked: Vec<String> = (0..100).map(|i| format!("g{}:A", i * 700)).collect();
        let asked: Vec<&str> = asked.iter().map(String::as_str).collect();
        let asked_hashes: Vec<u64> = asked.iter().map(|name| NameIndex::hash(name)).collect();
        let mut ids = vec![Some(0); asked.len()];
        index.get_batch(&asked_hashes, &asked, name_of, &mut ids);
        let one_by_one: Vec<Option<u32>> =
            asked.iter().map(|name| index.get(name, name_of)).collect();
        assert_eq!(ids, one_by_one);
        assert_eq!(ids[1], Some(700));
        assert_eq!(ids[99], None);
        let mut repeated = names.clone();
        repeated.push("g7:A".to_string());
        let hashes: Vec<u64> = repeated.iter().map(|name| NameIndex::hash(name)).collect();
        assert!(NameIndex::from_distinct(&hashes, |id| repeated[id as usize].as_str()).is_none());
    }

    #[test]
    fn grows_one_insertion_at_a_time() {
        let names: Vec<String> = (0..10_000).map(|i| format!("n{i}")).collect();
        let mut index = NameIndex::default();
        for (id, name) in names.iter().enumerate() {
            assert_eq!(
                index.insert(name, id as u32, |id| names[id as usize].as_str()),
                None
            );
        }
        for (id, name) in names.iter().enumerate() {
            assert_eq!(
                index.get(name, |id| names[id as usize].as_str()),
                Some(id as u32)
            );
        }
    }

    #[test]
    fn large_tables_grow_on_all_threads_and_stay_consistent() {
        // Past `PARALLEL_REBUILD` slots the table grows in parallel; lookups, removals
        // (backward shift) and later insertions must not notice.
        let names: Vec<String> = (0..200_000).map(|i| format!("pin{i}/A")).collect();
        let name_of = |id: u32| names[id as usize].as_str();
        let mut index = NameIndex::default();
        for (id, name) in names.iter().enumerate().take(150_000) {
            assert_eq!(index.insert(name, id as u32, name_of), None);
        }
        index.reserve(50_000);
        for id in (0..150_000).step_by(3) {
            assert_eq!(index.remove(&names[id], name_of), Some(id as u32));
        }
        for (id, name) in names.iter().enumerate().skip(150_000) {
            assert_eq!(index.insert(name, id as u32, name_of), None);
        }
        for (id, name) in names.iter().enumerate() {
            let expected = (id >= 150_000 || id % 3 != 0).then_some(id as u32);
            assert_eq!(index.get(name, name_of), expected, "{name}");
        }
    }

    #[test]
    fn removed_names_are_gone_and_the_others_stay_found() {
        let names: Vec<String> = (0..5_000).map(|i| format!("n{i}")).collect();
        let name_of = |id: u32| names[id as usize].as_str();
        let mut index = NameIndex::default();
        for (id, name) in names.iter().enumerate() {
            index.insert(name, id as u32, name_of);
        }
        for id in (0..5_000).filter(|id| id % 3 != 1) {
            assert_eq!(index.remove(&names[id], name_of), Some(id as u32));
        }
        assert_eq!(index.remove("n0", name_of), None);
        for (id, name) in names.iter().enumerate() {
            let expected = (id % 3 == 1).then_some(id as u32);
            assert_eq!(index.get(name, name_of), expected, "{name}");
        }
        // Removed names can come back.
        assert_eq!(index.insert("n0", 0, name_of), None);
        assert_eq!(index.get("n0", name_of), Some(0));
    }

    #[test]
    fn names_with_one_hash_both_resolve() {
        // Force a collision by inserting a second name under the first name's hash.
        let names = ["x", "y"];
        let mut index = NameIndex::default();
        let hash = NameIndex::hash("x");
        index.insert_hashed(hash, "x", 0, |id| names[id as usize]);
        index.insert_hashed(hash, "y", 1, |id| names[id as usize]);
        assert_eq!(
            index.get_hashed(hash, "y", |id| names[id as usize]),
            Some(1)
        );
        assert_eq!(
            index.get_hashed(hash, "x", |id| names[id as usize]),
            Some(0)
        );
    }
}
