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
use std::collections::hash_map::Entry as MapEntry;
use std::collections::HashMap;

use crate::error::{RenderError, RenderResult};
use crate::model::Block;
use crate::out::Out;
use crate::text::{path_parts, rstrip_newlines, strip};
use crate::tree_view::{bucket, bucket_sort, sort_head, FoldState};
use crate::w;

const SYSTEM_PREFIX: &[u8] = b"system/";
const SKILLS_PREFIX: &[u8] = b"skills/";
const PERSONA: &[u8] = b"system/persona";

/// The dict keys Letta stores a block's value, description and label under, beside
/// its children. A label part spelled like one of them makes Letta render the
/// `repr()` of a dict; such inputs go to the reference renderer.
const RESERVED: [&[u8]; 3] = [b"__value__", b"__description__", b"__label__"];

const REMINDER: &str = "\n\nReminder: <projection> contains the local path of the memory file projection.";

const TEE: &str = "├── ";
const ELBOW: &str = "└── ";
const PIPE: &str = "│   ";
const BLANK: &str = "    ";

/// True when Letta would render a dict's `repr()` for these blocks: some `system/`
/// label has a part equal to one of Letta's reserved keys. `render` is only exact
/// when this is false.
pub fn needs_reference_fallback(blocks: &[Block]) -> bool {
    blocks
        .iter()
        .filter(|b| b.label.starts_with(SYSTEM_PREFIX))
        .any(|b| path_parts(&b.label).any(|part| RESERVED.contains(&part)))
}

/// Writes exactly what Letta writes. Exact unless `needs_reference_fallback(blocks)`.
pub fn render(out: &mut Out, blocks: &[Block]) -> RenderResult {
    let is_system = |b: &&Block| b.label.starts_with(SYSTEM_PREFIX);
    if !blocks.iter().any(|b| is_system(&b)) {
        return Ok(());
    }
    w!(out, REMINDER);

    // The first `system/persona` block, even when there are several.
    if let Some(persona) = blocks.iter().find(|b| *b.label == *PERSONA) {
        w!(
            out,
            "\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\n",
            rstrip_newlines(&persona.value),
            "\n</self>"
        );
    }

    let mut memory = blocks.iter().filter(is_system).filter(|b| *b.label != *PERSONA).peekable();
    let external: Vec<&Block> = blocks
        .iter()
        .filter(|b| !b.label.is_empty() && !b.label.starts_with(SYSTEM_PREFIX) && !b.label.starts_with(SKILLS_PREFIX))
        .collect();
    if memory.peek().is_none() && external.is_empty() {
        return Ok(());
    }

    w!(out, "\n\n<memory>\n");
    render_nested(out, memory);
    if !external.is_empty() {
        w!(out, "<external_projection>\n${MEMORY_DIR}/\n");
        render_external(out, external)?;
        w!(out, "</external_projection>\n");
    }
    w!(out, "</memory>");
    Ok(())
}

/// Two spaces per level.
fn pad(out: &mut Out, depth: usize) {
    let len = out.buf.len().saturating_add(depth.saturating_mul(2));
    out.buf.resize(len, b' ');
}

/// A block's path below `system/`: `parts[start..end]`.
struct Path<'l, 'b> {
    /// The first bytes of the first part, to sort without comparing whole paths.
    head: u64,
    start: usize,
    end: usize,
    block: &'l Block<'b>,
}

/// The `system/` blocks other than the persona, as nested tags. A path that is
/// both a block and a prefix of other paths is a tag holding the block's content
/// and then the nested tags; of two blocks with the same path, the later one wins.
fn render_nested<'l, 'b: 'l>(out: &mut Out, blocks: impl Iterator<Item = &'l Block<'b>>) {
    let mut parts: Vec<&[u8]> = Vec::new();
    let mut paths: Vec<Path> = Vec::new();
    for block in blocks {
        let start = parts.len();
        parts.extend(path_parts(block.label.strip_prefix(SYSTEM_PREFIX).unwrap_or_default()));
        if let Some(first) = parts.get(start) {
            paths.push(Path { head: sort_head(first, b""), start, end: parts.len(), block });
        }
    }
    let path_of = |p: &Path| parts.get(p.start..p.end).unwrap_or_default();
    // Equal paths keep their input order (`start` grows with it): the last one written stays last.
    paths.sort_unstable_by(|a, b| {
        a.head.cmp(&b.head).then_with(|| path_of(a).cmp(path_of(b))).then(a.start.cmp(&b.start))
    });

    let mut open: &[&[u8]] = &[];
    for (i, p) in paths.iter().enumerate() {
        let path = path_of(p);
        if paths.get(i + 1).is_some_and(|next| path_of(next) == path) {
            continue;
        }
        let common = open.iter().zip(path).take_while(|(a, b)| a == b).count();
        close(out, open, common);
        for (depth, name) in path.iter().enumerate().skip(common) {
            pad(out, depth);
            w!(out, "<", *name, ">\n");
        }
        let depth = path.len() - 1;
        pad(out, depth);
        w!(out, "  <projection>$MEMORY_DIR/system/");
        for (j, name) in path.iter().enumerate() {
            if j > 0 {
                w!(out, "/");
            }
            w!(out, *name);
        }
        w!(out, ".md</projection>\n");
        let description = strip(&p.block.description);
        if !description.is_empty() {
            pad(out, depth);
            w!(out, "  <description>", description, "</description>\n");
        }
        let value = rstrip_newlines(&p.block.value);
        if !value.is_empty() {
            pad(out, depth);
            w!(out, "  ", value, "\n");
        }
        open = path;
    }
    close(out, open, 0);
}

/// Closes the tags `open[keep..]`, innermost first.
fn close(out: &mut Out, open: &[&[u8]], keep: usize) {
    for (depth, name) in open.iter().enumerate().skip(keep).rev() {
        pad(out, depth);
        w!(out, "</", *name, ">\n");
    }
}

/// A name in the external tree, split so that a directory named `x.md` and the file
/// of label `x` are the same dict key without building the string `x.md`: the bytes
/// are `stem`, then `.md` when `md`, and `stem` never ends in `.md` unless `md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Name<'b> {
    stem: &'b [u8],
    md: bool,
}

impl<'b> Name<'b> {
    const MD: &'static [u8] = b".md";

    fn dir(part: &'b [u8]) -> Self {
        match part.strip_suffix(Self::MD) {
            Some(stem) => Name { stem, md: true },
            None => Name { stem: part, md: false },
        }
    }

    fn file(part: &'b [u8]) -> Self {
        Name { stem: part, md: true }
    }

    fn suffix(&self) -> &'static [u8] {
        if self.md {
            Self::MD
        } else {
            b""
        }
    }

    /// Byte order of the full names.
    fn cmp_bytes(&self, other: &Self) -> Ordering {
        let n = self.stem.len().min(other.stem.len());
        let (a, rest_a) = self.stem.split_at(n);
        let (b, rest_b) = other.stem.split_at(n);
        a.cmp(b).then_with(|| {
            // One of the rests is empty, so this compares at most four bytes.
            let a = rest_a.iter().chain(self.suffix());
            let b = rest_b.iter().chain(other.suffix());
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
fn render_external(out: &mut Out, mut blocks: Vec<&Block>) -> RenderResult {
    blocks.sort_by(|a, b| a.label.cmp(&b.label));

    let mut tree: HashMap<(usize, Name), Node, FoldState> =
        HashMap::with_capacity_and_hasher(blocks.len(), FoldState::new());
    let mut dirs = 1;
    for block in &blocks {
        let mut parts = path_parts(strip(&block.label));
        let Some(mut name) = parts.next() else { continue };
        // `None` once a part named a file: Letta's `setdefault` returned that file's `None`.
        let mut dir = Some(0);
        for next in parts {
            let Some(at) = dir else {
                return Err(RenderError::Attribute("'NoneType' object has no attribute 'setdefault'".into()));
            };
            dir = match tree.entry((at, Name::dir(name))) {
                MapEntry::Occupied(e) => match e.get() {
                    Node::Dir(sub) => Some(*sub),
                    Node::File => None,
                },
                MapEntry::Vacant(e) => {
                    e.insert(Node::Dir(dirs));
                    dirs += 1;
                    Some(dirs - 1)
                }
            };
            name = next;
        }
        let Some(at) = dir else {
            return Err(RenderError::Type("'NoneType' object does not support item assignment".into()));
        };
        tree.insert((at, Name::file(name)), Node::File);
    }

    // Each directory's directories, then its files.
    let lines: Vec<(usize, Line)> = tree
        .into_iter()
        .map(|((dir, name), node)| {
            let bucket = 2 * dir + usize::from(matches!(node, Node::File));
            (bucket, Line { head: sort_head(name.stem, name.suffix()), name, node })
        })
        .collect();
    let (lines, starts) =
        bucket_sort(&lines, 2 * dirs, |a, b| a.head.cmp(&b.head).then_with(|| a.name.cmp_bytes(&b.name)));
    let lines_of = |dir: usize| bucket(&lines, &starts, 2 * dir, 2 * dir + 2).iter();

    let mut prefix: Vec<u8> = Vec::new();
    // Each directory being listed: the rest of its lines, and the prefix length its lines use.
    let mut stack = vec![(lines_of(0), 0)];
    while let Some((rest, prefix_len)) = stack.last_mut() {
        let Some(line) = rest.next() else {
            stack.pop();
            continue;
        };
        let is_last = rest.len() == 0;
        prefix.truncate(*prefix_len);
        w!(out, &prefix[..], if is_last { ELBOW } else { TEE }, line.name.stem, line.name.suffix());
        match line.node {
            Node::Dir(sub) => {
                w!(out, "/\n");
                prefix.extend_from_slice(if is_last { BLANK } else { PIPE }.as_bytes());
                stack.push((lines_of(sub), prefix.len()));
            }
            Node::File => w!(out, "\n"),
        }
    }
    Ok(())
}
