"""``memprompt.bench.memory``: the probe sees memory outside Python's heap, and tracemalloc sees Python's."""

from __future__ import annotations

import sys

import pytest

from memprompt.bench import memory


def _can_reset_peak() -> bool:
    try:
        memory.reset_peak()
    except OSError:
        return False
    return True


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _can_reset_peak(), reason="needs /proc/self/clear_refs")
def test_peak_added_sees_memory_outside_python_heap():
    size = 32 * 1024 * 1024

    def allocate() -> bytearray:
        return bytearray(size)  # zeroed pages: touched, so resident

    peak = memory.peak_added(allocate)
    assert size <= peak < size * 1.25
    assert memory.peak_added(lambda: None) < 1024 * 1024


def test_traced_peak_sees_python_allocations():
    size = 8 * 1024 * 1024
    assert memory.traced_peak(lambda: bytes(size)) >= size
