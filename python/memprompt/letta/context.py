"""Letta's context-window overview (``GET /v1/agents/{id}/context``) with message[0]'s sections exact.

Installed in every mode but ``render``. Letta's ``ContextWindowCalculator`` finds the sections of
message[0] by searching for fixed tags, which misses git memory (``<self>``, ``<memory>``) and is
fooled by a block value holding ``</memory_blocks>`` or a block labelled like a section. Here they
come from ``memprompt.message_sections``: the parse of the message against the agent's template and
the section spans of the agent's memory compiled as Letta compiles it. The overview has Letta's
shape; its fields hold:

- ``system_prompt``: the template's text around the memory (the template itself when it has no
  ``{CORE_MEMORY}``);
- ``core_memory``: ``<memory_blocks>``, or git memory's reminder line, ``<self>`` and ``<memory>``
  (its ``<external_projection>`` tree included: it is part of ``<memory>``);
- ``memory_filesystem``: none, as Letta 0.16.8 writes no tree view into message[0];
- ``tool_usage_rules``, ``directories``, and ``external_memory_summary`` (``<memory_metadata>``).

Each is counted with the agent's own token counter, so that the counts add up to the count of the
whole message: a section runs from the end of the section before it (the ``"\\n\\n"`` separator
before a section counts with it, as Letta writes it with the section) to its own end, and its
count is the counter's count of the message up to its end less the count up to its start. A
template with several ``{CORE_MEMORY}`` shows each section's text once and counts every copy.

When message[0] does not hold the agent's memory in its template (a message that is not one text
part, or any failure of this module), Letta's own calculation runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Optional

from ..memory import Memory
from ..sections import message_sections
from ..types import Section
from .agent_memory import in_label_order, tool_usage_rules
from .patching import copy_names, replace

logger = logging.getLogger("memprompt.letta")

#: The overview's field that each section of a message counts in.
FIELD_OF = {
    "system_prompt": "system_prompt",
    "memory_blocks": "core_memory",
    "reminder": "core_memory",
    "self": "core_memory",
    "memory": "core_memory",
    "tool_usage_rules": "tool_usage_rules",
    "directories": "directories",
    "memory_metadata": "external_memory_summary",
}
#: The overview's fields of message[0], in Letta's order, and the field that holds each one's tokens.
TOKENS_OF = {
    "system_prompt": "num_tokens_system",
    "core_memory": "num_tokens_core_memory",
    "memory_filesystem": "num_tokens_memory_filesystem",
    "tool_usage_rules": "num_tokens_tool_usage_rules",
    "directories": "num_tokens_directories",
    "external_memory_summary": "num_tokens_external_memory_summary",
}
FIELDS = tuple(TOKENS_OF)


def install() -> None:
    from letta.services.context_window_calculator.context_window_calculator import ContextWindowCalculator

    letta_calculate = vars(ContextWindowCalculator)["calculate_context_window"]
    replace(
        ContextWindowCalculator,
        {"calculate_context_window": copy_names(_calculate_context_window(letta_calculate), letta_calculate)},
    )


def system_text(message: Any) -> Optional[str]:
    """The text of message[0] when Letta's overview reads it (a system message of one text part), else None."""
    from letta.schemas.enums import MessageRole
    from letta.schemas.letta_message_content import TextContent

    if message is None or message.role != MessageRole.system or not message.content or len(message.content) != 1:
        return None
    part = message.content[0]
    return part.text if isinstance(part, TextContent) else None


def agent_sections(agent_state: Any, text: str) -> Optional[tuple[Section, ...]]:
    """The sections of ``text`` if it holds the agent's memory (compiled as Letta's rebuild does) in its template."""
    rules = tool_usage_rules(agent_state.tool_rules)
    loaded = agent_state.memory
    ordered = in_label_order(loaded)
    # The blocks as loaded (as stock writes them), else in label order (as stable and deferred write them).
    for memory in (loaded,) if ordered is loaded else (loaded, ordered):
        compiled = Memory(
            memory.blocks, memory.file_blocks, memory.agent_type, memory.git_enabled
        ).compile_with_fingerprint(
            tool_usage_rules=rules,
            sources=agent_state.sources,
            max_files_open=agent_state.max_files_open,
            llm_config=agent_state.llm_config,
        )
        try:
            return message_sections(agent_state.system, compiled, text)
        except ValueError:
            continue
    return None


def field_texts(sections: tuple[Section, ...], text: str) -> dict[str, str]:
    """Each field's text: the template's pieces joined, each other field as it first occurs (one piece of ``text``)."""
    texts = {"system_prompt": "".join(s.text for s in sections if s.name == "system_prompt")}
    spans: dict[str, tuple[int, int]] = {}
    for s in sections:
        if s.name == "memory_metadata":
            texts["external_memory_summary"] = s.text
            break
        if s.name != "system_prompt":
            field = FIELD_OF[s.name]
            spans[field] = (spans.get(field, (s.start, s.end))[0], s.end)
    texts.update((field, text[start:end]) for field, (start, end) in spans.items())
    return texts


async def field_tokens(
    sections: tuple[Section, ...], text: str, count_text_tokens: Callable[[str], Awaitable[int]]
) -> dict[str, int]:
    """Each field's tokens: the count of the message up to each section's end less the count up to its start."""
    ends: list[int] = []
    fields: list[str] = []
    for s in sections:
        field = FIELD_OF[s.name]
        if fields and fields[-1] == field:
            ends[-1] = s.end
        else:
            fields.append(field)
            ends.append(s.end)
    counts = await asyncio.gather(*(count_text_tokens(text[:end]) for end in ends))
    tokens = dict.fromkeys(FIELDS, 0)
    before = 0
    for field, count in zip(fields, counts):
        tokens[field] += count - before
        before = count
    return tokens


def _calculate_context_window(letta_calculate: Callable[..., Any]) -> Callable[..., Any]:
    async def calculate_context_window(
        self: Any,
        agent_state: Any,
        actor: Any,
        token_counter: Any,
        message_manager: Any,
        system_message_compiled: Any,
        num_archival_memories: int,
        num_messages: int,
        message_ids: Optional[list[str]] = None,
    ) -> Any:
        arguments = (agent_state, actor, token_counter, message_manager, system_message_compiled)
        counts = (num_archival_memories, num_messages, message_ids)
        try:
            text = system_text(system_message_compiled)
            sections = None if text is None else agent_sections(agent_state, text)
            if text is not None and sections is not None:
                return await _overview(self, *arguments, *counts, text, sections)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the overview must be served as stock serves it
            logger.warning("memprompt's context-window overview failed (Letta's own is served): %r", exc)
        return await letta_calculate(self, *arguments, *counts)

    return calculate_context_window


async def _overview(
    calculator: Any,
    agent_state: Any,
    actor: Any,
    token_counter: Any,
    message_manager: Any,
    system_message: Any,
    num_archival_memories: int,
    num_messages: int,
    message_ids: Optional[list[str]],
    text: str,
    sections: tuple[Section, ...],
) -> Any:
    """Letta's ``ContextWindowOverview``, its messages, summary and tools read and counted as Letta does."""
    from letta.schemas.memory import ContextWindowOverview
    from letta.services.context_window_calculator import context_window_calculator as letta_module

    wanted = message_ids if message_ids is not None else agent_state.message_ids[1:]
    fetched = await message_manager.get_messages_by_ids_async(message_ids=wanted, actor=actor)
    messages = [system_message, *(m for m in fetched if m is not None)]
    if len(messages) < len(fetched) + 1:
        letta_module.logger.warning(
            f"Filtered out {len(fetched) + 1 - len(messages)} None messages for agent {agent_state.id}. "
            "This typically indicates missing system message or corrupted message data."
        )
    converted = token_counter.convert_messages(messages)
    summary, first_message = calculator.extract_summary_memory(messages)
    # The tool class Letta's calculator itself uses (openai's FunctionTool).
    tools = [letta_module.OpenAITool(type="function", function=t.json_schema) for t in agent_state.tools or ()]

    async def nothing() -> int:
        return 0

    tokens, summary_tokens, message_tokens, tool_tokens = await asyncio.gather(
        field_tokens(sections, text, token_counter.count_text_tokens),
        token_counter.count_text_tokens(summary) if summary else nothing(),
        token_counter.count_message_tokens(converted[first_message:]) if len(converted) > first_message else nothing(),
        token_counter.count_tool_tokens(tools) if tools else nothing(),
    )
    texts = field_texts(sections, text)
    return ContextWindowOverview(
        num_messages=len(messages),
        num_archival_memory=num_archival_memories,
        num_recall_memory=num_messages,
        context_window_size_max=agent_state.llm_config.context_window,
        context_window_size_current=sum(tokens.values()) + summary_tokens + message_tokens + tool_tokens,
        **{TOKENS_OF[field]: tokens[field] for field in FIELDS},
        system_prompt=texts["system_prompt"],
        core_memory=texts.get("core_memory", ""),
        memory_filesystem=None,
        tool_usage_rules=texts.get("tool_usage_rules"),
        directories=texts.get("directories"),
        external_memory_summary=texts["external_memory_summary"],
        num_tokens_summary_memory=summary_tokens,
        summary_memory=summary,
        num_tokens_messages=message_tokens,
        messages=messages,
        num_tokens_functions_definitions=tool_tokens,
        functions_definitions=tools,
    )
