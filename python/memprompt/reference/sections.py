"""Where each section of a whole system message lies: the template's text, the memory's sections, the metadata.

The message is cut where ``get_system_message_from_compiled_memory`` joined its parts: the
template's text, then in place of each ``{CORE_MEMORY}`` the memory, ``"\\n\\n"`` and the
metadata block (after ``"\\n\\n"`` at the end when the template has no placeholder).
"""

from __future__ import annotations

from ..types import Compiled, Section
from .git_memory import REMINDER
from .system_message import PLACEHOLDER

METADATA_START = "\n\n<memory_metadata>"
MEMORY_SECTIONS = ("memory_blocks", "self", "memory", "tool_usage_rules", "directories")

NOT_THIS_TEMPLATE = "the message was not built from this system prompt: its text does not frame a memory"
NO_METADATA = "the message has no <memory_metadata> block after its memory section"
NOT_THIS_MEMORY = (
    "the message's memory section is not this memory (a stale message, or another agent's): "
    "compile the memory it was built from"
)
NOT_TILED = 'the memory\'s sections do not tile its text: only "\\n\\n" may lie between them'


def check_arguments(system_prompt: object, memory: object, message_text: object) -> None:
    """The ``TypeError`` of an argument of the wrong type."""
    for name, value in (("system_prompt", system_prompt), ("message_text", message_text)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be str, not {type(value).__name__}")
    if not isinstance(memory, Compiled):
        raise TypeError(
            f"memory must be a Compiled (Memory.compile_with_fingerprint()), not {type(memory).__name__}: "
            "its section spans say where the memory's sections are"
        )


def message_sections(system_prompt: str, memory: Compiled, message_text: str) -> tuple[Section, ...]:
    """The sections of ``message_text``, built from ``system_prompt`` around ``memory``, in message order."""
    check_arguments(system_prompt, memory, message_text)
    inner = _memory_sections(memory)
    parts = _placed_parts(system_prompt, message_text)
    sections: list[tuple[str, int, int]] = []
    for kind, start, end in parts:
        if kind == "template" and end > start:
            sections.append(("system_prompt", start, end))
        elif kind == "memory":
            filled = message_text[start:end]
            length = len(memory.text)
            if filled[:length] != memory.text:
                raise ValueError(NOT_THIS_MEMORY)
            if not filled.startswith(METADATA_START, length):
                raise ValueError(NO_METADATA)
            sections += [(name, start + a, start + b) for name, a, b in inner]
            sections.append(("memory_metadata", start + length + 2, end))
    return tuple(Section(name, a, b, message_text[a:b]) for name, a, b in sections)


def _placed_parts(system_prompt: str, message: str) -> list[tuple[str, int, int]]:
    """("template" | "appended" | "memory", start, end) of each part, once the whole message matched."""
    if PLACEHOLDER in system_prompt:
        pieces = system_prompt.split(PLACEHOLDER)
        parts = [("template", pieces[0])]
        for piece in pieces[1:]:
            parts += [("memory", ""), ("template", piece)]
    else:
        parts = [("template", system_prompt), ("appended", "\n\n"), ("memory", "")]
    slots = sum(kind == "memory" for kind, _ in parts)
    filled = len(message) - sum(len(text) for _, text in parts)
    if filled < 0 or filled % slots:
        raise ValueError(NOT_THIS_TEMPLATE)
    width = filled // slots
    placed, at, first = [], 0, None
    for kind, text in parts:
        end = at + (width if kind == "memory" else len(text))
        found = message[at:end]
        if kind == "memory":
            first = found if first is None else first
            if found != first:
                raise ValueError(NOT_THIS_TEMPLATE)
        elif found != text:
            raise ValueError(NOT_THIS_TEMPLATE)
        placed.append((kind, at, end))
        at = end
    return placed


def _memory_sections(memory: Compiled) -> list[tuple[str, int, int]]:
    """The memory's sections in order, git memory's reminder line first, tiling its text with "\\n\\n" between."""
    spans = []
    for name, span in memory.sections.items():
        if name not in MEMORY_SECTIONS:
            raise ValueError(
                f"memory.sections: {name!r} is not a section a compile gives ({', '.join(MEMORY_SECTIONS)})"
            )
        if not (
            isinstance(span, tuple) and len(span) == 2 and all(isinstance(n, int) and 0 <= n < 1 << 64 for n in span)
        ):
            raise TypeError(
                f"memory.sections[{name!r}] must be a (start, end) pair of ints >= 0, not {type(span).__name__}"
            )
        if span[0] != span[1]:
            spans.append((name, *span))
    spans.sort(key=lambda span: span[1])
    text = memory.text
    if spans and spans[0][0] in ("self", "memory") and text.startswith(REMINDER):
        spans.insert(0, ("reminder", 2, len(REMINDER)))
    at = 0
    for _, start, end in spans:
        if start < at or end < start or end > len(text) or not _separators(text[at:start]):
            raise ValueError(NOT_TILED)
        at = end
    if not _separators(text[at:]):
        raise ValueError(NOT_TILED)
    return spans


def _separators(text: str) -> bool:
    return len(text) % 2 == 0 and text.count("\n") == len(text)
