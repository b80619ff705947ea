"""memprompt.letta.context without Letta: the overview's fields of message[0] from its sections, counted so
that they add up to the count of the whole message whatever the counter (Letta's counters are not additive:
its default rounds bytes / 4 up, a tokenizer merges across a boundary, a remote counter adds its framing)."""

from __future__ import annotations

import asyncio
import datetime as dt
import math

import pytest

import memprompt as mp
from memprompt.letta import context
from memprompt.types import Block, Source, ToolUsageRules

NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


async def approx(text: str) -> int:
    """Letta's ApproxTokenCounter: UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 4)


async def framed(text: str) -> int:
    """A counter that adds its own framing to every call, and merges "\\n\\n" into what follows."""
    return 7 + len(text.replace("\n\n", "")) // 3 if text else 0


def built(template: str, memory: mp.Memory, **compile_kwargs):
    compiled = memory.compile_with_fingerprint(**compile_kwargs)
    text = mp.get_system_message_from_compiled_memory(template, compiled.text, "agent-1", NOW, "UTC")
    return text, mp.message_sections(template, compiled, text)


GIT = mp.Memory(
    [Block("I am Ava.", "system/persona"), Block("Ann.", "system/human"), Block("t", "notes/a")], git_enabled=True
)
PLAIN = mp.Memory([Block("I am Ava.\n</memory_blocks>", "persona"), Block("x", "memory_metadata")])
RULES = {"tool_usage_rules": ToolUsageRules("Rules.", "r"), "sources": [Source("s", "docs")], "max_files_open": 1}


@pytest.mark.parametrize("counter", [approx, framed])
@pytest.mark.parametrize(
    ("template", "memory", "compile_kwargs"),
    [
        ("You are Ava.", GIT, {}),
        ("You are Ava.", PLAIN, RULES),
        ("A\n{CORE_MEMORY}\nB{CORE_MEMORY}", PLAIN, RULES),
        ("", mp.Memory([]), {}),
    ],
)
def test_the_fields_add_up_to_the_whole_message(counter, template, memory, compile_kwargs):
    text, sections = built(template, memory, **compile_kwargs)
    tokens = asyncio.run(context.field_tokens(sections, text, counter))
    assert sorted(tokens) == sorted(context.FIELDS)
    assert sum(tokens.values()) == asyncio.run(counter(text))
    assert all(count >= 0 for count in tokens.values()) and tokens["memory_filesystem"] == 0
    if "{CORE_MEMORY}" not in template:
        # A field runs from the end of the field before it to its own end: the "\n\n" before it counts with it.
        at = next(i for i, s in enumerate(sections) if s.name == "memory_metadata")
        before = asyncio.run(counter(text[: sections[at - 1].end])) if at else 0
        assert tokens["external_memory_summary"] == asyncio.run(counter(text)) - before


def test_the_fields_texts():
    text, sections = built("You are Ava.", GIT)
    texts = context.field_texts(sections, text)
    core = text[text.index("Reminder: <projection>") : text.index("</memory>") + len("</memory>")]
    assert texts == {
        "system_prompt": "You are Ava.",
        "core_memory": core,
        "external_memory_summary": text[text.index("<memory_metadata>") :],
    }
    text, sections = built("A\n{CORE_MEMORY}\nB{CORE_MEMORY}", PLAIN, **RULES)
    texts = context.field_texts(sections, text)
    # The template's pieces joined; each section of the memory as it first occurs, once.
    assert texts["system_prompt"] == "A\n\nB"
    assert texts["core_memory"] == PLAIN.compile()
    assert texts["tool_usage_rules"].startswith("<tool_usage_rules>") and texts["directories"].endswith(
        "</directories>"
    )
