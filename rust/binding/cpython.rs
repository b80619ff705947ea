//! Every CPython internal memprompt relies on, in one place, each with the CPython versions it
//! holds for (orjson's `src/ffi/` does the same). Anything private goes through one guard,
//! `internals`: a CPython 3.11 to 3.14 default build (GIL, no trace-refs) on which the probes
//! below agree; elsewhere the callers take CPython's public path.
//!
//! | assumption | CPython source | versions | checked by |
//! |---|---|---|---|
//! | `PyTypeObject.tp_version_tag`: a new tag (or 0) whenever a class or a base changes | `cpython/object.h` | 3.11–3.14 | public field (pyo3's layout for the build) |
//! | `_PyType_Lookup`: a borrowed MRO lookup; it can run a class-dict key's `__eq__` | `cpython/object.h` (exported) | 3.11–3.14 | `internals` |
//! | `_PyObject_GetDictPtr`: the instance dict slot, making a managed dict | `cpython/object.h` (exported) | 3.11–3.14 | `internals` |
//! | a class with `__getattr__` gets one `tp_getattro` (`slot_tp_getattr_hook`) | `Objects/typeobject.c` | 3.11–3.14 | probed by `internals` |
//! | `PyDictObject`, `PyDictKeysObject`, `dk_kind` (`DICT_KEYS_GENERAL`/`UNICODE`), entries after the index table | `internal/pycore_dict.h` | 3.11–3.14 | `internals` (read back on known dicts) |
//! | a split table (`ma_values`) holds exact str keys only | `Objects/dictobject.c` | 3.11–3.14 | `internals` |
//! | `PyMemberDescrObject.d_member`: a slot's `offset`, `type_code`, `flags` | `descrobject.h` | 3.11–3.14 | type check, `T_OBJECT_EX` and flags checked (`member_slot`) |
//! | PEP 393 str: kind, data, ascii, length; a legacy str has them once ready | `cpython/unicodeobject.h` | 3.11 (legacy), 3.12–3.14 | made ready first (`native_of`) |
//! | a `PyUnicode_New` str's code units are the caller's to write until it is shared | `cpython/unicodeobject.h` | 3.11–3.14 | `_PyUnicode_CheckConsistency` in debug builds (`check_written`) |
//! | a heap type's `tp_dict` holds its own `__module__` (binding/tool_rules.rs) | `Objects/typeobject.c` | 3.11–3.14 | `Py_TPFLAGS_HEAPTYPE` checked |

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

use crate::out::UnitsMut;
use crate::text::{Class, Native, Units};

extern "C" {
    fn _PyType_Lookup(tp: *mut ffi::PyTypeObject, name: *mut ffi::PyObject) -> *mut ffi::PyObject;
    fn _PyObject_GetDictPtr(obj: *mut ffi::PyObject) -> *mut *mut ffi::PyObject;
    fn _PyUnicode_CheckConsistency(op: *mut ffi::PyObject, check_content: std::ffi::c_int) -> std::ffi::c_int;
}

/// What the private paths compare with, found once from CPython itself: the one guard.
pub struct Internals {
    /// The `tp_getattro` CPython gives a class that defines `__getattr__`.
    pub getattr_hook: usize,
    /// `object.__getattribute__`, the descriptor that makes that hook look up generically.
    pub object_getattribute: usize,
    /// Whether a dict's table can be read where it lies (`dict`).
    pub dict_in_place: bool,
}

static INTERNALS: PyOnceLock<Option<Internals>> = PyOnceLock::new();

/// The guard: `None` where memprompt relies on no CPython internal.
pub fn internals(py: Python<'_>) -> Option<&'static Internals> {
    let found = INTERNALS.get_or_init(py, || {
        let probe = || -> PyResult<Internals> {
            // A class with a `__getattr__`: CPython sets its slot to the hook every such class gets.
            let namespace = PyDict::new(py);
            namespace.set_item("__getattr__", py.get_type::<PyType>().getattr("__getattribute__")?)?;
            let class = py.get_type::<PyType>().call1(("_GetattrProbe", PyTuple::empty(py), namespace))?;
            let class = class.cast_into::<PyType>()?;
            // SAFETY: the slots of a live class, and a lookup on `object` (whose dict has str keys only).
            unsafe {
                let getattr_hook = (*class.as_type_ptr()).tp_getattro.map_or(0, |f| f as usize);
                let name = pyo3::intern!(py, "__getattribute__");
                let object_getattribute =
                    _PyType_Lookup(std::ptr::addr_of_mut!(ffi::PyBaseObject_Type), name.as_ptr()) as usize;
                Ok(Internals { getattr_hook, object_getattribute, dict_in_place: dict::usable(py) })
            }
        };
        let cpython = py.version_info() >= (3, 11) && py.version_info() < (3, 15) && dict::default_build(py);
        probe().ok().filter(|i| cpython && i.getattr_hook != 0 && i.object_getattribute != 0)
    });
    found.as_ref()
}

/// `internals` once it has been found, for a hot path that `internals` has let in already.
#[inline(always)]
pub fn internals_found(py: Python<'_>) -> Option<&'static Internals> {
    INTERNALS.get(py).and_then(Option::as_ref)
}

impl Internals {
    /// `_PyType_Lookup(tp, name)`: borrowed from the MRO, compared by address only.
    ///
    /// # Safety
    /// `tp` is a live class, held across the call: a key of a class dict may run Python code.
    pub unsafe fn type_lookup(&self, tp: *mut ffi::PyTypeObject, name: &Bound<'_, PyString>) -> usize {
        _PyType_Lookup(tp, name.as_ptr()) as usize
    }

    /// The instance dict of `obj`, borrowed; `None` when it has none. For attributes kept inline
    /// (a plain class's instance) this makes the dict, as `vars(obj)` does.
    #[inline(always)]
    pub fn instance_dict(&self, obj: &Bound<'_, PyAny>) -> Option<*mut ffi::PyObject> {
        // SAFETY: the dict slot of a live object, read attached; the pointer is read after the call,
        // so a collection it triggers cannot leave it stale.
        unsafe {
            let dict = _PyObject_GetDictPtr(obj.as_ptr());
            (!dict.is_null() && !(*dict).is_null()).then(|| *dict)
        }
    }
}

/// A class's version tag: CPython gives a class a new one (or 0) whenever it or a base class is modified.
#[inline(always)]
pub fn version_tag(class: *mut ffi::PyTypeObject) -> u32 {
    // SAFETY: a live class (an object's type, or one held elsewhere), read while attached.
    unsafe { (*class).tp_version_tag }
}

/// The type of a live object, borrowed from it.
#[inline(always)]
pub fn type_of(obj: &Bound<'_, PyAny>) -> *mut ffi::PyTypeObject {
    // SAFETY: the type of a live object.
    unsafe { ffi::Py_TYPE(obj.as_ptr()) }
}

/// Where an instance holds the slot a member descriptor describes, if it is a writable object slot.
pub fn member_slot(descriptor: &Bound<'_, PyAny>) -> Option<ffi::Py_ssize_t> {
    let p = descriptor.as_ptr();
    // SAFETY: a type check, then the fields of a live member descriptor.
    unsafe {
        if ffi::PyObject_TypeCheck(p, std::ptr::addr_of_mut!(ffi::PyMemberDescr_Type)) == 0 {
            return None;
        }
        let member = (*p.cast::<ffi::PyMemberDescrObject>()).d_member;
        (!member.is_null() && (*member).type_code == ffi::Py_T_OBJECT_EX && (*member).flags == 0)
            .then(|| (*member).offset)
    }
}

/// The code units of `s`, in its own width; a legacy str (CPython 3.11) is made ready first,
/// which fails only for want of memory.
///
/// # Safety
/// `s` outlives `'a`.
#[inline(always)]
pub unsafe fn native_of<'a>(s: &Bound<'_, PyString>) -> PyResult<Native<'a>> {
    let p = s.as_ptr();
    // An inline flag test on 3.11 (a call only for a legacy str not yet ready), nothing on 3.12+.
    if ffi::PyUnicode_READY(p) != 0 {
        return Err(PyErr::fetch(s.py()));
    }
    let len = ffi::PyUnicode_GET_LENGTH(p) as usize;
    let data = ffi::PyUnicode_DATA(p);
    let units = match ffi::PyUnicode_KIND(p) {
        ffi::PyUnicode_1BYTE_KIND => Units::One(std::slice::from_raw_parts(data as *const u8, len)),
        ffi::PyUnicode_2BYTE_KIND => Units::Two(std::slice::from_raw_parts(data as *const u16, len)),
        _ => Units::Four(std::slice::from_raw_parts(data as *const u32, len)),
    };
    // Strings are canonical: the kind is the class, except that 1-byte ones may be ASCII.
    let class = match units {
        Units::One(_) if ffi::PyUnicode_IS_ASCII(p) != 0 => Class::Ascii,
        Units::One(_) => Class::Latin1,
        Units::Two(_) => Class::Ucs2,
        Units::Four(_) => Class::Ucs4,
    };
    Ok(Native { units, class })
}

/// The `n` code units of a new str, to write before it is shared.
///
/// # Safety
/// `raw` is a str just made by `PyUnicode_New` of length `n`, not yet shared, that outlives `'py`.
pub unsafe fn units_mut<'py>(raw: *mut ffi::PyObject, n: usize) -> UnitsMut<'py> {
    let data = ffi::PyUnicode_DATA(raw);
    match ffi::PyUnicode_KIND(raw) {
        ffi::PyUnicode_1BYTE_KIND => UnitsMut::One(std::slice::from_raw_parts_mut(data as *mut u8, n)),
        ffi::PyUnicode_2BYTE_KIND => UnitsMut::Two(std::slice::from_raw_parts_mut(data as *mut u16, n)),
        _ => UnitsMut::Four(std::slice::from_raw_parts_mut(data as *mut u32, n)),
    }
}

/// In a debug build, CPython's own check of a str written in place (its kind the narrowest that
/// holds its largest code point, its ASCII flag, its terminator); nothing in a release build.
#[inline(always)]
pub fn check_written(s: &Bound<'_, PyString>) {
    #[cfg(debug_assertions)]
    {
        // SAFETY: a live, fully written str; the check reads it and aborts the process if it is inconsistent.
        let consistent = unsafe { _PyUnicode_CheckConsistency(s.as_ptr(), 1) };
        debug_assert_eq!(consistent, 1, "a str written in place is inconsistent");
        // CPython's check asserts nothing in a release CPython: the width is checked here too.
        // SAFETY: as above.
        let native = unsafe { native_of(s) }.expect("a new str is ready");
        let top = match native.units {
            Units::One(u) => u.iter().map(|&c| u32::from(c)).max(),
            Units::Two(u) => u.iter().map(|&c| u32::from(c)).max(),
            Units::Four(u) => u.iter().copied().max(),
        };
        let narrowest = match top.unwrap_or(0) {
            0..=0x7F => Class::Ascii,
            0x80..=0xFF => Class::Latin1,
            0x100..=0xFFFF => Class::Ucs2,
            _ => Class::Ucs4,
        };
        debug_assert!(native.class == narrowest, "a str written in place at a width not its narrowest");
    }
    #[cfg(not(debug_assertions))]
    let _ = s;
}

/// A dict's table read where it lies: CPython 3.11 to 3.14's `PyDictObject` and `PyDictKeysObject`
/// (`Include/internal/pycore_dict.h`), whose entries `PyDict_Next` reaches through checks and a call.
pub mod dict {
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

    /// What a dict's table is, by the kind of its keys.
    pub enum Table {
        /// A combined table whose keys are all exact str (`DICT_KEYS_UNICODE`), its entries.
        StrKeys(Combined),
        /// A table split between keys and values (a plain class's instance dict): str keys only.
        Split,
        /// A table that may hold any key (`DICT_KEYS_GENERAL`).
        AnyKeys,
    }

    /// The table of `dict`.
    ///
    /// # Safety
    /// `dict` is a live dict, read with the GIL held, on a CPython whose `Internals` read dicts in place;
    /// the result is used before anything can change the dict.
    #[inline(always)]
    pub unsafe fn table(dict: *mut ffi::PyObject) -> Table {
        let dict = dict as *const Dict;
        if !(*dict).ma_values.is_null() {
            return Table::Split;
        }
        match combined(dict) {
            Some(entries) if entries.width == 2 => Table::StrKeys(entries),
            _ => Table::AnyKeys,
        }
    }

    /// The entries of a combined table of either kind of keys.
    ///
    /// # Safety
    /// As `table`'s, and the table is combined.
    #[inline(always)]
    unsafe fn combined(dict: *const Dict) -> Option<Combined> {
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

    /// Whether this is a default (GIL, no trace-refs) build of CPython, whose layouts the table lists.
    pub(super) fn default_build(py: Python<'_>) -> bool {
        let layout = || -> PyResult<bool> {
            let sys = py.import("sys")?;
            let cpython = sys.getattr("implementation")?.getattr("name")?.extract::<String>()? == "cpython";
            let gil = !py.import("sysconfig")?.call_method1("get_config_var", ("Py_GIL_DISABLED",))?.is_truthy()?;
            let trace_refs = sys.hasattr("getobjects")?;
            Ok(cpython && gil && !trace_refs)
        };
        layout().unwrap_or(false)
    }

    /// Whether this interpreter lays dicts out as `combined` reads them: it reads back known dicts.
    pub(super) fn usable(py: Python<'_>) -> bool {
        reads_back(py).unwrap_or(false)
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
            let dict_ptr = dict.as_ptr() as *const Dict;
            // SAFETY: a live combined dict (made by `PyDict_New`), with the GIL held, not changed
            // while read; `usable` has checked the version.
            let Some(entries) = (unsafe { (*dict_ptr).ma_values.is_null().then(|| combined(dict_ptr)).flatten() })
            else {
                return Ok(false);
            };
            let found = dict
                .iter()
                .enumerate()
                .all(|(i, (key, value))| entries.get(i as isize) == Some((key.as_ptr(), value.as_ptr())));
            Ok(found && entries.get(dict.len() as isize).is_none())
        };
        // SAFETY: as above.
        let kinds = unsafe {
            matches!(table(str_keys.as_ptr()), Table::StrKeys(_)) && matches!(table(any_keys.as_ptr()), Table::AnyKeys)
        };
        Ok(reads(&str_keys)? && reads(&any_keys)? && kinds)
    }
}
