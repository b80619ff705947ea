"""Exact strings of small cases, one or two per renderer of memprompt.reference.

Each expected string was checked against letta 0.16.8 (tests/letta_diff proves
the same on generated inputs); here they show what each format looks like.
"""

from __future__ import annotations

import datetime as dt

import pytest
import pytz
from _load_reference import load_reference

ref = load_reference()

from memprompt.types import Block, ClientSkill, FileBlock, LLMConfig, Source, ToolUsageRules  # noqa: E402

UTC = dt.UTC
HEADER = "<memory_blocks>\nThe following memory blocks are currently engaged in your core memory unit:\n"


def lines(*text: str) -> str:
    return "\n".join(text)


# --- <memory_blocks> ---------------------------------------------------------------


def test_plain_blocks():
    memory = ref.Memory(
        [Block("I am Sam.", "persona", "Who I am.", 5000), Block("", "human", None, None, read_only=True)]
    )
    assert memory.compile() == lines(
        HEADER,
        "<persona>",
        "<description>",
        "Who I am.",
        "</description>",
        "<metadata>",
        "- chars_current=9",
        "- chars_limit=5000",
        "</metadata>",
        "<value>",
        "I am Sam.",
        "</value>",
        "</persona>",
        "",
        "<human>",
        "<description>",
        "",
        "</description>",
        "<metadata>",
        "- read_only=true",
        "- chars_current=0",
        "- chars_limit=0",
        "</metadata>",
        "<value>",
        "",
        "</value>",
        "</human>",
        "",
        "</memory_blocks>",
    )


def test_no_blocks_plain_is_empty_but_line_numbered_keeps_its_wrapper():
    assert ref.Memory([]).compile() == ""
    numbered = ref.Memory([], agent_type="letta_v1_agent").compile(llm_config=LLMConfig("anthropic"))
    assert numbered == HEADER + "\n\n</memory_blocks>"


def test_line_numbered_blocks_for_anthropic_only():
    memory = ref.Memory([Block("a\nb", "human", "d", 100)], agent_type="LETTA_V1_AGENT")
    assert memory.compile(llm_config=LLMConfig("anthropic")) == lines(
        HEADER,
        "<human>",
        "<description>",
        "d",
        "</description>",
        "<metadata>",
        "- chars_current=3",
        "- chars_limit=100",
        "</metadata>",
        "<warning>",
        "# NOTE: Line numbers shown below (with arrows like '1→') are to help during editing."
        " Do NOT include line number prefixes in your memory edit tool calls.",
        "</warning>",
        "<value>",
        "1→ a",
        "2→ b",
        "</value>",
        "</human>",
        "",
        "</memory_blocks>",
    )
    assert "1→" not in memory.compile(llm_config=LLMConfig("openai"))


def test_react_agents_render_no_blocks():
    assert ref.Memory([Block("v", "human")], agent_type="workflow_agent").compile() == ""


# --- git memory ---------------------------------------------------------------------

GIT_BLOCKS = [
    Block("I am Sam.\n", "system/persona"),
    Block("Likes tea.", "system/human", " The user \n"),
    Block("Due Friday.", "system/projects/alpha"),
    Block("x", "notes/today"),
    Block("y", "notes"),
    Block("z", "skills/cook"),
]


def test_git_memory():
    assert ref.Memory(GIT_BLOCKS, git_enabled=True).compile() == lines(
        "",
        "",
        "Reminder: <projection> contains the local path of the memory file projection.",
        "",
        "<self>",
        "<projection>$MEMORY_DIR/system/persona.md</projection>",
        "I am Sam.",
        "</self>",
        "",
        "<memory>",
        "<human>",
        "  <projection>$MEMORY_DIR/system/human.md</projection>",
        "  <description>The user</description>",
        "  Likes tea.",
        "</human>",
        "<projects>",
        "  <alpha>",
        "    <projection>$MEMORY_DIR/system/projects/alpha.md</projection>",
        "    Due Friday.",
        "  </alpha>",
        "</projects>",
        "<external_projection>",
        "${MEMORY_DIR}/",
        "├── notes/",
        "│   └── today.md",
        "└── notes.md",
        "</external_projection>",
        "</memory>",
    )


def test_git_memory_internal_key_names_render_as_letta_does():
    # Letta keeps a tag's fields under "__value__" etc. in the same dict as its
    # children: this label turns the value of tag "a" into a dict, and prints its repr.
    memory = ref.Memory([Block("v", "system/a/__value__/b")], git_enabled=True)
    assert memory.compile().endswith(
        "<memory>\n<a>\n  <projection>$MEMORY_DIR/system/a.md</projection>\n"
        "  {'b': {'__value__': 'v', '__description__': '', '__label__': 'system/a/__value__/b'}}\n"
        "</a>\n</memory>"
    )


def test_memory_filesystem_block_part_is_the_directory_s_own_file():
    memory = ref.Memory([Block("", "a/__block__", "About a")])
    assert memory.render_memory_filesystem() == (
        "\n\n<memory_filesystem>\n├── a/\n└── a.md (About a)\n</memory_filesystem>"
    )


@pytest.mark.parametrize(
    ("labels", "error", "message"),
    [
        (["x", "x.md/y"], TypeError, "'NoneType' object does not support item assignment"),
        (["x", "x.md/y/z"], AttributeError, "'NoneType' object has no attribute 'setdefault'"),
    ],
)
def test_git_memory_file_in_the_way_raises_letta_s_error(labels, error, message):
    memory = ref.Memory([Block("s", "system/h")] + [Block("v", label) for label in labels], git_enabled=True)
    with pytest.raises(error) as raised:
        memory.compile()
    assert type(raised.value) is error and str(raised.value) == message


# --- <memory_filesystem> and <available_skills> ------------------------------------------


def test_memory_filesystem():
    memory = ref.Memory(GIT_BLOCKS + [Block("", "skills/cook/SKILL", "Cooks.\nMore")])
    assert memory.render_memory_filesystem() == lines(
        "",
        "",
        "<memory_filesystem>",
        "├── notes/",
        "│   └── today.md",
        "├── skills/",
        "│   └── cook (Cooks.)",
        "├── system/",
        "│   ├── projects/",
        "│   │   └── alpha.md",
        "│   ├── human.md",
        "│   └── persona.md",
        "└── notes.md",
        "</memory_filesystem>",
    )
    assert ref.Memory([]).render_memory_filesystem() == ""
    assert (
        ref.Memory([]).render_memory_filesystem([ClientSkill("x")]) == "\n\n<memory_filesystem>\n</memory_filesystem>"
    )


def test_available_skills():
    memory = ref.Memory([Block("", "skills/cook", "Cooks food.\nSecond line")])
    skills = [
        ClientSkill("lint", " Lints code. ", "/repo/.skills/lint/SKILL.md"),
        ClientSkill("fmt", None, "tools/fmt.md"),
    ]
    assert memory.compile_available_skills(skills) == lines(
        "",
        "",
        "<available_skills>",
        "${MEMORY_DIR}/skills",
        "└── cook/",
        "    └── SKILL.md (Cooks food.)",
        "",
        "/repo/.skills",
        "└── lint/",
        "    └── SKILL.md (Lints code.)",
        "",
        "tools",
        "└── fmt.md",
        "</available_skills>",
    )
    assert ref.Memory([]).compile_available_skills() == ""


# --- <directories> and <tool_usage_rules> ----------------------------------------------

FILES = [
    FileBlock("line 1", "docs/a.txt", "A file", 1000, source_id="src-1"),
    FileBlock("", "docs/b.txt", None, 1000, source_id="src-1"),
    FileBlock("dropped", "docs/a.txt", source_id="src-1"),
]
SOURCES = [Source("src-1", "docs", "Project docs", "Read me first"), Source(None, None)]


def test_directories():
    memory = ref.Memory([], FILES)
    assert [block.value for block in memory.file_blocks] == ["line 1", ""]
    assert memory.compile(sources=SOURCES, max_files_open=5) == lines(
        "",
        "",
        "<directories>",
        "<file_limits>",
        "- current_files_open=1",
        "- max_files_open=5",
        "</file_limits>",
        '<directory name="docs">',
        "<description>Project docs</description>",
        "<instructions>Read me first</instructions>",
        '<file status="open" name="docs/a.txt">',
        "<description>",
        "A file",
        "</description>",
        "<metadata>",
        "- chars_current=6",
        "- chars_limit=1000",
        "</metadata>",
        "<value>",
        "line 1",
        "</value>",
        "</file>",
        '<file status="closed" name="docs/b.txt">',
        "<metadata>",
        "- chars_current=0",
        "- chars_limit=1000",
        "</metadata>",
        "</file>",
        "</directory>",
        '<directory name="None">',
        "</directory>",
        "</directories>",
    )


def test_directories_react_form():
    memory = ref.Memory([], FILES[1:2], agent_type="react_agent")
    assert memory.compile(sources=SOURCES[:1]) == lines(
        "",
        "",
        "<directories>",
        '<directory name="docs">',
        "<description>Project docs</description>",
        "<instructions>Read me first</instructions>",
        '<file status="closed">',
        "<docs/b.txt>",
        "<description>",
        "",
        "</description>",
        "<metadata>",
        "- chars_current=0",
        "- chars_limit=1000",
        "</metadata>",
        "<value>",
        "",
        "</value>",
        "</docs/b.txt>",
        "</file>",
        "</directory>",
        "</directories>",
    )


def test_tool_usage_rules():
    rules = ToolUsageRules("Rules:", "- call send_message last")
    assert ref.Memory([]).compile(tool_usage_rules=rules) == (
        "\n\n<tool_usage_rules>\nRules:\n\n- call send_message last\n</tool_usage_rules>"
    )


# --- <memory_metadata>, the system message, safe_format ------------------------------


def test_metadata_block():
    block = ref.compile_memory_metadata_block(
        dt.datetime(2024, 1, 15, 17, tzinfo=UTC),
        "America/Los_Angeles",
        "agent-1",
        previous_message_count=42,
        archival_memory_size=156,
        archive_tags=["x", "y"],
    )
    assert block == lines(
        "<memory_metadata>",
        "- AGENT_ID: agent-1",
        "- CONVERSATION_ID: default",
        "- System prompt last recompiled: 2024-01-15 09:00:00 AM PST-0800",
        "- 42 previous messages between you and the user are stored in recall memory",
        "- 156 total memories you created are stored in archival memory (use tools to access them)",
        "- Available archival memory tags: x, y",
        "</memory_metadata>",
    )


def test_metadata_timestamps_follow_pytz():
    def stamp(when, zone):
        block = ref.compile_memory_metadata_block(when, zone, "a")
        return block.split("recompiled: ")[1].split("\n")[0]

    # A naive datetime without a timezone leaves %Z empty: a trailing space.
    assert stamp(dt.datetime(2050, 7, 1, 12), None) == "2050-07-01 12:00:00 PM "
    # pytz applies no daylight saving after 2037.
    assert stamp(dt.datetime(2050, 7, 1, 12, tzinfo=UTC), "America/New_York") == "2050-07-01 07:00:00 AM EST-0500"
    assert stamp(dt.datetime(1800, 1, 1, tzinfo=UTC), "America/New_York") == "1799-12-31 07:04:00 PM LMT-0456"
    with pytest.raises(pytz.exceptions.UnknownTimeZoneError):
        stamp(dt.datetime(2024, 1, 1, tzinfo=UTC), "Mars/Olympus")


def test_system_message_replaces_every_placeholder():
    message = ref.get_system_message_from_compiled_memory(
        "Hi.\n{CORE_MEMORY}\nBye {CORE_MEMORY}", "MEM", "agent-1", dt.datetime(2024, 1, 1, tzinfo=UTC), "UTC"
    )
    metadata = lines(
        "<memory_metadata>",
        "- AGENT_ID: agent-1",
        "- CONVERSATION_ID: default",
        "- System prompt last recompiled: 2024-01-01 12:00:00 AM UTC+0000",
        "- 0 previous messages between you and the user are stored in recall memory",
        "</memory_metadata>",
    )
    assert message == f"Hi.\nMEM\n\n{metadata}\nBye MEM\n\n{metadata}"


def test_system_message_appends_a_missing_placeholder():
    message = ref.get_system_message_from_compiled_memory(
        "Hi.", "MEM", "agent-1", dt.datetime(2024, 1, 1, tzinfo=UTC), None, conversation_id="conv-1"
    )
    assert message.startswith("Hi.\n\nMEM\n\n<memory_metadata>\n- AGENT_ID: agent-1\n- CONVERSATION_ID: conv-1\n")
    when = dt.datetime(2024, 1, 1, tzinfo=UTC)
    assert (
        ref.get_system_message_from_compiled_memory("Hi.", "M", "a", when, None, append_icm_if_missing=False) == "Hi."
    )


def test_system_message_errors_in_letta_order():
    when = dt.datetime(2024, 1, 1, tzinfo=UTC)
    with pytest.raises(NotImplementedError):
        ref.get_system_message_from_compiled_memory("x", "m", "a", when, "Mars/Olympus", user_defined_variables={})
    with pytest.raises(pytz.exceptions.UnknownTimeZoneError):
        ref.get_system_message_from_compiled_memory("x", "m", "a", when, "Mars/Olympus", template_format="mustache")
    with pytest.raises(NotImplementedError, match="mustache"):
        ref.get_system_message_from_compiled_memory(None, "m", "a", when, "UTC", template_format="mustache")
    with pytest.raises(TypeError, match="system_prompt must be str, not NoneType"):
        ref.get_system_message_from_compiled_memory(None, "m", "a", when, "UTC")


def test_safe_format_keeps_unknown_fields():
    assert ref.safe_format("{a} {} {b} {CORE_MEMORY:>3}", {"a": 1}) == "1 {} {b} {CORE_MEMORY}"


# --- fingerprint and the input contract ------------------------------------------------


def test_fingerprint_is_xxh3_128_of_utf8_with_surrogates():
    assert ref.fingerprint("") == 0x99AA06D3014798D86001C324468D497F
    assert ref.fingerprint("\ud800") != ref.fingerprint("\udfff")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: ref.Memory([Block(5, "h")]).compile(), TypeError, "block 0 ('h'): value must be str or None, not int"),
        (
            lambda: ref.Memory([Block("", 1.5)]).compile(),
            TypeError,
            "block 0 (None): label must be str or None, not float",
        ),
        (
            lambda: ref.Memory([Block("", "h", limit="9")]).compile(),
            TypeError,
            "block 0 ('h'): limit must be int or None",
        ),
        (lambda: ref.Memory([], [FileBlock("", ["x"])]), TypeError, "file block 0 (None): label must be str or None"),
        (
            lambda: ref.Memory([], [FileBlock("", "f", source_id=3)]).compile(sources=[Source("s", "n")]),
            TypeError,
            "file block 0 ('f'): source_id must be str or None, not int",
        ),
        (lambda: ref.Memory([]).compile(sources=[Source(7, "n")]), TypeError, "source 0 ('n'): id must be str or None"),
        (lambda: ref.Memory([]).compile(sources=[Source("s", "n")], max_files_open="3"), TypeError, "max_files_open"),
        (
            lambda: ref.Memory([]).compile_available_skills([ClientSkill(None)]),
            TypeError,
            "client skill 0: name must be str",
        ),
        (
            lambda: ref.Memory([], agent_type=3).compile(),
            TypeError,
            "agent_type must be a str, an enum with a str value",
        ),
        (
            lambda: ref.Memory([]).compile(tool_usage_rules=ToolUsageRules(1, "")),
            TypeError,
            "tool_usage_rules: description",
        ),
        (
            lambda: ref.compile_memory_metadata_block("2024", None, "a"),
            TypeError,
            "memory_edit_timestamp must be a datetime",
        ),
        (lambda: ref.compile_memory_metadata_block(dt.datetime(2024, 1, 1), 5, "a"), TypeError, "timezone must be str"),
    ],
)
def test_input_contract(call, error, message):
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value).startswith(message)


def test_memory_helpers():
    human, persona = Block("h", "human"), Block("p", "persona")
    memory = ref.Memory([human, persona])
    assert memory.list_block_labels() == ["human", "persona"]
    assert memory.get_block("persona") is persona
    with pytest.raises(KeyError, match="Block field x does not exist \\(available sections = human, persona\\)"):
        memory.get_block("x")
    memory.update_block_value("human", "new")
    assert human.value == "new"
    with pytest.raises(ValueError):
        memory.update_block_value("human", 5)
    replacement = Block("r", "human")
    memory.set_block(replacement)
    assert memory.get_blocks() == [replacement, persona]
