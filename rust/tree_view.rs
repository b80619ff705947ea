//! `<memory_filesystem>`: every block label drawn as a file tree (Letta's
//! `Memory._render_memory_filesystem`).
//!
//! Letta nests Python dicts keyed by label part; a part's value is the block
//! (a file) or another dict (a directory). When a label is both a file and a
//! directory, the dict keeps the file's block under the key `__block__`, and a
//! label part spelled `__block__` reaches that same slot, so such labels bend
//! the tree in Letta's own way. We mirror the dicts exactly, in an arena: one
//! hash map from `(directory, part)` to the entry, with each directory's
//! `__block__` entry kept beside it. Rendering walks the arena with an explicit
//! stack, so depth cannot overflow the call stack.

use self::support::{bucket, bucket_sort, sort_head, InsertionOrdered};
use crate::error::RenderResult;
use crate::file_tree::{Mark, Prefix, Row};
use crate::model::Listed;
use crate::out::{Render, Sink};
use crate::text::{first_line, path_parts};
use crate::w;

/// The dict key under which a directory holds the block of the same name.
const SLOT: &[u8] = b"__block__";
/// The directory rendered as one line per skill.
const SKILLS: &[u8] = b"skills";
/// Files below a directory of this name (at any depth) show no description.
const SYSTEM: &[u8] = b"system";
/// The legacy skill layout: `skills/<name>/SKILL`.
const LEGACY_SKILL: &[u8] = b"SKILL";

/// The value of a dict entry: a block (by index) or a directory (by arena id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Block(usize),
    Dir(usize),
}

/// Letta's nested dicts. Directory `0` is the root.
struct Dirs<'b> {
    /// Every entry but the `__block__` ones, keyed by `(directory, part)`, in the order
    /// the dicts first had them.
    entries: InsertionOrdered<(usize, &'b [u8]), Option<Entry>>,
    /// Each directory's `__block__` entry.
    slots: Vec<Option<Entry>>,
}

impl<'b> Dirs<'b> {
    /// `dir[name]`, inserted empty when absent: every caller fills it.
    fn entry(&mut self, dir: usize, name: &'b [u8]) -> &mut Option<Entry> {
        if name == SLOT {
            // Directory ids are indices into `slots`.
            &mut self.slots[dir]
        } else {
            self.entries.get_or_insert_with((dir, name), || None)
        }
    }

    /// Inserts the blocks' labels in order, as Letta does.
    fn build(labels: &[&'b [u8]]) -> Self {
        let mut dirs =
            Dirs { entries: InsertionOrdered::with_capacity(labels.len().saturating_mul(2)), slots: vec![None] };
        // The last block's way down: each directory part and the directory it names. A
        // walked entry is a directory from then on, so a block that starts the same way
        // reuses it without a lookup.
        let mut walk: Vec<(&[u8], usize)> = Vec::new();
        for (i, &label) in labels.iter().enumerate() {
            let label: &'b [u8] = if label.is_empty() { b"block" } else { label };
            let mut parts = path_parts(label);
            let mut name = parts.next().unwrap_or(b"block");
            let mut dir = 0;
            for (depth, next) in parts.enumerate() {
                dir = match walk.get(depth) {
                    Some(&(part, sub)) if part == name => sub,
                    _ => {
                        walk.truncate(depth);
                        let new_dir = dirs.slots.len();
                        let entry = dirs.entry(dir, name);
                        let sub = match *entry {
                            Some(Entry::Dir(sub)) => sub,
                            // Absent: a new directory. A block: it moves into the new directory's slot.
                            held => {
                                *entry = Some(Entry::Dir(new_dir));
                                dirs.slots.push(held);
                                new_dir
                            }
                        };
                        walk.push((name, sub));
                        sub
                    }
                };
                name = next;
            }
            let entry = dirs.entry(dir, name);
            match *entry {
                Some(Entry::Dir(sub)) => dirs.slots[sub] = Some(Entry::Block(i)),
                _ => *entry = Some(Entry::Block(i)),
            }
        }
        dirs
    }
}

/// One line of a directory's listing: directories first, then files, each by name.
/// A directory with a block in its slot is listed twice: as `name/` and `name.md`.
#[derive(Debug, Clone, Copy)]
struct Line<'b> {
    /// The first bytes of `name`, to sort without comparing whole names.
    head: u64,
    name: &'b [u8],
    is_file: bool,
    entry: Entry,
}

/// Every directory's lines in display order: its directories, then its files.
struct Listing<'b> {
    lines: Vec<Line<'b>>,
    /// Directory `d`'s directories are `lines[starts[2d]..starts[2d + 1]]`, its files follow.
    starts: Vec<usize>,
}

/// The block a directory holds in its `__block__` slot, if that is a block.
fn slot_block(slots: &[Option<Entry>], dir: usize) -> Option<usize> {
    match slots.get(dir) {
        Some(Some(Entry::Block(b))) => Some(*b),
        _ => None,
    }
}

impl<'b> Listing<'b> {
    /// The listing, and each directory's `__block__` slot: all that is kept of the dicts.
    fn new(dirs: Dirs<'b>) -> (Self, Vec<Option<Entry>>) {
        let Dirs { entries, slots } = dirs;
        let entries = entries.into_entries();
        let mut lines = Vec::with_capacity(entries.len() + slots.len());
        // In insertion order, so that labels given in order are sorted in one pass.
        for ((dir, name), entry) in entries {
            let Some(entry) = entry else { continue };
            let head = sort_head(name, b"");
            let listed_as_file = match entry {
                Entry::Block(_) => true,
                Entry::Dir(sub) => {
                    lines.push((2 * dir, Line { head, name, is_file: false, entry }));
                    slots.get(sub).is_some_and(Option::is_some)
                }
            };
            if listed_as_file {
                lines.push((2 * dir + 1, Line { head, name, is_file: true, entry }));
            }
        }
        let (lines, starts) =
            bucket_sort(&lines, 2 * slots.len(), |a, b| a.head.cmp(&b.head).then_with(|| a.name.cmp(b.name)));
        (Listing { lines, starts }, slots)
    }

    /// The lines of directory `dir`.
    fn of(&self, dir: usize) -> &[Line<'b>] {
        bucket(&self.lines, &self.starts, 2 * dir, 2 * dir + 2)
    }
}

/// The top-level `skills/` directory's lines, `(name, block)` sorted by name: one per skill.
fn skills<'a>(slots: &[Option<Entry>], listing: &Listing<'a>) -> Vec<(&'a [u8], usize)> {
    let skills_dir = listing.of(0).iter().find_map(|line| match (line.is_file, line.entry) {
        (false, Entry::Dir(sub)) if line.name == SKILLS => Some(sub),
        _ => None,
    });
    let Some(skills_dir) = skills_dir else { return Vec::new() };
    let mut skills = Vec::new();
    for line in listing.of(skills_dir) {
        let block = match (line.is_file, line.entry) {
            (_, Entry::Block(b)) => Some(b),
            // A skill directory: the legacy `SKILL` block, else its own block.
            (false, Entry::Dir(sub)) => {
                let legacy = listing.of(sub).iter().find_map(|l| match (l.is_file, l.entry) {
                    (true, Entry::Block(b)) if l.name == LEGACY_SKILL => Some(b),
                    _ => None,
                });
                legacy.or_else(|| slot_block(slots, sub))
            }
            // The second listing of a directory holding a block: the same dict entry.
            (true, Entry::Dir(_)) => continue,
        };
        if let Some(b) = block {
            skills.push((line.name, b));
        }
    }
    // Two sorted runs (directories, then files): a stable sort merges them.
    skills.sort_by(|a, b| a.0.cmp(b.0));
    skills
}

/// A directory being listed: the rest of its lines, and how it is drawn.
struct Frame<'l, 'b> {
    lines: std::slice::Iter<'l, Line<'b>>,
    prefix: Mark,
    in_system: bool,
}

/// One row of the tree as the walk meets it.
#[derive(Clone, Copy)]
enum Shown<'t> {
    Dir(&'t [u8]),
    /// A file's name and the block whose description follows it (`None` below a `system`
    /// directory, or for a directory's slot that holds no block).
    File(&'t [u8], Option<usize>),
    /// A line of the top-level `skills/` directory: a skill's name and its block.
    Skill(&'t [u8], usize),
}

/// Letta's tree, ready to draw: the top-level `skills/` directory lists `skills`
/// (see `skills`) and is not descended into.
struct Tree<'t> {
    /// The first line of each block's description, for the blocks whose description shows.
    notes: Vec<&'t [u8]>,
    slots: Vec<Option<Entry>>,
    listing: Listing<'t>,
    skills: Vec<(&'t [u8], usize)>,
    /// Every label and every note is ASCII.
    ascii: bool,
}

impl<'t> Tree<'t> {
    /// Every row in drawing order, with the prefix drawn left of it and whether it is
    /// its directory's last.
    fn walk(&self, mut row: impl FnMut(&Prefix, bool, Shown<'t>)) {
        let Tree { slots, listing, skills, .. } = self;
        let mut prefix = Prefix::default();
        let mut stack = vec![Frame { lines: listing.of(0).iter(), prefix: Mark::default(), in_system: false }];
        while let Some(frame) = stack.last_mut() {
            let Some(line) = frame.lines.next() else {
                stack.pop();
                continue;
            };
            let is_last = frame.lines.len() == 0;
            let in_system = frame.in_system;
            prefix.reset(frame.prefix);
            let at_root = stack.len() == 1;
            match (line.is_file, line.entry) {
                (false, Entry::Dir(sub)) => {
                    row(&prefix, is_last, Shown::Dir(line.name));
                    prefix.indent(is_last);
                    if at_root && line.name == SKILLS {
                        for (i, &(name, block)) in skills.iter().enumerate() {
                            row(&prefix, i + 1 == skills.len(), Shown::Skill(name, block));
                        }
                    } else {
                        stack.push(Frame {
                            lines: listing.of(sub).iter(),
                            prefix: prefix.mark(),
                            in_system: in_system || line.name == SYSTEM,
                        });
                    }
                }
                (_, entry) => {
                    let block = match entry {
                        Entry::Block(b) => Some(b),
                        Entry::Dir(sub) => slot_block(slots, sub),
                    };
                    row(&prefix, is_last, Shown::File(line.name, block.filter(|_| !in_system)));
                }
            }
        }
    }

    /// The first line of block `b`'s description; empty when there is none.
    fn note(&self, block: Option<usize>) -> &'t [u8] {
        block.and_then(|b| self.notes.get(b).copied()).unwrap_or_default()
    }

    fn write(&self, sink: &mut impl Sink) {
        let ascii = self.ascii;
        self.walk(|prefix, is_last, shown| {
            let (name, suffix, is_dir, note) = match shown {
                Shown::Dir(name) => (name, "", true, &b""[..]),
                Shown::File(name, block) => (name, ".md", false, self.note(block)),
                Shown::Skill(name, block) => (name, "", false, self.note(Some(block))),
            };
            Row { prefix, is_last, name, suffix, is_dir, note, ascii }.write(sink);
        });
    }
}

/// Writes exactly what Letta writes: nothing when there are no blocks and no client skills.
pub fn render(out: &mut impl Sink, blocks: &[Listed], has_client_skills: bool) -> RenderResult {
    TreeView::new(blocks, has_client_skills).render(out)
}

/// The tree view of the blocks, built once and written by every sink; `None` when Letta
/// writes nothing. Built from the labels alone: Letta reads a description only where it
/// shows one (`described`), and a caller reads those and hands them over (`describe`).
pub struct TreeView<'a>(Option<Tree<'a>>);

impl<'a> TreeView<'a> {
    /// The tree view of blocks whose descriptions are all at hand.
    pub fn new(blocks: &[Listed<'a>], has_client_skills: bool) -> Self {
        let labels: Vec<&[u8]> = blocks.iter().map(|b| b.label).collect();
        let mut view = TreeView::of_labels(&labels, has_client_skills);
        for b in view.described() {
            view.describe(b, blocks[b].description);
        }
        view
    }

    /// Letta's tree of the blocks with these labels, no description read yet.
    pub fn of_labels(labels: &[&'a [u8]], has_client_skills: bool) -> Self {
        if labels.is_empty() && !has_client_skills {
            return TreeView(None);
        }
        let (listing, slots) = Listing::new(Dirs::build(labels));
        let skills = skills(&slots, &listing);
        let ascii = labels.iter().all(|label| label.is_ascii());
        TreeView(Some(Tree { notes: vec![&b""[..]; labels.len()], slots, listing, skills, ascii }))
    }

    /// The blocks whose description Letta reads, in list order: every file shown outside
    /// a `system` directory, and every skill of the top-level `skills/`.
    pub fn described(&self) -> Vec<usize> {
        let Some(tree) = &self.0 else { return Vec::new() };
        let mut described = Vec::new();
        tree.walk(|_, _, shown| {
            if let Shown::File(_, Some(b)) | Shown::Skill(_, b) = shown {
                described.push(b);
            }
        });
        described.sort_unstable();
        described.dedup();
        described
    }

    /// Block `b`'s description (one of `described`).
    pub fn describe(&mut self, b: usize, description: &'a [u8]) {
        if let Some(tree) = &mut self.0 {
            let note = first_line(description);
            tree.ascii &= note.is_ascii();
            if let Some(slot) = tree.notes.get_mut(b) {
                *slot = note;
            }
        }
    }
}

impl Render for TreeView<'_> {
    fn render(&self, out: &mut impl Sink) -> RenderResult {
        if let Some(tree) = &self.0 {
            w!(out, "\n\n<memory_filesystem>\n");
            tree.write(out);
            w!(out, "</memory_filesystem>");
        }
        Ok(())
    }
}

/// What both label trees use (this one and `git_memory`'s external tree): their
/// sort keys, a counting sort by directory, and a fast seeded hash for `(directory, name)`
/// keys, which the skills listing's sets of names use too.
pub(crate) mod support {
    use std::cmp::Ordering;
    use std::collections::hash_map::{Entry as MapEntry, RandomState};
    use std::collections::HashMap;
    use std::hash::{BuildHasher, Hash, Hasher};

    /// A map that hands its entries back in the order they were first inserted, so that
    /// keys inserted in sorted order come out as runs `bucket_sort` finds in one pass.
    pub(crate) struct InsertionOrdered<K, V> {
        /// Where each key is in `entries`.
        index: HashMap<K, usize, FoldState>,
        entries: Vec<(K, V)>,
    }

    impl<K: Copy + Eq + Hash, V> InsertionOrdered<K, V> {
        pub(crate) fn with_capacity(capacity: usize) -> Self {
            InsertionOrdered {
                index: HashMap::with_capacity_and_hasher(capacity, FoldState::new()),
                entries: Vec::with_capacity(capacity),
            }
        }

        /// The value of `key`, first set to `make()` when absent.
        pub(crate) fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
            let at = match self.index.entry(key) {
                MapEntry::Occupied(e) => *e.get(),
                MapEntry::Vacant(e) => {
                    self.entries.push((key, make()));
                    *e.insert(self.entries.len() - 1)
                }
            };
            // Every index was the length of `entries` before a push: it is in bounds.
            &mut self.entries[at].1
        }

        /// The entries in insertion order (the index is freed here).
        pub(crate) fn into_entries(self) -> Vec<(K, V)> {
            self.entries
        }
    }

    /// The first eight bytes of `a` then `b`, zero-padded, as a big-endian number: when
    /// two names' heads differ, they order the names as a byte comparison would.
    pub(crate) fn sort_head(a: &[u8], b: &[u8]) -> u64 {
        let head = head_of(a);
        match a.len() {
            0..8 => head | head_of(b) >> (8 * a.len()),
            _ => head,
        }
    }

    /// The first eight bytes of `s`, zero-padded, as a big-endian number, read in place: a
    /// copy into a zeroed buffer read back at once stalls (its load waits on the stores).
    fn head_of(s: &[u8]) -> u64 {
        let word = |at: usize| u32::from_be_bytes(s[at..at + 4].try_into().expect("four bytes"));
        match s.len() {
            8.. => u64::from_be_bytes(s[..8].try_into().expect("eight bytes")),
            // Two words that may overlap: the first four bytes, and the last four shifted to end where `s` does.
            n @ 4..8 => u64::from(word(0)) << 32 | u64::from(word(n - 4)) << (8 * (8 - n)),
            _ => s.iter().enumerate().fold(0, |head, (k, &b)| head | u64::from(b) << (56 - 8 * k)),
        }
    }

    /// `items` grouped by bucket (a counting sort), each group then sorted with `cmp`, stably
    /// (an adaptive sort: a group already in order costs one pass); bucket `b` of the result
    /// is `starts[b]..starts[b + 1]`. Every bucket must be below `buckets`.
    pub(crate) fn bucket_sort<T: Copy>(
        items: &[(usize, T)],
        buckets: usize,
        cmp: impl Fn(&T, &T) -> Ordering,
    ) -> (Vec<T>, Vec<usize>) {
        let mut starts = vec![0; buckets + 1];
        for (b, _) in items {
            if let Some(count) = starts.get_mut(b + 1) {
                *count += 1;
            }
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        let Some(&(_, fill)) = items.first() else { return (Vec::new(), starts) };
        let mut sorted = vec![fill; items.len()];
        let mut next = starts.clone();
        for &(b, item) in items {
            if let Some(at) = next.get_mut(b) {
                if let Some(slot) = sorted.get_mut(*at) {
                    *slot = item;
                }
                *at += 1;
            }
        }
        for range in starts.windows(2) {
            if let Some(group) = sorted.get_mut(range[0]..range[1]) {
                group.sort_by(&cmp);
            }
        }
        (sorted, starts)
    }

    /// Buckets `first..end` of a `bucket_sort` result.
    pub(crate) fn bucket<'l, T>(sorted: &'l [T], starts: &[usize], first: usize, end: usize) -> &'l [T] {
        match (starts.get(first), starts.get(end)) {
            (Some(&a), Some(&b)) => sorted.get(a..b).unwrap_or_default(),
            _ => &[],
        }
    }

    /// A fast hash for short keys (a folded multiply, as in foldhash), with two seeds
    /// drawn from `RandomState` per tree so that whoever writes the labels cannot plan
    /// collisions.
    #[derive(Clone, Copy)]
    pub(crate) struct FoldState {
        seed: u64,
        multiplier: u64,
    }

    impl FoldState {
        pub(crate) fn new() -> Self {
            let random = RandomState::new();
            FoldState { seed: random.hash_one(1_u8), multiplier: random.hash_one(2_u8) }
        }
    }

    impl BuildHasher for FoldState {
        type Hasher = FoldHasher;

        fn build_hasher(&self) -> FoldHasher {
            FoldHasher { acc: self.seed, multiplier: self.multiplier, ints: 0 }
        }
    }

    /// Integers (a key's directory id, a slice's length) are gathered without a multiply
    /// and go into the secret multiplier of the next word of bytes.
    pub(crate) struct FoldHasher {
        acc: u64,
        multiplier: u64,
        ints: u64,
    }

    #[inline]
    fn folded_multiply(a: u64, b: u64) -> u64 {
        let product = u128::from(a) * u128::from(b);
        (product as u64) ^ ((product >> 64) as u64)
    }

    impl FoldHasher {
        #[inline]
        fn mix(&mut self, word: u64) {
            self.acc = folded_multiply(self.acc ^ word, self.multiplier ^ self.ints);
            self.ints = 0;
        }
    }

    impl Hasher for FoldHasher {
        #[inline]
        fn write(&mut self, bytes: &[u8]) {
            let mut chunks = bytes.chunks_exact(8);
            for chunk in &mut chunks {
                self.mix(read_le(chunk));
            }
            // The length is hashed apart (slices write it first), so the tail may read bytes twice.
            let rest = chunks.remainder();
            let tail = match rest.len() {
                0 => 0,
                n @ 1..=3 => {
                    let at = |i: usize| u64::from(rest.get(i).copied().unwrap_or(0));
                    at(0) | (at(n / 2) << 8) | (at(n - 1) << 16)
                }
                n => {
                    read_le(rest.get(..4).unwrap_or_default()) | (read_le(rest.get(n - 4..).unwrap_or_default()) << 32)
                }
            };
            self.mix(tail);
        }

        #[inline]
        fn write_u8(&mut self, n: u8) {
            self.write_u64(u64::from(n));
        }

        #[inline]
        fn write_u64(&mut self, n: u64) {
            self.ints = self.ints.rotate_left(29) ^ n;
        }

        #[inline]
        fn write_usize(&mut self, n: usize) {
            self.write_u64(n as u64);
        }

        #[inline]
        fn finish(&self) -> u64 {
            folded_multiply(self.acc ^ self.ints, self.multiplier.rotate_left(23) | 1)
        }
    }

    /// Eight or four bytes as a little-endian number; `0` for any other length.
    #[inline]
    fn read_le(bytes: &[u8]) -> u64 {
        match <[u8; 8]>::try_from(bytes) {
            Ok(word) => u64::from_le_bytes(word),
            Err(_) => match <[u8; 4]>::try_from(bytes) {
                Ok(word) => u64::from(u32::from_le_bytes(word)),
                Err(_) => 0,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::out::Out;

    fn block<'a>(label: &'a [u8], description: &'a [u8]) -> Listed<'a> {
        Listed { label, description }
    }

    /// Renders `(label, value, description)` blocks.
    fn tree(spec: &[(&str, &str, &str)], has_client_skills: bool) -> RenderResult<String> {
        let blocks: Vec<Listed> = spec.iter().map(|(l, _, d)| block(l.as_bytes(), d.as_bytes())).collect();
        let mut out = Out::default();
        render(&mut out, &blocks, has_client_skills)?;
        Ok(String::from_utf8(out.buf).expect("valid UTF-8"))
    }

    #[test]
    fn insertion_ordered_keeps_first_insertion_order_and_one_value_a_key() {
        let mut map = support::InsertionOrdered::with_capacity(1);
        for (key, n) in [((1, "b"), 1), ((0, "a"), 2), ((1, "b"), 3), ((1, "a"), 4), ((0, "a"), 5)] {
            map.get_or_insert_with(key, Vec::new).push(n);
        }
        let made = std::cell::Cell::new(0);
        map.get_or_insert_with((1, "a"), || {
            made.set(made.get() + 1);
            Vec::new()
        });
        assert_eq!(made.get(), 0, "a present key makes no value");
        assert_eq!(map.into_entries(), vec![((1, "b"), vec![1, 3]), ((0, "a"), vec![2, 5]), ((1, "a"), vec![4])]);
    }

    #[test]
    fn nothing_without_blocks_or_client_skills() {
        assert_eq!(tree(&[], false), Ok(String::new()));
    }

    #[test]
    fn directories_first_then_files_with_descriptions() {
        // Files outside `system/` show their description's first line; a label-less block is `block.md`.
        assert_eq!(
            tree(
                &[
                    ("system/human", "", "not shown"),
                    ("notes/b", "", "  B notes \n more"),
                    ("notes/a/x", "", ""),
                    ("", "", "unlabelled"),
                    ("todo", "", "\n")
                ],
                false
            ),
            Ok(concat!(
                "\n",
                "\n",
                "<memory_filesystem>\n",
                "├── notes/\n",
                "│   ├── a/\n",
                "│   │   └── x.md\n",
                "│   └── b.md (B notes)\n",
                "├── system/\n",
                "│   └── human.md\n",
                "├── block.md (unlabelled)\n",
                "└── todo.md\n",
                "</memory_filesystem>",
            )
            .into())
        );
    }

    #[test]
    fn client_skills_alone_give_an_empty_tree() {
        assert_eq!(tree(&[], true), Ok(concat!("\n", "\n", "<memory_filesystem>\n", "</memory_filesystem>",).into()));
    }

    #[test]
    fn leaf_and_directory_in_either_order() {
        // The directory is listed with the directories, the file with the files.
        assert_eq!(
            tree(&[("a", "", "the a file"), ("a/b", "", "b"), ("c", "", "")], false),
            Ok(concat!(
                "\n",
                "\n",
                "<memory_filesystem>\n",
                "├── a/\n",
                "│   └── b.md (b)\n",
                "├── a.md (the a file)\n",
                "└── c.md\n",
                "</memory_filesystem>",
            )
            .into())
        );
        assert_eq!(
            tree(&[("a/b", "", "b"), ("a", "", "the a file"), ("c", "", "")], false),
            tree(&[("a", "", "the a file"), ("a/b", "", "b"), ("c", "", "")], false)
        );
    }

    #[test]
    fn duplicate_labels_last_wins() {
        assert_eq!(
            tree(
                &[("n/x", "", "first"), ("n//x/", "", "second"), ("m", "", "m1"), ("m/y", "", ""), ("m", "", "m2")],
                false
            ),
            Ok(concat!(
                "\n",
                "\n",
                "<memory_filesystem>\n",
                "├── m/\n",
                "│   └── y.md\n",
                "├── n/\n",
                "│   └── x.md (second)\n",
                "└── m.md (m2)\n",
                "</memory_filesystem>",
            )
            .into())
        );
    }

    #[test]
    fn names_sorted_by_code_point() {
        assert_eq!(
            tree(
                &[("é", "", ""), ("a-b", "", ""), ("a/b", "", ""), ("B", "", ""), ("_", "", ""), ("B/x", "", "")],
                false
            ),
            Ok(concat!(
                "\n",
                "\n",
                "<memory_filesystem>\n",
                "├── B/\n",
                "│   └── x.md\n",
                "├── a/\n",
                "│   └── b.md\n",
                "├── B.md\n",
                "├── _.md\n",
                "├── a-b.md\n",
                "└── é.md\n",
                "</memory_filesystem>",
            )
            .into())
        );
    }

    #[test]
    fn no_descriptions_below_any_system_directory() {
        // Only inside a directory named `system`; the top-level `system.md` file shows one.
        assert_eq!(
            tree(
                &[
                    ("system", "", "top"),
                    ("system/a", "", "hidden"),
                    ("x/system/y", "", "hidden too"),
                    ("x/z", "", "shown")
                ],
                false
            ),
            Ok(concat!(
                "\n",
                "\n",
                "<memory_filesystem>\n",
                "├── system/\n",
                "│   └── a.md\n",
                "├── x/\n",
                "│   ├── system/\n",
                "│   │   └── y.md\n",
                "│   └── z.md (shown)\n",
                "└── system.md (top)\n",
                "</memory_filesystem>",
            )
            .into())
        );
    }

    #[test]
    fn descriptions_read_are_those_shown() {
        // An overwritten label, files below `system` at any depth, a skill's other files and
        // what sits below a slot holding a directory show no description: none is read.
        let labels: Vec<&[u8]> = [
            "notes/b",
            "system/human",
            "notes/b",
            "skills/x",
            "skills/y/SKILL",
            "skills/y/other",
            "a",
            "a/b",
            "deep/system/z",
            "",
            "skills",
            "q/__block__/r",
        ]
        .iter()
        .map(|l| l.as_bytes())
        .collect();
        assert_eq!(TreeView::of_labels(&labels, false).described(), [2, 3, 4, 6, 7, 9, 10]);
        assert!(TreeView::of_labels(&[], false).described().is_empty());
    }

    #[test]
    fn skills_one_line_each_current_and_legacy() {
        // `skills/<name>` and `skills/<name>/SKILL` are skills; a directory with neither is left out.
        assert_eq!(
            tree(
                &[
                    ("skills/web", "", "Search the web.\nMore."),
                    ("skills/pdf/SKILL", "", " Read PDFs "),
                    ("skills/pdf/helper", "", "h"),
                    ("skills/empty/other", "", "x"),
                    ("skills/both", "", "own"),
                    ("skills/both/SKILL", "", "legacy wins"),
                    ("skills/plain", "", ""),
                    ("zeta", "", "")
                ],
                false
            ),
            Ok(concat!(
                "\n",
                "\n",
                "<memory_filesystem>\n",
                "├── skills/\n",
                "│   ├── both (legacy wins)\n",
                "│   ├── pdf (Read PDFs)\n",
                "│   ├── plain\n",
                "│   └── web (Search the web.)\n",
                "└── zeta.md\n",
                "</memory_filesystem>",
            )
            .into())
        );
    }

    #[test]
    fn skills_block_and_directory() {
        // A `skills` block beside the `skills/` directory is a file line; nested `skills` directories are ordinary.
        assert_eq!(
            tree(&[("skills", "", "the skills file"), ("skills/a", "", "A"), ("x/skills/b", "", "B")], false),
            Ok(concat!(
                "\n",
                "\n",
                "<memory_filesystem>\n",
                "├── skills/\n",
                "│   └── a (A)\n",
                "├── x/\n",
                "│   └── skills/\n",
                "│       └── b.md (B)\n",
                "└── skills.md (the skills file)\n",
                "</memory_filesystem>",
            )
            .into())
        );
    }

    #[test]
    fn block_part_is_the_directory_s_own_block() {
        // `a/__block__` fills `a`'s file slot; a top-level `__block__` is never drawn.
        assert_eq!(
            tree(
                &[
                    ("a/__block__", "", "slot"),
                    ("a/b", "", ""),
                    ("__block__", "", "hidden"),
                    ("c/__block__", "", "c alone")
                ],
                false
            ),
            Ok(concat!(
                "\n",
                "\n",
                "<memory_filesystem>\n",
                "├── a/\n",
                "│   └── b.md\n",
                "├── c/\n",
                "├── a.md (slot)\n",
                "└── c.md (c alone)\n",
                "</memory_filesystem>",
            )
            .into())
        );
    }

    #[test]
    fn block_part_holding_a_directory() {
        // `a/__block__/x` puts a directory in `a`'s slot: `a.md` is drawn without description and `x` never.
        assert_eq!(
            tree(&[("a/__block__/x", "", "x"), ("b", "", "b1"), ("b/__block__/y", "", "")], false),
            Ok(concat!(
                "\n",
                "\n",
                "<memory_filesystem>\n",
                "├── a/\n",
                "├── b/\n",
                "├── a.md\n",
                "└── b.md\n",
                "</memory_filesystem>",
            )
            .into())
        );
    }

    #[test]
    fn block_part_order_matters() {
        // A later `a` replaces the directory in the slot, so `a.md` has a description again.
        assert_eq!(
            tree(&[("a/__block__/x", "", "x"), ("a", "", "a wins")], false),
            Ok(concat!(
            "\n",
            "\n",
            "<memory_filesystem>\n",
            "├── a/\n",
            "└── a.md (a wins)\n",
            "</memory_filesystem>",
        ).into())
        );
    }

    #[test]
    fn block_part_order_matters_the_other_way() {
        assert_eq!(
            tree(&[("a", "", "a wins"), ("a/__block__/x", "", "x")], false),
            Ok(concat!("\n", "\n", "<memory_filesystem>\n", "├── a/\n", "└── a.md\n", "</memory_filesystem>").into())
        );
    }

    #[test]
    fn lone_surrogates_and_nul_sort_by_code_point() {
        let surrogate = b"\xed\xa0\x80";
        let astral = "\u{10000}".as_bytes();
        let bmp_last = "\u{ffff}".as_bytes();
        let dir = [&surrogate[..], b"/x"].concat();
        let desc = [&surrogate[..], b" d"].concat();
        let blocks = [block(astral, b""), block(&dir, &desc), block(bmp_last, b""), block(b"\0", b"")];
        let mut out = Out::default();
        render(&mut out, &blocks, false).expect("renders");
        let expected = [
            "\n\n<memory_filesystem>\n├── ".as_bytes(),
            surrogate,
            "/\n│   └── x.md (".as_bytes(),
            surrogate,
            " d)\n├── \0.md\n├── \u{ffff}.md\n└── \u{10000}.md\n</memory_filesystem>".as_bytes(),
        ]
        .concat();
        assert_eq!(out.buf, expected);
    }

    #[test]
    fn ten_thousand_parts_without_recursion() {
        const DEPTH: usize = 10_000;
        let label = format!("{}z", "a/".repeat(DEPTH));
        let out = tree(&[(&label, "", "deep")], false).expect("renders");

        let mut expected = String::from("\n\n<memory_filesystem>\n");
        for depth in 0..DEPTH {
            expected += &format!("{}└── a/\n", "    ".repeat(depth));
        }
        expected += &format!("{}└── z.md (deep)\n</memory_filesystem>", "    ".repeat(DEPTH));
        assert!(out == expected, "deep output differs");
    }

    #[test]
    fn too_large_to_allocate_is_counted_without_writing() {
        // Half a million levels indent about 10^12 code points: counted in linear time, so
        // that the binding's allocation of the str fails (MemoryError) before anything is written.
        let label = format!("{}z", "a/".repeat(500_000));
        let mut count = crate::out::Count::default();
        render(&mut count, &[block(label.as_bytes(), b"")], false).unwrap();
        assert!(count.chars > 100_000_000_000, "{}", count.chars);
    }

    #[test]
    fn many_blocks() {
        let labels: Vec<String> = (0..100_000).map(|i| format!("notes/d{}/b{i}", i % 100)).collect();
        let spec: Vec<_> = labels.iter().map(|l| (l.as_str(), "", "d")).collect();
        let out = tree(&spec, false).expect("renders");
        assert_eq!(out.matches(".md (d)\n").count(), 100_000);
        assert!(out.contains("└── notes/\n    ├── d0/\n    │   ├── b0.md (d)\n    │   ├── b100.md (d)\n"));
    }

    #[test]
    fn sort_head_orders_like_bytes() {
        let names: [&[u8]; 7] = [b"", b"\0", b"a", b"a\0", b"ab", b"abcdefgh", b"abcdefgh\0"];
        for a in names {
            for b in names {
                let (ha, hb) = (sort_head(a, b""), sort_head(b, b""));
                assert!(ha == hb || ha.cmp(&hb) == a.cmp(b), "{a:?} {b:?}");
            }
        }
        assert_eq!(sort_head(b"ab", b".md"), sort_head(b"ab.md", b""));
    }

    #[test]
    fn sort_head_is_the_padded_bytes() {
        let bytes: Vec<u8> = (0..20u8).map(|k| k.wrapping_mul(97) ^ 0xA5).collect();
        for a in 0..=bytes.len() {
            for b in 0..=10 {
                let joined: Vec<u8> = bytes[..a].iter().chain(&bytes[3..3 + b]).copied().chain([0; 8]).collect();
                let padded = u64::from_be_bytes(joined[..8].try_into().unwrap());
                assert_eq!(sort_head(&bytes[..a], &bytes[3..3 + b]), padded, "{a} {b}");
            }
        }
    }
}
