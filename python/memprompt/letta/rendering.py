"""Letta's prompt renderers, replaced by memprompt's Rust core: each replacement returns what Letta's returns.

Replaced: ``Memory.compile`` (and so ``compile_async``, which calls it), ``Memory.compile_available_skills``,
``Memory._render_memory_filesystem``, ``PromptGenerator.compile_memory_metadata_block``,
``PromptGenerator.get_system_message_from_compiled_memory`` and ``ToolRulesSolver.compile_tool_rule_prompts``.
Letta's pydantic objects are read as they are; in stable and deferred mode the blocks in label order.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Optional

from .. import _core
from .agent_memory import in_label_order
from .patching import copy_names, replace


def install(ordered: bool = False) -> None:
    """``ordered`` (stable and deferred mode): ``Memory.compile`` renders the blocks in label order."""
    from letta.helpers import tool_rule_solver
    from letta.otel.tracing import trace_method
    from letta.prompts.prompt_generator import PromptGenerator
    from letta.schemas.memory import Memory

    def traced_static(function: Callable[..., Any], letta_function: Any) -> Any:
        # Letta stacks @trace_method on @staticmethod, so its class attribute is trace_method's plain
        # wrapper around a staticmethod: store the same shape (same spans, same call semantics).
        return trace_method(staticmethod(copy_names(function, letta_function)))

    memory = vars(Memory)
    replace(
        Memory,
        {
            "compile": copy_names(_compile(memory["compile"], ordered), memory["compile"]),
            "compile_available_skills": copy_names(_compile_available_skills, memory["compile_available_skills"]),
            "_render_memory_filesystem": copy_names(_render_memory_filesystem, memory["_render_memory_filesystem"]),
        },
    )
    generator = vars(PromptGenerator)
    replace(
        PromptGenerator,
        {
            "compile_memory_metadata_block": traced_static(
                _compile_memory_metadata_block, generator["compile_memory_metadata_block"]
            ),
            "get_system_message_from_compiled_memory": traced_static(
                _get_system_message_from_compiled_memory, generator["get_system_message_from_compiled_memory"]
            ),
        },
    )
    solver = tool_rule_solver.ToolRulesSolver
    # The tool_rule_solver module's own Block, so the result is exactly the class Letta returns.
    replace(
        solver,
        {
            "compile_tool_rule_prompts": copy_names(
                _tool_rule_prompts_method(tool_rule_solver.Block), vars(solver)["compile_tool_rule_prompts"]
            )
        },
    )


# --- the replacements: Letta's signatures, memprompt's core -------------------------


def _compile(original: Callable[..., str], ordered: bool) -> Callable[..., str]:
    def compile_memory(
        self: Any,
        tool_usage_rules: Any = None,
        sources: Any = None,
        max_files_open: Any = None,
        llm_config: Any = None,
        client_skills: Any = None,
    ) -> str:
        # Letta's own fields, read by the Rust core as they are (client_skills is unused, as in Letta).
        if ordered:
            self = in_label_order(self)
        text = _core.compile_memory(
            self.blocks,
            self.file_blocks,
            self.agent_type,
            self.git_enabled,
            tool_usage_rules,
            sources,
            max_files_open,
            llm_config,
        )
        if text is None:
            # The rare git-memory labels that the Rust core leaves to Python: Letta renders them itself.
            return original(
                self,
                tool_usage_rules=tool_usage_rules,
                sources=sources,
                max_files_open=max_files_open,
                llm_config=llm_config,
                client_skills=client_skills,
            )
        return text

    return compile_memory


def _compile_available_skills(self: Any, client_skills: Any = None) -> str:
    return _core.compile_available_skills(self.blocks, client_skills)


def _render_memory_filesystem(self: Any, s: Any, client_skills: Any = None) -> None:
    # Letta writes the tree into the buffer it is given and returns None.
    text = _core.render_memory_filesystem(self.blocks, client_skills)
    if text:
        s.write(text)


def _compile_memory_metadata_block(
    memory_edit_timestamp: datetime,
    timezone: str,
    agent_id: str,
    conversation_id: str = "default",
    previous_message_count: int = 0,
    archival_memory_size: Optional[int] = 0,
    archive_tags: Optional[list[str]] = None,
) -> str:
    return _core.compile_memory_metadata_block(
        memory_edit_timestamp,
        timezone,
        agent_id,
        conversation_id,
        previous_message_count,
        archival_memory_size,
        archive_tags,
    )


def _get_system_message_from_compiled_memory(
    system_prompt: str,
    memory_with_sources: str,
    agent_id: str,
    in_context_memory_last_edit: datetime,
    timezone: str,
    user_defined_variables: Optional[dict[str, Any]] = None,
    append_icm_if_missing: bool = True,
    template_format: str = "f-string",
    previous_message_count: int = 0,
    archival_memory_size: int = 0,
    archive_tags: Optional[list[str]] = None,
    conversation_id: str = "default",
) -> str:
    return _core.get_system_message_from_compiled_memory(
        system_prompt,
        memory_with_sources,
        agent_id,
        in_context_memory_last_edit,
        timezone,
        user_defined_variables,
        append_icm_if_missing,
        template_format,
        previous_message_count,
        archival_memory_size,
        archive_tags,
        conversation_id,
    )


def _tool_rule_prompts_method(block_class: type) -> Callable[[Any], Any]:
    def compile_tool_rule_prompts(self: Any) -> Any:
        # The solver's own grouped lists, in the order Letta concatenates them (it skips the other groups).
        rules = (
            self.init_tool_rules
            + self.continue_tool_rules
            + self.child_based_tool_rules
            + self.parent_tool_rules
            + self.terminal_tool_rules
        )
        compiled = _core.compile_tool_rule_prompts(rules)
        if compiled is None:
            return None
        return block_class(label="tool_usage_rules", value=compiled.value, description=compiled.description)

    return compile_tool_rule_prompts
