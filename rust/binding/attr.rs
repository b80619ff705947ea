//! `getattr(obj, name)` exactly as CPython does it, with its common case taken directly.
//!
//! Letta's inputs are pydantic models: generic attribute lookup behind `BaseModel.__getattr__`,
//! fields in the instance `__dict__`, no class attribute of a field's name. CPython's own path
//! for them (`slot_tp_getattr_hook`, then `PyObject_GenericGetAttr`) looks the type up three
//! times before it reads the dict. Here what a (class, version, name) comes to is remembered
//! across calls (`crate::lookups`), with where the name sat in a dict, and the dict read
//! there directly when nothing on the class can take precedence and every key of the dict is an
//! exact str (so the entry keyed by the name itself is what CPython's lookup finds); anything else,
//! a miss there included, takes CPython's path, once. No Python code runs on the direct path.
//! A `Field` read from a list's objects keeps its last answer in front of that table.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::lookups::{Found, Key, Last};

use super::cpython::version_tag;

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
    match in_dict(obj, field) {
        Some(value) => Ok(value),
        None => obj.getattr(field.name),
    }
}

/// `getattr(obj, field, <missing>)`: `None` where `getattr` would raise `AttributeError`.
pub fn get_opt<'py>(obj: &Bound<'py, PyAny>, field: &Field<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
    match in_dict(obj, field) {
        Some(value) => Ok(Some(value)),
        None => obj.getattr_opt(field.name),
    }
}

/// `getattr(obj, field)`, or `None` when `skip` turns it down; a value skipped is not kept.
pub fn get_unless<'py>(
    obj: &Bound<'py, PyAny>,
    field: &Field<'py>,
    skip: impl Fn(&Bound<'py, PyAny>) -> bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let value = get(obj, field)?;
    Ok((!skip(&value)).then_some(value))
}

/// The value generic lookup finds in the instance `__dict__`, when nothing on the class can come
/// first. The common case, an object of the field's last class with the name where it was in a
/// dict of str keys only, is inlined; anything else takes `in_dict_found`.
#[inline(always)]
fn in_dict<'py>(obj: &Bound<'py, PyAny>, field: &Field<'py>) -> Option<Bound<'py, PyAny>> {
    let class = direct::type_of(obj);
    let key = Key { class: class as usize, version: version_tag(class), name: field.name.as_ptr() as usize };
    if let Some((last, Found::Dict { hint: Some(pos) })) = field.last.peek() {
        if last == key {
            if let Some(value) = direct::dict_entry_named(obj, field.name, pos) {
                // Taken before any Python code can run: the dict holds it until then.
                return Some(value.to_owned());
            }
        }
    }
    in_dict_found(obj, field, key)
}

/// `in_dict` by the remembered lookups, or by looking the class up and remembering what it came to.
#[cold]
#[inline(never)]
fn in_dict_found<'py>(obj: &Bound<'py, PyAny>, field: &Field<'py>, key: Key) -> Option<Bound<'py, PyAny>> {
    let name = field.name;
    // Held, as CPython's lookup holds it: the class lookups may run Python code that changes `obj.__class__`.
    let class = obj.get_type();
    let remembered = if key.version == 0 { None } else { field.last.get(key) };
    let hint = match remembered {
        Some(Found::Elsewhere) => return None,
        Some(Found::Dict { hint }) => hint,
        None => {
            let found = if direct::dict_decides(obj, name) {
                Found::Dict { hint: direct::dict_position(obj, name) }
            } else {
                Found::Elsewhere
            };
            // The lookups just made give the class a tag if it had none; a class they changed (a
            // class-dict key's `__eq__` can) has a new one, and what they found is not remembered.
            let tagged = Key { version: version_tag(class.as_type_ptr()), ..key };
            if tagged.version != 0 && (key.version == 0 || key.version == tagged.version) {
                field.last.set(tagged, found);
            }
            let Found::Dict { hint } = found else { return None };
            hint
        }
    };
    // Where the entry there is not the name itself, CPython's own lookup, once, decides.
    hint.and_then(|pos| direct::dict_entry_named(obj, name, pos)).map(|value| value.to_owned())
}

/// The direct path, on CPython's internals (`super::cpython`); no Python code runs on it but in
/// `dict_decides`, whose class lookups may run a class-dict key's `__eq__`.
mod direct {
    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::types::PyString;
    use pyo3::Borrowed;

    use crate::binding::cpython::{self, dict::Table, internals, internals_found};

    pub use cpython::type_of;

    /// Whether generic lookup of `name` on `obj` is decided by its instance `__dict__`: the
    /// type looks attributes up generically and has no attribute of that name itself.
    pub fn dict_decides(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> bool {
        let py = obj.py();
        let Some(internals) = internals(py) else { return false };
        // Held across the lookups, which may run Python code that changes `obj.__class__`.
        let class = obj.get_type();
        let tp = class.as_type_ptr();
        // SAFETY: a slot of the held class, read attached.
        let getattro = unsafe { (*tp).tp_getattro }.map_or(0, |f| f as usize);
        // SAFETY: the class is held across both lookups.
        unsafe {
            let generic_lookup = getattro == ffi::PyObject_GenericGetAttr as *const () as usize
                || (getattro == internals.getattr_hook
                    && internals.type_lookup(tp, pyo3::intern!(py, "__getattribute__"))
                        == internals.object_getattribute);
            // A class attribute of that name (a descriptor, a slot, a plain value) would decide or
            // come after the dict: CPython's own path handles it.
            generic_lookup && internals.type_lookup(tp, name) == 0
        }
    }

    /// The instance dict of `obj`, borrowed, when every key in it is an exact str (so that the entry
    /// whose key is a name itself is what a lookup of it finds), and its table.
    #[inline(always)]
    fn str_keyed_dict(obj: &Bound<'_, PyAny>) -> Option<(*mut ffi::PyObject, Table)> {
        let internals = internals_found(obj.py()).filter(|i| i.dict_in_place)?;
        let dict = internals.instance_dict(obj)?;
        // SAFETY: a live dict, read with the GIL held, on a CPython whose `Internals` read dicts in place.
        match unsafe { cpython::dict::table(dict) } {
            Table::AnyKeys => None,
            table => Some((dict, table)),
        }
    }

    /// The key and value (borrowed) at entry `pos` of a str-keyed `dict`: read in place from a
    /// combined table, the entry `PyDict_Next` finds from there in a split one.
    #[inline(always)]
    fn entry_at(
        dict: *mut ffi::PyObject,
        table: Table,
        pos: isize,
    ) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
        match table {
            Table::StrKeys(entries) => entries.get(pos),
            _ => entry_after(dict, &mut { pos }),
        }
    }

    /// The key and value (borrowed) that `PyDict_Next` finds from `pos`, which it moves past them.
    #[inline(always)]
    fn entry_after(dict: *mut ffi::PyObject, pos: &mut isize) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
        let (mut key, mut value) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: a step of iterating a live dict with the GIL held; no Python code runs.
        (unsafe { ffi::PyDict_Next(dict, pos, &mut key, &mut value) } != 0).then_some((key, value))
    }

    /// The entry of `name` in the instance dict of `obj` (where `PyDict_Next` from there finds it),
    /// found by identity; `None` unless the dict is str-keyed.
    pub fn dict_position(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> Option<isize> {
        let (dict, _) = str_keyed_dict(obj)?;
        let mut pos = 0;
        loop {
            // `PyDict_Next` leaves `pos` just past the entry it found.
            if entry_after(dict, &mut pos)?.0 == name.as_ptr() {
                return Some(pos - 1);
            }
        }
    }

    /// The value of `name` in the str-keyed instance dict of `obj` if the entry after `pos` is that
    /// key (a dict's keys are unique), borrowed from the dict; `None` otherwise, saying nothing more.
    #[inline(always)]
    pub fn dict_entry_named<'a, 'py>(
        obj: &'a Bound<'py, PyAny>,
        name: &Bound<'py, PyString>,
        pos: isize,
    ) -> Option<Borrowed<'a, 'py, PyAny>> {
        let (dict, table) = str_keyed_dict(obj)?;
        let (key, value) = entry_at(dict, table, pos)?;
        // SAFETY: a value of the live dict of `obj`, which holds it until Python code runs.
        (key == name.as_ptr()).then(|| unsafe { Borrowed::from_ptr(obj.py(), value) })
    }
}
