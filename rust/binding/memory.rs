//! `Memory.compile` and the memory's other views, as Python functions.

use std::sync::Mutex;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PySet, PyString};

use super::inputs;
use super::strings::{to_py_str, Reads, Strings};
use crate::error::RenderResult;
use crate::fingerprint::fingerprint;
use crate::model::{Block, CompileInput};
use crate::out::Out;
use crate::text::char_offsets;
use crate::{batch, git_memory, memory, skills, tree_view};

/// A first guess at the output size, so the buffer rarely grows.
fn capacity(blocks: &[Block]) -> usize {
    blocks.iter().map(|b| b.value.len() + b.description.len() + 2 * b.label.len() + 160).sum::<usize>() + 256
}

/// Output this large is rendered with the GIL released, so that other Python threads run.
const DETACH_ABOVE: usize = 64 * 1024;

/// Renders into a fresh buffer of about `capacity` bytes.
fn render<F>(py: Python<'_>, capacity: usize, render: F) -> PyResult<Out>
where
    F: FnOnce(&mut Out) -> RenderResult + Send,
{
    let run = move || {
        let mut out = Out::reusing(take_spare(), capacity);
        match render(&mut out) {
            Ok(()) => Ok(out),
            Err(error) => {
                recycle(out);
                Err(error)
            }
        }
    };
    let rendered = if capacity > DETACH_ABOVE { py.detach(run) } else { run() };
    rendered.map_err(super::to_py_err)
}

/// Renders and hands the text to Python.
fn finish<'py, F>(py: Python<'py>, capacity: usize, f: F) -> PyResult<Bound<'py, PyString>>
where
    F: FnOnce(&mut Out) -> RenderResult + Send,
{
    let out = render(py, capacity, f)?;
    let text = to_py_str(py, &out.buf);
    recycle(out);
    text
}

thread_local! {
    // The last output buffer of this thread: its pages are already mapped, so a large
    // render does not pay a page fault per 4 KiB again.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Buffers larger than this are freed rather than kept.
const KEEP_AT_MOST: usize = 64 << 20;

fn take_spare() -> Vec<u8> {
    SPARE.with(|spare| spare.take())
}

fn recycle(out: Out) {
    let buf = out.buf;
    if buf.capacity() <= KEEP_AT_MOST {
        SPARE.with(|spare| spare.set(buf));
    }
}

/// `(section, start, end)` in code points.
type Spans = Vec<(&'static str, usize, usize)>;

/// The fingerprint and the code-point spans of the sections of a compiled memory.
#[derive(Clone)]
struct Detail {
    fingerprint: u128,
    sections: Spans,
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

    fn lookup(
        &self,
        py: Python<'_>,
        anthropic: bool,
        git_enabled: bool,
        reads: &Reads,
        detail: bool,
    ) -> Option<(Py<PyString>, Option<Detail>)> {
        let entry = self.lock();
        let e = entry.as_ref()?;
        let hit = e.anthropic == anthropic
            && e.git_enabled == git_enabled
            && (!detail || e.detail.is_some())
            && e.reads.same_as(reads);
        hit.then(|| (e.text.clone_ref(py), e.detail.clone()))
    }
}

/// What `compile_memory` returns: the text, with its fingerprint and sections when asked for.
type Compiled<'py> = (Bound<'py, PyString>, Option<(u128, Spans)>);

/// The arguments of `Memory.compile`, beside the memory's own fields.
#[derive(Clone, Copy)]
struct CompileArgs<'a, 'py> {
    tool_usage_rules: Option<&'a Bound<'py, PyAny>>,
    sources: Option<&'a Bound<'py, PyAny>>,
    max_files_open: Option<&'a Bound<'py, PyAny>>,
    llm_config: Option<&'a Bound<'py, PyAny>>,
}

/// Reads one memory and the compile arguments, in the order Letta reads them.
fn read_input<'s, 'py>(
    strings: &'s Strings<'py>,
    blocks: &Bound<'py, PyAny>,
    file_blocks: &Bound<'py, PyAny>,
    agent_type: &Bound<'py, PyAny>,
    git_enabled: bool,
    args: CompileArgs<'_, 'py>,
) -> PyResult<CompileInput<'s>> {
    let agent_type = inputs::agent_type(strings, agent_type)?;
    let anthropic = match args.llm_config {
        Some(config) => inputs::is_anthropic(config)?,
        None => false,
    };
    // Letta never reads a react agent's blocks: a bad one is no error there.
    let blocks = if memory::is_react(&agent_type) { Vec::new() } else { inputs::blocks(strings, blocks)? };
    let tool_usage_rules = match args.tool_usage_rules {
        Some(rules) if !rules.is_none() => Some(inputs::tool_usage_rules(strings, rules)?),
        _ => None,
    };
    strings.list_end();
    // Read only when directories render, as in Letta, and in the reference's order.
    let (sources, file_blocks, max_files_open) = match args.sources {
        Some(list) if list.is_truthy()? => {
            let max_files_open = match args.max_files_open {
                Some(n) => {
                    strings.arg(n);
                    strings.int_or_none(n, || "max_files_open".to_string())?
                }
                None => None,
            };
            let file_blocks = inputs::file_blocks(strings, file_blocks)?;
            (inputs::sources(strings, list)?, file_blocks, max_files_open)
        }
        _ => (Vec::new(), Vec::new(), None),
    };
    Ok(CompileInput {
        blocks,
        file_blocks,
        agent_type,
        anthropic,
        git_enabled,
        tool_usage_rules,
        sources,
        max_files_open,
    })
}

/// Rust cannot render this input: the caller falls back to the reference.
fn needs_reference(input: &CompileInput) -> bool {
    input.git_enabled && git_memory::needs_reference_fallback(&input.blocks)
}

#[allow(clippy::too_many_arguments)]
fn compile<'py>(
    py: Python<'py>,
    blocks: &Bound<'py, PyAny>,
    file_blocks: &Bound<'py, PyAny>,
    agent_type: &Bound<'py, PyAny>,
    git_enabled: bool,
    args: CompileArgs<'_, 'py>,
    cache: Option<&CompileCache>,
    detail: bool,
) -> PyResult<Option<Compiled<'py>>> {
    let strings = Strings::new(py);
    let input = read_input(&strings, blocks, file_blocks, agent_type, git_enabled, args)?;
    if needs_reference(&input) {
        return Ok(None);
    }
    let anthropic = input.anthropic;
    if let (Some(cache), Some(reads)) = (cache, strings.reads()) {
        if let Some((text, found)) = cache.lookup(py, anthropic, git_enabled, &reads, detail) {
            return Ok(Some((text.into_bound(py), found.map(|d| (d.fingerprint, d.sections)))));
        }
    }
    let out = render(py, capacity(&input.blocks), |out| memory::compile(out, &input))?;
    let text = to_py_str(py, &out.buf)?;
    let found = detail.then(|| Detail::of(&out));
    recycle(out);
    drop(input);
    if let (Some(cache), Some(reads)) = (cache, strings.into_reads()) {
        *cache.lock() =
            Some(Entry { anthropic, git_enabled, reads, text: text.clone().unbind(), detail: found.clone() });
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
    let args = CompileArgs { tool_usage_rules, sources, max_files_open, llm_config };
    let compiled = compile(py, blocks, file_blocks, agent_type, git_enabled, args, cache.map(|c| c.get()), false)?;
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
) -> PyResult<Option<(Bound<'py, PyString>, u128, Spans)>> {
    let args = CompileArgs { tool_usage_rules, sources, max_files_open, llm_config };
    let compiled = compile(py, blocks, file_blocks, agent_type, git_enabled, args, cache.map(|c| c.get()), true)?;
    Ok(compiled.and_then(|(text, detail)| detail.map(|(fp, sections)| (text, fp, sections))))
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
    let args = CompileArgs { tool_usage_rules, sources, max_files_open, llm_config };
    let mut inputs = Vec::new();
    for memory in memories.try_iter()? {
        let memory = memory?;
        let git_enabled = memory.getattr(intern!(py, "git_enabled"))?.is_truthy()?;
        let input = read_input(
            &strings,
            &memory.getattr(intern!(py, "blocks"))?,
            &memory.getattr(intern!(py, "file_blocks"))?,
            &memory.getattr(intern!(py, "agent_type"))?,
            git_enabled,
            args,
        )?;
        inputs.push((!needs_reference(&input)).then_some(input));
    }
    let rendered = py.detach(|| {
        batch::map(&inputs, |input| {
            input.as_ref().map(|input| {
                let mut out = Out::with_capacity(capacity(&input.blocks));
                memory::compile(&mut out, input).map(|()| out)
            })
        })
    });
    let rendered = rendered.map_err(super::to_py_err)?;
    rendered
        .into_iter()
        .map(|out| out.transpose().map_err(super::to_py_err)?.map(|out| to_py_str(py, &out.buf)).transpose())
        .collect()
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
    finish(py, 64 * (blocks.len() + client_skills.len()) + 256, |out| skills::render(out, &blocks, &client_skills))
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
