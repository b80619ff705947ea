//! Instances of memprompt's own slotted result classes (`Compiled`, `ToolUsageRules`), made
//! without a Python call: each field is written into its slot, as `object.__setattr__` does.

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// A class of `memprompt.types` and where an instance holds each of its `N` fields.
pub struct SlotClass<const N: usize> {
    class: Py<PyType>,
    offsets: [ffi::Py_ssize_t; N],
}

impl<const N: usize> SlotClass<N> {
    /// `memprompt.types.<name>`, its fields' offsets read from their member descriptors once.
    pub fn get<'a>(py: Python<'_>, cell: &'a PyOnceLock<Self>, name: &str, fields: [&str; N]) -> PyResult<&'a Self> {
        cell.get_or_try_init(py, || {
            let class = py.import("memprompt.types")?.getattr(name)?.cast_into::<PyType>()?;
            let mut offsets = [0; N];
            for (offset, field) in offsets.iter_mut().zip(fields) {
                let descriptor = class.getattr(field)?;
                *offset = super::cpython::member_slot(&descriptor).ok_or_else(|| {
                    PyRuntimeError::new_err(format!("memprompt.types.{name}.{field} is not a writable slot"))
                })?;
            }
            Ok(SlotClass { class: class.unbind(), offsets })
        })
    }

    /// A new instance holding `values`, one a field, in the order of `get`'s `fields`.
    pub fn new_instance<'py>(&self, py: Python<'py>, values: [Bound<'py, PyAny>; N]) -> PyResult<Bound<'py, PyAny>> {
        let class = self.class.bind(py);
        // SAFETY: `class` is a plain Python class with slots, so `tp_alloc` gives an instance with empty slots.
        let instance = unsafe {
            let alloc = (*class.as_type_ptr()).tp_alloc.ok_or_else(|| PyRuntimeError::new_err("no tp_alloc"))?;
            Bound::from_owned_ptr_or_err(py, alloc(class.as_type_ptr(), 0))?
        };
        for (&offset, value) in self.offsets.iter().zip(values) {
            // SAFETY: `offset` is where an instance of `class` holds that field's slot (its member
            // descriptor says so), empty in a new instance: the slot takes the reference.
            unsafe { *instance.as_ptr().cast::<u8>().offset(offset).cast::<*mut ffi::PyObject>() = value.into_ptr() };
        }
        Ok(instance)
    }
}
