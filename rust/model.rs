//! The inputs of every renderer, as plain Rust data borrowed from Python objects.
//!
//! Text is the bytes of a Python `str` encoded with `surrogatepass` (see `text`);
//! the binding fills these structs and applies Letta's `x or ""` defaults, so a
//! renderer never sees a Python `None`.

use std::borrow::Cow;

/// A Python `str` as surrogatepass UTF-8: borrowed from the Python object when possible.
pub type Text<'a> = Cow<'a, [u8]>;

/// An integer field rendered with f-string semantics (`str(limit)`).
#[derive(Debug, Clone, PartialEq)]
pub enum Int<'a> {
    Small(i64),
    /// Anything else that formats as an int (a huge int, `True`): already rendered.
    Rendered(Text<'a>),
}

/// A core-memory block. `label`, `value`, `description` are `""` when Python had `None`.
#[derive(Debug, Clone)]
pub struct Block<'a> {
    pub label: Text<'a>,
    pub value: Text<'a>,
    pub description: Text<'a>,
    /// `0` when Python had `None`.
    pub limit: Int<'a>,
    pub read_only: bool,
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
