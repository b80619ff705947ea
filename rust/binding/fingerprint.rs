//! Fingerprints and the exact parse of stored system messages, as Python functions.

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::strings::{native_of, to_py_str, type_error, Strings};
use crate::fingerprint as core;

/// XXH3-128 of `text.encode("utf-8", "surrogatepass")`, read in the str's own width (no UTF-8 copy).
#[pyfunction]
pub fn fingerprint(text: &Bound<'_, PyAny>) -> PyResult<u128> {
    let text = text.cast::<PyString>().map_err(|_| type_error("text".into(), "str", text))?;
    // SAFETY: `text` is a live str for the whole call.
    Ok(core::fingerprint_native(unsafe { native_of(text.as_ptr()) }))
}

/// The memory section of `message` if it was built from `template`, else `None`.
#[pyfunction]
pub fn stored_memory_section<'py>(
    py: Python<'py>,
    template: &Bound<'py, PyString>,
    message: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyString>>> {
    let strings = Strings::new(py);
    let (template, message) = (strings.text(template)?, strings.text(message)?);
    core::stored_memory_section(template, message).map(|section| to_py_str(py, section)).transpose()
}
