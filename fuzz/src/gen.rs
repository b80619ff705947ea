//! Structured inputs built from the fuzzer's bytes with `arbitrary`.
//!
//! Every text is what a Python `str` becomes at the binding: its bytes in UTF-8 with
//! `surrogatepass` (lone surrogates included). Texts are made of pieces: the traps of
//! Python's `str` (lone surrogates, NUL, every `isspace` character, astral code points),
//! the strings that look like memprompt's own markup, or any code point; now and then a
//! text is repeated to grow large. Labels are paths built from a small pool of parts (so
//! they collide), sometimes thousands of parts deep.

use arbitrary::{Arbitrary, Result, Unstructured};
use memprompt::model::{Block, Chars, ClientSkill, CompileInput, FileBlock, Int, Source, ToolUsageRules};

/// The largest text a generator builds (the fuzzer stays fast; tests/test_extremes.py goes big).
pub const MAX_TEXT: usize = 1 << 15;

/// Pieces that are traps for a port of Python's string code, or look like the prompt's own markup.
pub const TRICKS: &[&str] = &[
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    "\0",
    "\u{1f600}",
    "\u{10ffff}",
    "\u{2192}",
    "/",
    "//",
    "<",
    ">",
    "\"",
    "{",
    "}",
    "{}",
    "{CORE_MEMORY}",
    "\n\n<memory_metadata>",
    "<memory_metadata>",
    "</memory_metadata>",
    "<memory_blocks>",
    "</memory_blocks>",
    "</value>",
    "<self>",
    "</memory>",
    "<tool_usage_rules>",
    "</directories>",
    ".",
    "..",
    "SKILL",
    "SKILL.md",
    "\u{e9}",
    "\u{130}",
    "\u{df}",
    "\u{fb03}",
    "a",
    "b",
    "Z",
    "0",
    " ",
    "\t",
    "\u{85}",
    "\u{1c}",
    "\u{1f}",
    "\u{a0}",
    "\u{2028}",
    "\u{3000}",
    "\u{feff}",
    "skills/",
    "system/",
    "/SKILL.md",
    "${MEMORY_DIR}",
    "1\u{2192} ",
    "\u{251c}\u{2500}\u{2500} ",
];

/// Appends code point `cp` in generalized UTF-8: surrogates as three bytes, as `surrogatepass` writes them.
pub fn push_code_point(buf: &mut Vec<u8>, cp: u32) {
    match cp {
        0..=0x7f => buf.push(cp as u8),
        0x80..=0x7ff => buf.extend_from_slice(&[0xc0 | (cp >> 6) as u8, 0x80 | (cp & 0x3f) as u8]),
        0x800..=0xffff => {
            buf.extend_from_slice(&[0xe0 | (cp >> 12) as u8, 0x80 | ((cp >> 6) & 0x3f) as u8, 0x80 | (cp & 0x3f) as u8])
        }
        _ => buf.extend_from_slice(&[
            0xf0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3f) as u8,
            0x80 | ((cp >> 6) & 0x3f) as u8,
            0x80 | (cp & 0x3f) as u8,
        ]),
    }
}

/// `n` items, `n` at most `max`.
pub fn vec_of<'a, T>(
    u: &mut Unstructured<'a>,
    max: usize,
    item: impl Fn(&mut Unstructured<'a>) -> Result<T>,
) -> Result<Vec<T>> {
    let n = u.int_in_range(0..=max)?;
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        if u.is_empty() {
            break;
        }
        items.push(item(u)?);
    }
    Ok(items)
}

pub fn pick<'p>(u: &mut Unstructured<'_>, pool: &[&'p str]) -> Result<&'p str> {
    Ok(pool[u.choose_index(pool.len())?])
}

/// A text (surrogatepass UTF-8).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text(pub Vec<u8>);

impl Text {
    pub fn build(u: &mut Unstructured<'_>, max_pieces: usize) -> Result<Text> {
        let mut buf = Vec::new();
        let pieces = u.int_in_range(0..=max_pieces)?;
        for _ in 0..pieces {
            let kind: u8 = u.arbitrary()?;
            match kind {
                0..=99 => buf.extend_from_slice(pick(u, TRICKS)?.as_bytes()),
                100..=199 => buf.push(u.int_in_range(0x20..=0x7e)?),
                200..=251 => {
                    let cp: u32 = u.arbitrary()?;
                    push_code_point(&mut buf, cp % 0x11_0000);
                }
                252..=253 => push_code_point(&mut buf, u.int_in_range(0xd800..=0xdfff)?),
                _ => {
                    // Grow: the text so far, repeated.
                    let times = u.int_in_range(2..=1000usize)?;
                    if !buf.is_empty() && buf.len() * times <= MAX_TEXT {
                        buf = buf.repeat(times);
                    }
                }
            }
            if buf.len() > MAX_TEXT {
                break;
            }
        }
        Ok(Text(buf))
    }

    pub fn cow(&self) -> memprompt::model::Text<'_> {
        memprompt::model::Text::from(&self.0[..])
    }
}

impl<'a> Arbitrary<'a> for Text {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Text::build(u, 12)
    }
}

/// One of `pool`, or (one time in `one_in`) any text.
fn pooled(u: &mut Unstructured<'_>, pool: &[&str], one_in: u8) -> Result<Text> {
    if u.int_in_range(0..=one_in - 1)? == 1 {
        return Text::build(u, 6);
    }
    Ok(Text(pick(u, pool)?.as_bytes().to_vec()))
}

const LABEL_PARTS: &[&str] = &[
    "system",
    "persona",
    "human",
    "skills",
    "SKILL",
    "SKILL.md",
    "notes",
    "a",
    "b",
    "a.md",
    "b.md",
    "x",
    "x.md",
    ".",
    "..",
    "",
    " ",
    "system ",
    "Skills",
    "projects",
    "__value__",
    "__description__",
    "__label__",
    "__block__",
];
const LABEL_PREFIXES: &[&str] = &["", "", "", "system/", "system/", "skills/", "/", "system//", "skills//"];
const LABEL_SUFFIXES: &[&str] = &["", "", "", "/", "//"];
const FIXED_LABELS: &[&str] = &[
    "persona",
    "human",
    "system",
    "system/human",
    "system/persona",
    "system/persona/extra",
    "system/",
    "system//persona",
    "/system/human",
    "skills",
    "skills/",
    "skills/x",
    "skills/x/SKILL",
    "skills/x/SKILL/more",
    "skills//SKILL",
    "skills/x/notes",
    "/",
    "//",
    "",
    "notes/x",
    "notes/x.md/y",
    "x",
    "x.md/y",
    "x.md/y/z",
];

/// A block label: mostly a path of pooled parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Label(pub Text);

impl<'a> Arbitrary<'a> for Label {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let kind = u.int_in_range(0..=63u8)?;
        let text = match kind {
            0..=3 => Text::build(u, 8)?,
            4..=19 => Text(pick(u, FIXED_LABELS)?.as_bytes().to_vec()),
            20 => {
                // Deep: one part, hundreds of times, rarely thousands (git memory and the
                // tree view indent every level, so their output grows with the square;
                // tests/test_extremes.py renders 10,000 levels).
                let prefix = pick(u, LABEL_PREFIXES)?;
                let part = pick(u, LABEL_PARTS)?;
                let most = if u.ratio(1, 8)? { 1_500usize } else { 150 };
                let times = u.int_in_range(1..=most)?;
                let mut s = prefix.as_bytes().to_vec();
                for i in 0..times {
                    if i > 0 {
                        s.push(b'/');
                    }
                    s.extend_from_slice(part.as_bytes());
                }
                Text(s)
            }
            _ => {
                let mut s = pick(u, LABEL_PREFIXES)?.as_bytes().to_vec();
                let parts = u.int_in_range(1..=5)?;
                for i in 0..parts {
                    if i > 0 {
                        s.extend_from_slice(if u.ratio(1, 8)? { b"//" } else { b"/" });
                    }
                    if u.ratio(1, 8)? {
                        s.extend_from_slice(&Text::build(u, 3)?.0);
                    } else {
                        s.extend_from_slice(pick(u, LABEL_PARTS)?.as_bytes());
                    }
                }
                s.extend_from_slice(pick(u, LABEL_SUFFIXES)?.as_bytes());
                Text(s)
            }
        };
        Ok(Label(text))
    }
}

/// An int field: mostly small, sometimes any i64, sometimes beyond i64 (rendered as its digits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FInt {
    Small(i64),
    Big(Vec<u8>),
}

impl<'a> Arbitrary<'a> for FInt {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match u.int_in_range(0..=9u8)? {
            0 => FInt::Small(u.arbitrary()?),
            1 => {
                let mut digits = Vec::new();
                if u.arbitrary()? {
                    digits.push(b'-');
                }
                digits.push(u.int_in_range(b'1'..=b'9')?);
                for _ in 0..u.int_in_range(18..=40)? {
                    digits.push(u.int_in_range(b'0'..=b'9')?);
                }
                FInt::Big(digits)
            }
            _ => FInt::Small(u.int_in_range(-3..=200_000)?),
        })
    }
}

impl FInt {
    pub fn int(&self) -> Int<'_> {
        match self {
            FInt::Small(n) => Int::Small(*n),
            FInt::Big(digits) => Int::Rendered(Box::new(memprompt::model::Text::from(&digits[..]))),
        }
    }
}

#[derive(Debug, Clone, Arbitrary)]
pub struct FBlock {
    pub label: Label,
    pub value: Text,
    pub description: Text,
    pub limit: FInt,
    pub read_only: bool,
}

impl FBlock {
    pub fn block(&self) -> Block<'_> {
        Block {
            label: self.label.0.cow(),
            value: Chars::Utf8(&self.value.0),
            description: self.description.cow(),
            limit: self.limit.int(),
            read_only: self.read_only,
        }
    }
}

pub fn blocks(list: &[FBlock]) -> Vec<Block<'_>> {
    list.iter().map(FBlock::block).collect()
}

const SOURCE_IDS: &[&str] = &["source-1", "source-2", "source-3"];
const FILE_LABELS: &[&str] = &["notes.txt", "docs/a.md", "f", "", "g"];

#[derive(Debug, Clone)]
pub struct FFileBlock {
    pub block: FBlock,
    pub source_id: Option<Text>,
}

impl<'a> Arbitrary<'a> for FFileBlock {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut block = FBlock::arbitrary(u)?;
        block.label = Label(pooled(u, FILE_LABELS, 4)?);
        let source_id = if u.ratio(1, 6)? { None } else { Some(pooled(u, SOURCE_IDS, 5)?) };
        Ok(FFileBlock { block, source_id })
    }
}

#[derive(Debug, Clone)]
pub struct FSource {
    pub id: Option<Text>,
    pub name: Text,
    pub description: Text,
    pub instructions: Text,
}

impl<'a> Arbitrary<'a> for FSource {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let id = if u.ratio(1, 5)? { None } else { Some(pooled(u, SOURCE_IDS, 6)?) };
        Ok(FSource { id, name: Text::build(u, 5)?, description: Text::build(u, 4)?, instructions: Text::build(u, 4)? })
    }
}

impl FSource {
    pub fn source(&self) -> Source<'_> {
        Source {
            id: self.id.as_ref().map(Text::cow),
            name: self.name.cow(),
            description: self.description.cow(),
            instructions: self.instructions.cow(),
        }
    }
}

const SKILL_NAMES: &[&str] = &["x", "y", "b", "a/b", "a/x", "..", ".", "", "skills", "SKILL", "SKILL.md"];
const SKILL_ROOTS: &[&str] =
    &["${MEMORY_DIR}/skills", "/abs/skills", "rel", "", "/", "//", "../up", "a/../b", "./x", "~", "../../../../../.."];
const LOCATION_PARTS: &[&str] = &["..", ".", "", "skills", "x", "a", "b", "SKILL.md", "SKILL", "${MEMORY_DIR}", " "];
const FIXED_LOCATIONS: &[&str] = &["", "   ", "/SKILL.md", "SKILL.md", "//SKILL.md"];

#[derive(Debug, Clone)]
pub struct FSkill {
    pub name: Text,
    pub description: Text,
    pub location: Text,
}

impl<'a> Arbitrary<'a> for FSkill {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let name = pooled(u, SKILL_NAMES, 4)?;
        let description = Text::build(u, 4)?;
        let root = pick(u, SKILL_ROOTS)?.as_bytes();
        let last = name.0.rsplit(|&b| b == b'/').next().unwrap_or(b"").to_vec();
        let mut location = Vec::new();
        match u.int_in_range(0..=5u8)? {
            0 => location.extend_from_slice(pick(u, FIXED_LOCATIONS)?.as_bytes()),
            1 => location = Text::build(u, 6)?.0,
            2 | 3 => {
                location.extend_from_slice(root);
                location.push(b'/');
                location.extend_from_slice(&last);
                location.extend_from_slice(b"/SKILL.md");
            }
            4 => {
                location.extend_from_slice(root);
                location.push(b'/');
                location.extend_from_slice(pick(u, &["x", "y", "b", "SKILL.md", ".."])?.as_bytes());
            }
            _ => {
                location.extend_from_slice(pick(u, &["", "/", "//"])?.as_bytes());
                for i in 0..u.int_in_range(1..=5)? {
                    if i > 0 {
                        location.push(b'/');
                    }
                    if u.ratio(1, 4)? {
                        location.extend_from_slice(&name.0);
                    } else {
                        location.extend_from_slice(pick(u, LOCATION_PARTS)?.as_bytes());
                    }
                }
                if u.arbitrary()? {
                    location.extend_from_slice(b"/SKILL.md");
                }
            }
        }
        let pad = pick(u, &["", "", " ", "\t\n", "\u{1f}"])?.as_bytes();
        let location = [pad, &location[..], pad].concat();
        Ok(FSkill { name, description, location: Text(location) })
    }
}

impl FSkill {
    pub fn skill(&self) -> ClientSkill<'_> {
        ClientSkill { name: self.name.cow(), description: self.description.cow(), location: self.location.cow() }
    }
}

#[derive(Debug, Clone, Arbitrary)]
pub struct FToolUsage {
    pub description: Text,
    pub value: Text,
}

/// Agent types, already lower-cased as the binding hands them over.
pub const AGENT_TYPES: &[&str] = &[
    "",
    "memgpt_agent",
    "memgpt_v2_agent",
    "letta_v1_agent",
    "sleeptime_agent",
    "react_agent",
    "workflow_agent",
    "split_thread_agent",
    "voice_convo_agent",
    "voice_sleeptime_agent",
];

/// Everything `Memory.compile` reads.
#[derive(Debug, Clone)]
pub struct FCompile {
    pub blocks: Vec<FBlock>,
    pub file_blocks: Vec<FFileBlock>,
    pub agent_type: &'static str,
    pub anthropic: bool,
    pub git_enabled: bool,
    pub tool_usage_rules: Option<FToolUsage>,
    pub sources: Vec<FSource>,
    pub max_files_open: Option<FInt>,
    /// Also compile copies in parallel with `batch::map` (one time in sixteen).
    pub batch: bool,
}

impl<'a> Arbitrary<'a> for FCompile {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let agent_type = pick(u, AGENT_TYPES)?;
        let anthropic = u.arbitrary()?;
        let git_enabled = u.ratio(1, 3)?;
        let tool_usage_rules = if u.ratio(1, 3)? { Some(FToolUsage::arbitrary(u)?) } else { None };
        let max_files_open = if u.arbitrary()? { Some(FInt::arbitrary(u)?) } else { None };
        let batch = u.ratio(1, 16)?;
        let sources = vec_of(u, 4, FSource::arbitrary)?;
        let file_blocks = vec_of(u, 8, FFileBlock::arbitrary)?;
        let blocks = vec_of(u, 24, FBlock::arbitrary)?;
        Ok(FCompile {
            blocks,
            file_blocks,
            agent_type,
            anthropic,
            git_enabled,
            tool_usage_rules,
            sources,
            max_files_open,
            batch,
        })
    }
}

impl FCompile {
    /// The file blocks Letta's validator keeps: the first of each label.
    pub fn kept_file_blocks(&self) -> Vec<&FFileBlock> {
        let mut seen = std::collections::HashSet::new();
        self.file_blocks.iter().filter(|f| seen.insert(&f.block.label.0 .0)).collect()
    }

    pub fn input(&self) -> CompileInput<'_> {
        CompileInput {
            blocks: blocks(&self.blocks),
            file_blocks: self
                .kept_file_blocks()
                .into_iter()
                .map(|f| FileBlock { block: f.block.block(), source_id: f.source_id.as_ref().map(Text::cow) })
                .collect(),
            agent_type: memprompt::model::Text::from(self.agent_type.as_bytes()),
            anthropic: self.anthropic,
            git_enabled: self.git_enabled,
            tool_usage_rules: self
                .tool_usage_rules
                .as_ref()
                .map(|r| ToolUsageRules { description: r.description.cow(), value: r.value.cow() }),
            sources: self.sources.iter().map(FSource::source).collect(),
            max_files_open: self.max_files_open.as_ref().map(FInt::int),
        }
    }
}
