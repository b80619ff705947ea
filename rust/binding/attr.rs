//! `getattr(obj, name)` exactly as CPython does it, with its common case taken directly.
//!
//! Letta's inputs are pydantic models: generic attribute lookup behind `BaseModel.__getattr__`,
//! fields in the instance `__dict__`, no class attribute of a field's name. CPython's own path
//! for them (`slot_tp_getattr_hook`, then `PyObject_GenericGetAttr`) looks the type up three
//! times before it reads the dict. Here a type is looked up once per name for a whole call
//! (`Reader` remembers it by the type's version tag), and the dict read directly when nothing
//! on the type can take precedence over it; anything else takes CPython's path.

use std::cell::Cell;

use pyo3::prelude::*;
use pyo3::types::PyString;

/// A class's version tag: CPython gives a class a new one (or 0) whenever it or a base class is modified.
pub fn version_tag(class: *mut pyo3::ffi::PyTypeObject) -> u32 {
    // SAFETY: a live class (an object's type, or one held elsewhere), read while attached.
    unsafe { (*class).tp_version_tag }
}

/// Reads attributes, remembering for which (type, name) the instance dict decides.
#[derive(Default)]
pub struct Reader {
    known: [Cell<Known>; 16],
}

/// A type at one version, on which `name` is read from the instance dict; all zero is nothing.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Known {
    tp: usize,
    version: u32,
    name: usize,
}

impl Reader {
    /// `getattr(obj, name)`.
    pub fn get<'py>(&self, obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
        match self.in_dict(obj, name)? {
            Some(value) => Ok(value),
            None => obj.getattr(name),
        }
    }

    /// `getattr(obj, name, <missing>)`: `None` where `getattr` would raise `AttributeError`.
    pub fn get_opt<'py>(
        &self,
        obj: &Bound<'py, PyAny>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.in_dict(obj, name)? {
            Some(value) => Ok(Some(value)),
            None => obj.getattr_opt(name),
        }
    }

    /// Where `name` is remembered: its own entry, else a free one (open addressing), else
    /// the first one tried, whose name is then forgotten.
    fn slot(&self, name: usize, hash: usize) -> &Cell<Known> {
        let n = self.known.len();
        let first = hash % n;
        let free_or_own = |slot: &&Cell<Known>| slot.get().name == 0 || slot.get().name == name;
        if free_or_own(&&self.known[first]) {
            return &self.known[first];
        }
        (1..n).map(|i| &self.known[(first + i) % n]).find(free_or_own).unwrap_or(&self.known[first])
    }

    /// The value generic lookup finds in the instance `__dict__`, when nothing on the type can come first.
    fn in_dict<'py>(
        &self,
        obj: &Bound<'py, PyAny>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let tp = direct::type_of(obj);
        // A type's version tag is unique to its current state: any change to it or a base
        // (a new descriptor, a `__getattr__`) sets another. 0 means it has none now.
        let known = Known { tp: tp as usize, version: version_tag(tp), name: name.as_ptr() as usize };
        let slot = self.slot(known.name, direct::hash(name));
        if known.version == 0 || slot.get() != known {
            if !direct::dict_decides(obj, name) {
                return Ok(None);
            }
            // The lookups just made give the type a tag if it had none.
            slot.set(Known { version: version_tag(tp), ..known });
        }
        direct::dict_item(obj, name)
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

    pub fn type_of(obj: &Bound<'_, PyAny>) -> *mut ffi::PyTypeObject {
        // SAFETY: the type of a live object.
        unsafe { ffi::Py_TYPE(obj.as_ptr()) }
    }

    /// The hash a `str` keeps (attribute names are dict keys: it is computed).
    pub fn hash(s: &Bound<'_, PyString>) -> usize {
        // SAFETY: a field of a live str, read with the GIL held.
        unsafe { (*s.as_ptr().cast::<ffi::PyASCIIObject>()).hash as usize }
    }

    /// Whether generic lookup of `name` on `obj` is decided by its instance `__dict__`: the
    /// type looks attributes up generically and has no attribute of that name itself.
    pub fn dict_decides(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> bool {
        let py = obj.py();
        let Some(generic) = generic(py) else { return false };
        // SAFETY: type slots of a live object, read with the GIL held; `_PyType_Lookup`
        // returns a borrowed reference (or NULL, never an error) and calls no Python code.
        unsafe {
            let tp = type_of(obj);
            let getattro = (*tp).tp_getattro.map_or(0, |f| f as usize);
            let generic_lookup = getattro == ffi::PyObject_GenericGetAttr as *const () as usize
                || (getattro == generic.getattr_hook
                    && _PyType_Lookup(tp, pyo3::intern!(py, "__getattribute__").as_ptr()) as usize
                        == generic.object_getattribute);
            // A class attribute of that name (a descriptor, a slot, a plain value) would decide or
            // come after the dict: CPython's own path handles it.
            generic_lookup && _PyType_Lookup(tp, name.as_ptr()).is_null()
        }
    }

    /// `obj.__dict__[name]`, `None` when the object has no dict or the dict no such key.
    pub fn dict_item<'py>(obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
        // SAFETY: the dict of a live object, read with the GIL held.
        unsafe {
            // For attributes kept inline (a plain class's instance), this makes the dict, as `vars(obj)` does.
            let dict = _PyObject_GetDictPtr(obj.as_ptr());
            if dict.is_null() || (*dict).is_null() {
                return Ok(None);
            }
            let dict = Bound::from_borrowed_ptr(obj.py(), *dict).cast_into_unchecked::<PyDict>();
            dict.get_item(name)
        }
    }
}
