//! A memory's last compile, and the two ways to prove that nothing changed since.
//!
//! Fast proof: objects of the tracked classes (memprompt's own input classes) count every
//! attribute write in one edit count. When no write happened and the memory holds the very
//! same lists of the very same objects, the output cannot differ, and no attribute is read.
//! Full proof: every field value read is the very same (immutable) object as before
//! (`crate::trace`); this is how objects of other classes (Letta's pydantic ones) are checked.
//! Objects are known by their ids here; the binding walks the Python objects.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::trace::{Id, Trace};

/// Attribute writes to objects of the tracked classes, ever.
static EDITS: AtomicU64 = AtomicU64::new(0);

/// Counts one attribute write or delete on an object of a tracked class.
pub fn count_edit() {
    EDITS.fetch_add(1, Ordering::AcqRel);
}

/// The edit count now: read it before reading the inputs it vouches for.
pub fn edits() -> u64 {
    EDITS.load(Ordering::Acquire)
}

/// How many classes can be tracked; memprompt registers five.
pub const MAX_TRACKED: usize = 16;

/// The version tag of each tracked class, in registration order (a class's tag changes with the class).
pub type Versions = [u32; MAX_TRACKED];

/// The classes whose every attribute write is counted, by id; read without a lock.
pub struct Tracked {
    ids: [AtomicUsize; MAX_TRACKED],
    registering: Mutex<()>,
}

/// More classes than [`MAX_TRACKED`] were registered.
#[derive(Debug, PartialEq, Eq)]
pub struct TooManyClasses;

impl Tracked {
    pub const fn new() -> Self {
        Tracked { ids: [const { AtomicUsize::new(0) }; MAX_TRACKED], registering: Mutex::new(()) }
    }

    /// Registers a class (its caller keeps it alive, so that its id stays its own); `true` when it is new.
    pub fn register(&self, class: usize) -> Result<bool, TooManyClasses> {
        let _one_at_a_time = self.registering.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for id in &self.ids {
            match id.load(Ordering::Acquire) {
                0 => {
                    id.store(class, Ordering::Release);
                    return Ok(true);
                }
                known if known == class => return Ok(false),
                _ => {}
            }
        }
        Err(TooManyClasses)
    }

    /// The registered classes, in registration order.
    pub fn classes(&self) -> impl Iterator<Item = usize> + '_ {
        self.ids.iter().map(|t| t.load(Ordering::Acquire)).take_while(|&t| t != 0)
    }

    pub fn contains(&self, class: usize) -> bool {
        self.classes().any(|t| t == class)
    }

    /// Each registered class's version tag.
    pub fn versions(&self, tag: impl Fn(usize) -> u32) -> Versions {
        let mut tags = [0; MAX_TRACKED];
        for (t, class) in tags.iter_mut().zip(self.classes()) {
            *t = tag(class);
        }
        tags
    }
}

impl Default for Tracked {
    fn default() -> Self {
        Self::new()
    }
}

/// One step of a walk over a compile's inputs.
pub enum Step<'a, T> {
    /// An immutable value, or a list: its identity is all that matters.
    Object(&'a T),
    /// An object whose attributes are read: it must be of a tracked class when recorded; when
    /// matched, being the same object is enough (a change of its class is a counted write).
    Read(&'a T),
    /// A list length or a flag.
    Number(usize),
}

/// Everything a compile reads, as the binding walks it.
pub trait Inputs {
    /// An input as walked.
    type Item: Id;
    /// An input as the cache holds it, so that no other object takes its id.
    type Held: Id;
    /// Visits every step in a fixed order; `false` as soon as `visit` says so, or when some
    /// input is not covered by the edit count.
    fn walk<V: FnMut(Step<'_, Self::Item>) -> bool>(&self, visit: &mut V) -> bool;
    /// Whether the edit count covers the attributes of `item` (its class is tracked, as it is now).
    fn tracked(&self, item: &Self::Item) -> bool;
    fn hold(item: &Self::Item) -> Self::Held;
    /// The tracked classes' version tags now.
    fn versions(&self) -> Versions;
}

/// The identities of everything the last compile read from, when the edit count covers them all.
struct Shape<H> {
    objects: Vec<H>,
    numbers: Vec<usize>,
    versions: Versions,
}

impl<H: Id> Shape<H> {
    fn of<I: Inputs<Held = H>>(inputs: &I) -> Option<Self> {
        // Checked first, so that inputs of other classes (Letta's) cost no allocation.
        let (mut objects, mut numbers) = (0, 0);
        let covered = inputs.walk(&mut |step| match step {
            Step::Read(item) if !inputs.tracked(item) => false,
            Step::Object(_) | Step::Read(_) => {
                objects += 1;
                true
            }
            Step::Number(_) => {
                numbers += 1;
                true
            }
        });
        if !covered {
            return None;
        }
        let mut shape = Shape {
            objects: Vec::with_capacity(objects),
            numbers: Vec::with_capacity(numbers),
            versions: inputs.versions(),
        };
        inputs.walk(&mut |step| {
            match step {
                Step::Object(item) | Step::Read(item) => shape.objects.push(I::hold(item)),
                Step::Number(n) => shape.numbers.push(n),
            }
            true
        });
        Some(shape)
    }

    fn matches<I: Inputs>(&self, inputs: &I) -> bool {
        if self.versions != inputs.versions() {
            return false;
        }
        let (mut objects, mut numbers) = (self.objects.iter(), self.numbers.iter());
        let same = inputs.walk(&mut |step| match step {
            Step::Object(item) | Step::Read(item) => objects.next().is_some_and(|o| o.id() == item.id()),
            Step::Number(n) => numbers.next() == Some(&n),
        });
        same && objects.next().is_none() && numbers.next().is_none()
    }
}

/// What a compile depended on besides the values it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    pub anthropic: bool,
    pub git_enabled: bool,
}

/// A compile's result: the text, and its detail (fingerprint, section spans) when it was asked for.
pub struct Entry<H: Id, T, D> {
    pub mode: Mode,
    pub reads: Trace<H>,
    pub text: T,
    pub detail: Option<D>,
}

struct Slot<H: Id, T, D> {
    entry: Entry<H, T, D>,
    edits: u64,
    shape: Option<Shape<H>>,
}

/// The last compile of one memory.
pub struct Cache<H: Id, T, D> {
    // Locked only around comparisons and stores, never across a call out: what is dropped is
    // dropped after the lock is released, since an object's finalizer may compile this memory.
    slot: Mutex<Option<Slot<H, T, D>>>,
}

impl<H: Id, T, D> Default for Cache<H, T, D> {
    fn default() -> Self {
        Cache { slot: Mutex::new(None) }
    }
}

impl<H: Id, T, D> Cache<H, T, D> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Slot<H, T, D>>> {
        self.slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn clear(&self) {
        let old = self.lock().take();
        drop(old);
    }

    /// Visits what the cache holds that may hold other objects (the fast proof's inputs, a
    /// result's detail), for the garbage collector: the values read are immutable and hold
    /// nothing. Visits nothing while the lock is held elsewhere: a reference not visited keeps
    /// its object alive, it never frees it early.
    pub fn visit<E>(
        &self,
        mut object: impl FnMut(&H) -> Result<(), E>,
        mut detail: impl FnMut(&D) -> Result<(), E>,
    ) -> Result<(), E> {
        let slot = match self.slot.try_lock() {
            Ok(slot) => slot,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Ok(()),
        };
        let Some(s) = slot.as_ref() else { return Ok(()) };
        s.shape.iter().flat_map(|shape| &shape.objects).try_for_each(&mut object)?;
        s.entry.detail.iter().try_for_each(&mut detail)
    }

    /// `take` of the last result, if no tracked object was written since (`edits`) and the
    /// inputs are the same objects in the same shape (read before the inputs are).
    pub fn unchanged<I: Inputs, R>(
        &self,
        edits: u64,
        inputs: &I,
        detail: bool,
        take: impl FnOnce(&T, Option<&D>) -> R,
    ) -> Option<R> {
        let slot = self.lock();
        let s = slot.as_ref()?;
        let hit = s.edits == edits
            && (!detail || s.entry.detail.is_some())
            && s.shape.as_ref().is_some_and(|shape| shape.matches(inputs));
        hit.then(|| take(&s.entry.text, s.entry.detail.as_ref()))
    }

    /// `take` of the last result, if every value read is the same object as before in the same
    /// mode; the result is then vouched for as of `edits`, for the fast proof.
    pub fn same_reads<I: Inputs<Held = H>, R>(
        &self,
        edits: u64,
        inputs: &I,
        mode: Mode,
        reads: &Trace<impl Id>,
        detail: bool,
        take: impl FnOnce(&T, Option<&D>) -> R,
    ) -> Option<R> {
        let mut slot = self.lock();
        let s = slot.as_mut()?;
        let e = &s.entry;
        let hit = e.mode == mode && (!detail || e.detail.is_some()) && e.reads.same_as(reads);
        if !hit {
            return None;
        }
        let found = take(&e.text, e.detail.as_ref());
        let old = std::mem::replace(&mut s.shape, Shape::of(inputs));
        s.edits = edits;
        drop(slot);
        drop(old);
        Some(found)
    }

    /// Keeps a compile's result, read from `inputs` with the edit count at `edits`.
    pub fn store<I: Inputs<Held = H>>(&self, edits: u64, inputs: &I, entry: Entry<H, T, D>) {
        let shape = Shape::of(inputs);
        let old = self.lock().replace(Slot { entry, edits, shape });
        drop(old);
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::Arc;

    use super::*;

    /// An input object: its id, and whether its class is tracked.
    #[derive(Clone, Copy)]
    struct Obj {
        id: usize,
        tracked: bool,
    }

    impl Id for Obj {
        fn id(&self) -> usize {
            self.id
        }
    }

    /// A memory: a list of blocks (a list object, then each block) and a flag.
    #[derive(Clone)]
    struct Memory {
        list: Obj,
        blocks: Vec<Obj>,
        flag: usize,
        versions: Versions,
        walks: Cell<usize>,
    }

    impl Inputs for Memory {
        type Item = Obj;
        type Held = usize;

        fn walk<V: FnMut(Step<'_, Obj>) -> bool>(&self, visit: &mut V) -> bool {
            self.walks.set(self.walks.get() + 1);
            visit(Step::Object(&self.list))
                && visit(Step::Number(self.blocks.len()))
                && self.blocks.iter().all(|b| visit(Step::Read(b)))
                && visit(Step::Number(self.flag))
        }

        fn tracked(&self, item: &Obj) -> bool {
            item.tracked
        }

        fn hold(item: &Obj) -> usize {
            item.id
        }

        fn versions(&self) -> Versions {
            self.versions
        }
    }

    fn memory(blocks: &[usize], tracked: bool) -> Memory {
        Memory {
            list: Obj { id: 1, tracked: false },
            blocks: blocks.iter().map(|&id| Obj { id, tracked }).collect(),
            flag: 0,
            versions: [7; MAX_TRACKED],
            walks: Cell::new(0),
        }
    }

    fn reads(ids: &[usize]) -> Trace {
        let mut t = Trace::default();
        ids.iter().for_each(|&id| t.read(1, id));
        t.mark(0);
        t
    }

    const PLAIN: Mode = Mode { anthropic: false, git_enabled: false };

    fn entry(text: &'static str, ids: &[usize], detail: Option<u8>) -> Entry<usize, &'static str, u8> {
        Entry { mode: PLAIN, reads: reads(ids), text, detail }
    }

    fn text(t: &&'static str, _: Option<&u8>) -> &'static str {
        t
    }

    #[test]
    fn the_fast_proof_holds_for_the_same_tracked_objects_with_no_edit_since() {
        let cache = Cache::default();
        let m = memory(&[10, 11], true);
        cache.store(5, &m, entry("out", &[100, 101], None));
        assert_eq!(cache.unchanged(5, &m, false, text), Some("out"));
        assert_eq!(cache.unchanged(6, &m, false, text), None, "an edit since");
        assert_eq!(cache.unchanged(5, &memory(&[10, 12], true), false, text), None, "another block");
        assert_eq!(cache.unchanged(5, &memory(&[10], true), false, text), None, "a shorter list");
        assert_eq!(cache.unchanged(5, &memory(&[10, 11, 12], true), false, text), None, "a longer list");
        assert_eq!(cache.unchanged(5, &Memory { flag: 1, ..m.clone() }, false, text), None, "another flag");
        assert_eq!(cache.unchanged(5, &Memory { list: Obj { id: 2, tracked: false }, ..m.clone() }, false, text), None);
        let mut versions = m.versions;
        versions[3] += 1;
        assert_eq!(cache.unchanged(5, &Memory { versions, ..m.clone() }, false, text), None, "a class changed");
        assert_eq!(cache.unchanged(5, &m, true, text), None, "detail asked, none kept");
        cache.clear();
        assert_eq!(cache.unchanged(5, &m, false, text), None, "cleared");
    }

    #[test]
    fn a_result_with_detail_serves_calls_with_and_without_it() {
        let cache = Cache::default();
        let m = memory(&[10], true);
        cache.store(0, &m, entry("out", &[100], Some(9)));
        assert_eq!(cache.unchanged(0, &m, true, |t, d| (*t, d.copied())), Some(("out", Some(9))));
        assert_eq!(cache.unchanged(0, &m, false, text), Some("out"));
    }

    #[test]
    fn untracked_objects_need_the_full_proof_and_allocate_nothing_for_the_fast_one() {
        let cache = Cache::default();
        let m = memory(&[10, 11], false);
        cache.store(5, &m, entry("out", &[100, 101], None));
        assert_eq!(m.walks.get(), 1, "the walk stops at the first untracked object, once");
        assert_eq!(cache.unchanged(5, &m, false, text), None);
        assert_eq!(cache.same_reads(5, &m, PLAIN, &reads(&[100, 101]), false, text), Some("out"));
        assert_eq!(cache.unchanged(5, &m, false, text), None, "still not vouched for by count");
        assert_eq!(cache.same_reads(5, &m, PLAIN, &reads(&[100, 102]), false, text), None, "another value");
        assert_eq!(cache.same_reads(5, &m, PLAIN, &reads(&[100]), false, text), None, "fewer values");
        let anthropic = Mode { anthropic: true, ..PLAIN };
        assert_eq!(cache.same_reads(5, &m, anthropic, &reads(&[100, 101]), false, text), None);
        let git = Mode { git_enabled: true, ..PLAIN };
        assert_eq!(cache.same_reads(5, &m, git, &reads(&[100, 101]), false, text), None);
        assert_eq!(cache.same_reads(5, &m, PLAIN, &reads(&[100, 101]), true, text), None, "no detail kept");
    }

    #[test]
    fn the_full_proof_vouches_for_the_result_as_of_the_new_count() {
        let cache = Cache::default();
        let m = memory(&[10, 11], true);
        cache.store(5, &m, entry("out", &[100, 101], None));
        // An edit somewhere else: the fast proof fails, the full one holds and renews the fast one.
        assert_eq!(cache.unchanged(8, &m, false, text), None);
        assert_eq!(cache.same_reads(8, &m, PLAIN, &reads(&[100, 101]), false, text), Some("out"));
        assert_eq!(cache.unchanged(8, &m, false, text), Some("out"));
        // Vouched for as the inputs are now: a list of other (same-valued) objects.
        let other = memory(&[20, 21], true);
        assert_eq!(cache.same_reads(9, &other, PLAIN, &reads(&[100, 101]), false, text), Some("out"));
        assert_eq!(cache.unchanged(9, &other, false, text), Some("out"));
        assert_eq!(cache.unchanged(9, &m, false, text), None);
    }

    #[test]
    fn a_result_dropped_by_the_cache_may_use_the_cache_from_its_drop() {
        // Holds the cache, and reads it when dropped (as a finalizer may compile the memory).
        struct Reenters(Option<Arc<Cache<usize, Reenters, ()>>>);
        impl Drop for Reenters {
            fn drop(&mut self) {
                if let Some(cache) = self.0.take() {
                    let _ = cache.unchanged(0, &memory(&[10], true), false, |_, _| ());
                }
            }
        }
        let cache = Arc::new(Cache::default());
        let m = memory(&[10], true);
        let entry = |text| Entry { mode: PLAIN, reads: reads(&[100]), text, detail: None };
        for held in [true, false, true] {
            let text = Reenters(held.then(|| cache.clone()));
            cache.store(0, &m, entry(text));
            assert_eq!(cache.unchanged(0, &m, false, |t, _| t.0.is_some()), Some(held));
        }
        assert_eq!(cache.same_reads(1, &m, PLAIN, &reads(&[100]), false, |t, _| t.0.is_some()), Some(true));
        cache.clear();
        assert_eq!(Arc::strong_count(&cache), 1, "the entry that held the cache was dropped");
    }

    #[test]
    fn the_collector_is_shown_the_fast_proofs_objects_and_the_detail() {
        let cache = Cache::default();
        let visited = |cache: &Cache<usize, &str, u8>| {
            let seen = std::cell::RefCell::new(Vec::new());
            let _: Result<(), ()> = cache.visit(
                |&o| {
                    seen.borrow_mut().push(o);
                    Ok(())
                },
                |&d| {
                    seen.borrow_mut().push(1000 + d as usize);
                    Ok(())
                },
            );
            seen.into_inner()
        };
        assert_eq!(visited(&cache), Vec::<usize>::new());
        cache.store(0, &memory(&[10, 11], true), entry("out", &[100], Some(9)));
        assert_eq!(visited(&cache), [1, 10, 11, 1009], "the list, its blocks, the detail; not the values read");
        cache.store(0, &memory(&[10], false), entry("out", &[100], None));
        assert_eq!(visited(&cache), Vec::<usize>::new(), "no fast proof kept");
        let _held = cache.slot.lock();
        assert_eq!(visited(&cache), Vec::<usize>::new(), "locked elsewhere: nothing visited");
    }

    #[test]
    fn classes_are_registered_once_each_up_to_the_limit() {
        let tracked = Tracked::new();
        assert_eq!(tracked.register(0x10), Ok(true));
        assert_eq!(tracked.register(0x10), Ok(false));
        for class in 1..MAX_TRACKED {
            assert_eq!(tracked.register(0x10 + 0x10 * class), Ok(true));
        }
        assert_eq!(tracked.register(0x1000), Err(TooManyClasses));
        assert_eq!(tracked.register(0x20), Ok(false), "a registered class, when full");
        assert!(tracked.contains(0x20) && !tracked.contains(0x1000));
        let versions = tracked.versions(|class| class as u32 / 0x10);
        assert_eq!(versions.to_vec(), (1..=MAX_TRACKED as u32).collect::<Vec<_>>());
        let fresh = Tracked::new();
        fresh.register(0x30).unwrap();
        assert_eq!(fresh.versions(|_| 4)[..2], [4, 0], "unregistered places read 0");
    }
}
