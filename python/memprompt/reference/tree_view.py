"""``<memory_filesystem>``: every block as a ``.md`` file in a tree of its label's parts."""

from __future__ import annotations

from typing import NamedTuple

from ._tree import draw_tree, first_line
from .fields import BlockData

# Letta stores a file that is also a directory under this key of the directory.
RESERVED_PART = "__block__"


class _Entry:
    """A name in the tree: a directory when it has children, a file when it has a block."""

    __slots__ = ("children", "block")

    def __init__(self) -> None:
        self.children: dict[str, _Entry] = {}
        self.block: BlockData | None = None


class _Folder(NamedTuple):
    entry: _Entry
    is_root: bool
    in_system: bool  # under a directory named "system": files show no description
    skills_root: bool  # the top-level skills/ directory: one line per skill


def render_memory_filesystem(blocks: list[BlockData], has_client_skills: bool) -> str:
    if not blocks and not has_client_skills:
        return ""
    root = _Entry()
    for block in blocks:
        parts = [part for part in (block.label or "block").split("/") if part] or ["block"]
        if RESERVED_PART in parts:
            raise ValueError(
                f"block {block.index} ({block.label!r}): path part '__block__' is reserved in the memory filesystem"
            )
        entry = root
        for part in parts:
            entry = entry.children.setdefault(part, _Entry())
        entry.block = block  # the last block with a label wins
    out = ["\n\n<memory_filesystem>\n"]
    draw_tree(out, _Folder(root, is_root=True, in_system=False, skills_root=False), _entries)
    out.append("</memory_filesystem>")
    return "".join(out)


def _entries(folder: _Folder) -> list[tuple[str, _Folder | None]]:
    children = folder.entry.children
    if folder.skills_root:
        skills = []
        for name in sorted(children):
            block = _skill_block(children[name])
            if block is not None:
                line = first_line(block.description)
                skills.append((f"{name} ({line})" if line else name, None))
        return skills
    items: list[tuple[str, _Folder | None]] = []
    for name in sorted(n for n, child in children.items() if child.children):
        in_system = folder.in_system or name == "system"
        skills_root = folder.is_root and name == "skills"
        items.append((f"{name}/", _Folder(children[name], False, in_system, skills_root)))
    for name in sorted(n for n, child in children.items() if child.block is not None):
        line = "" if folder.in_system else first_line(children[name].block.description)
        items.append((f"{name}.md ({line})" if line else f"{name}.md", None))
    return items


def _skill_block(entry: _Entry) -> BlockData | None:
    """The block that describes a skill: ``skills/<name>/SKILL`` (a file only) or ``skills/<name>``."""
    if entry.children:
        legacy = entry.children.get("SKILL")
        if legacy is not None and not legacy.children:
            return legacy.block
    return entry.block
