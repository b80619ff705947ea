"""``memprompt.bench.results`` and ``goals``: medians per case, and each goal met, missed or not measured."""

from __future__ import annotations

import pytest
from bench_sample import US, memory_record, sample

from memprompt.bench import goals
from memprompt.bench.goals import GOALS, MEASURES, judge
from memprompt.bench.results import Results, Row

NEAR_FLOOR = "plain, line-numbered, git memory, skills, directories, system message: every case"
REAL = "real agents, memory section and whole system message"
WORKING = "working memory of one compile (peak less what the inputs and the returned str hold)"


def verdicts(results: Results) -> dict[str, goals.Verdict]:
    return {goal.name: judge(goal, results) for goal in GOALS}


def test_rows_hold_each_implementation_median(tmp_path):
    results = sample(tmp_path)
    plain = results.of("plain")
    assert [r.case for r in plain] == ["5x2KB", "20x5KB", "10x1MB"]
    assert plain[0].median["letta"] == pytest.approx(10 * US)
    assert plain[0].speedup() == pytest.approx(5.0)
    assert plain[1].ratio("memprompt", "copy") == pytest.approx(10 / 4)
    assert plain[1].ratio("memprompt", "decode") == pytest.approx(10 / 6)
    assert plain[0].reads == 100 and plain[0].floor() == pytest.approx(1.2 * US)
    assert plain[0].over_floor("memprompt") == pytest.approx(2 / 1.2)
    assert results.renderers() == ["plain", "tree view", "metadata", "real agents: system message"]
    assert results.letta_present


def test_a_case_that_reads_no_field_has_the_copy_floor_alone_and_one_that_does_needs_its_read_floor():
    nothing = Row("metadata", "block", 0, 400, 400, median={"memprompt": 3 * US, "copy": 0.1 * US}, reads=0)
    assert nothing.floor() == pytest.approx(0.1 * US) and nothing.over_floor("memprompt") == pytest.approx(30)
    unread = Row("plain", "x", 0, 400, 400, median={"memprompt": 3 * US, "copy": 0.1 * US}, reads=5)
    assert unread.floor() is None and unread.over_floor("memprompt") is None


def test_the_goals_are_the_issue_s_table():
    assert [goal.name for goal in GOALS] == [
        NEAR_FLOOR,
        "tree view: every case",
        REAL,
        WORKING,
        "plain, 5 x 2 KB",
        "line-numbered, 20 x 5 KB with short lines",
        "metadata block",
        "rebuild decision, 100 KB message",
        "recompile with nothing changed, memprompt's own objects",
        "linear cost",
        "compile_with_fingerprint against compile, every real agent",
    ]
    thresholds = {goal.name: [(c.measure, c.threshold) for c in goal.criteria] for goal in GOALS}
    assert thresholds[NEAR_FLOOR] == [("x read + copy floor", 1.5)]
    assert thresholds["tree view: every case"] == [("x read + copy floor", 2.5)]
    assert thresholds[REAL] == [("median speedup", 10), ("speedup", 3)] * 2
    assert thresholds[WORKING] == [("working memory", 0.5), ("working memory over Letta's", 1)]
    near = next(goal for goal in GOALS if goal.name == NEAR_FLOOR).criteria[0].workload.renderers
    assert set(near) == {"plain", "line-numbered", "git memory", "available skills", "directories", "system message"}
    for goal in GOALS:
        for criterion in goal.criteria:
            assert criterion.measure in MEASURES and criterion.threshold > 0 and criterion.workload.text


def test_goals_are_met_missed_or_not_measured(tmp_path):
    found = verdicts(sample(tmp_path, memory=True))
    assert found["plain, 5 x 2 KB"].status == "met"  # 5x >= 4x
    # 5x2KB 1.67x and 10x1MB 3.58x the read + copy floor: over 1.5x misses the goal.
    near = found[NEAR_FLOOR]
    assert near.status == "missed" and near.measured == "5x2KB: 1.7x; 20x5KB: 1.2x; 10x1MB: 3.6x", near.measured
    tree = found["tree view: every case"]
    assert tree.status == "met" and tree.measured == "1000-blocks: 2.0x"
    assert found["metadata block"].status == "missed"  # 2.67x < 5x
    # The system message is measured and one agent misses; the memory section is not run: missed.
    real = found[REAL]
    assert real.status == "missed", real.measured
    assert "system message, median: 12.0x over 3 cases" in real.measured
    assert "system message, every agent: a: 12.0x; b: 15.0x; c: 1.5x" in real.measured
    assert "memory section, median: the cases were not run" in real.measured
    assert real.threshold() == (
        "memory section, median: >= 10x; memory section, every agent: >= 3x; "
        "system message, median: >= 10x; system message, every agent: >= 3x"
    )
    working = found[WORKING]
    assert working.status == "met", working.measured  # 0.10x the str, 0.03x Letta's
    assert "highest 0.10x the output str (plain/10x1MB)" in working.measured
    assert "highest 0.03x Letta's (plain/10x1MB)" in working.measured
    linear = found["linear cost"]
    assert linear.status == "met" and "plain" in linear.measured


def test_a_goal_is_met_only_when_every_criterion_is_measured_and_met(tmp_path):
    results = sample(tmp_path, memory=True)
    real = [
        Row(renderer, agent, i, 10, 10, median={"memprompt": 1 * US, "letta": speedup * US})
        for i, (agent, speedup) in enumerate((("a", 12), ("b", 11), ("c", 13)))
        for renderer in ("real agents: memory section", "real agents: system message")
    ]
    assert judge(GOALS[2], Results(real, {}, "", {})).status == "met"
    assert judge(GOALS[2], Results(real[::2], {}, "", {})).status == "not measured"  # no system message
    # Without Letta the working memory is measured against the output alone: not against Letta's.
    without = sample(tmp_path, letta=False, memory=True)
    assert judge(GOALS[3], without).status == "not measured"
    assert judge(GOALS[3], results).status == "met"


def test_working_memory_over_the_output_and_against_letta():
    rows = [Row("git memory", "big", 0, 1000, 1000), Row("tree view", "big", 1, 1000, 1000)]
    records = [
        memory_record("git memory", "big", "memprompt", 1_600_000, 1_000_000),  # 0.6x the str
        memory_record("git memory", "big", "letta", 3_000_000, 1_000_000),
        memory_record("tree view", "big", "memprompt", 5_000_000, 1_000_000),  # 4x: not a growing output
        memory_record("tree view", "big", "letta", 4_000_000, 1_000_000),  # memprompt above Letta's
    ]
    found = judge(GOALS[3], Results(rows, {}, "", {}, {"records": records}))
    assert found.status == "missed"
    assert [part.status for part in found.parts] == ["missed", "missed"]
    assert "highest 0.60x the output str (git memory/big) of 1 cases" in found.measured
    assert "highest 1.33x Letta's (tree view/big) of 2 cases" in found.measured
    # The str one step hands the next is an input of that step, not working memory.
    passed = memory_record("system message", "200x5KB", "memprompt", 2_100_000, 1_000_000, passed=1_000_000)
    assert passed["working_bytes"] == 100_000


def test_many_cases_say_how_many_miss(tmp_path):
    rows = [
        Row("git memory", f"c{i}", i, 10, 10, median={"memprompt": t * US, "read": 1 * US, "copy": 0 * US}, reads=9)
        for i, t in enumerate((1.0, 1.2, 1.6, 2.0, 1.1))
    ]
    found = judge(GOALS[0], Results(rows, {}, "", {}))
    assert found.status == "missed"
    assert found.measured == "highest 2.00x (git memory/c3) of 5 cases, 2 over 1.5x", found.measured


def test_goals_against_letta_are_not_measured_without_letta(tmp_path):
    results = sample(tmp_path, letta=False)
    assert not results.letta_present
    found = verdicts(results)
    verdict = found["plain, 5 x 2 KB"]
    assert verdict.status == "not measured" and "Letta absent" in verdict.measured
    assert found["tree view: every case"].status == "met"  # the floors need no Letta
    assert "memory not measured in this run" in found[WORKING].measured


def test_a_goal_on_named_cases_says_which_were_not_run(tmp_path):
    results = sample(tmp_path)
    goal = goals.goal("two cases", goals.cases("plain", "5x2KB", "absent-case"), "speedup", 4)
    verdict = judge(goal, results)
    assert verdict.status == "met" and "(1 case(s) not run)" in verdict.measured


def test_per_byte_growth():
    rows = [
        Row("r", "small", 0, 1_000, 1_000, median={"memprompt": 1e-6}),
        Row("r", "mid", 1, 100_000, 100_000, median={"memprompt": 50e-6}),
        Row("r", "big", 2, 1_000_000, 1_000_000, median={"memprompt": 2e-3}),
    ]
    growth = goals.per_byte_growth(rows, "memprompt")
    assert growth is not None
    first_last, worst = growth
    assert first_last == pytest.approx(2.0)  # 2 ns/B over 1 ns/B
    assert worst == pytest.approx(4.0)  # 2 ns/B over 0.5 ns/B
    assert goals.per_byte_growth(rows[:1], "memprompt") is None


def test_the_fingerprint_goal_compares_each_agent_with_its_own_compile():
    compiles = [
        Row("real agents: memory section", a, 0, 10, 10, median={"memprompt": t * US}) for a, t in (("a", 1), ("b", 2))
    ]
    fingerprinted = [
        Row("real agents: fingerprinted memory section", a, 1, 10, 10, median={"memprompt": t * US})
        for a, t in (("a", 1.2), ("b", 3), ("c", 9))  # c has no compile row: not judged
    ]
    found = verdicts(Results(compiles + fingerprinted, {}, "", {}))
    verdict = found["compile_with_fingerprint against compile, every real agent"]
    assert verdict.status == "missed" and verdict.measured == "a: 1.2x; b: 1.5x", verdict.measured
    met = verdicts(Results(compiles + fingerprinted[:1], {}, "", {}))
    assert met["compile_with_fingerprint against compile, every real agent"].status == "met"
