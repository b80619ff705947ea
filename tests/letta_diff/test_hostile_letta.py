"""Hostile objects that need Letta itself: rule classes whose render_prompt is not Letta's, a
Letta block in a cycle with a memory, and a block with several bad fields. memprompt (Rust),
the reference and letta 0.16.8 agree: the same text, or the same exception type (and, between
memprompt and the reference, the same message)."""

from __future__ import annotations

import gc
import weakref

import pytest

pytest.importorskip("letta.helpers.tool_rule_solver", reason="needs letta==0.16.8 installed")
pytest.importorskip("memprompt._core", reason="needs the memprompt wheel installed")

from letta.helpers.tool_rule_solver import ToolRulesSolver  # noqa: E402
from letta.schemas import tool_rule as letta_rules  # noqa: E402
from letta.schemas.block import Block as LettaBlock  # noqa: E402
from letta.schemas.memory import Memory as LettaMemory  # noqa: E402
from outcome import outcome  # noqa: E402

import memprompt as mp  # noqa: E402
from memprompt import reference as ref  # noqa: E402


def text_of(block):
    return None if block is None else (block.description, block.value)


def same_rule_prompts(rules):
    """memprompt, the reference and Letta's solver give the same text for ``rules``."""
    letta = outcome(lambda: ToolRulesSolver(tool_rules=rules).compile_tool_rule_prompts())
    rust = outcome(lambda: text_of(mp.compile_tool_rule_prompts(rules)))
    reference = outcome(lambda: text_of(ref.tool_rules.compile_tool_rule_prompts(rules)))
    assert rust == reference
    assert rust[0] == letta[0] == "ok"
    assert rust[1] == (letta[1].description, letta[1].value)
    return rust[1][1]


class ChildToolRule(letta_rules.ChildToolRule):
    """Letta's name and module, its own render_prompt."""

    __module__ = letta_rules.__name__

    def render_prompt(self):
        return "mine: " + self.tool_name


def children(**fields):
    return letta_rules.ChildToolRule(tool_name="search", children=["send"], **fields)


def test_a_subclass_keeping_lettas_name_and_module_renders_through_its_render_prompt():
    rules = [ChildToolRule(tool_name="search", children=["send"]), letta_rules.TerminalToolRule(tool_name="send")]
    assert "mine: search" in same_rule_prompts(rules)


def test_a_render_prompt_set_on_the_instance_is_called():
    rule = children()
    object.__setattr__(rule, "render_prompt", lambda: "from the instance")
    assert "from the instance" in same_rule_prompts([rule, letta_rules.TerminalToolRule(tool_name="send")])


def test_lettas_own_class_patched_renders_through_the_patch(monkeypatch):
    plain = same_rule_prompts([children()])
    monkeypatch.setattr(letta_rules.ChildToolRule, "render_prompt", lambda self: "patched " + self.tool_name)
    assert same_rule_prompts([children()]) == "patched search" != plain
    monkeypatch.undo()
    assert same_rule_prompts([children()]) == plain, "the class's old answer is not kept"


def test_a_base_class_patched_reaches_the_rules_that_inherit_it(monkeypatch):
    monkeypatch.setattr(letta_rules.BaseToolRule, "render_prompt", lambda self: "every " + self.tool_name)
    assert same_rule_prompts([letta_rules.InitToolRule(tool_name="start")]) == "every start"


def test_a_subclass_that_only_inherits_renders_as_letta():
    class Quiet(letta_rules.TerminalToolRule):
        pass

    assert "send" in same_rule_prompts([Quiet(tool_name="send")])


# --- leak -------------------------------------------------------------------------------


def test_a_letta_block_whose_metadata_holds_its_memory_is_collected():
    gc.collect()
    memory = mp.Memory([])
    memory.blocks = [LettaBlock(label="human", value="hi", limit=100, metadata={"memory": memory})]
    memory.compile()
    gone = weakref.ref(memory)
    del memory
    gc.collect()
    assert gone() is None


# --- wrong error: the first failing read in Letta's order ------------------------------


class Raising(Exception):
    pass


def raising(name):
    def get(self):
        raise Raising(name)

    return property(get)


def bad_block(**bad):
    """A block whose fields in ``bad`` are values, or properties (raising Raising) when a str names them."""
    fields = {"label": "human", "value": "v", "description": None, "limit": 10, **bad}
    properties = {name: raising(name) for name, v in fields.items() if v == "raises"}
    cls = type("Bad", (), properties)
    block = cls()
    for name, value in fields.items():
        if name not in properties:
            setattr(block, name, value)
    return block


# Letta reads label, value, description, limit (and read_only) before it fails on any of these.
BAD = [
    {"value": 5, "description": "raises"},
    {"label": 3, "value": "raises"},
    {"label": 3, "description": "raises"},
    {"value": [1], "description": "raises"},
    {"description": 7, "limit": "raises"},
    {"limit": "ten", "read_only": "raises"},
]


@pytest.mark.parametrize("bad", BAD, ids=lambda b: ",".join(f"{k}={v}" for k, v in b.items()))
@pytest.mark.parametrize("agent_type", [None, "memgpt_v2_agent"])
def test_several_bad_fields_raise_what_lettas_read_order_meets_first(bad, agent_type):
    def compile_with(memory_class):
        memory = memory_class(blocks=[bad_block(**bad)], agent_type=agent_type)
        return memory.compile(llm_config=mp.types.LLMConfig("anthropic"))

    rust, reference = outcome(lambda: compile_with(mp.Memory)), outcome(lambda: compile_with(ref.Memory))
    letta_memory = LettaMemory.model_construct(blocks=[bad_block(**bad)], file_blocks=[], agent_type=agent_type)
    letta = outcome(lambda: letta_memory.compile(llm_config=mp.types.LLMConfig("anthropic")))
    assert rust == reference
    assert rust[:2] == letta[:2]


GIT_BAD = [
    [{"label": "system/notes", "description": "raises"}, {"label": "system/persona", "value": "raises"}],
    [{"label": "system/a", "value": 5}, {"label": "system/b", "description": "raises"}],
    [{"label": "system/a", "description": "raises"}, {"label": "raises"}],
]


@pytest.mark.parametrize("blocks", GIT_BAD, ids=str)
def test_git_memory_raises_what_lettas_read_order_meets_first(blocks):
    def compile_with(memory_class):
        return memory_class(blocks=[bad_block(**fields) for fields in blocks], git_enabled=True).compile()

    rust, reference = outcome(lambda: compile_with(mp.Memory)), outcome(lambda: compile_with(ref.Memory))
    letta_memory = LettaMemory.model_construct(
        blocks=[bad_block(**fields) for fields in blocks], file_blocks=[], git_enabled=True
    )
    assert rust == reference
    assert rust == outcome(letta_memory.compile)
