"""Reading inputs, and the validation contract that the Rust core shares.

Inputs are read by attribute, as Letta reads them, so memprompt's classes,
Letta's pydantic objects and look-alike objects all work. Letta's output wins
wherever it renders something sensible; where it would render garbage or fail
deep inside, we raise one of these errors (the Rust core raises the same):

- Blocks and file blocks: ``label``, ``value``, ``description``, ``limit`` by
  plain attribute access (missing: AttributeError); ``read_only`` by
  ``getattr(b, "read_only", False)`` and truthiness; file blocks also
  ``getattr(b, "source_id", None)``. Text fields (``label``, ``value``,
  ``description``, ``source_id``) must be str (a subclass is read as its plain
  text) or None, ``limit`` an int (a bool renders "True") or None, else
  ``TypeError(f"block {i} ({label!r}): {field} must be str or None, not {type}")``
  ("must be int or None" for limit; "file block" for file blocks; ``i`` is the
  position in the list read; ``label`` is None unless it is a str). A block's
  fields are read (in that order, as Letta reads them) before any is
  checked, so a read that raises is raised before a bad type. A renderer
  checks every block of the list it reads, in list order, before it writes, and
  only the fields Letta reads there: git memory reads every label, the value of the
  first ``system/persona``, and the description and value of the other ``system/``
  blocks with a path part; the tree view every label, then (in list order) the
  description of each block it shows one for, by ``getattr(b, "description", None)``:
  files outside any ``system`` directory and the top-level skills; the skills
  listing labels and the description of each skill's first block; the
  directories, once the sources are read, a file block's ``source_id`` only
  while a source has an id, the rest of it only when that id is a source's, and
  else its value alone (``getattr(b, "value", None)``) when ``max_files_open``
  is given. An error about a field read without the label names the label when
  it is a str, else None.
  ``Memory(file_blocks=...)`` checks each file block's label when it drops the
  later blocks of a repeated label.
- Sources: ``getattr`` of ``name`` (default ""), ``description`` and
  ``instructions`` (default None) take any object and render as an f-string
  does; ``getattr(s, "id", None)`` must be str or None, else
  ``TypeError(f"source {i} ({name!r}): id must be str or None, not {type}")``.
- Client skills: ``name`` must be str
  (``TypeError(f"client skill {i}: name must be str, not {type}")``);
  ``description`` and ``location`` str or None ("must be str or None").
- tool_usage_rules: ``getattr`` of ``description`` and ``value`` (default None),
  str or None: ``TypeError(f"tool_usage_rules: {field} must be str or None, not {type}")``.
- ``max_files_open``: int or None (``TypeError(f"max_files_open must be int or None, not {type}")``),
  checked only when directories render.
- ``agent_type``: None, a str, or an object whose ``.value`` is a str, else
  ``TypeError(f"agent_type must be a str, an enum with a str value, or None, not {type}")``.
- Label parts named like Letta's internal keys (``__value__``, ``__description__``,
  ``__label__`` in git memory, ``__block__`` in the memory filesystem) render
  exactly as Letta renders them, odd as that is (a hidden block, a dict's repr).
- Where Letta's tree code crashes (a path that runs through a name already
  holding a file), we raise its exception type, TypeError when that file is the
  path's parent and AttributeError when it is further up, with Letta's own message.
- Metadata: ``memory_edit_timestamp`` must be a ``datetime.datetime``
  (TypeError); a falsy timezone formats the datetime as it is, a str goes
  through ``pytz.timezone`` (UnknownTimeZoneError), anything else is a
  TypeError; ``archival_memory_size`` int or None (TypeError); ``archive_tags``
  is joined as ``str.join`` does. Other values render as f-strings do.
- System message: ``user_defined_variables`` not None is a NotImplementedError
  (checked first); then the metadata; ``memory_with_sources`` must be str
  (TypeError); a ``template_format`` other than "f-string" is
  ``NotImplementedError(template_format)``; ``system_prompt`` must be str (TypeError).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, TypeGuard

BLOCK = "block"
FILE_BLOCK = "file block"


class BlockData(NamedTuple):
    """A checked block (or file block); ``index`` is its position in the list read."""

    index: int  # type: ignore[assignment]  # a field named index shadows tuple.index, on purpose
    label: str | None
    value: str | None
    description: str | None
    limit: int | None
    read_only: bool
    source_id: str | None = None


class SourceData(NamedTuple):
    """A source: ``id`` is checked, the other fields render as f-strings do."""

    id: str | None
    name: Any
    description: Any
    instructions: Any


class ClientSkillData(NamedTuple):
    name: str
    description: str | None
    location: str | None


def type_name(value: object) -> str:
    return type(value).__name__


def _plain(text: str) -> str:
    # A str subclass may override __str__ or __format__: we render its text.
    return text if type(text) is str else str.__str__(text)


def _is_text(value: object) -> TypeGuard[str | None]:
    return value is None or isinstance(value, str)


def _text(value: str | None) -> str | None:
    return None if value is None else _plain(value)


def _checked_text(value: object, where: str, field: str) -> str | None:
    if not _is_text(value):
        raise TypeError(f"{where}: {field} must be str or None, not {type_name(value)}")
    return _text(value)


def _block_error(kind: str, index: int, label: str | None, field: str, expected: str, value: object) -> TypeError:
    return TypeError(f"{kind} {index} ({label!r}): {field} must be {expected}, not {type_name(value)}")


def _block_text(value: object, kind: str, index: int, label: str | None, field: str) -> str | None:
    """A block's text field, str or None, as its plain text."""
    if not _is_text(value):
        raise _block_error(kind, index, label, field, "str or None", value)
    return _text(value)


def read_label(block: Any, index: int, kind: str = BLOCK) -> str | None:
    return _block_text(block.label, kind, index, None, "label")


def read_description(block: Any, index: int, label: str | None) -> str | None:
    """``getattr(block, "description", None)``, checked as ``read_block`` checks it."""
    return _block_text(getattr(block, "description", None), BLOCK, index, label, "description")


def read_tree_labels(blocks: Iterable[Any]) -> tuple[list[Any], list[BlockData]]:
    """The blocks as Letta's tree view reads them first, in one pass: each block (kept, to
    read a description later: ``read_descriptions``) and its label. No value, no limit."""
    kept: list[Any] = []
    read = []
    for index, block in enumerate(blocks):
        kept.append(block)
        read.append(BlockData(index, read_label(block, index), None, None, None, False))
    return kept, read


def read_descriptions(blocks: Sequence[Any], indices: list[int], read: list[BlockData]) -> dict[int, str | None]:
    """The descriptions of the blocks at ``indices`` (in list order), as ``read_description`` reads them."""
    return {index: read_description(blocks[index], index, read[index].label) for index in indices}


def read_git_blocks(blocks: Any) -> list[BlockData]:
    """The blocks as Letta's git memory reads them, in its order: every label; the value of
    the first ``system/persona``; then, block by block, the description and the value of
    every other ``system/`` block whose label has a path part, the values checked once all
    are read (Letta uses them last). Nothing else (no limit, no read_only)."""
    kept = list(blocks)
    labels = [read_label(block, index) for index, block in enumerate(kept)]
    persona = next((index for index, label in enumerate(labels) if label == "system/persona"), None)
    values: dict[int, Any] = {}
    if persona is not None:
        values[persona] = _block_text(kept[persona].value, BLOCK, persona, "system/persona", "value")
    shown = [
        index
        for index, label in enumerate(labels)
        if label
        and label != "system/persona"
        and label.startswith("system/")
        and any(label.removeprefix("system/").split("/"))
    ]
    descriptions = {}
    for index in shown:
        descriptions[index] = _block_text(kept[index].description, BLOCK, index, labels[index], "description")
        values[index] = kept[index].value
    for index in shown:
        values[index] = _block_text(values[index], BLOCK, index, labels[index], "value")
    return [
        BlockData(index, label, values.get(index), descriptions.get(index), None, False)
        for index, label in enumerate(labels)
    ]


def read_block(block: Any, index: int, kind: str = BLOCK) -> BlockData:
    # Every field is read before any is checked, in Letta's order: a read that raises comes first.
    label, value, description, limit = block.label, block.value, block.description, block.limit
    read_only = getattr(block, "read_only", False)
    label = _block_text(label, kind, index, None, "label")
    value = _block_text(value, kind, index, label, "value")
    description = _block_text(description, kind, index, label, "description")
    if limit is not None and not isinstance(limit, int):
        raise _block_error(kind, index, label, "limit", "int or None", limit)
    return BlockData(index, label, value, description, limit, bool(read_only))


def read_blocks(blocks: Any) -> list[BlockData]:
    return [read_block(block, index) for index, block in enumerate(blocks)]


def read_file_blocks(file_blocks: Any, sources: list[SourceData], counting: bool) -> list[BlockData]:
    """The file blocks as Letta's directories read them: ``getattr(b, "source_id", None)``
    only while a source has an id; the whole block only when that id is a source's; else
    ``getattr(b, "value", None)`` alone when the open files are counted; else nothing."""
    ids = {source.id for source in sources if source.id is not None}
    read = []
    for index, block in enumerate(file_blocks):
        source_id = _file_text(block, index, "source_id") if ids else None
        if source_id in ids:
            read.append(read_block(block, index, FILE_BLOCK)._replace(source_id=source_id))
        else:
            value = _file_text(block, index, "value") if counting else None
            read.append(BlockData(index, None, value, None, None, False, source_id))
    return read


def _file_text(block: Any, index: int, field: str) -> str | None:
    """``getattr(block, field, None)`` of a file block whose label is not read: an error
    names the label when it is a str, else None."""
    value = getattr(block, field, None)
    if not _is_text(value):
        label = getattr(block, "label", None)
        raise _block_error(FILE_BLOCK, index, label if isinstance(label, str) else None, field, "str or None", value)
    return _text(value)


def read_source(source: Any, index: int) -> SourceData:
    name = getattr(source, "name", "")
    description = getattr(source, "description", None)
    instructions = getattr(source, "instructions", None)
    source_id = getattr(source, "id", None)
    if source_id is not None and not isinstance(source_id, str):
        raise TypeError(f"source {index} ({name!r}): id must be str or None, not {type_name(source_id)}")
    return SourceData(_text(source_id), name, description, instructions)


def read_client_skill(skill: Any, index: int) -> ClientSkillData:
    name = skill.name
    if not isinstance(name, str):
        raise TypeError(f"client skill {index}: name must be str, not {type_name(name)}")
    where = f"client skill {index}"
    description = _checked_text(skill.description, where, "description")
    return ClientSkillData(_plain(name), description, _checked_text(skill.location, where, "location"))


def read_tool_usage_rules(rules: Any) -> tuple[str | None, str | None]:
    description = _checked_text(getattr(rules, "description", None), "tool_usage_rules", "description")
    value = _checked_text(getattr(rules, "value", None), "tool_usage_rules", "value")
    return description, value


def check_max_files_open(max_files_open: object) -> None:
    if max_files_open is not None and not isinstance(max_files_open, int):
        raise TypeError(f"max_files_open must be int or None, not {type_name(max_files_open)}")


def agent_type_name(agent_type: object) -> str:
    """The agent type as Letta compares it: the enum's value or the str, lowercased."""
    if hasattr(agent_type, "value"):
        raw = agent_type.value
    else:
        raw = agent_type or ""  # a falsy object is no type, as in Letta
    if not isinstance(raw, str):
        raise TypeError(f"agent_type must be a str, an enum with a str value, or None, not {type_name(agent_type)}")
    return _plain(raw).lower()
