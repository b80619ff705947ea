//! A memory's last compile, and the two ways to prove that nothing changed since.
//!
//! Fast proof: memprompt's own input classes count every attribute write in [`EDITS`].
//! When no write happened and the memory holds the very same lists of the very same
//! objects, the output cannot differ, and no attribute is read at all.
//! Full proof: every field value read is the very same (immutable) object as before;
//! this is how objects of other classes (Letta's pydantic ones) are checked.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyNone, PyString, PyType};

use super::attr::version_tag;
use super::memory::Detail;
use super::strings::Reads;

/// Attribute writes to objects of the tracked classes, ever.
static EDITS: AtomicU64 = AtomicU64::new(0);

/// How many classes can be tracked; memprompt registers five.
const MAX_TRACKED: usize = 16;

/// The addresses of the tracked classes (memprompt's `Block`, `Source`, ...), read without a lock.
static TRACKED: [AtomicUsize; MAX_TRACKED] = [const { AtomicUsize::new(0) }; MAX_TRACKED];

/// The tracked classes themselves, held so that their addresses stay theirs.
static TRACKED_CLASSES: Mutex<Vec<Py<PyType>>> = Mutex::new(Vec::new());

/// Called by the tracked classes after every attribute write or delete.
#[pyfunction]
pub fn count_edit() {
    EDITS.fetch_add(1, Ordering::AcqRel);
}

/// Registers classes whose every attribute write calls `count_edit`, and whose attributes are plain slots.
#[pyfunction]
#[pyo3(signature = (*classes))]
pub fn track_edits(classes: Vec<Bound<'_, PyType>>) -> PyResult<()> {
    let mut held = TRACKED_CLASSES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    for class in classes {
        if held.iter().any(|t| t.is(&class)) {
            continue;
        }
        if held.len() == MAX_TRACKED {
            return Err(PyValueError::new_err(format!("at most {MAX_TRACKED} classes can be tracked")));
        }
        TRACKED[held.len()].store(class.as_ptr() as usize, Ordering::Release);
        held.push(class.unbind());
    }
    Ok(())
}

fn tracked_classes() -> impl Iterator<Item = *mut ffi::PyTypeObject> {
    TRACKED.iter().map(|t| t.load(Ordering::Acquire)).take_while(|&t| t != 0).map(|t| t as *mut ffi::PyTypeObject)
}

/// Of a tracked class, with a valid version tag (so that a change to the class itself is seen).
fn is_tracked(obj: &Bound<'_, PyAny>) -> bool {
    let class = obj.get_type_ptr();
    tracked_classes().any(|t| t == class) && version_tag(class) != 0
}

/// The version tags of the tracked classes, in registration order.
fn class_versions() -> [u32; MAX_TRACKED] {
    let mut tags = [0; MAX_TRACKED];
    for (tag, class) in tags.iter_mut().zip(tracked_classes()) {
        *tag = version_tag(class);
    }
    tags
}

/// The edit count now: read it before reading the inputs it vouches for.
pub fn edits() -> u64 {
    EDITS.load(Ordering::Acquire)
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

/// One step of a walk over the inputs.
enum Step<'a, 'py> {
    /// An immutable value, or a list: its identity is all that matters.
    Object(&'a Bound<'py, PyAny>),
    /// An object whose attributes are read: it must be of a tracked class when recorded; when
    /// matched, being the same object is enough (a `__class__` assignment is a counted write).
    Read(&'a Bound<'py, PyAny>),
    /// A list length or a flag.
    Number(usize),
}

/// Walks the inputs in a fixed order; `false` when some input is not covered by the edit count.
fn walk<'py, V: FnMut(Step<'_, 'py>) -> bool>(inputs: &Inputs<'_, 'py>, visit: &mut V) -> bool {
    let none = PyNone::get(inputs.blocks.py());
    let arg = |a: Option<&Bound<'py, PyAny>>| a.cloned().unwrap_or_else(|| none.as_any().clone());
    let (rules, sources, max_files_open, llm_config) =
        (arg(inputs.tool_usage_rules), arg(inputs.sources), arg(inputs.max_files_open), arg(inputs.llm_config));
    let plain_text = inputs.agent_type.is_none() || inputs.agent_type.is_exact_instance_of::<PyString>();
    list(inputs.blocks, visit)
        && list(inputs.file_blocks, visit)
        && visit(Step::Number(inputs.git_enabled as usize))
        && (plain_text && visit(Step::Object(inputs.agent_type)))
        && visit(read_or_none(&rules))
        && (if sources.is_none() { visit(Step::Object(&sources)) } else { list(&sources, visit) })
        && (is_scalar(&max_files_open) && visit(Step::Object(&max_files_open)))
        && visit(read_or_none(&llm_config))
}

/// An object whose attributes are read, or None.
fn read_or_none<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Step<'a, 'py> {
    if obj.is_none() {
        Step::Object(obj)
    } else {
        Step::Read(obj)
    }
}

/// An exact list of objects whose attributes are read: the list, its length, then each item.
fn list<'py, V: FnMut(Step<'_, 'py>) -> bool>(obj: &Bound<'py, PyAny>, visit: &mut V) -> bool {
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

/// The identities of everything the last compile read from, when the edit count covers them all.
struct Shape {
    // The objects themselves are held, so that no other object can take their address.
    objects: Vec<Py<PyAny>>,
    numbers: Vec<usize>,
    classes: [u32; MAX_TRACKED],
}

impl Shape {
    fn of(inputs: &Inputs) -> Option<Shape> {
        // Checked first, so that inputs of other classes (Letta's) cost no allocation.
        let (mut objects, mut numbers) = (0, 0);
        let covered = walk(inputs, &mut |step| match step {
            Step::Read(obj) if !is_tracked(obj) => false,
            Step::Object(_) | Step::Read(_) => {
                objects += 1;
                true
            }
            Step::Number(_) => {
                numbers += 1;
                true
            }
        });
        if !covered {
            return None;
        }
        let mut shape = Shape {
            objects: Vec::with_capacity(objects),
            numbers: Vec::with_capacity(numbers),
            classes: class_versions(),
        };
        walk(inputs, &mut |step| {
            match step {
                Step::Object(obj) | Step::Read(obj) => shape.objects.push(obj.clone().unbind()),
                Step::Number(n) => shape.numbers.push(n),
            }
            true
        });
        Some(shape)
    }

    fn matches(&self, inputs: &Inputs) -> bool {
        if self.classes != class_versions() {
            return false;
        }
        let (mut objects, mut numbers) = (self.objects.iter(), self.numbers.iter());
        let same = walk(inputs, &mut |step| match step {
            Step::Object(obj) | Step::Read(obj) => objects.next().is_some_and(|o| o.as_ptr() == obj.as_ptr()),
            Step::Number(n) => numbers.next() == Some(&n),
        });
        same && objects.next().is_none() && numbers.next().is_none()
    }
}

/// A compile's result: the text, and its fingerprint and section spans when they were asked for.
pub struct Entry {
    pub anthropic: bool,
    pub git_enabled: bool,
    pub reads: Reads,
    pub text: Py<PyString>,
    pub detail: Option<Detail>,
}

struct Slot {
    entry: Entry,
    edits: u64,
    shape: Option<Shape>,
}

/// The last compile of one memory.
pub struct Cache {
    // Locked only around comparisons and stores, never across a call into Python.
    slot: Mutex<Option<Slot>>,
}

impl Cache {
    pub fn new() -> Self {
        Cache { slot: Mutex::new(None) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Slot>> {
        self.slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn clear(&self) {
        let old = self.lock().take();
        drop(old);
    }

    /// The last result, if no tracked object was written since (`edits`) and the inputs are the same objects.
    pub fn unchanged(
        &self,
        py: Python<'_>,
        edits: u64,
        inputs: &Inputs,
        detail: bool,
    ) -> Option<(Py<PyString>, Option<Detail>)> {
        let slot = self.lock();
        let s = slot.as_ref()?;
        let hit = s.edits == edits
            && (!detail || s.entry.detail.is_some())
            && s.shape.as_ref().is_some_and(|shape| shape.matches(inputs));
        hit.then(|| (s.entry.text.clone_ref(py), s.entry.detail.as_ref().map(|d| d.clone_ref(py))))
    }

    /// The last result, if every field value read is the same object as before; it is then vouched for as of `edits`.
    pub fn same_reads(
        &self,
        py: Python<'_>,
        edits: u64,
        inputs: &Inputs,
        anthropic: bool,
        reads: &Reads,
        detail: bool,
    ) -> Option<(Py<PyString>, Option<Detail>)> {
        let mut slot = self.lock();
        let s = slot.as_mut()?;
        let e = &s.entry;
        let hit = e.anthropic == anthropic
            && e.git_enabled == inputs.git_enabled
            && (!detail || e.detail.is_some())
            && e.reads.same_as(reads);
        if !hit {
            return None;
        }
        let found = (e.text.clone_ref(py), e.detail.as_ref().map(|d| d.clone_ref(py)));
        let old = std::mem::replace(&mut s.shape, Shape::of(inputs));
        s.edits = edits;
        drop(slot);
        drop(old);
        Some(found)
    }

    pub fn store(&self, edits: u64, inputs: &Inputs, entry: Entry) {
        let shape = Shape::of(inputs);
        let old = self.lock().replace(Slot { entry, edits, shape });
        // Dropped outside the lock: a dropped object's finalizer may compile this memory.
        drop(old);
    }
}
