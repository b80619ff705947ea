//! `getattr(obj, name)` exactly as CPython does it, with its common case taken directly.
//!
//! Letta's inputs are pydantic models: generic attribute lookup behind `BaseModel.__getattr__`,
//! fields in the instance `__dict__`, no class attribute of a field's name. CPython's own path
//! for them (`slot_tp_getattr_hook`, then `PyObject_GenericGetAttr`) looks the type up three
//! times before it reads the dict. Here the type is looked up once, and the dict read directly
//! when nothing on the type can take precedence over it; anything else takes CPython's path.

use pyo3::prelude::*;
use pyo3::types::PyString;

/// `getattr(obj, name)`.
pub fn get<'py>(obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    match direct::from_dict(obj, name)? {
        Some(value) => Ok(value),
        None => obj.getattr(name),
    }
}

/// `getattr(obj, name, <missing>)`: `None` where `getattr` would raise `AttributeError`.
pub fn get_opt<'py>(obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
    match direct::from_dict(obj, name)? {
        Some(value) => Ok(Some(value)),
        None => obj.getattr_opt(name),
    }
}

/// The direct path, on CPython's own lookups (exported for extensions: Cython calls them too).
mod direct {
    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::sync::PyOnceLock;
    use pyo3::types::{PyDict, PyString, PyTuple, PyType};

    extern "C" {
        // Both in cpython/object.h; neither runs Python code.
        fn _PyType_Lookup(tp: *mut ffi::PyTypeObject, name: *mut ffi::PyObject) -> *mut ffi::PyObject;
        fn _PyObject_GetDictPtr(obj: *mut ffi::PyObject) -> *mut *mut ffi::PyObject;
    }

    /// What the direct path compares a type with, found once from CPython itself.
    struct Generic {
        /// The `tp_getattro` CPython gives a class that defines `__getattr__`.
        getattr_hook: usize,
        /// `object.__getattribute__`, the descriptor that makes that hook look up generically.
        object_getattribute: usize,
    }

    static GENERIC: PyOnceLock<Option<Generic>> = PyOnceLock::new();

    fn generic(py: Python<'_>) -> Option<&'static Generic> {
        let found = GENERIC.get_or_init(py, || {
            let probe = || -> PyResult<Generic> {
                // A class with a `__getattr__`: CPython sets its slot to the hook every such class gets.
                let namespace = PyDict::new(py);
                namespace.set_item("__getattr__", py.get_type::<PyType>().getattr("__getattribute__")?)?;
                let class = py.get_type::<PyType>().call1(("_GetattrProbe", PyTuple::empty(py), namespace))?;
                let class = class.cast_into::<PyType>()?;
                // SAFETY: reading the slots of live type objects, with the GIL held.
                unsafe {
                    let getattr_hook = (*class.as_type_ptr()).tp_getattro.map_or(0, |f| f as usize);
                    let name = pyo3::intern!(py, "__getattribute__");
                    let object_getattribute =
                        _PyType_Lookup(std::ptr::addr_of_mut!(ffi::PyBaseObject_Type), name.as_ptr()) as usize;
                    Ok(Generic { getattr_hook, object_getattribute })
                }
            };
            probe().ok().filter(|g| g.getattr_hook != 0 && g.object_getattribute != 0)
        });
        found.as_ref()
    }

    /// The value generic lookup finds in the instance `__dict__`, when nothing on the type can come first.
    pub fn from_dict<'py>(obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = obj.py();
        let Some(generic) = generic(py) else { return Ok(None) };
        // SAFETY: type slots and dicts of live objects, read with the GIL held; `_PyType_Lookup`
        // returns a borrowed reference (or NULL, never an error) and calls no Python code.
        unsafe {
            let tp = ffi::Py_TYPE(obj.as_ptr());
            let getattro = (*tp).tp_getattro.map_or(0, |f| f as usize);
            let generic_lookup = getattro == ffi::PyObject_GenericGetAttr as *const () as usize
                || (getattro == generic.getattr_hook
                    && _PyType_Lookup(tp, pyo3::intern!(py, "__getattribute__").as_ptr()) as usize
                        == generic.object_getattribute);
            // A class attribute of that name (a descriptor, a slot, a plain value) would decide or
            // come after the dict: CPython's own path handles it.
            if !generic_lookup || !_PyType_Lookup(tp, name.as_ptr()).is_null() {
                return Ok(None);
            }
            // For attributes kept inline (a plain class's instance), this makes the dict, as `vars(obj)` does.
            let dict = _PyObject_GetDictPtr(obj.as_ptr());
            if dict.is_null() || (*dict).is_null() {
                return Ok(None);
            }
            let dict = Bound::from_borrowed_ptr(py, *dict).cast_into_unchecked::<PyDict>();
            dict.get_item(name)
        }
    }
}
