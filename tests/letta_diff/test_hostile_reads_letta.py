"""tests/test_hostile_reads.py's hostile objects on letta 0.16.8's own blocks: memprompt, the reference and
Letta's ``Memory.compile`` give the same text, or raise the same exception type and message."""

from __future__ import annotations

from io import StringIO

import pytest
from hostile_objects import CRASH, LEGACY, WRONG_OUTPUT, legacy_str, unspecialized
from letta_bridge import LettaBlock, LettaMemory, ref
from outcome import assert_same

import memprompt as mp

CASES = {**CRASH, **WRONG_OUTPUT, **LEGACY}
MODES = [("memgpt_agent", False), ("letta_v1_agent", True)]


def letta_block(**fields) -> LettaBlock:
    """Letta's pydantic block, its fields in its instance ``__dict__`` as validation leaves them."""
    return LettaBlock.model_construct(**fields, read_only=False)


def letta(blocks, agent_type, git_enabled) -> LettaMemory:
    memory = LettaMemory.model_construct(blocks=blocks, file_blocks=[], git_enabled=git_enabled)
    memory.__dict__["agent_type"] = agent_type
    return memory


@pytest.mark.parametrize(("agent_type", "git_enabled"), MODES)
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_hostile_blocks_read_as_letta_reads_them(case, agent_type, git_enabled):
    if case in LEGACY.values() and legacy_str("x") is None:
        pytest.skip("no _testcapi.unicode_legacy_string (CPython 3.12+)")

    # Fresh blocks for each side: a hostile key acts once.
    def letta_compile():
        return letta(case(letta_block), agent_type, git_enabled).compile()

    def letta_filesystem():
        out = StringIO()
        LettaMemory._render_memory_filesystem(letta(case(letta_block), agent_type, git_enabled), out)
        return out.getvalue()

    assert_same(
        unspecialized(lambda: ref.Memory(case(letta_block), [], agent_type, git_enabled).compile()),
        unspecialized(letta_compile),
    )
    assert_same(
        lambda: mp.Memory(case(letta_block), [], agent_type, git_enabled).compile(), unspecialized(letta_compile)
    )
    assert_same(lambda: mp.Memory(case(letta_block)).render_memory_filesystem(), unspecialized(letta_filesystem))
    assert_same(
        unspecialized(lambda: ref.Memory(case(letta_block)).render_memory_filesystem()), unspecialized(letta_filesystem)
    )
