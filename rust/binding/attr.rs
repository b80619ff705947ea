//! `getattr(obj, name)` exactly as CPython does it, with its common case taken directly.
//!
//! Letta's inputs are pydantic models: generic attribute lookup behind `BaseModel.__getattr__`,
//! fields in the instance `__dict__`, no class attribute of a field's name. CPython's own path
//! for them (`slot_tp_getattr_hook`, then `PyObject_GenericGetAttr`) looks the type up three
//! times before it reads the dict. Here what a (class, version, name) comes to is remembered
//! across calls (`crate::lookups`), with where the name sat in a dict, and the dict read
//! there directly when nothing on the class can take precedence; anything else takes CPython's path.
//! A `Field` read from a list's objects keeps its last answer in front of that table.

use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::Borrowed;

use crate::lookups::{Found, Key, Last};

/// A class's version tag: CPython gives a class a new one (or 0) whenever it or a base class is modified.
pub fn version_tag(class: *mut pyo3::ffi::PyTypeObject) -> u32 {
    // SAFETY: a live class (an object's type, or one held elsewhere), read while attached.
    unsafe { (*class).tp_version_tag }
}

/// An attribute read from objects in turn: its name (interned, `intern!`, as every field
/// name here is), and what looking it up came to on the last class it was read from.
pub struct Field<'py> {
    name: &'py Bound<'py, PyString>,
    last: Last,
}

impl<'py> Field<'py> {
    pub fn new(name: &'py Bound<'py, PyString>) -> Self {
        Field::resumed(name, None)
    }

    /// A field that starts from `kept`, an earlier field's last answer (`Field::kept`).
    pub fn resumed(name: &'py Bound<'py, PyString>, kept: Option<(Key, Found)>) -> Self {
        Field { name, last: Last::resumed(kept) }
    }

    /// The identity of its name, which names what a value was read as in a compile's record.
    pub fn name_id(&self) -> usize {
        self.name.as_ptr() as usize
    }

    /// Its last answer, for a later field of the same name to resume from.
    pub fn kept(&self) -> Option<(Key, Found)> {
        self.last.peek()
    }
}

/// What a struct of `Field`s kept when a call on this thread ended, for the next call's first object.
pub type Kept<const N: usize> = [std::cell::Cell<Option<(Key, Found)>>; N];

/// A struct of `Field`s, one per attribute name, made once for the objects a call reads in turn.
/// Each call resumes from the answers the last call on its thread ended with, so that the
/// first object of a list takes the common read too.
macro_rules! fields {
    ($(#[$doc:meta])* $name:ident { $($field:ident: $attribute:literal),* $(,)? }) => {
        $(#[$doc])*
        struct $name<'py> {
            $($field: $crate::binding::attr::Field<'py>),*
        }

        impl<'py> $name<'py> {
            fn kept() -> &'static std::thread::LocalKey<$crate::binding::attr::Kept<{ [$($attribute),*].len() }>> {
                thread_local! {
                    static KEPT: $crate::binding::attr::Kept<{ [$($attribute),*].len() }> =
                        const { [const { std::cell::Cell::new(None) }; [$($attribute),*].len()] };
                }
                &KEPT
            }

            fn new(py: pyo3::Python<'py>) -> Self {
                let resumed = |kept: Option<&$crate::binding::attr::Kept<{ [$($attribute),*].len() }>>| {
                    let mut kept = kept.into_iter().flatten().map(std::cell::Cell::get);
                    $name { $($field: $crate::binding::attr::Field::resumed(pyo3::intern!(py, $attribute), kept.next().flatten())),* }
                };
                // Starting afresh once the thread's storage is gone.
                Self::kept().try_with(|kept| resumed(Some(kept))).unwrap_or_else(|_| resumed(None))
            }
        }

        impl Drop for $name<'_> {
            fn drop(&mut self) {
                let fields = [$(&self.$field),*];
                // Nothing to keep once the thread's storage is gone.
                let _ = Self::kept().try_with(|kept| kept.iter().zip(fields).for_each(|(k, f)| k.set(f.kept())));
            }
        }
    };
}
pub(crate) use fields;

/// `getattr(obj, field)`, inlined into each reader: a call's prologue and epilogue cost as
/// much as the common read itself.
#[inline(always)]
pub fn get<'py>(obj: &Bound<'py, PyAny>, field: &Field<'py>) -> PyResult<Bound<'py, PyAny>> {
    match in_dict(obj, field)? {
        Some(value) => Ok(value.to_owned()),
        None => obj.getattr(field.name),
    }
}

/// `getattr(obj, field, <missing>)`: `None` where `getattr` would raise `AttributeError`.
pub fn get_opt<'py>(obj: &Bound<'py, PyAny>, field: &Field<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
    match in_dict(obj, field)? {
        Some(value) => Ok(Some(value.to_owned())),
        None => obj.getattr_opt(field.name),
    }
}

/// `getattr(obj, field)`, or `None` when `skip` turns it down; a value skipped in the
/// instance dict is never referenced, so `skip` must be a test that runs no Python code.
pub fn get_unless<'py>(
    obj: &Bound<'py, PyAny>,
    field: &Field<'py>,
    skip: impl Fn(&Bound<'py, PyAny>) -> bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let value = match in_dict(obj, field)? {
        Some(value) if skip(&value) => return Ok(None),
        Some(value) => value.to_owned(),
        None => obj.getattr(field.name)?,
    };
    Ok((!skip(&value)).then_some(value))
}

/// The value generic lookup finds in the instance `__dict__`, when nothing on the class can come
/// first, borrowed from that dict (valid until Python code runs). The common case, an object of
/// the field's last class with the name where it was, is inlined; anything else takes `in_dict_found`.
#[inline(always)]
fn in_dict<'a, 'py>(obj: &'a Bound<'py, PyAny>, field: &Field<'py>) -> PyResult<Option<Borrowed<'a, 'py, PyAny>>> {
    let class = direct::type_of(obj);
    let key = Key { class: class as usize, version: version_tag(class), name: field.name.as_ptr() as usize };
    if let Some((last, Found::Dict { hint: Some(pos) })) = field.last.peek() {
        if last == key {
            if let Some(value) = direct::dict_entry_named(obj, field.name, pos) {
                return Ok(Some(value));
            }
        }
    }
    in_dict_found(obj, field, key)
}

/// `in_dict` by the remembered lookups, or by looking the class up and remembering what it came to.
#[cold]
#[inline(never)]
fn in_dict_found<'a, 'py>(
    obj: &'a Bound<'py, PyAny>,
    field: &Field<'py>,
    key: Key,
) -> PyResult<Option<Borrowed<'a, 'py, PyAny>>> {
    let name = field.name;
    let remembered = if key.version == 0 { None } else { field.last.get(key) };
    let hint = match remembered {
        Some(Found::Elsewhere) => return Ok(None),
        Some(Found::Dict { hint }) => hint,
        None => {
            let found = if direct::dict_decides(obj, name) {
                Found::Dict { hint: direct::dict_position(obj, name) }
            } else {
                Found::Elsewhere
            };
            // The lookups just made give the class a tag if it had none.
            let class = key.class as *mut pyo3::ffi::PyTypeObject;
            let key = Key { version: version_tag(class), ..key };
            if key.version != 0 {
                field.last.set(key, found);
            }
            let Found::Dict { hint } = found else { return Ok(None) };
            hint
        }
    };
    direct::dict_item(obj, name, hint)
}

/// The direct path, on CPython's own lookups (exported for extensions: Cython calls them too).
mod direct {
    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::sync::PyOnceLock;
    use pyo3::types::{PyDict, PyString, PyTuple, PyType};
    use pyo3::Borrowed;

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
        /// Whether a dict's entries can be read where they lie (`entries`).
        entries_in_place: bool,
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
                    Ok(Generic { getattr_hook, object_getattribute, entries_in_place: entries::usable(py) })
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

    /// The instance dict of `obj`, borrowed; `None` when it has none.
    #[inline(always)]
    fn dict_of(obj: &Bound<'_, PyAny>) -> Option<*mut ffi::PyObject> {
        // SAFETY: the dict slot of a live object, read with the GIL held. For attributes kept
        // inline (a plain class's instance), this makes the dict, as `vars(obj)` does.
        unsafe {
            let dict = _PyObject_GetDictPtr(obj.as_ptr());
            (!dict.is_null() && !(*dict).is_null()).then(|| *dict)
        }
    }

    /// The key and value (borrowed) at entry `pos` of `dict`: read in place where CPython's
    /// layout is known, else the entry `PyDict_Next` finds from there.
    #[inline(always)]
    fn entry_at(
        py: Python<'_>,
        dict: *mut ffi::PyObject,
        pos: isize,
    ) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
        if GENERIC.get(py).is_some_and(|g| g.as_ref().is_some_and(|g| g.entries_in_place)) {
            // SAFETY: a live dict, read with the GIL held, on a CPython whose layout `usable` checked.
            if let Some(entries) = unsafe { entries::combined(dict) } {
                return entries.get(pos);
            }
        }
        entry_after(dict, &mut { pos })
    }

    /// The key and value (borrowed) that `PyDict_Next` finds from `pos`, which it moves past them.
    #[inline(always)]
    fn entry_after(dict: *mut ffi::PyObject, pos: &mut isize) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
        let (mut key, mut value) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: a step of iterating a live dict with the GIL held; no Python code runs.
        (unsafe { ffi::PyDict_Next(dict, pos, &mut key, &mut value) } != 0).then_some((key, value))
    }

    /// The entry of `name` in the instance dict of `obj` (where `PyDict_Next` from there finds it), found by identity.
    pub fn dict_position(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> Option<isize> {
        let dict = dict_of(obj)?;
        let mut pos = 0;
        loop {
            // `PyDict_Next` leaves `pos` just past the entry it found.
            if entry_after(dict, &mut pos)?.0 == name.as_ptr() {
                return Some(pos - 1);
            }
        }
    }

    /// The value of `name` in the instance dict of `obj` if the entry after `pos` is that key
    /// (a dict's keys are unique), borrowed from the dict; `None` otherwise, saying nothing more.
    #[inline(always)]
    pub fn dict_entry_named<'a, 'py>(
        obj: &'a Bound<'py, PyAny>,
        name: &Bound<'py, PyString>,
        pos: isize,
    ) -> Option<Borrowed<'a, 'py, PyAny>> {
        let (key, value) = entry_at(obj.py(), dict_of(obj)?, pos)?;
        // SAFETY: a value of the live dict of `obj`, which holds it until Python code runs.
        (key == name.as_ptr()).then(|| unsafe { Borrowed::from_ptr(obj.py(), value) })
    }

    /// `obj.__dict__[name]`, borrowed from the dict; `None` when the object has no dict or the dict
    /// no such key. At `hint`, if the key there is `name` itself, that is its value: a dict's keys are unique.
    pub fn dict_item<'a, 'py>(
        obj: &'a Bound<'py, PyAny>,
        name: &Bound<'py, PyString>,
        hint: Option<isize>,
    ) -> PyResult<Option<Borrowed<'a, 'py, PyAny>>> {
        if let Some(value) = hint.and_then(|pos| dict_entry_named(obj, name, pos)) {
            return Ok(Some(value));
        }
        let Some(dict) = dict_of(obj) else { return Ok(None) };
        // SAFETY: a lookup in a live dict with the GIL held; the value is borrowed from it, which
        // holds it until Python code runs.
        let value = unsafe { ffi::PyDict_GetItemWithError(dict, name.as_ptr()) };
        if value.is_null() {
            return PyErr::take(obj.py()).map_or(Ok(None), Err);
        }
        // SAFETY: as above.
        Ok(Some(unsafe { Borrowed::from_ptr(obj.py(), value) }))
    }

    /// A dict's entries read where they lie: CPython 3.11 to 3.14's combined tables
    /// (`Include/internal/pycore_dict.h`), which `PyDict_Next` reaches through checks and a call.
    mod entries {
        use pyo3::ffi;
        use pyo3::prelude::*;
        use pyo3::types::PyDict;

        /// `PyDictObject`.
        #[repr(C)]
        struct Dict {
            ob_refcnt: isize,
            ob_type: *mut ffi::PyTypeObject,
            ma_used: isize,
            ma_version_tag: u64,
            ma_keys: *const Keys,
            ma_values: *const u8,
        }

        /// `PyDictKeysObject`, whose index table and entries follow it.
        #[repr(C)]
        struct Keys {
            dk_refcnt: isize,
            dk_log2_size: u8,
            dk_log2_index_bytes: u8,
            dk_kind: u8,
            dk_version: u32,
            dk_usable: isize,
            dk_nentries: isize,
        }

        /// `dk_kind`: entries of `(hash, key, value)`, or of `(key, value)` when every key is a str.
        const GENERAL: u8 = 0;
        const UNICODE: u8 = 1;

        /// The entries of a combined table, as `PyDict_Next` numbers them.
        pub struct Combined {
            first: *const *mut ffi::PyObject,
            len: isize,
            /// Pointers an entry holds: 2 (key, value) or 3 (hash, key, value).
            width: usize,
        }

        /// The entries of `dict`; `None` for a table split between keys and values (a plain
        /// class's instance dict), which `PyDict_Next` reads.
        ///
        /// # Safety
        /// `dict` is a live dict, read with the GIL held, on a CPython that `usable` accepted;
        /// the result is used before anything can change the dict.
        #[inline(always)]
        pub unsafe fn combined(dict: *mut ffi::PyObject) -> Option<Combined> {
            let dict = dict as *const Dict;
            if !(*dict).ma_values.is_null() {
                return None;
            }
            let keys = (*dict).ma_keys;
            let width = match (*keys).dk_kind {
                UNICODE => 2,
                GENERAL => 3,
                _ => return None,
            };
            let first = keys.add(1).cast::<u8>().add(1 << (*keys).dk_log2_index_bytes).cast();
            Some(Combined { first, len: (*keys).dk_nentries, width })
        }

        impl Combined {
            /// The key and value at entry `pos`; `None` for an empty entry or one past the last.
            #[inline(always)]
            pub fn get(&self, pos: isize) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
                if !(0..self.len).contains(&pos) {
                    return None;
                }
                // SAFETY: `pos` is among the entries `combined` found, each `width` pointers, the
                // last two its key and value.
                let (key, value) = unsafe {
                    let entry = self.first.add(pos as usize * self.width + self.width - 2);
                    (*entry, *entry.add(1))
                };
                (!value.is_null()).then_some((key, value))
            }
        }

        /// Whether this interpreter lays dicts out as `combined` reads them: a default (GIL, no
        /// trace-refs) build of CPython 3.11 to 3.14, on which it reads back known dicts.
        pub fn usable(py: Python<'_>) -> bool {
            let layout = || -> PyResult<bool> {
                let sys = py.import("sys")?;
                let cpython = sys.getattr("implementation")?.getattr("name")?.extract::<String>()? == "cpython";
                let gil = !py.import("sysconfig")?.call_method1("get_config_var", ("Py_GIL_DISABLED",))?.is_truthy()?;
                let trace_refs = sys.hasattr("getobjects")?;
                Ok(cpython && gil && !trace_refs && py.version_info() >= (3, 11) && py.version_info() < (3, 15))
            };
            layout().unwrap_or(false) && reads_back(py).unwrap_or(false)
        }

        /// `combined` on a dict of str keys and on one of other keys finds every entry, and nothing past them.
        fn reads_back(py: Python<'_>) -> PyResult<bool> {
            let str_keys = PyDict::new(py);
            let any_keys = PyDict::new(py);
            for i in 0..9 {
                let value = (i * 1000usize).into_pyobject(py)?;
                str_keys.set_item(format!("key{i}"), &value)?;
                any_keys.set_item(i * 7 + 1000, &value)?;
            }
            let reads = |dict: &Bound<'_, PyDict>| -> PyResult<bool> {
                // SAFETY: a live dict, with the GIL held, not changed while read; `usable` has checked the version.
                let Some(entries) = (unsafe { combined(dict.as_ptr()) }) else { return Ok(false) };
                let found = dict
                    .iter()
                    .enumerate()
                    .all(|(i, (key, value))| entries.get(i as isize) == Some((key.as_ptr(), value.as_ptr())));
                Ok(found && entries.get(dict.len() as isize).is_none())
            };
            Ok(reads(&str_keys)? && reads(&any_keys)?)
        }
    }
}
