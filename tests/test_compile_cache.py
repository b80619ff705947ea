"""The compile cache's record of reads: a memory changed in one read since its last compile
compiles as a fresh memory of the same fields does (and as the reference does)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from strategies import AGENT_TYPES, Answer, FalsyConfig, LocalAgentType

import memprompt as mp
from memprompt import reference as ref
from memprompt.types import Block, LLMConfig

LABELS = ("human", "persona", "system/human", "system/persona", "system/notes/a", "notes", "memgpt_agent", "system")
VALUES = ("", "a", "two\nlines", None)
DESCRIPTIONS = (None, "", "about")
LIMITS = (None, 0, 5)
FLAGS = (True, False, 0, 1, None)
AGENT_TYPE_CHOICES = (None, "", *AGENT_TYPES, *LocalAgentType)
LLM_CONFIGS = (None, LLMConfig("anthropic"), LLMConfig("openai"), LLMConfig(None), FalsyConfig())
MISSING = object()


class Plain:
    """A block of no tracked class: the cache proves it unchanged by its values alone."""

    def __init__(self, label, value, description, limit):
        self.label, self.value, self.description, self.limit = label, value, description, limit


@st.composite
def new_block(draw, tracked: bool):
    label, value = draw(st.sampled_from(LABELS)), draw(st.sampled_from(VALUES))
    description, limit = draw(st.sampled_from(DESCRIPTIONS)), draw(st.sampled_from(LIMITS))
    read_only = draw(st.sampled_from((*FLAGS, MISSING)))
    block = (
        Block(value=value, label=label, description=description, limit=limit)
        if tracked
        else Plain(label, value, description, limit)
    )
    if read_only is MISSING:
        if tracked:
            del block.read_only
    else:
        block.read_only = read_only
    return block


def change_agent_type(data, memory, llm_config, tracked):
    memory.agent_type = data.draw(st.sampled_from(AGENT_TYPE_CHOICES), label="agent_type")
    return llm_config


def change_git(data, memory, llm_config, tracked):
    memory.git_enabled = not memory.git_enabled
    return llm_config


def change_llm_config(data, memory, llm_config, tracked):
    if isinstance(llm_config, LLMConfig) and data.draw(st.booleans(), label="in place"):
        llm_config.model_endpoint_type = data.draw(st.sampled_from(("anthropic", "openai", None)))
        return llm_config
    return data.draw(st.sampled_from(LLM_CONFIGS), label="llm_config")


def change_block_field(data, memory, llm_config, tracked):
    """A flag (read_only) or a value of one block, written in place."""
    if memory.blocks:
        block = data.draw(st.sampled_from(memory.blocks), label="block")
        field, choices = data.draw(st.sampled_from((("read_only", FLAGS), ("value", VALUES))), label="field")
        setattr(block, field, data.draw(st.sampled_from(choices), label=field))
    return llm_config


def change_presence(data, memory, llm_config, tracked):
    if memory.blocks:
        block = data.draw(st.sampled_from(memory.blocks), label="block")
        if hasattr(block, "read_only"):
            del block.read_only
        else:
            block.read_only = True
    return llm_config


def change_count(data, memory, llm_config, tracked):
    blocks = memory.blocks
    if blocks and data.draw(st.booleans(), label="remove"):
        del blocks[data.draw(st.integers(0, len(blocks) - 1), label="at")]
    else:
        blocks.insert(data.draw(st.integers(0, len(blocks)), label="at"), data.draw(new_block(tracked)))
    return llm_config


def label_as_old_agent_type(data, memory, llm_config, tracked):
    """The old agent type leaves the memory and comes back as the (same object) label of a new block."""
    old = memory.agent_type
    if isinstance(old, str):
        memory.agent_type = None
        block = data.draw(new_block(tracked))
        block.label = old
        memory.blocks.insert(0, block)
    return llm_config


def change_endpoint_answer(data, memory, llm_config, tracked):
    """The same config and endpoint object, whose comparison now answers otherwise."""
    endpoint = getattr(llm_config, "model_endpoint_type", None)
    if isinstance(endpoint, Answer):
        endpoint.answer = not endpoint.answer
        return llm_config
    return LLMConfig(Answer(data.draw(st.booleans(), label="answer")))


CHANGES = (
    change_agent_type,
    change_git,
    change_llm_config,
    change_block_field,
    change_presence,
    change_count,
    label_as_old_agent_type,
    change_endpoint_answer,
)


def compile_all(memory, llm_config):
    fields = (memory.blocks, memory.file_blocks, memory.agent_type, memory.git_enabled)
    return (
        memory.compile(llm_config=llm_config),
        mp.Memory(*fields).compile(llm_config=llm_config),
        ref.Memory(*fields).compile(llm_config=llm_config),
    )


@given(data=st.data())
def test_a_memory_changed_in_one_read_compiles_as_a_fresh_one(data):
    tracked = data.draw(st.booleans(), label="tracked")
    blocks = data.draw(st.lists(new_block(tracked), max_size=5), label="blocks")
    agent_type = data.draw(st.sampled_from(AGENT_TYPE_CHOICES), label="agent_type")
    memory = mp.Memory(blocks, agent_type=agent_type, git_enabled=data.draw(st.booleans(), label="git"))
    llm_config = data.draw(st.sampled_from(LLM_CONFIGS), label="llm_config")
    for change in data.draw(st.lists(st.sampled_from(CHANGES), min_size=1, max_size=3), label="changes"):
        cached, fresh, reference = compile_all(memory, llm_config)
        assert cached == fresh == reference
        assert memory.compile(llm_config=llm_config) == fresh, "the same memory again"
        llm_config = change(data, memory, llm_config, tracked)
    cached, fresh, reference = compile_all(memory, llm_config)
    assert cached == fresh == reference


@given(data=st.data())
def test_a_label_that_is_the_old_agent_type_compiles_as_a_fresh_memory(data):
    """Git memory reads every label: an agent type gone and back as a label is another record."""
    tracked = data.draw(st.booleans(), label="tracked")
    system = data.draw(new_block(tracked), label="system block")
    system.label = data.draw(st.sampled_from(("system/human", "system/notes/a")), label="system label")
    blocks = [system, *data.draw(st.lists(new_block(tracked), max_size=3), label="blocks")]
    agent_type = data.draw(st.sampled_from(AGENT_TYPES), label="agent_type")
    memory = mp.Memory(blocks, agent_type=agent_type, git_enabled=True)
    assert memory.compile() == mp.Memory(blocks, agent_type=agent_type, git_enabled=True).compile()
    label_as_old_agent_type(data, memory, None, tracked)
    cached, fresh, reference = compile_all(memory, None)
    assert cached == fresh == reference
