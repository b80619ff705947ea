//! `Memory.compile` and the memory's other views, as Python functions.

use std::sync::Mutex;

use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PySet, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use super::cache::{Cache, Inputs};
use super::inputs;
use super::slots::SlotClass;
use super::strings::{render_str, render_str_hashed, render_strs, to_py_str, Site, Strings};
use crate::compile_cache::{self, Entry, Mode};
use crate::directories::SourceIds;
use crate::git_memory;
use crate::memory;
use crate::memory::Compile;
use crate::message_sections;
use crate::model::CompileInput;
use crate::out::Section;
use crate::skills::AvailableSkills;

/// `compile_with_fingerprint`'s result: a `memprompt.types.Compiled`, made once per render.
pub struct Detail(Py<PyAny>);

impl Detail {
    /// The `Compiled` of a text just rendered, built as its frozen dataclass's `__init__`
    /// would (`object.__setattr__` of each field, a slot each), without a Python call.
    fn of(text: &Bound<'_, PyString>, fingerprint: u128, sections: &[Section]) -> PyResult<Self> {
        let py = text.py();
        let spans = PyDict::new(py);
        for s in sections {
            spans.set_item(section_name(py, s.name), (s.start, s.end))?;
        }
        let class = SlotClass::get(py, &COMPILED, "Compiled", ["text", "fingerprint", "sections"])?;
        let values = [text.as_any().clone(), fingerprint.into_pyobject(py)?.into_any(), spans.into_any()];
        let compiled = class.new_instance(py, values)?;
        Ok(Detail(compiled.unbind()))
    }

    pub fn clone_ref(&self, py: Python<'_>) -> Self {
        Detail(self.0.clone_ref(py))
    }
}

/// A section's name as a Python `str`: the compile's and a message's own names are interned
/// once (their hashes kept), any other is made anew.
pub(super) fn section_name<'py>(py: Python<'py>, name: &'static str) -> Bound<'py, PyString> {
    static NAMES: PyOnceLock<Vec<(&'static str, Py<PyString>)>> = PyOnceLock::new();
    let names = NAMES.get_or_init(py, || {
        let all = memory::section::ALL.iter().chain(&message_sections::name::ALL);
        all.map(|&name| (name, PyString::intern(py, name).unbind())).collect()
    });
    match names.iter().find(|(known, _)| *known == name) {
        Some((_, interned)) => interned.bind(py).clone(),
        None => PyString::new(py, name),
    }
}

/// `memprompt.types.Compiled`, imported once.
static COMPILED: PyOnceLock<SlotClass<3>> = PyOnceLock::new();

/// What `compile` returns: the text, with its `Compiled` when asked for.
type Compiled<'py> = (Bound<'py, PyString>, Option<Detail>);

/// Reads one memory and the compile arguments, in the order Letta reads them.
fn read_input<'s, 'py>(strings: &'s Strings<'py>, given: &Inputs<'_, 'py>) -> PyResult<CompileInput<'s>> {
    strings.expect(expected_reads(given));
    let agent_type = inputs::agent_type(strings, given.agent_type)?;
    strings.end(Site::AgentType);
    let anthropic = match given.llm_config {
        Some(config) => inputs::is_anthropic(strings, config)?,
        None => false,
    };
    strings.end(Site::LlmConfig);
    // Letta never reads a react agent's blocks (a bad one is no error there), and git memory reads fewer fields.
    let blocks = if memory::is_react(&agent_type) {
        Vec::new()
    } else if given.git_enabled {
        inputs::git_blocks(strings, given.blocks)?
    } else {
        inputs::blocks(strings, given.blocks)?
    };
    let tool_usage_rules = match given.tool_usage_rules {
        Some(rules) if !rules.is_none() => Some(inputs::tool_usage_rules(strings, rules)?),
        _ => None,
    };
    strings.end(Site::ToolUsageRules);
    // Read only when directories render, as in Letta, and in the reference's order.
    let (sources, file_blocks, max_files_open) = match given.sources {
        Some(list) if strings.truth(Site::Sources, list)? => {
            let max_files_open = match given.max_files_open {
                Some(n) => {
                    strings.arg(Site::MaxFilesOpen, n);
                    strings.int_or_none(n, || "max_files_open".to_string())?
                }
                None => None,
            };
            let sources = inputs::sources(strings, list)?;
            let file_blocks =
                inputs::file_blocks(strings, given.file_blocks, &SourceIds::of(&sources, max_files_open.is_some()))?;
            (sources, file_blocks, max_files_open)
        }
        _ => (Vec::new(), Vec::new(), None),
    };
    Ok(CompileInput {
        blocks,
        file_blocks,
        agent_type,
        anthropic,
        git_enabled: given.git_enabled,
        tool_usage_rules,
        sources,
        max_files_open,
    })
}

/// How many values `read_input` reads, at most (an input that is not an exact list counts as empty:
/// asking it its length would run its code).
fn expected_reads(given: &Inputs<'_, '_>) -> usize {
    let len = |list: Option<&Bound<'_, PyAny>>| list.and_then(|l| l.cast_exact::<PyList>().ok()).map_or(0, |l| l.len());
    // The agent type, max_files_open, and the two fields of the tool usage rules.
    let arguments = 4;
    let directories = if len(given.sources) > 0 {
        inputs::FILE_BLOCK_READS * len(Some(given.file_blocks)) + inputs::SOURCE_READS * len(given.sources)
    } else {
        0
    };
    arguments + inputs::BLOCK_READS * len(Some(given.blocks)) + directories
}

/// Rust cannot render this input: the caller falls back to the reference.
fn needs_reference(input: &CompileInput) -> bool {
    input.git_enabled && git_memory::needs_reference_fallback(&input.blocks)
}

/// Compiles, reusing the cache's last result when the inputs provably did not change.
fn compile<'py>(
    py: Python<'py>,
    given: &Inputs<'_, 'py>,
    cache: Option<&Cache>,
    detail: bool,
) -> PyResult<Option<Compiled<'py>>> {
    // Read before the inputs: a write after this makes the stored result unprovable by count.
    let edits = compile_cache::edits();
    let take =
        |text: &Py<PyString>, found: Option<&Detail>| Some((text.bind(py).clone(), found.map(|d| d.clone_ref(py))));
    if let Some(found) = cache.and_then(|c| c.unchanged(edits, given, detail, take)) {
        return Ok(found);
    }
    let strings = Strings::recorded(py);
    let input = read_input(&strings, given)?;
    if needs_reference(&input) {
        return Ok(None);
    }
    let mode = Mode { anthropic: input.anthropic, git_enabled: given.git_enabled };
    if let (Some(cache), Some(reads)) = (cache, strings.reads()) {
        if let Some(found) = cache.same_reads(edits, given, mode, &reads, detail, take) {
            return Ok(found);
        }
    }
    let compile = Compile::prepare(&input).map_err(super::to_py_err)?;
    let (text, found) = if detail {
        let (text, sections, fingerprint) = render_str_hashed(py, &compile)?;
        let detail = Detail::of(&text, fingerprint, &sections)?;
        (text, Some(detail))
    } else {
        (render_str(py, &compile)?.0, None)
    };
    drop(compile);
    drop(input);
    if let (Some(cache), Some(reads)) = (cache, strings.into_reads()) {
        let detail = found.as_ref().map(|d| d.clone_ref(py));
        cache.store(edits, given, Entry { mode, reads, text: text.clone().unbind(), detail });
    }
    Ok(Some((text, found)))
}

/// The hand-off to the reference: a compile of the rare input that Rust leaves to
/// `memprompt.reference` (git-memory labels that name Letta's internal keys).
#[pyclass(module = "memprompt._core", frozen, get_all)]
pub struct ReferenceRender {
    /// The memory whose fields the reference renders.
    memory: Py<PyAny>,
    /// The reference `Memory`'s method that renders it.
    method: &'static str,
    /// The method's arguments, as the caller gave them.
    args: Py<PyTuple>,
}

/// The Python function that renders a `ReferenceRender` (registered by `memprompt.memory`).
static REFERENCE_RENDERER: Mutex<Option<Py<PyAny>>> = Mutex::new(None);

#[pymethods]
impl ReferenceRender {
    /// Its memory and arguments, for the garbage collector (frozen: a cycle through it is
    /// broken by clearing the memory or a list among the arguments).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.memory)?;
        visit.call(&self.args)
    }
}

impl ReferenceRender {
    fn new(memory: &Bound<'_, MemoryBase>, method: &'static str, args: Bound<'_, PyTuple>) -> Self {
        ReferenceRender { memory: memory.clone().into_any().unbind(), method, args: args.unbind() }
    }

    /// What the registered renderer returns for this hand-off.
    fn render(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        let renderer = lock_renderer().as_ref().map(|renderer| renderer.clone_ref(py));
        let renderer = renderer.ok_or_else(|| PyRuntimeError::new_err("no reference renderer: import memprompt"))?;
        renderer.bind(py).call1((self,))
    }
}

fn lock_renderer() -> std::sync::MutexGuard<'static, Option<Py<PyAny>>> {
    REFERENCE_RENDERER.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers the function that renders every `ReferenceRender` `MemoryBase.compile` meets.
#[pyfunction]
pub fn set_reference_renderer(renderer: Py<PyAny>) {
    let old = lock_renderer().replace(renderer);
    // Dropped after the lock is released: its finalizer may run Python code.
    drop(old);
}

/// The fields of a `Memory`, as Letta names them.
struct Fields {
    blocks: Py<PyAny>,
    file_blocks: Py<PyAny>,
    agent_type: Py<PyAny>,
    git_enabled: bool,
}

/// The Rust half of `memprompt.Memory`: its fields, `compile`, and the memory's last compile.
#[pyclass(module = "memprompt._core", subclass, frozen)]
pub struct MemoryBase {
    fields: Mutex<Fields>,
    cache: Cache,
}

impl MemoryBase {
    fn fields(&self) -> std::sync::MutexGuard<'_, Fields> {
        self.fields.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn load(&self, py: Python<'_>, field: fn(&Fields) -> &Py<PyAny>) -> Py<PyAny> {
        field(&self.fields()).clone_ref(py)
    }

    fn store(&self, field: fn(&mut Fields) -> &mut Py<PyAny>, value: Py<PyAny>) {
        let old = std::mem::replace(field(&mut self.fields()), value);
        // Dropped after the lock is released: its finalizer may run Python code that reads this memory.
        drop(old);
    }

    /// Compiles with this memory's fields; `None` when the reference must render.
    #[allow(clippy::too_many_arguments)]
    fn compile_fields<'py>(
        &self,
        py: Python<'py>,
        tool_usage_rules: Option<&Bound<'py, PyAny>>,
        sources: Option<&Bound<'py, PyAny>>,
        max_files_open: Option<&Bound<'py, PyAny>>,
        llm_config: Option<&Bound<'py, PyAny>>,
        detail: bool,
    ) -> PyResult<Option<Compiled<'py>>> {
        let (blocks, file_blocks, agent_type, git_enabled) = {
            let f = self.fields();
            (f.blocks.bind(py).clone(), f.file_blocks.bind(py).clone(), f.agent_type.bind(py).clone(), f.git_enabled)
        };
        let given = Inputs {
            blocks: &blocks,
            file_blocks: &file_blocks,
            agent_type: &agent_type,
            git_enabled,
            tool_usage_rules,
            sources,
            max_files_open,
            llm_config,
        };
        compile(py, &given, Some(&self.cache), detail)
    }
}

#[pymethods]
impl MemoryBase {
    #[new]
    #[pyo3(signature = (blocks, file_blocks=None, agent_type=None, git_enabled=None))]
    #[pyo3(text_signature = "(blocks, file_blocks=None, agent_type=None, git_enabled=False)")]
    fn new(
        py: Python<'_>,
        blocks: &Bound<'_, PyAny>,
        file_blocks: Option<&Bound<'_, PyAny>>,
        agent_type: Option<Py<PyAny>>,
        git_enabled: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let fields = Fields {
            blocks: blocks_list(blocks)?,
            file_blocks: first_of_each_label(py, file_blocks)?.into_any().unbind(),
            agent_type: agent_type.unwrap_or_else(|| py.None()),
            git_enabled: match git_enabled {
                Some(flag) => flag.is_truthy()?,
                None => false,
            },
        };
        Ok(MemoryBase { fields: Mutex::new(fields), cache: Cache::default() })
    }

    /// The core memory blocks.
    #[getter]
    fn blocks(&self, py: Python<'_>) -> Py<PyAny> {
        self.load(py, |f| &f.blocks)
    }

    #[setter]
    fn set_blocks(&self, blocks: Py<PyAny>) {
        self.store(|f| &mut f.blocks, blocks);
    }

    /// The file blocks of attached sources, the first of each label only (as Letta's validator keeps).
    #[getter]
    fn file_blocks(&self, py: Python<'_>) -> Py<PyAny> {
        self.load(py, |f| &f.file_blocks)
    }

    #[setter]
    fn set_file_blocks(&self, py: Python<'_>, file_blocks: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let kept = first_of_each_label(py, file_blocks)?.into_any().unbind();
        self.store(|f| &mut f.file_blocks, kept);
        Ok(())
    }

    /// The agent type: a str, an enum with a str value, or None.
    #[getter]
    fn agent_type(&self, py: Python<'_>) -> Py<PyAny> {
        self.load(py, |f| &f.agent_type)
    }

    #[setter]
    fn set_agent_type(&self, agent_type: Py<PyAny>) {
        self.store(|f| &mut f.agent_type, agent_type);
    }

    /// Whether the blocks render as git-backed memory.
    #[getter]
    fn git_enabled(&self) -> bool {
        self.fields().git_enabled
    }

    #[setter]
    fn set_git_enabled(&self, git_enabled: &Bound<'_, PyAny>) -> PyResult<()> {
        let git_enabled = git_enabled.is_truthy()?;
        self.fields().git_enabled = git_enabled;
        Ok(())
    }

    /// The memory section of the system prompt. `client_skills` is accepted and unused, as in Letta.
    #[pyo3(signature = (tool_usage_rules=None, sources=None, max_files_open=None, llm_config=None, client_skills=None))]
    fn compile<'py>(
        slf: &Bound<'py, Self>,
        tool_usage_rules: Option<&Bound<'py, PyAny>>,
        sources: Option<&Bound<'py, PyAny>>,
        max_files_open: Option<&Bound<'py, PyAny>>,
        llm_config: Option<&Bound<'py, PyAny>>,
        client_skills: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        match slf.get().compile_fields(py, tool_usage_rules, sources, max_files_open, llm_config, false)? {
            Some((text, _)) => Ok(text.into_any()),
            None => {
                let args = (tool_usage_rules, sources, max_files_open, llm_config, client_skills);
                ReferenceRender::new(slf, "compile", args.into_pyobject(py)?).render(py)
            }
        }
    }

    /// `compile`'s text with its fingerprint and section offsets, computed while rendering:
    /// a `memprompt.Compiled`, the same object again while nothing changed.
    #[pyo3(signature = (tool_usage_rules=None, sources=None, max_files_open=None, llm_config=None, client_skills=None))]
    fn compile_with_fingerprint<'py>(
        slf: &Bound<'py, Self>,
        tool_usage_rules: Option<&Bound<'py, PyAny>>,
        sources: Option<&Bound<'py, PyAny>>,
        max_files_open: Option<&Bound<'py, PyAny>>,
        llm_config: Option<&Bound<'py, PyAny>>,
        client_skills: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        match slf.get().compile_fields(py, tool_usage_rules, sources, max_files_open, llm_config, true)? {
            Some((_, Some(Detail(compiled)))) => Ok(compiled.into_bound(py)),
            // A compile asked for its detail returns it: without one, only the hand-off is left.
            _ => {
                let args = (tool_usage_rules, sources, max_files_open, llm_config, client_skills);
                ReferenceRender::new(slf, "compile_with_fingerprint", args.into_pyobject(py)?).render(py)
            }
        }
    }

    /// Forgets the last compile, so that the next one renders in full.
    fn clear_cache(&self) {
        self.cache.clear();
    }

    /// The fields and what the cache holds, for the garbage collector (a block may hold its memory).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // Not while another thread holds the lock: an edge not visited only keeps a cycle alive.
        let fields = match self.fields.try_lock() {
            Ok(fields) => Some(fields),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        if let Some(f) = fields {
            visit.call(&f.blocks)?;
            visit.call(&f.file_blocks)?;
            visit.call(&f.agent_type)?;
        }
        self.cache.visit(|held| held.visit(&visit), |detail| visit.call(&detail.0))
    }

    /// Breaks a cycle through this memory: its fields become None and its last compile is forgotten.
    fn __clear__(&self) {
        let old = Python::attach(|py| {
            let f = &mut *self.fields();
            [&mut f.blocks, &mut f.file_blocks, &mut f.agent_type].map(|field| std::mem::replace(field, py.None()))
        });
        self.cache.clear();
        // Dropped after the lock is released: a finalizer may read this memory.
        drop(old);
    }
}

/// `list(blocks)`, as Letta's `Memory` holds them.
fn blocks_list(blocks: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let list = PyList::empty(blocks.py());
    for block in blocks.try_iter()? {
        list.append(block?)?;
    }
    Ok(list.into_any().unbind())
}

/// The compiled memory section of any memory's fields, with no cache; `None` for the rare
/// git-memory input that the reference renders.
#[pyfunction]
#[pyo3(signature = (blocks, file_blocks, agent_type, git_enabled, tool_usage_rules=None, sources=None, max_files_open=None, llm_config=None))]
#[allow(clippy::too_many_arguments)]
pub fn compile_memory<'py>(
    py: Python<'py>,
    blocks: &Bound<'py, PyAny>,
    file_blocks: &Bound<'py, PyAny>,
    agent_type: &Bound<'py, PyAny>,
    git_enabled: bool,
    tool_usage_rules: Option<&Bound<'py, PyAny>>,
    sources: Option<&Bound<'py, PyAny>>,
    max_files_open: Option<&Bound<'py, PyAny>>,
    llm_config: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<Bound<'py, PyString>>> {
    let given =
        Inputs { blocks, file_blocks, agent_type, git_enabled, tool_usage_rules, sources, max_files_open, llm_config };
    Ok(compile(py, &given, None, false)?.map(|(text, _)| text))
}

/// Many memories compiled in parallel on Rust threads, in input order; `None` where the
/// reference must render (see `compile_memory`).
#[pyfunction]
#[pyo3(signature = (memories, tool_usage_rules=None, sources=None, max_files_open=None, llm_config=None))]
pub fn compile_many<'py>(
    py: Python<'py>,
    memories: &Bound<'py, PyAny>,
    tool_usage_rules: Option<&Bound<'py, PyAny>>,
    sources: Option<&Bound<'py, PyAny>>,
    max_files_open: Option<&Bound<'py, PyAny>>,
    llm_config: Option<&Bound<'py, PyAny>>,
) -> PyResult<Vec<Option<Bound<'py, PyString>>>> {
    let strings = Strings::new(py);
    let mut inputs = Vec::new();
    for memory in memories.try_iter()? {
        let memory = memory?;
        let given = Inputs {
            git_enabled: memory.getattr(intern!(py, "git_enabled"))?.is_truthy()?,
            blocks: &memory.getattr(intern!(py, "blocks"))?,
            file_blocks: &memory.getattr(intern!(py, "file_blocks"))?,
            agent_type: &memory.getattr(intern!(py, "agent_type"))?,
            tool_usage_rules,
            sources,
            max_files_open,
            llm_config,
        };
        let input = read_input(&strings, &given)?;
        inputs.push((!needs_reference(&input)).then_some(input));
    }
    let compiles = inputs.iter().map(|i| i.as_ref().map(Compile::prepare).transpose());
    let compiles = compiles.collect::<Result<Vec<_>, _>>().map_err(super::to_py_err)?;
    render_strs(py, &compiles)
}

/// `<available_skills>` from the skill blocks and the client's skills.
#[pyfunction]
#[pyo3(signature = (blocks, client_skills=None))]
pub fn compile_available_skills<'py>(
    py: Python<'py>,
    blocks: &Bound<'py, PyAny>,
    client_skills: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyString>> {
    let strings = Strings::new(py);
    let blocks = inputs::skill_blocks(&strings, blocks)?;
    let client_skills = match client_skills {
        Some(list) if list.is_truthy()? => inputs::client_skills(&strings, list)?,
        _ => Vec::new(),
    };
    render_str(py, &AvailableSkills::new(&blocks, &client_skills)).map(|(text, _)| text)
}

/// The `<memory_filesystem>` tree view of every block.
#[pyfunction]
#[pyo3(signature = (blocks, client_skills=None))]
pub fn render_memory_filesystem<'py>(
    py: Python<'py>,
    blocks: &Bound<'py, PyAny>,
    client_skills: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyString>> {
    let strings = Strings::new(py);
    let has_client_skills = || client_skills.map_or(Ok(false), |list| list.is_truthy());
    render_str(py, &inputs::tree_view(&strings, blocks, has_client_skills)?).map(|(text, _)| text)
}

/// The file blocks with later duplicates of a label dropped, as Letta's validator does.
#[pyfunction]
#[pyo3(signature = (file_blocks=None))]
pub fn first_of_each_label<'py>(
    py: Python<'py>,
    file_blocks: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let seen = PySet::empty(py)?;
    let kept = PyList::empty(py);
    // `file_blocks or []`, as Letta's validator reads it.
    let Some(file_blocks) = file_blocks else { return Ok(kept) };
    if !file_blocks.is_truthy()? {
        return Ok(kept);
    }
    for (i, block) in file_blocks.try_iter()?.enumerate() {
        let block = block?;
        let label = block.getattr(pyo3::intern!(py, "label"))?;
        // A label is str or None (the same TypeError as when the file block is rendered);
        // a str subclass counts as its plain text.
        let label = if label.is_none() || label.is_exact_instance_of::<PyString>() {
            label
        } else if let Ok(text) = label.cast::<PyString>() {
            to_py_str(py, Strings::new(py).text(text)?)?.into_any()
        } else {
            return Err(inputs::label_type_error("file block", i, &label));
        };
        if !seen.contains(&label)? {
            seen.add(&label)?;
            kept.append(block)?;
        }
    }
    Ok(kept)
}
