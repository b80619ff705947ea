"""Bad input gets a clear error and nothing else (README, Guarantees).

Table-driven over every field of every input type and every entry point that reads
it. For each bad value the Rust core must raise the exception type of the validation
contract (``memprompt/reference/fields.py``: Letta's own type where Letta raises,
TypeError where Letta would render garbage), with a message that names the field and,
for blocks, the block's index and label; the pure-Python reference must raise the
very same type and message. Inputs that Letta accepts although they look wrong (a
source without an id, a bad block in a react agent, which Letta never reads) must
render as Letta renders them.
"""

from __future__ import annotations

import datetime as dt
import enum
from decimal import Decimal

import pytest
import pytz
from hypothesis import given
from hypothesis import strategies as st
from outcome import assert_same
from strategies import texts

import memprompt as mp
from memprompt import reference as ref
from memprompt.reference import tool_rules as ref_rules
from memprompt.types import Block, ClientSkill, FileBlock, LLMConfig, Source, ToolUsageRules

NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
ANTHROPIC = LLMConfig("anthropic")
SOURCE = Source("source-1", "docs")


class Thing:
    """An arbitrary object: renders as its repr, is no str and no int."""

    def __repr__(self) -> str:
        return "Thing()"


class Color(enum.Enum):
    RED = 1


#: Values that are not text, each with the type name the message must give.
NOT_TEXT = [
    pytest.param(5, "int", id="int"),
    pytest.param(True, "bool", id="bool"),
    pytest.param(1.5, "float", id="float"),
    pytest.param(b"bytes", "bytes", id="bytes"),
    pytest.param(bytearray(b"x"), "bytearray", id="bytearray"),
    pytest.param(["a list"], "list", id="list"),
    pytest.param(("a", "tuple"), "tuple", id="tuple"),
    pytest.param({"a": "dict"}, "dict", id="dict"),
    pytest.param(Thing(), "Thing", id="object"),
    pytest.param(Color.RED, "Color", id="enum"),
]
#: Values that are not ints (None and bool are fine for a limit).
NOT_INT = [
    pytest.param("100", "str", id="str"),
    pytest.param(1.0, "float", id="float"),
    pytest.param(Decimal(3), "Decimal", id="Decimal"),
    pytest.param(b"1", "bytes", id="bytes"),
    pytest.param([1], "list", id="list"),
    pytest.param(Thing(), "Thing", id="object"),
]


def raised(call) -> BaseException:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the test inspects it
        return error
    raise AssertionError("no exception raised")


def assert_error(call_rust, call_reference, expected_type, message):
    """Both raise exactly ``expected_type`` with exactly ``message``."""
    rust, reference = raised(call_rust), raised(call_reference)
    assert type(rust) is expected_type, (type(rust), rust)
    assert str(rust) == message
    assert type(reference) is expected_type and str(reference) == message, (type(reference), reference)


# --- blocks: every field, every view that reads blocks ---------------------------------------

#: Every public entry point that reads a memory's blocks: (Memory kwargs, call).
BLOCK_READERS = {
    "compile": ({}, lambda m: m.compile()),
    "compile with line numbers": ({"agent_type": "letta_v1_agent"}, lambda m: m.compile(llm_config=ANTHROPIC)),
    "compile git memory": ({"git_enabled": True}, lambda m: m.compile()),
    "compile with rules and sources": ({}, lambda m: m.compile(ToolUsageRules("d", "v"), [SOURCE], 3)),
    "compile_with_fingerprint": ({}, lambda m: m.compile_with_fingerprint()),
    "compile_available_skills": ({}, lambda m: m.compile_available_skills([ClientSkill("s")])),
    "render_memory_filesystem": ({}, lambda m: m.render_memory_filesystem()),
}


#: The readers of a ``system/`` block's description and value: the skills listing reads only
#: labels and skill descriptions, the tree view labels and the descriptions it shows, none of
#: them below ``system/`` (as Letta).
FIELD_READERS = {
    name: reader
    for name, reader in BLOCK_READERS.items()
    if name not in ("compile_available_skills", "render_memory_filesystem")
}
#: The readers of a block's limit: git memory never reads one (as Letta).
LIMIT_READERS = {name: reader for name, reader in FIELD_READERS.items() if name != "compile git memory"}


def bad_blocks(field, value, block_type=Block):
    """A good block, then a block whose ``field`` is ``value``, then another good one."""
    bad = block_type("text", "system/human", "about them", 500)
    setattr(bad, field, value)
    return [block_type("I am X.", "system/persona"), bad, block_type("more", "notes")]


def block_message(kind, index, label, field, expected, type_name):
    return f"{kind} {index} ({label!r}): {field} must be {expected}, not {type_name}"


@pytest.mark.parametrize(
    ("reader", "field"),
    [(reader, "label") for reader in sorted(BLOCK_READERS)]
    + [(reader, field) for reader in sorted(FIELD_READERS) for field in ("description", "value")],
)
@pytest.mark.parametrize(("value", "type_name"), NOT_TEXT)
def test_block_text_fields(reader, field, value, type_name):
    kwargs, call = BLOCK_READERS[reader]
    blocks = bad_blocks(field, value)
    label = None if field == "label" else "system/human"
    assert_error(
        lambda: call(mp.Memory(blocks, **kwargs)),
        lambda: call(ref.Memory(blocks, **kwargs)),
        TypeError,
        block_message("block", 1, label, field, "str or None", type_name),
    )


@pytest.mark.parametrize("reader", sorted(LIMIT_READERS))
@pytest.mark.parametrize(("value", "type_name"), NOT_INT)
def test_block_limit(reader, value, type_name):
    kwargs, call = LIMIT_READERS[reader]
    blocks = bad_blocks("limit", value)
    assert_error(
        lambda: call(mp.Memory(blocks, **kwargs)),
        lambda: call(ref.Memory(blocks, **kwargs)),
        TypeError,
        block_message("block", 1, "system/human", "limit", "int or None", type_name),
    )


@pytest.mark.parametrize(("field", "value"), [("value", 5), ("description", 5), ("limit", "100")])
def test_available_skills_read_no_field_letta_does_not(field, value):
    """Letta's listing reads every label but a description only of the first block of each skill."""
    blocks = bad_blocks(field, value) + [Block("v", "skills/x", "first"), Block(5, "skills/x", 7, "10")]
    skills = [ClientSkill("s")]
    expected = ref.Memory(blocks).compile_available_skills(skills)
    assert mp.Memory(blocks).compile_available_skills(skills) == expected
    assert "└── x/\n    └── SKILL.md (first)\n" in expected


class LabelOnly:
    """A block with a label and no other attribute."""

    def __init__(self, label: str) -> None:
        self.label = label


@pytest.mark.parametrize(
    ("field", "value"), [("value", 5), ("limit", "100"), ("description", 5), ("description", Thing())]
)
def test_tree_view_reads_no_field_letta_does_not(field, value):
    """Letta's tree view reads every label, and a description only where it shows one: not
    below a ``system`` directory, not of a block a later one of the same label replaced."""
    blocks = bad_blocks(field, value) + [Block(5, "notes/x", Thing(), "1"), Block("v", "notes/x", "shown")]
    expected = ref.Memory(blocks).render_memory_filesystem()
    assert mp.Memory(blocks).render_memory_filesystem() == expected
    assert "│   ├── human.md\n" in expected and "│   └── x.md (shown)\n" in expected


class Described:
    """A block whose description is a property that counts its reads."""

    reads = 0

    def __init__(self, label: str) -> None:
        self.label = label

    @property
    def description(self) -> str:
        Described.reads += 1
        return "read"


def test_tree_view_reads_a_shown_description_once_and_no_other():
    """``getattr(block, "description", None)``, once a shown block: a block without the
    attribute shows none, and neither implementation reads another block's."""
    blocks = [Described("system/a"), Described("notes/b"), Described("skills/c"), LabelOnly("notes/d")]
    for memory in (mp.Memory(blocks), ref.Memory(blocks)):
        Described.reads = 0
        text = memory.render_memory_filesystem()
        assert Described.reads == 2
        assert "│   ├── b.md (read)\n│   └── d.md\n" in text and "└── c (read)\n" in text


@pytest.mark.parametrize(("value", "type_name"), NOT_TEXT)
def test_tree_view_checks_the_descriptions_it_shows(value, type_name):
    """The first bad description shown, in list order, raises; one below ``system/`` does not."""
    blocks = bad_blocks("description", value) + [Block("v", "notes/y", value), Block("v", "notes/x", value)]
    assert_error(
        lambda: mp.Memory(blocks).render_memory_filesystem(),
        lambda: ref.Memory(blocks).render_memory_filesystem(),
        TypeError,
        block_message("block", 3, "notes/y", "description", "str or None", type_name),
    )


@pytest.mark.parametrize("bad", [Thing(), 5, b"x"], ids=["object", "int", "bytes"])
def test_git_memory_reads_no_field_letta_does_not(bad):
    """Letta's git memory reads every label, the first persona's value, and the description and
    value of the other ``system/`` blocks with a path part: nothing else, not even a limit."""
    blocks = [
        Block("I am X.", "system/persona", bad, bad),
        Block("text", "system/human", "about them", bad),
        Block(bad, "system/persona", bad, bad),
        Block(bad, "system/", bad, bad),
        Block(bad, "system//", bad, bad),
        Block(bad, "notes/a", bad, bad),
        Block(bad, "skills/x", bad, bad),
        LabelOnly("notes/b"),
        LabelOnly("skills/y/SKILL"),
    ]
    for block in blocks:
        if isinstance(block, Block):
            block.read_only = bad
    for call in (lambda m: m.compile(), lambda m: m.compile_with_fingerprint()):
        expected = call(ref.Memory(blocks, git_enabled=True))
        assert call(mp.Memory(blocks, git_enabled=True)) == expected
    text = expected.text
    assert "<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am X.\n</self>" in text
    assert (
        "<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n  <description>about them</description>\n  text\n</human>\n"
        in text
    )
    assert "└── notes/\n    ├── a.md\n    └── b.md\n" in text


@pytest.mark.parametrize(
    ("index", "label", "field"),
    [(0, "system/persona", "value"), (1, "system/a/b", "description"), (1, "system/a/b", "value")],
)
def test_git_memory_checks_what_it_reads(index, label, field):
    blocks = [Block("v", "system/persona"), Block("v", "system/a/b", "d")]
    setattr(blocks[index], field, 5)
    blocks[index].label = label
    assert_error(
        lambda: mp.Memory(blocks, git_enabled=True).compile(),
        lambda: ref.Memory(blocks, git_enabled=True).compile(),
        TypeError,
        block_message("block", index, label, field, "str or None", "int"),
    )


@pytest.mark.parametrize(("value", "type_name"), NOT_TEXT)
def test_available_skills_check_a_skill_description(value, type_name):
    blocks = [Block("v", "notes"), Block("v", "skills/x/SKILL", value)]
    assert_error(
        lambda: mp.Memory(blocks).compile_available_skills(),
        lambda: ref.Memory(blocks).compile_available_skills(),
        TypeError,
        block_message("block", 1, "skills/x/SKILL", "description", "str or None", type_name),
    )


def test_a_skill_under_a_skill_file_fails_with_letta_s_error():
    """Letta's skill tree crashes on a skill whose folder is another skill's file: Python's own error, from both sides."""
    skills = [
        ClientSkill("x-file", location="${MEMORY_DIR}/skills/x"),
        ClientSkill("x", location="${MEMORY_DIR}/skills/x/SKILL.md"),
    ]
    assert_error(
        lambda: mp.Memory([]).compile_available_skills(skills),
        lambda: ref.Memory([]).compile_available_skills(skills),
        TypeError,
        "'str' object does not support item assignment",
    )


@pytest.mark.parametrize(("value", "type_name"), NOT_TEXT[:4])
def test_compile_many_names_the_block(value, type_name):
    memories = [mp.Memory([Block("ok", "human")]), mp.Memory(bad_blocks("value", value))]
    error = raised(lambda: mp.compile_many(memories))
    assert type(error) is TypeError
    assert str(error) == block_message("block", 1, "system/human", "value", "str or None", type_name)


def test_the_first_bad_block_in_list_order_is_named():
    blocks = [Block("ok", "a"), Block(5, "b"), Block(b"x", "c")]
    assert_error(
        lambda: mp.Memory(blocks).compile(),
        lambda: ref.Memory(blocks).compile(),
        TypeError,
        block_message("block", 1, "b", "value", "str or None", "int"),
    )


@pytest.mark.parametrize("field", ["label", "value", "description", "limit"])
def test_a_missing_attribute_is_letta_s_attribute_error(field):
    class Partial:
        pass

    block = Partial()
    for name in {"label", "value", "description", "limit"} - {field}:
        setattr(block, name, None)
    assert_error(
        lambda: mp.Memory([block]).compile(),
        lambda: ref.Memory([block]).compile(),
        AttributeError,
        f"'Partial' object has no attribute '{field}'",
    )


def test_bool_limit_and_subclasses_are_accepted_as_letta_renders_them():
    class Text(str):
        pass

    class Count(int):
        pass

    blocks = [Block(Text("v"), Text("human"), Text("d"), Count(7)), Block("w", "persona", None, True)]
    text = mp.Memory(blocks).compile()
    assert text == ref.Memory(blocks).compile()
    assert "- chars_limit=7\n" in text and "- chars_limit=True\n" in text


@pytest.mark.parametrize(
    ("labels", "expected_type", "message"),
    [
        (["x", "x.md/y"], TypeError, "'NoneType' object does not support item assignment"),
        (["notes/x", "notes/x.md/y/z"], AttributeError, "'NoneType' object has no attribute 'setdefault'"),
        (["a.md/b/c", "a"], AttributeError, "'NoneType' object has no attribute 'setdefault'"),
    ],
    ids=["file under a file", "folder under a file", "file sorted first"],
)
def test_git_memory_through_a_file_fails_with_letta_s_error(labels, expected_type, message):
    """Letta's external projection crashes on a path through a file: Python's own error, from both sides."""
    blocks = [Block("s", "system/h")] + [Block("v", label) for label in labels]
    assert_error(
        lambda: mp.Memory(blocks, git_enabled=True).compile(),
        lambda: ref.Memory(blocks, git_enabled=True).compile(),
        expected_type,
        message,
    )
    assert_error(
        lambda: mp.Memory(blocks, git_enabled=True).compile_with_fingerprint(),
        lambda: ref.Memory(blocks, git_enabled=True).compile_with_fingerprint(),
        expected_type,
        message,
    )


# --- what Letta never reads is no error ----------------------------------------------------------


@pytest.mark.parametrize("agent_type", ["react_agent", "WORKFLOW_AGENT"])
@pytest.mark.parametrize("field", ["label", "value", "description", "limit"])
def test_react_agents_never_read_their_blocks(agent_type, field):
    """Letta renders no memory blocks for react and workflow agents, so a bad one is no error."""
    blocks = bad_blocks(field, Thing())
    kwargs = {"tool_usage_rules": ToolUsageRules("d", "v"), "sources": [SOURCE], "max_files_open": 2}
    text = mp.Memory(blocks, agent_type=agent_type).compile(**kwargs)
    assert text == ref.Memory(blocks, agent_type=agent_type).compile(**kwargs)
    assert text.startswith("\n\n<tool_usage_rules>\n") and "<memory_blocks>" not in text


@pytest.mark.parametrize(("value", "type_name"), NOT_INT)
def test_max_files_open_is_read_only_when_directories_render(value, type_name):
    assert mp.Memory([Block("v", "human")]).compile(max_files_open=value) == ref.Memory([Block("v", "human")]).compile()
    assert_error(
        lambda: mp.Memory([]).compile(sources=[SOURCE], max_files_open=value),
        lambda: ref.Memory([]).compile(sources=[SOURCE], max_files_open=value),
        TypeError,
        f"max_files_open must be int or None, not {type_name}",
    )


def test_file_blocks_are_read_only_when_sources_are_attached():
    files = [FileBlock(Thing(), "f.txt", source_id="source-1")]
    assert mp.Memory([], file_blocks=files).compile() == ""
    assert_error(
        lambda: mp.Memory([], file_blocks=files).compile(sources=[SOURCE]),
        lambda: ref.Memory([], file_blocks=files).compile(sources=[SOURCE]),
        TypeError,
        "file block 0 ('f.txt'): value must be str or None, not Thing",
    )


def test_client_skills_are_not_read_by_compile_or_the_filesystem():
    skills = [ClientSkill(5, Thing(), b"x")]
    memory = mp.Memory([Block("v", "human")])
    assert memory.compile(client_skills=skills) == ref.Memory([Block("v", "human")]).compile()
    assert memory.render_memory_filesystem(skills) == ref.Memory([Block("v", "human")]).render_memory_filesystem(skills)


# --- file blocks --------------------------------------------------------------------------------


def bad_file_blocks(field, value):
    """File blocks of an attached source, the second with ``field`` set to ``value``."""
    files = bad_blocks(field, value, FileBlock)
    for f in files:
        if f.source_id is None:
            f.source_id = "source-1"
    return files


@pytest.mark.parametrize("field", ["value", "description", "source_id"])
@pytest.mark.parametrize(("value", "type_name"), NOT_TEXT)
@pytest.mark.parametrize("agent_type", [None, "react_agent"])
def test_file_block_text_fields(field, value, type_name, agent_type):
    files = bad_file_blocks(field, value)
    assert_error(
        lambda: mp.Memory([], files, agent_type=agent_type).compile(sources=[SOURCE]),
        lambda: ref.Memory([], files, agent_type=agent_type).compile(sources=[SOURCE]),
        TypeError,
        block_message("file block", 1, "system/human", field, "str or None", type_name),
    )


@pytest.mark.parametrize(("value", "type_name"), NOT_TEXT)
def test_file_block_label_checked_by_the_constructor_and_the_setter(value, type_name):
    files = bad_blocks("label", value, FileBlock)
    message = block_message("file block", 1, None, "label", "str or None", type_name)
    assert_error(lambda: mp.Memory([], files), lambda: ref.Memory([], files), TypeError, message)
    memory = mp.Memory([])
    with pytest.raises(TypeError) as error:
        memory.file_blocks = files
    assert str(error.value) == message
    assert memory.file_blocks == []


@pytest.mark.parametrize(("value", "type_name"), NOT_INT)
def test_file_block_limit(value, type_name):
    files = bad_file_blocks("limit", value)
    assert_error(
        lambda: mp.Memory([], files).compile(sources=[SOURCE]),
        lambda: ref.Memory([], files).compile(sources=[SOURCE]),
        TypeError,
        block_message("file block", 1, "system/human", "limit", "int or None", type_name),
    )


@pytest.mark.parametrize("counting", [False, True], ids=["", "max_files_open"])
@pytest.mark.parametrize("agent_type", [None, "react_agent"])
def test_directories_read_no_field_of_a_file_block_letta_does_not(counting, agent_type):
    """Letta's directories read a file block's source_id only while a source has an id, the
    rest of it only when that id is a listed source's, and else its value alone when they
    count the open files: a file block of no listed source renders as in Letta."""
    stray = FileBlock("open", "stray.txt", Thing(), Thing(), Thing(), "source-2")
    files = [FileBlock("page", "a.txt", source_id="source-1"), stray]
    limit = {"max_files_open": 5} if counting else {}
    for sources in ([SOURCE], [Source(None, "docs")]):
        text = mp.Memory([], files, agent_type=agent_type).compile(sources=sources, **limit)
        assert text == ref.Memory([], files, agent_type=agent_type).compile(sources=sources, **limit)
        assert "stray" not in text and ("current_files_open=2\n" in text) == counting
        # No source with an id: no file block's source_id is read.
        stray.source_id = Thing()


@pytest.mark.parametrize(("value", "type_name"), NOT_TEXT)
def test_a_value_counted_as_open_is_checked_though_its_file_block_is_in_no_source(value, type_name):
    files = [FileBlock(value, "x.txt", source_id="source-2")]
    assert_error(
        lambda: mp.Memory([], files).compile(sources=[SOURCE], max_files_open=3),
        lambda: ref.Memory([], files).compile(sources=[SOURCE], max_files_open=3),
        TypeError,
        block_message("file block", 0, "x.txt", "value", "str or None", type_name),
    )
    assert mp.Memory([], files).compile(sources=[SOURCE]) == ref.Memory([], files).compile(sources=[SOURCE])


# --- sources ---------------------------------------------------------------------------------


class BareSource:
    def __init__(self, **fields):
        self.__dict__.update(fields)


@pytest.mark.parametrize(("value", "type_name"), NOT_TEXT)
def test_source_id(value, type_name):
    sources = [SOURCE, Source(value, "manuals")]
    assert_error(
        lambda: mp.Memory([]).compile(sources=sources),
        lambda: ref.Memory([]).compile(sources=sources),
        TypeError,
        f"source 1 ('manuals'): id must be str or None, not {type_name}",
    )


@pytest.mark.parametrize(
    "source",
    [Source(None, "docs"), BareSource(name="docs"), BareSource(name="docs", id=None, description="")],
    ids=["id None", "no id attribute", "id None, empty description"],
)
@pytest.mark.parametrize("agent_type", [None, "react_agent"])
def test_a_source_without_an_id_is_legal_and_matches_no_file(source, agent_type):
    """Letta lists a source's files only when its id is not None: not even the files whose source_id is None."""
    files = [FileBlock("page", "orphan.txt", source_id=None), FileBlock("page", "a.txt", source_id="source-1")]
    memory = mp.Memory([], files, agent_type=agent_type)
    text = memory.compile(sources=[source])
    assert text == ref.Memory([], files, agent_type=agent_type).compile(sources=[source])
    assert text == '\n\n<directories>\n<directory name="docs">\n</directory>\n</directories>'
    # With max_files_open, every open file block still counts, as in Letta.
    limited = memory.compile(sources=[source], max_files_open=5)
    assert "<file_limits>\n- current_files_open=2\n- max_files_open=5\n</file_limits>\n" in limited


@pytest.mark.parametrize("value", [5, None, Thing(), b"raw", ["x"]], ids=["int", "None", "object", "bytes", "list"])
def test_source_name_description_instructions_render_as_f_strings(value):
    """Letta writes them with f-strings, so any object renders (as str() would)."""
    sources = [Source("source-1", value, value, value)]
    assert mp.Memory([]).compile(sources=sources) == ref.Memory([]).compile(sources=sources)


# --- client skills, tool usage rules, agent type -----------------------------------------------------


@pytest.mark.parametrize(
    ("field", "expected"), [("name", "str"), ("description", "str or None"), ("location", "str or None")]
)
@pytest.mark.parametrize(("value", "type_name"), NOT_TEXT)
def test_client_skill_fields(field, expected, value, type_name):
    bad = ClientSkill("x", "does x", "/skills/x/SKILL.md")
    setattr(bad, field, value)
    skills = [ClientSkill("y"), bad]
    assert_error(
        lambda: mp.Memory([]).compile_available_skills(skills),
        lambda: ref.Memory([]).compile_available_skills(skills),
        TypeError,
        f"client skill 1: {field} must be {expected}, not {type_name}",
    )


@pytest.mark.parametrize("field", ["description", "value"])
@pytest.mark.parametrize(("value", "type_name"), NOT_TEXT)
def test_tool_usage_rules_fields(field, value, type_name):
    rules = ToolUsageRules("desc", "value")
    setattr(rules, field, value)
    assert_error(
        lambda: mp.Memory([]).compile(tool_usage_rules=rules),
        lambda: ref.Memory([]).compile(tool_usage_rules=rules),
        TypeError,
        f"tool_usage_rules: {field} must be str or None, not {type_name}",
    )


class IntAgentType(enum.Enum):
    ONE = 1


@pytest.mark.parametrize(
    ("agent_type", "type_name"),
    [(5, "int"), (b"react_agent", "bytes"), (["x"], "list"), (IntAgentType.ONE, "IntAgentType"), (Thing(), "Thing")],
    ids=["int", "bytes", "list", "enum of int", "object"],
)
def test_agent_type(agent_type, type_name):
    assert_error(
        lambda: mp.Memory([], agent_type=agent_type).compile(),
        lambda: ref.Memory([], agent_type=agent_type).compile(),
        TypeError,
        f"agent_type must be a str, an enum with a str value, or None, not {type_name}",
    )


@pytest.mark.parametrize(
    "agent_type", [0, False, "", b"", [], 0.0], ids=["0", "False", "empty str", "empty bytes", "[]", "0.0"]
)
def test_a_falsy_agent_type_is_no_agent_type(agent_type):
    """Letta reads ``agent_type.value if hasattr(agent_type, "value") else (agent_type or "")``."""
    blocks = [Block("v", "human")]
    assert (
        mp.Memory(blocks, agent_type=agent_type).compile()
        == mp.Memory(blocks).compile()
        == ref.Memory(blocks).compile()
    )


class EndpointlessConfig:
    pass


class ExplodingEndpoint:
    @property
    def model_endpoint_type(self):
        raise RuntimeError("no endpoint")


@pytest.mark.parametrize(
    "llm_config",
    [
        None,
        LLMConfig(None),
        LLMConfig(5),
        LLMConfig(b"anthropic"),
        LLMConfig("Anthropic"),
        EndpointlessConfig(),
        0,
        "anthropic",
    ],
    ids=["None", "endpoint None", "endpoint int", "endpoint bytes", "wrong case", "no endpoint", "falsy", "a str"],
)
def test_llm_config_is_only_compared_with_anthropic(llm_config):
    """Letta tests ``llm_config and hasattr(llm_config, "model_endpoint_type") and ... == "anthropic"``: never an error."""
    kwargs = {"blocks": [Block("a\nb", "human")], "agent_type": "letta_v1_agent"}
    text = mp.Memory(**kwargs).compile(llm_config=llm_config)
    assert text == ref.Memory(**kwargs).compile(llm_config=llm_config) == ref.Memory(**kwargs).compile()


def test_an_llm_config_that_raises_raises_its_own_error():
    with pytest.raises(RuntimeError, match="no endpoint"):
        mp.Memory([Block("v", "human")]).compile(llm_config=ExplodingEndpoint())
    with pytest.raises(RuntimeError, match="no endpoint"):
        ref.Memory([Block("v", "human")]).compile(llm_config=ExplodingEndpoint())


# --- tool rules (Letta validates them with pydantic: ValueError) -------------------------------------


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ([{"tool_name": "a"}], "tool rule 0: has no 'type'"),
        ([{"type": "no_such_rule", "tool_name": "a"}], "tool rule 0: unknown type 'no_such_rule'"),
        ([{"type": "exit_loop"}], "tool rule 0 (exit_loop): missing field 'tool_name'"),
        ([{"type": "exit_loop", "tool_name": "a", "extra": 1}], "tool rule 0 (exit_loop): unexpected field 'extra'"),
        (
            [{"type": "exit_loop", "tool_name": "a"}, 5],
            "tool rule 1: must be a mapping or an object with attributes, not int",
        ),
    ],
    ids=["no type", "unknown type", "missing tool_name", "unknown field", "not a rule"],
)
def test_tool_rules(rules, message):
    assert_error(
        lambda: mp.compile_tool_rule_prompts(rules),
        lambda: ref_rules.compile_tool_rule_prompts(rules),
        type(raised(lambda: ref_rules.compile_tool_rule_prompts(rules))),
        message,
    )
    assert isinstance(raised(lambda: mp.compile_tool_rule_prompts(rules)), ValueError)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            {"type": "max_count_per_step", "tool_name": "a", "max_count_limit": "many"},
            "max_count_limit: cannot read 'many' as an integer",
        ),
        ({"type": "constrain_child_tools", "tool_name": "a", "children": "b"}, "children: must be a list, not str"),
        ({"type": "exit_loop", "tool_name": ["a"]}, "tool_name: must be a str, not list"),
        (
            {"type": "conditional", "tool_name": "a", "child_output_mapping": 5},
            "child_output_mapping: must be a dict, not int",
        ),
    ],
    ids=["limit not an int", "children not a list", "tool_name a list", "mapping not a dict"],
)
def test_tool_rule_fields_are_value_errors_naming_the_rule(rule, message):
    rules = [{"type": "exit_loop", "tool_name": "ok"}, rule]
    assert_error(
        lambda: mp.compile_tool_rule_prompts(rules),
        lambda: ref_rules.compile_tool_rule_prompts(rules),
        ref_rules.InvalidRule,
        f"tool rule 1 ({rule['type']}): {message}",
    )
    assert issubclass(ref_rules.InvalidRule, ValueError)  # what Letta's pydantic raises: a ValidationError


# --- metadata and the system message ---------------------------------------------------------------


class Stamp(dt.datetime):
    """A datetime subclass is a datetime: it renders through its own methods."""


@pytest.mark.parametrize(
    ("when", "type_name"),
    [
        ("2026-01-01 00:00:00", "str"),
        (dt.date(2026, 1, 1), "date"),
        (dt.time(12, 0), "time"),
        (1767225600, "int"),
        (1767225600.0, "float"),
        (None, "NoneType"),
    ],
    ids=["str", "date", "time", "int", "float", "None"],
)
@pytest.mark.parametrize("timezone", [None, "UTC", "America/New_York"])
def test_a_datetime_that_is_not_one(when, type_name, timezone):
    message = f"memory_edit_timestamp must be a datetime, not {type_name}"
    assert_error(
        lambda: mp.compile_memory_metadata_block(when, timezone, "agent-1"),
        lambda: ref.compile_memory_metadata_block(when, timezone, "agent-1"),
        TypeError,
        message,
    )
    assert_error(
        lambda: mp.get_system_message_from_compiled_memory("S", "M", "agent-1", when, timezone),
        lambda: ref.get_system_message_from_compiled_memory("S", "M", "agent-1", when, timezone),
        TypeError,
        message,
    )


@pytest.mark.parametrize(
    "timezone", ["Mars/Olympus", "UTC ", " UTC", "America/New York", "\ud800", "UTC\x00", "x" * 10_000]
)
def test_a_timezone_that_does_not_exist_is_pytz_s_error(timezone):
    message = str(raised(lambda: pytz.timezone(timezone)))
    assert_error(
        lambda: mp.compile_memory_metadata_block(NOW, timezone, "agent-1"),
        lambda: ref.compile_memory_metadata_block(NOW, timezone, "agent-1"),
        pytz.exceptions.UnknownTimeZoneError,
        message,
    )
    assert_error(
        lambda: mp.get_system_message_from_compiled_memory("S", "M", "agent-1", NOW, timezone),
        lambda: ref.get_system_message_from_compiled_memory("S", "M", "agent-1", NOW, timezone),
        pytz.exceptions.UnknownTimeZoneError,
        message,
    )
    # The message it raised with leaves nothing behind: the next valid call works.
    assert "UTC+0000" in mp.compile_memory_metadata_block(NOW, "UTC", "agent-1")


@pytest.mark.parametrize(("timezone", "type_name"), [(5, "int"), (["UTC"], "list"), (Thing(), "Thing")])
def test_a_timezone_that_is_not_a_str(timezone, type_name):
    assert_error(
        lambda: mp.compile_memory_metadata_block(NOW, timezone, "agent-1"),
        lambda: ref.compile_memory_metadata_block(NOW, timezone, "agent-1"),
        TypeError,
        f"timezone must be str or None, not {type_name}",
    )


@pytest.mark.parametrize(("size", "type_name"), [("12", "str"), (1.5, "float"), (b"1", "bytes"), (Thing(), "Thing")])
def test_archival_memory_size(size, type_name):
    assert_error(
        lambda: mp.compile_memory_metadata_block(NOW, "UTC", "a", archival_memory_size=size),
        lambda: ref.compile_memory_metadata_block(NOW, "UTC", "a", archival_memory_size=size),
        TypeError,
        f"archival_memory_size must be int or None, not {type_name}",
    )


@pytest.mark.parametrize("tags", [[1, 2], ["a", None], [b"x"], 5], ids=["ints", "None item", "bytes", "int"])
def test_archive_tags_fail_as_str_join_does(tags):
    assert_error(
        lambda: mp.compile_memory_metadata_block(NOW, "UTC", "a", archive_tags=tags),
        lambda: ref.compile_memory_metadata_block(NOW, "UTC", "a", archive_tags=tags),
        TypeError,
        str(raised(lambda: ", ".join(tags))),
    )


@pytest.mark.parametrize(
    ("kwargs", "expected_type", "message"),
    [
        ({"system_prompt": 5}, TypeError, "system_prompt must be str, not int"),
        ({"system_prompt": None}, TypeError, "system_prompt must be str, not NoneType"),
        ({"memory_with_sources": b"M"}, TypeError, "memory_with_sources must be str, not bytes"),
        ({"memory_with_sources": mp.Memory([])}, TypeError, "memory_with_sources must be str, not Memory"),
        ({"user_defined_variables": {}}, NotImplementedError, "user_defined_variables is not supported"),
        ({"template_format": "mustache"}, NotImplementedError, "mustache"),
    ],
    ids=["prompt int", "prompt None", "memory bytes", "memory a Memory", "user variables", "mustache"],
)
def test_system_message_arguments(kwargs, expected_type, message):
    args = {
        "system_prompt": "S",
        "memory_with_sources": "M",
        "agent_id": "a",
        "in_context_memory_last_edit": NOW,
        "timezone": "UTC",
    }
    args.update(kwargs)
    assert_error(
        lambda: mp.get_system_message_from_compiled_memory(**args),
        lambda: ref.get_system_message_from_compiled_memory(**args),
        expected_type,
        message,
    )


@pytest.mark.parametrize(
    ("template", "variables", "expected_type"),
    [
        (5, {}, AttributeError),
        ("{x}", None, TypeError),
        ("{0}", {}, ValueError),
        ("{", {}, ValueError),
        ("{x!z}", {"x": 1}, ValueError),
    ],
    ids=["template int", "variables None", "positional", "single brace", "bad conversion"],
)
def test_safe_format_fails_as_letta_does(template, variables, expected_type):
    rust = raised(lambda: mp.safe_format(template, variables))
    reference = raised(lambda: ref.safe_format(template, variables))
    assert type(rust) is type(reference) is expected_type and str(rust) == str(reference)


# --- fingerprints and rebuild decisions --------------------------------------------------------------


@pytest.mark.parametrize("value", [5, b"text", None])
def test_fingerprint_and_parse_take_only_str(value):
    for call in (
        lambda: mp.fingerprint(value),
        lambda: mp.stored_memory_section(value, "m"),
        lambda: mp.stored_memory_section("t", value),
    ):
        assert type(raised(call)) is TypeError
    assert_same(lambda: mp.fingerprint(value), lambda: ref.fingerprint(value))


def test_rebuild_arguments():
    with pytest.raises(TypeError, match="memory must be str or Compiled, not int"):
        mp.needs_rebuild("T", 5, "T\n\nM")
    with pytest.raises(ValueError, match="not a memprompt stamp"):
        mp.needs_rebuild("T", "M", "T\n\nM", stamp="mp1:bad")
    with pytest.raises(TypeError, match="memory must be str or Compiled, not NoneType"):
        mp.build_system_message("T", None, "a", NOW, "UTC")


# --- an error leaves nothing behind ------------------------------------------------------------------


def test_after_an_error_the_memory_compiles_again():
    blocks = [Block("fine", "persona"), Block(5, "human")]
    memory = mp.Memory(blocks)
    for _ in range(3):
        with pytest.raises(TypeError):
            memory.compile()
        with pytest.raises(TypeError):
            memory.compile_with_fingerprint()
    blocks[1].value = "now a str"
    assert memory.compile() == ref.Memory(blocks).compile()
    assert memory.compile_with_fingerprint().text == memory.compile()


# --- hostile values anywhere: the same outcome as the reference, never a crash -----------------------


class Boom(Exception):
    pass


class Explodes:
    """Raises from every protocol Letta or memprompt might use on a value."""

    def __bool__(self):
        raise Boom("bool")

    def __format__(self, spec):
        raise Boom("format")

    def __str__(self):
        raise Boom("str")

    def __eq__(self, other):
        raise Boom("eq")

    __hash__ = object.__hash__


class FormatsAsInt:
    def __format__(self, spec):
        return 5


class Shouty(str):
    def __str__(self):
        return "SHOUT"

    def __format__(self, spec):
        return "SHOUT"


class Huge(int):
    def __format__(self, spec):
        return "HUGE"


wild = st.one_of(
    texts(max_pieces=4),
    st.none(),
    st.integers(-(10**30), 10**30),
    st.booleans(),
    st.floats(allow_nan=True),
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.sampled_from([Thing(), Explodes(), FormatsAsInt(), Shouty("s"), Huge(3), Color.RED, Decimal("1.5")]),
)
mostly_text = st.one_of(texts(max_pieces=4), texts(max_pieces=4), st.none(), wild)


class WildBlock:
    def __init__(self, value, label, description, limit, read_only, source_id):
        self.value, self.label, self.description, self.limit = value, label, description, limit
        self.read_only, self.source_id = read_only, source_id

    def __repr__(self):
        return f"WildBlock({self.__dict__!r})"


wild_blocks = st.lists(
    st.builds(
        WildBlock, mostly_text, mostly_text, mostly_text, st.one_of(st.integers(-5, 10**6), wild), wild, mostly_text
    ),
    max_size=4,
)
# Letta formats a source's name while it renders, after the reference has checked every
# source's id: with a value whose __format__ raises, which error comes first differs.
tame = wild.filter(lambda value: not isinstance(value, Explodes))
wild_sources = st.lists(st.builds(Source, st.one_of(st.sampled_from(["s1", "s2"]), wild), tame, tame, tame), max_size=3)


def truthy(value) -> bool:
    """A value whose truth Letta's ``agent_type or ""`` reads without raising, and finds true."""
    return not isinstance(value, Explodes) and bool(value)


def outcome(call):
    try:
        return "ok", call()
    except Exception as error:  # noqa: BLE001
        return "raised", type(error), str(error)


@given(
    wild_blocks,
    wild_blocks,
    st.one_of(st.none(), st.sampled_from(["react_agent", "letta_v1_agent", "memgpt_agent"]), wild.filter(truthy)),
    st.booleans(),
    st.one_of(st.none(), st.builds(ToolUsageRules, wild, wild)),
    st.one_of(st.none(), wild_sources),
    st.one_of(st.none(), wild),
)
def test_wild_values_fail_or_render_as_the_reference(
    blocks, files, agent_type, git_enabled, rules, sources, max_files_open
):
    """Any mix of good and bad values: the same string, or the same exception with the same message."""

    def run(memory_class):
        memory = memory_class(blocks, files, agent_type, git_enabled)
        return memory.compile(rules, sources, max_files_open, ANTHROPIC)

    rust, reference = outcome(lambda: run(mp.Memory)), outcome(lambda: run(ref.Memory))
    assert rust == reference


@given(wild_blocks, st.lists(st.builds(ClientSkill, wild, wild, wild), max_size=3))
def test_wild_values_in_skills_and_the_filesystem(blocks, skills):
    for view in ("compile_available_skills", "render_memory_filesystem"):
        rust = outcome(lambda: getattr(mp.Memory(blocks), view)(skills))
        assert rust == outcome(lambda: getattr(ref.Memory(blocks), view)(skills))


@given(
    st.one_of(st.just(NOW), st.datetimes(), wild),
    st.one_of(st.sampled_from(["UTC", "Asia/Tokyo", "", "Nowhere"]), wild),
    wild,
    wild,
    wild,
    wild,
    st.one_of(st.none(), st.lists(mostly_text, max_size=3), wild),
)
def test_wild_values_in_metadata(when, timezone, agent_id, conversation_id, count, size, tags):
    def run(module):
        return module.compile_memory_metadata_block(when, timezone, agent_id, conversation_id, count, size, tags)

    assert outcome(lambda: run(mp)) == outcome(lambda: run(ref))
