"""``Memory``: an agent's core memory, compiled by the Rust core."""

from __future__ import annotations

from typing import Any, Iterable

from . import _core
from ._block_list import BlockListMethods
from .types import Compiled


class Memory(BlockListMethods):
    """Core memory blocks plus the file blocks of attached sources.

    The same constructor and methods as letta 0.16.8's ``Memory``; ``compile``
    returns the identical string.
    """

    def __init__(
        self,
        blocks: Iterable[Any],
        file_blocks: Iterable[Any] | None = None,
        agent_type: Any = None,
        git_enabled: bool = False,
    ) -> None:
        self.blocks = list(blocks)
        self.file_blocks = file_blocks  # type: ignore[assignment]
        self.agent_type = agent_type
        self.git_enabled = bool(git_enabled)
        # The last compile, reused while every input is the very same object.
        self._cache = _core.CompileCache()

    @property
    def file_blocks(self) -> list[Any]:
        return self._file_blocks

    @file_blocks.setter
    def file_blocks(self, value: Iterable[Any] | None) -> None:
        # Letta's validator keeps the first block of each label.
        self._file_blocks = _core.first_of_each_label(value or [])

    def compile(
        self,
        tool_usage_rules: Any = None,
        sources: Any = None,
        max_files_open: int | None = None,
        llm_config: Any = None,
        client_skills: Any = None,
    ) -> str:
        """The memory section of the system prompt. ``client_skills`` is accepted and unused, as in Letta."""
        text = _core.compile_memory(*self._fields(), tool_usage_rules, sources, max_files_open, llm_config, self._cache)
        if text is None:
            return self._reference().compile(tool_usage_rules, sources, max_files_open, llm_config, client_skills)
        return text

    def compile_with_fingerprint(
        self,
        tool_usage_rules: Any = None,
        sources: Any = None,
        max_files_open: int | None = None,
        llm_config: Any = None,
        client_skills: Any = None,
    ) -> Compiled:
        """``compile``'s text, with its fingerprint and section offsets, computed while rendering."""
        result = _core.compile_memory_with_fingerprint(
            *self._fields(), tool_usage_rules, sources, max_files_open, llm_config, self._cache
        )
        if result is None:
            return self._reference().compile_with_fingerprint(tool_usage_rules, sources, max_files_open, llm_config, client_skills)
        text, fingerprint, sections = result
        return Compiled(text, fingerprint, {name: (start, end) for name, start, end in sections})

    def compile_available_skills(self, client_skills: Any = None) -> str:
        """``<available_skills>``, or ``""`` when there are none."""
        return _core.compile_available_skills(self.blocks, client_skills)

    def render_memory_filesystem(self, client_skills: Any = None) -> str:
        """The ``<memory_filesystem>`` tree view of every block, or ``""``."""
        return _core.render_memory_filesystem(self.blocks, client_skills)

    def _fields(self) -> tuple[list[Any], list[Any], Any, bool]:
        return self.blocks, self._file_blocks, self.agent_type, self.git_enabled

    def _reference(self) -> Any:
        # The rare git-memory labels that name Letta's internal keys (see README).
        from .reference import Memory as ReferenceMemory

        return ReferenceMemory(self.blocks, self._file_blocks, self.agent_type, self.git_enabled)

    def __repr__(self) -> str:
        return f"Memory(blocks={len(self.blocks)}, file_blocks={len(self._file_blocks)}, agent_type={self.agent_type!r}, git_enabled={self.git_enabled})"


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
        text if text is not None else memory.compile(tool_usage_rules, sources, max_files_open, llm_config, client_skills)
        for memory, text in zip(memories, texts)
    ]
