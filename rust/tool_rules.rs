//! `<tool_usage_rules>`: the block of rules that constrain tool calls.

use crate::model::ToolUsageRules;
use crate::out::Out;
use crate::w;

pub fn render_section(out: &mut Out, rules: &ToolUsageRules) {
    w!(out, "\n\n<tool_usage_rules>\n", rules.description, "\n\n", rules.value, "\n</tool_usage_rules>");
}
