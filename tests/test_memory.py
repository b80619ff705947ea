"""Memory.compile and its views: the Rust core equals the reference, in every mode."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from outcome import assert_same
from strategies import MODES, blocks, client_skills, memories

import memprompt as mp
from memprompt import reference as ref


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


EDITS = st.lists(
    st.tuples(st.sampled_from(("value", "label", "description", "limit", "read_only", "append", "drop", "set_block", "agent_type", "nothing")), st.integers(0, 7), st.text(max_size=8)),
    max_size=12,
)


@given(memories(), EDITS)
def test_cached_recompile_equals_fresh_render(args, edits):
    memory_kwargs, compile_kwargs = args
    memory_kwargs = {**memory_kwargs, "blocks": [mp.Block(b.value, b.label, b.description, b.limit) for b in memory_kwargs["blocks"]]}
    memory = mp.Memory(**memory_kwargs)

    def fresh():
        return mp.Memory(list(memory.blocks), memory.file_blocks, memory.agent_type, memory.git_enabled).compile(**compile_kwargs)

    assert_same(lambda: memory.compile(**compile_kwargs), fresh)
    for kind, index, text in edits:
        target = memory.blocks[index % len(memory.blocks)] if memory.blocks else None
        if kind in ("value", "label", "description") and target is not None:
            setattr(target, kind, text)
        elif kind == "limit" and target is not None:
            target.limit = len(text)
        elif kind == "read_only" and target is not None:
            target.read_only = not target.read_only
        elif kind == "append":
            memory.blocks.append(mp.Block(text, "extra"))
        elif kind == "drop" and memory.blocks:
            memory.blocks.pop(index % len(memory.blocks))
        elif kind == "set_block":
            memory.set_block(mp.Block(text, target.label if target is not None else "new"))
        elif kind == "agent_type":
            memory.agent_type = text or None
        assert_same(lambda: memory.compile(**compile_kwargs), fresh)
        assert_same(lambda: memory.compile(**compile_kwargs), fresh)


def test_cache_hit_returns_the_same_object():
    memory = mp.Memory([mp.Block("v", "human")])
    first = memory.compile()
    assert memory.compile() is first
    memory.update_block_value("human", "w")
    assert memory.compile() is not first and "\nw\n" in memory.compile()
