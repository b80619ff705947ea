"""The registry of what memprompt replaced on Letta's classes, so that ``uninstall()`` puts back the very objects."""

from __future__ import annotations

import threading
from typing import Any

# (class or module, attribute name) -> the exact object found in its __dict__ before install().
_originals: dict[tuple[Any, str], Any] = {}
lock = threading.RLock()


def replace(owner: Any, replacements: dict[str, Any]) -> None:
    """Set every attribute of ``owner`` in ``replacements``, remembering Letta's own (read all first: no half-patch)."""
    found = {name: vars(owner)[name] for name in replacements}
    for name, value in replacements.items():
        _originals.setdefault((owner, name), found[name])
        setattr(owner, name, value)


def any_replaced() -> bool:
    return bool(_originals)


def restore_all() -> None:
    for (owner, name), value in _originals.items():
        setattr(owner, name, value)
    _originals.clear()


def copy_names(function: Any, letta_function: Any) -> Any:
    """Give ``function`` Letta's name, qualname and doc (tracing spans read them); ``__module__`` stays ours."""
    for attr in ("__name__", "__qualname__", "__doc__"):
        setattr(function, attr, getattr(letta_function, attr))
    return function
