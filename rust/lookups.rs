//! Where generic attribute lookup finds a field, and which of Letta's tool rule classes a
//! class is, remembered per thread across calls.
//!
//! An entry is keyed by a class at one version and a name (0 for a rule kind). CPython
//! never gives two states of any class the same version tag (0, "none now", is never
//! remembered), so an entry never describes a class as it was; names are interned for the
//! life of the process, so an address names one string.

use std::cell::Cell;

use crate::tool_rules::RuleKind;

/// A class (its address) at one version tag, and an attribute name (its address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub class: usize,
    pub version: u32,
    pub name: usize,
}

/// What lookup of the name on an instance of the class comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The instance dict decides; `hint` is the name's entry in one instance's dict,
    /// where instances built alike will hold it too.
    Dict { hint: Option<isize> },
    /// Something on the class can come first: CPython's own path reads it.
    Elsewhere,
}

const SLOTS: usize = 128;

/// A direct-mapped table: a key lives in one slot, and a key hashed there displaces it.
pub struct Table<V: Copy> {
    slots: [Cell<Option<(Key, V)>>; SLOTS],
}

/// Where attribute lookup finds each name.
pub type Lookups = Table<Found>;

impl<V: Copy> Default for Table<V> {
    fn default() -> Self {
        Table::new()
    }
}

impl<V: Copy> Table<V> {
    pub const fn new() -> Self {
        Table { slots: [const { Cell::new(None) }; SLOTS] }
    }

    /// What was remembered for `key`, if it still is.
    pub fn get(&self, key: Key) -> Option<V> {
        match self.slot(key).get() {
            Some((k, value)) if k == key => Some(value),
            _ => None,
        }
    }

    /// Remembers `value` for `key`, in place of whatever its slot held.
    pub fn set(&self, key: Key, value: V) {
        self.slot(key).set(Some((key, value)));
    }

    fn slot(&self, key: Key) -> &Cell<Option<(Key, V)>> {
        // Fibonacci hashing: objects are 16-byte aligned, so the low bits alone would crowd.
        let mixed = (key.class ^ key.name.rotate_left(17) ^ key.version as usize).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The top bits are the best mixed, and there are exactly enough of them to index.
        &self.slots[mixed >> (usize::BITS - SLOTS.trailing_zeros())]
    }
}

thread_local! {
    // Made in place, with nothing to drop: no lazy set-up to check on each use.
    static THREAD: Lookups = const { Lookups::new() };
    static RULE_KINDS: Table<Option<RuleKind>> = const { Table::new() };
}

/// Runs `f` with this thread's table (each thread has its own, so no lock is taken).
pub fn with<R>(f: impl FnOnce(&Lookups) -> R) -> R {
    THREAD.with(f)
}

/// The rule kind this thread remembers for a class at a version tag (`None`: not remembered;
/// `Some(None)`: no rule class). A class's module and name cost more to ask than a rule to read.
pub fn rule_kind(class: usize, version: u32) -> Option<Option<RuleKind>> {
    RULE_KINDS.with(|kinds| kinds.get(Key { class, version, name: 0 }))
}

/// Remembers a class's rule kind at a version tag; nothing is kept under 0 (no tag now).
pub fn remember_rule_kind(class: usize, version: u32, kind: Option<RuleKind>) {
    if version != 0 {
        RULE_KINDS.with(|kinds| kinds.set(Key { class, version, name: 0 }, kind));
    }
}

/// The last key asked for and what it found, kept in front of this thread's table while
/// one name is read from many objects: they are mostly of one class, and a match here
/// takes neither the thread-local nor a hash.
#[derive(Default)]
pub struct Last(Cell<Option<(Key, Found)>>);

impl Last {
    /// Starting from `kept`, what another `Last` held (`peek`).
    pub fn resumed(kept: Option<(Key, Found)>) -> Self {
        Last(Cell::new(kept))
    }

    /// What was remembered for `key`, here or in the thread's table.
    pub fn get(&self, key: Key) -> Option<Found> {
        match self.0.get() {
            Some((k, found)) if k == key => Some(found),
            _ => {
                let found = with(|table| table.get(key))?;
                self.0.set(Some((key, found)));
                Some(found)
            }
        }
    }

    /// What is kept here, asking nothing of the thread's table.
    #[inline(always)]
    pub fn peek(&self) -> Option<(Key, Found)> {
        self.0.get()
    }

    /// Remembers `found` for `key`, here and in the thread's table.
    pub fn set(&self, key: Key, found: Found) {
        self.0.set(Some((key, found)));
        with(|table| table.set(key, found));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(class: usize, version: u32, name: usize) -> Key {
        Key { class, version, name }
    }

    #[test]
    fn rule_kinds_are_kept_per_class_and_version_never_under_0() {
        remember_rule_kind(0x7000, 5, Some(RuleKind::ExitLoop));
        remember_rule_kind(0x7010, 5, None);
        remember_rule_kind(0x7020, 0, Some(RuleKind::ContinueLoop));
        assert_eq!(rule_kind(0x7000, 5), Some(Some(RuleKind::ExitLoop)));
        assert_eq!(rule_kind(0x7010, 5), Some(None));
        assert_eq!(rule_kind(0x7000, 6), None);
        assert_eq!(rule_kind(0x7020, 0), None);
        // Apart from the attribute lookups, whose keys have a name.
        assert_eq!(with(|table| table.get(Key { class: 0x7000, version: 5, name: 0 })), None);
    }

    #[test]
    fn last_keeps_what_was_set_or_found_in_the_table() {
        let last = Last::default();
        assert_eq!(last.peek(), None);
        let (a, b) = (key(0x1000, 7, 0x2000), key(0x3000, 9, 0x2000));
        last.set(a, Found::Dict { hint: Some(2) });
        assert_eq!(last.peek(), Some((a, Found::Dict { hint: Some(2) })));
        with(|table| table.set(b, Found::Elsewhere));
        // A miss here asks the thread's table, and keeps what it found in front.
        assert_eq!(last.get(b), Some(Found::Elsewhere));
        assert_eq!(last.peek(), Some((b, Found::Elsewhere)));
        assert_eq!(last.get(a), Some(Found::Dict { hint: Some(2) }));
    }

    #[test]
    fn a_resumed_last_answers_what_the_one_it_resumes_kept_without_the_table() {
        let (a, b) = (key(0x5000, 3, 0x6000), key(0x5010, 3, 0x6000));
        let first = Last::default();
        first.set(a, Found::Dict { hint: Some(4) });
        // The thread's table has lost it (another key took its slot, say): the resumed one still answers.
        with(|table| table.set(a, Found::Elsewhere));
        let next = Last::resumed(first.peek());
        assert_eq!(next.peek(), Some((a, Found::Dict { hint: Some(4) })));
        assert_eq!(next.get(a), Some(Found::Dict { hint: Some(4) }));
        assert_eq!(next.get(b), None);
        assert_eq!(Last::resumed(None).peek(), None);
    }

    #[test]
    fn a_key_set_is_found_and_no_other() {
        let table = Lookups::default();
        table.set(key(0x1000, 7, 0x2000), Found::Dict { hint: Some(3) });
        assert_eq!(table.get(key(0x1000, 7, 0x2000)), Some(Found::Dict { hint: Some(3) }));
        assert_eq!(table.get(key(0x1000, 8, 0x2000)), None);
        assert_eq!(table.get(key(0x1010, 7, 0x2000)), None);
        assert_eq!(table.get(key(0x1000, 7, 0x2010)), None);
    }

    #[test]
    fn setting_a_key_again_replaces_what_it_found() {
        let table = Lookups::default();
        let k = key(0x1000, 7, 0x2000);
        table.set(k, Found::Dict { hint: None });
        table.set(k, Found::Elsewhere);
        assert_eq!(table.get(k), Some(Found::Elsewhere));
    }

    #[test]
    fn keys_that_share_a_slot_displace_each_other_and_are_never_taken_for_each_other() {
        let table = Lookups::default();
        let first = key(0x1000, 1, 0x2000);
        // More keys than slots: some share the first one's slot.
        let others: Vec<Key> = (1..=4 * SLOTS).map(|i| key(0x1000 + 16 * i, 1, 0x2000)).collect();
        let sharing: Vec<Key> =
            others.iter().copied().filter(|k| std::ptr::eq(table.slot(*k), table.slot(first))).collect();
        assert!(!sharing.is_empty());
        table.set(first, Found::Dict { hint: Some(1) });
        table.set(sharing[0], Found::Elsewhere);
        assert_eq!(table.get(first), None);
        assert_eq!(table.get(sharing[0]), Some(Found::Elsewhere));
        for other in &sharing[1..] {
            assert_eq!(table.get(*other), None);
        }
    }

    #[test]
    fn the_last_key_is_answered_in_front_and_any_other_from_the_table() {
        let (a, b) = (key(0x3000, 5, 0x4000), key(0x3010, 5, 0x4000));
        let last = Last::default();
        assert_eq!(last.get(a), None);
        last.set(a, Found::Dict { hint: Some(2) });
        with(|table| table.set(b, Found::Elsewhere));
        assert_eq!(last.get(a), Some(Found::Dict { hint: Some(2) }));
        assert_eq!(last.get(b), Some(Found::Elsewhere));
        // What `set` remembered is in the thread's table too, for the next list read.
        assert_eq!(Last::default().get(a), Some(Found::Dict { hint: Some(2) }));
        // A key at another version is neither: the front holds only what matches it whole.
        assert_eq!(last.get(key(0x3010, 6, 0x4000)), None);
        assert_eq!(last.get(b), Some(Found::Elsewhere));
    }

    #[test]
    fn each_thread_has_its_own_table() {
        let k = key(0x1000, 7, 0x2000);
        with(|table| table.set(k, Found::Elsewhere));
        let elsewhere = std::thread::spawn(move || with(|table| table.get(k))).join().unwrap();
        assert_eq!(elsewhere, None);
        assert_eq!(with(|table| table.get(k)), Some(Found::Elsewhere));
    }
}
