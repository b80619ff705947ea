"""Git memory: ``system/persona`` as ``<self>``, other ``system/`` blocks as nested
tags under ``<memory>``, and every block outside ``system/`` and ``skills/`` as a
file tree in ``<external_projection>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._tree import draw_tree
from .fields import BlockData

SYSTEM = "system/"
PERSONA = "system/persona"
# A tag is a dict of its child tags plus, when a block ends there, the block's fields
# under these keys. A label part with one of these names reaches into the fields (and
# Letta then prints a dict's repr), so the tree keeps exactly this shape.
VALUE, DESCRIPTION, LABEL = "__value__", "__description__", "__label__"
FIELDS = (VALUE, DESCRIPTION, LABEL)
# Git memory's first line, before <self> and <memory>.
REMINDER = "\n\nReminder: <projection> contains the local path of the memory file projection."


def render_git(blocks: list[BlockData]) -> list[tuple[str | None, str]]:
    """The git-memory text as pieces: ``("self", "<self>...</self>")``, ``("memory", ...)``, unnamed glue."""
    system = [b for b in blocks if b.label and b.label.startswith(SYSTEM)]
    if not system:
        return []
    pieces: list[tuple[str | None, str]] = [(None, REMINDER)]
    persona = next((b for b in system if b.label == PERSONA), None)
    if persona is not None:
        value = (persona.value or "").rstrip("\n")
        pieces += [
            (None, "\n\n"),
            ("self", f"<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\n{value}\n</self>"),
        ]
    nested = [b for b in system if b.label != PERSONA]
    external = [b for b in blocks if b.label and not b.label.startswith((SYSTEM, "skills/"))]
    if nested or external:
        out = ["<memory>\n"]
        _write_tags(out, _tag_tree(nested))
        if external:
            out.append("<external_projection>\n${MEMORY_DIR}/\n")
            draw_tree(out, _file_tree(external), _file_entries)
            out.append("</external_projection>\n")
        out.append("</memory>")
        pieces += [(None, "\n\n"), ("memory", "".join(out))]
    return pieces


def _path_parts(label: str) -> list[str]:
    return [part for part in label.split("/") if part]


def _tag_tree(blocks: list[BlockData]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for block in blocks:
        parts = _path_parts((block.label or "")[len(SYSTEM) :])  # every label here starts with system/
        if not parts:
            continue
        tag = root
        for part in parts[:-1]:
            if not isinstance(tag.get(part), dict):
                tag[part] = {}
            tag = tag[part]
        fields = {VALUE: block.value or "", DESCRIPTION: (block.description or "").strip(), LABEL: block.label}
        leaf = tag.get(parts[-1])
        if isinstance(leaf, dict):
            leaf.update(fields)  # a block that is also a directory of tags
        else:
            tag[parts[-1]] = fields  # a later block with the same path replaces the earlier one
    return root


def _child_tags(tag: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    return iter(sorted((key, child) for key, child in tag.items() if key not in FIELDS))


def _write_tags(out: list[str], root: dict[str, Any]) -> None:
    path: list[str] = []
    # Each frame: the open tag's name (None for the root) and its remaining children.
    frames: list[tuple[str | None, Iterator[tuple[str, Any]]]] = [(None, _child_tags(root))]
    while frames:
        name, children = frames[-1]
        pad = "  " * (len(frames) - 1)
        step = next(children, None)
        if step is None:
            frames.pop()
            if name is not None:
                path.pop()
                out.append(f"{'  ' * (len(frames) - 1)}</{name}>\n")
            continue
        key, tag = step
        path.append(key)
        out.append(f"{pad}<{key}>\n")
        if VALUE in tag:
            out.append(f"{pad}  <projection>$MEMORY_DIR/system/{'/'.join(path)}.md</projection>\n")
        description = str(tag.get(DESCRIPTION) or "").rstrip("\n")
        if description:
            out.append(f"{pad}  <description>{description}</description>\n")
        value = str(tag.get(VALUE) or "").rstrip("\n")
        if value:
            out.append(f"{pad}  {value}\n")
        frames.append((key, _child_tags(tag)))


def _file_tree(blocks: list[BlockData]) -> dict[str, Any]:
    """Directories are dicts, files (``<last part>.md``) are None; labels are taken in sorted order."""
    root: dict[str, Any] = {}
    # Every label here is a non-empty str (render_git keeps only those).
    for block in sorted(blocks, key=lambda b: b.label or ""):
        parts = _path_parts((block.label or "").strip())
        if not parts:
            continue
        folder = root
        for depth, part in enumerate(parts[:-1]):
            child = folder.setdefault(part, {})
            if child is None:
                _raise_file_in_path(parts, depth)
            folder = child
        # A file replaces a directory of the same name that an earlier label made.
        folder[f"{parts[-1]}.md"] = None
    return root


def _raise_file_in_path(parts: list[str], depth: int) -> None:
    # Letta fails here with Python's own errors: writing a file into the file's None, or walking below it.
    if depth == len(parts) - 2:
        raise TypeError("'NoneType' object does not support item assignment")
    raise AttributeError("'NoneType' object has no attribute 'setdefault'")


def _file_entries(folder: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None]]:
    folders = sorted(name for name, child in folder.items() if child is not None)
    files = sorted(name for name, child in folder.items() if child is None)
    return [(f"{name}/", folder[name]) for name in folders] + [(name, None) for name in files]
