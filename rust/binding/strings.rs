//! The string boundary: Python `str` in and out, with exact semantics for every code point.
//!
//! Input text is borrowed from the Python object (its cached UTF-8) with no copy;
//! a string holding lone surrogates is encoded once with `surrogatepass`. Output
//! is decoded with `surrogatepass`, which costs nothing extra on valid UTF-8.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::model::{Int, Text};

/// Keeps alive every Python object whose bytes a renderer borrows, and records every
/// field value read, so that a later call can tell whether any input changed.
pub struct Strings<'py> {
    py: Python<'py>,
    keep: RefCell<Vec<Bound<'py, PyAny>>>,
    read: RefCell<Reads>,
    /// Every value read is an immutable object (str, int, bool, None).
    immutable: Cell<bool>,
}

/// What was read, in order: the value objects, and where attributes were missing or lists ended.
#[derive(Default)]
pub struct Reads {
    pub values: Vec<Py<PyAny>>,
    pub marks: Vec<Mark>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Missing(usize),
    ListEnd(usize),
}

impl Reads {
    /// The same objects (by identity) read in the same shape.
    pub fn same_as(&self, other: &Reads) -> bool {
        self.marks == other.marks
            && self.values.len() == other.values.len()
            && self.values.iter().zip(&other.values).all(|(a, b)| a.as_ptr() == b.as_ptr())
    }
}

impl<'py> Strings<'py> {
    pub fn new(py: Python<'py>) -> Self {
        Strings { py, keep: RefCell::new(Vec::new()), read: RefCell::default(), immutable: Cell::new(true) }
    }

    /// The values read so far, if all of them are immutable (else a cache could go stale).
    pub fn reads(&self) -> Option<std::cell::Ref<'_, Reads>> {
        self.immutable.get().then(|| self.read.borrow())
    }

    /// The same, giving them up.
    pub fn into_reads(self) -> Option<Reads> {
        self.immutable.get().then(|| self.read.into_inner())
    }

    fn note(&self, value: &Bound<'py, PyAny>) {
        // SAFETY: type checks on a live object.
        let immutable = unsafe {
            let p = value.as_ptr();
            ffi::PyUnicode_CheckExact(p) != 0
                || ffi::PyLong_CheckExact(p) != 0
                || ffi::PyBool_Check(p) != 0
                || value.is_none()
        };
        if !immutable {
            self.immutable.set(false);
        }
        self.read.borrow_mut().values.push(value.clone().unbind());
    }

    /// Makes room for the reads of `fields` more field values, so that the records rarely grow.
    pub fn expect(&self, fields: usize) {
        self.read.borrow_mut().values.reserve(fields);
        self.keep.borrow_mut().reserve(fields);
    }

    /// `obj.name`, recorded.
    pub fn attr(&self, obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
        let value = obj.getattr(name)?;
        self.note(&value);
        Ok(value)
    }

    /// `getattr(obj, name, <missing>)`, recorded.
    pub fn attr_opt(
        &self,
        obj: &Bound<'py, PyAny>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let value = obj.getattr_opt(name)?;
        match &value {
            Some(v) => self.note(v),
            None => {
                let mut read = self.read.borrow_mut();
                let at = read.values.len();
                read.marks.push(Mark::Missing(at));
            }
        }
        Ok(value)
    }

    /// Records a value that was not read as an attribute (an argument).
    pub fn arg(&self, value: &Bound<'py, PyAny>) {
        self.note(value);
    }

    /// Records the end of a list of inputs.
    pub fn list_end(&self) {
        let mut read = self.read.borrow_mut();
        let at = read.values.len();
        read.marks.push(Mark::ListEnd(at));
    }

    pub fn py(&self) -> Python<'py> {
        self.py
    }

    /// The bytes of `s.encode("utf-8", "surrogatepass")`, borrowed for as long as `self` lives.
    pub fn text<'s>(&'s self, s: &Bound<'py, PyString>) -> PyResult<&'s [u8]> {
        let mut size: ffi::Py_ssize_t = 0;
        // SAFETY: `s` is a live str; the returned buffer belongs to it (or to the bytes
        // object made from it), and that object is pushed into `keep`, which only grows
        // and lives as long as `self`: the slice cannot outlive its owner.
        unsafe {
            let ptr = ffi::PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size);
            let (ptr, owner) = if ptr.is_null() {
                // Lone surrogates: strict UTF-8 failed, surrogatepass cannot.
                drop(PyErr::take(self.py));
                let raw = ffi::PyUnicode_AsEncodedString(s.as_ptr(), c"utf-8".as_ptr(), c"surrogatepass".as_ptr());
                let bytes = Bound::from_owned_ptr_or_err(self.py, raw)?.cast_into::<PyBytes>()?;
                size = ffi::PyBytes_Size(bytes.as_ptr());
                (ffi::PyBytes_AsString(bytes.as_ptr()) as *const u8, bytes.into_any())
            } else {
                (ptr as *const u8, s.clone().into_any())
            };
            self.keep.borrow_mut().push(owner);
            Ok(std::slice::from_raw_parts(ptr, size as usize))
        }
    }

    /// Text of a `str`, or `None` when `obj` is not a `str`.
    pub fn try_text<'s>(&'s self, obj: &Bound<'py, PyAny>) -> PyResult<Option<&'s [u8]>> {
        match obj.cast::<PyString>() {
            Ok(s) => self.text(s).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// `obj or ""` for a field that must be `str` or `None`; `what` names the field for the error.
    pub fn str_or_none<'s>(&'s self, obj: &Bound<'py, PyAny>, what: impl FnOnce() -> String) -> PyResult<Text<'s>> {
        if obj.is_none() {
            return Ok(Cow::Borrowed(b""));
        }
        match self.try_text(obj)? {
            Some(t) => Ok(Cow::Borrowed(t)),
            None => Err(type_error(what(), "str or None", obj)),
        }
    }

    /// `Some(text)` for a `str`, `None` for `None`, a `TypeError` naming `what` otherwise.
    pub fn optional_str<'s>(
        &'s self,
        obj: &Bound<'py, PyAny>,
        what: impl FnOnce() -> String,
    ) -> PyResult<Option<Text<'s>>> {
        if obj.is_none() {
            return Ok(None);
        }
        match self.try_text(obj)? {
            Some(t) => Ok(Some(Cow::Borrowed(t))),
            None => Err(type_error(what(), "str or None", obj)),
        }
    }

    /// `f"{obj}"`: the text of any object, as an f-string renders it.
    pub fn format<'s>(&'s self, obj: &Bound<'py, PyAny>) -> PyResult<Text<'s>> {
        // Only an exact str is its own text: a subclass's __format__ or __str__ decides.
        if let Ok(s) = obj.cast_exact::<PyString>() {
            return Ok(Cow::Borrowed(self.text(s)?));
        }
        // SAFETY: PyObject_Format with an empty spec is what an f-string calls.
        let formatted = unsafe {
            let empty = PyString::new(self.py, "");
            Bound::from_owned_ptr_or_err(self.py, ffi::PyObject_Format(obj.as_ptr(), empty.as_ptr()))?
        };
        let s = formatted.cast_into::<PyString>()?;
        Ok(Cow::Borrowed(self.text(&s)?))
    }

    /// An int field rendered with f-string semantics; `None` when `obj` is `None`.
    pub fn int_or_none<'s>(
        &'s self,
        obj: &Bound<'py, PyAny>,
        what: impl FnOnce() -> String,
    ) -> PyResult<Option<Int<'s>>> {
        if obj.is_none() {
            return Ok(None);
        }
        if obj.is_exact_instance_of::<pyo3::types::PyInt>() {
            if let Ok(v) = obj.extract::<i64>() {
                return Ok(Some(Int::Small(v)));
            }
        }
        if obj.is_instance_of::<pyo3::types::PyInt>() {
            return Ok(Some(Int::Rendered(self.format(obj)?)));
        }
        Err(type_error(what(), "int or None", obj))
    }
}

/// `TypeError("{what} must be {expected}, not {type}")`.
pub fn type_error(what: String, expected: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    let type_name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into());
    PyTypeError::new_err(format!("{what} must be {expected}, not {type_name}"))
}

/// A Python `str` from rendered bytes (surrogatepass UTF-8).
pub fn to_py_str<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    // SAFETY: the pointer and length describe `bytes`, which outlives the call.
    unsafe {
        let raw = ffi::PyUnicode_DecodeUTF8(
            bytes.as_ptr() as *const std::os::raw::c_char,
            bytes.len() as ffi::Py_ssize_t,
            c"surrogatepass".as_ptr(),
        );
        Ok(Bound::from_owned_ptr_or_err(py, raw)?.cast_into::<PyString>()?)
    }
}

/// `repr(obj)` for error messages; never fails.
pub fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr().map(|r| r.to_string_lossy().into_owned()).unwrap_or_else(|_| "<?>".into())
}
