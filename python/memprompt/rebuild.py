"""Exact rebuild decisions for message[0]: fingerprints instead of substring search.

Letta rebuilds the stored system message when the freshly compiled memory is not
a substring of it. That is slow, keeps stale prompts whose new memory happens to
be a substring of the old one, and rebuilds every time when the template holds
``{CORE_MEMORY}``. Here the template and the memory section are compared exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

from . import _core
from .types import Compiled

_STAMP = re.compile(r"mp1:([0-9a-f]{32}):([0-9a-f]{32})")

# The same template string is checked on every step: its hash is cached by Python.
_template_fingerprint = lru_cache(maxsize=1024)(_core.fingerprint)


@dataclass(frozen=True)
class PromptStamp:
    """The fingerprints of the template and of the memory section a system message was built from."""

    template: int
    memory: int

    def __str__(self) -> str:
        return f"mp1:{self.template:032x}:{self.memory:032x}"

    @classmethod
    def parse(cls, text: str) -> PromptStamp:
        """The stamp written by ``str(stamp)``; ``ValueError`` for anything else."""
        match = _STAMP.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            raise ValueError(f"not a memprompt stamp (expected 'mp1:<32 hex>:<32 hex>'): {text!r}")
        return cls(int(match[1], 16), int(match[2], 16))


@dataclass(frozen=True)
class SystemMessage:
    """A built system message and the stamp to store beside it."""

    text: str
    stamp: PromptStamp

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class RebuildDecision:
    """Truthy when message[0] must be rebuilt; ``reason`` says why, ``method`` how it was decided."""

    rebuild: bool
    reason: str
    method: Literal["stamp", "parse", "force"]

    def __bool__(self) -> bool:
        return self.rebuild


# Every decision is one of these (decisions are immutable, so they are shared).
_FORCED = RebuildDecision(True, "forced", "force")
_TEMPLATE_CHANGED_STAMP = RebuildDecision(True, "system prompt template changed", "stamp")
_MEMORY_CHANGED_STAMP = RebuildDecision(True, "memory changed", "stamp")
_UNCHANGED_STAMP = RebuildDecision(False, "unchanged", "stamp")
_NO_MESSAGE = RebuildDecision(True, "no stored system message", "parse")
_TEMPLATE_CHANGED_PARSE = RebuildDecision(True, "system prompt template changed", "parse")
_MEMORY_CHANGED_PARSE = RebuildDecision(True, "memory changed", "parse")
_UNCHANGED_PARSE = RebuildDecision(False, "unchanged", "parse")


def _memory_text_and_fingerprint(memory: str | Compiled) -> tuple[str, int]:
    if isinstance(memory, Compiled):
        return memory.text, memory.fingerprint
    if isinstance(memory, str):
        return memory, _core.fingerprint(memory)
    raise TypeError(f"memory must be str or Compiled, not {type(memory).__name__}")


def build_system_message(
    system_prompt: str,
    memory: str | Compiled,
    agent_id: Any,
    in_context_memory_last_edit: datetime,
    timezone: str | None,
    user_defined_variables: dict[str, Any] | None = None,
    append_icm_if_missing: bool = True,
    template_format: str = "f-string",
    previous_message_count: Any = 0,
    archival_memory_size: int | None = 0,
    archive_tags: list[str] | None = None,
    conversation_id: Any = "default",
) -> SystemMessage:
    """Letta's ``get_system_message_from_compiled_memory``, with the stamp of what it was built from."""
    memory_text, memory_fingerprint = _memory_text_and_fingerprint(memory)
    text = _core.get_system_message_from_compiled_memory(
        system_prompt,
        memory_text,
        agent_id,
        in_context_memory_last_edit,
        timezone,
        user_defined_variables,
        append_icm_if_missing,
        template_format,
        previous_message_count,
        archival_memory_size,
        archive_tags,
        conversation_id,
    )
    return SystemMessage(text, PromptStamp(_template_fingerprint(system_prompt), memory_fingerprint))


def needs_rebuild(
    system_prompt: str,
    memory: str | Compiled,
    message_text: str | None,
    stamp: PromptStamp | str | None = None,
    force: bool = False,
) -> RebuildDecision:
    """Whether message[0] must be rebuilt: exactly when its template or memory section changed.

    With a ``stamp`` (recorded by ``build_system_message``) this compares fingerprints;
    without one it parses ``message_text`` against the template. Metadata (message
    counts, archival size, timestamp) never causes a rebuild; ``force`` always does.
    """
    if force:
        return _FORCED
    if stamp is not None:
        if isinstance(stamp, str):
            stamp = PromptStamp.parse(stamp)
        _, memory_fingerprint = _memory_text_and_fingerprint(memory)
        if _template_fingerprint(system_prompt) != stamp.template:
            return _TEMPLATE_CHANGED_STAMP
        if memory_fingerprint != stamp.memory:
            return _MEMORY_CHANGED_STAMP
        return _UNCHANGED_STAMP
    memory_text, _ = _memory_text_and_fingerprint(memory)
    if message_text is None:
        return _NO_MESSAGE
    stored = _core.stored_memory_section(system_prompt, message_text)
    if stored is None:
        return _TEMPLATE_CHANGED_PARSE
    if stored != memory_text:
        return _MEMORY_CHANGED_PARSE
    return _UNCHANGED_PARSE
