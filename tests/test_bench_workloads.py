"""``memprompt.bench.workloads`` and the shipped suite: the grid, the goals' cases, and outputs compared."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

from memprompt.bench import workloads
from memprompt.bench.goals import GOALS
from memprompt.bench.timing import suite_command

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
AGENT_FILES = [str(EXAMPLES / "plain.af"), str(EXAMPLES / "tool_rules.af")]


def test_grid_spans_the_issue_ranges():
    cases = workloads.all_cases()
    plain = [case.params for case in workloads.cases_of("plain", cases)]
    assert min(p["blocks"] for p in plain) == 1 and max(p["blocks"] for p in plain) == 10_000
    assert min(p["value"] for p in plain) == 100 and max(p["value"] for p in plain) == 1_000_000
    git = [case.params for case in workloads.cases_of("git memory", cases)]
    assert min(p["blocks"] for p in git) == 10 and max(p["blocks"] for p in git) == 10_000
    assert min(p["depth"] for p in git) == 1 and max(p["depth"] for p in git) == 50
    files = [case.params["files"] for case in workloads.cases_of("directories", cases)]
    assert min(files) == 1 and max(files) == 1000
    assert [c.name for c in workloads.cases_of("rebuild decision", cases)] == ["10KB", "100KB", "1MB"]
    assert [case.order for case in cases] == list(range(len(cases)))
    # Without agent files there are no real agents; with them, three cases per agent.
    parts = ["real agents: memory section", "real agents: fingerprinted memory section", "real agents: system message"]
    assert set(workloads.RENDERERS) - {case.renderer for case in cases} == set(parts)
    agents = workloads.agent_cases(AGENT_FILES)
    assert [(c.renderer, c.name) for c in agents] == [
        (part, name) for name in ("plain", "tool_rules") for part in parts
    ]


def test_every_goal_names_cases_that_exist():
    ids = {(case.renderer, case.name) for case in workloads.all_cases(AGENT_FILES)}
    renderers = {renderer for renderer, _ in ids}
    for goal in GOALS:
        for criterion in goal.criteria:
            workload = criterion.workload
            assert set(workload.renderers) <= renderers, goal.name
            for renderer in workload.renderers:
                assert {(renderer, name) for name in workload.cases} <= ids, goal.name


def test_short_lines_and_no_skills_workloads_are_what_they_say():
    env = workloads.Env(with_letta=False)
    cases = {case.id: case for case in workloads.all_cases()}
    short = env.prepare(cases["line-numbered/20x5KB-short-lines"])
    assert 7_000 <= short.text.count("\n") <= 8_500
    no_skills = env.prepare(cases["available skills/1000-blocks-depth-5-no-skills"])
    with_skills = env.prepare(cases["available skills/1000-blocks-depth-5"])
    assert len(no_skills.text) < len(with_skills.text)


def test_every_implementation_agrees_on_small_cases():
    env = workloads.Env(with_letta=False)
    cases = {case.id: case for case in workloads.all_cases(AGENT_FILES)}
    for case_id in (
        "plain/5x2KB",
        "line-numbered/20x5KB-short-lines",
        "git memory/10-blocks-depth-50",
        "rebuild decision/10KB",
        "recompile/plain-5x2KB",
        "real agents: memory section/tool_rules",
        "real agents: fingerprinted memory section/tool_rules",
        "real agents: system message/tool_rules",
    ):
        prepared = env.prepare(cases[case_id])
        reads = {"read"} if case_id != "rebuild decision/10KB" else set()  # a decision reads no field
        assert set(prepared.run) == {"memprompt", "reference", "copy", "decode"} | reads
        for impl, call in prepared.run.items():
            prepared.verify(impl, call())
        prepared.check_reads(case_id)  # no Letta here: the floor reads each listed field once, by getattr
        with pytest.raises(AssertionError):
            prepared.verify("memprompt", "not the output")
        with pytest.raises(AssertionError):
            prepared.verify("copy", prepared.text)  # the copy floor is one character shorter
        if reads:
            with pytest.raises(AssertionError):
                prepared.verify("read", [])


@pytest.mark.skipif(importlib.util.find_spec("pytest_benchmark") is None, reason="needs pytest-benchmark")
def test_the_shipped_suite_runs_from_any_folder(tmp_path):
    """A slice of the suite in CI's mode, from a folder outside the checkout: each body once, outputs compared."""
    command = suite_command(
        AGENT_FILES, "--benchmark-disable", "-k", "metadata or rebuild-decision or 1x100B or tool_rules"
    )
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "MEMPROMPT_BENCH_LETTA": "0"},
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # metadata, 3 rebuild decisions, plain and line-numbered 1x100B, 3 agent cases: 9 cases, 4 implementations
    # each, and the read floor of the 5 that read fields (metadata and the decisions read none).
    assert "41 passed" in result.stdout and "13 skipped" in result.stdout, result.stdout[-2000:]
