"""``Memory``: an agent's blocks and open files, compiled to the memory section of its prompt."""

from __future__ import annotations

from typing import Any

import xxhash

from .._block_list import BlockListMethods
from ..types import Compiled
from .blocks import render_line_numbered, render_plain
from .directories import first_of_each_label, render_directories
from .fields import (
    agent_type_name,
    check_max_files_open,
    read_blocks,
    read_client_skill,
    read_descriptions,
    read_file_blocks,
    read_git_blocks,
    read_source,
    read_tool_usage_rules,
    read_tree_labels,
)
from .git_memory import render_git
from .skills import read_skill_blocks, render_available_skills
from .tree_view import TreeView

REACT_TYPES = ("react_agent", "workflow_agent")
LINE_NUMBERED_TYPES = ("sleeptime_agent", "memgpt_v2_agent", "letta_v1_agent")


class Memory(BlockListMethods):
    """The reference for Letta 0.16.8's ``letta.schemas.memory.Memory`` rendering."""

    def __init__(self, blocks: Any, file_blocks: Any = None, agent_type: Any = None, git_enabled: Any = False) -> None:
        self.blocks = list(blocks)
        self.file_blocks = file_blocks
        self.agent_type = agent_type
        self.git_enabled = git_enabled

    @property
    def file_blocks(self) -> list[Any]:
        return self._file_blocks

    @file_blocks.setter
    def file_blocks(self, file_blocks: Any) -> None:
        # Like Letta's validator, which also runs when the field is assigned.
        self._file_blocks = first_of_each_label(file_blocks or [])

    def __repr__(self) -> str:
        return f"Memory(blocks={len(self.blocks)}, file_blocks={len(self.file_blocks)}, agent_type={self.agent_type!r})"

    def compile(
        self,
        tool_usage_rules: Any = None,
        sources: Any = None,
        max_files_open: Any = None,
        llm_config: Any = None,
        client_skills: Any = None,
    ) -> str:
        """The memory section: blocks (in the agent type's form), tool usage rules, directories.

        ``client_skills`` is accepted and ignored, as in Letta: skills are not part of the stored prompt.
        """
        return "".join(text for _, text in self._pieces(tool_usage_rules, sources, max_files_open, llm_config))

    def compile_with_fingerprint(
        self,
        tool_usage_rules: Any = None,
        sources: Any = None,
        max_files_open: Any = None,
        llm_config: Any = None,
        client_skills: Any = None,
    ) -> Compiled:
        """``compile``'s text, its fingerprint, and each named section's ``(start, end)`` in code points."""
        pieces = self._pieces(tool_usage_rules, sources, max_files_open, llm_config)
        sections = {}
        at = 0
        for name, piece in pieces:
            if name is not None:
                sections[name] = (at, at + len(piece))
            at += len(piece)
        text = "".join(piece for _, piece in pieces)
        return Compiled(text, xxhash.xxh3_128_intdigest(text.encode("utf-8", "surrogatepass")), sections)

    def _pieces(
        self, tool_usage_rules: Any, sources: Any, max_files_open: Any, llm_config: Any
    ) -> list[tuple[str | None, str]]:
        """The output in order, as (section name or None for glue, text)."""
        agent_type = agent_type_name(self.agent_type)
        react = agent_type in REACT_TYPES
        anthropic = (
            bool(llm_config)
            and hasattr(llm_config, "model_endpoint_type")
            and (llm_config.model_endpoint_type == "anthropic")
        )
        pieces: list[tuple[str | None, str]] = []
        if not react and self.git_enabled:
            pieces += render_git(read_git_blocks(self.blocks))
        elif not react:
            blocks = read_blocks(self.blocks)
            if anthropic and agent_type in LINE_NUMBERED_TYPES:
                pieces.append(("memory_blocks", render_line_numbered(blocks)))
            elif blocks:
                pieces.append(("memory_blocks", render_plain(blocks)))
        if tool_usage_rules is not None:
            description, value = read_tool_usage_rules(tool_usage_rules)
            rules = f"<tool_usage_rules>\n{description or ''}\n\n{value or ''}\n</tool_usage_rules>"
            pieces += [(None, "\n\n"), ("tool_usage_rules", rules)]
        if sources:
            check_max_files_open(max_files_open)
            checked_sources = [read_source(source, index) for index, source in enumerate(sources)]
            file_blocks = read_file_blocks(self.file_blocks, checked_sources, max_files_open is not None)
            directories = render_directories(file_blocks, checked_sources, max_files_open, react)
            pieces += [(None, "\n\n"), ("directories", directories.removeprefix("\n\n"))]
        return pieces

    def compile_available_skills(self, client_skills: Any = None) -> str:
        """``<available_skills>`` from the ``skills/`` blocks and the client's skills; "" when there are none."""
        blocks = read_skill_blocks(self.blocks)
        skills = [read_client_skill(skill, index) for index, skill in enumerate(client_skills or ())]
        return render_available_skills(blocks, skills)

    def render_memory_filesystem(self, client_skills: Any = None) -> str:
        """``<memory_filesystem>``, a tree of every block; "" when there are no blocks and no client skills."""
        blocks, labels = read_tree_labels(self.blocks)
        tree = TreeView(labels, bool(client_skills))
        return tree.render(read_descriptions(blocks, tree.described(), labels))
