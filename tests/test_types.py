"""memprompt's input classes: equality over every field, and counted writes."""

import pytest

import memprompt as mp


def test_file_blocks_compare_every_field():
    a = mp.FileBlock("v", "a.txt", "d", 10, True, "source-1")
    assert a == mp.FileBlock("v", "a.txt", "d", 10, True, "source-1")
    assert a != mp.FileBlock("other", "a.txt", "d", 10, True, "source-1")
    assert a != mp.FileBlock("v", "a.txt", "d", 10, True, "source-2")
    assert a != mp.Block("v", "a.txt", "d", 10, True)


def test_every_write_and_delete_is_seen_by_a_cache():
    block = mp.Block("v", "human")
    memory = mp.Memory([block])
    first = memory.compile()
    block.description = "who I talk to"
    assert "who I talk to" in memory.compile()
    del block.description
    with pytest.raises(AttributeError):  # read again, as Letta reads it: an error, never the cached prompt
        memory.compile()
    block.description = None
    assert memory.compile() == first
