//! Ids by name without a second copy of every name.

use std::hash::{Hash, Hasher};

use crate::fast_hash::{FastHasher, FastMap};

/// A map from names to `u32` ids that stores no names: the caller owns them (in a
/// vector indexed by id, say) and lends them back through a `name_of` closure. Each
/// name's 64-bit hash maps to its id; names are compared on lookup, and the (rare) ids
/// whose hash another id already has go to a short list.
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    by_hash: FastMap<u64, u32>,
    collisions: Vec<u32>,
}

impl NameIndex {
    /// The hash under which `name` is stored.
    pub fn hash(name: &str) -> u64 {
        let mut hasher = FastHasher::default();
        name.hash(&mut hasher);
        hasher.finish()
    }

    /// Reserves room for `additional` more names.
    pub fn reserve(&mut self, additional: usize) {
        self.by_hash.reserve(additional);
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
        if let Some(&id) = self.by_hash.get(&hash) {
            if name_of(id) == name {
                return Some(id);
            }
        }
        self.collisions
            .iter()
            .copied()
            .find(|&id| name_of(id) == name)
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
        match self.by_hash.entry(hash) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(id);
                None
            }
            std::collections::hash_map::Entry::Occupied(slot) => {
                let holder = *slot.get();
                if name_of(holder) == name {
                    return Some(holder);
                }
                if let Some(&existing) = self
                    .collisions
                    .iter()
                    .find(|&&other| name_of(other) == name)
                {
                    return Some(existing);
                }
                self.collisions.push(id);
                None
            }
        }
    }

    /// Forgets every name.
    pub fn clear(&mut self) {
        self.by_hash.clear();
        self.collisions.clear();
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
