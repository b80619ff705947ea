"""``<memory_filesystem>``: every block as a ``.md`` file in a tree of its label's parts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from ._tree import draw_tree, first_line
from .fields import BlockData

# A label part with this name is a directory's own file (Letta keeps it under this key).
OWN_FILE = "__block__"


class _Entry:
    """A name in the tree: a file (one block) or a directory, which may also have its own file.

    A directory's own file is usually a file entry, but a label like ``a/__block__/b``
    puts a directory there, which shows as ``a.md`` with no description.
    """

    __slots__ = ("children", "block", "is_dir", "own")

    def __init__(self, block: BlockData | None = None, is_dir: bool = False, own: _Entry | None = None) -> None:
        self.children: dict[str, _Entry] = {}
        self.block = block
        self.is_dir = is_dir
        self.own = own

    def get(self, part: str) -> _Entry | None:
        return self.own if part == OWN_FILE else self.children.get(part)

    def put(self, part: str, entry: _Entry) -> None:
        if part == OWN_FILE:
            self.own = entry
        else:
            self.children[part] = entry


class _Folder(NamedTuple):
    entry: _Entry
    is_root: bool
    in_system: bool  # under a directory named "system": files show no description
    skills_root: bool  # the top-level skills/ directory: one line per skill


class TreeView:
    """Letta's tree of the blocks' labels. Letta reads a block's description only where it
    shows one: ``described`` names those blocks, and ``render`` takes what they hold."""

    def __init__(self, blocks: list[BlockData], has_client_skills: bool) -> None:
        self._root: _Entry | None = None
        if blocks or has_client_skills:
            self._root = _build(blocks)

    def described(self) -> list[int]:
        """The blocks whose description Letta reads, in list order: every file shown outside
        a ``system`` directory, and every skill of the top-level ``skills/``."""
        shown: set[int] = set()

        def note(block: BlockData) -> str:
            shown.add(block.index)
            return ""

        self._draw([], note)
        return sorted(shown)

    def render(self, descriptions: Mapping[int, str | None]) -> str:
        """The tree, each shown block followed by its description's first line."""
        if self._root is None:
            return ""
        out = ["\n\n<memory_filesystem>\n"]
        self._draw(out, lambda block: first_line(descriptions.get(block.index)))
        out.append("</memory_filesystem>")
        return "".join(out)

    def _draw(self, out: list[str], note: Callable[[BlockData], str]) -> None:
        if self._root is not None:
            root = _Folder(self._root, is_root=True, in_system=False, skills_root=False)
            draw_tree(out, root, lambda folder: _entries(folder, note))


def _build(blocks: list[BlockData]) -> _Entry:
    root = _Entry(is_dir=True)
    for block in blocks:
        parts = [part for part in (block.label or "block").split("/") if part] or ["block"]
        folder = root
        for part in parts[:-1]:
            child = folder.get(part)
            if child is None or not child.is_dir:
                # A file in the way becomes the new directory's own file.
                child = _Entry(is_dir=True, own=child)
                folder.put(part, child)
            folder = child
        existing = folder.get(parts[-1])
        if existing is not None and existing.is_dir:
            existing.own = _Entry(block)
        else:
            folder.put(parts[-1], _Entry(block))  # the last block with a label wins
    return root


def _entries(folder: _Folder, note: Callable[[BlockData], str]) -> list[tuple[str, _Folder | None]]:
    """A folder's lines; ``note(block)`` is what follows a block whose description shows."""
    children = folder.entry.children
    if folder.skills_root:
        skills: list[tuple[str, _Folder | None]] = []
        for name in sorted(children):
            block = _skill_block(children[name])
            if block is not None:
                line = note(block)
                skills.append((f"{name} ({line})" if line else name, None))
        return skills
    items: list[tuple[str, _Folder | None]] = []
    for name in sorted(n for n, child in children.items() if child.is_dir):
        in_system = folder.in_system or name == "system"
        skills_root = folder.is_root and name == "skills"
        items.append((f"{name}/", _Folder(children[name], False, in_system, skills_root)))
    for name in sorted(n for n, child in children.items() if not child.is_dir or child.own is not None):
        child = children[name]
        file = child.own if child.is_dir and child.own is not None else child  # a dir here has its own file
        line = note(file.block) if file.block is not None and not folder.in_system else ""
        items.append((f"{name}.md ({line})" if line else f"{name}.md", None))
    return items


def _skill_block(entry: _Entry) -> BlockData | None:
    """The block that describes a skill: ``skills/<name>/SKILL`` (a file only) or ``skills/<name>``."""
    if not entry.is_dir:
        return entry.block
    legacy = entry.children.get("SKILL")
    if legacy is not None and not legacy.is_dir:
        return legacy.block
    if entry.own is not None and not entry.own.is_dir:
        return entry.own.block
    return None
