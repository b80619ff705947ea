"""Memory.compile in every mode, the available skills, the filesystem tree, and Memory's helpers."""

from __future__ import annotations

from functools import partial
from io import StringIO
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from letta_bridge import LettaMemory, assert_same, letta_block, letta_file_block, letta_kwargs, letta_memory, ref
from strategies import MODES, blocks, client_skills, file_blocks, labels, memories, source, texts

import memprompt as mp
from memprompt.types import Block, ClientSkill

GIT_RESERVED = {"__value__", "__description__", "__label__"}


def _label_parts(label: str) -> list[str]:
    return [part for part in label.split("/") if part]


def check_compile(memory_kwargs: dict, compile_kwargs: dict) -> None:
    letta = letta_memory(**memory_kwargs)
    for kwargs in (memory_kwargs, letta_kwargs(memory_kwargs)):
        reference = ref.Memory(**kwargs)
        assert_same(partial(reference.compile, **compile_kwargs), partial(letta.compile, **compile_kwargs))


@given(memories())
def test_compile_any_mode(case):
    check_compile(*case)


@pytest.mark.parametrize("mode", [m for m in MODES if m != "any"])
@given(data=st.data())
def test_compile_each_mode(mode, data):
    check_compile(*data.draw(memories(mode=mode)))


@given(memories(mode="git"))
def test_compile_git_without_reserved_names(case):
    memory_kwargs, compile_kwargs = case
    memory_kwargs["blocks"] = [
        b for b in memory_kwargs["blocks"] if not (GIT_RESERVED & set(_label_parts(b.label or "")))
    ]
    check_compile(memory_kwargs, compile_kwargs)


@given(blocks(), st.one_of(st.none(), client_skills()))
def test_available_skills(memory_blocks, skills):
    letta = letta_memory(memory_blocks)
    for reference in (ref.Memory(memory_blocks), ref.Memory([letta_block(b) for b in memory_blocks])):
        assert_same(
            partial(reference.compile_available_skills, skills), partial(letta.compile_available_skills, skills)
        )


@given(blocks(), st.one_of(st.none(), st.just([]), client_skills()))
def test_memory_filesystem(memory_blocks, skills):
    letta = letta_memory(memory_blocks)

    def letta_render():
        out = StringIO()
        letta._render_memory_filesystem(out, client_skills=skills)
        return out.getvalue()

    for reference in (ref.Memory(memory_blocks), ref.Memory([letta_block(b) for b in memory_blocks])):
        assert_same(partial(reference.render_memory_filesystem, skills), letta_render)


class _Recorded:
    """A block whose description, when read, records the block's place in the list."""

    def __init__(self, block: Block, index: int, log: list[int]) -> None:
        self.label, self._description, self._index, self._log = block.label, block.description, index, log

    @property
    def description(self) -> str | None:
        self._log.append(self._index)
        return self._description


@given(blocks(max_size=12), st.one_of(st.none(), client_skills()))
def test_memory_filesystem_reads_the_descriptions_letta_reads(memory_blocks, skills):
    """The tree view reads the description of exactly the blocks Letta's reads (the files it
    shows outside a ``system`` directory and the skills), each once, in list order."""
    read = {}
    for name, render in {
        "letta": lambda blocks: LettaMemory._render_memory_filesystem(
            SimpleNamespace(blocks=blocks), StringIO(), client_skills=skills
        ),
        "reference": lambda blocks: ref.Memory(blocks).render_memory_filesystem(skills),
        "memprompt": lambda blocks: mp.Memory(blocks).render_memory_filesystem(skills),
    }.items():
        log: list[int] = []
        render([_Recorded(block, i, log) for i, block in enumerate(memory_blocks)])
        read[name] = log
    assert read["reference"] == read["memprompt"] == sorted(read["letta"])
    assert len(set(read["letta"])) == len(read["letta"])


class _RecordedFile:
    """A file block whose fields, when read, record the block's place and the field's name;
    a field its block lacks is missing here too."""

    def __init__(self, block, index: int, log: list[tuple[int, str]]) -> None:
        fields = ("label", "value", "description", "limit", "read_only", "source_id")
        self._fields = {name: getattr(block, name) for name in fields if hasattr(block, name)}
        self._index, self._log = index, log

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in self._fields:
            raise AttributeError(name)
        self._log.append((self._index, name))
        return self._fields[name]


@given(
    file_blocks(max_size=8),
    st.lists(source(), min_size=1, max_size=3),
    st.one_of(st.none(), st.integers(0, 5)),
    st.sampled_from([None, "react_agent"]),
)
def test_directories_read_the_file_block_fields_letta_reads(memory_file_blocks, memory_sources, limit, agent_type):
    """Which fields of which file blocks are read: the same as Letta's directories."""
    kept = ref.Memory([], memory_file_blocks).file_blocks
    render = LettaMemory._render_directories_react if agent_type else LettaMemory._render_directories_common
    read = {}
    for name in ("letta", "reference", "memprompt"):
        log: list[tuple[int, str]] = []
        files = [_RecordedFile(block, i, log) for i, block in enumerate(kept)]
        if name == "letta":
            render(SimpleNamespace(file_blocks=files), StringIO(), memory_sources, limit)
        else:
            memory = (ref if name == "reference" else mp).Memory([], files, agent_type=agent_type)
            log.clear()  # the constructor reads every label, as Letta's validator does
            memory.compile(sources=memory_sources, max_files_open=limit)
        read[name] = set(log)
    assert read["reference"] == read["memprompt"] == read["letta"]


@given(file_blocks(max_size=10))
def test_file_blocks_keep_first_of_each_label(memory_file_blocks):
    letta = letta_memory([], memory_file_blocks)
    reference = ref.Memory([], memory_file_blocks)
    assert [(b.label, b.value) for b in reference.file_blocks] == [(b.label, b.value) for b in letta.file_blocks]
    # Letta validates assignments too.
    letta.file_blocks = [letta_file_block(b) for b in reversed(memory_file_blocks)]
    reference.file_blocks = list(reversed(memory_file_blocks))
    assert [(b.label, b.value) for b in reference.file_blocks] == [(b.label, b.value) for b in letta.file_blocks]


def _state(memory) -> list:
    return [(b.label, b.value) for b in memory.blocks]


operations = st.lists(
    st.one_of(
        st.tuples(st.just("get_block"), labels),
        st.tuples(st.just("list_block_labels")),
        st.tuples(st.just("get_blocks")),
        st.tuples(st.just("set_block"), labels, texts(max_pieces=4)),
        st.tuples(st.just("update_block_value"), labels, st.one_of(texts(max_pieces=4), st.none(), st.integers())),
    ),
    max_size=8,
)


@given(blocks(max_size=5), operations)
def test_memory_helpers(memory_blocks, ops):
    # Both memories hold Letta blocks (their own copies): assigning a value runs Letta's validation.
    letta = letta_memory(memory_blocks)
    reference = ref.Memory([letta_block(b) for b in memory_blocks])
    for name, *args in ops:
        if name == "set_block":
            label, value = args
            args_letta = [letta_block(Block(value=value, label=label))]
            args_ref = [letta_block(Block(value=value, label=label))]
        else:
            args_letta = args_ref = args
        expected = _call(letta, name, args_letta)
        actual = _call(reference, name, args_ref)
        assert actual == expected
        assert _state(reference) == _state(letta)


def _call(memory, name, args):
    try:
        result = getattr(memory, name)(*args)
    except Exception as exc:  # noqa: BLE001 - the exception type is the behaviour under test
        return "raised", type(exc)
    if name == "get_block":
        return "ok", (result.label, result.value)
    if name == "get_blocks":
        return "ok", [(b.label, b.value) for b in result]
    return "ok", result


@pytest.mark.parametrize("labels", [["x", "x.md/y"], ["notes/x", "notes/x.md/y/z"], ["a.md/b/c", "a"]])
def test_git_memory_through_a_file_fails_with_letta_s_own_error(labels):
    """Where Letta's external projection crashes, the reference raises its exception type and message."""
    memory_blocks = [Block(value="s", label="system/h")] + [Block(value="v", label=label) for label in labels]
    errors = []
    for memory in (letta_memory(memory_blocks, git_enabled=True), ref.Memory(memory_blocks, git_enabled=True)):
        with pytest.raises((TypeError, AttributeError)) as raised:
            memory.compile()
        errors.append((type(raised.value), str(raised.value)))
    assert errors[0] == errors[1]


def test_a_skill_under_a_skill_file_fails_with_letta_s_own_error():
    skills = [
        ClientSkill("x-file", location="${MEMORY_DIR}/skills/x"),
        ClientSkill("x", location="${MEMORY_DIR}/skills/x/SKILL.md"),
    ]
    errors = []
    for memory in (letta_memory([]), ref.Memory([])):
        with pytest.raises(TypeError) as raised:
            memory.compile_available_skills(skills)
        errors.append((type(raised.value), str(raised.value)))
    assert errors == [(TypeError, "'str' object does not support item assignment")] * 2


class _Unread:
    """A field value no renderer may read: any use of it fails."""

    def __getattribute__(self, name):
        raise AssertionError(f"read: {name}")


@given(memories(mode="git"), st.lists(st.sampled_from(["system/persona", "system/", "system//", "notes", "skills/x"])))
def test_git_memory_reads_only_what_letta_reads(case, extra_labels):
    """Git memory reads every label, the first persona's value, and the description and value of
    the other ``system/`` blocks with a path part: a hostile value anywhere else renders as Letta does."""
    memory_kwargs, compile_kwargs = case
    unread = _Unread()
    hostile = []
    for block in memory_kwargs["blocks"] + [Block("", label) for label in extra_labels]:
        if GIT_RESERVED & set(_label_parts(block.label or "")):
            continue
        block = Block(block.value, block.label, block.description, unread)
        block.read_only = unread
        label = block.label or ""
        first_persona = label == "system/persona" and not any(b.label == "system/persona" for b in hostile)
        if not first_persona and not (label.startswith("system/") and _label_parts(label.removeprefix("system/"))):
            block.value = block.description = unread
        elif label == "system/persona":
            block.description = unread
        hostile.append(block)
    memory_kwargs["blocks"] = hostile
    letta = letta_memory(**memory_kwargs)
    assert_same(
        partial(ref.Memory(**memory_kwargs).compile, **compile_kwargs), partial(letta.compile, **compile_kwargs)
    )
