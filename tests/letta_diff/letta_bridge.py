"""Letta's objects built from the same generated inputs, and the comparison of outcomes."""

from __future__ import annotations

import pytest

letta_memory_module = pytest.importorskip("letta.schemas.memory", reason="needs letta==0.16.8 installed")

from letta.prompts.prompt_generator import PromptGenerator  # noqa: E402
from letta.schemas.block import Block as LettaBlock  # noqa: E402
from letta.schemas.block import FileBlock as LettaFileBlock  # noqa: E402

import memprompt.reference as ref  # noqa: E402

LettaMemory = letta_memory_module.Memory

__all__ = ["LettaMemory", "PromptGenerator", "assert_same", "letta_block", "letta_file_block", "letta_memory", "ref"]


def letta_block(block) -> LettaBlock:
    # model_construct: Letta's validators would drop NUL characters and refuse None values,
    # but what we test is its rendering of whatever blocks it holds.
    return LettaBlock.model_construct(
        label=block.label,
        value=block.value,
        description=block.description,
        limit=block.limit,
        read_only=getattr(block, "read_only", False),
    )


def letta_file_block(block) -> LettaFileBlock:
    return LettaFileBlock.model_construct(
        label=block.label,
        value=block.value,
        description=block.description,
        limit=block.limit,
        read_only=getattr(block, "read_only", False),
        source_id=getattr(block, "source_id", None),
        file_id="file-0",
        is_open=bool(block.value),
    )


def letta_memory(blocks, file_blocks=(), agent_type=None, git_enabled=False) -> LettaMemory:
    memory = LettaMemory(
        blocks=[letta_block(b) for b in blocks],
        file_blocks=[letta_file_block(b) for b in file_blocks],
        git_enabled=git_enabled,
    )
    # Set after validation: pydantic would turn a str enum into its value and refuse a
    # plain Enum, while Memory.compile reads whatever agent_type holds.
    memory.__dict__["agent_type"] = agent_type
    return memory


def letta_kwargs(memory_kwargs: dict) -> dict:
    """The same memory, as Letta's pydantic blocks, for the reference to read too."""
    return {
        **memory_kwargs,
        "blocks": [letta_block(b) for b in memory_kwargs["blocks"]],
        "file_blocks": [letta_file_block(b) for b in memory_kwargs["file_blocks"]],
    }


def outcome(call):
    """("ok", result) or ("raised", exception type)."""
    try:
        return "ok", call()
    except RecursionError:
        raise
    except Exception as exc:  # noqa: BLE001 - any exception type is part of the behaviour
        return "raised", type(exc)


def assert_same(reference_call, letta_call):
    """The reference returns Letta's string, or raises the exception type Letta raises."""
    expected = outcome(letta_call)
    actual = outcome(reference_call)
    if expected[0] == "ok" and actual[0] == "ok":
        assert actual[1] == expected[1]
    else:
        assert actual == expected, f"reference {actual[0]} {actual[1]!r}, letta {expected[0]} {expected[1]!r}"
    return expected
