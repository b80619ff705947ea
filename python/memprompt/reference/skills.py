"""``<available_skills>``: the agent's ``skills/`` blocks and the client's skills, grouped by root folder."""

from __future__ import annotations

import posixpath
from typing import Any

from ._tree import draw_tree, first_line
from .fields import BlockData, ClientSkillData, read_description, read_label

SKILL_FILE = "/SKILL.md"


def default_location(name: str) -> str:
    return f"${{MEMORY_DIR}}/skills/{name}/SKILL.md"


def skill_name(label: str | None) -> str | None:
    """The skill a block label names: only ``skills/<name>`` and the older ``skills/<name>/SKILL`` do."""
    label = label or ""
    if not label.startswith("skills/"):
        return None
    parts = label.split("/")
    if len(parts) > 3 or (len(parts) == 3 and parts[2] != "SKILL"):
        return None
    return parts[1]


def read_skill_blocks(blocks: Any) -> list[BlockData]:
    """The blocks as Letta's listing reads them: every label, and the description of the first
    block of each skill name only (a bad field elsewhere is never read, so it is no error)."""
    read, seen = [], set()
    for index, block in enumerate(blocks):
        label = read_label(block, index)
        name = skill_name(label)
        description = None
        if name is not None and name not in seen:
            seen.add(name)
            description = read_description(block, index, label)
        read.append(BlockData(index, label, None, description, None, False))
    return read


def render_available_skills(blocks: list[BlockData], client_skills: list[ClientSkillData]) -> str:
    skills: list[tuple[str, str, str]] = []  # (name, first description line, location)
    seen: set[str] = set()
    for block in blocks:
        name = skill_name(block.label)
        if name is None or name in seen:
            continue
        seen.add(name)
        skills.append((name, first_line(block.description), default_location(name)))
    for skill in client_skills:
        if skill.name in seen:
            continue
        seen.add(skill.name)
        location = (skill.location or "").strip() or default_location(skill.name)
        skills.append((skill.name, first_line(skill.description), location))
    if not skills:
        return ""

    by_root: dict[str, list[tuple[str, str]]] = {}
    for name, description, location in skills:
        root, relative = _split_location(name, location)
        by_root.setdefault(root, []).append((relative, description))
    out = ["\n\n<available_skills>\n"]
    for number, root in enumerate(sorted(by_root)):
        if number:
            out.append("\n")
        out.append(f"{root}\n")
        draw_tree(out, _skill_tree(by_root[root]), _entries)
    out.append("</available_skills>")
    return "".join(out)


def _split_location(name: str, location: str) -> tuple[str, str]:
    """(root folder, path below it): ``<root>/<name>/SKILL.md`` keeps the skill's folder in the path."""
    location = location.strip()
    if location.endswith(SKILL_FILE):
        folder = posixpath.dirname(location)
        root = posixpath.dirname(folder)
        relative = posixpath.relpath(location, root)
        if posixpath.basename(folder) == name.split("/")[-1]:
            return root, relative
    return posixpath.dirname(location), posixpath.basename(location)


def _skill_tree(skills: list[tuple[str, str]]) -> dict[str, Any]:
    """Directories are dicts, files map to their description; paths are taken in sorted order."""
    tree: dict[str, Any] = {}
    for relative, description in sorted(skills, key=lambda skill: skill[0]):
        parts = [part for part in relative.split("/") if part]
        if not parts:
            continue
        folder = tree
        for depth, part in enumerate(parts[:-1]):
            child = folder.setdefault(part, {})
            if isinstance(child, str):
                # Letta fails here with Python's own errors: writing into the file's description, or walking below it.
                if depth == len(parts) - 2:
                    raise TypeError("'str' object does not support item assignment")
                raise AttributeError("'str' object has no attribute 'setdefault'")
            folder = child
        folder[parts[-1]] = description
    return tree


def _entries(folder: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None]]:
    folders = sorted(name for name, child in folder.items() if isinstance(child, dict))
    files = sorted(name for name, child in folder.items() if isinstance(child, str))
    items: list[tuple[str, dict[str, Any] | None]] = [(f"{name}/", folder[name]) for name in folders]
    for name in files:
        description = folder[name].strip()
        items.append((f"{name} ({description})" if description else name, None))
    return items
