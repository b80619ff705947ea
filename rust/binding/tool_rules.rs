//! `compile_tool_rule_prompts(rules)`: Letta's rule objects or agent-file rule dicts in,
//! `None` or `(description, value)` out.
//!
//! Letta validates the rules with pydantic's lax mode before it renders them. The
//! fast path here takes the inputs whose validation is trivial: a `list` or `tuple`
//! of plain `dict`s with `str` keys and values of the exact types Letta declares
//! (str, list of str, int, bool, dict, None), and the exact objects of Letta's own
//! rule classes. Everything else (a coercion to make, an error to raise, a subclass
//! that may override `render_prompt`) goes one rule at a time through the reference
//! (`memprompt.reference.tool_rules.validate_rule` and its `render()`), which is the
//! oracle tested against Letta; a `rules` that is neither list nor tuple goes there
//! whole. The fast path never raises: anything unexpected is left to the reference.

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString, PyTuple};

use super::strings::{to_py_str, Strings};
use crate::model::{Int, Text};
use crate::tool_rules::{self, Group, Prompt, RuleKind, ToolRule, RENDERED_GROUPS};

/// The pure-Python renderer that handles what the fast path leaves.
const REFERENCE_MODULE: &str = "memprompt.reference.tool_rules";
const LETTA_MODULE: &str = "letta.schemas.tool_rule";

type Output<'py> = Option<(Bound<'py, PyString>, Bound<'py, PyString>)>;

/// One rule, read by the fast path or validated by the reference.
enum Read<'s, 'py> {
    Fast(ToolRule<'s>),
    ViaReference { group: Group, validated: Bound<'py, PyAny> },
}

/// `ToolRulesSolver(tool_rules=rules).compile_tool_rule_prompts()` of Letta 0.16.8:
/// `None`, or the block's `(description, value)`.
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

    let strings = Strings::new(py);
    let mut reference: Option<Bound<'py, PyModule>> = None;
    let mut read = Vec::with_capacity(items.len());
    // Phase 1, as pydantic does: every rule is validated before any renders.
    for (index, item) in items.iter().enumerate() {
        match fast_rule(&strings, item) {
            Some(rule) => read.push(Read::Fast(rule)),
            None => {
                let module = match &reference {
                    Some(m) => m,
                    None => reference.insert(py.import(REFERENCE_MODULE)?),
                };
                let validated = module.call_method1(intern!(py, "validate_rule"), (item, index))?;
                let group = group_named(&validated.getattr(intern!(py, "group"))?)?;
                read.push(Read::ViaReference { group, validated });
            }
        }
    }

    // Phase 2: the reference renders its rules in the block's order; Letta joins the
    // texts only after every rule rendered, so a text that is not a str fails last.
    let mut texts: Vec<Option<Text>> = vec![None; read.len()];
    let mut not_str: Option<PyErr> = None;
    let mut position = 0usize;
    for group in RENDERED_GROUPS {
        for (i, r) in read.iter().enumerate() {
            match r {
                Read::Fast(rule) if rule.kind.group() == group => {
                    position += usize::from(renders(rule.kind));
                }
                Read::ViaReference { group: g, validated } if *g == group => {
                    let text = validated.call_method0(intern!(py, "render"))?;
                    if !text.is_truthy()? {
                        continue;
                    }
                    match strings.try_text(&text)? {
                        Some(t) => texts[i] = Some(Text::from(t)),
                        None if not_str.is_none() => {
                            let type_name = text.get_type().name()?;
                            not_str = Some(PyTypeError::new_err(format!(
                                "sequence item {position}: expected str instance, {type_name} found"
                            )));
                        }
                        None => {}
                    }
                    position += 1;
                }
                _ => {}
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
        Some(block) => Ok(Some((to_py_str(py, &block.description)?, to_py_str(py, &block.value)?))),
    }
}

/// Whether a fast rule of this kind has a text (in the rendered groups, all but run_first).
fn renders(kind: RuleKind) -> bool {
    !matches!(kind, RuleKind::RunFirst | RuleKind::RequiredBeforeExit | RuleKind::RequiresApproval)
}

/// The whole call through the reference (a `rules` that is neither list nor tuple).
fn compile_via_reference<'py>(py: Python<'py>, rules: &Bound<'py, PyAny>) -> PyResult<Output<'py>> {
    let block = py.import(REFERENCE_MODULE)?.call_method1(intern!(py, "compile_tool_rule_prompts"), (rules,))?;
    if block.is_none() {
        return Ok(None);
    }
    let description = block.getattr(intern!(py, "description"))?.cast_into::<PyString>()?;
    let value = block.getattr(intern!(py, "value"))?.cast_into::<PyString>()?;
    Ok(Some((description, value)))
}

fn group_named(name: &Bound<'_, PyAny>) -> PyResult<Group> {
    let name: String = name.extract()?;
    Ok(match name.as_str() {
        "init" => Group::Init,
        "continue" => Group::Continue,
        "child_based" => Group::ChildBased,
        "parent" => Group::Parent,
        "terminal" => Group::Terminal,
        "required_before_exit" => Group::RequiredBeforeExit,
        "requires_approval" => Group::RequiresApproval,
        other => return Err(PyTypeError::new_err(format!("unknown tool rule group {other:?}"))),
    })
}

// --- the fast path: `None` means "left to the reference" --------------------------

/// The rule when its validation is trivial; `None` for anything else.
fn fast_rule<'s, 'py>(strings: &'s Strings<'py>, item: &Bound<'py, PyAny>) -> Option<ToolRule<'s>> {
    if let Ok(dict) = item.cast_exact::<PyDict>() {
        fast_dict(strings, dict)
    } else {
        fast_letta_object(strings, item)
    }
}

/// The fields a rule dict may hold, across all types.
#[derive(Default)]
struct Fields<'py> {
    tool_name: Option<Bound<'py, PyAny>>,
    tag: Option<Bound<'py, PyAny>>,
    prompt_template: Option<Bound<'py, PyAny>>,
    args: Option<Bound<'py, PyAny>>,
    children: Option<Bound<'py, PyAny>>,
    child_arg_nodes: Option<Bound<'py, PyAny>>,
    default_child: Option<Bound<'py, PyAny>>,
    child_output_mapping: Option<Bound<'py, PyAny>>,
    require_output_mapping: Option<Bound<'py, PyAny>>,
    max_count_limit: Option<Bound<'py, PyAny>>,
}

impl<'py> Fields<'py> {
    fn slot(&mut self, key: &[u8]) -> Option<&mut Option<Bound<'py, PyAny>>> {
        Some(match key {
            b"tool_name" => &mut self.tool_name,
            b"type" => &mut self.tag,
            b"prompt_template" => &mut self.prompt_template,
            b"args" => &mut self.args,
            b"children" => &mut self.children,
            b"child_arg_nodes" => &mut self.child_arg_nodes,
            b"default_child" => &mut self.default_child,
            b"child_output_mapping" => &mut self.child_output_mapping,
            b"require_output_mapping" => &mut self.require_output_mapping,
            b"max_count_limit" => &mut self.max_count_limit,
            _ => return None,
        })
    }

    /// No field that `kind` does not have.
    fn only_fields_of(&self, kind: RuleKind) -> bool {
        let present = |f: &Option<Bound<'py, PyAny>>| f.is_some();
        let args = kind == RuleKind::RunFirst;
        let child = kind == RuleKind::ConstrainChildTools;
        let children = kind.has_children();
        let conditional = kind == RuleKind::Conditional;
        let max = kind == RuleKind::MaxCountPerStep;
        (args || !present(&self.args))
            && (children || !present(&self.children))
            && (child || !present(&self.child_arg_nodes))
            && (conditional || !present(&self.default_child))
            && (conditional || !present(&self.child_output_mapping))
            && (conditional || !present(&self.require_output_mapping))
            && (max || !present(&self.max_count_limit))
    }
}

fn fast_dict<'s, 'py>(strings: &'s Strings<'py>, dict: &Bound<'py, PyDict>) -> Option<ToolRule<'s>> {
    let mut fields = Fields::default();
    for (key, value) in dict.iter() {
        if !key.is_exact_instance_of::<PyString>() {
            return None;
        }
        let key = strings.try_text(&key).ok()??;
        *fields.slot(key)? = Some(value);
    }
    let kind = RuleKind::from_tag(strings.try_text(fields.tag.as_ref()?).ok()??)?;
    if !fields.only_fields_of(kind) {
        return None;
    }
    let mut rule = ToolRule::new(kind, exact_str(strings, fields.tool_name.as_ref()?)?);
    if let Some(template) = &fields.prompt_template {
        if !template.is_none() {
            exact_str(strings, template)?;
        }
    }
    match kind {
        RuleKind::RunFirst => {
            if let Some(args) = &fields.args {
                if !args.is_none() && !str_keyed_dict(args) {
                    return None;
                }
            }
        }
        RuleKind::ConstrainChildTools | RuleKind::ParentLastTool => {
            rule.children = str_list(strings, fields.children.as_ref()?)?;
            if fields.child_arg_nodes.as_ref().is_some_and(|nodes| !nodes.is_none()) {
                return None;
            }
        }
        RuleKind::Conditional => {
            if let Some(default) = &fields.default_child {
                if !default.is_none() {
                    exact_str(strings, default)?;
                }
            }
            let mapping = fields.child_output_mapping.as_ref()?.cast_exact::<PyDict>().ok()?;
            if mapping.is_empty() || !mapping.values().iter().all(|v| v.is_exact_instance_of::<PyString>()) {
                return None;
            }
            if let Some(flag) = &fields.require_output_mapping {
                if !flag.is_exact_instance_of::<PyBool>() {
                    return None;
                }
            }
        }
        RuleKind::MaxCountPerStep => rule.max_count_limit = exact_int(fields.max_count_limit.as_ref()?)?,
        RuleKind::ExitLoop | RuleKind::ContinueLoop | RuleKind::RequiredBeforeExit | RuleKind::RequiresApproval => {}
    }
    Some(rule)
}

/// An exact object of Letta's class for its type: pydantic takes it as it is.
fn fast_letta_object<'s, 'py>(strings: &'s Strings<'py>, obj: &Bound<'py, PyAny>) -> Option<ToolRule<'s>> {
    let py = strings.py();
    let class = obj.get_type();
    if class.module().ok()?.to_str().ok()? != LETTA_MODULE {
        return None;
    }
    let class_name = class.name().ok()?;
    let class_name = class_name.to_str().ok()?;
    let kind = RuleKind::ALL.into_iter().find(|k| k.letta_class() == class_name)?;
    // The class decides the group; the tag must agree, or pydantic would re-validate.
    let tag = obj.getattr_opt(intern!(py, "type")).ok()??;
    if RuleKind::from_tag(strings.try_text(&tag).ok()??)? != kind {
        return None;
    }
    let tool_name = obj.getattr_opt(intern!(py, "tool_name")).ok()??;
    let mut rule = ToolRule::new(kind, exact_str(strings, &tool_name)?);
    if kind.has_children() {
        rule.children = str_list(strings, &obj.getattr_opt(intern!(py, "children")).ok()??)?;
    }
    if kind == RuleKind::MaxCountPerStep {
        rule.max_count_limit = exact_int(&obj.getattr_opt(intern!(py, "max_count_limit")).ok()??)?;
    }
    Some(rule)
}

fn exact_str<'s, 'py>(strings: &'s Strings<'py>, obj: &Bound<'py, PyAny>) -> Option<Text<'s>> {
    if !obj.is_exact_instance_of::<PyString>() {
        return None;
    }
    strings.try_text(obj).ok()?.map(Text::from)
}

/// An exact `list` of exact `str`.
fn str_list<'s, 'py>(strings: &'s Strings<'py>, obj: &Bound<'py, PyAny>) -> Option<Vec<Text<'s>>> {
    let list = obj.cast_exact::<PyList>().ok()?;
    list.iter().map(|item| exact_str(strings, &item)).collect()
}

/// An exact `int` that fits in an i64 (bigger ones go through the reference).
fn exact_int(obj: &Bound<'_, PyAny>) -> Option<Int<'static>> {
    if !obj.is_exact_instance_of::<PyInt>() {
        return None;
    }
    obj.extract::<i64>().ok().map(Int::Small)
}

/// An exact `dict` whose keys are all exact `str`.
fn str_keyed_dict(obj: &Bound<'_, PyAny>) -> bool {
    obj.cast_exact::<PyDict>().is_ok_and(|d| d.keys().iter().all(|k| k.is_exact_instance_of::<PyString>()))
}
