"""Drawing a directory tree with box-drawing connectors, as the ``tree`` command does."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

Node = TypeVar("Node")
# What a node lists: (text of its line, the child node for a directory or None for a file).
Entries = Callable[[Node], Sequence[tuple[str, "Node | None"]]]


def draw_tree(out: list[str], root: Node, entries: Entries[Node]) -> None:
    """Append one line per entry under ``root``, depth first, without recursion."""
    pending = [("", entries(root), 0)]
    while pending:
        prefix, items, position = pending.pop()
        if position == len(items):
            continue
        text, child = items[position]
        last = position == len(items) - 1
        out.append(f"{prefix}{'└── ' if last else '├── '}{text}\n")
        pending.append((prefix, items, position + 1))
        if child is not None:
            pending.append((prefix + ("    " if last else "│   "), entries(child), 0))


def first_line(description: str | None) -> str:
    """The part of a description shown after a tree entry: its first line, stripped."""
    return (description or "").strip().split("\n")[0].strip()
