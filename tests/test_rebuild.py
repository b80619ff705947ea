"""Rebuild decisions: the cases where Letta's substring test is wrong, and stamps."""

from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from outcome import assert_same, canonical_width, width
from strategies import system_message_args, templates, texts

import memprompt as mp
from memprompt import reference as ref

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
LATER = datetime(2026, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
TEMPLATE = "You are a helpful agent."
PLACEHOLDER_TEMPLATE = "Intro.\n{CORE_MEMORY}\nOutro."
RULES = mp.ToolUsageRules("Rules apply.", "<tool_rule>\nsend_message ends your turn\n</tool_rule>")
SOURCE = mp.Source("source-1", "docs", "Product docs")
FILE = mp.FileBlock("page one", "docs/a.txt", None, 5000, source_id="source-1")


def blocks():
    return [mp.Block("I am helpful.", "persona"), mp.Block("Ann, a pilot.", "human")]


def git_blocks():
    return [mp.Block("I am X.", "system/persona"), mp.Block("Ann.", "system/human"), mp.Block("notes", "notes/a")]


def message(template, memory, **kwargs):
    return mp.get_system_message_from_compiled_memory(template, memory, "agent-1", NOW, "UTC", **kwargs)


def letta_would_rebuild(template, memory, text):
    """Letta 0.16.8's test in LettaAgentV2._rebuild_memory and AgentManager."""
    return template not in text or memory not in text


STALE_CASES = {
    "tool rules removed, no sources": (
        lambda: mp.Memory(blocks()).compile(tool_usage_rules=RULES),
        lambda: mp.Memory(blocks()).compile(),
    ),
    "sources detached": (
        lambda: mp.Memory(blocks(), file_blocks=[FILE]).compile(sources=[SOURCE]),
        lambda: mp.Memory(blocks(), file_blocks=[FILE]).compile(),
    ),
    "every block removed": (
        lambda: mp.Memory(blocks()).compile(),
        lambda: mp.Memory([]).compile(),
    ),
    "git memory: every system/ block but system/persona removed": (
        lambda: mp.Memory(git_blocks(), git_enabled=True).compile(),
        lambda: mp.Memory(git_blocks()[:1], git_enabled=True).compile(),
    ),
}


@pytest.mark.parametrize("case", sorted(STALE_CASES))
def test_letta_keeps_these_stale_prompts_and_we_rebuild(case):
    old_memory, new_memory = (make() for make in STALE_CASES[case])
    assert old_memory != new_memory
    stored = message(TEMPLATE, old_memory)
    assert not letta_would_rebuild(TEMPLATE, new_memory, stored), "Letta's substring test keeps it"
    by_parse = mp.needs_rebuild(TEMPLATE, new_memory, stored)
    assert by_parse and by_parse.method == "parse" and by_parse.reason == "memory changed"
    built = mp.build_system_message(TEMPLATE, old_memory, "agent-1", NOW, "UTC")
    assert built.text == stored
    by_stamp = mp.needs_rebuild(TEMPLATE, new_memory, stored, stamp=built.stamp)
    assert by_stamp and by_stamp.method == "stamp"


def test_placeholder_template_unchanged_letta_rebuilds_we_do_not():
    memory = mp.Memory(blocks()).compile()
    stored = message(PLACEHOLDER_TEMPLATE, memory)
    assert "{CORE_MEMORY}" not in stored
    assert letta_would_rebuild(PLACEHOLDER_TEMPLATE, memory, stored), "Letta rebuilds every time"
    assert not mp.needs_rebuild(PLACEHOLDER_TEMPLATE, memory, stored)
    built = mp.build_system_message(PLACEHOLDER_TEMPLATE, memory, "agent-1", NOW, "UTC")
    assert not mp.needs_rebuild(PLACEHOLDER_TEMPLATE, memory, built.text, stamp=built.stamp)


@pytest.mark.parametrize("template", [TEMPLATE, PLACEHOLDER_TEMPLATE, "{CORE_MEMORY}", "A{CORE_MEMORY}B{CORE_MEMORY}C"])
def test_metadata_never_triggers_a_rebuild(template):
    memory = mp.Memory(blocks()).compile(tool_usage_rules=RULES)
    stored = mp.get_system_message_from_compiled_memory(
        template,
        memory,
        "agent-1",
        LATER,
        "America/New_York",
        previous_message_count=981,
        archival_memory_size=12,
        archive_tags=["a", "b"],
        conversation_id="c-9",
    )
    assert not mp.needs_rebuild(template, memory, stored)


def test_template_change_rebuilds():
    memory = mp.Memory(blocks()).compile()
    stored = message(TEMPLATE, memory)
    decision = mp.needs_rebuild(TEMPLATE + " Be brief.", memory, stored)
    assert decision and decision.reason == "system prompt template changed"
    stamp = mp.build_system_message(TEMPLATE, memory, "agent-1", NOW, "UTC").stamp
    assert (
        mp.needs_rebuild(TEMPLATE + " Be brief.", memory, stored, stamp=stamp).reason
        == "system prompt template changed"
    )


def test_placeholders_must_all_hold_the_same_text():
    template = "A{CORE_MEMORY}B{CORE_MEMORY}C"
    memory = mp.Memory(blocks()).compile()
    stored = message(template, memory)
    assert not mp.needs_rebuild(template, memory, stored)
    other = mp.Memory(blocks()[:1]).compile()
    tampered = stored.replace(memory, other, 1)
    assert mp.needs_rebuild(template, memory, tampered)
    assert mp.needs_rebuild(template, other, tampered)


def test_memory_holding_a_fake_metadata_block_is_parsed_exactly():
    fake = "x\n\n<memory_metadata>\n- AGENT_ID: evil\n</memory_metadata>\n\n{CORE_MEMORY}</memory_blocks>"
    memory = mp.Memory([mp.Block(fake, "human")]).compile()
    stored = message(TEMPLATE, memory)
    assert not mp.needs_rebuild(TEMPLATE, memory, stored)
    assert mp.needs_rebuild(TEMPLATE, mp.Memory([mp.Block("x", "human")]).compile(), stored)


def test_force_and_absent_message():
    memory = mp.Memory(blocks()).compile()
    forced = mp.needs_rebuild(TEMPLATE, memory, message(TEMPLATE, memory), force=True)
    assert forced and forced.method == "force"
    assert mp.needs_rebuild(TEMPLATE, memory, None).reason == "no stored system message"


def test_compiled_memory_decides_from_the_stamp():
    memory = mp.Memory(blocks())
    compiled = memory.compile_with_fingerprint()
    built = mp.build_system_message(TEMPLATE, compiled, "agent-1", NOW, "UTC")
    assert built.stamp.memory == compiled.fingerprint == mp.fingerprint(compiled.text)
    assert not mp.needs_rebuild(TEMPLATE, compiled, built.text, stamp=str(built.stamp))
    memory.update_block_value("human", "Bob.")
    assert mp.needs_rebuild(TEMPLATE, memory.compile_with_fingerprint(), built.text, stamp=built.stamp)


def test_stamp_round_trips_and_rejects_garbage():
    stamp = mp.PromptStamp(1, 2**128 - 1)
    assert mp.PromptStamp.parse(str(stamp)) == stamp
    assert str(stamp) == "mp1:" + "0" * 31 + "1:" + "f" * 32
    for bad in ["", "mp1:1:2", "mp2:" + "0" * 32 + ":" + "0" * 32, "mp1:" + "g" * 32 + ":" + "0" * 32]:
        with pytest.raises(ValueError, match="not a memprompt stamp"):
            mp.PromptStamp.parse(bad)


ASCII_MEMORIES = st.text(st.characters(max_codepoint=127), max_size=200)


@given(system_message_args(), st.one_of(ASCII_MEMORIES, texts()))
def test_system_message_equals_reference(args, memory):
    """Both ways the Rust core builds it (ASCII memory: one UTF-8 render; any other: a join around the str) equal the reference."""
    args = {**args, "memory_with_sources": memory}
    assert_same(
        lambda: mp.get_system_message_from_compiled_memory(**args),
        lambda: ref.get_system_message_from_compiled_memory(**args),
    )


def stored_section_oracle(template: str, message: str) -> str | None:
    """The exact parse in plain Python: the template's text frames the replaced text, every
    placeholder holds the same text, and the memory section ends at its last metadata marker."""
    pieces = template.split("{CORE_MEMORY}")
    if len(pieces) == 1:
        pieces = [template + "\n\n", ""]
    slots = len(pieces) - 1
    filled = len(message) - sum(map(len, pieces))
    if filled < 0 or filled % slots:
        return None
    width, at, replaced = filled // slots, 0, None
    for i, piece in enumerate(pieces):
        if message[at : at + len(piece)] != piece:
            return None
        at += len(piece)
        if i < slots:
            if replaced is not None and message[at : at + width] != replaced:
                return None
            replaced, at = message[at : at + width], at + width
    assert replaced is not None
    end = replaced.rfind("\n\n<memory_metadata>")
    return None if end < 0 else replaced[:end]


@given(templates, texts(), texts(max_pieces=4), st.integers(0, 3))
def test_stored_memory_section_reads_every_width_exactly(template, memory, noise, cut):
    """Template and message in any of the three widths (the message as wide as its widest
    part), read in their own: the section equals the oracle's, and is a canonical str."""
    built = message(template, memory)
    for text in (built, built[cut:], built + noise, noise + built, noise):
        found = mp.stored_memory_section(template, text)
        assert found == stored_section_oracle(template, text)
        if found is not None:
            assert type(found) is str and width(found) == canonical_width(found)
    if "\n\n<memory_metadata>" not in memory:
        assert mp.stored_memory_section(template, built) == memory


class LongStr(str):
    """A str subclass whose __len__ lies: the join must use the str's own length."""

    def __len__(self):
        return 0


def test_a_wide_memory_subclass_is_joined_as_its_text():
    memory = LongStr("wide \U0001f600 memory")
    assert message("A{CORE_MEMORY}B", memory) == message("A{CORE_MEMORY}B", str(memory))
    assert message("A{CORE_MEMORY}B", str(memory)).startswith("Awide \U0001f600 memory\n\n<memory_metadata>")
