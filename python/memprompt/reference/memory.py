"""``Memory``: an agent's blocks and open files, compiled to the memory section of its prompt."""

from __future__ import annotations

from typing import Any

from .blocks import render_line_numbered, render_plain
from .directories import first_of_each_label, render_directories
from .fields import (
    FILE_BLOCK,
    agent_type_name,
    check_max_files_open,
    read_blocks,
    read_client_skill,
    read_source,
    read_tool_usage_rules,
)
from .git_memory import render_git
from .skills import render_available_skills
from .tree_view import render_memory_filesystem

REACT_TYPES = ("react_agent", "workflow_agent")
LINE_NUMBERED_TYPES = ("sleeptime_agent", "memgpt_v2_agent", "letta_v1_agent")


class Memory:
    """The reference for Letta 0.16.8's ``letta.schemas.memory.Memory`` rendering."""

    def __init__(self, blocks: Any, file_blocks: Any = None, agent_type: Any = None, git_enabled: Any = False) -> None:
        self.blocks = list(blocks)
        self.file_blocks = file_blocks
        self.agent_type = agent_type
        self.git_enabled = git_enabled

    @property
    def file_blocks(self) -> list:
        return self._file_blocks

    @file_blocks.setter
    def file_blocks(self, file_blocks: Any) -> None:
        # Like Letta's validator, which also runs when the field is assigned.
        self._file_blocks = first_of_each_label(file_blocks or [])

    def __repr__(self) -> str:
        return f"Memory(blocks={len(self.blocks)}, file_blocks={len(self.file_blocks)}, agent_type={self.agent_type!r})"

    def compile(
        self, tool_usage_rules=None, sources=None, max_files_open=None, llm_config=None, client_skills=None
    ) -> str:
        """The memory section: blocks (in the agent type's form), tool usage rules, directories.

        ``client_skills`` is accepted and ignored, as in Letta: skills are not part of the stored prompt.
        """
        agent_type = agent_type_name(self.agent_type)
        react = agent_type in REACT_TYPES
        anthropic = (
            bool(llm_config)
            and hasattr(llm_config, "model_endpoint_type")
            and (llm_config.model_endpoint_type == "anthropic")
        )
        out = []
        if not react:
            blocks = read_blocks(self.blocks)
            if self.git_enabled:
                out.append(render_git(blocks))
            elif anthropic and agent_type in LINE_NUMBERED_TYPES:
                out.append(render_line_numbered(blocks))
            else:
                out.append(render_plain(blocks))
        if tool_usage_rules is not None:
            description, value = read_tool_usage_rules(tool_usage_rules)
            out.append(f"\n\n<tool_usage_rules>\n{description or ''}\n\n{value or ''}\n</tool_usage_rules>")
        if sources:
            check_max_files_open(max_files_open)
            file_blocks = read_blocks(self.file_blocks, FILE_BLOCK)
            checked_sources = [read_source(source, index) for index, source in enumerate(sources)]
            out.append(render_directories(file_blocks, checked_sources, max_files_open, react))
        return "".join(out)

    def compile_available_skills(self, client_skills=None) -> str:
        """``<available_skills>`` from the ``skills/`` blocks and the client's skills; "" when there are none."""
        blocks = read_blocks(self.blocks)
        skills = [read_client_skill(skill, index) for index, skill in enumerate(client_skills or ())]
        return render_available_skills(blocks, skills)

    def render_memory_filesystem(self, client_skills=None) -> str:
        """``<memory_filesystem>``, a tree of every block; "" when there are no blocks and no client skills."""
        return render_memory_filesystem(read_blocks(self.blocks), bool(client_skills))

    def list_block_labels(self) -> list:
        return [block.label for block in self.blocks]

    def get_block(self, label):
        for block in self.blocks:
            if block.label == label:
                return block
        # Letta joins the labels, so a None label here is a TypeError.
        available = ", ".join(block.label for block in self.blocks)
        raise KeyError(f"Block field {label} does not exist (available sections = {available})")

    def get_blocks(self) -> list:
        return self.blocks

    def set_block(self, block) -> None:
        """Replace the first block with the same label, or append."""
        for position, existing in enumerate(self.blocks):
            if existing.label == block.label:
                self.blocks[position] = block
                return
        self.blocks.append(block)

    def update_block_value(self, label, value) -> None:
        if not isinstance(value, str):
            raise ValueError("Provided value must be a string")
        for block in self.blocks:
            if block.label == label:
                block.value = value
                return
        raise ValueError(f"Block with label {label} does not exist")
