//! Git-backed memory (Letta's `Memory._render_memory_blocks_git`): `system/persona`
//! in `<self>`, the other `system/` blocks as nested tags in `<memory>`, and every
//! label outside `system/` and `skills/` as a file tree in `<external_projection>`.
//!
//! The nested tags are the preorder of the label paths with children sorted by
//! name, which is the lexicographic order of the paths compared part by part: we
//! sort the paths once and open and close tags between neighbours, with no tree
//! and no recursion. The external tree follows Letta's `setdefault` dicts exactly
//! (including the labels that crash them), in an arena walked with an explicit stack.

use std::cmp::Ordering;

use crate::error::{RenderError, RenderResult};
use crate::file_tree::{Prefix, Row};
use crate::memory::section;
use crate::model::{Block, Chars};
use crate::out::Sink;
use crate::text::{path_parts, strip};
use crate::tree_view::support::{bucket, bucket_sort, sort_head, InsertionOrdered};
use crate::w;

const SYSTEM_PREFIX: &[u8] = b"system/";
const SKILLS_PREFIX: &[u8] = b"skills/";
const PERSONA: &[u8] = b"system/persona";

/// The dict keys Letta stores a block's value, description and label under, beside
/// its children. A label part spelled like one of them makes Letta render the
/// `repr()` of a dict; such inputs go to the reference renderer.
const RESERVED: [&[u8]; 3] = [b"__value__", b"__description__", b"__label__"];

/// The line git memory starts with (after its "\n\n"), before `<self>` and `<memory>`.
pub const REMINDER: &str = "\n\nReminder: <projection> contains the local path of the memory file projection.";

/// True when Letta would render a dict's `repr()` for these blocks: some `system/`
/// label has a part equal to one of Letta's reserved keys. `render` is only exact
/// when this is false.
pub fn needs_reference_fallback(blocks: &[Block]) -> bool {
    // Every reserved key holds `_`: a label without one after `system/` has none of them.
    blocks
        .iter()
        .filter_map(|b| b.label.strip_prefix(SYSTEM_PREFIX))
        // A fold runs a vector at a time; `contains` searches byte by byte on a label's length.
        .filter(|rest| rest.iter().fold(false, |found, &b| found | (b == b'_')))
        .any(|rest| path_parts(rest).any(|part| RESERVED.contains(&part)))
}

/// What Letta's git memory reads of a block besides its label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// Nothing: a block outside `system/`, a `system/` label with no part, a later persona.
    Label,
    /// The value alone: the first `system/persona`, shown in `<self>`.
    PersonaValue,
    /// The description, then the value: any other `system/` block with a part, a nested tag.
    DescriptionAndValue,
}

impl Reads {
    /// What is read of the block labelled `label` (`""` for `None`), once `persona_read`
    /// tells whether a persona's value was read already.
    pub fn of(label: &[u8], persona_read: bool) -> Reads {
        if label == PERSONA {
            return if persona_read { Reads::Label } else { Reads::PersonaValue };
        }
        match label.strip_prefix(SYSTEM_PREFIX) {
            Some(rest) if path_parts(rest).next().is_some() => Reads::DescriptionAndValue,
            _ => Reads::Label,
        }
    }
}

/// Git memory prepared once (labels sorted, the external tree built) and written by
/// every sink: what Letta writes, exact unless `needs_reference_fallback(blocks)`.
pub struct GitMemory<'l> {
    /// The value of the first `system/persona` block, even when there are several.
    persona: Option<Chars<'l>>,
    /// `None` when `<memory>` is not written.
    nested: Option<NestedTags<'l>>,
    external: Option<ExternalTree<'l>>,
}

/// Sorts the labels and builds the external tree; `None` when Letta writes nothing.
pub fn prepare<'l>(blocks: &'l [Block<'_>]) -> RenderResult<Option<GitMemory<'l>>> {
    let is_system = |b: &&Block| b.label.starts_with(SYSTEM_PREFIX);
    if !blocks.iter().any(|b| is_system(&b)) {
        return Ok(None);
    }
    let persona = blocks.iter().find(|b| *b.label == *PERSONA).map(|b| b.value.rstrip_newlines());
    let mut memory = blocks.iter().filter(is_system).filter(|b| *b.label != *PERSONA).peekable();
    let external: Vec<&Block> = blocks
        .iter()
        .filter(|b| !b.label.is_empty() && !b.label.starts_with(SYSTEM_PREFIX) && !b.label.starts_with(SKILLS_PREFIX))
        .collect();
    if memory.peek().is_none() && external.is_empty() {
        return Ok(Some(GitMemory { persona, nested: None, external: None }));
    }
    let nested = Some(nested_tags(memory));
    let external = if external.is_empty() { None } else { Some(external_tree(external)?) };
    Ok(Some(GitMemory { persona, nested, external }))
}

impl GitMemory<'_> {
    pub fn write(&self, out: &mut impl Sink) {
        w!(out, REMINDER);
        if let Some(persona) = self.persona {
            let start = out.len() + 2;
            w!(out, "\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\n", persona, "\n</self>");
            out.section(section::SELF, start);
        }
        let Some(nested) = &self.nested else { return };
        let start = out.len() + 2;
        w!(out, "\n\n<memory>\n");
        nested.write(out);
        if let Some(external) = &self.external {
            w!(out, "<external_projection>\n${MEMORY_DIR}/\n");
            external.write(out);
            w!(out, "</external_projection>\n");
        }
        w!(out, "</memory>");
        out.section(section::MEMORY, start);
    }
}

/// Prepares and writes in one go (for one sink).
pub fn render(out: &mut impl Sink, blocks: &[Block]) -> RenderResult {
    if let Some(git) = prepare(blocks)? {
        git.write(out);
    }
    Ok(())
}

/// A block's path below `system/`: `parts[start..end]`, its sort key `keys[key_start..key_end]`.
struct Path<'l, 'b> {
    /// The first bytes of the key, to sort without comparing whole keys.
    head: u64,
    start: usize,
    end: usize,
    key_start: usize,
    key_end: usize,
    /// The parts fill the path with one `/` between each (no part is empty).
    joined: bool,
    block: &'l Block<'b>,
}

/// Appends the sort key of a path: each part escaped and ended by `0x00`, so that keys
/// compare as bytes exactly as the paths compare part by part (one memcmp, not one per
/// part). In a part, `0x00` becomes `0x01 0x01` and `0x01` becomes `0x01 0x02`; every other
/// byte is at least `0x02`, so an ended part sorts before any longer one. `joined`: the
/// parts are `path` with one `/` between each.
fn push_path_key(keys: &mut Vec<u8>, parts: &[&[u8]], path: &[u8], joined: bool) {
    // A fold, not `any`, so that the test runs a vector at a time.
    if joined && !path.iter().fold(false, |low, &b| low | (b < 2)) {
        // Each part as it is and a `0x00` in place of each `/`: one pass.
        keys.extend(path.iter().map(|&b| if b == b'/' { 0 } else { b }));
        keys.push(0);
        return;
    }
    for part in parts {
        if part.iter().all(|&b| b > 1) {
            keys.extend_from_slice(part);
        } else {
            for &b in *part {
                if b > 1 {
                    keys.push(b);
                } else {
                    keys.extend_from_slice(&[1, b + 1]);
                }
            }
        }
        keys.push(0);
    }
}

/// The `system/` blocks other than the persona, as nested tags. A path that is
/// both a block and a prefix of other paths is a tag holding the block's content
/// and then the nested tags; of two blocks with the same path, the later one wins.
fn nested_tags<'l, 'b: 'l>(blocks: impl Iterator<Item = &'l Block<'b>>) -> NestedTags<'l> {
    let mut parts: Vec<&[u8]> = Vec::new();
    let mut keys: Vec<u8> = Vec::new();
    let mut paths: Vec<Path> = Vec::new();
    let mut ascii = true;
    for block in blocks {
        ascii &= block.label.is_ascii();
        let rest = block.label.strip_prefix(SYSTEM_PREFIX).unwrap_or_default();
        let start = parts.len();
        parts.extend(path_parts(rest));
        let Some(path) = parts.get(start..).filter(|p| !p.is_empty()) else { continue };
        let joined = path.iter().map(|part| part.len() + 1).sum::<usize>() == rest.len() + 1;
        let key_start = keys.len();
        push_path_key(&mut keys, path, rest, joined);
        let key = keys.get(key_start..).unwrap_or_default();
        let head = sort_head(key, b"");
        paths.push(Path { head, start, end: parts.len(), key_start, key_end: keys.len(), joined, block });
    }
    let path_of = |p: &Path| parts.get(p.start..p.end).unwrap_or_default();
    let key_of = |p: &Path| keys.get(p.key_start..p.key_end).unwrap_or_default();
    // Stable, so equal paths keep their input order (the last one written stays last), and
    // adaptive: labels that come in order cost one pass.
    paths.sort_by(|a, b| a.head.cmp(&b.head).then_with(|| key_of(a).cmp(key_of(b))));
    let mut shown = Vec::with_capacity(paths.len());
    let mut open: &[&[u8]] = &[];
    for (i, p) in paths.iter().enumerate() {
        let path = path_of(p);
        if paths.get(i + 1).is_some_and(|next| key_of(next) == key_of(p)) {
            continue;
        }
        let common = open.iter().zip(path).take_while(|(a, b)| a == b).count();
        let (description, value) = (strip(&p.block.description), p.block.value.rstrip_newlines());
        let joined = p.joined.then(|| p.block.label.get(SYSTEM_PREFIX.len()..).unwrap_or_default());
        let description_ascii = p.block.description.is_ascii_str();
        shown.push(Shown { start: p.start, end: p.end, common, joined, description, description_ascii, value });
        open = path;
    }
    NestedTags { parts, shown, ascii }
}

/// One line of the nested tags, indented two spaces per level of `depth`.
struct TagLine<'p> {
    depth: usize,
    tag: Tag<'p>,
    /// Its names are ASCII: written with nothing to measure or decode.
    ascii: bool,
}

/// What a line of the nested tags holds.
enum Tag<'p> {
    Open(&'p [u8]),
    Close(&'p [u8]),
    /// The block's file: its path joined by `/`, or that text as it stands in the label.
    Projection(&'p [&'p [u8]], Option<&'p [u8]>),
    /// The text, and whether it is ASCII (written with nothing to decode).
    Description(&'p [u8], bool),
    Value(Chars<'p>),
}

impl TagLine<'_> {
    fn write(&self, out: &mut impl Sink) {
        out.spaces(self.depth.saturating_mul(2));
        let name = |out: &mut _, name: &[u8]| Sink::push_text(out, name, self.ascii);
        match self.tag {
            Tag::Open(n) => {
                w!(out, "<");
                name(out, n);
                w!(out, ">\n");
            }
            Tag::Close(n) => {
                w!(out, "</");
                name(out, n);
                w!(out, ">\n");
            }
            Tag::Projection(path, joined) => {
                w!(out, "  <projection>$MEMORY_DIR/system/");
                match joined {
                    Some(joined) => name(out, joined),
                    None => {
                        for (j, n) in path.iter().enumerate() {
                            if j > 0 {
                                w!(out, "/");
                            }
                            name(out, n);
                        }
                    }
                }
                w!(out, ".md</projection>\n");
            }
            Tag::Description(text, ascii) => {
                w!(out, "  <description>");
                out.push_text(text, ascii);
                w!(out, "</description>\n");
            }
            Tag::Value(text) => w!(out, "  ", text, "\n"),
        }
    }
}

/// A path to draw (the last of a run of equal paths), `parts[start..end]`, with what its block shows.
struct Shown<'p> {
    start: usize,
    end: usize,
    /// How many parts it shares with the path drawn before it.
    common: usize,
    /// The path joined by `/` as the label holds it, when no part of it is empty.
    joined: Option<&'p [u8]>,
    description: &'p [u8],
    description_ascii: bool,
    value: Chars<'p>,
}

/// The paths to draw, in order, and the label parts they index.
struct NestedTags<'p> {
    parts: Vec<&'p [u8]>,
    shown: Vec<Shown<'p>>,
    /// Every part is ASCII.
    ascii: bool,
}

impl NestedTags<'_> {
    fn write(&self, sink: &mut impl Sink) {
        let ascii = self.ascii;
        let mut open: &[&[u8]] = &[];
        for &Shown { start, end, common, joined, description, description_ascii, value } in &self.shown {
            let path = self.parts.get(start..end).unwrap_or_default();
            self.close(sink, open, common);
            for (depth, name) in path.iter().enumerate().skip(common) {
                TagLine { depth, tag: Tag::Open(name), ascii }.write(sink);
            }
            let depth = path.len().saturating_sub(1);
            TagLine { depth, tag: Tag::Projection(path, joined), ascii }.write(sink);
            if !description.is_empty() {
                TagLine { depth, tag: Tag::Description(description, description_ascii), ascii }.write(sink);
            }
            if !value.is_empty() {
                TagLine { depth, tag: Tag::Value(value), ascii }.write(sink);
            }
            open = path;
        }
        self.close(sink, open, 0);
    }

    /// Closes the tags `open[keep..]`, innermost first.
    fn close(&self, sink: &mut impl Sink, open: &[&[u8]], keep: usize) {
        for (depth, name) in open.iter().enumerate().skip(keep).rev() {
            TagLine { depth, tag: Tag::Close(name), ascii: self.ascii }.write(sink);
        }
    }
}

/// A name in the external tree, split so that a directory named `x.md` and the file
/// of label `x` are the same dict key without building the string `x.md`: the name is
/// `stem`, then `.md` when `md`. A name ending in `.md` always has `md` set, so two
/// names are equal exactly when their bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Name<'b> {
    stem: &'b [u8],
    md: bool,
}

impl<'b> Name<'b> {
    const MD: &'static str = ".md";

    fn dir(part: &'b [u8]) -> Self {
        match part.strip_suffix(Self::MD.as_bytes()) {
            Some(stem) => Name { stem, md: true },
            None => Name { stem: part, md: false },
        }
    }

    fn file(part: &'b [u8]) -> Self {
        Name { stem: part, md: true }
    }

    fn suffix(&self) -> &'static str {
        if self.md {
            Self::MD
        } else {
            ""
        }
    }

    /// Byte order of the full names.
    fn cmp_bytes(&self, other: &Self) -> Ordering {
        let n = self.stem.len().min(other.stem.len());
        let (a, rest_a) = self.stem.split_at(n);
        let (b, rest_b) = other.stem.split_at(n);
        a.cmp(b).then_with(|| {
            // One of the rests is empty, so this compares at most four bytes.
            let a = rest_a.iter().chain(self.suffix().as_bytes());
            let b = rest_b.iter().chain(other.suffix().as_bytes());
            a.cmp(b)
        })
    }
}

/// A value in the external tree: a file (`None` in Letta) or a directory by arena id.
#[derive(Debug, Clone, Copy)]
enum Node {
    File,
    Dir(usize),
}

/// One line of a directory's listing.
#[derive(Clone, Copy)]
struct Line<'b> {
    /// The first bytes of the name, to sort without comparing whole names.
    head: u64,
    name: Name<'b>,
    node: Node,
}

/// The file tree of the labels outside `system/` and `skills/`, built in raw-label
/// order from the stripped labels. A file `x.md` replaces a directory of that name;
/// a later label through that name fails as Letta's does.
fn external_tree<'l>(mut blocks: Vec<&'l Block<'_>>) -> RenderResult<ExternalTree<'l>> {
    blocks.sort_by(|a, b| a.label.cmp(&b.label));
    let ascii = blocks.iter().all(|block| block.label.is_ascii());

    // In insertion order, so that the sorted labels give each directory's lines already sorted.
    let mut entries: InsertionOrdered<(usize, Name), Node> = InsertionOrdered::with_capacity(blocks.len());
    let mut dirs = 1;
    // The last label's way down: each part and the directory it names. Only its own file
    // was set since, which is none of them, so a label that starts the same way reuses them.
    let mut walk: Vec<(&[u8], usize)> = Vec::new();
    for block in &blocks {
        let mut parts = path_parts(strip(&block.label));
        let Some(mut name) = parts.next() else { continue };
        // `None` once a part named a file: Letta's `setdefault` returned that file's `None`.
        let mut dir = Some(0);
        let mut depth = 0;
        for next in parts {
            let Some(at) = dir else {
                return Err(RenderError::Attribute("'NoneType' object has no attribute 'setdefault'".into()));
            };
            dir = match walk.get(depth) {
                Some(&(part, sub)) if part == name => Some(sub),
                _ => {
                    walk.truncate(depth);
                    let node = *entries.get_or_insert_with((at, Name::dir(name)), || {
                        dirs += 1;
                        Node::Dir(dirs - 1)
                    });
                    match node {
                        Node::Dir(sub) => {
                            walk.push((name, sub));
                            Some(sub)
                        }
                        Node::File => None,
                    }
                }
            };
            (depth, name) = (depth + 1, next);
        }
        // A later label's file may replace a directory walked before this one.
        walk.truncate(depth);
        let Some(at) = dir else {
            return Err(RenderError::Type("'NoneType' object does not support item assignment".into()));
        };
        *entries.get_or_insert_with((at, Name::file(name)), || Node::File) = Node::File;
    }

    // Each directory's directories, then its files.
    let lines: Vec<(usize, Line)> = entries
        .into_entries()
        .into_iter()
        .map(|((dir, name), node)| {
            let bucket = 2 * dir + usize::from(matches!(node, Node::File));
            (bucket, Line { head: sort_head(name.stem, name.suffix().as_bytes()), name, node })
        })
        .collect();
    let (lines, starts) =
        bucket_sort(&lines, 2 * dirs, |a, b| a.head.cmp(&b.head).then_with(|| a.name.cmp_bytes(&b.name)));
    Ok(ExternalTree { lines, starts, ascii })
}

/// Every directory's lines, as `bucket_sort` gave them.
struct ExternalTree<'b> {
    lines: Vec<Line<'b>>,
    starts: Vec<usize>,
    /// Every name is ASCII.
    ascii: bool,
}

impl ExternalTree<'_> {
    fn write(&self, sink: &mut impl Sink) {
        let lines_of = |dir: usize| bucket(&self.lines, &self.starts, 2 * dir, 2 * dir + 2).iter();
        let ascii = self.ascii;
        let mut prefix = Prefix::default();
        // Each directory being listed: the rest of its lines, and the prefix its lines use.
        let mut stack = vec![(lines_of(0), prefix.mark())];
        while let Some((rest, mark)) = stack.last_mut() {
            let Some(line) = rest.next() else {
                stack.pop();
                continue;
            };
            let is_last = rest.len() == 0;
            prefix.reset(*mark);
            let (name, suffix) = (line.name.stem, line.name.suffix());
            match line.node {
                Node::Dir(sub) => {
                    Row { prefix: &prefix, is_last, name, suffix, is_dir: true, note: b"", ascii }.write(sink);
                    prefix.indent(is_last);
                    stack.push((lines_of(sub), prefix.mark()));
                }
                Node::File => {
                    Row { prefix: &prefix, is_last, name, suffix, is_dir: false, note: b"", ascii }.write(sink)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Int;
    use crate::model::Text;
    use crate::out::Out;

    /// What every git-memory render starts with.
    macro_rules! reminder {
        () => {
            "\n\nReminder: <projection> contains the local path of the memory file projection.\n\n"
        };
    }

    /// The lone surrogate U+D800 as surrogatepass encodes it.
    const SURROGATE: &[u8] = b"\xed\xa0\x80";

    fn block<'a>(label: &'a [u8], value: &'a [u8], description: &'a [u8]) -> Block<'a> {
        Block {
            label: Text::from(label),
            value: Chars::Utf8(value),
            description: Text::from(description),
            limit: Int::Small(100),
            read_only: false,
        }
    }

    fn blocks<'a>(spec: &[(&'a str, &'a str, &'a str)]) -> Vec<Block<'a>> {
        spec.iter().map(|(l, v, d)| block(l.as_bytes(), v.as_bytes(), d.as_bytes())).collect()
    }

    /// Renders `(label, value, description)` blocks.
    fn git(spec: &[(&str, &str, &str)]) -> Result<String, RenderError> {
        let mut out = Out::default();
        render(&mut out, &blocks(spec))?;
        Ok(String::from_utf8(out.buf).expect("valid UTF-8"))
    }

    /// `s` with every `~` replaced by U+D800.
    fn with_surrogates(s: &str) -> Vec<u8> {
        s.split('~').map(str::as_bytes).collect::<Vec<_>>().join(SURROGATE)
    }

    #[test]
    fn self_memory_and_external_sections() {
        // The persona's value loses its trailing newlines; descriptions are stripped.
        assert_eq!(
            git(&[
                ("system/persona", "I am Sam.\n\n", "ignored"),
                ("system/human", "Name: Ann\nAge: 30\n", "  About the user.\n"),
                ("notes/todo", "buy milk", "x")
            ]),
            Ok(concat!(
                reminder!(),
                "<self>\n",
                "<projection>$MEMORY_DIR/system/persona.md</projection>\n",
                "I am Sam.\n",
                "</self>\n",
                "\n",
                "<memory>\n",
                "<human>\n",
                "  <projection>$MEMORY_DIR/system/human.md</projection>\n",
                "  <description>About the user.</description>\n",
                "  Name: Ann\n",
                "Age: 30\n",
                "</human>\n",
                "<external_projection>\n",
                "${MEMORY_DIR}/\n",
                "└── notes/\n",
                "    └── todo.md\n",
                "</external_projection>\n",
                "</memory>",
            )
            .into())
        );
    }

    #[test]
    fn reads_what_letta_reads_of_each_block() {
        let cases: [(&[u8], bool, Reads); 9] = [
            (b"system/persona", false, Reads::PersonaValue),
            (b"system/persona", true, Reads::Label),
            (b"system/human", true, Reads::DescriptionAndValue),
            (b"system//a/", false, Reads::DescriptionAndValue),
            (b"system/", false, Reads::Label),
            (b"system///", false, Reads::Label),
            (b"system", false, Reads::Label),
            (b"notes/system/a", false, Reads::Label),
            (b"skills/x", false, Reads::Label),
        ];
        for (label, persona_read, reads) in cases {
            assert_eq!(Reads::of(label, persona_read), reads, "{}", String::from_utf8_lossy(label));
        }
    }

    #[test]
    fn labels_and_descriptions_held_as_python_holds_them_render_the_same() {
        // ASCII descriptions are written as they are; the others are decoded.
        let spec = [
            ("system/persona", "p", ""),
            ("system/a/b", "v", "  plain \n"),
            ("system/a", "v", "\u{e9}t\u{e9}"),
            ("system/\u{2192}/c", "", " \u{1F600} "),
            ("notes/x", "", "unread"),
        ];
        let finals: Vec<(crate::out::Final, crate::out::Final)> = spec
            .iter()
            .map(|(l, _, d)| {
                (crate::out::Final::of(l.as_bytes()).unwrap(), crate::out::Final::of(d.as_bytes()).unwrap())
            })
            .collect();
        let held: Vec<Block> = spec
            .iter()
            .zip(&finals)
            .map(|((l, v, d), (label, description))| Block {
                label: Text::with_native(l.as_bytes(), label.native()),
                description: Text::with_native(d.as_bytes(), description.native()),
                ..block(l.as_bytes(), v.as_bytes(), d.as_bytes())
            })
            .collect();
        struct Git<'a>(Vec<Block<'a>>);
        impl crate::out::Render for Git<'_> {
            fn render(&self, out: &mut impl Sink) -> RenderResult {
                render(out, &self.0)
            }
        }
        let expected = git(&spec).unwrap();
        assert!(
            expected.contains("<description>plain</description>") && expected.contains("<description>\u{e9}t\u{e9}")
        );
        assert_eq!(String::from_utf8(Out::of(&Git(held.clone())).unwrap().buf).unwrap(), expected);
        assert_eq!(crate::out::Final::of(&Git(held)).unwrap().to_utf8(), expected.as_bytes());
    }

    #[test]
    fn nothing_without_a_system_block() {
        assert_eq!(
            git(&[("notes/a", "v", ""), ("skills/s", "v", ""), ("", "v", ""), ("system", "v", "")]),
            Ok("".into())
        );
    }

    #[test]
    fn persona_alone_has_no_memory_section() {
        assert_eq!(
            git(&[("system/persona", "p", ""), ("skills/s", "v", "")]),
            Ok(concat!(
                reminder!(),
                "<self>\n",
                "<projection>$MEMORY_DIR/system/persona.md</projection>\n",
                "p\n",
                "</self>",
            )
            .into())
        );
    }

    #[test]
    fn first_persona_wins_and_both_leave_the_tree() {
        assert_eq!(
            git(&[
                ("system/persona", "first", ""),
                ("system/persona", "second", ""),
                ("system//persona", "nested", "")
            ]),
            Ok(concat!(
                reminder!(),
                "<self>\n",
                "<projection>$MEMORY_DIR/system/persona.md</projection>\n",
                "first\n",
                "</self>\n",
                "\n",
                "<memory>\n",
                "<persona>\n",
                "  <projection>$MEMORY_DIR/system/persona.md</projection>\n",
                "  nested\n",
                "</persona>\n",
                "</memory>",
            )
            .into())
        );
    }

    #[test]
    fn leaf_and_directory_in_either_order() {
        // A block's content comes before the tags nested in it.
        assert_eq!(
            git(&[("system/a", "outer", "d"), ("system/a/b", "inner", "")]),
            Ok(concat!(
                reminder!(),
                "<memory>\n",
                "<a>\n",
                "  <projection>$MEMORY_DIR/system/a.md</projection>\n",
                "  <description>d</description>\n",
                "  outer\n",
                "  <b>\n",
                "    <projection>$MEMORY_DIR/system/a/b.md</projection>\n",
                "    inner\n",
                "  </b>\n",
                "</a>\n",
                "</memory>",
            )
            .into())
        );
        assert_eq!(
            git(&[("system/a/b", "inner", ""), ("system/a", "outer", "d")]),
            git(&[("system/a", "outer", "d"), ("system/a/b", "inner", "")])
        );
    }

    #[test]
    fn duplicate_labels_last_wins() {
        // Empty parts are dropped, so all three are the same path.
        assert_eq!(
            git(&[("system/h", "one", "d1"), ("system//h/", "two", ""), ("system/h", "three", "d3")]),
            Ok(concat!(
                reminder!(),
                "<memory>\n",
                "<h>\n",
                "  <projection>$MEMORY_DIR/system/h.md</projection>\n",
                "  <description>d3</description>\n",
                "  three\n",
                "</h>\n",
                "</memory>",
            )
            .into())
        );
    }

    #[test]
    fn labels_without_parts_leave_memory_empty() {
        assert_eq!(
            git(&[("system/", "v", ""), ("system///", "v", "")]),
            Ok(concat!(reminder!(), "<memory>\n", "</memory>",).into())
        );
    }

    #[test]
    fn tags_sorted_by_code_point() {
        // Part by part: `a/b` (part `a`) sorts before `a-b`, though `-` < `/`.
        assert_eq!(
            git(&[
                ("system/é", "", ""),
                ("system/a-b", "", ""),
                ("system/a/b", "", ""),
                ("system/B", "", ""),
                ("system/_", "", "")
            ]),
            Ok(concat!(
                reminder!(),
                "<memory>\n",
                "<B>\n",
                "  <projection>$MEMORY_DIR/system/B.md</projection>\n",
                "</B>\n",
                "<_>\n",
                "  <projection>$MEMORY_DIR/system/_.md</projection>\n",
                "</_>\n",
                "<a>\n",
                "  <b>\n",
                "    <projection>$MEMORY_DIR/system/a/b.md</projection>\n",
                "  </b>\n",
                "</a>\n",
                "<a-b>\n",
                "  <projection>$MEMORY_DIR/system/a-b.md</projection>\n",
                "</a-b>\n",
                "<é>\n",
                "  <projection>$MEMORY_DIR/system/é.md</projection>\n",
                "</é>\n",
                "</memory>",
            )
            .into())
        );
    }

    #[test]
    fn values_and_descriptions_use_python_whitespace() {
        // `\x1c` is whitespace to `strip()`; `rstrip('\n')` keeps `\r` and spaces; an empty value writes no line.
        assert_eq!(
            git(&[("system/a", "\n\nline1\nline2 \u{d}\n\n", "\u{1c} desc 　\n"), ("system/b", "\n\n", "\n")]),
            Ok(concat!(
                reminder!(),
                "<memory>\n",
                "<a>\n",
                "  <projection>$MEMORY_DIR/system/a.md</projection>\n",
                "  <description>desc</description>\n",
                "  \n",
                "\n",
                "line1\n",
                "line2 \u{d}\n",
                "</a>\n",
                "<b>\n",
                "  <projection>$MEMORY_DIR/system/b.md</projection>\n",
                "</b>\n",
                "</memory>",
            )
            .into())
        );
    }

    #[test]
    fn external_tree_sorted_by_raw_label_built_from_stripped() {
        // ` z` sorts first but is drawn as `z`; `system` (no slash) is external; blank labels draw nothing.
        assert_eq!(
            git(&[
                ("system/x", "", ""),
                ("a/d", "", ""),
                (" z/x", "", ""),
                ("a/b/c", "", ""),
                ("system", "", ""),
                ("skills/s", "", ""),
                ("  ", "", ""),
                ("/", "", "")
            ]),
            Ok(concat!(
                reminder!(),
                "<memory>\n",
                "<x>\n",
                "  <projection>$MEMORY_DIR/system/x.md</projection>\n",
                "</x>\n",
                "<external_projection>\n",
                "${MEMORY_DIR}/\n",
                "├── a/\n",
                "│   ├── b/\n",
                "│   │   └── c.md\n",
                "│   └── d.md\n",
                "├── z/\n",
                "│   └── x.md\n",
                "└── system.md\n",
                "</external_projection>\n",
                "</memory>",
            )
            .into())
        );
    }

    #[test]
    fn external_section_even_when_every_label_is_blank() {
        assert_eq!(
            git(&[("system/x", "", ""), (" ", "", "")]),
            Ok(concat!(
                reminder!(),
                "<memory>\n",
                "<x>\n",
                "  <projection>$MEMORY_DIR/system/x.md</projection>\n",
                "</x>\n",
                "<external_projection>\n",
                "${MEMORY_DIR}/\n",
                "</external_projection>\n",
                "</memory>",
            )
            .into())
        );
    }

    #[test]
    fn external_tree_without_other_system_blocks() {
        assert_eq!(
            git(&[("system/persona", "p", ""), ("docs/readme", "", "")]),
            Ok(concat!(
                reminder!(),
                "<self>\n",
                "<projection>$MEMORY_DIR/system/persona.md</projection>\n",
                "p\n",
                "</self>\n",
                "\n",
                "<memory>\n",
                "<external_projection>\n",
                "${MEMORY_DIR}/\n",
                "└── docs/\n",
                "    └── readme.md\n",
                "</external_projection>\n",
                "</memory>",
            )
            .into())
        );
    }

    #[test]
    fn external_file_replaces_directory_of_its_name() {
        // `a.md/x` is built first; `a/` then sets the key `a.md` to a file.
        assert_eq!(
            git(&[("system/x", "", ""), ("a.md/x", "", ""), ("a/", "", ""), ("a.md.md", "", "")]),
            Ok(concat!(
                reminder!(),
                "<memory>\n",
                "<x>\n",
                "  <projection>$MEMORY_DIR/system/x.md</projection>\n",
                "</x>\n",
                "<external_projection>\n",
                "${MEMORY_DIR}/\n",
                "├── a.md\n",
                "└── a.md.md.md\n",
                "</external_projection>\n",
                "</memory>",
            )
            .into())
        );
    }

    #[test]
    fn external_directory_through_a_file_fails_like_letta() {
        // `a` sorts first and makes `a.md` a file; Letta then calls `None.setdefault`.
        assert_eq!(
            git(&[("system/x", "", ""), ("a.md/x/y", "", ""), ("a", "", "")]),
            Err(RenderError::Attribute("'NoneType' object has no attribute 'setdefault'".into()))
        );
    }

    #[test]
    fn external_file_in_a_file_fails_like_letta() {
        assert_eq!(
            git(&[("system/x", "", ""), ("a.md/x", "", ""), ("a", "", "")]),
            Err(RenderError::Type("'NoneType' object does not support item assignment".into()))
        );
    }

    #[test]
    fn reserved_keys_under_system_need_the_reference() {
        let fallback = |labels: &[&str]| {
            let spec: Vec<_> = labels.iter().map(|l| (*l, "", "")).collect();
            needs_reference_fallback(&blocks(&spec))
        };
        assert!(fallback(&["system/a", "system/a/__value__"]));
        assert!(fallback(&["system/__description__"]));
        assert!(fallback(&["system//__label__/x/"]));
        // Outside `system/`, near misses, and Letta's other reserved key are fine.
        assert!(!fallback(&["notes/__value__", "skills/__label__", "__value__", "system"]));
        assert!(!fallback(&["system/__value", "system/x__label__", "system/__block__", "system/persona"]));
    }

    #[test]
    fn path_keys_compare_as_paths_do_part_by_part() {
        // Every part of one or two bytes around the escapes and `/`, in paths of one or two parts.
        let alphabet = [0u8, 1, 2, b'.', 0xff];
        let mut parts: Vec<Vec<u8>> = alphabet.iter().map(|&a| vec![a]).collect();
        parts.extend(alphabet.iter().flat_map(|&a| alphabet.iter().map(move |&b| vec![a, b])));
        let mut paths: Vec<Vec<&[u8]>> = parts.iter().map(|p| vec![&p[..]]).collect();
        paths.extend(parts.iter().flat_map(|p| parts.iter().map(move |q| vec![&p[..], &q[..]])));
        let keys: Vec<Vec<u8>> = paths
            .iter()
            .map(|path| {
                // The path as a label holds it: its parts joined by `/`, none empty.
                let (joined, mut key, mut by_parts) = (path.join(&b'/'), Vec::new(), Vec::new());
                push_path_key(&mut key, path, &joined, true);
                push_path_key(&mut by_parts, path, &joined, false);
                assert_eq!(key, by_parts, "{path:?}");
                key
            })
            .collect();
        for (a, key_a) in paths.iter().zip(&keys) {
            for (b, key_b) in paths.iter().zip(&keys) {
                assert_eq!(key_a.cmp(key_b), a.cmp(b), "{a:?} {b:?}");
                // Heads that differ order the paths as their keys do.
                let heads = sort_head(key_a, b"").cmp(&sort_head(key_b, b""));
                assert!(heads == Ordering::Equal || heads == a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn lone_surrogates_and_nul_sort_by_code_point() {
        let labels = [
            "system/\u{10000}".as_bytes().to_vec(),
            with_surrogates("system/~"),
            "system/\u{ffff}".as_bytes().to_vec(),
            b"system/\0".to_vec(),
        ];
        let value = with_surrogates("~");
        let input: Vec<Block> =
            labels.iter().enumerate().map(|(i, l)| block(l, if i == 1 { &value } else { b"" }, b"")).collect();
        let mut out = Out::default();
        render(&mut out, &input).expect("renders");
        let expected = with_surrogates(concat!(
            reminder!(),
            "<memory>\n",
            "<\0>\n",
            "  <projection>$MEMORY_DIR/system/\0.md</projection>\n",
            "</\0>\n",
            "<~>\n",
            "  <projection>$MEMORY_DIR/system/~.md</projection>\n",
            "  ~\n",
            "</~>\n",
            "<\u{ffff}>\n",
            "  <projection>$MEMORY_DIR/system/\u{ffff}.md</projection>\n",
            "</\u{ffff}>\n",
            "<\u{10000}>\n",
            "  <projection>$MEMORY_DIR/system/\u{10000}.md</projection>\n",
            "</\u{10000}>\n",
            "</memory>",
        ));
        assert_eq!(out.buf, expected);
    }

    #[test]
    fn ten_thousand_parts_without_recursion() {
        const DEPTH: usize = 10_000;
        let inner = format!("system/{}z", "a/".repeat(DEPTH));
        let outer = format!("notes/{}z", "a/".repeat(DEPTH));
        let out = git(&[(&inner, "v", "d"), (&outer, "", "")]).expect("renders");

        let mut expected = String::from(concat!(reminder!(), "<memory>\n"));
        for depth in 0..DEPTH {
            expected += &format!("{}<a>\n", "  ".repeat(depth));
        }
        let pad = "  ".repeat(DEPTH);
        expected +=
            &format!("{pad}<z>\n{pad}  <projection>$MEMORY_DIR/system/{}z.md</projection>\n", "a/".repeat(DEPTH));
        expected += &format!("{pad}  <description>d</description>\n{pad}  v\n{pad}</z>\n");
        for depth in (0..DEPTH).rev() {
            expected += &format!("{}</a>\n", "  ".repeat(depth));
        }
        expected += "<external_projection>\n${MEMORY_DIR}/\n└── notes/\n";
        for depth in 1..=DEPTH {
            expected += &format!("{}└── a/\n", "    ".repeat(depth));
        }
        expected += &format!("{}└── z.md\n</external_projection>\n</memory>", "    ".repeat(DEPTH + 1));
        assert!(out == expected, "deep output differs");
    }

    #[test]
    fn too_large_to_allocate_is_counted_without_writing() {
        // Half a million levels indent about 10^11 code points: counted in linear time, so
        // that the binding's allocation of the str fails (MemoryError) before anything is written.
        let deep = "a/".repeat(500_000);
        for label in [format!("system/{deep}z"), format!("{deep}z")] {
            let mut count = crate::out::Count::default();
            render(&mut count, &blocks(&[("system/x", "", ""), (&label, "", "")])).unwrap();
            assert!(count.chars > 100_000_000_000, "{}", count.chars);
        }
    }

    #[test]
    fn many_blocks() {
        let labels: Vec<String> = (0..100_000).map(|i| format!("system/d{}/b{i}", i % 100)).collect();
        let spec: Vec<_> = labels.iter().map(|l| (l.as_str(), "v", "")).collect();
        let out = git(&spec).expect("renders");
        assert_eq!(out.matches("  v\n").count(), 100_000);
        assert!(out.contains("<d0>\n  <b0>\n    <projection>$MEMORY_DIR/system/d0/b0.md</projection>\n"));
    }
}
