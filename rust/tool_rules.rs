//! Tool rules: the `<tool_usage_rules>` section of `Memory.compile`, and the block
//! that Letta's `ToolRulesSolver.compile_tool_rule_prompts` builds from the rules.
//!
//! Letta 0.16.8 has no template engine here: each rule type writes one fixed
//! text with its fields put in as an f-string does, and `prompt_template` is
//! ignored. The block lists the rules by group (init, continue, child-based,
//! parent, terminal; input order within a group), skips empty texts, joins them
//! with `"\n"` and drops NUL characters (Letta's `Block` validator does).

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

    /// Whether the type has a `children` list that its text shows.
    pub fn has_children(self) -> bool {
        matches!(self, RuleKind::ConstrainChildTools | RuleKind::ParentLastTool)
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

/// `ToolRulesSolver(tool_rules=...).compile_tool_rule_prompts()`: `None` when no rule has a text.
pub fn compile_tool_rule_prompts(prompts: &[Prompt]) -> Option<ToolUsageRules<'static>> {
    let mut out = Out::default();
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
    // Letta's Block drops NUL characters from its value (surrogatepass UTF-8 has NUL only as 0x00).
    value.retain(|&b| b != 0);
    Some(ToolUsageRules { description: Text::from(DESCRIPTION.as_bytes()), value: Text::from(value) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(kind: RuleKind, name: &'static str) -> ToolRule<'static> {
        ToolRule::new(kind, name.as_bytes())
    }

    fn value(prompts: &[Prompt]) -> Option<String> {
        compile_tool_rule_prompts(prompts).map(|r| String::from_utf8(r.value.to_vec()).unwrap())
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
        assert_eq!(got.value.as_ref(), expected);
        assert_eq!(got.description.as_ref(), DESCRIPTION.as_bytes());
    }

    #[test]
    fn tags_round_trip() {
        for kind in RuleKind::ALL {
            assert_eq!(RuleKind::from_tag(kind.tag().as_bytes()), Some(kind));
        }
        assert_eq!(RuleKind::from_tag(b"EXIT_LOOP"), None);
        assert_eq!(RuleKind::from_tag(b""), None);
    }
}
