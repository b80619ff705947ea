//! Tool rules: the `<tool_usage_rules>` section of `Memory.compile`, and the block
//! that Letta's `ToolRulesSolver.compile_tool_rule_prompts` builds from the rules.
//!
//! Letta 0.16.8 has no template engine here: each rule type writes one fixed
//! text with its fields put in as an f-string does, and `prompt_template` is
//! ignored. The block lists the rules by group (init, continue, child-based,
//! parent, terminal; input order within a group), skips empty texts, joins them
//! with `"\n"` and drops NUL characters (Letta's `Block` validator does).

use crate::error::{RenderError, RenderResult};
use crate::model::{Int, Text, ToolUsageRules};
use crate::out::{Out, Sink};
use crate::w;

pub fn render_section(out: &mut impl Sink, rules: &ToolUsageRules) {
    w!(out, "\n\n<tool_usage_rules>\n", rules.description, "\n\n", rules.value, "\n</tool_usage_rules>");
}

/// The block's description (letta 0.16.8 `COMPILED_PROMPT_DESCRIPTION`, verbatim: it is output).
pub const DESCRIPTION: &str = "The following constraints define rules for tool usage and guide desired behavior. \
These rules must be followed to ensure proper tool execution and workflow. \
A single response may contain multiple tool calls.";

/// A rule type: Letta's `ToolRuleType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    RunFirst,
    ExitLoop,
    ContinueLoop,
    Conditional,
    ConstrainChildTools,
    MaxCountPerStep,
    ParentLastTool,
    RequiredBeforeExit,
    RequiresApproval,
}

/// Where the solver files a rule; the block lists the first five groups in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Init,
    Continue,
    ChildBased,
    Parent,
    Terminal,
    RequiredBeforeExit,
    RequiresApproval,
}

/// The groups whose rules the block renders, in the block's order.
pub const RENDERED_GROUPS: [Group; 5] =
    [Group::Init, Group::Continue, Group::ChildBased, Group::Parent, Group::Terminal];

impl Group {
    pub const ALL: [Group; 7] = [
        Group::Init,
        Group::Continue,
        Group::ChildBased,
        Group::Parent,
        Group::Terminal,
        Group::RequiredBeforeExit,
        Group::RequiresApproval,
    ];

    /// The group the reference names (`ValidatedRule.group`).
    pub fn named(name: &[u8]) -> RenderResult<Group> {
        Ok(match name {
            b"init" => Group::Init,
            b"continue" => Group::Continue,
            b"child_based" => Group::ChildBased,
            b"parent" => Group::Parent,
            b"terminal" => Group::Terminal,
            b"required_before_exit" => Group::RequiredBeforeExit,
            b"requires_approval" => Group::RequiresApproval,
            other => {
                let other = String::from_utf8_lossy(other);
                return Err(RenderError::Type(format!("unknown tool rule group {other:?}")));
            }
        })
    }
}

/// The rules' indices in the order Letta renders them: by group, in input order within one.
pub fn render_order(groups: &[Group]) -> impl Iterator<Item = usize> + '_ {
    RENDERED_GROUPS.into_iter().flat_map(move |group| (0..groups.len()).filter(move |&i| groups[i] == group))
}

/// Python's error when `"\n".join(texts)` meets a text at `position` that is no `str`.
pub fn join_error(position: usize, type_name: &str) -> RenderError {
    RenderError::Type(format!("sequence item {position}: expected str instance, {type_name} found"))
}

impl RuleKind {
    pub const ALL: [RuleKind; 9] = [
        RuleKind::RunFirst,
        RuleKind::ExitLoop,
        RuleKind::ContinueLoop,
        RuleKind::Conditional,
        RuleKind::ConstrainChildTools,
        RuleKind::MaxCountPerStep,
        RuleKind::ParentLastTool,
        RuleKind::RequiredBeforeExit,
        RuleKind::RequiresApproval,
    ];

    /// The `ToolRuleType` value.
    pub fn tag(self) -> &'static str {
        match self {
            RuleKind::RunFirst => "run_first",
            RuleKind::ExitLoop => "exit_loop",
            RuleKind::ContinueLoop => "continue_loop",
            RuleKind::Conditional => "conditional",
            RuleKind::ConstrainChildTools => "constrain_child_tools",
            RuleKind::MaxCountPerStep => "max_count_per_step",
            RuleKind::ParentLastTool => "parent_last_tool",
            RuleKind::RequiredBeforeExit => "required_before_exit",
            RuleKind::RequiresApproval => "requires_approval",
        }
    }

    /// The kind whose `ToolRuleType` value is `tag` (exact, case-sensitive).
    pub fn from_tag(tag: &[u8]) -> Option<RuleKind> {
        RuleKind::ALL.into_iter().find(|k| k.tag().as_bytes() == tag)
    }

    /// Letta's class for this type (in `letta.schemas.tool_rule`).
    pub fn letta_class(self) -> &'static str {
        match self {
            RuleKind::RunFirst => "InitToolRule",
            RuleKind::ExitLoop => "TerminalToolRule",
            RuleKind::ContinueLoop => "ContinueToolRule",
            RuleKind::Conditional => "ConditionalToolRule",
            RuleKind::ConstrainChildTools => "ChildToolRule",
            RuleKind::MaxCountPerStep => "MaxCountPerStepToolRule",
            RuleKind::ParentLastTool => "ParentToolRule",
            RuleKind::RequiredBeforeExit => "RequiredBeforeExitToolRule",
            RuleKind::RequiresApproval => "RequiresApprovalToolRule",
        }
    }

    pub fn group(self) -> Group {
        match self {
            RuleKind::RunFirst => Group::Init,
            RuleKind::ContinueLoop => Group::Continue,
            RuleKind::ConstrainChildTools | RuleKind::Conditional | RuleKind::MaxCountPerStep => Group::ChildBased,
            RuleKind::ParentLastTool => Group::Parent,
            RuleKind::ExitLoop => Group::Terminal,
            RuleKind::RequiredBeforeExit => Group::RequiredBeforeExit,
            RuleKind::RequiresApproval => Group::RequiresApproval,
        }
    }

    /// The kind of Letta's class named `name`.
    pub fn of_letta_class(name: &str) -> Option<RuleKind> {
        RuleKind::ALL.into_iter().find(|k| k.letta_class() == name)
    }

    /// Whether the type has a `children` list that its text shows.
    pub fn has_children(self) -> bool {
        matches!(self, RuleKind::ConstrainChildTools | RuleKind::ParentLastTool)
    }

    /// Whether a rule of this type has a text (`render_prompt` writes one).
    pub fn renders(self) -> bool {
        !matches!(self, RuleKind::RunFirst | RuleKind::RequiresApproval)
    }
}

/// A rule field's value as the fast path sees it: one of the types Letta declares, or `Other`.
#[derive(Debug, Clone)]
pub enum FieldValue<'a> {
    None,
    /// A `str`; `exact` unless it is a subclass.
    Str {
        text: Text<'a>,
        exact: bool,
    },
    /// An exact `int` that fits in an i64.
    Int(i64),
    /// An exact `bool`.
    Bool,
    /// An exact `list` of exact `str`.
    StrList(Vec<Text<'a>>),
    /// An exact `dict`: its size, and whether every key / every value is an exact `str`.
    Dict {
        len: usize,
        str_keys: bool,
        str_values: bool,
    },
    Other,
}

impl<'a> FieldValue<'a> {
    fn exact_str(&self) -> Option<Text<'a>> {
        match self {
            FieldValue::Str { text, exact: true } => Some(text.clone()),
            _ => None,
        }
    }

    fn str_list(&self) -> Option<Vec<Text<'a>>> {
        match self {
            FieldValue::StrList(items) => Some(items.clone()),
            _ => None,
        }
    }

    fn int(&self) -> Option<Int<'static>> {
        match self {
            FieldValue::Int(n) => Some(Int::Small(*n)),
            _ => None,
        }
    }
}

/// Whether an optional field is absent, None, or passes `ok`.
fn absent_none_or(field: &Option<FieldValue>, ok: impl FnOnce(&FieldValue) -> bool) -> bool {
    match field {
        None | Some(FieldValue::None) => true,
        Some(value) => ok(value),
    }
}

/// The fields a rule dict may hold, across all types (`None`: absent). The fast path renders a
/// rule only when its validation is trivial.
#[derive(Debug, Default)]
pub struct RuleFields<'a> {
    pub tool_name: Option<FieldValue<'a>>,
    pub tag: Option<FieldValue<'a>>,
    pub prompt_template: Option<FieldValue<'a>>,
    pub args: Option<FieldValue<'a>>,
    pub children: Option<FieldValue<'a>>,
    pub child_arg_nodes: Option<FieldValue<'a>>,
    pub default_child: Option<FieldValue<'a>>,
    pub child_output_mapping: Option<FieldValue<'a>>,
    pub require_output_mapping: Option<FieldValue<'a>>,
    pub max_count_limit: Option<FieldValue<'a>>,
}

impl<'a> RuleFields<'a> {
    /// The field a dict key names; `None` for a key no rule type has.
    pub fn slot(&mut self, key: &[u8]) -> Option<&mut Option<FieldValue<'a>>> {
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

    /// The type its `type` field names.
    fn kind(&self) -> Option<RuleKind> {
        kind_of(self.tag.as_ref()?)
    }

    /// No field that `kind` does not have.
    fn only_fields_of(&self, kind: RuleKind) -> bool {
        let absent = |f: &Option<FieldValue>| f.is_none();
        (kind == RuleKind::RunFirst || absent(&self.args))
            && (kind.has_children() || absent(&self.children))
            && (kind == RuleKind::ConstrainChildTools || absent(&self.child_arg_nodes))
            && (kind == RuleKind::Conditional
                || absent(&self.default_child)
                    && absent(&self.child_output_mapping)
                    && absent(&self.require_output_mapping))
            && (kind == RuleKind::MaxCountPerStep || absent(&self.max_count_limit))
    }

    /// The rule of a dict that pydantic's lax mode takes as it is; `None` for anything else
    /// (a coercion to make or an error to raise: the reference validates it).
    pub fn into_dict_rule(self) -> Option<ToolRule<'a>> {
        let kind = self.kind()?;
        if !self.only_fields_of(kind) || !absent_none_or(&self.prompt_template, |t| t.exact_str().is_some()) {
            return None;
        }
        let mut rule = ToolRule::new(kind, self.tool_name.as_ref()?.exact_str()?);
        match kind {
            RuleKind::RunFirst => {
                absent_none_or(&self.args, |args| matches!(args, FieldValue::Dict { str_keys: true, .. }))
                    .then_some(())?;
            }
            RuleKind::ConstrainChildTools | RuleKind::ParentLastTool => {
                rule.children = self.children.as_ref()?.str_list()?;
                absent_none_or(&self.child_arg_nodes, |_| false).then_some(())?;
            }
            RuleKind::Conditional => {
                absent_none_or(&self.default_child, |d| d.exact_str().is_some()).then_some(())?;
                let mapping = self.child_output_mapping.as_ref()?;
                matches!(mapping, FieldValue::Dict { len: 1.., str_values: true, .. }).then_some(())?;
                let flag = self.require_output_mapping.as_ref();
                flag.is_none_or(|flag| matches!(flag, FieldValue::Bool)).then_some(())?;
            }
            RuleKind::MaxCountPerStep => rule.max_count_limit = self.max_count_limit.as_ref()?.int()?,
            RuleKind::ExitLoop | RuleKind::ContinueLoop | RuleKind::RequiredBeforeExit | RuleKind::RequiresApproval => {
            }
        }
        Some(rule)
    }
}

/// The type a `type` field's value names.
fn kind_of(tag: &FieldValue) -> Option<RuleKind> {
    match tag {
        FieldValue::Str { text, .. } => RuleKind::from_tag(text),
        _ => None,
    }
}

/// One validated rule: the fields its text uses.
#[derive(Debug, Clone)]
pub struct ToolRule<'a> {
    pub kind: RuleKind,
    pub tool_name: Text<'a>,
    /// Only for `ConstrainChildTools` and `ParentLastTool`.
    pub children: Vec<Text<'a>>,
    /// Only for `MaxCountPerStep`.
    pub max_count_limit: Int<'a>,
}

impl<'a> ToolRule<'a> {
    pub fn new(kind: RuleKind, tool_name: impl Into<Text<'a>>) -> Self {
        ToolRule { kind, tool_name: tool_name.into(), children: Vec::new(), max_count_limit: Int::Small(0) }
    }

    /// The rule of an exact object of Letta's class for `kind` (pydantic takes it as it is),
    /// when its `type` agrees and the fields its text uses have their declared types (`None`:
    /// absent). An object has no other field, so none is asked for: `children` only where
    /// `kind.has_children()`, `max_count_limit` only for `MaxCountPerStep`.
    pub fn of_letta_object(
        kind: RuleKind,
        tag: Option<&FieldValue<'a>>,
        tool_name: Option<&FieldValue<'a>>,
        children: Option<&FieldValue<'a>>,
        max_count_limit: Option<&FieldValue<'a>>,
    ) -> Option<Self> {
        if kind_of(tag?)? != kind {
            return None;
        }
        let mut rule = ToolRule::new(kind, tool_name?.exact_str()?);
        if kind.has_children() {
            rule.children = children?.str_list()?;
        }
        if kind == RuleKind::MaxCountPerStep {
            rule.max_count_limit = max_count_limit?.int()?;
        }
        Some(rule)
    }
}

/// A rule for the block: rendered here, or already rendered elsewhere (`None`: no text).
#[derive(Debug, Clone)]
pub enum Prompt<'a> {
    Rule(ToolRule<'a>),
    Rendered { group: Group, text: Option<Text<'a>> },
}

impl Prompt<'_> {
    fn group(&self) -> Group {
        match self {
            Prompt::Rule(rule) => rule.kind.group(),
            Prompt::Rendered { group, .. } => *group,
        }
    }
}

fn join_children(out: &mut impl Sink, children: &[Text]) {
    for (i, child) in children.iter().enumerate() {
        if i > 0 {
            out.push(b", ");
        }
        out.push(child);
    }
}

/// Writes the rule's text, as its `render_prompt()` returns it; false for the types that have none.
pub fn render_prompt(out: &mut impl Sink, rule: &ToolRule) -> bool {
    let name: &[u8] = &rule.tool_name;
    match rule.kind {
        RuleKind::ContinueLoop => {
            w!(out, "<tool_rule>\n", name, " requires continuing your response when called\n</tool_rule>");
        }
        RuleKind::ConstrainChildTools => {
            w!(out, "<tool_rule>\nAfter using ", name, ", you must use one of these tools: ");
            join_children(out, &rule.children);
            w!(out, "\n</tool_rule>");
        }
        RuleKind::Conditional => {
            w!(out, "<tool_rule>\n", name, " will determine which tool to use next based on its output\n</tool_rule>");
        }
        RuleKind::MaxCountPerStep => {
            w!(out, "<tool_rule>\n", name, ": at most ", rule.max_count_limit, " use(s) per response\n</tool_rule>");
        }
        RuleKind::ParentLastTool => {
            w!(out, "<tool_rule>\n");
            join_children(out, &rule.children);
            w!(out, " can only be used after ", name, "\n</tool_rule>");
        }
        RuleKind::ExitLoop => {
            w!(out, "<tool_rule>\n", name, " ends your response (yields control) when called\n</tool_rule>");
        }
        RuleKind::RequiredBeforeExit => {
            w!(out, "<tool_rule>", name, " must be called before ending the conversation</tool_rule>");
        }
        RuleKind::RunFirst | RuleKind::RequiresApproval => return false,
    }
    true
}

/// The value of `ToolRulesSolver(tool_rules=...).compile_tool_rule_prompts()`, whose description
/// is always `DESCRIPTION`: `None` when no rule has a text.
pub fn compile_tool_rule_prompts(prompts: &[Prompt]) -> Option<Vec<u8>> {
    // Room for a typical rule's text each, so that the buffer rarely grows.
    let mut out = Out::with_capacity(128 * prompts.len());
    let mut any = false;
    for group in RENDERED_GROUPS {
        for prompt in prompts.iter().filter(|p| p.group() == group) {
            let start = out.len();
            if any {
                out.push(b"\n");
            }
            let written = match prompt {
                Prompt::Rule(rule) => render_prompt(&mut out, rule),
                Prompt::Rendered { text: Some(text), .. } if !text.is_empty() => {
                    out.push(text);
                    true
                }
                Prompt::Rendered { .. } => false,
            };
            if written {
                any = true;
            } else {
                out.buf.truncate(start);
            }
        }
    }
    if !any {
        return None;
    }
    let mut value = out.buf;
    // Letta's Block drops NUL characters from its value (surrogatepass UTF-8 has NUL only as 0x00);
    // searched first, since a byte-wise retain costs more than the rendering.
    if memchr::memchr(0, &value).is_some() {
        value.retain(|&b| b != 0);
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(kind: RuleKind, name: &'static str) -> ToolRule<'static> {
        ToolRule::new(kind, name.as_bytes())
    }

    fn value(prompts: &[Prompt]) -> Option<String> {
        compile_tool_rule_prompts(prompts).map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn each_text() {
        let mut child = rule(RuleKind::ConstrainChildTools, "a");
        child.children = vec![Text::from(b"b"), Text::from(b"c")];
        let mut parent = rule(RuleKind::ParentLastTool, "p");
        parent.children = child.children.clone();
        let mut max = rule(RuleKind::MaxCountPerStep, "m");
        max.max_count_limit = Int::Small(-3);
        let cases: Vec<(ToolRule, Option<&str>)> = vec![
            (
                rule(RuleKind::ContinueLoop, "x"),
                Some("<tool_rule>\nx requires continuing your response when called\n</tool_rule>"),
            ),
            (child, Some("<tool_rule>\nAfter using a, you must use one of these tools: b, c\n</tool_rule>")),
            (
                rule(RuleKind::Conditional, "x"),
                Some("<tool_rule>\nx will determine which tool to use next based on its output\n</tool_rule>"),
            ),
            (max, Some("<tool_rule>\nm: at most -3 use(s) per response\n</tool_rule>")),
            (parent, Some("<tool_rule>\nb, c can only be used after p\n</tool_rule>")),
            (
                rule(RuleKind::ExitLoop, "x"),
                Some("<tool_rule>\nx ends your response (yields control) when called\n</tool_rule>"),
            ),
            (
                rule(RuleKind::RequiredBeforeExit, "x"),
                Some("<tool_rule>x must be called before ending the conversation</tool_rule>"),
            ),
            (rule(RuleKind::RunFirst, "x"), None),
            (rule(RuleKind::RequiresApproval, "x"), None),
        ];
        for (r, expected) in cases {
            let mut out = Out::default();
            let wrote = render_prompt(&mut out, &r);
            assert_eq!(wrote.then(|| String::from_utf8(out.buf).unwrap()).as_deref(), expected, "{:?}", r.kind);
        }
    }

    #[test]
    fn group_order_and_join() {
        let prompts = vec![
            Prompt::Rule(rule(RuleKind::ExitLoop, "t")),
            Prompt::Rule(rule(RuleKind::RequiredBeforeExit, "r")),
            Prompt::Rule(rule(RuleKind::Conditional, "c1")),
            Prompt::Rendered { group: Group::Continue, text: Some(Text::from(b"X")) },
            Prompt::Rule(rule(RuleKind::RunFirst, "i")),
            Prompt::Rendered { group: Group::Parent, text: Some(Text::from(b"")) },
            Prompt::Rendered { group: Group::Parent, text: None },
            Prompt::Rule(rule(RuleKind::ContinueLoop, "k")),
            Prompt::Rule(rule(RuleKind::MaxCountPerStep, "m")),
            Prompt::Rule(rule(RuleKind::RequiresApproval, "a")),
        ];
        let expected = [
            "X",
            "<tool_rule>\nk requires continuing your response when called\n</tool_rule>",
            "<tool_rule>\nc1 will determine which tool to use next based on its output\n</tool_rule>",
            "<tool_rule>\nm: at most 0 use(s) per response\n</tool_rule>",
            "<tool_rule>\nt ends your response (yields control) when called\n</tool_rule>",
        ]
        .join("\n");
        assert_eq!(value(&prompts).as_deref(), Some(expected.as_str()));
    }

    #[test]
    fn none_when_nothing_renders() {
        assert_eq!(value(&[]), None);
        let silent = [
            Prompt::Rule(rule(RuleKind::RunFirst, "i")),
            Prompt::Rule(rule(RuleKind::RequiredBeforeExit, "r")),
            Prompt::Rule(rule(RuleKind::RequiresApproval, "a")),
            Prompt::Rendered { group: Group::Terminal, text: Some(Text::from(b"")) },
        ];
        assert_eq!(value(&silent), None);
    }

    #[test]
    fn nul_dropped_surrogates_kept() {
        let name: &[u8] = &[b'a', 0, 0xED, 0xA0, 0x80];
        let got = compile_tool_rule_prompts(&[Prompt::Rule(ToolRule::new(RuleKind::ExitLoop, name))]).unwrap();
        let expected: &[u8] =
            b"<tool_rule>\na\xED\xA0\x80 ends your response (yields control) when called\n</tool_rule>";
        assert_eq!(got, expected);
    }

    #[test]
    fn tags_round_trip() {
        for kind in RuleKind::ALL {
            assert_eq!(RuleKind::from_tag(kind.tag().as_bytes()), Some(kind));
        }
        assert_eq!(RuleKind::from_tag(b"EXIT_LOOP"), None);
        assert_eq!(RuleKind::from_tag(b""), None);
    }

    fn text(s: &'static str) -> FieldValue<'static> {
        FieldValue::Str { text: Text::from(s.as_bytes()), exact: true }
    }

    /// A rule dict's fields, from `(key, value)` pairs; `None` when a key is no field.
    fn dict(pairs: Vec<(&str, FieldValue<'static>)>) -> Option<RuleFields<'static>> {
        let mut fields = RuleFields::default();
        for (key, value) in pairs {
            *fields.slot(key.as_bytes())? = Some(value);
        }
        Some(fields)
    }

    fn shown(rule: Option<ToolRule>) -> Option<String> {
        let rule = rule?;
        let mut out = Out::default();
        render_prompt(&mut out, &rule);
        Some(format!("{:?} {}", rule.kind, String::from_utf8(out.buf).unwrap()))
    }

    #[test]
    fn a_trivial_dict_is_a_rule_of_its_type() {
        let names = FieldValue::StrList(vec![Text::from(b"b"), Text::from(b"c")]);
        let cases = vec![
            (
                vec![("type", text("exit_loop")), ("tool_name", text("t")), ("prompt_template", FieldValue::None)],
                "ExitLoop <tool_rule>\nt ends your response (yields control) when called\n</tool_rule>",
            ),
            (
                vec![("type", text("constrain_child_tools")), ("tool_name", text("a")), ("children", names.clone())],
                "ConstrainChildTools <tool_rule>\nAfter using a, you must use one of these tools: b, c\n</tool_rule>",
            ),
            (
                vec![("type", text("parent_last_tool")), ("tool_name", text("p")), ("children", names)],
                "ParentLastTool <tool_rule>\nb, c can only be used after p\n</tool_rule>",
            ),
            (
                vec![
                    ("type", text("max_count_per_step")),
                    ("tool_name", text("m")),
                    ("max_count_limit", FieldValue::Int(3)),
                ],
                "MaxCountPerStep <tool_rule>\nm: at most 3 use(s) per response\n</tool_rule>",
            ),
            (
                vec![
                    ("type", text("conditional")),
                    ("tool_name", text("c")),
                    ("default_child", text("d")),
                    ("child_output_mapping", FieldValue::Dict { len: 1, str_keys: false, str_values: true }),
                    ("require_output_mapping", FieldValue::Bool),
                ],
                "Conditional <tool_rule>\nc will determine which tool to use next based on its output\n</tool_rule>",
            ),
            (
                vec![
                    ("type", FieldValue::Str { text: Text::from(b"run_first"), exact: false }),
                    ("tool_name", text("i")),
                    ("args", FieldValue::Dict { len: 2, str_keys: true, str_values: false }),
                ],
                "RunFirst ",
            ),
        ];
        for (pairs, expected) in cases {
            assert_eq!(shown(dict(pairs).unwrap().into_dict_rule()).as_deref(), Some(expected));
        }
    }

    #[test]
    fn a_dict_that_pydantic_must_coerce_or_refuse_is_left_to_the_reference() {
        let exit = || vec![("type", text("exit_loop")), ("tool_name", text("t"))];
        let with = |extra: (&'static str, FieldValue<'static>)| {
            let mut pairs = exit();
            pairs.push(extra);
            pairs
        };
        let subclass = FieldValue::Str { text: Text::from(b"t"), exact: false };
        let refused = vec![
            vec![("tool_name", text("t"))],
            vec![("type", text("EXIT_LOOP")), ("tool_name", text("t"))],
            vec![("type", FieldValue::Int(1)), ("tool_name", text("t"))],
            vec![("type", text("exit_loop"))],
            vec![("type", text("exit_loop")), ("tool_name", subclass)],
            vec![("type", text("exit_loop")), ("tool_name", FieldValue::Other)],
            with(("prompt_template", FieldValue::Int(1))),
            with(("children", FieldValue::StrList(Vec::new()))),
            with(("max_count_limit", FieldValue::Int(1))),
            with(("args", FieldValue::None)),
            with(("default_child", FieldValue::None)),
            vec![
                ("type", text("run_first")),
                ("tool_name", text("i")),
                ("args", FieldValue::Dict { len: 1, str_keys: false, str_values: true }),
            ],
            vec![("type", text("constrain_child_tools")), ("tool_name", text("a"))],
            vec![("type", text("constrain_child_tools")), ("tool_name", text("a")), ("children", FieldValue::Other)],
            vec![
                ("type", text("constrain_child_tools")),
                ("tool_name", text("a")),
                ("children", FieldValue::StrList(Vec::new())),
                ("child_arg_nodes", FieldValue::StrList(Vec::new())),
            ],
            vec![
                ("type", text("parent_last_tool")),
                ("tool_name", text("p")),
                ("children", FieldValue::StrList(Vec::new())),
                ("child_arg_nodes", FieldValue::None),
            ],
            vec![("type", text("conditional")), ("tool_name", text("c"))],
            vec![
                ("type", text("conditional")),
                ("tool_name", text("c")),
                ("child_output_mapping", FieldValue::Dict { len: 0, str_keys: true, str_values: true }),
            ],
            vec![
                ("type", text("conditional")),
                ("tool_name", text("c")),
                ("child_output_mapping", FieldValue::Dict { len: 1, str_keys: true, str_values: false }),
            ],
            vec![
                ("type", text("conditional")),
                ("tool_name", text("c")),
                ("child_output_mapping", FieldValue::Dict { len: 1, str_keys: true, str_values: true }),
                ("require_output_mapping", FieldValue::None),
            ],
            vec![("type", text("max_count_per_step")), ("tool_name", text("m"))],
            vec![("type", text("max_count_per_step")), ("tool_name", text("m")), ("max_count_limit", FieldValue::Bool)],
        ];
        for pairs in refused {
            let described = format!("{pairs:?}");
            assert!(dict(pairs).unwrap().into_dict_rule().is_none(), "{described}");
        }
        assert!(dict(vec![("extra", FieldValue::None)]).is_none(), "a key no rule type has");
    }

    #[test]
    fn a_letta_object_renders_when_its_type_agrees_with_its_class() {
        let object = |tag: &'static str, kind| {
            let children = FieldValue::StrList(vec![Text::from(b"c")]);
            shown(ToolRule::of_letta_object(
                kind,
                Some(&text(tag)),
                Some(&text("t")),
                Some(&children),
                Some(&FieldValue::Int(2)),
            ))
        };
        assert_eq!(
            object("parent_last_tool", RuleKind::ParentLastTool).as_deref(),
            Some("ParentLastTool <tool_rule>\nc can only be used after t\n</tool_rule>")
        );
        assert_eq!(
            object("max_count_per_step", RuleKind::MaxCountPerStep).as_deref(),
            Some("MaxCountPerStep <tool_rule>\nt: at most 2 use(s) per response\n</tool_rule>")
        );
        assert_eq!(object("exit_loop", RuleKind::ContinueLoop), None);
        let (tag, name) = (text("constrain_child_tools"), text("a"));
        let no_children = ToolRule::of_letta_object(RuleKind::ConstrainChildTools, Some(&tag), Some(&name), None, None);
        assert!(no_children.is_none());
        for kind in RuleKind::ALL {
            assert_eq!(RuleKind::of_letta_class(kind.letta_class()), Some(kind));
        }
        assert_eq!(RuleKind::of_letta_class("BaseToolRule"), None);
    }

    #[test]
    fn renders_says_which_types_have_a_text() {
        for kind in RuleKind::ALL {
            let mut out = Out::default();
            assert_eq!(render_prompt(&mut out, &rule(kind, "x")), kind.renders(), "{kind:?}");
        }
    }

    #[test]
    fn groups_by_name_and_the_render_order() {
        let named =
            ["init", "continue", "child_based", "parent", "terminal", "required_before_exit", "requires_approval"];
        let groups: Vec<Group> = named.iter().map(|n| Group::named(n.as_bytes()).unwrap()).collect();
        assert_eq!(groups, Group::ALL);
        assert_eq!(Group::named(b"Init"), Err(RenderError::Type("unknown tool rule group \"Init\"".into())));
        let rules =
            [Group::Terminal, Group::RequiresApproval, Group::Init, Group::Terminal, Group::ChildBased, Group::Init];
        assert_eq!(render_order(&rules).collect::<Vec<_>>(), [2, 5, 4, 0, 3]);
        assert_eq!(join_error(3, "int"), RenderError::Type("sequence item 3: expected str instance, int found".into()));
    }
}
