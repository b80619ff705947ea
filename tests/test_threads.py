"""Threads and batches (README, Guarantees: "Threads").

- A large render releases the GIL: another Python thread keeps running while it renders.
- ``compile_many`` compiles on Rust threads, keeps input order, and equals compiling
  the memories one by one.
- Eight Python threads compiling shared and unshared memories at once get exactly the
  serial results; a memory mutated by one thread while others compile it yields either
  the old or the new prompt: never a mix, a crash or a deadlock (every join has a timeout).
"""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import memories

import memprompt as mp
from memprompt import reference as ref
from memprompt.types import Block, FileBlock, LLMConfig, Source, ToolUsageRules

ANTHROPIC = LLMConfig("anthropic")
RULES = ToolUsageRules("Rules.", "<tool_rule>\nsend_message ends your turn\n</tool_rule>")
SOURCES = [Source("source-1", "docs", "Docs"), Source("source-2", "more")]
JOIN_TIMEOUT = 120  # seconds; a thread still alive after this is a deadlock


def run_threads(count, target, *args):
    """Starts ``count`` threads on ``target(index, *args)`` together; returns their errors."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def body(index):
        try:
            barrier.wait()
            target(index, *args)
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread is stuck: deadlock"
    return errors


# --- the GIL is released while a large input renders -------------------------------------------


def ticks_during(call):
    """Runs ``call`` while another Python thread records the time in a tight loop.

    Returns the call's duration and the longest gap between the other thread's ticks
    during the call: with the GIL held throughout, that gap is the whole call.
    """
    ticks: list[float] = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    while len(ticks) < 1000:  # the spinner is running
        time.sleep(0.001)
    start = time.perf_counter()
    call()
    end = time.perf_counter()
    stop.set()
    spinner.join(JOIN_TIMEOUT)
    inside = [start] + [t for t in ticks if start < t < end] + [end]
    return end - start, max(b - a for a, b in zip(inside, inside[1:])), len(inside) - 2


def assert_released(call):
    # Reading the input and handing the text back hold the GIL; rendering does not.
    # The spinner must get to run during the render: its longest pause stays well
    # below the whole call (with the GIL held throughout, it would be all of it).
    for _ in range(3):  # a loaded machine can starve the spinner once
        duration, longest_gap, ticks = ticks_during(call)
        if ticks > 0 and longest_gap < 0.75 * duration:
            return
    raise AssertionError(
        f"the other thread was stopped for {longest_gap:.3f}s of a {duration:.3f}s call ({ticks} ticks)"
    )


def test_a_large_compile_releases_the_gil():
    memory = mp.Memory([Block("x" * 100_000_000, "human"), Block("I am Ava.", "persona")])
    assert_released(lambda: mp._core.compile_memory(memory.blocks, [], None, False))


def test_a_large_line_numbered_compile_releases_the_gil():
    memory = mp.Memory([Block("line\n" * 2_000_000, "human")], agent_type="letta_v1_agent")
    assert_released(lambda: mp._core.compile_memory(memory.blocks, [], "letta_v1_agent", False, llm_config=ANTHROPIC))


def test_compile_many_releases_the_gil():
    batch = [mp.Memory([Block(str(i) * 10_000_000, "human")]) for i in range(6)]
    assert_released(lambda: mp.compile_many(batch))


def test_small_compiles_still_work_from_many_threads():
    """Below 64 KiB the GIL is kept (cheaper than releasing it); threads still interleave between calls."""
    memory = mp.Memory([Block("small", "human")])
    expected = ref.Memory([Block("small", "human")]).compile()
    results = []

    def work(_):
        for _ in range(2000):
            results.append(memory.compile())

    assert not run_threads(4, work)
    assert results == [expected] * 8000


# --- compile_many -------------------------------------------------------------------------------


def varied_memories():
    """Every mode, sizes on both sides of the 64 KiB threshold, and one the reference renders."""
    big = "long text " * 20_000
    out = [
        mp.Memory([Block("I am Ava.", "persona"), Block("Ann.", "human")]),
        mp.Memory([Block(big, "human"), Block("notes", "notes")], agent_type="letta_v1_agent"),
        mp.Memory([Block("p", "system/persona"), Block(big, "system/human"), Block("x", "docs/a")], git_enabled=True),
        mp.Memory([Block("v", "human")], agent_type="react_agent"),
        mp.Memory(
            [],
            file_blocks=[FileBlock(big, "a.txt", source_id="source-1"), FileBlock("", "b.txt", source_id="source-2")],
        ),
        mp.Memory(
            [Block("v", "system/__value__/x"), Block("p", "system/persona")], git_enabled=True
        ),  # reference fallback
        mp.Memory([Block("\ud800 lone surrogate, NUL \x00", "human")]),
        mp.Memory([]),
    ]
    return out * 3


def test_compile_many_equals_compiling_one_by_one_in_order():
    batch = varied_memories()
    for kwargs in ({}, {"tool_usage_rules": RULES, "sources": SOURCES, "max_files_open": 5, "llm_config": ANTHROPIC}):
        expected = [ref.Memory(m.blocks, m.file_blocks, m.agent_type, m.git_enabled).compile(**kwargs) for m in batch]
        assert mp.compile_many(batch, **kwargs) == expected
        assert [m.compile(**kwargs) for m in batch] == expected
        assert mp.compile_many(reversed(batch), **kwargs) == expected[::-1]
    assert mp.compile_many([]) == []


def test_compile_many_takes_reference_memories_and_generators():
    memories = [ref.Memory([Block(f"value {i}", "human")]) for i in range(50)]
    assert mp.compile_many(m for m in memories) == [m.compile() for m in memories]


def test_compile_many_raises_the_first_error_and_no_results():
    batch = [mp.Memory([Block("ok", "human")]), mp.Memory([Block(5, "human")]), mp.Memory([Block(b"x", "human")])]
    with pytest.raises(TypeError, match=r"^block 0 \('human'\): value must be str or None, not int$"):
        mp.compile_many(batch)


@settings(max_examples=60)
@given(st.lists(memories(), max_size=12), st.data())
def test_compile_many_equals_one_by_one_on_generated_memories(generated, data):
    compile_kwargs = data.draw(memories())[1]
    batch = [mp.Memory(**memory_kwargs) for memory_kwargs, _ in generated]
    try:
        expected = [
            ref.Memory(m.blocks, m.file_blocks, m.agent_type, m.git_enabled).compile(**compile_kwargs) for m in batch
        ]
    except Exception as error:  # noqa: BLE001
        with pytest.raises(type(error)):
            mp.compile_many(batch, **compile_kwargs)
        return
    assert mp.compile_many(batch, **compile_kwargs) == expected


# --- eight threads, shared and unshared memories ----------------------------------------------------


def copy_memory(m):
    blocks = [Block(b.value, b.label, b.description, b.limit, b.read_only) for b in m.blocks]
    return mp.Memory(blocks, list(m.file_blocks), m.agent_type, m.git_enabled)


def test_eight_threads_get_the_serial_results():
    shared = varied_memories()[:8]
    kwargs = {"tool_usage_rules": RULES, "sources": SOURCES, "max_files_open": 4}
    expected = [ref.Memory(m.blocks, m.file_blocks, m.agent_type, m.git_enabled).compile(**kwargs) for m in shared]
    expected_fingerprints = [mp.fingerprint(text) for text in expected]
    mismatches = []

    def work(index):
        for round_ in range(15):
            own = [copy_memory(m) for m in shared]  # fresh memories: no cached compile to reuse
            for group in (shared, own):
                k = (index + round_) % len(group)
                memory = group[k]
                if memory.compile(**kwargs) != expected[k]:
                    mismatches.append(("compile", index, k))
                compiled = memory.compile_with_fingerprint(**kwargs)
                if compiled.text != expected[k] or compiled.fingerprint != expected_fingerprints[k]:
                    mismatches.append(("compile_with_fingerprint", index, k))
            if round_ % 5 == 0 and mp.compile_many(own, **kwargs) != expected:
                mismatches.append(("compile_many", index, round_))

    errors = run_threads(8, work)
    assert not errors, errors
    assert not mismatches, mismatches[:10]


def test_eight_threads_build_system_messages_and_metadata():
    zones = [
        "UTC",
        "America/New_York",
        "Asia/Kathmandu",
        "Europe/Dublin",
        "utc",
        "US/Eastern",
        None,
        "Australia/Lord_Howe",
    ]
    times = [dt.datetime(1900 + 17 * i, 1 + i % 12, 1 + i, 12, tzinfo=dt.timezone.utc) for i in range(12)]
    memory = "<memory_blocks>\nm\n</memory_blocks>"
    expected = {
        (z, t): ref.get_system_message_from_compiled_memory("T {CORE_MEMORY}", memory, "a", t, z, archive_tags=["x"])
        for z in zones
        for t in times
    }
    mismatches = []

    def work(index):
        for round_ in range(20):
            for z in zones[index % 3 :: 2]:
                for t in times[round_ % 4 :: 3]:
                    got = mp.get_system_message_from_compiled_memory(
                        "T {CORE_MEMORY}", memory, "a", t, z, archive_tags=["x"]
                    )
                    if got != expected[(z, t)]:
                        mismatches.append((z, t))

    assert not run_threads(8, work)
    assert not mismatches, mismatches[:5]


# --- mutated while compiling: the old or the new prompt, never a mix ------------------------------


def race(write, read, rounds, enough):
    """One writer calling ``write(i)`` for i = 0, 1, ... while four readers each call ``read()`` (which
    returns a list of what it saw) at least ``rounds`` times, and then, for up to 20 s, until
    ``enough(seen)``, however the threads are scheduled. Returns everything seen."""
    seen = []
    readers_left = [4]
    lock = threading.Lock()
    stop = threading.Event()

    def work(index):
        if index == 0:
            i = 0
            while not stop.is_set():
                write(i)
                i += 1
                if i % 7 == 0:  # let the readers in, at a different state each time
                    time.sleep(0)
        else:
            try:
                done, deadline = 0, time.monotonic() + 20
                while done < rounds or (not enough(seen) and time.monotonic() < deadline):
                    seen.extend(read())
                    done += 1
            finally:  # a failing reader must not leave the writer running
                with lock:
                    readers_left[0] -= 1
                    if readers_left[0] == 0:
                        stop.set()

    assert not run_threads(5, work)
    return seen


def two_states(big: bool):
    size = 40_000 if big else 1  # 2 x 40,000 x 10 chars is far over the 64 KiB threshold
    old = ["old value " * size, "old other " * size]
    new = ["NEW VALUE " * size, "NEW OTHER " * size]
    return old, new


@pytest.mark.parametrize("big", [False, True], ids=["small", "large (GIL released while rendering)"])
def test_a_value_mutated_while_compiling_gives_the_old_or_the_new_prompt(big):
    old, new = two_states(big)
    blocks = [Block(old[0], "human"), Block("I am Ava.", "persona")]
    memory = mp.Memory(blocks)
    outputs = {
        ref.Memory([Block(old[0], "human"), Block("I am Ava.", "persona")]).compile(): "old",
        ref.Memory([Block(new[0], "human"), Block("I am Ava.", "persona")]).compile(): "new",
    }
    both = {"old", "new"}

    def write(i):
        memory.update_block_value("human", (new if i % 2 == 0 else old)[0])

    def read():
        return [outputs.get(memory.compile(), "MIX"), outputs.get(memory.compile_with_fingerprint().text, "MIX")]

    seen = race(write, read, 60, lambda seen: both <= set(seen))
    memory.update_block_value("human", new[0])
    assert "MIX" not in seen and len(seen) >= 480
    assert both <= set(seen) or not big  # large renders overlap the mutations
    assert memory.compile() == next(text for text, state in outputs.items() if state == "new")


@pytest.mark.parametrize("big", [False, True], ids=["small", "large"])
def test_blocks_swapped_while_compiling_give_one_whole_state(big):
    """Each mutation is one assignment: a whole list, a list item, the file blocks; every compile sees one state."""
    old, new = two_states(big)
    states = {
        "a": [Block(old[0], "human"), Block(old[1], "persona")],
        "b": [Block(new[0], "human"), Block(new[1], "persona"), Block("third", "notes")],
        "c": [Block(new[0], "system/human"), Block("p", "system/persona")],
    }
    files = {
        "x": [FileBlock(old[0], "a.txt", source_id="source-1")],
        "y": [FileBlock("", "a.txt", source_id="source-1")],
    }
    expected = {}
    for s, blocks in states.items():
        for f, file_blocks in files.items():
            for git in (False, True):
                text = ref.Memory(blocks, file_blocks, None, git).compile(sources=SOURCES)
                expected[text] = (s, f, git)
    memory = mp.Memory(states["a"], files["x"])

    def write(i):
        if i % 4 == 1:
            memory.file_blocks = files["xy"[i % 2]]
        elif i % 4 == 2:
            memory.git_enabled = not memory.git_enabled
        else:
            memory.blocks = list(states["abc"[i % 3]])

    def read():
        many = mp.compile_many([memory, memory], sources=SOURCES)
        return [expected.get(memory.compile(sources=SOURCES), "MIX"), *(expected.get(text, "MIX") for text in many)]

    seen = race(write, read, 40, lambda seen: len(set(seen)) > 3)
    assert "MIX" not in seen and len(seen) >= 480
    assert len(set(seen)) > 3  # the readers did see the memory change
    final = ref.Memory(memory.blocks, memory.file_blocks, None, memory.git_enabled).compile(sources=SOURCES)
    assert memory.compile(sources=SOURCES) == final  # nothing stale in the cache
