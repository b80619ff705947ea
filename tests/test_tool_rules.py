"""compile_tool_rule_prompts: the Rust core against the reference, both against Letta's texts.

The strategies and helpers here are shared with tests/letta_diff/test_tool_rules_letta.py,
which checks the reference against Letta 0.16.8 itself on the same inputs; this module
imports nothing compiled at import time so that Letta's environment can import it.
"""

from __future__ import annotations

import collections.abc
import decimal
import enum
import fractions
import json
import sys
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given
from hypothesis import strategies as st

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

import agentfiles  # noqa: E402
from strategies import mostly, texts  # noqa: E402  (also makes memprompt.reference importable)

from memprompt.reference import tool_rules as ref  # noqa: E402
from memprompt.types import ToolUsageRules  # noqa: E402

KINDS = (
    "run_first",
    "exit_loop",
    "continue_loop",
    "conditional",
    "constrain_child_tools",
    "max_count_per_step",
    "parent_last_tool",
    "required_before_exit",
    "requires_approval",
)

# Letta 0.16.8's COMPILED_PROMPT_DESCRIPTION.
DESCRIPTION = (
    "The following constraints define rules for tool usage and guide desired behavior. These rules must be "
    "followed to ensure proper tool execution and workflow. A single response may contain multiple tool calls."
)


def _prompts(*prompts: str) -> str:
    return "\n".join(prompts)


# What letta 0.16.8's ToolRulesSolver(tool_rules=agent["tool_rules"]).compile_tool_rule_prompts()
# returned for each agent of ../shared/agentfiles (the block's value; None: no block).
AGENT_EXPECTED = {
    ("co-3.af", "co-3"): _prompts(
        "<tool_rule>\nweb_search requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nlinkedin_search_exa requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nfetch_webpage requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nrun_code requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\narchival_memory_search requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nconversation_search requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_rethink requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_replace requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_insert requires continuing your response when called\n</tool_rule>",
    ),
    ("customer_service.af", "customer_service"): None,
    ("deep_research_agent.af", "deep-thought-research-agent"): None,
    ("evie.af", "Evie"): _prompts(
        "<tool_rule>\nconversation_search requires continuing your response when called\n</tool_rule>",
    ),
    ("evie.af", "companion-sleeptime_copy"): _prompts(
        "<tool_rule>\nmemory_insert requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_replace requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_rethink requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_finish_edits ends your response (yields control) when called\n</tool_rule>",
    ),
    ("ezra.af", "ezra-super"): None,
    ("lettabot-builder.af", "lettabot-builder"): None,
    ("lettabot-builder.af", "Nameless Agent-sleeptime"): _prompts(
        "<tool_rule>\nmemory_replace requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_insert requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_rethink requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_finish_edits ends your response (yields control) when called\n</tool_rule>",
    ),
    ("lettabot.af", "LettaBot"): None,
    ("loop.af", "Loop"): None,
    ("memgpt_agent.af", "memgpt_agent"): None,
    ("memgpt_agent_with_convo.af", "memgpt_agent"): None,
    ("outreach_workflow_agent.af", "outreach_workflow_agent"): _prompts(
        "<tool_rule>\nAfter using retrieve_candidate, you must use one of these tools: evaluate_candidate\n</tool_rule>",
        "<tool_rule>\nevaluate_candidate will determine which tool to use next based on its output\n</tool_rule>",
        "<tool_rule>\nreject ends your response (yields control) when called\n</tool_rule>",
        "<tool_rule>\nsend_email ends your response (yields control) when called\n</tool_rule>",
    ),
    ("void.af", "void"): _prompts(
        "<tool_rule>\nconversation_search requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\ncore_memory_replace requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\narchival_memory_insert requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\narchival_memory_search requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\ncore_memory_append requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_apply_patch requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_insert requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_replace requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nmemory_rethink requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nAfter using add_post_to_bluesky_reply_thread, you must use one of these tools: archival_memory_insert\n</tool_rule>",
        "<tool_rule>\nAfter using create_whitewind_blog_post, you must use one of these tools: archival_memory_insert\n</tool_rule>",
        "<tool_rule>\nAfter using send_message, you must use one of these tools: annotate_ack\n</tool_rule>",
        "<tool_rule>\nhalt_activity ends your response (yields control) when called\n</tool_rule>",
        "<tool_rule>\nannotate_ack ends your response (yields control) when called\n</tool_rule>",
        "<tool_rule>\nsend_message ends your response (yields control) when called\n</tool_rule>",
    ),
}


# --- agent files ----------------------------------------------------------------


def load_agents() -> list[tuple[str, str, dict]]:
    """(file name, agent name, agent) for every agent of the real agent files; the caller skipped without them."""
    agents = []
    for path in sorted(agentfiles.require().glob("*.af")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, str):  # some files are JSON encoded a second time
            data = json.loads(data)
        for agent in data.get("agents", []):
            agents.append((path.name, agent["name"], agent))
    return agents


def stored_system_message(agent: dict) -> str | None:
    """The text of the agent's stored system message (its first in-context message), if any."""
    ids = agent.get("in_context_message_ids") or []
    messages = {m.get("id"): m for m in agent.get("messages") or []}
    message = messages.get(ids[0]) if ids else None
    if message is None:
        return None
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return message.get("text")


def section_of(block) -> str:
    """The ``<tool_usage_rules>`` section Memory.compile writes for the block ("" for None)."""
    if block is None:
        return ""
    return f"\n\n<tool_usage_rules>\n{block.description}\n\n{block.value}\n</tool_usage_rules>"


# --- inputs beyond plain dicts (both sides must see fresh copies) -----------------


class StrSub(str):
    """A str subclass: pydantic reads its plain text."""


class ToolRuleType(str, enum.Enum):
    """Stands in for letta's ToolRuleType (a str enum with the same values)."""

    run_first = "run_first"
    exit_loop = "exit_loop"
    continue_loop = "continue_loop"
    conditional = "conditional"
    constrain_child_tools = "constrain_child_tools"
    max_count_per_step = "max_count_per_step"
    parent_last_tool = "parent_last_tool"
    required_before_exit = "required_before_exit"
    requires_approval = "requires_approval"


class Color(str, enum.Enum):
    red = "red"


class Number(enum.IntEnum):
    four = 4


class Plain(enum.Enum):
    three = 3


class HasIndex:
    def __index__(self) -> int:
        return 6

    def __repr__(self) -> str:
        return "HasIndex()"


class HasFloat:
    def __init__(self, value: float) -> None:
        self.value = value

    def __float__(self) -> float:
        return self.value

    def __repr__(self) -> str:
        return f"HasFloat({self.value!r})"


class Attrs:
    """A rule read by attributes (pydantic's from_attributes)."""

    def __init__(self, **fields) -> None:
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        return f"Attrs({self.__dict__!r})"


class RuleMapping(collections.abc.Mapping):
    """A mapping that is not a dict."""

    def __init__(self, data: dict) -> None:
        self._data = data

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"RuleMapping({self._data!r})"


class Once:
    """A one-shot iterable: ``build`` turns it into a fresh generator for every call."""

    def __init__(self, items) -> None:
        self.items = tuple(items)

    def __repr__(self) -> str:
        return f"Once({list(self.items)!r})"


def build(spec):
    """A fresh input from a drawn spec (generators are single-use; so are objects some code might keep)."""
    if isinstance(spec, Once):
        return (build(item) for item in spec.items)
    if type(spec) is dict:
        return {key: build(value) for key, value in spec.items()}
    if type(spec) is list:
        return [build(item) for item in spec]
    if type(spec) is tuple:
        return tuple(build(item) for item in spec)
    if isinstance(spec, Attrs):
        return Attrs(**{key: build(value) for key, value in spec.__dict__.items()})
    if isinstance(spec, RuleMapping):
        return RuleMapping(build(spec._data))
    return spec


def outcome(call, exact=False):
    """``(description, value)`` of the block, None, or the exception: its class and message when ``exact`` (Rust and
    the reference raise the same), else the class a caller can catch (ValueError for pydantic's
    ValidationError, which derives from it)."""
    try:
        block = call()
    except Exception as error:  # noqa: BLE001 - the class is what we compare
        if exact:
            return ("raises", type(error), str(error))
        return ("raises", ValueError if isinstance(error, ValueError) else type(error))
    if block is None:
        return None
    return (block.description, block.value)


# --- strategies -------------------------------------------------------------------

# The Jinja-style templates that older Letta versions stored; 0.16.8 ignores prompt_template.
TEMPLATES = (
    "<tool_rule>\n{{ tool_name }} requires continuing your response when called\n</tool_rule>",
    "<tool_rule>\nAfter using {{ tool_name }}, you must use one of these tools: {{ children | join(', ') }}\n</tool_rule>",
    "{{ unclosed",
    "{% for x in y %}{{ x }}{% endfor %}",
    "",
)


def str_values(valid: bool = False):
    """What a str field gets: text (mostly), else what pydantic coerces, else what it refuses."""
    coerced = st.one_of(
        texts().map(StrSub),
        st.just(Color.red),
        st.just(Number.four),
        st.just(Plain.three),
        texts().map(lambda t: t.encode("utf-8", "surrogatepass")),  # bad UTF-8 when t has surrogates
        st.text(max_size=5).map(lambda t: bytearray(t.encode())),
    )
    if valid:
        coerced = st.one_of(
            texts().map(StrSub), st.just(Color.red), st.just(Number.four), st.text(max_size=5).map(str.encode)
        )
        return mostly(texts(), coerced, 8)
    refused = st.sampled_from([None, 3, 1.5, True, ["a"], {"a": "b"}, memoryview(b"x")])
    return mostly(texts(), st.one_of(coerced, refused), 6)


NUMERIC_PARTS = st.tuples(
    st.sampled_from(["", "", " ", "\t", "\n", "\xa0", "\u3000", "\x85", "\x1c", "\u2028"]),
    st.sampled_from(["", "", "", "+", "-", "+-", "--", "-+"]),
    st.sampled_from(["", "", "0", "00", "0_0", "_"]),
    st.from_regex(r"[0-9]{0,3}(_?[0-9]{1,3}){0,2}_?", fullmatch=True),
    st.sampled_from(["", "", "", ".0", ".00", ".", ".5", "e1", ".0_0", "_"]),
    st.sampled_from(["", "", " ", "\r\n", "\u2003", "\x1f"]),
)


def numeric_texts():
    """Integers as text, in and out of pydantic's syntax; now and then at its 4300-character limit."""
    usual = NUMERIC_PARTS.map("".join)
    long = st.tuples(
        st.sampled_from(["", "-", " ", "0"]), st.integers(4298, 4302), st.sampled_from(["", ".0", " "])
    ).map(lambda p: p[0] + "1" * p[1] + p[2])
    return mostly(usual, long, 10)


def int_values(valid: bool = False):
    """What max_count_limit gets: ints (mostly), else every kind of value pydantic turns into an int."""
    usual = st.integers(-5, 10**6)
    coerced = st.one_of(
        st.sampled_from([True, False, 3.0, -0.0, 2.0**62, Number.four, Plain.three, HasIndex(), HasFloat(7.0)]),
        st.integers().filter(lambda n: abs(n) < 10**4000),
        st.sampled_from(
            [decimal.Decimal("3"), decimal.Decimal("1E+2"), decimal.Decimal("-0"), fractions.Fraction(6, 2)]
        ),
    )
    if valid:
        return mostly(usual, st.one_of(coerced, st.sampled_from(["3", " +1_000 ", "0.0", b"12"])), 5)
    refused = st.sampled_from(
        [
            None,
            3.5,
            float("inf"),
            float("nan"),
            1e19,
            -(2.0**63),
            decimal.Decimal("2.5"),
            decimal.Decimal("NaN"),
            fractions.Fraction(7, 2),
            HasFloat(0.5),
            bytearray(b"3"),
            [3],
            object(),
            10**5000,  # pydantic takes it; the f-string refuses to print it (ValueError)
        ]
    )
    text = st.one_of(numeric_texts(), numeric_texts().map(str.encode), st.just(b"\xff"), texts())
    return mostly(usual, st.one_of(coerced, refused, text), 4)


def bool_values(valid: bool = False):
    coerced = st.sampled_from([0, 1, 1.0, 0.0, "yes", "Off", "t", "N", "TRUE", b"no", decimal.Decimal(1)])
    if valid:
        return mostly(st.booleans(), coerced, 4)
    refused = st.sampled_from([2, 0.5, "", " true", "maybe", None, bytearray(b"yes"), Number.four, [True]])
    return mostly(st.booleans(), st.one_of(coerced, refused), 4)


def list_of(items, valid: bool = False):
    """A list field: a list (mostly), another iterable pydantic takes, or something it refuses."""
    as_list = st.lists(items, max_size=4)
    others = st.one_of(as_list.map(tuple), as_list.map(Once))
    if valid:
        return mostly(as_list, others, 6)
    refused = st.one_of(
        texts(), st.just(b"ab"), st.just({"a": "b"}), st.just(None), st.just(5), st.just(RuleMapping({"a": 1}))
    )
    return mostly(as_list, st.one_of(others, refused), 5)


def mapping_of(keys, values, valid: bool = False, min_size: int = 0):
    as_dict = st.dictionaries(keys, values, min_size=min_size, max_size=3)
    others = st.one_of(as_dict.map(RuleMapping), as_dict.map(MappingProxyType))
    if valid:
        return mostly(as_dict, others, 6)
    refused = st.one_of(st.just([("a", "b")]), st.just("ab"), st.just(None), st.just({}))
    return mostly(as_dict, st.one_of(others, refused), 5)


def args_values(valid: bool = False):
    plain = st.dictionaries(texts(), st.one_of(st.integers(), texts(), st.none()), max_size=3)
    if valid:
        return st.one_of(st.none(), plain)
    return st.one_of(st.none(), plain, st.just({1: 2}), st.just(["a"]), st.just("a"))


def tags(kind: str, valid: bool):
    usual = st.just(kind)
    coerced = st.sampled_from([ToolRuleType(kind), StrSub(kind)])
    if valid:
        return mostly(usual, coerced, 4)
    refused = st.sampled_from([kind.upper(), kind.encode(), None, 3, "", kind + " "])
    return mostly(usual, st.one_of(coerced, refused), 5)


ABSENT = object()


@st.composite
def rule_specs(draw, valid: bool = False, kinds=KINDS):
    """One rule: a dict (mostly), an object with attributes, or another mapping; every type, every field."""
    kind = draw(st.sampled_from(kinds))
    roll = lambda n: draw(st.integers(0, n - 1)) == 0  # noqa: E731 - "one time in n"
    fields = {}
    if valid or not roll(25):
        fields["type"] = draw(tags(kind, valid))
    if valid or not roll(25):
        fields["tool_name"] = draw(str_values(valid))
    if roll(2):
        fields["prompt_template"] = draw(
            st.one_of(st.none(), st.sampled_from(TEMPLATES), texts())
            if valid or not roll(8)
            else st.sampled_from([5, b"\xff"])
        )
    if kind == "run_first" and roll(2):
        fields["args"] = draw(args_values(valid))
    if kind in ("constrain_child_tools", "parent_last_tool") and (valid or not roll(20)):
        fields["children"] = draw(list_of(str_values(valid), valid))
    if kind == "constrain_child_tools" and roll(3):
        drawn = fields.get("children") or []
        drawn = drawn.items if isinstance(drawn, Once) else drawn
        children = [c for c in drawn if isinstance(c, str)] if valid else []
        name = st.sampled_from(children) if children else (st.nothing() if valid else texts())
        node = st.fixed_dictionaries({"name": name}, optional={"args": args_values(valid), "other": st.integers()})
        fields["child_arg_nodes"] = draw(
            st.none() | (st.lists(node, max_size=2) if children or not valid else st.just([]))
        )
    if kind == "conditional":
        if roll(2):
            fields["default_child"] = draw(st.none() | str_values(valid))
        if valid or not roll(20):
            keys = st.one_of(texts(), st.integers(), st.booleans())
            fields["child_output_mapping"] = draw(
                mapping_of(keys, str_values(valid), valid, min_size=1 if valid else 0)
            )
        if roll(2):
            fields["require_output_mapping"] = draw(bool_values(valid))
    if kind == "max_count_per_step" and (valid or not roll(20)):
        fields["max_count_limit"] = draw(int_values(valid))
    if not valid and roll(20):
        fields[draw(st.sampled_from(["children", "args", "max_count_limit", "zzz", "id", "promptTemplate"]))] = "x"
    if not valid and roll(40):
        fields[3] = "non-str key"
    form = draw(st.integers(0, 11))
    if form == 0 and all(isinstance(k, str) for k in fields):
        return Attrs(**fields)
    if form == 1:
        return RuleMapping(fields)
    return fields


@st.composite
def rule_lists(draw, valid: bool = False, kinds=KINDS):
    """A rules argument: a list (mostly), another iterable, None, or (not valid) something refused."""
    rule = rule_specs(True, kinds) if valid else mostly(rule_specs(True, kinds), rule_specs(False, kinds), 4)
    rules = draw(st.lists(rule, max_size=8))
    roll = draw(st.integers(0, 19))
    if roll == 0:
        return tuple(rules)
    if roll == 1:
        return Once(rules)
    if roll == 2:
        return None
    if roll == 3 and not valid:
        return draw(
            st.sampled_from(["exit_loop", {"tool_name": "x", "type": "exit_loop"}, 5, [None], ["exit_loop"], [3]])
        )
    return rules


# --- look-alikes of Letta's own rule classes (for the Rust side, where Letta is absent) ---

LETTA_CLASSES = {
    "run_first": "InitToolRule",
    "exit_loop": "TerminalToolRule",
    "continue_loop": "ContinueToolRule",
    "conditional": "ConditionalToolRule",
    "constrain_child_tools": "ChildToolRule",
    "max_count_per_step": "MaxCountPerStepToolRule",
    "parent_last_tool": "ParentToolRule",
    "required_before_exit": "RequiredBeforeExitToolRule",
    "requires_approval": "RequiresApprovalToolRule",
}


def _look_alike(name: str) -> type:
    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return f"{name}({self.__dict__!r})"

    cls = type(name, (), {"__init__": __init__, "__repr__": __repr__})
    cls.__module__ = "letta.schemas.tool_rule"  # what both sides recognise Letta's classes by
    return cls


LOOK_ALIKES = {kind: _look_alike(name) for kind, name in LETTA_CLASSES.items()}


def look_alike(kind: str, tool_name, children=None, max_count_limit=None, tag=None):
    """An object of (a look-alike of) Letta's class for ``kind``, as pydantic leaves it."""
    fields = {"type": ToolRuleType(kind) if tag is None else tag, "tool_name": tool_name, "prompt_template": None}
    if kind in ("constrain_child_tools", "parent_last_tool"):
        fields["children"] = children if children is not None else []
    if kind == "max_count_per_step":
        fields["max_count_limit"] = max_count_limit
    return LOOK_ALIKES[kind](**fields)


@st.composite
def look_alike_lists(draw):
    """Objects of Letta's classes, their fields as Letta validated them or (rarely) as someone set them."""
    rules = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(KINDS))
        odd = draw(st.integers(0, 7)) == 0
        name = draw(st.one_of(st.integers(), texts().map(StrSub), st.none()) if odd else texts())
        children = draw(
            st.one_of(st.lists(texts(), max_size=3).map(tuple), st.lists(st.integers(), min_size=1, max_size=2))
            if odd
            else st.lists(texts(), max_size=3)
        )
        limit = draw(st.one_of(st.integers(), st.booleans(), texts()) if odd else st.integers(-3, 100))
        tag = draw(st.sampled_from([None, kind, "exit_loop"])) if odd else None
        rules.append(look_alike(kind, name, children, limit, tag))
    return rules


# --- the Rust side ---------------------------------------------------------------


@pytest.fixture(scope="module")
def core():
    return pytest.importorskip("memprompt._core", reason="needs the compiled extension")


def rust_outcome(core, rules):
    def compiled():
        block = core.compile_tool_rule_prompts(rules)
        assert block is None or type(block) is ToolUsageRules, type(block)
        return block

    return outcome(compiled, exact=True)


def reference_outcome(rules):
    return outcome(lambda: ref.compile_tool_rule_prompts(rules), exact=True)


@pytest.mark.parametrize("file_name, agent_name", list(AGENT_EXPECTED))
def test_agent_files(core, file_name, agent_name):
    agents = {(f, n): a for f, n, a in load_agents()}
    rules = agents[(file_name, agent_name)].get("tool_rules")
    expected = AGENT_EXPECTED[(file_name, agent_name)]
    expected = None if expected is None else (DESCRIPTION, expected)
    assert reference_outcome(rules) == expected
    assert rust_outcome(core, rules) == expected


def test_every_agent_is_pinned():
    agents = load_agents()
    assert sorted((f, n) for f, n, _ in agents) == sorted(AGENT_EXPECTED)


def test_current_stored_system_messages_hold_the_section(core):
    """Where the stored system message has a <tool_usage_rules> section, it is ours, byte for byte
    (Evie and the lettabot-builder sleeptime agent; the stale files predate the section)."""
    agents = load_agents()
    seen = 0
    for file_name, agent_name, agent in agents:
        text = stored_system_message(agent)
        if text is None or "\n\n<tool_usage_rules>\n" not in text:
            continue
        compiled = core.compile_tool_rule_prompts(agent.get("tool_rules"))
        section = section_of(compiled)
        assert section and section in text, (file_name, agent_name)
        seen += 1
    assert seen == 2


@given(rule_lists())
def test_rust_matches_reference(core, spec):
    assert rust_outcome(core, build(spec)) == reference_outcome(build(spec))


@given(rule_lists(valid=True))
def test_rust_matches_reference_on_valid_rules(core, spec):
    expected = reference_outcome(build(spec))
    assert rust_outcome(core, build(spec)) == expected
    assert expected is None or expected[0] != "raises" or issubclass(expected[1], ValueError)  # a huge int's str()


@given(look_alike_lists())
def test_rust_matches_reference_on_letta_objects(core, rules):
    assert rust_outcome(core, rules) == reference_outcome(rules)


# --- pinned texts ------------------------------------------------------------------

CHILD = "<tool_rule>\nAfter using a, you must use one of these tools: b, c\n</tool_rule>"


@pytest.mark.parametrize(
    "rule, text",
    [
        (
            {"tool_name": "x", "type": "continue_loop"},
            "<tool_rule>\nx requires continuing your response when called\n</tool_rule>",
        ),
        ({"tool_name": "a", "type": "constrain_child_tools", "children": ["b", "c"]}, CHILD),
        (
            {"tool_name": "a", "type": "constrain_child_tools", "children": []},
            "<tool_rule>\nAfter using a, you must use one of these tools: \n</tool_rule>",
        ),
        (
            {"tool_name": "x", "type": "conditional", "child_output_mapping": {"True": "y"}},
            "<tool_rule>\nx will determine which tool to use next based on its output\n</tool_rule>",
        ),
        (
            {"tool_name": "x", "type": "max_count_per_step", "max_count_limit": 3},
            "<tool_rule>\nx: at most 3 use(s) per response\n</tool_rule>",
        ),
        (
            {"tool_name": "x", "type": "max_count_per_step", "max_count_limit": " +1_0.00 "},
            "<tool_rule>\nx: at most 10 use(s) per response\n</tool_rule>",
        ),
        (
            {"tool_name": "x", "type": "max_count_per_step", "max_count_limit": True},
            "<tool_rule>\nx: at most 1 use(s) per response\n</tool_rule>",
        ),
        (
            {"tool_name": "p", "type": "parent_last_tool", "children": ["b", "c"]},
            "<tool_rule>\nb, c can only be used after p\n</tool_rule>",
        ),
        (
            {"tool_name": "x", "type": "exit_loop"},
            "<tool_rule>\nx ends your response (yields control) when called\n</tool_rule>",
        ),
        # prompt_template is validated, then ignored: the Jinja templates of old agent files change nothing.
        (
            {
                "tool_name": "a",
                "type": "constrain_child_tools",
                "children": ["b", "c"],
                "prompt_template": TEMPLATES[1],
            },
            CHILD,
        ),
        (
            {"tool_name": "x", "type": "exit_loop", "prompt_template": "{{ tool_name }} custom"},
            "<tool_rule>\nx ends your response (yields control) when called\n</tool_rule>",
        ),
        # Letta's Block drops NUL; lone surrogates stay.
        (
            {"tool_name": "a\x00\ud800", "type": "exit_loop"},
            "<tool_rule>\na\ud800 ends your response (yields control) when called\n</tool_rule>",
        ),
        (
            {"tool_name": StrSub("s"), "type": ToolRuleType.exit_loop},
            "<tool_rule>\ns ends your response (yields control) when called\n</tool_rule>",
        ),
        (
            {"tool_name": b"b", "type": "exit_loop"},
            "<tool_rule>\nb ends your response (yields control) when called\n</tool_rule>",
        ),
        (
            {"tool_name": Plain.three, "type": "exit_loop"},
            "<tool_rule>\n3 ends your response (yields control) when called\n</tool_rule>",
        ),
    ],
)
def test_pinned_texts(core, rule, text):
    assert reference_outcome([rule]) == (DESCRIPTION, text)
    assert rust_outcome(core, [rule]) == (DESCRIPTION, text)


@pytest.mark.parametrize(
    "rules",
    [
        None,
        [],
        (),
        [{"tool_name": "i", "type": "run_first", "args": {"a": 1}}],
        [{"tool_name": "r", "type": "required_before_exit", "prompt_template": "x"}],
        [{"tool_name": "a", "type": "requires_approval"}],
        iter([{"tool_name": "i", "type": "run_first"}]),
    ],
)
def test_no_block(core, rules):
    assert rust_outcome(core, rules) is None


def test_group_order(core):
    rules = [
        {"tool_name": "t1", "type": "exit_loop"},
        {"tool_name": "p", "type": "parent_last_tool", "children": ["a"]},
        {"tool_name": "m", "type": "max_count_per_step", "max_count_limit": 2},
        {"tool_name": "r", "type": "required_before_exit"},
        {"tool_name": "c", "type": "continue_loop"},
        {"tool_name": "i", "type": "run_first"},
        {"tool_name": "ch", "type": "constrain_child_tools", "children": ["z"]},
        {"tool_name": "a", "type": "requires_approval"},
        {"tool_name": "co", "type": "conditional", "child_output_mapping": {"k": "v"}},
        {"tool_name": "t2", "type": "exit_loop"},
    ]
    expected = _prompts(
        "<tool_rule>\nc requires continuing your response when called\n</tool_rule>",
        "<tool_rule>\nm: at most 2 use(s) per response\n</tool_rule>",
        "<tool_rule>\nAfter using ch, you must use one of these tools: z\n</tool_rule>",
        "<tool_rule>\nco will determine which tool to use next based on its output\n</tool_rule>",
        "<tool_rule>\na can only be used after p\n</tool_rule>",
        "<tool_rule>\nt1 ends your response (yields control) when called\n</tool_rule>",
        "<tool_rule>\nt2 ends your response (yields control) when called\n</tool_rule>",
    )
    assert rust_outcome(core, rules) == (DESCRIPTION, expected)
    assert reference_outcome(rules) == (DESCRIPTION, expected)


@pytest.mark.parametrize(
    "rules",
    [
        "exit_loop",
        {"tool_name": "x", "type": "exit_loop"},
        [None],
        [{"tool_name": "x"}],
        [{"tool_name": "x", "type": "EXIT_LOOP"}],
        [{"tool_name": 3, "type": "exit_loop"}],
        [{"tool_name": "x", "type": "exit_loop", "children": ["a"]}],
        [{"tool_name": "x", "type": "exit_loop", 1: 2}],
        [{"tool_name": "x", "type": "exit_loop", "prompt_template": 5}],
        [{"tool_name": "x", "type": "max_count_per_step", "max_count_limit": 2.5}],
        [{"tool_name": "x", "type": "max_count_per_step", "max_count_limit": "1" * 4301}],
        [{"tool_name": "x", "type": "max_count_per_step", "max_count_limit": 10**5000}],  # str() refuses it
        [{"tool_name": "x", "type": "conditional", "child_output_mapping": {}}],
        [{"tool_name": "x", "type": "constrain_child_tools", "children": ["a"], "child_arg_nodes": [{"name": "b"}]}],
        [{"tool_name": "x", "type": "parent_last_tool", "children": "ab"}],
        # A valid rule first: validation of the whole list comes before any rendering.
        [{"tool_name": "x", "type": "exit_loop"}, {"tool_name": "y", "type": "exit_loop", "zzz": 1}],
    ],
)
def test_value_errors(core, rules):
    expected = reference_outcome(rules)
    assert expected[:2] == ("raises", ref.InvalidRule) or expected[:2] == ("raises", ValueError)
    assert rust_outcome(core, rules) == expected


def test_letta_objects_fast_path_and_subclasses(core):
    plain = [
        look_alike("exit_loop", "t"),
        look_alike("constrain_child_tools", "c", ["a", "b"]),
        look_alike("max_count_per_step", "m", max_count_limit=4),
        look_alike("parent_last_tool", "p", ("x", "y")),  # a tuple: rendered through the reference
        look_alike("exit_loop", 7),  # set after validation: rendered as an f-string renders it
    ]
    expected = _prompts(
        "<tool_rule>\nAfter using c, you must use one of these tools: a, b\n</tool_rule>",
        "<tool_rule>\nm: at most 4 use(s) per response\n</tool_rule>",
        "<tool_rule>\nx, y can only be used after p\n</tool_rule>",
        "<tool_rule>\nt ends your response (yields control) when called\n</tool_rule>",
        "<tool_rule>\n7 ends your response (yields control) when called\n</tool_rule>",
    )
    assert rust_outcome(core, plain) == reference_outcome(plain) == (DESCRIPTION, expected)

    class Custom(LOOK_ALIKES["exit_loop"]):
        def render_prompt(self):
            return self.text

    def custom(text):
        rule = Custom(type=ToolRuleType.exit_loop, tool_name="z")
        rule.text = text
        return rule

    assert rust_outcome(core, [custom("mine"), look_alike("continue_loop", "k")]) == (
        DESCRIPTION,
        "<tool_rule>\nk requires continuing your response when called\n</tool_rule>\nmine",
    )
    assert rust_outcome(core, [custom("")]) is None
    # A text that is not a str fails where Letta's join fails: TypeError.
    for rules in ([custom(5)], [custom(5), look_alike("exit_loop", "t")]):
        expected = ("raises", TypeError, "sequence item 0: expected str instance, int found")
        assert rust_outcome(core, rules) == reference_outcome(rules) == expected
    bad_children = [look_alike("constrain_child_tools", "c", ["a", 1])]
    expected = ("raises", TypeError, "sequence item 1: expected str instance, int found")
    assert rust_outcome(core, bad_children) == reference_outcome(bad_children) == expected


def test_big_inputs(core):
    many = [
        {
            "tool_name": f"t{i}",
            "type": KINDS[i % len(KINDS)],
            "children": ["a"],
            "child_output_mapping": {"a": "b"},
            "max_count_limit": i,
        }
        for i in range(20000)
    ]
    for rule in many:
        for key in [k for k in rule if k not in {name for name, _ in ref.FIELDS[rule["type"]]}]:
            del rule[key]
    assert rust_outcome(core, many) == reference_outcome(many)
    huge = [{"tool_name": "x" * 10_000_000, "type": "parent_last_tool", "children": ["\ud800" * 1000] * 1000}]
    result = core.compile_tool_rule_prompts(huge)
    assert result.value == ref.compile_tool_rule_prompts(huge).value
    big_int = [{"tool_name": "x", "type": "max_count_per_step", "max_count_limit": 10**4000}]
    assert rust_outcome(core, big_int) == reference_outcome(big_int)


def test_fast_path_needs_no_reference(core, monkeypatch):
    """Agent-file dicts and Letta's exact objects render in Rust alone."""

    def refuse(*args, **kwargs):
        raise AssertionError("the reference was called")

    monkeypatch.setattr(ref, "validate_rule", refuse)
    monkeypatch.setattr(ref, "compile_tool_rule_prompts", refuse)
    rules = [
        look_alike("constrain_child_tools", "c", ["a"]),
        look_alike("max_count_per_step", "m", max_count_limit=2),
        look_alike("run_first", "i"),
        {
            "tool_name": "x",
            "type": "conditional",
            "child_output_mapping": {1: "a"},
            "default_child": None,
            "require_output_mapping": True,
        },
        {"tool_name": "x", "type": "run_first", "args": {"k": [1]}, "prompt_template": None},
        {"tool_name": "x", "type": ToolRuleType.exit_loop},
    ]
    assert core.compile_tool_rule_prompts(rules) is not None
    with pytest.raises(AssertionError):
        core.compile_tool_rule_prompts([{"tool_name": StrSub("x"), "type": "exit_loop"}])


def test_agent_files_need_no_reference(core, monkeypatch):
    """Every real agent's rules render in Rust alone."""

    def refuse(*args, **kwargs):
        raise AssertionError("the reference was called")

    monkeypatch.setattr(ref, "validate_rule", refuse)
    monkeypatch.setattr(ref, "compile_tool_rule_prompts", refuse)
    for file_name, agent_name, agent in load_agents():
        block, expected = (
            core.compile_tool_rule_prompts(agent.get("tool_rules")),
            AGENT_EXPECTED[(file_name, agent_name)],
        )
        assert (None if block is None else (block.description, block.value)) == (
            None if expected is None else (DESCRIPTION, expected)
        )


def test_a_class_renamed_or_moved_between_calls_is_asked_again(core, monkeypatch):
    """The Rust side remembers across calls which of Letta's rule classes a class is, by its
    version tag; setting its ``__name__`` or ``__module__`` gives it a new one."""
    validated = []

    def counted(*args, **kwargs):
        validated.append(args)
        return validate_rule(*args, **kwargs)

    validate_rule = ref.validate_rule
    monkeypatch.setattr(ref, "validate_rule", counted)
    for attribute, value in (("__name__", "NotARule"), ("__module__", "elsewhere")):
        cls = _look_alike("TerminalToolRule")
        rules = [cls(type=ToolRuleType.exit_loop, tool_name="t")]
        for _ in range(2):
            assert rust_outcome(core, rules) == (
                DESCRIPTION,
                _prompts("<tool_rule>\nt ends your response (yields control) when called\n</tool_rule>"),
            )
        assert validated == []
        setattr(cls, attribute, value)
        assert rust_outcome(core, rules) == reference_outcome(rules)
        assert len(validated) == 2, attribute  # Rust's hand-off, then the reference's own call
        validated.clear()


def test_new_rules_are_never_taken_for_the_last_ones(core):
    """Each new ToolUsageRules is read, though the Rust core makes it counting no edit: no compile has
    read it, and it cannot take the id of the one the last compile read (the compile cache holds that)."""
    import memprompt as mp
    from memprompt import reference

    blocks = [mp.Block("v", label="human")]
    memory, expected = mp.Memory(blocks), reference.Memory(blocks)
    for name in ("a", "b", "c", "d"):
        rules = [{"tool_name": name, "type": "exit_loop"}]
        text = memory.compile(tool_usage_rules=core.compile_tool_rule_prompts(rules))
        assert text == expected.compile(tool_usage_rules=ref.compile_tool_rule_prompts(rules))
