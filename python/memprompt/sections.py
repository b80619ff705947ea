"""Where each section of a whole system message lies, exactly: no tag is searched for.

A message is parsed against the template it was built from (the template's text must frame the
memory, as for ``needs_rebuild``), its memory section must be the memory given, and the memory's own
sections come from the compile that rendered it (``Compiled.sections``). So a block value holding
``</memory_blocks>``, or a block labelled ``tool_usage_rules`` or ``memory_metadata``, stays inside
the section it belongs to, where Letta's context-window overview takes it for another.
"""

from __future__ import annotations

from . import _core
from .reference.sections import check_arguments
from .types import Compiled, Section

#: Every section name, in the order the sections of a message come.
SECTION_NAMES = (
    "system_prompt",
    "memory_blocks",
    "reminder",
    "self",
    "memory",
    "tool_usage_rules",
    "directories",
    "memory_metadata",
)


def message_sections(system_prompt: str, memory: Compiled, message_text: str) -> tuple[Section, ...]:
    """The sections of ``message_text``, built from ``system_prompt`` around ``memory``, in message order.

    Between two sections, and before the first, lie only the ``"\\n\\n"`` separators Letta writes before
    a section; the ``{CORE_MEMORY}`` of a template is replaced by the memory and its metadata block, so a
    template with several gives each section once per placeholder. ``ValueError`` when the message was
    not built from the template, holds no ``<memory_metadata>`` block after its memory, or holds another
    memory (a stale message: compile the memory it was built from).
    """
    check_arguments(system_prompt, memory, message_text)
    spans = _core.message_sections(system_prompt, memory.text, memory.sections, message_text)
    return tuple(Section(name, start, end, message_text[start:end]) for name, start, end in spans)
