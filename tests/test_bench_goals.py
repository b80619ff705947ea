"""``memprompt.bench.results`` and ``goals``: medians per case, and each goal met, missed or not measured."""

from __future__ import annotations

import pytest
from bench_sample import US, sample

from memprompt.bench import goals
from memprompt.bench.goals import GOALS, MEASURES, judge
from memprompt.bench.results import Results, Row


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
    assert results.renderers() == ["plain", "metadata", "real agents: system message"]
    assert results.letta_present


def test_goals_are_one_row_each_with_a_known_measure():
    names = [goal.name for goal in GOALS]
    assert len(names) == len(set(names))
    for goal in GOALS:
        assert goal.measure in MEASURES and goal.threshold > 0 and goal.workload.text


def test_goals_are_met_missed_or_not_measured(tmp_path):
    found = verdicts(sample(tmp_path, memory=True))
    assert found["plain, 5 x 2 KB"].status == "met"  # 5x >= 4x
    # 20x5KB is 2.5x the copy floor, 10x1MB 3.6x: one over 3x misses the goal.
    over = found["plain 20 x 5 KB, and every output of 100 KB or more except line-numbered ones"]
    assert over.status == "missed" and "10x1MB: 3.6x" in over.measured, over.measured
    assert found["plain, ~100 KB (20 x 5 KB), decode floor"].status == "met"  # 1.67x <= 2x
    assert found["metadata block"].status == "missed"  # 2.67x < 5x
    median = found["real agents, system message: median"]
    assert median.status == "met" and "median 12.0x over 3" in median.measured
    each = found["real agents, system message: every agent"]
    assert each.status == "missed" and "c: 1.5x" in each.measured
    assert found["git memory, 1,000 blocks"].status == "not measured"
    assert found["real agents, memory section: median"].status == "not measured"
    assert found["peak memory of one compile"].status == "met"  # 11 MB over a 10 MB str: 1.10x
    linear = found["linear cost"]
    assert linear.status == "met" and "plain" in linear.measured


def test_goals_against_letta_are_not_measured_without_letta(tmp_path):
    results = sample(tmp_path, letta=False)
    assert not results.letta_present
    found = verdicts(results)
    verdict = found["plain, 5 x 2 KB"]
    assert verdict.status == "not measured" and "Letta absent" in verdict.measured
    assert found["plain, ~100 KB (20 x 5 KB), decode floor"].status == "met"
    assert found["peak memory of one compile"].measured == "memory not measured in this run"


def test_a_goal_on_named_cases_says_which_were_not_run(tmp_path):
    results = sample(tmp_path)
    goal = goals.Goal("two cases", goals.cases("plain", "5x2KB", "absent-case"), "speedup", 4)
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
