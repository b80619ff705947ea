"""Hostile Python objects (legal ones, no ctypes): what memprompt returns or raises is what the
reference does (and letta 0.16.8: tests/letta_diff/test_hostile_letta.py), no stale compile,
no leaked cycle."""

from __future__ import annotations

import gc
import weakref

import pytest
from outcome import assert_same
from strategies import Answer

import memprompt as mp
from memprompt import reference as ref
from memprompt.memory import render_in_reference
from memprompt.types import Block, LLMConfig, Source


class Loose:
    """A block of no tracked class, with whatever attributes it is given."""

    def __init__(self, label="notes", value="v", description=None, limit=10, **more):
        self.label, self.value, self.description, self.limit = label, value, description, limit
        self.__dict__.update(more)


class Truth:
    """Truthy or not, as told."""

    def __init__(self, truth: bool, **attributes):
        self.truth = truth
        self.__dict__.update(attributes)

    def __bool__(self):
        return self.truth


def fields(memory):
    return memory.blocks, memory.file_blocks, memory.agent_type, memory.git_enabled


def same_as_fresh(memory, **compile_kwargs):
    """The memory's (maybe cached) compile is a fresh memory's and the reference's."""
    assert_same(lambda: memory.compile(**compile_kwargs), lambda: mp.Memory(*fields(memory)).compile(**compile_kwargs))
    assert_same(lambda: memory.compile(**compile_kwargs), lambda: ref.Memory(*fields(memory)).compile(**compile_kwargs))


# --- stale compile: two memories, one record ------------------------------------------


@pytest.mark.parametrize("block", [Loose, Block], ids=["untracked", "tracked"])
def test_a_git_label_that_is_the_old_agent_type_is_not_the_old_compile(block):
    agent_type, system = "memgpt_agent", block(label="system/human", value="v", description=None, limit=1)
    memory = mp.Memory(
        [block(label="notes", value="", description=None, limit=1), system], agent_type=agent_type, git_enabled=True
    )
    memory.compile()
    memory.agent_type = None
    memory.blocks = [block(label=agent_type, value="", description=None, limit=1), *memory.blocks]
    same_as_fresh(memory)
    assert "memgpt_agent.md" in memory.compile()


def test_another_agent_type_read_where_a_value_was_is_not_the_old_compile():
    class Kind:
        value = "memgpt_v2_agent"

    memory = mp.Memory([Loose()], agent_type=Kind())
    anthropic = LLMConfig("anthropic")
    memory.compile(llm_config=anthropic)
    memory.agent_type = "memgpt_v2_agent"
    same_as_fresh(memory, llm_config=anthropic)


# --- stale compile: what the render depends on and the record did not hold -------------


@pytest.mark.parametrize("block", [Loose, Block], ids=["untracked", "tracked"])
def test_an_endpoint_whose_eq_changes_is_compared_again(block):
    endpoint = Answer(True)
    memory, config = (
        mp.Memory([block(label="human", value="a\nb", description=None, limit=5)], agent_type="letta_v1_agent"),
        LLMConfig(endpoint),
    )
    for answer in (True, False, True):
        endpoint.answer = answer
        same_as_fresh(memory, llm_config=config)
    assert "1→ a" in memory.compile(llm_config=config)


def test_an_llm_config_whose_truth_changes_is_asked_again():
    config = Truth(True, model_endpoint_type="anthropic")
    memory = mp.Memory([Block(value="a", label="human", limit=5)], agent_type="memgpt_v2_agent")
    for truth in (True, False, True, False):
        config.truth = truth
        same_as_fresh(memory, llm_config=config)


def test_an_endpoint_whose_comparison_answers_an_object_that_changes_truth_is_asked_again():
    answer = Truth(True)

    class Endpoint:
        def __eq__(self, other):
            return answer

        __hash__ = object.__hash__

    memory, config = (
        mp.Memory([Block(value="a", label="human", limit=5)], agent_type="sleeptime_agent"),
        LLMConfig(Endpoint()),
    )
    for truth in (True, False, True):
        answer.truth = truth
        same_as_fresh(memory, llm_config=config)


def test_sources_whose_truth_changes_are_asked_again():
    class Sources(list):
        truth = True

        def __bool__(self):
            return self.truth

    sources = Sources([Source(id="source-1", name="docs")])
    file_block = Loose(label="f.txt", value="x", source_id="source-1")
    memory = mp.Memory([Block(value="a", label="human", limit=5)], file_blocks=[file_block])
    for truth in (True, False, True):
        Sources.truth = truth
        same_as_fresh(memory, sources=sources, max_files_open=3)


def test_an_agent_type_without_a_value_whose_truth_changes_is_asked_again():
    agent_type = Truth(False)
    memory = mp.Memory([Block(value="a", label="human", limit=5)], agent_type=agent_type)
    for truth in (False, True, False):
        agent_type.truth = truth
        same_as_fresh(memory)


# --- leak: cycles through a memory ---------------------------------------------------------


def collected(make_cycle) -> bool:
    """Whether the memory `make_cycle` returns, in a cycle and unreferenced, is collected."""
    gc.collect()
    memory = make_cycle()
    memory.compile()
    gone = weakref.ref(memory)
    del memory
    gc.collect()
    return gone() is None


def a_block_holding_its_memory():
    memory = mp.Memory([])
    memory.blocks = [Loose(memory=memory)]
    return memory


def an_agent_type_holding_its_memory():
    class Kind:
        value = "memgpt_agent"

    memory = mp.Memory([Block(value="a", label="human", limit=5)], agent_type=Kind())
    memory.agent_type.memory = memory
    return memory


def a_file_block_holding_its_memory():
    memory = mp.Memory([])
    memory.file_blocks = [Loose(label="f.txt", memory=memory)]
    return memory


def a_subclass_instance_dict_holding_itself():
    class Mine(mp.Memory):
        pass

    memory = Mine([Block(value="a", label="human", limit=5)])
    memory.me = memory
    return memory


def a_blocks_list_holding_its_memory():
    memory = mp.Memory([Block(value="a", label="human", limit=5)])
    memory.blocks = [*memory.blocks]
    memory.blocks.append(Loose(label="x"))
    memory.blocks[-1].memory = memory
    return memory


@pytest.mark.parametrize(
    "make_cycle",
    [
        a_block_holding_its_memory,
        an_agent_type_holding_its_memory,
        a_file_block_holding_its_memory,
        a_subclass_instance_dict_holding_itself,
        a_blocks_list_holding_its_memory,
    ],
)
def test_a_cycle_through_a_memory_is_collected(make_cycle):
    assert collected(make_cycle)


def test_a_cycle_through_the_cache_of_tracked_objects_is_collected():
    # The fast proof holds the blocks list and the blocks themselves; the list holds the memory's cycle.
    def make():
        memory = mp.Memory([Block(value="a", label="human", limit=5)])
        memory.compile()
        memory.compile()
        memory.extra = [memory]
        return memory

    assert collected(make)


def test_a_hand_off_to_the_reference_shows_its_memory_to_the_collector():
    memory = mp.Memory([Loose(label="system/__value__", value="v")], git_enabled=True)
    kept = []

    def keep(hand_off):
        kept.append(hand_off)
        return render_in_reference(hand_off)

    import memprompt._core as core

    core.set_reference_renderer(keep)
    try:
        memory.compile()
    finally:
        core.set_reference_renderer(render_in_reference)
    assert memory in gc.get_referents(kept[0])


# --- wrong output: tool rules whose render_prompt is not Letta's (Letta's own: tests/letta_diff) ---


def look_alike_terminal():
    """A stand-in of Letta's TerminalToolRule (its module's name, no render_prompt of its own)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    return type("TerminalToolRule", (), {"__init__": __init__, "__module__": "letta.schemas.tool_rule"})


def rule_prompts(rules):
    texts = []
    for compile_rules in (mp.compile_tool_rule_prompts, ref.tool_rules.compile_tool_rule_prompts):
        block = compile_rules(rules)
        texts.append(None if block is None else block.value)
    assert texts[0] == texts[1]
    return texts[0]


def test_a_rule_class_keeping_lettas_name_and_module_with_its_own_render_prompt_is_called():
    base = look_alike_terminal()
    own = type("TerminalToolRule", (base,), {"render_prompt": lambda self: "mine", "__module__": base.__module__})
    assert rule_prompts([own(type="exit_loop", tool_name="t")]) == "mine"
    assert "t ends your response" in rule_prompts([base(type="exit_loop", tool_name="t")])


def test_a_render_prompt_on_the_rule_itself_is_called():
    rule = look_alike_terminal()(type="exit_loop", tool_name="t")
    assert "t ends your response" in rule_prompts([rule])
    rule.render_prompt = lambda: "the instance's"
    assert rule_prompts([rule]) == "the instance's"


def test_a_rule_class_patched_between_calls_is_called():
    cls = look_alike_terminal()
    rules = [cls(type="exit_loop", tool_name="t")]
    assert "t ends your response" in rule_prompts(rules)
    cls.render_prompt = lambda self: "patched"
    assert rule_prompts(rules) == "patched"
    del cls.render_prompt
    assert "t ends your response" in rule_prompts(rules)


# --- wrong error: several bad fields, the first failing read in Letta's order ------------


class Raising(Exception):
    pass


def block_with(**fields):
    """A block whose fields named "raises" are properties that raise, the others values."""
    values = {"label": "human", "value": "v", "description": None, "limit": 10, **fields}

    def raising(name):
        def get(self):
            raise Raising(name)

        return property(get)

    cls = type("Bad", (), {name: raising(name) for name, v in values.items() if v == "raises"})
    block = cls()
    for name, value in values.items():
        if value != "raises":
            setattr(block, name, value)
    return block


@pytest.mark.parametrize(
    "fields",
    [
        {"value": 5, "description": "raises"},
        {"label": 3, "value": "raises"},
        {"label": 3, "limit": "raises"},
        {"description": 7, "limit": "raises"},
        {"value": 5, "description": 7},
        {"limit": "ten", "read_only": "raises"},
    ],
    ids=str,
)
@pytest.mark.parametrize("kind", ["block", "file block"])
def test_several_bad_fields_raise_what_is_read_first(fields, kind):
    def compile_with(memory_class):
        if kind == "block":
            return memory_class([block_with(**fields)], agent_type="memgpt_v2_agent").compile(
                llm_config=LLMConfig("anthropic")
            )
        file_block = block_with(source_id="source-1", **fields)
        memory = memory_class([], file_blocks=[file_block])
        return memory.compile(sources=[Source(id="source-1", name="docs")])

    assert_same(lambda: compile_with(mp.Memory), lambda: compile_with(ref.Memory))
    with pytest.raises((Raising, TypeError)):
        compile_with(mp.Memory)


GIT_BAD = [
    [{"label": "system/notes", "description": "raises"}, {"label": "system/persona", "value": "raises"}],
    [{"label": "system/a", "value": 5}, {"label": "system/b", "description": "raises"}],
    [{"label": "system/a", "description": "raises"}, {"label": "raises"}],
    [{"label": "system/a", "value": "raises"}, {"label": "system/b", "description": 4}],
]


@pytest.mark.parametrize("blocks", GIT_BAD, ids=str)
def test_git_memory_raises_what_lettas_read_order_meets_first(blocks):
    """Letta's git memory reads every label, then the persona's value, then each other block's
    description and value, and uses the values last."""

    def compile_with(memory_class):
        return memory_class([block_with(**fields) for fields in blocks], git_enabled=True).compile()

    assert_same(lambda: compile_with(mp.Memory), lambda: compile_with(ref.Memory))
    with pytest.raises((Raising, TypeError)):
        compile_with(mp.Memory)
