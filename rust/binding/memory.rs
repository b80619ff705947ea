//! `Memory.compile` and the memory's other views, as Python functions.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyList, PySet, PyString};

use super::inputs;
use super::strings::{to_py_str, Reads, Strings};
use crate::error::RenderResult;
use crate::fingerprint::fingerprint;
use crate::model::{Block, CompileInput};
use crate::out::Out;
use crate::text::char_offsets;
use crate::{git_memory, memory, skills, tree_view};

/// A first guess at the output size, so the buffer rarely grows.
fn capacity(blocks: &[Block]) -> usize {
    blocks.iter().map(|b| b.value.len() + b.description.len() + 2 * b.label.len() + 160).sum::<usize>() + 256
}

/// Renders into a fresh buffer and hands the text to Python.
fn finish<'py>(py: Python<'py>, capacity: usize, render: impl FnOnce(&mut Out) -> RenderResult) -> PyResult<Bound<'py, PyString>> {
    let mut out = Out::with_capacity(capacity);
    render(&mut out).map_err(super::to_py_err)?;
    to_py_str(py, &out.buf)
}

/// The fingerprint and the code-point spans of the sections of a compiled memory.
#[derive(Clone)]
struct Detail {
    fingerprint: u128,
    sections: Vec<(&'static str, usize, usize)>,
}

impl Detail {
    fn of(out: &Out) -> Self {
        let offsets: Vec<usize> = out.sections.iter().flat_map(|s| [s.start, s.end]).collect();
        let chars = char_offsets(&out.buf, &offsets);
        let sections = out.sections.iter().zip(chars.chunks(2)).map(|(s, c)| (s.name, c[0], c[1])).collect();
        Detail { fingerprint: fingerprint(&out.buf), sections }
    }
}

/// The last compile of one `Memory`: reused while every input is the very same object.
struct Entry {
    anthropic: bool,
    git_enabled: bool,
    reads: Reads,
    text: Py<PyString>,
    detail: Option<Detail>,
}

/// Remembers a memory's last compile; a `Memory` owns one.
#[pyclass(module = "memprompt._core", frozen)]
#[derive(Default)]
pub struct CompileCache {
    // Locked only around pointer comparisons and stores, never across a call into Python.
    entry: Mutex<Option<Entry>>,
}

#[pymethods]
impl CompileCache {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Forgets the last compile.
    fn clear(&self) {
        *self.lock() = None;
    }
}

impl CompileCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Entry>> {
        self.entry.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lookup(&self, py: Python<'_>, anthropic: bool, git_enabled: bool, reads: &Reads, detail: bool) -> Option<(Py<PyString>, Option<Detail>)> {
        let entry = self.lock();
        let e = entry.as_ref()?;
        let hit = e.anthropic == anthropic && e.git_enabled == git_enabled && (!detail || e.detail.is_some()) && e.reads.same_as(reads);
        hit.then(|| (e.text.clone_ref(py), e.detail.clone()))
    }
}

/// What `compile_memory` returns: the text, with its fingerprint and sections when asked for.
type Compiled<'py> = (Bound<'py, PyString>, Option<(u128, Vec<(&'static str, usize, usize)>)>);

#[allow(clippy::too_many_arguments)]
fn compile<'py>(
    py: Python<'py>,
    blocks: &Bound<'py, PyAny>,
    file_blocks: &Bound<'py, PyAny>,
    agent_type: &Bound<'py, PyAny>,
    git_enabled: bool,
    tool_usage_rules: Option<&Bound<'py, PyAny>>,
    sources: Option<&Bound<'py, PyAny>>,
    max_files_open: Option<&Bound<'py, PyAny>>,
    llm_config: Option<&Bound<'py, PyAny>>,
    cache: Option<&CompileCache>,
    detail: bool,
) -> PyResult<Option<Compiled<'py>>> {
    let strings = Strings::new(py);
    let agent_type = inputs::agent_type(&strings, agent_type)?;
    let anthropic = match llm_config {
        Some(config) => inputs::is_anthropic(config)?,
        None => false,
    };
    let blocks = inputs::blocks(&strings, blocks)?;
    let tool_usage_rules = match tool_usage_rules {
        Some(rules) if !rules.is_none() => Some(inputs::tool_usage_rules(&strings, rules)?),
        _ => None,
    };
    strings.list_end();
    let (sources, file_blocks) = match sources {
        Some(list) if list.is_truthy()? => (inputs::sources(&strings, list)?, inputs::file_blocks(&strings, file_blocks)?),
        _ => (Vec::new(), Vec::new()),
    };
    let max_files_open = match max_files_open {
        Some(n) => {
            strings.arg(n);
            strings.int_or_none(n, || "max_files_open".to_string())?
        }
        None => None,
    };
    let input = CompileInput { blocks, file_blocks, agent_type, anthropic, git_enabled, tool_usage_rules, sources, max_files_open };
    if input.git_enabled && git_memory::needs_reference_fallback(&input.blocks) {
        return Ok(None);
    }
    if let (Some(cache), Some(reads)) = (cache, strings.reads()) {
        if let Some((text, found)) = cache.lookup(py, anthropic, git_enabled, &reads, detail) {
            return Ok(Some((text.into_bound(py), found.map(|d| (d.fingerprint, d.sections)))));
        }
    }
    let mut out = Out::with_capacity(capacity(&input.blocks));
    memory::compile(&mut out, &input).map_err(super::to_py_err)?;
    let text = to_py_str(py, &out.buf)?;
    let found = detail.then(|| Detail::of(&out));
    drop(input);
    if let (Some(cache), Some(reads)) = (cache, strings.into_reads()) {
        *cache.lock() = Some(Entry { anthropic, git_enabled, reads, text: text.clone().unbind(), detail: found.clone() });
    }
    Ok(Some((text, found.map(|d| (d.fingerprint, d.sections)))))
}

/// The compiled memory section; `None` for the rare git-memory input that the reference renders.
#[pyfunction]
#[pyo3(signature = (blocks, file_blocks, agent_type, git_enabled, tool_usage_rules=None, sources=None, max_files_open=None, llm_config=None, cache=None))]
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
    cache: Option<&Bound<'py, CompileCache>>,
) -> PyResult<Option<Bound<'py, PyString>>> {
    let cache = cache.map(|c| c.get());
    let compiled = compile(py, blocks, file_blocks, agent_type, git_enabled, tool_usage_rules, sources, max_files_open, llm_config, cache, false)?;
    Ok(compiled.map(|(text, _)| text))
}

/// `(text, fingerprint, [(section, start, end), ...])`, offsets in code points; `None` as above.
#[pyfunction]
#[pyo3(signature = (blocks, file_blocks, agent_type, git_enabled, tool_usage_rules=None, sources=None, max_files_open=None, llm_config=None, cache=None))]
#[allow(clippy::too_many_arguments)]
pub fn compile_memory_with_fingerprint<'py>(
    py: Python<'py>,
    blocks: &Bound<'py, PyAny>,
    file_blocks: &Bound<'py, PyAny>,
    agent_type: &Bound<'py, PyAny>,
    git_enabled: bool,
    tool_usage_rules: Option<&Bound<'py, PyAny>>,
    sources: Option<&Bound<'py, PyAny>>,
    max_files_open: Option<&Bound<'py, PyAny>>,
    llm_config: Option<&Bound<'py, PyAny>>,
    cache: Option<&Bound<'py, CompileCache>>,
) -> PyResult<Option<(Bound<'py, PyString>, u128, Vec<(&'static str, usize, usize)>)>> {
    let cache = cache.map(|c| c.get());
    let compiled = compile(py, blocks, file_blocks, agent_type, git_enabled, tool_usage_rules, sources, max_files_open, llm_config, cache, true)?;
    Ok(compiled.and_then(|(text, detail)| detail.map(|(fp, sections)| (text, fp, sections))))
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
    let blocks = inputs::blocks(&strings, blocks)?;
    let client_skills = match client_skills {
        Some(list) if list.is_truthy()? => inputs::client_skills(&strings, list)?,
        _ => Vec::new(),
    };
    finish(py, 256, |out| skills::render(out, &blocks, &client_skills))
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
    let blocks = inputs::blocks(&strings, blocks)?;
    let has_client_skills = match client_skills {
        Some(list) => list.is_truthy()?,
        None => false,
    };
    finish(py, 64 * blocks.len() + 64, |out| tree_view::render(out, &blocks, has_client_skills))
}

/// The file blocks with later duplicates of a label dropped, as Letta's validator does.
#[pyfunction]
pub fn first_of_each_label<'py>(py: Python<'py>, file_blocks: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    let seen = PySet::empty(py)?;
    let kept = PyList::empty(py);
    for block in file_blocks.try_iter()? {
        let block = block?;
        let label = block.getattr(pyo3::intern!(py, "label"))?;
        if !seen.contains(&label)? {
            seen.add(&label)?;
            kept.append(block)?;
        }
    }
    Ok(kept)
}
