"""Comparing two implementations: the same string, or the same exception type and message."""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Callable

# Where CPython keeps a str's PEP 393 state bits: after refcount, type, length and hash.
_STATE_OFFSET = 4 * ctypes.sizeof(ctypes.c_ssize_t)


def width(text: str) -> tuple[int, bool]:
    """The (kind, ascii) of a str as CPython stores it: 1, 2 or 4 bytes a code point."""
    assert sys.implementation.name == "cpython"
    state = ctypes.c_uint32.from_address(id(text) + _STATE_OFFSET).value
    return (state >> 2) & 7, bool((state >> 6) & 1)


def canonical_width(text: str) -> tuple[int, bool]:
    """The (kind, ascii) CPython requires for this text: the smallest that holds its largest code point."""
    top = max(map(ord, text), default=0)
    return (1 if top < 0x100 else 2 if top < 0x10000 else 4), top < 0x80


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    """``("ok", result)`` or ``("raised", exception type, message)``."""
    try:
        return "ok", call()
    except Exception as error:  # noqa: BLE001 - any exception type is part of the contract
        return "raised", type(error), str(error)


def assert_same(actual: Callable[[], Any], expected: Callable[[], Any]) -> Any:
    """Both return equal values or both raise the same exception type with the same message; returns the value.
    A str is also stored at its canonical width (CPython's own strings always are)."""
    got, want = outcome(actual), outcome(expected)
    assert got == want
    if got[0] == "ok" and isinstance(got[1], str):
        assert width(got[1]) == canonical_width(got[1])
    return got[1]
