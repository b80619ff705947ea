//! The string boundary: Python `str` in and out, with exact semantics for every code point.
//!
//! Input text the renderers read is borrowed from the Python object (its cached UTF-8)
//! with no copy; a string holding lone surrogates is encoded once with `surrogatepass`.
//! Text that is only copied (a memory section, a variable's value) is read in its own
//! width (`Native`). Output is measured first (`Count`: exact length and width class),
//! allocated once with `PyUnicode_New` at that final width, and written in place (`Wide`).

use std::cell::{Cell, RefCell};

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use super::attr::Field;
use super::cpython::native_of;
use crate::model::{Chars, Int, Text};
use crate::out::{write_final, Count, Render, Section, UnitsMut};
use crate::text::{Class, Native, Units};
use crate::trace::{Id, Trace};

/// Keeps alive every Python object whose bytes a renderer borrows, and, for the compile
/// cache (`recorded`), records every field value read, so that a later call can tell
/// whether any input changed.
pub struct Strings<'py> {
    py: Python<'py>,
    /// Objects borrowed from that are not among the values read (made here, or given).
    keep: RefCell<Vec<Bound<'py, PyAny>>>,
    read: RefCell<Reads>,
    /// Every value read is an immutable object (str, int, bool, None).
    immutable: Cell<bool>,
    /// Reads are recorded (for the compile cache); else only what is borrowed is held.
    recording: bool,
}

/// A value read, held so that no other object can take its id.
pub struct Held(Py<PyAny>);

impl Held {
    pub fn of(value: &Bound<'_, PyAny>) -> Self {
        Held(value.clone().unbind())
    }

    /// Shows the object held to the garbage collector.
    pub fn visit(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.0)
    }
}

impl Id for Held {
    fn id(&self) -> usize {
        self.0.as_ptr() as usize
    }
}

/// What was read: the values themselves, as an identity trace.
pub type Reads = Trace<Held>;

/// A place in the read order that is not a field: what an argument was read as, where a list
/// of inputs ended, a truth value decided there. Its numbers are never an object's address.
#[derive(Clone, Copy)]
pub enum Site {
    AgentType = 1,
    LlmConfig,
    Blocks,
    ToolUsageRules,
    MaxFilesOpen,
    Sources,
    FileBlocks,
    Listed,
    ClientSkills,
}

impl Site {
    fn end(self) -> usize {
        (self as usize) << 2
    }

    fn arg(self) -> usize {
        (self as usize) << 2 | 1
    }

    fn truth(self, truth: bool) -> usize {
        (self as usize) << 2 | 2 | truth as usize
    }
}

impl<'py> Strings<'py> {
    /// Strings that record nothing, for a render never cached: a value read and not
    /// borrowed from is not held, so reading many objects holds only what is used.
    pub fn new(py: Python<'py>) -> Self {
        Self::with_recording(py, false)
    }

    /// Strings whose reads are recorded, for a compile the compile cache may keep.
    pub fn recorded(py: Python<'py>) -> Self {
        Self::with_recording(py, true)
    }

    fn with_recording(py: Python<'py>, recording: bool) -> Self {
        Strings { py, keep: RefCell::new(Vec::new()), read: RefCell::default(), immutable: Cell::new(true), recording }
    }

    /// The values read so far, if they were recorded and all are immutable (else a cache could go stale).
    pub fn reads(&self) -> Option<std::cell::Ref<'_, Reads>> {
        (self.recording && self.immutable.get()).then(|| self.read.borrow())
    }

    /// The same, giving them up.
    pub fn into_reads(self) -> Option<Reads> {
        (self.recording && self.immutable.get()).then(|| self.read.into_inner())
    }

    /// Records a value read as `what`, when reads are recorded (the check inlined: most calls record nothing).
    #[inline]
    fn note(&self, what: usize, value: &Bound<'py, PyAny>) {
        if self.recording {
            self.record(what, value);
        }
    }

    /// The value in the record of reads, and whether it keeps the record valid (immutable).
    fn record(&self, what: usize, value: &Bound<'py, PyAny>) {
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
        self.read.borrow_mut().read(what, Held::of(value));
    }

    /// Records a mark (a field missing, a list's end, a truth value), when reads are recorded.
    #[inline]
    fn mark(&self, what: usize) {
        if self.recording {
            self.read.borrow_mut().mark(what);
        }
    }

    /// Makes room for the reads of `fields` more field values, so that the record (or,
    /// unrecorded, the list of what is held) rarely grows.
    pub fn expect(&self, fields: usize) {
        if self.recording {
            // A list's end is a mark; so is each attribute found missing and each truth value.
            self.read.borrow_mut().reserve(fields + 8);
        } else {
            self.keep.borrow_mut().reserve(fields);
        }
    }

    /// Holds `obj` as long as `self` lives, unless it is the value read last (held already).
    fn hold(&self, obj: &Bound<'py, PyAny>) {
        let held = self.read.borrow().last().is_some_and(|v| v.id() == obj.as_ptr() as usize);
        if !held {
            self.keep.borrow_mut().push(obj.clone());
        }
    }

    /// `getattr(obj, field)`, recorded.
    #[inline(always)]
    pub fn attr(&self, obj: &Bound<'py, PyAny>, field: &Field<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = super::attr::get(obj, field)?;
        self.note(field.name_id(), &value);
        Ok(value)
    }

    /// `getattr(obj, field, <missing>)`, recorded.
    pub fn attr_opt(&self, obj: &Bound<'py, PyAny>, field: &Field<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let value = super::attr::get_opt(obj, field)?;
        match &value {
            Some(v) => self.note(field.name_id(), v),
            None => self.mark(field.name_id()),
        }
        Ok(value)
    }

    /// `getattr(obj, field)` recorded, or `None` when `skip` (which runs no Python code) turns it
    /// down; unrecorded, a value skipped is never referenced (`attr::get_unless`).
    pub fn attr_unless(
        &self,
        obj: &Bound<'py, PyAny>,
        field: &Field<'py>,
        skip: impl Fn(&Bound<'py, PyAny>) -> bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.recording {
            let value = self.attr(obj, field)?;
            return Ok((!skip(&value)).then_some(value));
        }
        super::attr::get_unless(obj, field, skip)
    }

    /// Records a value that was not read as an attribute (an argument, at `site`).
    pub fn arg(&self, site: Site, value: &Bound<'py, PyAny>) {
        self.note(site.arg(), value);
    }

    /// Records the end of the inputs read at `site` (a list, or an argument's reads).
    pub fn end(&self, site: Site) {
        self.mark(site.end());
    }

    /// `obj`'s truth value (`bool(obj)`), recorded as decided at `site`: what follows depends on it.
    pub fn truth(&self, site: Site, obj: &Bound<'py, PyAny>) -> PyResult<bool> {
        let truth = obj.is_truthy()?;
        self.mark(site.truth(truth));
        Ok(truth)
    }

    pub fn py(&self) -> Python<'py> {
        self.py
    }

    /// The bytes of `s.encode("utf-8", "surrogatepass")`, and the bytes object that owns them
    /// when `s` itself cannot (lone surrogates).
    fn utf8(&self, s: &Bound<'py, PyString>) -> PyResult<(*const u8, usize, Option<Bound<'py, PyBytes>>)> {
        let mut size: ffi::Py_ssize_t = 0;
        // SAFETY: `s` is a live str; the buffer returned belongs to it, or to the bytes returned with it.
        unsafe {
            let ptr = ffi::PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size);
            if !ptr.is_null() {
                return Ok((ptr as *const u8, size as usize, None));
            }
            // Lone surrogates: strict UTF-8 failed, surrogatepass cannot.
            drop(PyErr::take(self.py));
            let raw = ffi::PyUnicode_AsEncodedString(s.as_ptr(), c"utf-8".as_ptr(), c"surrogatepass".as_ptr());
            let bytes = Bound::from_owned_ptr_or_err(self.py, raw)?.cast_into::<PyBytes>()?;
            let size = ffi::PyBytes_Size(bytes.as_ptr()) as usize;
            Ok((ffi::PyBytes_AsString(bytes.as_ptr()) as *const u8, size, Some(bytes)))
        }
    }

    /// The bytes of `s.encode("utf-8", "surrogatepass")`, borrowed for as long as `self` lives.
    pub fn text<'s>(&'s self, s: &Bound<'py, PyString>) -> PyResult<&'s [u8]> {
        let native = self.native(s)?;
        self.utf8_of(s, native)
    }

    /// The UTF-8 of `s`, which is held already and whose code units are `native`.
    fn utf8_of<'s>(&'s self, s: &Bound<'py, PyString>, native: Native<'s>) -> PyResult<&'s [u8]> {
        // ASCII code units are their own UTF-8: nothing to ask Python for.
        if let Native { units: Units::One(ascii), class: Class::Ascii } = native {
            return Ok(ascii);
        }
        let (ptr, len, bytes) = self.utf8(s)?;
        if let Some(bytes) = &bytes {
            self.hold(bytes.as_any());
        }
        // SAFETY: the owner of the bytes (`s`, or the bytes made from it) is held for as long as `self` lives.
        Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
    }

    /// `f` of the bytes of `s.encode("utf-8", "surrogatepass")`, holding nothing after it.
    pub fn peek_text<R>(&self, s: &Bound<'py, PyString>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
        let (ptr, len, _bytes) = self.utf8(s)?;
        // SAFETY: `s`, and the bytes made from it, live until `f` returns.
        Ok(f(unsafe { std::slice::from_raw_parts(ptr, len) }))
    }

    /// The code units of `s` in its own width, borrowed for as long as `self` lives.
    pub fn native<'s>(&'s self, s: &Bound<'py, PyString>) -> PyResult<Native<'s>> {
        self.hold(s.as_any());
        // SAFETY: `s` is held (`hold`) for as long as `self` lives, and a ready str's code units never change.
        unsafe { native_of(s) }
    }

    /// Text of a `str`, or `None` when `obj` is not a `str`.
    pub fn try_text<'s>(&'s self, obj: &Bound<'py, PyAny>) -> PyResult<Option<&'s [u8]>> {
        match obj.cast::<PyString>() {
            Ok(s) => self.text(s).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Both forms of a `str`: its UTF-8 to read and its own code units to copy.
    pub fn whole<'s>(&'s self, s: &Bound<'py, PyString>) -> PyResult<Text<'s>> {
        let native = self.native(s)?;
        Ok(Text::with_native(self.utf8_of(s, native)?, native))
    }

    /// `obj or ""` for a field that is only copied, in its own width; `what` names the field for the error.
    pub fn chars_or_none<'s>(&'s self, obj: &Bound<'py, PyAny>, what: impl FnOnce() -> String) -> PyResult<Chars<'s>> {
        self.checked_chars(obj)?.ok_or_else(|| type_error(what(), "str or None", obj))
    }

    /// `chars_or_none`, `None` for a value of another type (its error is the caller's to raise).
    pub fn checked_chars<'s>(&'s self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Chars<'s>>> {
        if obj.is_none() {
            return Ok(Some(Chars::default()));
        }
        match obj.cast::<PyString>() {
            Ok(s) => Ok(Some(Chars::Native(self.native(s)?))),
            Err(_) => Ok(None),
        }
    }

    /// `whole`, or `None` when `obj` is not a `str`.
    fn try_whole<'s>(&'s self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Text<'s>>> {
        match obj.cast::<PyString>() {
            Ok(s) => self.whole(s).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// `obj or ""` for a field that must be `str` or `None`; `what` names the field for the error.
    pub fn str_or_none<'s>(&'s self, obj: &Bound<'py, PyAny>, what: impl FnOnce() -> String) -> PyResult<Text<'s>> {
        self.checked_str(obj)?.ok_or_else(|| type_error(what(), "str or None", obj))
    }

    /// `str_or_none`, `None` for a value of another type (its error is the caller's to raise).
    pub fn checked_str<'s>(&'s self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Text<'s>>> {
        if obj.is_none() {
            return Ok(Some(Text::from(b"")));
        }
        self.try_whole(obj)
    }

    /// `str_or_none`'s UTF-8 alone, for a field that is only read.
    pub fn utf8_or_none<'s>(&'s self, obj: &Bound<'py, PyAny>, what: impl FnOnce() -> String) -> PyResult<&'s [u8]> {
        if obj.is_none() {
            return Ok(b"");
        }
        match obj.cast::<PyString>() {
            Ok(s) => self.text(s),
            Err(_) => Err(type_error(what(), "str or None", obj)),
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
        match self.try_whole(obj)? {
            Some(t) => Ok(Some(t)),
            None => Err(type_error(what(), "str or None", obj)),
        }
    }

    /// `f"{obj}"`: the text of any object, as an f-string renders it.
    pub fn format<'s>(&'s self, obj: &Bound<'py, PyAny>) -> PyResult<Text<'s>> {
        // Only an exact str is its own text: a subclass's __format__ or __str__ decides.
        if let Ok(s) = obj.cast_exact::<PyString>() {
            return self.whole(s);
        }
        // An exact int's is its decimal digits, made here without a Python str.
        if obj.is_exact_instance_of::<pyo3::types::PyInt>() {
            if let Ok(n) = obj.extract::<i64>() {
                return Ok(Text::from(n.to_string().into_bytes()));
            }
        }
        // SAFETY: PyObject_Format with an empty spec is what an f-string calls.
        let formatted = unsafe {
            let empty = PyString::new(self.py, "");
            Bound::from_owned_ptr_or_err(self.py, ffi::PyObject_Format(obj.as_ptr(), empty.as_ptr()))?
        };
        let s = formatted.cast_into::<PyString>()?;
        self.whole(&s)
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
            return Ok(Some(Int::Rendered(Box::new(self.format(obj)?))));
        }
        Err(type_error(what(), "int or None", obj))
    }
}

/// `TypeError("{what} must be {expected}, not {type}")`.
pub fn type_error(what: String, expected: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    let type_name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into());
    PyTypeError::new_err(format!("{what} must be {expected}, not {type_name}"))
}

/// Output this large is written with the GIL released, so that other Python threads run.
const DETACH_ABOVE: usize = 64 * 1024;

/// A fresh `str` of `count`'s length and width class, and its code units to write.
fn new_str<'py>(py: Python<'py>, count: Count) -> PyResult<(Bound<'py, PyString>, UnitsMut<'py>)> {
    let Ok(len) = ffi::Py_ssize_t::try_from(count.chars) else {
        return Err(pyo3::exceptions::PyMemoryError::new_err(()));
    };
    // SAFETY: PyUnicode_New returns a new str (or NULL with MemoryError set) whose
    // `len` code units are ours to write until it is shared; the slice borrows them
    // for 'py, and the str is not handed out before they are written.
    unsafe {
        let raw = ffi::PyUnicode_New(len, count.class.max_char());
        let s = Bound::from_owned_ptr_or_err(py, raw)?.cast_into_unchecked::<PyString>();
        Ok((s, super::cpython::units_mut(raw, count.chars)))
    }
}

/// What `r` renders, as a `str` made once at its final length and width, and its
/// sections in code points. Output too large for memory is `MemoryError`.
pub fn render_str<'py, R: Render + Sync + ?Sized>(
    py: Python<'py>,
    r: &R,
) -> PyResult<(Bound<'py, PyString>, Vec<Section>)> {
    let (s, sections, _) = render(py, r, false)?;
    Ok((s, sections))
}

/// `render_str`, with the output's fingerprint, hashed from the finished `str`.
pub fn render_str_hashed<'py, R: Render + Sync + ?Sized>(
    py: Python<'py>,
    r: &R,
) -> PyResult<(Bound<'py, PyString>, Vec<Section>, u128)> {
    render(py, r, true)
}

fn render<'py, R: Render + Sync + ?Sized>(
    py: Python<'py>,
    r: &R,
    hashed: bool,
) -> PyResult<(Bound<'py, PyString>, Vec<Section>, u128)> {
    let count = Count::of(r).map_err(super::to_py_err)?;
    let (s, mut units) = new_str(py, count)?;
    let mut write = move || {
        let sections = write_final(r, units.reborrow())?;
        Ok((sections, if hashed { crate::fingerprint::fingerprint_native(units.native(count.class)) } else { 0 }))
    };
    let written = if count.chars > DETACH_ABOVE { py.detach(write) } else { write() };
    let (sections, fingerprint) = written.map_err(super::to_py_err)?;
    super::cpython::check_written(&s);
    Ok((s, sections, fingerprint))
}

/// Measures, allocates and writes many renders: measuring and writing on Rust threads
/// (`batch::map`), allocating with the GIL held.
pub fn render_strs<'py, R: Render + Sync>(
    py: Python<'py>,
    rs: &[Option<R>],
) -> PyResult<Vec<Option<Bound<'py, PyString>>>> {
    let counts = py.detach(|| crate::batch::map(rs, |r| r.as_ref().map(Count::of).transpose()));
    let counts = counts.map_err(super::to_py_err)?;
    let mut strs = Vec::with_capacity(rs.len());
    let mut jobs = Vec::with_capacity(rs.len());
    for (r, count) in rs.iter().zip(counts) {
        match (r, count.map_err(super::to_py_err)?) {
            (Some(r), Some(count)) => {
                let (s, units) = new_str(py, count)?;
                strs.push(Some(s));
                jobs.push(std::sync::Mutex::new(Some((r, units))));
            }
            _ => strs.push(None),
        }
    }
    let written = py.detach(|| {
        crate::batch::map(&jobs, |job| match job.lock().ok().and_then(|mut j| j.take()) {
            Some((r, units)) => write_final(r, units).map(drop),
            None => Err(crate::error::RenderError::Value("a render was lost".into())),
        })
    });
    for result in written.map_err(super::to_py_err)? {
        result.map_err(super::to_py_err)?;
    }
    strs.iter().flatten().for_each(super::cpython::check_written);
    Ok(strs)
}

/// A Python `str` of surrogatepass UTF-8 text, written at its final width.
pub fn to_py_str<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    render_str(py, bytes).map(|(s, _)| s)
}

/// `repr(obj)` for error messages; never fails.
pub fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr().map(|r| r.to_string_lossy().into_owned()).unwrap_or_else(|_| "<?>".into())
}
