"""No leaks (README, Guarantees: "No leaks").

Each test repeats one call for a few seconds (up to a million times) and checks that
the process's resident memory settles: after a warm-up, the last two thirds of the
run may not grow by more than a few megabytes. A leak of a few dozen bytes per call
over half a million calls would exceed that. Python objects are checked too: the
reference counts of the inputs and the number of live objects do not grow. Error
paths (a TypeError for a bad block, Letta's crash in a tree, pytz's unknown-zone
error) are repeated the same way. The whole file takes about 25 seconds.
"""

from __future__ import annotations

import datetime as dt
import gc
import os
import sys
import time

import pytest

import memprompt as mp
from memprompt.types import Block, ClientSkill, FileBlock, LLMConfig, Source, ToolUsageRules

#: Seconds per test; $MEMPROMPT_LEAK_SECONDS overrides (a longer soak).
SECONDS = float(os.environ.get("MEMPROMPT_LEAK_SECONDS", "2.5"))
MAX_CALLS = 1_000_000
#: Allowed growth of the resident set over the last two thirds of a run.
SLACK = 4 * 1024 * 1024
PAGE = os.sysconf("SC_PAGE_SIZE")
NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc/self/statm")


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def settles(step, *watched, seconds: float = SECONDS) -> int:
    """Repeats ``step`` for ``seconds`` (at most MAX_CALLS calls); asserts memory settles. Returns the calls made."""
    for _ in range(200):
        step()
    gc.collect()
    # Summed: a memory holds one of two alternating values, whichever was set last.
    refs = sum(sys.getrefcount(obj) for obj in watched)
    objects = len(gc.get_objects())
    samples = []
    calls, batch = 0, 1
    start = time.perf_counter()
    while calls < MAX_CALLS and time.perf_counter() - start < seconds:
        began = time.perf_counter()
        for _ in range(batch):
            step()
        calls += batch
        if time.perf_counter() - began < 0.05:  # about twenty samples a second
            batch *= 2
        samples.append(rss())
    gc.collect()
    samples.append(rss())
    base = samples[len(samples) // 3]
    growth = max(samples[len(samples) // 3 :]) - base
    assert growth < SLACK, f"resident memory grew by {growth / 1e6:.1f} MB over {calls} calls"
    assert sum(sys.getrefcount(obj) for obj in watched) == refs, "a reference to an input leaked"
    assert len(gc.get_objects()) - objects < 1_000, "live Python objects keep growing"
    return calls


def alternating(memory, values):
    """A step that changes a block's value every call, so no compile is a cache hit."""
    state = {"i": 0}

    def step():
        state["i"] += 1
        memory.blocks[0].value = values[state["i"] % 2]
        return memory

    return step


def test_compile_a_million_times():
    values = ("I like tea. " * 8, "I like coffee. " * 8)
    memory = mp.Memory([Block(values[0], "human", "Who they are", 5000), Block("I am Ava.", "persona")])
    change = alternating(memory, values)
    kwargs = {
        "tool_usage_rules": ToolUsageRules("Rules.", "<tool_rule>\nx\n</tool_rule>"),
        "sources": [Source("s", "docs")],
    }
    # A million compiles take about 4 s here; a slower machine stops at the time limit.
    calls = settles(lambda: change().compile(**kwargs), *values, seconds=max(SECONDS, 6.0))
    assert calls > 50_000


def test_compile_with_fingerprint_and_every_mode():
    values = ("x\ny\n" * 20, "\ud800 surrogate \x00" * 10)
    memories = [
        mp.Memory(
            [Block(values[0], "system/human"), Block("p", "system/persona"), Block("d", "docs/a")], git_enabled=True
        ),
        mp.Memory([Block(values[0], "human")], agent_type="letta_v1_agent"),
        mp.Memory([Block(values[0], "human")], file_blocks=[FileBlock("f", "a.txt", source_id="s")]),
    ]
    steps = [alternating(m, values) for m in memories]
    config = LLMConfig("anthropic")

    def step():
        for change in steps:
            change().compile_with_fingerprint(sources=[Source("s", "docs")], llm_config=config, max_files_open=3)

    settles(step, *values)


def test_large_compiles_that_release_the_gil():
    values = ("a" * 200_000, "b" * 200_000)
    memory = mp.Memory([Block(values[0], "human")])
    settles(lambda: alternating(memory, values)().compile(), *values)


def test_compile_many():
    values = ("tea " * 50, "coffee " * 50)
    memories = [
        mp.Memory([Block(values[i % 2], f"label{i}"), Block("p", "persona")], git_enabled=i % 3 == 0) for i in range(16)
    ]
    settles(lambda: mp.compile_many(memories, sources=[Source("s", "docs")]), *values)


def test_views_metadata_and_the_system_message():
    blocks = [Block("v", f"skills/s{i}", f"skill {i}") for i in range(20)] + [Block("w", "a/b/c"), Block("x", "a/b")]
    memory = mp.Memory(blocks)
    skills = [ClientSkill("c", "client skill", "/abs/skills/c/SKILL.md"), ClientSkill("d", None, "rel/../d/SKILL.md")]
    template = "You are Ava. {CORE_MEMORY} Be kind."
    compiled = memory.compile_with_fingerprint()

    def step():
        memory.compile_available_skills(skills)
        memory.render_memory_filesystem(skills)
        built = mp.build_system_message(template, compiled, "agent-1", NOW, "America/New_York", archive_tags=["a", "b"])
        mp.needs_rebuild(template, compiled, built.text)
        mp.needs_rebuild(template, compiled, built.text, stamp=built.stamp)
        mp.compile_memory_metadata_block(dt.datetime(1850, 6, 1, 12), "Asia/Kathmandu", 7, archival_memory_size=2**70)
        mp.safe_format("{a} and {b} and {}", {"a": "x", "b": 5})
        mp.compile_tool_rule_prompts(
            [
                {"type": "exit_loop", "tool_name": "send"},
                {"type": "max_count_per_step", "tool_name": "t", "max_count_limit": "3"},
            ]
        )

    settles(step, template)


class Crash:
    """A block value that is not a str."""


def test_error_paths():
    bad_value = mp.Memory([Block("ok", "human"), Block(Crash(), "bad")])
    # Letta's external tree calls None.setdefault here (AttributeError); its skills tree assigns into a str.
    crashing_tree = mp.Memory([Block("p", "system/x"), Block("", "a.md/x/y"), Block("", "a")], git_enabled=True)
    bad_skill_tree = mp.Memory([])
    clashing_skills = [ClientSkill("a-file", "file", "/r/a"), ClientSkill("a", "dir", "/r/a/SKILL.md")]
    bad_label_files = [FileBlock("f", ["unhashable"])]

    def expect(error_type, call):
        try:
            call()
        except error_type:
            return
        raise AssertionError(f"expected {error_type}")

    def step():
        expect(TypeError, bad_value.compile)
        expect(TypeError, lambda: mp.compile_many([bad_value, bad_value]))
        expect(AttributeError, crashing_tree.compile)
        expect(TypeError, lambda: bad_skill_tree.compile_available_skills(clashing_skills))
        expect(TypeError, lambda: mp.Memory([], bad_label_files))
        expect(Exception, lambda: mp.compile_memory_metadata_block(NOW, "Mars/Olympus", "a"))
        expect(TypeError, lambda: mp.get_system_message_from_compiled_memory("T", None, "a", NOW, "UTC"))
        expect(ValueError, lambda: mp.compile_tool_rule_prompts([{"type": "nope"}]))

    settles(step)


def test_the_timezone_cache_is_bounded():
    """Every case variant of a zone name is a distinct key of the zone cache: it stops at 4096 names."""
    name = "america/new_york"
    variants = ["".join(c.upper() if (i >> k) & 1 else c for k, c in enumerate(name)) for i in range(1, 20_000)]
    state = {"i": 0}

    def step():
        state["i"] += 1
        mp.compile_memory_metadata_block(NOW, variants[state["i"] % len(variants)], "a")

    # Fill the cache and go once through every variant first: what is measured is the steady state.
    for v in variants:
        mp.compile_memory_metadata_block(NOW, v, "a")
    settles(step)
