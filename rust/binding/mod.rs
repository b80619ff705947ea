//! The thin pyo3 layer: it converts Python objects to the renderers' inputs and back, nothing more.

mod attr;
mod cache;
mod cpython;
mod fingerprint;
mod inputs;
mod memory;
mod prompt;
mod slots;
mod strings;
mod tool_rules;

use pyo3::exceptions::{PyAttributeError, PyNotImplementedError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::error::RenderError;

/// The Python exception for a renderer's error.
pub fn to_py_err(err: RenderError) -> PyErr {
    match err {
        RenderError::Type(m) => PyTypeError::new_err(m),
        RenderError::Attribute(m) => PyAttributeError::new_err(m),
        RenderError::Value(m) => PyValueError::new_err(m),
        RenderError::Overflow(m) => PyOverflowError::new_err(m),
        RenderError::NotImplemented(m) => PyNotImplementedError::new_err(m),
    }
}

#[pymodule(name = "_core")]
fn core_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<memory::MemoryBase>()?;
    m.add_class::<memory::ReferenceRender>()?;
    m.add_function(wrap_pyfunction!(memory::set_reference_renderer, m)?)?;
    m.add_function(wrap_pyfunction!(cache::count_edit, m)?)?;
    m.add_function(wrap_pyfunction!(cache::track_edits, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint::fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint::stored_memory_section, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint::message_sections, m)?)?;
    m.add_function(wrap_pyfunction!(memory::compile_memory, m)?)?;
    m.add_function(wrap_pyfunction!(memory::compile_many, m)?)?;
    m.add_function(wrap_pyfunction!(memory::compile_available_skills, m)?)?;
    m.add_function(wrap_pyfunction!(memory::render_memory_filesystem, m)?)?;
    m.add_function(wrap_pyfunction!(memory::first_of_each_label, m)?)?;
    m.add_function(wrap_pyfunction!(prompt::compile_memory_metadata_block, m)?)?;
    m.add_function(wrap_pyfunction!(prompt::get_system_message_from_compiled_memory, m)?)?;
    m.add_function(wrap_pyfunction!(prompt::safe_format, m)?)?;
    m.add_function(wrap_pyfunction!(tool_rules::compile_tool_rule_prompts, m)?)?;
    Ok(())
}
