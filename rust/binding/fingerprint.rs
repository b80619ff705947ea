//! Fingerprints and the exact parse of stored system messages, as Python functions.

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use super::cpython::native_of;
use super::memory::section_name;
use super::strings::{type_error, Strings};
use crate::fingerprint as core;
use crate::memory::section;
use crate::message_sections::{self as message, Mismatch};
use crate::out::Section;

/// XXH3-128 of `text.encode("utf-8", "surrogatepass")`, read in the str's own width (no UTF-8 copy).
#[pyfunction]
pub fn fingerprint(text: &Bound<'_, PyAny>) -> PyResult<u128> {
    let text = text.cast::<PyString>().map_err(|_| type_error("text".into(), "str", text))?;
    // SAFETY: `text` is a live str for the whole call.
    Ok(core::fingerprint_native(unsafe { native_of(text) }?))
}

/// The memory section of `message` if it was built from `template`, else `None`; both are
/// read in their own width.
#[pyfunction]
pub fn stored_memory_section<'py>(
    py: Python<'py>,
    template: &Bound<'py, PyString>,
    message: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyString>>> {
    let strings = Strings::new(py);
    let Some(range) = core::stored_memory_section(strings.native(template)?, strings.native(message)?) else {
        return Ok(None);
    };
    // CPython's own substring: a new `str` at the narrowest width that holds it. The range
    // lies inside the message, so neither end overflows a `Py_ssize_t`.
    // SAFETY: `message` is a live str; the call returns a new reference or NULL with an error set.
    let section = unsafe {
        let raw =
            ffi::PyUnicode_Substring(message.as_ptr(), range.start as ffi::Py_ssize_t, range.end as ffi::Py_ssize_t);
        Bound::from_owned_ptr_or_err(py, raw)?.cast_into::<PyString>()?
    };
    Ok(Some(section))
}

/// Where each section of `message` lies, built from `system_prompt` around the memory
/// `memory_text` whose own sections are `memory_sections` (a `Compiled`'s): a list of
/// `(name, start, end)` in code points, in message order; `ValueError` when the message
/// does not hold that memory in that template.
#[pyfunction]
pub fn message_sections<'py>(
    py: Python<'py>,
    system_prompt: &Bound<'py, PyString>,
    memory_text: &Bound<'py, PyString>,
    memory_sections: &Bound<'py, PyDict>,
    message: &Bound<'py, PyString>,
) -> PyResult<Vec<(Bound<'py, PyString>, usize, usize)>> {
    let spans = spans_of(memory_sections)?;
    let strings = Strings::new(py);
    let (template, text, memory) =
        (strings.native(system_prompt)?, strings.native(message)?, strings.native(memory_text)?);
    let sections = message::message_sections(template, text, memory, &spans).map_err(|m| {
        PyValueError::new_err(match m {
            Mismatch::Template => "the message was not built from this system prompt: its text does not frame a memory",
            Mismatch::Metadata => "the message has no <memory_metadata> block after its memory section",
            Mismatch::Memory => {
                "the message's memory section is not this memory (a stale message, or another agent's): compile the memory it was built from"
            }
            Mismatch::Spans => "the memory's sections do not tile its text: only \"\\n\\n\" may lie between them",
        })
    })?;
    Ok(sections.into_iter().map(|s| (section_name(py, s.name), s.start, s.end)).collect())
}

/// A `Compiled`'s section spans, read whole before any text is borrowed.
fn spans_of(sections: &Bound<'_, PyDict>) -> PyResult<Vec<Section>> {
    let mut spans = Vec::with_capacity(sections.len());
    for (key, value) in sections.iter() {
        let known = key
            .cast::<PyString>()
            .ok()
            .and_then(|k| k.to_str().ok())
            .and_then(|k| section::ALL.iter().find(|&&name| name == k));
        let Some(&name) = known else {
            return Err(PyValueError::new_err(format!(
                "memory.sections: {} is not a section a compile gives ({})",
                key.repr()?,
                section::ALL.join(", ")
            )));
        };
        let pair = value.cast::<PyTuple>().ok().filter(|t| t.len() == 2);
        let Some((start, end)) = pair.map(|t| t.extract::<(usize, usize)>()).and_then(Result::ok) else {
            return Err(type_error(format!("memory.sections['{name}']"), "a (start, end) pair of ints >= 0", &value));
        };
        spans.push(Section { name, start, end });
    }
    Ok(spans)
}
