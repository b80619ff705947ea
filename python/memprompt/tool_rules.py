"""Tool rules: Letta's ``ToolRulesSolver.compile_tool_rule_prompts``, rendered in Rust."""

from __future__ import annotations

from typing import Any, Iterable

from . import _core
from .types import ToolUsageRules


def compile_tool_rule_prompts(rules: Iterable[Any] | None) -> ToolUsageRules | None:
    """The ``<tool_usage_rules>`` block made from Letta ``ToolRule`` objects or agent-file rule dicts.

    ``None`` when no rule renders a prompt, as in Letta.
    """
    compiled = _core.compile_tool_rule_prompts(rules)
    if compiled is None:
        return None
    description, value = compiled
    return ToolUsageRules(description, value)
