"""``memprompt.bench.reads``: the read floor reads each listed field once per object, by CPython's own
getattr in C, on the very objects; the check catches a shortcut, a field read twice, and reads that
differ from the run it is held to. (Against Letta's own reads: tests/letta_diff/test_bench_reads.py.)"""

from __future__ import annotations

import operator
from collections import Counter

import pytest

from memprompt import reference as ref
from memprompt.bench import reads, workloads
from memprompt.bench.reads import PARTS, RENDERER_PARTS, SELECTIONS, Inputs, ReadsDiffer
from memprompt.types import Block, ClientSkill, FileBlock, LLMConfig, Source


def plain_memory(n: int = 3) -> ref.Memory:
    return ref.Memory(
        [Block(f"value {i}", f"label{i}", f"about {i}", 100, i == 1) for i in range(n)], [], "memgpt_agent"
    )


def test_every_row_has_its_objects_and_every_renderer_its_parts():
    kinds = set(Inputs(plain_memory()).objects())
    for part, rows in PARTS.items():
        for row in rows:
            assert row.of in kinds, (part, row)
            assert row.fields and len(set(row.fields)) == len(row.fields), (part, row)
            assert row.which == "every" or (row.of, row.which) in SELECTIONS, (part, row)
    assert {part for parts in RENDERER_PARTS.values() for part in parts} <= set(PARTS)
    chosen = {"recompile", *(r for r in workloads.RENDERERS if r.startswith("real agents"))}
    assert set(RENDERER_PARTS) | chosen == set(workloads.RENDERERS)


def test_the_floor_reads_each_field_once_per_object_by_attrgetter():
    memory = plain_memory()
    config = LLMConfig("openai")
    read_plan = reads.plan(RENDERER_PARTS["plain"], Inputs(memory, llm_config=config))
    floor = read_plan.floor()
    # One C-level attrgetter a field list, mapped over its objects: no Python frame per read.
    getters = [getter for cell in floor.__closure__ or () for getter, _ in cell.cell_contents]
    assert getters and all(type(getter) is operator.attrgetter for getter in getters)
    counted = Counter(reads.recorded_reads(floor, read_plan.objects))
    expected = {(id(memory), name) for name in ("agent_type", "git_enabled", "blocks")}
    expected |= {(id(config), "model_endpoint_type")}
    expected |= {(id(b), name) for b in memory.blocks for name in reads.BLOCK_FIELDS}
    assert set(counted) == expected and set(counted.values()) == {1}
    assert read_plan.count == len(expected) == 3 + 1 + 3 * 5
    assert floor() == read_plan.expected()
    assert read_plan.expected()[-1] == [(b.label, b.value, b.description, b.limit, b.read_only) for b in memory.blocks]
    reads.check_reads(read_plan, floor, None, "plain")


class Described:
    """A block whose description is a property: the floor must give what getattr gives."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.__dict__["description"] = "from the dict"

    @property
    def description(self) -> str:
        return f"{self.label}: from the property"


def test_the_floor_gets_what_getattr_gets_on_the_objects_themselves():
    blocks = [Described("notes/a"), Described("system/b")]
    memory = ref.Memory(blocks)
    read_plan = reads.plan(RENDERER_PARTS["tree view"], Inputs(memory))
    # The description of notes/a only (the tree shows none under system/), from the property.
    assert read_plan.floor()() == [[memory.blocks], [("notes/a", "notes/a: from the property")], ["system/b"]]
    assert read_plan.expected() == read_plan.floor()()


def test_the_check_catches_a_shortcut_a_field_read_twice_and_reads_that_differ():
    memory = plain_memory(2)
    read_plan = reads.plan(RENDERER_PARTS["plain"], Inputs(memory))
    blocks = list(memory.blocks)
    first = blocks[0]

    def by_dict():  # reading a block's fields from its slots/dict, not through getattr
        read_plan.floor()()
        return [object.__getattribute__(b, "value") for b in blocks]

    reads.check_reads(read_plan, by_dict, None, "x")  # extra reads that getattr never sees go unseen...

    def dict_only():  # ...but leaving out the getattr of a listed field is caught
        return [vars(memory)["blocks"]]

    with pytest.raises(ReadsDiffer, match="does not read memory 0.agent_type"):
        reads.check_reads(read_plan, dict_only, None, "x")

    def twice():
        read_plan.floor()()
        return first.value

    with pytest.raises(ReadsDiffer, match=r"reads block 0\.value more than once"):
        reads.check_reads(read_plan, twice, None, "x")

    def unlisted():
        read_plan.floor()()
        return memory.file_blocks

    with pytest.raises(ReadsDiffer, match=r"reads memory 0\.file_blocks, which it does not list"):
        reads.check_reads(read_plan, unlisted, None, "x")

    def run_reading_less():
        return [(b.label, b.value) for b in memory.blocks] + [memory.blocks, memory.agent_type, memory.git_enabled]

    with pytest.raises(ReadsDiffer, match=r"it lists block 0\.description, block 0\.limit.*which Letta does not read"):
        reads.check_reads(read_plan, read_plan.floor(), run_reading_less, "x")

    def run_reading_more():
        memory.compile()
        return [b.label for b in memory.blocks], memory.file_blocks

    with pytest.raises(ReadsDiffer, match=r"Letta reads memory 0\.file_blocks, which it does not list"):
        reads.check_reads(read_plan, read_plan.floor(), run_reading_more, "x")
    # The reference's compile reads what the plain part lists (no llm_config given).
    reads.check_reads(read_plan, read_plan.floor(), memory.compile, "x")


def test_copies_of_the_objects_are_other_objects():
    memory = plain_memory(2)
    read_plan = reads.plan(RENDERER_PARTS["plain"], Inputs(memory))
    copies = [Block(b.value, b.label, b.description, b.limit, b.read_only) for b in memory.blocks]

    def on_copies():
        [memory.agent_type, memory.git_enabled, memory.blocks]
        return [(b.label, b.value, b.description, b.limit, b.read_only) for b in copies]

    with pytest.raises(ReadsDiffer, match=r"it lists block 0\.description"):
        reads.check_reads(read_plan, read_plan.floor(), on_copies, "x")


def test_an_object_two_rows_read_is_read_once_for_both():
    blocks = [Block("v", "system/persona"), Block("w", "system/persona"), Block("x", "system/"), Block("y", "system/a")]
    memory = ref.Memory(blocks, [], "letta_v1_agent", True)
    read_plan = reads.plan(RENDERER_PARTS["git memory"], Inputs(memory))
    fields = {id(obj): names for objects, names in read_plan.groups for obj in objects}
    # Every label; the first persona's value; the description and value of system/ files with a path part.
    assert [fields[id(b)] for b in blocks] == [
        ("label", "value"),
        ("label",),
        ("label",),
        ("label", "description", "value"),
    ]
    assert read_plan.count == 2 + 1 + 1 + 3 + 3  # memory: agent_type, git_enabled, blocks
    assert fields[id(memory)] == ("agent_type", "git_enabled", "blocks")
    reads.check_reads(read_plan, read_plan.floor(), None, "git")


def test_the_skills_and_tree_view_selections():
    blocks = [
        Block("", "skills/a", "first a"),
        Block("", "skills/a/SKILL", "second a"),
        Block("", "skills/b/refs/x", "nested"),
        Block("", "notes/n", "a note"),
        Block("", "system/s", "in system"),
    ]
    skills = [ClientSkill("a", "shadowed"), ClientSkill("c", "new"), ClientSkill("c", "again")]
    inputs = Inputs(ref.Memory(blocks), client_skills=skills)
    assert SELECTIONS["block", "the first of each skill"](inputs) == [blocks[0]]
    assert SELECTIONS["client skill", "of a name not seen before"](inputs) == [skills[1]]
    described = SELECTIONS["block", "the files it shows outside a system directory, and the skills"](inputs)
    assert described == [blocks[1], blocks[3]]  # skills/a's entry is its SKILL file; nothing under system/


def test_the_directories_selections_follow_max_files_open_and_the_source_ids():
    sources = [Source("s1", "one"), Source(None, "no id")]
    files = [FileBlock("open", "f1", None, 10, False, "s1"), FileBlock("", "f2", None, 10, False, "elsewhere")]
    memory = ref.Memory([], files, "letta_v1_agent")
    with_limit = Inputs(memory, sources=sources, max_files_open=5)
    without = Inputs(memory, sources=sources)
    value = SELECTIONS["file block", "every with max_files_open, else those in a source given"]
    assert value(with_limit) == files and value(without) == files[:1]
    assert SELECTIONS["file block", "in a source given"](without) == files[:1]
    assert SELECTIONS["file block", "every, while a source has an id"](without) == files
    no_ids = Inputs(memory, sources=sources[1:])
    assert SELECTIONS["file block", "every, while a source has an id"](no_ids) == []
    read_plan = reads.plan(RENDERER_PARTS["directories"], without)
    reads.check_reads(read_plan, read_plan.floor(), None, "directories")
    # The orphan file's value is not read without max_files_open; its source_id is, while s1 has an id.
    assert {name for obj, name in read_plan.pairs() if obj == id(files[1])} == {"source_id"}


def test_rules_are_read_by_type_and_agent_file_dicts_by_item():
    rules = [
        {"tool_name": "a", "type": "run_first"},
        {"tool_name": "b", "type": "constrain_child_tools", "children": ["c"]},
        {"tool_name": "c", "type": "max_count_per_step", "max_count_limit": 2},
        {"tool_name": "d", "type": "exit_loop"},
        {"tool_name": "e", "type": "requires_approval"},
    ]
    read_plan = reads.plan(("tool rules",), Inputs(rules=rules))
    assert read_plan.floor()() == [[(["c"], "b")], ["d"], [("c", 2)]]
    assert read_plan.floor()() == read_plan.expected() and read_plan.count == 5


def test_a_compile_runs_the_parts_its_memory_selects():
    memory = plain_memory()
    assert reads.compile_parts(memory, None, rules=False) == ("compile", "memory blocks")
    assert reads.compile_parts(ref.Memory([], [], "React_Agent"), [Source("s", "n")], rules=True) == (
        "tool rules",
        "compile",
        "directories",
    )
    assert reads.compile_parts(ref.Memory([], [], None, True), [], rules=False) == ("compile", "git memory")
    assert reads.describe_parts(("tree view",)) == (
        "memory .blocks; block .label; block .description "
        "(the files it shows outside a system directory, and the skills)"
    )
    assert reads.describe_parts(()) == "nothing"


def test_every_case_has_a_read_floor_that_reads_its_fields_once():
    env = workloads.Env(with_letta=False)
    for case in workloads.all_cases():
        if case.quick:
            prepared = env.prepare(case)
            prepared.check_reads(case.id)
            assert prepared.info["reads"] == prepared.reads.count
            assert ("read" in prepared.run) == bool(prepared.reads.count), case.id
