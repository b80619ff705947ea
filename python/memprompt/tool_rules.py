"""Tool rules: Letta's ``ToolRulesSolver.compile_tool_rule_prompts``, rendered in Rust."""

from . import _core

# The Rust function itself (no Python frame between): it builds the ``ToolUsageRules``.
compile_tool_rule_prompts = _core.compile_tool_rule_prompts

__all__ = ["compile_tool_rule_prompts"]
