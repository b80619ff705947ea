//! Reading Letta-shaped Python objects (ours, Letta's pydantic ones, any with the
//! same attributes) into the renderers' input structs, with `getattr` as Letta reads them.

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::list::BoundListIterator;
use pyo3::types::{PyIterator, PyList, PyString};

use super::attr::Field;
use super::cpython::native_of;
use super::strings::{repr, type_error, Site, Strings};
use crate::directories::{FileReads, SourceIds};
use crate::git_memory::Reads;
use crate::model::{Block, Chars, ClientSkill, FileBlock, Int, Listed, Source, Text, ToolUsageRules};
use crate::tree_view::TreeView;

/// The items of a list of inputs, in order: an exact list read by index, as its own
/// iterator reads it (without that iterator's calls), anything else iterated.
pub enum Items<'py> {
    List(BoundListIterator<'py>),
    Other(Bound<'py, PyIterator>),
}

pub fn items<'py>(list: &Bound<'py, PyAny>) -> PyResult<Items<'py>> {
    match list.cast_exact::<PyList>() {
        Ok(list) => Ok(Items::List(list.clone().into_iter())),
        Err(_) => list.try_iter().map(Items::Other),
    }
}

impl<'py> Iterator for Items<'py> {
    type Item = PyResult<Bound<'py, PyAny>>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Items::List(items) => items.next().map(Ok),
            Items::Other(items) => items.next(),
        }
    }
}

/// Names a block in an error message: `block 3 ('human')`.
fn block_name(kind: &str, index: usize, obj: &Bound<'_, PyAny>) -> String {
    let label = obj
        .getattr(intern!(obj.py(), "label"))
        .ok()
        .filter(|l| l.is_instance_of::<PyString>())
        .map_or_else(|| "None".to_string(), |l| repr(&l));
    format!("{kind} {index} ({label})")
}

/// The error for a `label` that is neither str nor None: `file block 3 (None): label must be ...`.
pub fn label_type_error(kind: &str, index: usize, label: &Bound<'_, PyAny>) -> PyErr {
    type_error(format!("{kind} {index} (None): label"), "str or None", label)
}

super::attr::fields! {
    /// The fields `block` reads, made once for a list of blocks.
    BlockFields { label: "label", value: "value", description: "description", limit: "limit", read_only: "read_only" }
}

fn block<'s, 'py>(
    strings: &'s Strings<'py>,
    fields: &BlockFields<'py>,
    obj: &Bound<'py, PyAny>,
    kind: &str,
    index: usize,
) -> PyResult<Block<'s>> {
    let field = |name: &'static str| move || format!("{}: {name}", block_name(kind, index, obj));
    // Every field is read before any is checked, in Letta's order, so that a read that raises
    // comes first; a str is borrowed as soon as it is read (that runs no Python code).
    let label_obj = strings.attr(obj, &fields.label)?;
    let label = strings.checked_str(&label_obj)?;
    let value_obj = strings.attr(obj, &fields.value)?;
    let value = strings.checked_chars(&value_obj)?;
    let description_obj = strings.attr(obj, &fields.description)?;
    let description = strings.checked_str(&description_obj)?;
    let limit = strings.attr(obj, &fields.limit)?;
    let read_only = strings.attr_opt(obj, &fields.read_only)?;
    let bad = |name, obj| type_error(field(name)(), "str or None", obj);
    let label = label.ok_or_else(|| bad("label", &label_obj))?;
    let value = value.ok_or_else(|| bad("value", &value_obj))?;
    let description = description.ok_or_else(|| bad("description", &description_obj))?;
    let limit = strings.int_or_none(&limit, field("limit"))?.unwrap_or(Int::Small(0));
    let read_only = match read_only {
        Some(flag) => flag.is_truthy()?,
        None => false,
    };
    Ok(Block { label, value, description, limit, read_only })
}

super::attr::fields! {
    /// The fields `git_blocks` reads, made once for a list of blocks.
    GitBlockFields { label: "label", value: "value", description: "description" }
}

/// The blocks as Letta's git memory reads them (`git_memory::Reads`), in its order: every
/// label; the value of the first persona; then, block by block, the description and value of
/// the others it shows, their values checked only once all are read (Letta uses them last).
/// What is not read is `""` (a limit `0`, not read-only), so a bad field there is no error, as in Letta.
pub fn git_blocks<'s, 'py>(strings: &'s Strings<'py>, list: &Bound<'py, PyAny>) -> PyResult<Vec<Block<'s>>> {
    let fields = GitBlockFields::new(strings.py());
    let field = |i: usize, obj: &Bound<'py, PyAny>, name: &str| format!("{}: {name}", block_name("block", i, obj));
    let mut read = Vec::with_capacity(list.len().unwrap_or(0));
    for (i, obj) in items(list)?.enumerate() {
        let obj = obj?;
        let label = strings.str_or_none(&strings.attr(&obj, &fields.label)?, || field(i, &obj, "label"))?;
        read.push((obj, Block { label, ..Block::unread() }));
    }
    let mut persona_read = false;
    let reads: Vec<Reads> = read
        .iter()
        .map(|(_, b)| {
            let reads = Reads::of(&b.label, persona_read);
            persona_read |= reads == Reads::PersonaValue;
            reads
        })
        .collect();
    if let Some(i) = reads.iter().position(|r| *r == Reads::PersonaValue) {
        let (obj, block) = &mut read[i];
        block.value = strings.chars_or_none(&strings.attr(obj, &fields.value)?, || field(i, obj, "value"))?;
    }
    let mut values = Vec::new();
    for (i, ((obj, block), _)) in
        read.iter_mut().zip(&reads).enumerate().filter(|(_, (_, r))| **r == Reads::DescriptionAndValue)
    {
        let description = strings.attr(obj, &fields.description)?;
        block.description = strings.str_or_none(&description, || field(i, obj, "description"))?;
        values.push((i, strings.attr(obj, &fields.value)?));
    }
    for (i, value) in values {
        let (obj, block) = &mut read[i];
        block.value = strings.chars_or_none(&value, || field(i, obj, "value"))?;
    }
    strings.end(Site::Blocks);
    Ok(read.into_iter().map(|(_, block)| block).collect())
}

/// The values `block` reads of each block: label, value, description, limit, read_only.
pub const BLOCK_READS: usize = 5;

/// The values `file_blocks` reads of each file block: a block's, and its source_id.
pub const FILE_BLOCK_READS: usize = BLOCK_READS + 1;

/// The values `sources` reads of each source, at most: name, id, description, instructions.
pub const SOURCE_READS: usize = 4;

pub fn blocks<'s, 'py>(strings: &'s Strings<'py>, list: &Bound<'py, PyAny>) -> PyResult<Vec<Block<'s>>> {
    let fields = BlockFields::new(strings.py());
    let mut out = Vec::with_capacity(list.len().unwrap_or(0));
    for (i, obj) in items(list)?.enumerate() {
        out.push(block(strings, &fields, &obj?, "block", i)?);
    }
    strings.end(Site::Blocks);
    Ok(out)
}

super::attr::fields! {
    /// The fields the tree view and the skills listing read of each block.
    ListedFields { label: "label", description: "description" }
}

/// The tree view of the blocks in `list`, read as Letta reads them there: every label, in
/// list order, then `getattr(block, "description", None)` of each block the tree shows a
/// description of (`TreeView::described`), in list order. `has_client_skills` is asked
/// between the two, as Letta asks it before it reads a description.
pub fn tree_view<'s, 'py>(
    strings: &'s Strings<'py>,
    list: &Bound<'py, PyAny>,
    has_client_skills: impl FnOnce() -> PyResult<bool>,
) -> PyResult<TreeView<'s>> {
    let len = list.len().unwrap_or(0);
    let (mut labels, mut blocks) = (Vec::with_capacity(len), Vec::with_capacity(len));
    strings.expect(len);
    let fields = ListedFields::new(strings.py());
    for (i, obj) in items(list)?.enumerate() {
        let obj = obj?;
        let label = strings.attr(&obj, &fields.label)?;
        labels.push(strings.utf8_or_none(&label, || format!("{}: label", block_name("block", i, &obj)))?);
        blocks.push(obj);
    }
    strings.end(Site::Listed);
    let mut view = TreeView::of_labels(&labels, has_client_skills()?);
    for b in view.described() {
        let obj = &blocks[b];
        let description = match strings.attr_opt(obj, &fields.description)? {
            Some(d) => strings.utf8_or_none(&d, || format!("{}: description", block_name("block", b, obj)))?,
            None => b"",
        };
        view.describe(b, description);
    }
    Ok(view)
}

/// The blocks the skills listing shows, read as Letta reads them there: every label, and the
/// description of the first block of each skill name only, which is the one block of that name
/// returned (the listing shows no other). A label that names no new skill is not held.
pub fn skill_blocks<'s, 'py>(strings: &'s Strings<'py>, list: &Bound<'py, PyAny>) -> PyResult<Vec<Listed<'s>>> {
    let mut out = Vec::new();
    let mut seen = crate::skills::seen_names(0);
    let fields = ListedFields::new(strings.py());
    for (i, obj) in items(list)?.enumerate() {
        let obj = obj?;
        let Some(label_obj) = strings.attr_unless(&obj, &fields.label, names_no_skill)? else { continue };
        let (label, name) = match label_obj.cast::<PyString>() {
            Ok(s) => {
                use crate::skills::{block_skill_name, SKILL_LABEL_PREFIX};
                let new_name_len = |t: &[u8]| block_skill_name(t).filter(|n| !seen.contains(n)).map(<[u8]>::len);
                let Some(name_len) = strings.peek_text(s, new_name_len)? else { continue };
                let label = strings.text(s)?;
                // The name is the label's part after the prefix.
                (label, &label[SKILL_LABEL_PREFIX.len()..][..name_len])
            }
            Err(_) => return Err(type_error(format!("block {i} (None): label"), "str or None", &label_obj)),
        };
        seen.insert(name);
        let description = match strings.attr_opt(&obj, &fields.description)? {
            Some(d) => strings.utf8_or_none(&d, || format!("{}: description", block_name("block", i, &obj)))?,
            None => b"",
        };
        out.push(Listed { label, description });
    }
    strings.end(Site::Listed);
    Ok(out)
}

/// Whether a label names no skill without a look at its UTF-8: `None` (the label ""), or a
/// str whose first code points, in its own width, are not the skills prefix (most labels).
/// A str that cannot be made ready is not skipped: reading it raises.
fn names_no_skill(label: &Bound<'_, PyAny>) -> bool {
    use crate::skills::SKILL_LABEL_PREFIX;
    let Ok(s) = label.cast::<PyString>() else { return label.is_none() };
    // SAFETY: the code units of a live str, read before anything else runs.
    unsafe { native_of(s) }.is_ok_and(|native| !native.starts_with_ascii(SKILL_LABEL_PREFIX))
}

/// The file blocks as Letta's directories read them (`SourceIds::reads`): a `source_id`
/// only while a source has an id, a whole block only when that id is a listed source's, and
/// else a value only for the count of open files; what is not read is `""` (a limit `0`,
/// not read-only, no source), so a bad field there is no error, as in Letta.
pub fn file_blocks<'s, 'py>(
    strings: &'s Strings<'py>,
    list: &Bound<'py, PyAny>,
    ids: &SourceIds<'_>,
) -> PyResult<Vec<FileBlock<'s>>> {
    let (fields, source_id_field) = (BlockFields::new(strings.py()), Field::new(intern!(strings.py(), "source_id")));
    let mut out = Vec::with_capacity(list.len().unwrap_or(0));
    for (i, obj) in items(list)?.enumerate() {
        let obj = &obj?;
        let field = |name: &'static str| move || format!("{}: {name}", block_name("file block", i, obj));
        let source_id = match ids.reads_source_id() {
            true => match strings.attr_opt(obj, &source_id_field)? {
                Some(id) => strings.optional_str(&id, field("source_id"))?,
                None => None,
            },
            false => None,
        };
        let block = match ids.reads(source_id.as_deref()) {
            FileReads::Whole => block(strings, &fields, obj, "file block", i)?,
            FileReads::Value => {
                let value = match strings.attr_opt(obj, &fields.value)? {
                    Some(v) => strings.chars_or_none(&v, field("value"))?,
                    None => Chars::default(),
                };
                Block { value, ..Block::unread() }
            }
            FileReads::Nothing => Block::unread(),
        };
        out.push(FileBlock { block, source_id });
    }
    strings.end(Site::FileBlocks);
    Ok(out)
}

/// `getattr(obj, name, None)`, rendered with f-string semantics when truthy, else `""`.
fn truthy_format<'s, 'py>(
    strings: &'s Strings<'py>,
    obj: &Bound<'py, PyAny>,
    field: &Field<'py>,
) -> PyResult<Text<'s>> {
    match strings.attr_opt(obj, field)? {
        Some(v) if v.is_truthy()? => strings.format(&v),
        _ => Ok(Text::from(b"")),
    }
}

super::attr::fields! {
    /// The fields `sources` reads of each source.
    SourceFields { name: "name", id: "id", description: "description", instructions: "instructions" }
}

pub fn sources<'s, 'py>(strings: &'s Strings<'py>, list: &Bound<'py, PyAny>) -> PyResult<Vec<Source<'s>>> {
    let len = list.len().unwrap_or(0);
    let mut out = Vec::with_capacity(len);
    strings.expect(len.saturating_mul(3));
    let fields = SourceFields::new(strings.py());
    for (i, obj) in items(list)?.enumerate() {
        let obj = obj?;
        let name_obj = strings.attr_opt(&obj, &fields.name)?;
        let name = match &name_obj {
            Some(n) => strings.format(n)?,
            None => Text::from(&b""[..]),
        };
        let id = match strings.attr_opt(&obj, &fields.id)? {
            Some(id) => strings.optional_str(&id, || {
                let name = name_obj.as_ref().map_or_else(|| "''".into(), repr);
                format!("source {i} ({name}): id")
            })?,
            None => None,
        };
        out.push(Source {
            id,
            name,
            description: truthy_format(strings, &obj, &fields.description)?,
            instructions: truthy_format(strings, &obj, &fields.instructions)?,
        });
    }
    strings.end(Site::Sources);
    Ok(out)
}

super::attr::fields! {
    /// The fields `client_skills` reads of each skill.
    ClientSkillFields { name: "name", description: "description", location: "location" }
}

pub fn client_skills<'s, 'py>(strings: &'s Strings<'py>, list: &Bound<'py, PyAny>) -> PyResult<Vec<ClientSkill<'s>>> {
    let len = list.len().unwrap_or(0);
    let mut out = Vec::with_capacity(len);
    strings.expect(len.saturating_mul(3));
    let fields = ClientSkillFields::new(strings.py());
    for (i, obj) in items(list)?.enumerate() {
        let obj = obj?;
        let name_obj = strings.attr(&obj, &fields.name)?;
        let name = match strings.try_text(&name_obj)? {
            Some(t) => Text::from(t),
            None => return Err(type_error(format!("client skill {i}: name"), "str", &name_obj)),
        };
        let field = |f: &'static str| move || format!("client skill {i}: {f}");
        out.push(ClientSkill {
            name,
            description: strings.str_or_none(&strings.attr(&obj, &fields.description)?, field("description"))?,
            location: strings.str_or_none(&strings.attr(&obj, &fields.location)?, field("location"))?,
        });
    }
    strings.end(Site::ClientSkills);
    Ok(out)
}

pub fn tool_usage_rules<'s, 'py>(strings: &'s Strings<'py>, obj: &Bound<'py, PyAny>) -> PyResult<ToolUsageRules<'s>> {
    let py = strings.py();
    let field = |name: &'py Bound<'py, PyString>| -> PyResult<Text<'s>> {
        match strings.attr_opt(obj, &Field::new(name))? {
            Some(v) => strings.str_or_none(&v, || format!("tool_usage_rules: {name}")),
            None => Ok(Text::from(b"")),
        }
    };
    Ok(ToolUsageRules { description: field(intern!(py, "description"))?, value: field(intern!(py, "value"))? })
}

/// The agent type lower-cased with Python's own `str.lower()`: `.value` of an enum, a str, or `None`.
pub fn agent_type<'s, 'py>(strings: &'s Strings<'py>, obj: &Bound<'py, PyAny>) -> PyResult<Text<'s>> {
    let py = strings.py();
    // An exact str or None has no `.value`; asking would raise and catch an AttributeError.
    let raw = if obj.is_exact_instance_of::<PyString>() {
        strings.arg(Site::AgentType, obj);
        obj.clone()
    } else if obj.is_none() {
        return Ok(Text::from(b""));
    } else {
        match strings.attr_opt(obj, &Field::new(intern!(py, "value")))? {
            Some(value) => value,
            None if !strings.truth(Site::AgentType, obj)? => return Ok(Text::from(b"")),
            None => {
                strings.arg(Site::AgentType, obj);
                obj.clone()
            }
        }
    };
    let Ok(s) = raw.cast::<PyString>() else {
        return Err(PyTypeError::new_err(format!(
            "agent_type must be a str, an enum with a str value, or None, not {}",
            obj.get_type().name()?
        )));
    };
    if s.to_str().is_ok_and(|t| !t.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii())) {
        // Already lower case ASCII: `str.lower()` would return the same text.
        return Ok(Text::from(strings.text(s)?));
    }
    let lower = s.call_method0(intern!(py, "lower"))?.cast_into::<PyString>()?;
    Ok(Text::from(strings.text(&lower)?))
}

/// Letta's test: `llm_config` is truthy, has `model_endpoint_type`, and it `== "anthropic"`;
/// the truth value and the value compared are recorded (a value of no immutable type is no
/// proof: its `__eq__` may answer otherwise next time).
pub fn is_anthropic<'py>(strings: &Strings<'py>, llm_config: &Bound<'py, PyAny>) -> PyResult<bool> {
    let py = strings.py();
    if llm_config.is_none() || !strings.truth(Site::LlmConfig, llm_config)? {
        return Ok(false);
    }
    match strings.attr_opt(llm_config, &Field::new(intern!(py, "model_endpoint_type")))? {
        Some(endpoint) => endpoint.eq(intern!(py, "anthropic")),
        None => Ok(false),
    }
}
