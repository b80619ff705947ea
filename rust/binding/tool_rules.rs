//! `compile_tool_rule_prompts(rules)`: Letta's rule objects or agent-file rule dicts in,
//! `None` or a `memprompt.types.ToolUsageRules` out.
//!
//! Letta validates the rules with pydantic's lax mode before it renders them. The
//! fast path (decided by `tool_rules::RuleFields` for a dict and `ToolRule::of_letta_object`
//! for an object, on the values converted here) takes
//! the inputs whose validation is trivial: a `list` or `tuple`
//! of plain `dict`s with `str` keys and values of the exact types Letta declares
//! (str, list of str, int, bool, dict, None), and the exact objects of Letta's own
//! rule classes. Everything else (a coercion to make, an error to raise, a subclass
//! that may override `render_prompt`) goes one rule at a time through the reference
//! (`memprompt.reference.tool_rules.validate_rule` and its `render()`), which is the
//! oracle tested against Letta; a `rules` that is neither list nor tuple goes there
//! whole. The fast path never raises: anything unexpected is left to the reference.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString, PyTuple, PyType};

use super::cpython::version_tag;
use super::slots::SlotClass;
use super::strings::{to_py_str, Strings};
use super::to_py_err;
use crate::lookups;
use crate::model::Text;
use crate::tool_rules::{self, FieldValue, Group, Prompt, RuleFields, RuleKind, ToolRule};

/// The pure-Python renderer that handles what the fast path leaves.
const REFERENCE_MODULE: &str = "memprompt.reference.tool_rules";
const LETTA_MODULE: &str = "letta.schemas.tool_rule";

/// `None`, or a `memprompt.types.ToolUsageRules`.
type Output<'py> = Option<Bound<'py, PyAny>>;

/// `memprompt.types.ToolUsageRules`, imported once.
static TOOL_USAGE_RULES: PyOnceLock<SlotClass<2>> = PyOnceLock::new();

/// One rule, read by the fast path or validated by the reference.
enum Read<'s, 'py> {
    Fast(ToolRule<'s>),
    ViaReference { group: Group, validated: Bound<'py, PyAny> },
}

impl Read<'_, '_> {
    fn group(&self) -> Group {
        match self {
            Read::Fast(rule) => rule.kind.group(),
            Read::ViaReference { group, .. } => *group,
        }
    }
}

/// `ToolRulesSolver(tool_rules=rules).compile_tool_rule_prompts()` of Letta 0.16.8:
/// `None`, or the block as a `memprompt.types.ToolUsageRules`.
#[pyfunction]
pub fn compile_tool_rule_prompts<'py>(py: Python<'py>, rules: &Bound<'py, PyAny>) -> PyResult<Output<'py>> {
    if rules.is_none() {
        return Ok(None);
    }
    let items: Vec<Bound<'py, PyAny>> = if let Ok(list) = rules.cast_exact::<PyList>() {
        list.iter().collect()
    } else if let Ok(tuple) = rules.cast_exact::<PyTuple>() {
        tuple.iter().collect()
    } else {
        return compile_via_reference(py, rules);
    };
    if items.is_empty() {
        // No rule renders a line: there is nothing to set up.
        return Ok(None);
    }

    // Rule prompts are never cached: only the text borrowed from (a name, a template) is held.
    let strings = Strings::new(py);
    // A rule holds its type and tool name, and often more (children, a prompt template).
    strings.expect(4 * items.len());
    let fields = RuleAttributes::new(py);
    let mut reference: Option<Bound<'py, PyModule>> = None;
    let mut read = Vec::with_capacity(items.len());
    // Phase 1, as pydantic does: every rule is validated before any renders.
    for (index, item) in items.iter().enumerate() {
        // The fast path never raises: an error is the reference's to raise, as Letta would.
        match fast_rule(&strings, &fields, item).ok().flatten() {
            Some(rule) => read.push(Read::Fast(rule)),
            None => {
                let module = match &reference {
                    Some(m) => m,
                    None => reference.insert(py.import(REFERENCE_MODULE)?),
                };
                let validated = module.call_method1(intern!(py, "validate_rule"), (item, index))?;
                let group = validated.getattr(intern!(py, "group"))?;
                let group = Group::named(strings.text(group.cast::<PyString>()?)?).map_err(to_py_err)?;
                read.push(Read::ViaReference { group, validated });
            }
        }
    }

    // Phase 2: the reference renders its rules in the block's order; Letta joins the
    // texts only after every rule rendered, so a text that is not a str fails last.
    let mut texts: Vec<Option<Text>> = vec![None; read.len()];
    let mut not_str: Option<PyErr> = None;
    let mut position = 0usize;
    let groups: Vec<Group> = read.iter().map(Read::group).collect();
    for i in tool_rules::render_order(&groups) {
        match &read[i] {
            Read::Fast(rule) => position += usize::from(rule.kind.renders()),
            Read::ViaReference { validated, .. } => {
                let text = validated.call_method0(intern!(py, "render"))?;
                if !text.is_truthy()? {
                    continue;
                }
                match strings.try_text(&text)? {
                    Some(t) => texts[i] = Some(Text::from(t)),
                    None if not_str.is_none() => {
                        not_str =
                            Some(to_py_err(tool_rules::join_error(position, &text.get_type().name()?.to_string())));
                    }
                    None => {}
                }
                position += 1;
            }
        }
    }
    if let Some(err) = not_str {
        return Err(err);
    }

    let prompts: Vec<Prompt> = read
        .into_iter()
        .zip(texts)
        .map(|(r, text)| match r {
            Read::Fast(rule) => Prompt::Rule(rule),
            Read::ViaReference { group, .. } => Prompt::Rendered { group, text },
        })
        .collect();
    match tool_rules::compile_tool_rule_prompts(&prompts) {
        None => Ok(None),
        Some(value) => {
            let class = SlotClass::get(py, &TOOL_USAGE_RULES, "ToolUsageRules", ["description", "value"])?;
            // The description is one constant: its `str` is made once, not each call.
            let description = intern!(py, tool_rules::DESCRIPTION).clone().into_any();
            let values = [description, to_py_str(py, &value)?.into_any()];
            // No edit is counted, as `__init__`'s writes would: no compile has read a new object,
            // and none can hold its id (the compile cache holds what it read).
            Ok(Some(class.new_instance(py, values)?))
        }
    }
}

/// The whole call through the reference (a `rules` that is neither list nor tuple).
fn compile_via_reference<'py>(py: Python<'py>, rules: &Bound<'py, PyAny>) -> PyResult<Output<'py>> {
    let block = py.import(REFERENCE_MODULE)?.call_method1(intern!(py, "compile_tool_rule_prompts"), (rules,))?;
    Ok(Some(block).filter(|b| !b.is_none()))
}

// --- the fast path: `None` means "left to the reference" --------------------------

super::attr::fields! {
    /// The attributes a Letta rule object is read by, each remembering its last class across the rules.
    RuleAttributes { tag: "type", tool_name: "tool_name", children: "children", max_count_limit: "max_count_limit" }
}

/// The rule when its validation is trivial (`RuleFields` decides for a dict,
/// `ToolRule::of_letta_object` for an object); `None` for anything else.
fn fast_rule<'s, 'py>(
    strings: &'s Strings<'py>,
    attributes: &RuleAttributes<'py>,
    item: &Bound<'py, PyAny>,
) -> PyResult<Option<ToolRule<'s>>> {
    if let Ok(dict) = item.cast_exact::<PyDict>() {
        let mut fields = RuleFields::default();
        for (key, value) in dict.iter() {
            if !key.is_exact_instance_of::<PyString>() {
                return Ok(None);
            }
            let Some(slot) = fields.slot(strings.text(key.cast::<PyString>()?)?) else {
                return Ok(None);
            };
            *slot = Some(field_value(strings, &value)?);
        }
        return Ok(fields.into_dict_rule());
    }
    let Some(kind) = rule_kind(&item.get_type())? else {
        return Ok(None);
    };
    if has_own_render_prompt(item) {
        return Ok(None);
    }
    let attribute = |field| -> PyResult<Option<FieldValue<'s>>> {
        super::attr::get_opt(item, field)?.map(|value| field_value(strings, &value)).transpose()
    };
    let tag = attribute(&attributes.tag)?;
    let tool_name = attribute(&attributes.tool_name)?;
    let children = if kind.has_children() { attribute(&attributes.children)? } else { None };
    let limit = if kind == RuleKind::MaxCountPerStep { attribute(&attributes.max_count_limit)? } else { None };
    Ok(ToolRule::of_letta_object(kind, tag.as_ref(), tool_name.as_ref(), children.as_ref(), limit.as_ref()))
}

/// The rule kind of a class: Letta's rule classes have one, others none. Asking a class for
/// its module and name costs more than reading a rule, so the answer is remembered per thread
/// (`crate::lookups`) by the class's version tag, which changes when its `__module__` or
/// `__name__` is set.
fn rule_kind(class: &Bound<'_, PyType>) -> PyResult<Option<RuleKind>> {
    let tp = class.as_type_ptr();
    if let Some(kind) = lookups::rule_kind(tp as usize, version_tag(tp)) {
        return Ok(kind);
    }
    let kind = if module_name(class)?.is_some_and(|m| m.to_str().is_ok_and(|m| m == LETTA_MODULE)) {
        RuleKind::of_letta_class(class.name()?.to_str()?)
    } else {
        None
    };
    // A class whose render_prompt is not Letta's own renders through it: the reference calls it.
    let kind = match kind {
        Some(kind) if renders_as_letta(class)? => Some(kind),
        _ => None,
    };
    // The lookups just made give the class a tag if it had none.
    lookups::remember_rule_kind(tp as usize, version_tag(tp), kind);
    Ok(kind)
}

/// The reference's `renders_as_letta(class)`: the class's render_prompt is Letta's own function.
fn renders_as_letta(class: &Bound<'_, PyType>) -> PyResult<bool> {
    let py = class.py();
    py.import(REFERENCE_MODULE)?.call_method1(intern!(py, "renders_as_letta"), (class,))?.is_truthy()
}

/// Whether the rule's own `__dict__` holds a `render_prompt`, which Python finds before its
/// class's; `true` when that cannot be told (the reference then reads the rule, and raises).
#[inline(never)]
fn has_own_render_prompt(rule: &Bound<'_, PyAny>) -> bool {
    let py = rule.py();
    // SAFETY: a live object; the result is a new reference, or null with an exception set
    // (an object with no `__dict__` can hold no attribute of its own but in a slot, which its
    // class's lookup would find first).
    let dict = unsafe {
        Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyObject_GenericGetDict(rule.as_ptr(), std::ptr::null_mut()))
    };
    match dict {
        Ok(dict) => {
            dict.cast_into::<PyDict>().map_or(true, |d| d.contains(intern!(py, "render_prompt")).unwrap_or(true))
        }
        Err(_) => false,
    }
}

/// `class.__module__` when it is a str, read as CPython 3.13's `PyType_GetModuleName` reads it:
/// a heap type's from its own dict (getattr would go through the metaclass: pydantic's has a
/// `__getattr__`, and that costs more than reading a rule), any other through getattr.
fn module_name<'py>(class: &Bound<'py, PyType>) -> PyResult<Option<Bound<'py, PyString>>> {
    let tp = class.as_type_ptr();
    // SAFETY: the flags and dict of a live class, read while attached; the dict is borrowed
    // from the class, which `class` holds.
    let module = unsafe {
        if (*tp).tp_flags & pyo3::ffi::Py_TPFLAGS_HEAPTYPE == 0 || (*tp).tp_dict.is_null() {
            return Ok(class.module().ok());
        }
        let dict = Bound::from_borrowed_ptr(class.py(), (*tp).tp_dict).cast_into_unchecked::<PyDict>();
        dict.get_item(intern!(class.py(), "__module__"))?
    };
    Ok(module.and_then(|m| m.cast_into::<PyString>().ok()))
}

/// A field's value, converted to the types the fast path knows.
fn field_value<'s, 'py>(strings: &'s Strings<'py>, obj: &Bound<'py, PyAny>) -> PyResult<FieldValue<'s>> {
    if obj.is_none() {
        return Ok(FieldValue::None);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(FieldValue::Str {
            text: Text::from(strings.text(s)?),
            exact: obj.is_exact_instance_of::<PyString>(),
        });
    }
    if obj.is_exact_instance_of::<PyBool>() {
        return Ok(FieldValue::Bool);
    }
    if obj.is_exact_instance_of::<PyInt>() {
        // Bigger ones go through the reference.
        return Ok(obj.extract::<i64>().map_or(FieldValue::Other, FieldValue::Int));
    }
    if let Ok(list) = obj.cast_exact::<PyList>() {
        let mut items = Vec::with_capacity(list.len());
        for item in list.iter() {
            if !item.is_exact_instance_of::<PyString>() {
                return Ok(FieldValue::Other);
            }
            items.push(Text::from(strings.text(item.cast::<PyString>()?)?));
        }
        return Ok(FieldValue::StrList(items));
    }
    if let Ok(dict) = obj.cast_exact::<PyDict>() {
        let exact_str = |k: Bound<'py, PyAny>| k.is_exact_instance_of::<PyString>();
        let str_keys = dict.keys().iter().all(exact_str);
        let str_values = dict.values().iter().all(exact_str);
        return Ok(FieldValue::Dict { len: dict.len(), str_keys, str_values });
    }
    Ok(FieldValue::Other)
}
