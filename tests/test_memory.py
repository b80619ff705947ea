"""Memory.compile and its views: the Rust core equals the reference, in every mode."""

import copy
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st
from outcome import assert_same
from strategies import MODES, blocks, client_skills, memories

import memprompt as mp
from memprompt import reference as ref
from memprompt.memory import render_in_reference


@pytest.mark.parametrize("mode", MODES)
@given(data=st.data())
def test_compile_equals_reference(mode, data):
    memory_kwargs, compile_kwargs = data.draw(memories(mode))
    assert_same(
        lambda: mp.Memory(**memory_kwargs).compile(**compile_kwargs),
        lambda: ref.Memory(**memory_kwargs).compile(**compile_kwargs),
    )


@given(memories())
def test_compile_with_fingerprint_equals_reference(args):
    memory_kwargs, compile_kwargs = args
    compiled = assert_same(
        lambda: mp.Memory(**memory_kwargs).compile_with_fingerprint(**compile_kwargs),
        lambda: ref.Memory(**memory_kwargs).compile_with_fingerprint(**compile_kwargs),
    )
    if isinstance(compiled, mp.Compiled):
        assert compiled.fingerprint == ref.fingerprint(compiled.text)
        for name, (start, end) in compiled.sections.items():
            assert compiled.text[start:end].startswith(f"<{name}>")
            assert compiled.text[start:end].endswith(f"</{name}>")


@given(blocks(), st.one_of(st.none(), client_skills()))
def test_available_skills_equal_reference(block_list, skills):
    assert_same(
        lambda: mp.Memory(block_list).compile_available_skills(skills),
        lambda: ref.Memory(block_list).compile_available_skills(skills),
    )


@given(blocks(), st.one_of(st.none(), client_skills()))
def test_tree_view_equals_reference(block_list, skills):
    assert_same(
        lambda: mp.Memory(block_list).render_memory_filesystem(skills),
        lambda: ref.Memory(block_list).render_memory_filesystem(skills),
    )


class Shrinking:
    """A block whose label, when read, removes the last block of the list it is in."""

    def __init__(self, label, holder):
        self._label, self.holder = label, holder
        self.value, self.description, self.limit, self.read_only = "v", "d", 10, False

    @property
    def label(self):
        if len(self.holder) > 1:
            self.holder.pop()
        return self._label


class Backwards(list):
    """A list subclass that iterates its items in reverse."""

    def __iter__(self):
        return iter(list(super().__iter__())[::-1])


def test_a_list_of_blocks_shrunk_while_it_is_read_is_read_as_python_reads_it():
    def memory(kind):
        holder = []
        holder += [Shrinking(f"skills/s{i}", holder) for i in range(5)]
        made = kind.Memory([], [], "letta_v1_agent", True)
        made.blocks = holder
        return made

    for view in ("compile_available_skills", "render_memory_filesystem"):
        expected = getattr(memory(ref), view)()
        assert expected.count("s0") == 1 and "s4" not in expected
        assert_same(lambda: getattr(memory(mp), view)(), lambda: expected)


def test_a_list_subclass_of_blocks_is_read_in_its_own_iteration_order():
    blocks = [mp.Block(label=f"skills/s{i}", value="v", description=f"d{i}") for i in range(3)]
    for view in ("compile_available_skills", "render_memory_filesystem"):
        mine, theirs = mp.Memory([], [], "letta_v1_agent", True), ref.Memory([], [], "letta_v1_agent", True)
        mine.blocks, theirs.blocks = Backwards(blocks), Backwards(blocks)
        assert_same(lambda: getattr(mine, view)(), lambda: getattr(theirs, view)())
    # The skills listing keeps the first block of a name: the order decides which.
    same_name = [mp.Block(label="skills/x", value="v", description=d) for d in ("first", "last")]
    mine = mp.Memory([], [], "letta_v1_agent", True)
    mine.blocks = Backwards(same_name)
    assert "(last)" in mine.compile_available_skills()


# Every input a compile reads, edited in place or replaced: (what, which item, new text).
EDIT_KINDS = (
    "value", "label", "description", "limit", "read_only", "append", "drop", "set_block", "update_block_value",
    "new_blocks_list", "agent_type", "git_enabled", "file_value", "file_label", "file_source_id", "new_file_blocks",
    "source_name", "source_description", "source_id", "add_source", "rules_value", "endpoint", "max_files_open",
    "nothing",
)  # fmt: skip
EDITS = st.lists(st.tuples(st.sampled_from(EDIT_KINDS), st.integers(0, 7), st.text(max_size=8)), max_size=12)


def _edit(memory, compile_kwargs, kind, index, text):
    """One edit of the memory or of an object its compile reads."""

    def pick(items):
        return items[index % len(items)] if items else None

    block, file_block, source = pick(memory.blocks), pick(memory.file_blocks), pick(compile_kwargs["sources"] or [])
    if kind in ("value", "label", "description") and block is not None:
        setattr(block, kind, text)
    elif kind == "limit" and block is not None:
        block.limit = len(text)
    elif kind == "read_only" and block is not None:
        block.read_only = not getattr(block, "read_only", False)
    elif kind == "append":
        memory.blocks.append(mp.Block(text, "extra"))
    elif kind == "drop" and memory.blocks:
        memory.blocks.pop(index % len(memory.blocks))
    elif kind == "set_block":
        memory.set_block(mp.Block(text, block.label if block is not None else "new"))
    elif kind == "update_block_value" and block is not None and isinstance(block.label, str):
        memory.update_block_value(block.label, text)
    elif kind == "new_blocks_list":
        memory.blocks = list(memory.blocks)
    elif kind == "agent_type":
        memory.agent_type = text or None
    elif kind == "git_enabled":
        memory.git_enabled = not memory.git_enabled
    elif kind == "file_value" and file_block is not None:
        file_block.value = text
    elif kind == "file_label" and file_block is not None:
        file_block.label = text
    elif kind == "file_source_id" and file_block is not None:
        file_block.source_id = text or None
    elif kind == "new_file_blocks":
        memory.file_blocks = [*memory.file_blocks, mp.FileBlock(text, f"file-{text}", source_id="source-1")]
    elif kind == "source_name" and source is not None:
        source.name = text
    elif kind == "source_description" and source is not None:
        source.description = text or None
    elif kind == "source_id" and source is not None:
        source.id = text or None
    elif kind == "add_source" and compile_kwargs["sources"] is not None:
        compile_kwargs["sources"].append(mp.Source("source-2", text))
    elif kind == "rules_value" and compile_kwargs["tool_usage_rules"] is not None:
        compile_kwargs["tool_usage_rules"].value = text
    elif kind == "endpoint" and compile_kwargs["llm_config"] is not None:
        compile_kwargs["llm_config"].model_endpoint_type = "anthropic" if index % 2 else text
    elif kind == "max_files_open":
        compile_kwargs["max_files_open"] = index


def _private_config(config):
    """A private copy of a (shared) LLM config, so that edits stay in this example."""
    if isinstance(config, mp.LLMConfig):
        return mp.LLMConfig(config.model_endpoint_type)
    return None if config is None else type(config)()


def _as_own_types(memory_kwargs, compile_kwargs):
    """The same inputs as memprompt's own classes (and a plain str agent type), whose writes are counted."""

    def block(b, cls=mp.Block, **extra):
        return cls(b.value, b.label, b.description, b.limit, getattr(b, "read_only", False), **extra)

    def source(s):
        fields = ("id", "name", "description", "instructions")
        return mp.Source(*(getattr(s, f, None) for f in fields))

    agent_type = memory_kwargs["agent_type"]
    rules = compile_kwargs["tool_usage_rules"]
    config = compile_kwargs["llm_config"]
    memory_kwargs = {
        **memory_kwargs,
        "blocks": [block(b) for b in memory_kwargs["blocks"]],
        "file_blocks": [
            block(b, mp.FileBlock, source_id=getattr(b, "source_id", None)) for b in memory_kwargs["file_blocks"]
        ],
        "agent_type": getattr(agent_type, "value", agent_type),
    }
    compile_kwargs = {
        **compile_kwargs,
        "tool_usage_rules": None
        if rules is None
        else mp.ToolUsageRules(getattr(rules, "description", None), getattr(rules, "value", None)),
        "sources": None if compile_kwargs["sources"] is None else [source(s) for s in compile_kwargs["sources"]],
        "llm_config": None if config is None else mp.LLMConfig(getattr(config, "model_endpoint_type", None)),
    }
    return memory_kwargs, compile_kwargs


@given(memories(), EDITS, st.booleans())
def test_cached_recompile_equals_fresh_render(args, edits, own_types):
    """After any edit, to memprompt's own objects or to look-alikes, a recompile equals a fresh render."""
    memory_kwargs, compile_kwargs = args
    if own_types:
        # The cache's fast proof (edit counts) then covers every input.
        memory_kwargs, compile_kwargs = _as_own_types(memory_kwargs, compile_kwargs)
    else:
        compile_kwargs = {**compile_kwargs, "llm_config": _private_config(compile_kwargs["llm_config"])}
    memory = mp.Memory(**memory_kwargs)

    def fresh():
        # The same memory rendered anew: a new Memory would drop file blocks renamed to a label in use,
        # which Letta (and memprompt) do only when file_blocks is assigned.
        memory.clear_cache()
        return memory.compile(**compile_kwargs)

    assert_same(lambda: memory.compile(**compile_kwargs), fresh)
    for kind, index, text in edits:
        _edit(memory, compile_kwargs, kind, index, text)
        assert_same(lambda: memory.compile(**compile_kwargs), fresh)
        assert_same(lambda: memory.compile(**compile_kwargs), fresh)


def test_a_block_shared_by_two_memories_is_seen_by_both():
    shared = mp.Block("old", "human")
    first, second = mp.Memory([shared]), mp.Memory([shared, mp.Block("x", "persona")])
    first.compile(), second.compile()
    shared.value = "new"
    assert "\nnew\n" in first.compile() and "\nnew\n" in second.compile()


def test_an_edit_elsewhere_keeps_the_result():
    memory, other = mp.Memory([mp.Block("v", "human")]), mp.Block("x", "other")
    first = memory.compile()
    other.value = "y"  # counted, so the fast proof fails; the full proof still finds nothing changed
    assert memory.compile() is first


class ComputedBlock(mp.Block):
    """A subclass whose value changes without an attribute write: never trusted by edit count."""

    __slots__ = ("source",)

    def __init__(self, source, label):
        super().__init__("", label)
        self.source = source

    @property
    def value(self):
        return self.source[0]

    @value.setter
    def value(self, _):
        pass


def test_a_subclass_with_computed_fields_is_read_every_time():
    source = ["one"]
    memory = mp.Memory([ComputedBlock(source, "human")])
    assert "\none\n" in memory.compile()
    source[0] = "two"
    assert "\ntwo\n" in memory.compile()


class Shouting(mp.Block):
    """The same layout as Block, so that a block can be switched to it by assigning ``__class__``."""

    __slots__ = ()

    @property
    def description(self):
        return "SHOUTED"


def test_a_class_switch_is_seen():
    block = mp.Block("v", "human", "quiet")
    memory = mp.Memory([block])
    assert "quiet" in memory.compile()
    block.__class__ = Shouting
    assert "SHOUTED" in memory.compile()


def test_a_change_to_a_tracked_class_is_seen(monkeypatch):
    memory = mp.Memory([mp.Block("v", "human", "quiet")])
    assert "quiet" in memory.compile()
    monkeypatch.setattr(mp.Block, "description", property(lambda self: "patched"))
    assert "patched" in memory.compile()


def test_copies_and_pickles_compile_the_same():
    memory = mp.Memory([mp.Block("v", "human")], [mp.FileBlock("f", "a.txt", source_id="s")], "memgpt_v2_agent", False)
    memory.note = "kept"
    expected = memory.compile(sources=[mp.Source("s", "docs")])
    for copied in (copy.copy(memory), copy.deepcopy(memory), pickle.loads(pickle.dumps(memory))):
        assert type(copied) is mp.Memory and copied.note == "kept"
        assert copied.compile(sources=[mp.Source("s", "docs")]) == expected
    deep = copy.deepcopy(memory)
    deep.blocks[0].value = "changed"
    assert memory.compile(sources=[mp.Source("s", "docs")]) == expected


def test_clear_cache_renders_again():
    memory = mp.Memory([mp.Block("v", "human")])
    first = memory.compile()
    memory.clear_cache()
    again = memory.compile()
    assert again == first and again is not first


def test_cache_hit_returns_the_same_object():
    memory = mp.Memory([mp.Block("v", "human")])
    first = memory.compile()
    assert memory.compile() is first
    memory.update_block_value("human", "w")
    assert memory.compile() is not first and "\nw\n" in memory.compile()


# --- the hand-off to the reference --------------------------------------------------------------


def test_reserved_git_labels_are_handed_to_the_reference_and_render_as_it_does():
    reserved = [mp.Block("v", "system/a/__value__/b"), mp.Block("p", "system/persona")]
    args = (mp.ToolUsageRules("d", "v"), None, None, None, None)
    memory = mp.Memory(reserved, git_enabled=True)
    hand_offs = []
    mp._core.set_reference_renderer(hand_offs.append)
    try:
        memory.compile(*args)
        memory.compile_with_fingerprint(*args)
    finally:
        mp._core.set_reference_renderer(render_in_reference)
    assert [type(h) for h in hand_offs] == [mp._core.ReferenceRender] * 2
    assert [(h.memory, h.method, h.args) for h in hand_offs] == [
        (memory, "compile", args),
        (memory, "compile_with_fingerprint", args),
    ]
    expected = ref.Memory(reserved, git_enabled=True)
    assert memory.compile(*args) == expected.compile(*args)
    assert memory.compile_with_fingerprint(*args) == expected.compile_with_fingerprint(*args)
    assert "{'b': {'__value__': 'v', '__description__': '', '__label__': 'system/a/__value__/b'}}" in memory.compile()


def test_a_subclass_is_handed_off_too():
    class Named(mp.Memory):
        pass

    reserved = [mp.Block("v", "system/__label__")]
    memory = Named(reserved, git_enabled=True)
    assert memory.compile() == ref.Memory(reserved, git_enabled=True).compile()
