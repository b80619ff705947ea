//! The compile cache's inputs as Python objects: the tracked classes, and the walk over
//! what a compile reads (the proofs themselves are `crate::compile_cache`'s).

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyNone, PyString, PyType};

use super::cpython::version_tag;
use super::memory::Detail;
use super::strings::Held;
use crate::compile_cache::{self, Step, Tracked, Versions, MAX_TRACKED};
use crate::trace::Id;

/// The last compile of one memory: its text, and its detail when asked for.
pub type Cache = compile_cache::Cache<Held, Py<PyString>, Detail>;

/// The classes whose every attribute write calls `count_edit` (memprompt's `Block`, `Source`, ...).
static TRACKED: Tracked = Tracked::new();

/// The tracked classes themselves, held so that their addresses stay theirs.
static TRACKED_CLASSES: Mutex<Vec<Py<PyType>>> = Mutex::new(Vec::new());

/// Called by the tracked classes after every attribute write or delete.
#[pyfunction]
pub fn count_edit() {
    compile_cache::count_edit();
}

/// Registers classes whose every attribute write calls `count_edit`, and whose attributes are plain slots.
#[pyfunction]
#[pyo3(signature = (*classes))]
pub fn track_edits(classes: Vec<Bound<'_, PyType>>) -> PyResult<()> {
    let mut held = TRACKED_CLASSES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    for class in classes {
        match TRACKED.register(class.as_type_ptr() as usize) {
            Ok(true) => held.push(class.unbind()),
            Ok(false) => {}
            Err(_) => return Err(PyValueError::new_err(format!("at most {MAX_TRACKED} classes can be tracked"))),
        }
    }
    Ok(())
}

impl Id for Bound<'_, PyAny> {
    fn id(&self) -> usize {
        self.as_ptr() as usize
    }
}

/// The memory's fields and the compile arguments: everything a compile reads.
pub struct Inputs<'a, 'py> {
    pub blocks: &'a Bound<'py, PyAny>,
    pub file_blocks: &'a Bound<'py, PyAny>,
    pub agent_type: &'a Bound<'py, PyAny>,
    pub git_enabled: bool,
    pub tool_usage_rules: Option<&'a Bound<'py, PyAny>>,
    pub sources: Option<&'a Bound<'py, PyAny>>,
    pub max_files_open: Option<&'a Bound<'py, PyAny>>,
    pub llm_config: Option<&'a Bound<'py, PyAny>>,
}

impl<'py> compile_cache::Inputs for Inputs<'_, 'py> {
    type Item = Bound<'py, PyAny>;
    type Held = Held;

    fn walk<V: FnMut(Step<'_, Self::Item>) -> bool>(&self, visit: &mut V) -> bool {
        let none = PyNone::get(self.blocks.py());
        let arg = |a: Option<&Bound<'py, PyAny>>| a.cloned().unwrap_or_else(|| none.as_any().clone());
        let (rules, sources, max_files_open, llm_config) =
            (arg(self.tool_usage_rules), arg(self.sources), arg(self.max_files_open), arg(self.llm_config));
        let plain_text = self.agent_type.is_none() || self.agent_type.is_exact_instance_of::<PyString>();
        list(self.blocks, visit)
            && list(self.file_blocks, visit)
            && visit(Step::Number(self.git_enabled as usize))
            && (plain_text && visit(Step::Object(self.agent_type)))
            && visit(read_or_none(&rules))
            && (if sources.is_none() { visit(Step::Object(&sources)) } else { list(&sources, visit) })
            && (is_scalar(&max_files_open) && visit(Step::Object(&max_files_open)))
            && visit(read_or_none(&llm_config))
    }

    /// Of a tracked class, with a valid version tag (so that a change to the class itself is seen).
    fn tracked(&self, item: &Self::Item) -> bool {
        let class = item.get_type_ptr();
        TRACKED.contains(class as usize) && version_tag(class) != 0
    }

    fn hold(item: &Self::Item) -> Held {
        Held::of(item)
    }

    fn versions(&self) -> Versions {
        TRACKED.versions(|class| version_tag(class as *mut ffi::PyTypeObject))
    }
}

/// An object whose attributes are read, or None.
fn read_or_none<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Step<'a, Bound<'py, PyAny>> {
    if obj.is_none() {
        Step::Object(obj)
    } else {
        Step::Read(obj)
    }
}

/// An exact list of objects whose attributes are read: the list, its length, then each item.
fn list<'py, V: FnMut(Step<'_, Bound<'py, PyAny>>) -> bool>(obj: &Bound<'py, PyAny>, visit: &mut V) -> bool {
    let Ok(items) = obj.cast_exact::<PyList>() else { return false };
    let len = items.len();
    visit(Step::Object(obj))
        && visit(Step::Number(len))
        && (0..len).all(|i| {
            // SAFETY: `i < len`, and the walk runs no Python code, so the list cannot change meanwhile.
            let item =
                unsafe { Borrowed::from_ptr(obj.py(), ffi::PyList_GET_ITEM(items.as_ptr(), i as ffi::Py_ssize_t)) };
            visit(Step::Read(&item))
        })
}

/// An immutable value that may be passed as is.
fn is_scalar(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_none()
        || obj.is_exact_instance_of::<PyString>()
        || obj.is_exact_instance_of::<PyInt>()
        || obj.is_instance_of::<PyBool>()
}
