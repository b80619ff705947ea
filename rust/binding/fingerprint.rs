//! Fingerprints and the exact parse of stored system messages, as Python functions.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::strings::{native_of, type_error, Strings};
use crate::fingerprint as core;

/// XXH3-128 of `text.encode("utf-8", "surrogatepass")`, read in the str's own width (no UTF-8 copy).
#[pyfunction]
pub fn fingerprint(text: &Bound<'_, PyAny>) -> PyResult<u128> {
    let text = text.cast::<PyString>().map_err(|_| type_error("text".into(), "str", text))?;
    // SAFETY: `text` is a live str for the whole call.
    Ok(core::fingerprint_native(unsafe { native_of(text.as_ptr()) }))
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
    let Some(range) = core::stored_memory_section(strings.native(template), strings.native(message)) else {
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
