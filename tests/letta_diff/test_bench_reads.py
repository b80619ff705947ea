"""The read floor's fields are exactly the fields Letta 0.16.8 reads: on the bench's cases, on any memory,
and a field added to or left out of any row of ``memprompt.bench.reads.PARTS`` fails the check."""

from __future__ import annotations

import warnings
from dataclasses import replace
from io import StringIO

import agentfiles
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from letta_bridge import letta_memory
from strategies import LocalAgentType, blocks, client_skills, memories, sources

from memprompt.bench import reads, workloads
from memprompt.bench.reads import Inputs, ReadsDiffer
from memprompt.types import FileBlock, LLMConfig, Source

AGENT_FILES = [str(path) for path in agentfiles.paths()]

# The smallest case of each renderer that reaches every row of its parts: a system/persona and
# system/ files (git memory); files outside system/ and skills (tree view); client skills not in
# memory (skills); sources with ids and max_files_open (directories); one rule of each type.
CASES = (
    "plain/5x2KB",
    "line-numbered/5x2KB",
    "git memory/10-blocks-depth-5",
    "tree view/100-blocks-depth-5",
    "available skills/100-blocks-depth-5",
    "available skills/1000-blocks-depth-5-no-skills",
    "directories/10-files",
    "metadata/block",
    "system message/5x2KB",
    "rebuild decision/10KB",
    "recompile/plain-5x2KB",
    "recompile/line-numbered-20x5KB",
)
#: Agents of each kind: git memory (ezra), file blocks and sources with most rule types (void),
#: line-numbered with rules (evie[1], co-3), no blocks but rules (outreach_workflow_agent).
AGENTS = ("ezra", "void", "evie[1]", "co-3", "outreach_workflow_agent")


@pytest.fixture(scope="module")
def env():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = workloads.Env()
    if found.letta is None:
        pytest.skip(f"needs letta: {found.letta_absent}")
    return found


@pytest.fixture(scope="module")
def cases():
    return {case.id: case for case in workloads.all_cases(AGENT_FILES)}


def case_ids() -> list[str]:
    agents = [f"real agents: {part}/{agent}" for part in workloads.AGENT_PARTS for agent in AGENTS]
    return list(CASES) + (agents if AGENT_FILES else [])


def test_the_real_agents_are_among_the_bench_cases():
    agentfiles.require()
    assert set(case_ids()) - set(CASES), "no real agent's case is checked"


def test_the_floor_reads_what_letta_reads_on_the_bench_cases(env, cases):
    for case_id in case_ids():
        env.forget()
        prepared = env.prepare(cases[case_id])
        prepared.check_reads(case_id)
        if "read" in prepared.run:
            prepared.verify("read", prepared.run["read"]())


def rows_reached(env, cases) -> dict[tuple[str, int], str]:
    """For each (part, row index), a case whose inputs give the row at least one object."""
    reached: dict[tuple[str, int], str] = {}
    for case_id in case_ids():
        env.forget()
        read_plan = env.prepare(cases[case_id]).reads
        for part in read_plan.parts:
            for index, row in enumerate(reads.PARTS[part]):
                if reads.select(row, read_plan.inputs):
                    reached.setdefault((part, index), case_id)
    return reached


def check_with_row(check, part: str, index: int, fields: tuple[str, ...]) -> str:
    """``check()`` (a read check) with one row's fields changed: the message it fails with."""
    original = dict(reads.PARTS)
    reads.PARTS[part] = tuple(replace(r, fields=fields) if i == index else r for i, r in enumerate(original[part]))
    try:
        with pytest.raises(ReadsDiffer) as raised:
            check()
        return str(raised.value)
    finally:
        reads.PARTS.clear()
        reads.PARTS.update(original)


def case_check(env, case):
    def check():
        env.forget()
        env.prepare(case).check_reads(case.id)
        env.forget()

    return check


def unread_field(read_plan, row) -> str | None:
    """A field of the row's first object that nothing in the plan reads of it, or None."""
    obj = reads.select(row, read_plan.inputs)[0]
    listed = {name for o, name in read_plan.pairs() if o == id(obj)}
    names = [name for name in vars(obj) if not name.startswith("_") and name not in listed]
    return names[0] if names else None


#: A row no bench case reaches: the bench's agent types are strs (see the test of enums below).
ENUM_ROW = ("compile", 1)


def test_a_field_left_out_of_or_added_to_any_row_fails_the_check(env, cases):
    reached = rows_reached(env, cases)
    # Every row of every part but the enum's is reached by a case, so each is held to Letta's reads.
    assert set(reached) | {ENUM_ROW} == {(part, i) for part, rows in reads.PARTS.items() for i in range(len(rows))}
    added = 0
    for (part, index), case_id in reached.items():
        row, case = reads.PARTS[part][index], cases[case_id]
        for name in row.fields:
            fewer = tuple(f for f in row.fields if f != name)
            message = check_with_row(case_check(env, case), part, index, fewer)
            assert "Letta reads" in message and f".{name}" in message, (part, row, name, message)
        env.forget()
        extra = unread_field(env.prepare(case).reads, row)
        if extra is None:  # a client skill has three fields, every one of them read: nothing to add
            assert row.of == "client skill", (part, row)
            continue
        message = check_with_row(case_check(env, case), part, index, (*row.fields, extra))
        assert "which Letta does not read" in message and f".{extra}" in message, (part, row, extra, message)
        added += 1
    assert added >= len(reached) - 2


def test_an_enum_agent_type_s_value_is_read_as_letta_reads_it():
    memory = letta_memory([], agent_type=LocalAgentType.V1)
    assert reads.PARTS[ENUM_ROW[0]][ENUM_ROW[1]].of == "agent type"

    def check():
        read_plan = reads.plan(reads.compile_parts(memory, None, rules=False), Inputs(memory))
        reads.check_reads(read_plan, read_plan.floor(), compile_call(memory), "enum")

    check()
    message = check_with_row(check, *ENUM_ROW, ())
    assert "Letta reads agent type 0.value" in message, message
    message = check_with_row(check, *ENUM_ROW, ("value", "name"))
    assert "it lists agent type 0.name, which Letta does not read" in message, message


def compile_call(memory, **kwargs):
    return lambda: memory.compile(**kwargs)


@given(memories(), st.booleans())
def test_the_compile_parts_read_what_letta_reads_on_any_memory(case, with_sources):
    memory_kwargs, compile_kwargs = case
    llm_config = compile_kwargs["llm_config"]
    # The floor reads by attrgetter: every object it reads has the fields (Letta's getattr defaults aside).
    assume(llm_config is None or hasattr(llm_config, "model_endpoint_type"))
    source_list = compile_kwargs["sources"] if with_sources else None
    assume(all(isinstance(s, Source) for s in source_list or ()))
    memory = letta_memory(**memory_kwargs)
    kwargs = {"sources": source_list, "max_files_open": compile_kwargs["max_files_open"], "llm_config": llm_config}
    try:
        memory.compile(**kwargs)
    except Exception:  # noqa: BLE001 - where Letta fails, what it read before is no floor
        assume(False)
    read_plan = reads.plan(reads.compile_parts(memory, source_list, rules=False), Inputs(memory, **kwargs))
    reads.check_reads(read_plan, read_plan.floor(), compile_call(memory, **kwargs), "any memory")


@given(blocks(max_size=12), st.one_of(st.none(), client_skills()))
def test_the_tree_view_and_skills_read_what_letta_reads_on_any_blocks(memory_blocks, skills):
    memory = letta_memory(memory_blocks)

    def tree_view():
        memory._render_memory_filesystem(StringIO(), client_skills=skills)

    for part, call in (("tree view", tree_view), ("available skills", lambda: memory.compile_available_skills(skills))):
        try:
            call()
        except TypeError:  # Letta's own crash on a skill under a skill file
            continue
        read_plan = reads.plan((part,), Inputs(memory, client_skills=skills))
        reads.check_reads(read_plan, read_plan.floor(), call, part)


@given(sources(), st.sampled_from([None, 3]), st.sampled_from(["letta_v1_agent", "react_agent"]))
def test_directories_read_what_letta_reads_with_and_without_max_files_open(source_list, limit, agent_type):
    assume(all(isinstance(s, Source) for s in source_list))
    files = [
        FileBlock("open text" if i % 2 else "", f"f{i}", None, 100, bool(i % 3), source.id)
        for i, source in enumerate(source_list * 2)
    ] + [FileBlock("orphan", "orphan", None, 100, False, "source-elsewhere")]
    memory = letta_memory([], files, agent_type=agent_type)
    kwargs = {"sources": source_list, "max_files_open": limit, "llm_config": LLMConfig("openai")}
    read_plan = reads.plan(reads.compile_parts(memory, source_list, rules=False), Inputs(memory, **kwargs))
    reads.check_reads(read_plan, read_plan.floor(), compile_call(memory, **kwargs), "directories")
