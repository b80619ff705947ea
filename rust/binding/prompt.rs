//! `<memory_metadata>`, the whole system message and `safe_format`: argument conversion only.
//!
//! Timestamps: `pytz.timezone(name)` is called once per name (so its errors and its
//! case-insensitive lookup are pytz's own); its tables are read once into a `Zone` and
//! the conversion from UTC and `strftime` run in Rust. What Rust does not model (a
//! `datetime` subclass, an aware datetime with no zone name given, a zone of a kind
//! pytz does not build) is left to Python's own methods, so the result is the same.

use std::sync::{Arc, LazyLock};

use pyo3::exceptions::PyNotImplementedError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyDateAccess, PyDateTime, PyDelta, PyDeltaAccess, PyDict, PyInt, PyList, PyString, PyTimeAccess, PyTuple, PyType,
    PyTzInfo, PyTzInfoAccess,
};

use super::strings::{render_str, to_py_str, type_error, Strings};
use super::to_py_err;
use crate::metadata::Metadata;
use crate::model::{Chars, Int, Text};
use crate::out::Out;
use crate::system_message::{self, format_pieces, SystemMessage};
use crate::text::Native;
use crate::timestamp::{self, DateTime, Formatting, PytzLocal, PytzZone, Zone, ZoneCache};

/// What the binding needs from pytz, imported once.
struct Pytz {
    timezone: Py<PyAny>,
    utc: Py<PyAny>,
    dst_tzinfo: Py<PyType>,
    static_tzinfo: Py<PyType>,
}

static PYTZ: PyOnceLock<Pytz> = PyOnceLock::new();

fn pytz(py: Python<'_>) -> PyResult<&'static Pytz> {
    PYTZ.get_or_try_init(py, || {
        let pytz = py.import("pytz")?;
        let tzinfo = py.import("pytz.tzinfo")?;
        Ok(Pytz {
            timezone: pytz.getattr("timezone")?.unbind(),
            utc: pytz.getattr("utc")?.unbind(),
            dst_tzinfo: tzinfo.getattr("DstTzInfo")?.cast_into::<PyType>()?.unbind(),
            static_tzinfo: tzinfo.getattr("StaticTzInfo")?.cast_into::<PyType>()?.unbind(),
        })
    })
}

/// The object `pytz.timezone(name)` returned, and its tables when Rust can use them.
struct ZoneEntry {
    tz: Py<PyAny>,
    zone: Option<Zone>,
}

/// Zones pytz gave, by the exact name asked for.
static ZONES: LazyLock<ZoneCache<ZoneEntry>> = LazyLock::new(|| ZoneCache::new(MAX_ZONES));
const MAX_ZONES: usize = 4096;

/// `pytz.timezone(name)` with its tables, from the cache when possible. The lock is never
/// held while Python runs.
fn zone_entry(py: Python<'_>, name: &Bound<'_, PyString>, key: &[u8]) -> PyResult<Arc<ZoneEntry>> {
    if let Some(entry) = ZONES.get(key) {
        return Ok(entry);
    }
    let pytz = pytz(py)?;
    let tz = pytz.timezone.bind(py).call1((name,))?;
    // A zone the binding cannot read is rendered by Python.
    let zone = read_zone(pytz, &tz).ok().and_then(|zone| Zone::from_pytz(&zone));
    Ok(ZONES.keep(key, Arc::new(ZoneEntry { tz: tz.unbind(), zone })))
}

/// A `timedelta`'s (days, seconds, microseconds).
fn delta(obj: &Bound<'_, PyAny>) -> Option<(i64, i64, i64)> {
    let d = obj.cast_exact::<PyDelta>().ok()?;
    Some((d.get_days().into(), d.get_seconds().into(), d.get_microseconds().into()))
}

/// An offset and a name, as pytz keeps them.
fn pytz_local(offset: &Bound<'_, PyAny>, name: &Bound<'_, PyAny>) -> PytzLocal {
    let name = name.cast_exact::<PyString>().ok().and_then(|n| n.to_str().ok().map(str::to_owned));
    PytzLocal { offset: delta(offset), name }
}

/// The zone object pytz built, read into plain values (`Zone::from_pytz` decides what Rust renders).
fn read_zone(pytz: &Pytz, tz: &Bound<'_, PyAny>) -> PyResult<PytzZone> {
    let py = tz.py();
    if tz.is(&pytz.utc) {
        return Ok(PytzZone::Utc);
    }
    let base = || -> PyResult<PytzLocal> { Ok(pytz_local(&tz.getattr("_utcoffset")?, &tz.getattr("_tzname")?)) };
    if tz.is_instance(pytz.dst_tzinfo.bind(py))? {
        let times = tz.getattr("_utc_transition_times")?;
        let infos = tz.getattr("_transition_info")?;
        let (Ok(times), Ok(infos)) = (times.cast_exact::<PyList>(), infos.cast_exact::<PyList>()) else {
            return Ok(PytzZone::Other);
        };
        let utc_times = times
            .iter()
            .map(|time| time.cast_exact::<PyDateTime>().ok().filter(|t| t.get_tzinfo().is_none()).map(|t| fields(t)))
            .collect();
        let mut pytz_infos = Vec::with_capacity(infos.len());
        for info in infos.iter() {
            let triple = info.cast_exact::<PyTuple>().ok().filter(|info| info.len() == 3);
            pytz_infos.push(match triple {
                Some(info) => Some(pytz_local(&info.get_item(0)?, &info.get_item(2)?)),
                None => None,
            });
        }
        return Ok(PytzZone::Dst { utc_times, infos: pytz_infos, base: base()? });
    }
    if tz.is_instance(pytz.static_tzinfo.bind(py))? {
        return Ok(PytzZone::Static(base()?));
    }
    Ok(PytzZone::Other)
}

/// The fields of a datetime.
fn fields(dt: &Bound<'_, PyDateTime>) -> DateTime {
    DateTime {
        year: dt.get_year(),
        month: dt.get_month(),
        day: dt.get_day(),
        hour: dt.get_hour(),
        minute: dt.get_minute(),
        second: dt.get_second(),
        microsecond: dt.get_microsecond(),
    }
}

/// `dt.strftime(FORMAT)` called in Python, as the f-string renders its result.
fn strftime_in_python<'s, 'py>(strings: &'s Strings<'py>, dt: &Bound<'py, PyAny>) -> PyResult<Text<'s>> {
    let formatted = dt.call_method1("strftime", (timestamp::FORMAT,))?;
    strings.format(&formatted)
}

/// The UTC instant of an exact `datetime`, as `astimezone` computes it (a naive one is local time).
fn utc_instant(dt: &Bound<'_, PyDateTime>) -> PyResult<DateTime> {
    let utc = PyTzInfo::utc(dt.py())?;
    if dt.get_tzinfo().is_some_and(|tz| tz.is(&*utc)) {
        return Ok(fields(dt));
    }
    let converted = dt.call_method1("astimezone", (utc,))?;
    Ok(fields(converted.cast::<PyDateTime>()?))
}

/// Letta's `format_datetime(dt, timezone)`.
fn format_timestamp<'s, 'py>(
    strings: &'s Strings<'py>,
    dt: &Bound<'py, PyAny>,
    timezone: &Bound<'py, PyAny>,
) -> PyResult<Text<'s>> {
    let py = strings.py();
    let Ok(datetime) = dt.cast::<PyDateTime>() else {
        return Err(type_error("memory_edit_timestamp".into(), "a datetime", dt));
    };
    let exact = dt.is_exact_instance_of::<PyDateTime>();
    let tzinfo = datetime.get_tzinfo();
    if timezone.is_none() || !timezone.is_truthy()? {
        return match Formatting::without_zone(exact, tzinfo.is_none()) {
            Formatting::Naive => Ok(written(|out| timestamp::write(out, &fields(datetime), None, None))),
            _ => strftime_in_python(strings, dt),
        };
    }
    let Ok(name) = timezone.cast::<PyString>() else {
        return Err(type_error("timezone".into(), "str or None", timezone));
    };
    // A str subclass is handed to pytz as it is, not looked up in the cache by its text.
    let exact_name = timezone.is_exact_instance_of::<PyString>();
    let (tz, entry) = if exact_name {
        let entry = zone_entry(py, name, strings.text(name)?)?;
        (entry.tz.bind(py).clone(), Some(entry))
    } else {
        (pytz(py)?.timezone.bind(py).call1((name,))?, None)
    };
    let zone = entry.as_ref().and_then(|e| e.zone.as_ref());
    let tzinfo_is_zone = tzinfo.is_some_and(|own| own.is(&tz));
    match (Formatting::in_zone(exact_name, zone.is_some(), exact, tzinfo_is_zone), zone) {
        (Formatting::ZoneBase, Some(zone)) => {
            let (name, offset) = zone.base();
            Ok(written(|out| timestamp::write(out, &fields(datetime), Some(name), Some(offset))))
        }
        (Formatting::FromUtc, Some(zone)) => {
            let (local, name, offset) = zone.from_utc(&utc_instant(datetime)?).map_err(to_py_err)?;
            Ok(written(|out| timestamp::write(out, &local, Some(name), Some(offset))))
        }
        _ => strftime_in_python(strings, &dt.call_method1("astimezone", (tz,))?),
    }
}

/// The text `write` writes.
fn written(write: impl FnOnce(&mut Out)) -> Text<'static> {
    let mut out = Out::with_capacity(40);
    write(&mut out);
    Text::from(out.buf)
}

/// `archival_memory_size`: `None` or an int; an int subclass is compared with `> 0` in Python.
fn archival<'s, 'py>(strings: &'s Strings<'py>, obj: &Arg<'py>) -> PyResult<Option<Int<'s>>> {
    let Arg::Given(obj) = obj else {
        return Ok(Some(Int::Small(0)));
    };
    if obj.is_none() || obj.is_exact_instance_of::<PyInt>() {
        return strings.int_or_none(obj, || "archival_memory_size".into());
    }
    if !obj.is_instance_of::<PyInt>() {
        return Err(type_error("archival_memory_size".into(), "int or None", obj));
    }
    Ok(if obj.gt(0)? { Some(Int::Rendered(Box::new(strings.format(obj)?))) } else { None })
}

/// `archive_tags`: `None` when falsy, else its items as `", ".join` takes them.
fn archive_tags<'s, 'py>(
    strings: &'s Strings<'py>,
    obj: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<Vec<Text<'s>>>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if !obj.is_truthy()? {
        return Ok(None);
    }
    let items = if let Ok(list) = obj.cast_exact::<PyList>() {
        Some(list.iter().collect::<Vec<_>>())
    } else {
        obj.cast_exact::<PyTuple>().ok().map(|t| t.iter().collect())
    };
    if let Some(items) = items {
        let mut tags = Vec::with_capacity(items.len());
        for item in &items {
            match item.cast::<PyString>() {
                Ok(s) => tags.push(Text::from(strings.text(s)?)),
                Err(_) => break,
            }
        }
        if tags.len() == items.len() {
            return Ok(Some(tags));
        }
    }
    // Any other iterable, or an item that is not a str: `str.join` gives the result or the error.
    let joined = PyString::new(strings.py(), ", ").call_method1("join", (obj,))?;
    Ok(Some(vec![strings.format(&joined)?]))
}

/// The inputs of `<memory_metadata>`, converted in the order Letta evaluates them.
#[allow(clippy::too_many_arguments)]
fn metadata<'s, 'py>(
    strings: &'s Strings<'py>,
    memory_edit_timestamp: &Bound<'py, PyAny>,
    timezone: &Bound<'py, PyAny>,
    agent_id: &Bound<'py, PyAny>,
    conversation_id: &Arg<'py>,
    previous_message_count: &Arg<'py>,
    archival_memory_size: &Arg<'py>,
    tags: Option<&Bound<'py, PyAny>>,
) -> PyResult<Metadata<'s>> {
    let timestamp = format_timestamp(strings, memory_edit_timestamp, timezone)?;
    Ok(Metadata {
        timestamp,
        agent_id: strings.format(agent_id)?,
        conversation_id: conversation_id.format(strings, b"default")?,
        previous_message_count: previous_message_count.format(strings, b"0")?,
        archival_memory_size: archival(strings, archival_memory_size)?,
        archive_tags: archive_tags(strings, tags)?,
    })
}

/// An optional argument: `Default` when the caller left it out (Python's `None` is a value).
pub enum Arg<'py> {
    Default,
    Given(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Arg<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Arg::Given(obj.to_owned()))
    }
}

impl<'py> Arg<'py> {
    /// `f"{arg}"`, or `default` when the argument was left out.
    fn format<'s>(&self, strings: &'s Strings<'py>, default: &'static [u8]) -> PyResult<Text<'s>> {
        match self {
            Arg::Default => Ok(Text::from(default)),
            Arg::Given(obj) => strings.format(obj),
        }
    }
}

/// Letta's `PromptGenerator.compile_memory_metadata_block`.
#[pyfunction]
#[pyo3(signature = (
    memory_edit_timestamp,
    timezone,
    agent_id,
    conversation_id = Arg::Default,
    previous_message_count = Arg::Default,
    archival_memory_size = Arg::Default,
    archive_tags = None,
),
text_signature = "(memory_edit_timestamp, timezone, agent_id, conversation_id='default', \
                  previous_message_count=0, archival_memory_size=0, archive_tags=None)")]
#[allow(clippy::too_many_arguments)]
pub fn compile_memory_metadata_block<'py>(
    py: Python<'py>,
    memory_edit_timestamp: &Bound<'py, PyAny>,
    timezone: &Bound<'py, PyAny>,
    agent_id: &Bound<'py, PyAny>,
    conversation_id: Arg<'py>,
    previous_message_count: Arg<'py>,
    archival_memory_size: Arg<'py>,
    archive_tags: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyString>> {
    let strings = Strings::new(py);
    // Room for the block's texts (the zone's name, the agent and conversation ids, the counts).
    strings.expect(8);
    let meta = metadata(
        &strings,
        memory_edit_timestamp,
        timezone,
        agent_id,
        &conversation_id,
        &previous_message_count,
        &archival_memory_size,
        archive_tags,
    )?;
    render_str(py, &meta).map(|(text, _)| text)
}

/// Letta's `PromptGenerator.get_system_message_from_compiled_memory`.
#[pyfunction]
#[pyo3(signature = (
    system_prompt,
    memory_with_sources,
    agent_id,
    in_context_memory_last_edit,
    timezone,
    user_defined_variables = None,
    append_icm_if_missing = Arg::Default,
    template_format = Arg::Default,
    previous_message_count = Arg::Default,
    archival_memory_size = Arg::Default,
    archive_tags = None,
    conversation_id = Arg::Default,
),
text_signature = "(system_prompt, memory_with_sources, agent_id, in_context_memory_last_edit, timezone, \
                  user_defined_variables=None, append_icm_if_missing=True, template_format='f-string', \
                  previous_message_count=0, archival_memory_size=0, archive_tags=None, conversation_id='default')")]
#[allow(clippy::too_many_arguments)]
pub fn get_system_message_from_compiled_memory<'py>(
    py: Python<'py>,
    system_prompt: &Bound<'py, PyAny>,
    memory_with_sources: &Bound<'py, PyAny>,
    agent_id: &Bound<'py, PyAny>,
    in_context_memory_last_edit: &Bound<'py, PyAny>,
    timezone: &Bound<'py, PyAny>,
    user_defined_variables: Option<&Bound<'py, PyAny>>,
    append_icm_if_missing: Arg<'py>,
    template_format: Arg<'py>,
    previous_message_count: Arg<'py>,
    archival_memory_size: Arg<'py>,
    archive_tags: Option<&Bound<'py, PyAny>>,
    conversation_id: Arg<'py>,
) -> PyResult<Bound<'py, PyString>> {
    if user_defined_variables.is_some() {
        return Err(PyNotImplementedError::new_err("user_defined_variables is not supported"));
    }
    let strings = Strings::new(py);
    // Room for what a message holds (its template, the memory, the block and the block's
    // texts), so that the list is not grown a string at a time.
    strings.expect(8);
    let meta = metadata(
        &strings,
        in_context_memory_last_edit,
        timezone,
        agent_id,
        &conversation_id,
        &previous_message_count,
        &archival_memory_size,
        archive_tags,
    )?;
    let Ok(memory) = memory_with_sources.cast::<PyString>() else {
        return Err(type_error("memory_with_sources".into(), "str", memory_with_sources));
    };
    if let Arg::Given(format) = &template_format {
        let is_f_string = match format.cast_exact::<PyString>() {
            Ok(s) => strings.text(s)? == b"f-string",
            Err(_) => format.eq("f-string")?,
        };
        if !is_f_string {
            return Err(PyNotImplementedError::new_err((format.clone().unbind(),)));
        }
    }
    let append = match &append_icm_if_missing {
        Arg::Default => true,
        Arg::Given(flag) => flag.is_truthy()?,
    };
    let Ok(prompt) = system_prompt.cast::<PyString>() else {
        return Err(type_error("system_prompt".into(), "str", system_prompt));
    };
    let (block, _) = render_str(py, &meta)?;
    let message = SystemMessage::new(
        Chars::Native(strings.native(prompt)?),
        Chars::Native(strings.native(memory)?),
        Chars::Native(strings.native(&block)?),
        append,
    );
    render_str(py, &message).map(|(text, _)| text)
}

/// The mapping Letta gives `format_map`: a `dict` whose missing keys render as `{key}`.
#[pyclass(extends = PyDict, module = "memprompt._core")]
pub struct PreserveMapping;

#[pymethods]
impl PreserveMapping {
    fn __missing__<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        PyString::new(key.py(), "{").add(key)?.add("}")
    }
}

/// `format(value, "")`: what `format_map` writes for a field with no conversion and no spec.
fn format_empty<'s, 'py>(strings: &'s Strings<'py>, value: &Bound<'py, PyAny>) -> PyResult<Native<'s>> {
    let py = strings.py();
    // SAFETY: `value` and the empty spec are live objects; the result is an owned reference.
    let formatted = unsafe {
        let empty = PyString::new(py, "");
        Bound::from_owned_ptr_or_err(py, ffi::PyObject_Format(value.as_ptr(), empty.as_ptr()))?
    };
    strings.native(formatted.cast::<PyString>()?)
}

/// Letta's `PromptGenerator.safe_format`: `template.replace("{}", "{{}}")` formatted with a
/// mapping that keeps unknown fields as they are. Fields other than `{name}` go to Python.
#[pyfunction]
pub fn safe_format<'py>(
    py: Python<'py>,
    template: &Bound<'py, PyAny>,
    variables: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyString>> {
    let strings = Strings::new(py);
    // Anything but an exact str goes to Python's own `replace` and `format_map`, as in
    // Letta (a template that is no str raises Letta's AttributeError there).
    if let (Ok(template), Ok(dict)) = (template.cast_exact::<PyString>(), variables.cast_exact::<PyDict>()) {
        let text = strings.text(template)?;
        let escaped = system_message::escape_empty_fields(text);
        if let Some(pieces) = system_message::parse_simple(&escaped) {
            let formatted = format_pieces(&pieces, |key| -> PyResult<Option<Chars>> {
                let Some(value) = dict.get_item(to_py_str(py, key)?)? else { return Ok(None) };
                Ok(Some(Chars::Native(match value.cast_exact::<PyString>() {
                    Ok(s) => strings.native(s)?,
                    Err(_) => format_empty(&strings, &value)?,
                })))
            })?;
            return render_str(py, &formatted).map(|(text, _)| text);
        }
    }
    let escaped = template.call_method1("replace", ("{}", "{{}}"))?;
    let mapping = Bound::new(py, PreserveMapping)?;
    mapping.call_method1("update", (variables,))?;
    escaped.call_method1("format_map", (mapping,))?.cast_into::<PyString>().map_err(Into::into)
}
