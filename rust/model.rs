//! The inputs of every renderer, as plain Rust data borrowed from Python objects.
//!
//! Text a renderer reads (`Text`) is the bytes of a Python `str` encoded with
//! `surrogatepass` (see `text`), beside its own code units; text it only copies
//! (`Chars`: a block's value, a template) is the `str`'s own code units alone. The
//! binding fills these structs and applies Letta's `x or ""` defaults, so a
//! renderer never sees a Python `None`.

use std::borrow::Cow;
use std::ops::Deref;

use crate::text::{self, Class, Native, Units};

/// A Python `str` as the renderers read it: surrogatepass UTF-8, borrowed from the Python
/// object when possible; and, when it came from Python, its own code units, which a
/// renderer that writes the whole text copies as they are (see `out::Piece`).
#[derive(Debug, Clone, Default)]
pub struct Text<'a> {
    utf8: Cow<'a, [u8]>,
    native: Option<Native<'a>>,
}

impl<'a> Text<'a> {
    /// A Python `str`: both forms of the same text.
    pub fn with_native(utf8: &'a [u8], native: Native<'a>) -> Self {
        Text { utf8: Cow::Borrowed(utf8), native: Some(native) }
    }

    /// An ASCII literal in both forms (its bytes are its code units); not ASCII fails to compile in a const.
    pub const fn ascii(text: &'static [u8]) -> Text<'static> {
        assert!(text.is_ascii());
        Text { utf8: Cow::Borrowed(text), native: Some(Native { units: Units::One(text), class: Class::Ascii }) }
    }

    /// Its own code units, when it came from Python.
    pub fn native(&self) -> Option<Native<'a>> {
        self.native
    }

    /// It came from an ASCII `str`: its bytes (and any slice of them) can be written as they are.
    pub fn is_ascii_str(&self) -> bool {
        self.native.is_some_and(|native| native.class == Class::Ascii)
    }
}

impl Deref for Text<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.utf8
    }
}

impl PartialEq for Text<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.utf8 == other.utf8
    }
}

impl<'a> From<&'a [u8]> for Text<'a> {
    fn from(utf8: &'a [u8]) -> Self {
        Text { utf8: Cow::Borrowed(utf8), native: None }
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Text<'a> {
    fn from(utf8: &'a [u8; N]) -> Self {
        Text { utf8: Cow::Borrowed(utf8), native: None }
    }
}

impl From<Vec<u8>> for Text<'_> {
    fn from(utf8: Vec<u8>) -> Self {
        Text { utf8: Cow::Owned(utf8), native: None }
    }
}

impl<'a> From<Cow<'a, [u8]>> for Text<'a> {
    fn from(utf8: Cow<'a, [u8]>) -> Self {
        Text { utf8, native: None }
    }
}

/// An integer field rendered with f-string semantics (`str(limit)`).
#[derive(Debug, Clone, PartialEq)]
pub enum Int<'a> {
    Small(i64),
    /// Anything else that formats as an int (a huge int, `True`): already rendered. Boxed,
    /// as it is rare: a block then fits in fewer bytes (five of them in malloc's thread cache).
    Rendered(Box<Text<'a>>),
}

/// A core-memory block. `label`, `value`, `description` are `""` when Python had `None`.
#[derive(Debug, Clone)]
pub struct Block<'a> {
    pub label: Text<'a>,
    /// Only copied (whole, by lines, without its final newlines): never read as UTF-8.
    pub value: Chars<'a>,
    pub description: Text<'a>,
    /// `0` when Python had `None`.
    pub limit: Int<'a>,
    pub read_only: bool,
}

impl Block<'_> {
    /// A block of which nothing is read (as in Letta): empty, a limit `0`, not read-only.
    pub fn unread() -> Self {
        Block {
            label: Text::default(),
            value: Chars::default(),
            description: Text::default(),
            limit: Int::Small(0),
            read_only: false,
        }
    }

    /// The two fields the tree view and the skills listing read.
    pub fn listed(&self) -> Listed<'_> {
        Listed { label: &self.label, description: &self.description }
    }
}

/// A block as the tree view and the skills listing read it: its label and description,
/// surrogatepass UTF-8 (`""` when Python had `None`). Nothing else is held, so a listing
/// of many blocks holds little beside its output.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Listed<'a> {
    pub label: &'a [u8],
    pub description: &'a [u8],
}

/// A block holding a file of an attached source.
#[derive(Debug, Clone)]
pub struct FileBlock<'a> {
    pub block: Block<'a>,
    pub source_id: Option<Text<'a>>,
}

/// An attached source. `name` is already rendered (`None` is `"None"`);
/// `description` and `instructions` are `""` when falsy.
#[derive(Debug, Clone)]
pub struct Source<'a> {
    pub id: Option<Text<'a>>,
    pub name: Text<'a>,
    pub description: Text<'a>,
    pub instructions: Text<'a>,
}

/// A skill provided by the client. `description` and `location` are `""` when `None`.
#[derive(Debug, Clone)]
pub struct ClientSkill<'a> {
    pub name: Text<'a>,
    pub description: Text<'a>,
    pub location: Text<'a>,
}

/// The tool-usage block: `description` and `value`, `""` when `None`.
#[derive(Debug, Clone)]
pub struct ToolUsageRules<'a> {
    pub description: Text<'a>,
    pub value: Text<'a>,
}

/// Everything `Memory.compile` reads.
#[derive(Debug, Clone, Default)]
pub struct CompileInput<'a> {
    pub blocks: Vec<Block<'a>>,
    /// Already de-duplicated by label (first one wins), as Letta's validator leaves them.
    pub file_blocks: Vec<FileBlock<'a>>,
    /// The agent type, lower-cased with Python's `str.lower()`; `""` for `None`.
    pub agent_type: Text<'a>,
    /// `llm_config` is truthy and its `model_endpoint_type == "anthropic"`.
    pub anthropic: bool,
    pub git_enabled: bool,
    pub tool_usage_rules: Option<ToolUsageRules<'a>>,
    /// Empty when Python's `sources` was falsy.
    pub sources: Vec<Source<'a>>,
    pub max_files_open: Option<Int<'a>>,
}

/// Text a renderer copies without reading it: surrogatepass UTF-8, or a Python `str`
/// in its own width (the memory section put into a system message, a variable's value).
#[derive(Debug, Clone, Copy)]
pub enum Chars<'a> {
    Utf8(&'a [u8]),
    Native(Native<'a>),
}

impl<'a> Chars<'a> {
    pub fn is_empty(&self) -> bool {
        match self {
            Chars::Utf8(utf8) => utf8.is_empty(),
            Chars::Native(native) => native.is_empty(),
        }
    }

    /// Number of code points, as Python's `len(str)`.
    pub fn char_len(&self) -> usize {
        match self {
            Chars::Utf8(utf8) => text::char_len(utf8),
            Chars::Native(native) => native.len(),
        }
    }

    /// The lines, as Python's `s.split("\n")`, each in the text's own form.
    pub fn lines(self) -> impl Iterator<Item = Chars<'a>> {
        let (native, utf8) = match self {
            Chars::Native(n) => (Some(n.lines().map(Chars::Native)), None),
            Chars::Utf8(u) => (None, Some(text::lines(u).map(Chars::Utf8))),
        };
        native.into_iter().flatten().chain(utf8.into_iter().flatten())
    }

    /// Python's `s.rstrip("\n")`.
    pub fn rstrip_newlines(self) -> Chars<'a> {
        match self {
            Chars::Utf8(utf8) => Chars::Utf8(text::rstrip_newlines(utf8)),
            Chars::Native(native) => Chars::Native(native.rstrip_newlines()),
        }
    }
}

impl Default for Chars<'_> {
    fn default() -> Self {
        Chars::Utf8(b"")
    }
}
