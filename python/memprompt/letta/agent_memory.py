"""The one way memprompt compiles an agent's memory section: as Letta's rebuild paths do, with its fingerprint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from .. import _core
from ..rebuild import PromptStamp, needs_rebuild


@dataclass(frozen=True)
class AgentMemory:
    """An agent's compiled memory section and the XXH3-128 fingerprint of it."""

    text: str
    fingerprint: int


def tool_usage_rules(tool_rules: Any) -> Any:
    """The ``<tool_usage_rules>`` block Letta compiles from an agent's tool rules (None when there are none)."""
    from letta.helpers.tool_rule_solver import ToolRulesSolver

    return ToolRulesSolver(tool_rules).compile_tool_rule_prompts()


def in_label_order(memory: Any) -> Any:
    """``memory`` (Letta's Memory) with its blocks in label order (then id), the same object when they already are.

    Letta loads an agent's blocks with no ORDER BY: one order for one memory, whatever PostgreSQL returned."""
    blocks = sorted(memory.blocks, key=lambda block: (block.label, block.id))
    if all(ours is theirs for ours, theirs in zip(blocks, memory.blocks)):
        return memory
    return memory.model_copy(update={"blocks": blocks})


def compile_agent_memory(agent_state: Any, rules_block: Any) -> AgentMemory:
    """``agent_state.memory.compile(...)`` with the agent's sources, file limit and LLM config, as Letta calls it
    (in stable and deferred mode Letta's compile, ``rendering``'s, puts the blocks in label order)."""
    text: str = agent_state.memory.compile(
        tool_usage_rules=rules_block,
        sources=agent_state.sources,
        max_files_open=agent_state.max_files_open,
        llm_config=agent_state.llm_config,
    )
    return AgentMemory(text, _core.fingerprint(text))


def compile_in_order(agent_state: Any, rules_block: Any, blocks: list[Any]) -> AgentMemory:
    """``compile_agent_memory`` with the agent's ``blocks`` in this order, whatever the mode (memprompt's own
    compile, not Letta's)."""
    from ..memory import Memory

    memory = agent_state.memory
    compiled = Memory(blocks, memory.file_blocks, memory.agent_type, memory.git_enabled).compile_with_fingerprint(
        tool_usage_rules=rules_block,
        sources=agent_state.sources,
        max_files_open=agent_state.max_files_open,
        llm_config=agent_state.llm_config,
    )
    return AgentMemory(compiled.text, compiled.fingerprint)


def compile_agent_memories(agent_states: list[Any], ordered: bool = False) -> list[AgentMemory]:
    """``compile_agent_memory`` of each agent; agents with the same compile arguments are rendered together in
    parallel by ``compile_many`` (GIL released)."""
    from ..memory import compile_many

    groups: dict[tuple[Any, ...], list[int]] = {}
    rules = [tool_usage_rules(state.tool_rules) for state in agent_states]
    for index, state in enumerate(agent_states):
        groups.setdefault(_compile_arguments_key(state, rules[index]), []).append(index)
    memories: list[Optional[AgentMemory]] = [None] * len(agent_states)
    for indices in groups.values():
        first = agent_states[indices[0]]
        texts = compile_many(
            [in_label_order(agent_states[i].memory) if ordered else agent_states[i].memory for i in indices],
            tool_usage_rules=rules[indices[0]],
            sources=first.sources,
            max_files_open=first.max_files_open,
            llm_config=first.llm_config,
        )
        for i, text in zip(indices, texts):
            memories[i] = AgentMemory(text, _core.fingerprint(text))
    return [memory for memory in memories if memory is not None]


def _compile_arguments_key(state: Any, rules_block: Any) -> tuple[Any, ...]:
    # Everything compile reads besides the memory itself, by value: agents equal here compile alike.
    rules = None if rules_block is None else (rules_block.label, rules_block.value, rules_block.description)
    sources = tuple(source.model_dump_json() for source in state.sources or ())
    llm = None if state.llm_config is None else state.llm_config.model_dump_json()
    return rules, sources, state.max_files_open, llm


def keep(system_prompt: str, memory: AgentMemory, text: Optional[str], force: bool) -> bool:
    """Whether message[0] (``text``) is current: neither the template nor the memory section changed."""
    return not needs_rebuild(system_prompt, memory.text, text, force=force)


def current_memory(
    agent_state: Any, rules_block: Any, text: Optional[str], force: bool, stable: bool
) -> tuple[AgentMemory, bool]:
    """The memory section to build message[0] from, and whether ``text`` already holds it (``keep``).

    ``stable`` (Letta's compile puts the blocks in label order): never forced, and a text that holds the same
    blocks in another order (written by stock Letta, in whichever order PostgreSQL returned them) is current too."""
    memory = compile_agent_memory(agent_state, rules_block)
    if keep(agent_state.system, memory, text, force=force and not stable):
        return memory, True
    stored = _core.stored_memory_section(agent_state.system, text) if stable and text is not None else None
    if stored is not None:
        # The blocks in the order the text shows them (each label's first tag; a missing one last).
        blocks = sorted(agent_state.memory.blocks, key=lambda block: _first(stored, f"<{block.label}>"))
        if blocks != in_label_order(agent_state.memory).blocks:
            as_written = compile_in_order(agent_state, rules_block, blocks)
            if keep(agent_state.system, as_written, text, force=False):
                return as_written, True
    return memory, False


def _first(text: str, tag: str) -> int:
    position = text.find(tag)
    return position if position >= 0 else len(text)


def stamp_of(system_prompt: str, memory: AgentMemory) -> PromptStamp:
    return PromptStamp(_core.fingerprint(system_prompt), memory.fingerprint)
