"""Extreme sizes (README, Guarantees: "Huge input"): a 100 MB value, 100,000 blocks, a label with 10,000
path parts, a 1 MB label, 10,000 client skills, 1,000 sources with 10,000 files.

Each result is checked against the pure-Python reference (which is itself iterative,
so it runs at these sizes too) and against a property that needs no reference (a
count of lines, of tags, of files). No timing assertion: a quadratic or recursive
renderer shows up as a test that does not finish, or a crash. Git memory and the
tree view indent every level of a path, so a 10,000-part label renders about
200 MB: that size is Letta's, not ours.
"""

from __future__ import annotations

import datetime as dt

import pytest

import memprompt as mp
from memprompt import reference as ref
from memprompt.reference import tool_rules as ref_rules
from memprompt.types import Block, ClientSkill, FileBlock, LLMConfig, Source, ToolUsageRules

MB = 1_000_000
ANTHROPIC = LLMConfig("anthropic")
NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def both(memory_kwargs, call):
    """``call`` on memprompt's Memory and on the reference's: equal, and returned."""
    text = call(mp.Memory(**memory_kwargs))
    expected = call(ref.Memory(**memory_kwargs))
    assert text == expected
    return text


# --- a 100 MB value ----------------------------------------------------------------------------


def test_a_100_mb_value():
    value = "0123456789" * (10 * MB)
    blocks = [Block(value, "human", "d", 100 * MB)]
    text = both({"blocks": blocks}, lambda m: m.compile())
    assert text.count("\n") == 16 and text.endswith(f"<value>\n{value}\n</value>\n</human>\n\n</memory_blocks>")
    assert f"- chars_current={100 * MB}\n" in text
    compiled = mp.Memory(blocks).compile_with_fingerprint()
    assert compiled.text == text and compiled.fingerprint == mp.fingerprint(text)
    assert compiled.sections == {"memory_blocks": (0, len(text))}


def test_a_100_mb_value_of_lines_with_line_numbers():
    line = "a line of text, fifty characters long, give or take"
    value = (line + "\n") * (2 * MB)
    kwargs = {"blocks": [Block(value, "human")], "agent_type": "letta_v1_agent"}
    text = both(kwargs, lambda m: m.compile(llm_config=ANTHROPIC))
    assert len(value) > 100 * MB
    assert f"\n{2 * MB}\u2192 {line}\n{2 * MB + 1}\u2192 \n</value>" in text
    assert text.count(f"\u2192 {line}\n") == 2 * MB


@pytest.mark.parametrize("line", ["caf\u00e9 au lait", "\u00e9t\u00e9 \u2014 ok", "\ud800\U0001f600\x00 x", ""])
def test_a_value_of_400_000_short_lines_with_line_numbers_in_every_width(line):
    # Short lines in each str width (and empty ones): the numbered copy splits such a value
    # into two runs written a line of each in turn, which must meet exactly.
    value = (line + "\n") * 400_000 + line
    kwargs = {"blocks": [Block(value, "human", "d", 10 * MB)], "agent_type": "letta_v1_agent"}
    text = both(kwargs, lambda m: m.compile(llm_config=ANTHROPIC))
    assert f"\n200001\u2192 {line}\n" in text and f"\n400001\u2192 {line}\n</value>" in text


def test_a_4_mb_value_of_surrogates_astral_and_nul():
    value = "\ud800\U0001f600\x00\udfff" * MB
    for mode in ({}, {"git_enabled": True}):
        blocks = [Block(value, "system/persona"), Block(value, "system/human")]
        text = both({"blocks": blocks, **mode}, lambda m: m.compile())
        assert text.count(value) == 2


def test_a_100_mb_memory_in_a_system_message_and_its_exact_parse():
    memory = "<memory_blocks>\n" + "m" * (100 * MB) + "\n</memory_blocks>"
    template = "Intro {CORE_MEMORY} outro"
    message = mp.get_system_message_from_compiled_memory(template, memory, "a", NOW, "UTC")
    assert message == ref.get_system_message_from_compiled_memory(template, memory, "a", NOW, "UTC")
    assert mp.stored_memory_section(template, message) == memory
    assert not mp.needs_rebuild(template, memory, message)


# --- 100,000 blocks -----------------------------------------------------------------------------


def many_blocks(n, prefix=""):
    return [
        Block(f"value {i}\nline two", f"{prefix}label{i % 977}/{i}", f"about {i}", 1000 + i, i % 3 == 0)
        for i in range(n)
    ]


@pytest.mark.parametrize(
    ("mode", "compile_kwargs"),
    [
        ({}, {}),
        ({"agent_type": "letta_v1_agent"}, {"llm_config": ANTHROPIC}),
        ({"git_enabled": True}, {}),
    ],
    ids=["plain", "line numbers", "git"],
)
def test_100_000_blocks(mode, compile_kwargs):
    prefix = "system/" if mode.get("git_enabled") else ""
    blocks = many_blocks(100_000, prefix)
    text = both({"blocks": blocks, **mode}, lambda m: m.compile(**compile_kwargs))
    assert text.count("value ") == 100_000
    many = mp.compile_many([mp.Memory(blocks, **mode), mp.Memory(blocks[:10], **mode)], **compile_kwargs)
    assert many[0] == text


def test_100_000_blocks_in_the_tree_view_and_skills():
    blocks = many_blocks(50_000) + many_blocks(50_000, "skills/")
    tree = both({"blocks": blocks}, lambda m: m.render_memory_filesystem())
    assert tree.count("\n") > 50_000
    skills = both(
        {"blocks": [Block("v", f"skills/s{i}", f"does {i}") for i in range(100_000)]},
        lambda m: m.compile_available_skills(),
    )
    assert skills.count("SKILL.md") == 100_000


def test_100_000_blocks_with_the_same_label():
    blocks = [Block(str(i), "system/human") for i in range(100_000)]
    for git_enabled in (False, True):
        both({"blocks": blocks, "git_enabled": git_enabled}, lambda m: m.compile())
    both({"blocks": blocks}, lambda m: m.render_memory_filesystem())


# --- a label with 10,000 path parts -------------------------------------------------------------


DEEP = "/".join(f"p{i % 10}" for i in range(10_000))


@pytest.mark.parametrize(
    "label",
    ["system/" + DEEP, DEEP, "system/" + DEEP + "/", "/" + DEEP.replace("/", "//")],
    ids=["system", "external", "trailing slash", "double slashes"],
)
def test_a_label_with_10_000_parts_in_git_memory(label):
    blocks = [Block("I am Ava.", "system/persona"), Block("deep value", label), Block("shallow", "system/human")]
    text = both({"blocks": blocks, "git_enabled": True}, lambda m: m.compile())
    if label.startswith("system/"):
        assert "deep value" in text
        # Nested tags: one open and one close per level, indented two spaces per level.
        assert text.count("<p9>") == text.count("</p9>") == 1000
        assert "\n" + " " * (2 * 9_999) + "<p9>\n" in text


def test_a_label_with_10_000_parts_in_the_tree_view_and_skills():
    blocks = [Block("v", DEEP, "deep file"), Block("w", "skills/" + DEEP), Block("x", "p0")]
    tree = both({"blocks": blocks}, lambda m: m.render_memory_filesystem())
    assert tree.count("\n") == 10_000 + 5
    both({"blocks": blocks}, lambda m: m.compile_available_skills())
    # A skill location 10,000 parts deep, with every kind of part.
    location = "/".join([".", "..", "", "x"] * 2_500) + "/s/SKILL.md"
    both({"blocks": []}, lambda m: m.compile_available_skills([ClientSkill("s", "deep", location)]))


# --- a 1 MB label ------------------------------------------------------------------------------------


# A 1 MB label of 1,000 parts of 1,000 characters. (Half a million one-letter parts would
# render about 10^12 characters in git memory and the tree view: see the memory errors below.)
KILO_PARTS = "/".join(f"{i:04d}" + "x" * 995 for i in range(1_000))


@pytest.mark.parametrize(
    "label",
    ["L" * MB, "system/" + "L" * MB, "skills/" + "L" * MB, KILO_PARTS, "system/" + KILO_PARTS],
    ids=["plain", "system", "skill", "1,000 parts of 1 KB", "system, 1,000 parts of 1 KB"],
)
def test_a_1_mb_label(label):
    blocks = [Block("value", label, "description"), Block("p", "system/persona")]
    for kwargs in ({}, {"git_enabled": True}, {"agent_type": "memgpt_v2_agent"}):
        both({"blocks": blocks, **kwargs}, lambda m: m.compile(llm_config=ANTHROPIC))
    both({"blocks": blocks}, lambda m: m.render_memory_filesystem())
    both({"blocks": blocks}, lambda m: m.compile_available_skills())
    files = [FileBlock("content", label, source_id="s")]
    text = both({"blocks": [], "file_blocks": files}, lambda m: m.compile(sources=[Source("s", label)]))
    assert text.count(label) == 2


# Half a million one-letter parts: about 10^12 characters in git memory and the tree view.
HUGE_DEPTH = "a/" * 500_000 + "z"


@pytest.mark.parametrize("label", ["system/" + HUGE_DEPTH, HUGE_DEPTH], ids=["nested tags", "external tree"])
def test_a_git_memory_too_large_for_any_machine_is_a_memory_error(label):
    """Measured before it is written: MemoryError, not a terabyte allocation that aborts."""
    blocks = [Block("p", "system/persona"), Block("v", label, "d"), Block("h", "system/human")]
    with pytest.raises(MemoryError):
        mp.Memory(blocks, git_enabled=True).compile()
    with pytest.raises(MemoryError):
        mp.compile_many([mp.Memory(blocks, git_enabled=True)])
    assert mp.Memory(blocks[::2], git_enabled=True).compile().endswith("  h\n</human>\n</memory>")


def test_a_tree_view_too_large_for_any_machine_is_a_memory_error():
    blocks = [Block("v", HUGE_DEPTH, "d"), Block("w", "skills/s")]
    with pytest.raises(MemoryError):
        mp.Memory(blocks).render_memory_filesystem()
    assert mp.Memory(blocks[1:]).render_memory_filesystem().endswith("└── s\n</memory_filesystem>")


# --- 10,000 client skills ------------------------------------------------------------------------------


def test_10_000_client_skills():
    roots = ["/abs/skills", "${MEMORY_DIR}/skills", "rel/dir", "../up"]
    skills = [ClientSkill(f"s{i}", f"skill {i}\nmore", f"{roots[i % 4]}/s{i}/SKILL.md") for i in range(10_000)]
    skills += [ClientSkill(f"loose{i}", None, f"/elsewhere/{i % 50}/file{i}.md") for i in range(2_000)]
    blocks = [Block("v", f"skills/b{i}", f"block skill {i}") for i in range(1_000)]
    text = both({"blocks": blocks}, lambda m: m.compile_available_skills(skills))
    assert text.count("SKILL.md") == 11_000
    both({"blocks": blocks}, lambda m: m.render_memory_filesystem(skills))


# --- 1,000 sources with 10,000 files ----------------------------------------------------------------


@pytest.mark.parametrize("agent_type", [None, "react_agent"])
def test_1_000_sources_with_10_000_files(agent_type):
    sources = [Source(f"source-{i}", f"folder {i}", f"desc {i}", "read it" if i % 2 else None) for i in range(1_000)]
    sources.append(Source(None, "no id"))
    files = [
        FileBlock(
            f"content {j}" if j % 3 else "", f"docs/{j}.txt", f"file {j}", 5000, j % 7 == 0, f"source-{j % 1_000}"
        )
        for j in range(10_000)
    ]
    kwargs = {"blocks": [Block("v", "human")], "file_blocks": files, "agent_type": agent_type}
    text = both(kwargs, lambda m: m.compile(sources=sources, max_files_open=50))
    assert text.count("<directory name=") == 1_001
    assert text.count('<file status="') == 10_000
    assert "- current_files_open=6666\n" in text


# --- long lists elsewhere -------------------------------------------------------------------------------


@pytest.mark.parametrize(("placeholders", "tags"), [(100_000, 3), (1, 100_000)])
def test_100_000_placeholders_or_archive_tags(placeholders, tags):
    template = "x{CORE_MEMORY}" * placeholders
    memory = "<memory_blocks>m</memory_blocks>"
    archive_tags = [f"tag{i}" for i in range(tags)]
    message = mp.get_system_message_from_compiled_memory(template, memory, "a", NOW, "UTC", archive_tags=archive_tags)
    assert message == ref.get_system_message_from_compiled_memory(
        template, memory, "a", NOW, "UTC", archive_tags=archive_tags
    )
    assert mp.stored_memory_section(template, message) == memory
    assert message.count("<memory_metadata>") == placeholders


def test_a_system_message_too_large_for_any_machine_is_a_memory_error():
    """A million placeholders, each replaced by a 1 MB metadata block: a terabyte. Python's
    str.replace raises MemoryError (Letta's error); so do we, before writing anything."""
    template = "{CORE_MEMORY}" * 1_000_000
    tags = ["t" * 10] * 100_000
    with pytest.raises(MemoryError):
        mp.get_system_message_from_compiled_memory(template, "m", "a", NOW, "UTC", archive_tags=tags)
    with pytest.raises(MemoryError):
        ref.get_system_message_from_compiled_memory(template, "m", "a", NOW, "UTC", archive_tags=tags)
    assert mp.get_system_message_from_compiled_memory("{CORE_MEMORY}", "m", "a", NOW, "UTC").startswith("m\n\n")


def test_10_000_tool_rules():
    kinds = ["exit_loop", "continue_loop", "run_first", "required_before_exit"]
    rules = [{"type": kinds[i % 4], "tool_name": f"tool{i}"} for i in range(10_000)]
    rules += [{"type": "constrain_child_tools", "tool_name": "t", "children": [f"c{j}" for j in range(10_000)]}]
    block, expected = mp.compile_tool_rule_prompts(rules), ref_rules.compile_tool_rule_prompts(rules)
    assert (block.description, block.value) == (expected.description, expected.value)
    assert block.value.count("<tool_rule>") == 5_001
    section = mp.Memory([]).compile(tool_usage_rules=ToolUsageRules("d", "v" * MB))
    assert len(section) == MB + len("\n\n<tool_usage_rules>\nd\n\n\n</tool_usage_rules>")
