"""Comparing two implementations: the same string, or the same exception type."""

from __future__ import annotations

from typing import Any, Callable


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """``("ok", result)`` or ``("raised", exception type)``."""
    try:
        return "ok", call()
    except Exception as error:  # noqa: BLE001 - any exception type is part of the contract
        return "raised", type(error)


def assert_same(actual: Callable[[], Any], expected: Callable[[], Any]) -> Any:
    """Both return equal values or both raise the same exception type; returns the value."""
    got, want = outcome(actual), outcome(expected)
    assert got == want
    return got[1]
