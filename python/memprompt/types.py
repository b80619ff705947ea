"""Small typed input classes with Letta's field names.

Every memprompt API reads its inputs with ``getattr``, as Letta does, so Letta's
own pydantic objects (or any object with the same attributes) work too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

try:
    from ._core import count_edit, track_edits
except ImportError:  # the pure-Python reference, used where the extension is not built: no cache to tell

    def count_edit() -> None:
        pass

    def track_edits(*classes: type) -> None:
        pass


# Letta's default block limit (letta.constants.CORE_MEMORY_BLOCK_CHAR_LIMIT).
DEFAULT_BLOCK_LIMIT = 100000


class _EditCounted:
    """Every attribute write is counted, so a ``Memory`` can reuse its last compile without reading us."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        count_edit()  # after the write: a compile that read the old value must not be trusted

    def __delattr__(self, name: str) -> None:
        object.__delattr__(self, name)
        count_edit()


class Block(_EditCounted):
    """A core-memory block: ``label``, ``value``, ``description``, ``limit``, ``read_only``."""

    __slots__ = ("value", "label", "description", "limit", "read_only")

    def __init__(
        self,
        value: str | None = "",
        label: str | None = None,
        description: str | None = None,
        limit: int | None = DEFAULT_BLOCK_LIMIT,
        read_only: bool = False,
    ) -> None:
        self.value = value
        self.label = label
        self.description = description
        self.limit = limit
        self.read_only = read_only

    def __repr__(self) -> str:
        return f"{type(self).__name__}(label={self.label!r}, value={_preview(self.value)})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in _all_slots(self))

    __hash__ = None  # type: ignore[assignment]


class FileBlock(Block):
    """A block holding an open (or closed) file of an attached source."""

    __slots__ = ("source_id",)

    def __init__(
        self,
        value: str | None = "",
        label: str | None = None,
        description: str | None = None,
        limit: int | None = DEFAULT_BLOCK_LIMIT,
        read_only: bool = False,
        source_id: str | None = None,
    ) -> None:
        super().__init__(value, label, description, limit, read_only)
        self.source_id = source_id


class Source(_EditCounted):
    """An attached source (folder): rendered as a ``<directory>``."""

    __slots__ = ("id", "name", "description", "instructions")

    def __init__(
        self,
        id: str | None,
        name: str,
        description: str | None = None,
        instructions: str | None = None,
    ) -> None:
        self.id = id
        self.name = name
        self.description = description
        self.instructions = instructions

    def __repr__(self) -> str:
        return f"Source(id={self.id!r}, name={self.name!r})"


class ClientSkill:
    """A skill the client provides for ``<available_skills>``."""

    __slots__ = ("name", "description", "location")

    def __init__(self, name: str, description: str | None = "", location: str | None = "") -> None:
        self.name = name
        self.description = description
        self.location = location

    def __repr__(self) -> str:
        return f"ClientSkill(name={self.name!r}, location={self.location!r})"


# The Rust core makes these without calling __init__ (rust/binding/tool_rules.rs), each field written
# into its slot and no edit counted (no compile has read a new object): a new field must be made there too.
class ToolUsageRules(_EditCounted):
    """The ``<tool_usage_rules>`` block: a ``description`` and a ``value``."""

    __slots__ = ("description", "value")

    def __init__(self, description: str | None, value: str | None) -> None:
        self.description = description
        self.value = value

    def __repr__(self) -> str:
        return f"ToolUsageRules(description={self.description!r}, value={_preview(self.value)})"


class LLMConfig(_EditCounted):
    """The one field of Letta's LLMConfig that rendering reads."""

    __slots__ = ("model_endpoint_type",)

    def __init__(self, model_endpoint_type: str | None) -> None:
        self.model_endpoint_type = model_endpoint_type

    def __repr__(self) -> str:
        return f"LLMConfig(model_endpoint_type={self.model_endpoint_type!r})"


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _all_slots(obj: object) -> tuple[str, ...]:
    return tuple(s for cls in reversed(type(obj).__mro__) for s in getattr(cls, "__slots__", ()))


# Only these exact classes: a subclass may compute an attribute without writing it.
track_edits(Block, FileBlock, Source, ToolUsageRules, LLMConfig)


# The Rust core makes these without calling __init__, setting the three fields as __init__ does
# (rust/binding/memory.rs, `Detail::of`): a new field or a __post_init__ must be made there too.
@dataclass(frozen=True, slots=True)
class Compiled:
    """A compiled memory section with its fingerprint and where its sections are.

    ``sections`` maps a section name (``memory_blocks``, ``self``, ``memory``,
    ``tool_usage_rules``, ``directories``) to its ``(start, end)`` offsets in
    code points, so ``text[start:end]`` is the section from ``<tag>`` to ``</tag>``.
    """

    text: str
    fingerprint: int
    sections: dict[str, tuple[int, int]] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Section:
    """One section of a whole system message: its name, where it lies and its text.

    ``start`` and ``end`` are offsets in code points, so ``text == message[start:end]``;
    the names are ``system_prompt`` (the template's text around the memory), the
    memory's own (``memory_blocks``; for git memory ``reminder``, ``self``, ``memory``;
    ``tool_usage_rules``, ``directories``) and ``memory_metadata``.
    """

    name: str
    start: int
    end: int
    text: str
