"""``Memory``: an agent's core memory, compiled by the Rust core."""

from __future__ import annotations

from typing import Any, Iterable

from . import _core
from ._block_list import BlockListMethods


class Memory(_core.MemoryBase, BlockListMethods):
    """Core memory blocks plus the file blocks of attached sources.

    ``Memory(blocks, file_blocks=None, agent_type=None, git_enabled=False)``: the same
    constructor, fields and methods as letta 0.16.8's ``Memory``; ``compile`` returns
    the identical string. The fields, ``compile`` and ``compile_with_fingerprint`` live in
    the Rust core (``_core.MemoryBase``), which also keeps the last compile: compiling again with
    nothing changed returns it without rendering. Writes to memprompt's own ``Block``,
    ``FileBlock``, ``Source``, ``ToolUsageRules`` and ``LLMConfig`` objects are counted,
    so with those the check reads no attribute at all; with other objects (Letta's)
    it reads every field and compares them by identity.
    """

    def compile_available_skills(self, client_skills: Any = None) -> str:
        """``<available_skills>``, or ``""`` when there are none."""
        return _core.compile_available_skills(self.blocks, client_skills)

    def render_memory_filesystem(self, client_skills: Any = None) -> str:
        """The ``<memory_filesystem>`` tree view of every block, or ``""``."""
        return _core.render_memory_filesystem(self.blocks, client_skills)

    def __reduce__(self) -> tuple[Any, ...]:
        # copy, deepcopy and pickle rebuild from the fields (the Rust half has no default constructor).
        return type(self), (self.blocks, self.file_blocks, self.agent_type, self.git_enabled), vars(self) or None

    def __repr__(self) -> str:
        return f"Memory(blocks={len(self.blocks)}, file_blocks={len(self.file_blocks)}, agent_type={self.agent_type!r}, git_enabled={self.git_enabled})"


def render_in_reference(hand_off: _core.ReferenceRender) -> Any:
    """What the reference renders for a compile the Rust core hands off (see ``_core.ReferenceRender``)."""
    # Imported here: only the rare git-memory labels that name Letta's internal keys (see README) need it.
    from .reference import Memory as ReferenceMemory

    memory = hand_off.memory
    reference = ReferenceMemory(memory.blocks, memory.file_blocks, memory.agent_type, memory.git_enabled)
    return getattr(reference, hand_off.method)(*hand_off.args)


_core.set_reference_renderer(render_in_reference)


def compile_many(
    memories: Iterable[Any],
    tool_usage_rules: Any = None,
    sources: Any = None,
    max_files_open: int | None = None,
    llm_config: Any = None,
    client_skills: Any = None,
) -> list[str]:
    """``[m.compile(...) for m in memories]``, rendered in parallel on Rust threads (GIL released).

    Works on memprompt or Letta ``Memory`` objects; results are in input order.
    """
    memories = list(memories)
    texts = _core.compile_many(memories, tool_usage_rules, sources, max_files_open, llm_config)
    return [
        text
        if text is not None
        else memory.compile(tool_usage_rules, sources, max_files_open, llm_config, client_skills)
        for memory, text in zip(memories, texts)
    ]
