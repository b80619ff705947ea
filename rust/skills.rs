//! `<available_skills>`: the skills in memory blocks and those the client sent,
//! grouped by the directory that holds them, each group drawn as a tree.
//!
//! Reproduced quirks of Letta 0.16.8's `compile_available_skills`:
//! - a block is a skill when its label is `skills/<name>` or
//!   `skills/<name>/SKILL`, split on every `/` (so `skills/` names the skill
//!   `""`, and `skills//x/SKILL` is no skill at all);
//! - the first skill of a name wins, blocks before client skills;
//! - a location ending in `/SKILL.md`, in a directory named like the last
//!   `/`-part of the skill's name, is shown relative to that directory's parent
//!   (with `posixpath.relpath`, whose answer can depend on the process's
//!   current directory: see `Cwd`); any other location is shown as its
//!   basename under its dirname;
//! - within a group, paths are inserted into a nested dict in sorted order, so
//!   a later file replaces an earlier entry of the same name, and a path that
//!   goes through a file raises the `TypeError`/`AttributeError` Python raises.

use std::collections::HashSet;

use crate::error::{RenderError, RenderResult};
use crate::file_tree::{Prefix, Row};
use crate::model::{ClientSkill, Listed};
use crate::out::{Render, Sink};
use crate::posix_path::{self, RelpathError};
use crate::text::{first_line, path_parts, strip};
use crate::tree_view::support::FoldState;
use crate::w;

const HEADER: &str = "\n\n<available_skills>\n";
const FOOTER: &str = "</available_skills>";
const SKILL_FILE: &[u8] = b"/SKILL.md";
/// What every label of a skill block starts with.
pub const SKILL_LABEL_PREFIX: &[u8] = b"skills/";

/// Python's message when a path continues through a file and the file's
/// description (a `str`) is asked to `setdefault` a subdirectory.
pub const SETDEFAULT_ON_STR: &str = "'str' object has no attribute 'setdefault'";
/// Python's message when a file's description (a `str`) is given a child.
pub const ASSIGN_TO_STR: &str = "'str' object does not support item assignment";

/// The current directory, as `os.getcwd()` would give it, for the rare skill
/// location whose displayed path depends on it (see `posix_path::relpath`).
#[derive(Debug, Clone, Copy)]
pub enum Cwd<'c> {
    /// Not known: such a location makes `render_with_cwd` answer `NeedsCwd`.
    Unknown,
    Known(&'c [u8]),
}

/// What `render_with_cwd` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Rendered {
    Done,
    /// Nothing was written: a location's display depends on the current
    /// directory, and it was `Cwd::Unknown`.
    NeedsCwd,
}

/// `compile_available_skills` as a `Render`: writes nothing when there is no skill.
///
/// The listing is laid out once, when made, for every pass that writes it. The rare
/// location whose display depends on the current directory is resolved against this
/// process's current directory (the one Python's `os.getcwd()` reads).
pub struct AvailableSkills<'a>(RenderResult<Vec<Tree<'a>>>);

impl<'a> AvailableSkills<'a> {
    pub fn new(blocks: &'a [Listed<'a>], client_skills: &'a [ClientSkill<'a>]) -> Self {
        let trees = match lay_out(blocks, client_skills, Cwd::Unknown) {
            Ok(Laid::NeedsCwd) => match process_cwd() {
                Ok(cwd) => lay_out(blocks, client_skills, Cwd::Known(&cwd)).map(Laid::into_trees),
                // Python's os.getcwd() raises FileNotFoundError (an OSError) here.
                Err(e) => Err(RenderError::Value(e)),
            },
            laid => laid.map(Laid::into_trees),
        };
        AvailableSkills(trees)
    }
}

impl Render for AvailableSkills<'_> {
    fn render(&self, out: &mut impl Sink) -> RenderResult {
        write(out, self.0.as_ref().map_err(Clone::clone)?);
        Ok(())
    }
}

/// The process's current directory as bytes, or the message Python's
/// `os.getcwd()` would raise with.
fn process_cwd() -> Result<Vec<u8>, String> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        std::env::current_dir().map(|p| p.into_os_string().into_vec()).map_err(|e| match e.raw_os_error() {
            Some(code) => {
                let text = e.to_string();
                let text = text.strip_suffix(&format!(" (os error {code})")).unwrap_or(&text).to_owned();
                format!("[Errno {code}] {text}")
            }
            None => e.to_string(),
        })
    }
    #[cfg(not(unix))]
    {
        // Letta uses ntpath there, whose semantics this module does not reproduce.
        Err("the current directory is only read on POSIX systems".to_owned())
    }
}

/// A skill to show: its name, the first line of its description, its location.
struct Skill<'a> {
    name: &'a [u8],
    desc: &'a [u8],
    location: Location<'a>,
}

/// Where a skill lives: the location given, or its default one, written in the
/// `DefaultLocations` of the listing (one text for them all, not one allocation each).
enum Location<'a> {
    Given(&'a [u8]),
    Default(std::ops::Range<usize>),
}

/// The default locations of a listing's skills, one after the other.
#[derive(Default)]
struct DefaultLocations(Vec<u8>);

impl DefaultLocations {
    /// `${MEMORY_DIR}/skills/<name>/SKILL.md`: where a skill without a location lives.
    fn add(&mut self, name: &[u8]) -> Location<'static> {
        let start = self.0.len();
        self.0.extend_from_slice(b"${MEMORY_DIR}/skills/");
        self.0.extend_from_slice(name);
        self.0.extend_from_slice(SKILL_FILE);
        Location::Default(start..self.0.len())
    }

    fn get<'l>(&'l self, location: &Location<'l>) -> &'l [u8] {
        match location {
            Location::Given(given) => given,
            Location::Default(range) => &self.0[range.clone()],
        }
    }
}

/// The skill name of a block label, when the label names a top-level skill.
pub fn block_skill_name(label: &[u8]) -> Option<&[u8]> {
    let rest = label.strip_prefix(SKILL_LABEL_PREFIX)?;
    // Split on `/`, the parts are the name alone, or the name and `SKILL`.
    match rest.iter().position(|&b| b == b'/') {
        None => Some(rest),
        Some(end) => (&rest[end + 1..] == b"SKILL").then_some(&rest[..end]),
    }
}

/// Skill names already listed, in a set hashed for short keys.
pub(crate) type SeenNames<'a> = HashSet<&'a [u8], FoldState>;

/// An empty `SeenNames` with room for `n` names.
pub(crate) fn seen_names<'a>(n: usize) -> SeenNames<'a> {
    HashSet::with_capacity_and_hasher(n, FoldState::new())
}

/// Every skill to show, in Letta's order, first of each name only, and the default locations they use.
fn collect<'a>(blocks: &'a [Listed], client_skills: &'a [ClientSkill]) -> (Vec<Skill<'a>>, DefaultLocations) {
    let mut seen = seen_names(blocks.len() + client_skills.len());
    let mut skills = Vec::with_capacity(blocks.len() + client_skills.len());
    let mut defaults = DefaultLocations::default();
    for block in blocks {
        if let Some(name) = block_skill_name(block.label) {
            if seen.insert(name) {
                skills.push(Skill { name, desc: first_line(block.description), location: defaults.add(name) });
            }
        }
    }
    for cs in client_skills {
        let name: &[u8] = &cs.name;
        if seen.insert(name) {
            let location = strip(&cs.location);
            let location = if location.is_empty() { defaults.add(name) } else { Location::Given(location) };
            skills.push(Skill { name, desc: first_line(&cs.description), location });
        }
    }
    (skills, defaults)
}

/// A skill's path under its root: the end of its location from `start` on, or a path of its own.
enum Rel {
    Tail(usize),
    Own(Vec<u8>),
}

/// Letta's `_skill_root`: the directory a skill is listed under (a head of the location,
/// of this length), and its path there.
///
/// The location is already stripped: a client's is stripped when read, and the
/// default one starts with `$` and ends with `d`.
fn skill_root(name: &[u8], location: &[u8], cwd: Cwd) -> Result<(usize, Rel), RelpathError> {
    if location.ends_with(SKILL_FILE) {
        let skill_dir = posix_path::dirname(location);
        let root = posix_path::dirname(skill_dir);
        let last_name_part = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
        // Python computes the relpath before this test; it cannot fail there
        // (the location is not empty), so computing it only when used is the same.
        let dir_name = posix_path::basename(skill_dir);
        if dir_name == last_name_part {
            // The location's parts are the root's, then `dir_name`, then
            // `SKILL.md`; for an ordinary `dir_name` no `..` can reach into the
            // root, and relpath is `<dir_name>/SKILL.md`.
            if !matches!(dir_name, b"" | b"." | b"..") {
                let start = skill_dir.len() - dir_name.len();
                let rel = if location.len() - start == dir_name.len() + SKILL_FILE.len() {
                    Rel::Tail(start)
                } else {
                    Rel::Own([dir_name, SKILL_FILE].concat())
                };
                return Ok((root.len(), rel));
            }
            let rel = match posix_path::relpath(location, root) {
                Err(RelpathError::NeedsCwd) => match cwd {
                    Cwd::Known(dir) => posix_path::relpath_in(location, root, dir)?,
                    Cwd::Unknown => return Err(RelpathError::NeedsCwd),
                },
                rel => rel?,
            };
            return Ok((root.len(), Rel::Own(rel)));
        }
    }
    let base = posix_path::basename(location);
    Ok((posix_path::dirname(location).len(), Rel::Tail(location.len() - base.len())))
}

/// A skill's place: its location, how much of it is the root it is listed under, its path there.
struct Placed<'l, 'a> {
    location: &'l [u8],
    root_len: usize,
    rel: Rel,
    desc: &'a [u8],
}

impl Placed<'_, '_> {
    fn root(&self) -> &[u8] {
        &self.location[..self.root_len]
    }

    fn rel(&self) -> &[u8] {
        match &self.rel {
            Rel::Tail(start) => &self.location[*start..],
            Rel::Own(rel) => rel,
        }
    }
}

/// What laying the listing out came to.
enum Laid<'a> {
    /// One tree a root, in the order written; none when there is no skill.
    Trees(Vec<Tree<'a>>),
    NeedsCwd,
}

impl<'a> Laid<'a> {
    /// The trees of a listing laid out in a known current directory.
    fn into_trees(self) -> Vec<Tree<'a>> {
        match self {
            Laid::Trees(trees) => trees,
            // Only `Cwd::Unknown` asks for the directory.
            Laid::NeedsCwd => Vec::new(),
        }
    }
}

/// The skills placed under their roots, and each root's nested dict, as Letta builds them.
fn lay_out<'a>(blocks: &'a [Listed], client_skills: &'a [ClientSkill], cwd: Cwd) -> RenderResult<Laid<'a>> {
    let (skills, defaults) = collect(blocks, client_skills);
    let mut placed: Vec<Placed> = Vec::with_capacity(skills.len());
    for skill in &skills {
        let location = defaults.get(&skill.location);
        match skill_root(skill.name, location, cwd) {
            Ok((root_len, rel)) => placed.push(Placed { location, root_len, rel, desc: skill.desc }),
            Err(RelpathError::NeedsCwd) => return Ok(Laid::NeedsCwd),
            // Unreachable: a location ending in "/SKILL.md" is never empty.
            Err(RelpathError::NoPath) => return Err(RenderError::Value(posix_path::NO_PATH_MESSAGE.to_owned())),
        }
    }
    // In the order Python lists them: roots sorted, then paths sorted, equal
    // paths in skill order (a stable sort).
    placed.sort_by(|a, b| (a.root(), a.rel()).cmp(&(b.root(), b.rel())));
    // Every group's tree first: a path through a file fails before anything is written.
    let trees = placed
        .chunk_by(|a, b| a.root() == b.root())
        .map(|group| Tree::build(group[0].root(), group.iter().map(|p| (p.rel(), p.desc))));
    trees.collect::<RenderResult<_>>().map(Laid::Trees)
}

/// `compile_available_skills`, with the current directory given explicitly.
///
/// On an error or `NeedsCwd`, `out` is left as it was.
pub fn render_with_cwd(
    out: &mut impl Sink,
    blocks: &[Listed],
    client_skills: &[ClientSkill],
    cwd: Cwd,
) -> RenderResult<Rendered> {
    match lay_out(blocks, client_skills, cwd)? {
        Laid::Trees(trees) => {
            write(out, &trees);
            Ok(Rendered::Done)
        }
        Laid::NeedsCwd => Ok(Rendered::NeedsCwd),
    }
}

/// The listing of laid-out trees: nothing when there is none.
fn write(out: &mut impl Sink, trees: &[Tree]) {
    if trees.is_empty() {
        return;
    }
    w!(out, HEADER);
    for (i, tree) in trees.iter().enumerate() {
        if i > 0 {
            w!(out, "\n");
        }
        w!(out, tree.text(tree.root), "\n");
        tree.render(out);
    }
    w!(out, FOOTER);
}

/// Where a name is in a tree's own text.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

/// A value in Letta's nested dict: a subdirectory, or a file's description (stripped).
#[derive(Clone, Copy)]
enum Node<'a> {
    Dir(usize),
    File(&'a [u8]),
}

/// One directory's entries, kept sorted by name while the tree is built, then
/// directories first (in drawing order).
type Dir<'a> = Vec<(Span, Node<'a>)>;

/// Letta's nested dict of one root, as an arena of directories (index 0 is the
/// root), with the names it holds (the root's first) copied into one text.
struct Tree<'a> {
    text: Vec<u8>,
    root: Span,
    dirs: Vec<Dir<'a>>,
    /// Every name and description is ASCII.
    ascii: bool,
}

impl<'a> Tree<'a> {
    /// Inserts each of the paths as Python's `setdefault` walk and item assignment do.
    fn build<'p>(root: &[u8], paths: impl Iterator<Item = (&'p [u8], &'a [u8])> + Clone) -> RenderResult<Self> {
        let (count, path_bytes, ascii) =
            paths.clone().fold((0, 0, root.is_ascii()), |(n, bytes, ascii), (rel, desc)| {
                (n + 1, bytes + rel.len(), ascii && rel.is_ascii() && desc.is_ascii())
            });
        // Room for every name, so that the text never grows: no name is longer than its path.
        let mut text = Vec::with_capacity(root.len() + path_bytes);
        let root = name_in(&mut text, root);
        // The root has at most one entry a path: room for them all, so that it never grows.
        let mut dirs: Vec<Dir<'a>> = Vec::with_capacity(count + 1);
        dirs.push(Vec::with_capacity(count));
        let mut parts: Vec<&[u8]> = Vec::with_capacity(4);
        for (rel, desc) in paths {
            parts.clear();
            parts.extend(path_parts(rel));
            let Some((&leaf, through)) = parts.split_last() else { continue };
            let mut dir = 0;
            for (i, &part) in through.iter().enumerate() {
                let fresh = dirs.len();
                let entries = &mut dirs[dir];
                dir = match search(entries, &text, part) {
                    Err(at) => {
                        entries.insert(at, (name_in(&mut text, part), Node::Dir(fresh)));
                        dirs.push(Vec::with_capacity(1));
                        fresh
                    }
                    Ok(at) => match entries[at].1 {
                        Node::Dir(d) => d,
                        // `setdefault` returned a file's str: the next step calls
                        // `setdefault` on it, or, at the last step, assigns into it.
                        Node::File(_) if i + 1 < through.len() => {
                            return Err(RenderError::Attribute(SETDEFAULT_ON_STR.to_owned()))
                        }
                        Node::File(_) => return Err(RenderError::Type(ASSIGN_TO_STR.to_owned())),
                    },
                };
            }
            // A file replaces whatever had its name, a directory included.
            let entries = &mut dirs[dir];
            let file = Node::File(strip(desc));
            match search(entries, &text, leaf) {
                Ok(at) => entries[at].1 = file,
                Err(at) => entries.insert(at, (name_in(&mut text, leaf), file)),
            }
        }
        // Directories first, then files, each still by name (the sort is stable).
        for entries in &mut dirs {
            entries.sort_by_key(|(_, node)| matches!(node, Node::File(_)));
        }
        Ok(Tree { text, root, dirs, ascii })
    }

    fn text(&self, span: Span) -> &[u8] {
        &self.text[span.start..span.end]
    }

    /// Drawn with an explicit stack of (directory, next entry, prefix).
    fn render(&self, out: &mut impl Sink) {
        let mut prefix = Prefix::default();
        let mut stack = Vec::with_capacity(4);
        stack.push((0, 0, prefix.mark()));
        while let Some((dir, next, mark)) = stack.last_mut() {
            let entries = &self.dirs[*dir];
            let Some(&(name, node)) = entries.get(*next) else {
                stack.pop();
                continue;
            };
            *next += 1;
            prefix.reset(*mark);
            let is_last = *next == entries.len();
            let (is_dir, note) = match node {
                Node::Dir(_) => (true, &b""[..]),
                Node::File(desc) => (false, desc),
            };
            Row { prefix: &prefix, is_last, name: self.text(name), suffix: "", is_dir, note, ascii: self.ascii }
                .write(out);
            if let Node::Dir(d) = node {
                prefix.indent(is_last);
                stack.push((d, 0, prefix.mark()));
            }
        }
    }
}

/// Where `name` is among a directory's sorted entries, or where it would go. Paths come
/// sorted, so a name most often goes last: that is tried before a binary search.
fn search(entries: &Dir, text: &[u8], name: &[u8]) -> Result<usize, usize> {
    let name_of = |span: &Span| &text[span.start..span.end];
    match entries.last().map(|(last, _)| name_of(last).cmp(name)) {
        None | Some(std::cmp::Ordering::Less) => Err(entries.len()),
        Some(std::cmp::Ordering::Equal) => Ok(entries.len() - 1),
        Some(std::cmp::Ordering::Greater) => entries.binary_search_by(|(span, _)| name_of(span).cmp(name)),
    }
}

/// `name` appended to a tree's text.
fn name_in(text: &mut Vec<u8>, name: &[u8]) -> Span {
    let start = text.len();
    text.extend_from_slice(name);
    Span { start, end: text.len() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Text;
    use crate::out::Out;

    fn block<'a>(label: &'a str, description: &'a str) -> Listed<'a> {
        Listed { label: label.as_bytes(), description: description.as_bytes() }
    }

    fn client<'a>(name: &'a str, description: &'a str, location: &'a str) -> ClientSkill<'a> {
        ClientSkill {
            name: Text::from(name.as_bytes()),
            description: Text::from(description.as_bytes()),
            location: Text::from(location.as_bytes()),
        }
    }

    fn rendered(blocks: &[Listed], client_skills: &[ClientSkill]) -> RenderResult<String> {
        let mut out = Out::default();
        AvailableSkills::new(blocks, client_skills).render(&mut out)?;
        Ok(String::from_utf8(out.buf).unwrap())
    }

    fn ok(blocks: &[Listed], client_skills: &[ClientSkill]) -> String {
        rendered(blocks, client_skills).unwrap()
    }

    #[test]
    fn blocks_then_client_skills_first_name_wins() {
        let blocks = [
            block("skills/alpha", "  First line \nsecond"),
            block("skills/beta/SKILL", ""),
            block("skills/alpha/SKILL", "dup"),
            block("skills/gamma/notes", "nested files are not skills"),
            block("human", "h"),
            block("skills", "x"),
        ];
        let client_skills =
            [client("alpha", "client dup", "/x/alpha/SKILL.md"), client("tool", "T", " /opt/skills/tool/SKILL.md ")];
        assert_eq!(
            ok(&blocks, &client_skills),
            concat!(
                "\n\n<available_skills>\n",
                "${MEMORY_DIR}/skills\n",
                "├── alpha/\n",
                "│   └── SKILL.md (First line)\n",
                "└── beta/\n",
                "    └── SKILL.md\n",
                "\n",
                "/opt/skills\n",
                "└── tool/\n",
                "    └── SKILL.md (T)\n",
                "</available_skills>",
            )
        );
    }

    #[test]
    fn no_skill_writes_nothing() {
        assert_eq!(ok(&[block("human", "h"), block("skills/a/b/SKILL", "too deep")], &[]), "");
        assert_eq!(ok(&[], &[]), "");
    }

    #[test]
    fn names_out_of_order_at_a_level_are_placed_by_name() {
        // Whole paths sort '-' before '/', so "a" can follow "a-c" at one level; and a
        // directory met again when it is no longer the last entry is found, not added.
        let paths = [(&b"a-c/x"[..], &b"X"[..]), (b"a/b", b"B"), (b"a-c/y", b"Y")];
        let mut out = Out::default();
        Tree::build(b"", paths.into_iter()).unwrap().render(&mut out);
        let expected = concat!("├── a/\n", "│   └── b (B)\n", "└── a-c/\n", "    ├── x (X)\n", "    └── y (Y)\n");
        assert_eq!(String::from_utf8(out.buf).unwrap(), expected);
    }

    #[test]
    fn skill_names_of_labels() {
        let cases: [(&str, Option<&str>); 11] = [
            ("skills/a", Some("a")),
            ("skills/a/SKILL", Some("a")),
            ("skills/", Some("")),
            ("skills//SKILL", Some("")),
            ("skills/a/SKILL/x", None),
            ("skills/a/b", None),
            ("skills/a/", None),
            ("skills/a/SKILLS", None),
            ("skills//x", None),
            ("skills", None),
            ("notes/skills/a", None),
        ];
        for (label, name) in cases {
            assert_eq!(block_skill_name(label.as_bytes()), name.map(str::as_bytes), "{label}");
        }
    }

    #[test]
    fn label_split_keeps_empty_parts() {
        // "skills/" is the skill "" (whose directory does not match its name);
        // "skills//x" has three parts and is no skill; "skills//SKILL" is "" again.
        let blocks = [block("skills/", "empty"), block("skills//x", "no"), block("skills//SKILL", "dup")];
        assert_eq!(
            ok(&blocks, &[]),
            concat!(
                "\n\n<available_skills>\n",
                "${MEMORY_DIR}/skills\n",
                "└── SKILL.md (empty)\n",
                "</available_skills>",
            )
        );
    }

    #[test]
    fn locations_that_are_not_a_named_skill_md() {
        let client_skills = [
            client("readme", "R", "/a/b/README.md"),
            client("bare", "B", "foo"),
            client("dir", "D", "x/"),
            client("blank", "", "   "),
            client("mismatch", "M", "/opt/other/SKILL.md"),
            client("ns/x", "N", "/p/x/SKILL.md"),
        ];
        // "foo" lives in "" (an empty line); "x/" has the basename "", which draws no entry.
        assert_eq!(
            ok(&[], &client_skills),
            concat!(
                "\n\n<available_skills>\n",
                "\n",
                "└── foo (B)\n",
                "\n",
                "${MEMORY_DIR}/skills\n",
                "└── blank/\n",
                "    └── SKILL.md\n",
                "\n",
                "/a/b\n",
                "└── README.md (R)\n",
                "\n",
                "/opt/other\n",
                "└── SKILL.md (M)\n",
                "\n",
                "/p\n",
                "└── x/\n",
                "    └── SKILL.md (N)\n",
                "\n",
                "x\n",
                "</available_skills>",
            )
        );
    }

    #[test]
    fn dot_and_dotdot_skill_names() {
        let blocks = [block("skills/..", "up"), block("skills/.", "here")];
        let client_skills = [client("..", "taken", "/r/x/../SKILL.md")];
        assert_eq!(
            ok(&blocks, &client_skills),
            concat!(
                "\n\n<available_skills>\n",
                "${MEMORY_DIR}/skills\n",
                "├── ../\n",
                "│   └── SKILL.md (up)\n",
                "└── SKILL.md (here)\n",
                "</available_skills>",
            )
        );
    }

    #[test]
    fn relpath_of_absolute_locations() {
        let client_skills = [
            client("..", "same", "/SKILL.md/../SKILL.md"),
            client("x/..", "root", "/../SKILL.md"),
            client("y", "mismatch", "/../SKILL.md"),
        ];
        assert_eq!(
            ok(&[], &client_skills),
            concat!(
                "\n\n<available_skills>\n",
                "/\n",
                "└── SKILL.md (root)\n",
                "\n",
                "/..\n",
                "└── SKILL.md (mismatch)\n",
                "\n",
                "/SKILL.md\n",
                "└── . (same)\n",
                "</available_skills>",
            )
        );
    }

    #[test]
    fn double_slashes_stay_in_the_root() {
        assert_eq!(
            ok(&[], &[client("x", "X", "//srv//x//SKILL.md")]),
            "\n\n<available_skills>\n//srv\n└── x/\n    └── SKILL.md (X)\n</available_skills>"
        );
    }

    #[test]
    fn tree_draws_directories_then_files() {
        let client_skills = [
            client("b", "B", "/r/b/SKILL.md"),
            client("z", "Z", "/r/z.md"),
            client("a", "A", "/r/a/SKILL.md"),
            client("c", "", "/r/c.txt"),
        ];
        assert_eq!(
            ok(&[], &client_skills),
            concat!(
                "\n\n<available_skills>\n",
                "/r\n",
                "├── a/\n",
                "│   └── SKILL.md (A)\n",
                "├── b/\n",
                "│   └── SKILL.md (B)\n",
                "├── c.txt\n",
                "└── z.md (Z)\n",
                "</available_skills>",
            )
        );
    }

    #[test]
    fn same_path_twice_keeps_the_later() {
        let client_skills = [client("x", "first", "/r/x/SKILL.md"), client("a/x", "second", "/r/x/SKILL.md")];
        assert_eq!(
            ok(&[], &client_skills),
            "\n\n<available_skills>\n/r\n└── x/\n    └── SKILL.md (second)\n</available_skills>"
        );
    }

    #[test]
    fn path_through_a_file_is_a_type_error() {
        // "/r/x" is the file "x"; then "x/SKILL.md" needs "x" to be a directory.
        let client_skills = [client("q", "file", "/r/x"), client("x", "dir", "/r/x/SKILL.md")];
        let mut out = Out::default();
        out.push(b"kept");
        let err = AvailableSkills::new(&[], &client_skills).render(&mut out).unwrap_err();
        assert_eq!(err, RenderError::Type("'str' object does not support item assignment".into()));
        assert_eq!(out.buf, b"kept");
    }

    #[test]
    fn deeper_paths_through_a_file_are_an_attribute_error() {
        // Not reachable from skills (paths have at most two parts), but the dict walk is kept whole.
        let paths = [(&b"a"[..], &b"d"[..]), (b"a/b/c", b"d")];
        let err = Tree::build(b"", paths.into_iter()).err().unwrap();
        assert_eq!(err, RenderError::Attribute("'str' object has no attribute 'setdefault'".into()));
        // A file replaces a directory of the same name.
        let paths = [(&b"a/b"[..], &b"dir"[..]), (b"a", b"file")];
        let mut out = Out::default();
        Tree::build(b"", paths.into_iter()).unwrap().render(&mut out);
        assert_eq!(out.buf, "└── a (file)\n".as_bytes());
    }

    #[test]
    fn descriptions_use_python_whitespace() {
        let blocks = [block("skills/w", "\u{1c}\u{85} padded \u{85}\nrest")];
        assert_eq!(
            ok(&blocks, &[client("v", " \n\n", "")]),
            concat!(
                "\n\n<available_skills>\n",
                "${MEMORY_DIR}/skills\n",
                "├── v/\n",
                "│   └── SKILL.md\n",
                "└── w/\n",
                "    └── SKILL.md (padded)\n",
                "</available_skills>",
            )
        );
    }

    #[test]
    fn location_that_depends_on_the_current_directory() {
        // "../../SKILL.md" for the skill "..": its root ".." and the location differ
        // by a ".." that reaches into the current directory.
        let client_skills = [client("..", "d", "../../SKILL.md")];
        let mut out = Out::default();
        let done = render_with_cwd(&mut out, &[], &client_skills, Cwd::Unknown).unwrap();
        assert_eq!((done, out.len()), (Rendered::NeedsCwd, 0));
        for (cwd, tree) in [
            ("/", "└── SKILL.md (d)\n"),
            ("/tmp/a", "└── ../\n    └── SKILL.md (d)\n"),
            ("/tmp/a/SKILL.md/b", "└── . (d)\n"),
        ] {
            let mut out = Out::default();
            let done = render_with_cwd(&mut out, &[], &client_skills, Cwd::Known(cwd.as_bytes())).unwrap();
            assert_eq!(done, Rendered::Done);
            let expected = format!("\n\n<available_skills>\n..\n{tree}</available_skills>");
            assert_eq!(String::from_utf8(out.buf).unwrap(), expected, "cwd {cwd}");
        }
        // `render` asks this process, as os.getcwd() does.
        let cwd = process_cwd().unwrap();
        let mut expected = Out::default();
        assert_eq!(render_with_cwd(&mut expected, &[], &client_skills, Cwd::Known(&cwd)), Ok(Rendered::Done));
        assert_eq!(ok(&[], &client_skills).as_bytes(), expected.buf);
    }

    #[test]
    fn deep_and_many_skills() {
        let deep = "d/".repeat(10_000) + "x/SKILL.md";
        let out = ok(&[], &[client("x", "deep", &deep)]);
        assert!(out.ends_with("d\n└── x/\n    └── SKILL.md (deep)\n</available_skills>"));

        let names: Vec<String> = (0..10_000).map(|i| format!("s{i:05}")).collect();
        let skills: Vec<ClientSkill> = names.iter().map(|n| client(n, "", "")).collect();
        let out = ok(&[], &skills);
        assert!(out.starts_with("\n\n<available_skills>\n${MEMORY_DIR}/skills\n├── s00000/\n│   └── SKILL.md\n"));
        assert!(out.ends_with("└── s09999/\n    └── SKILL.md\n</available_skills>"));
    }
}
