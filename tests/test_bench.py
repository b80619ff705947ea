"""``memprompt bench``: the report, the goals, the memory probe, and the suite's correctness mode."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from memprompt import bench

BENCHES = Path(__file__).resolve().parent.parent / "benches"


def benchmark(renderer, case, impl, median, output_bytes, order=0, **params):
    return {
        "group": f"{renderer}/{case}",
        "name": f"test[{case}-{impl}]",
        "stats": {"median": median, "rounds": 5, "min": median, "max": median},
        "extra_info": {
            "renderer": renderer,
            "case": case,
            "impl": impl,
            "order": order,
            "output_bytes": output_bytes,
            "output_chars": output_bytes,
            **params,
        },
    }


def row(renderer, case, times, output_bytes, order=0):
    return [benchmark(renderer, case, impl, t, output_bytes, order) for impl, t in times.items()]


def write_json(path: Path, benchmarks, letta=True) -> Path:
    data = {
        "machine_info": {
            "python_implementation": "CPython",
            "python_version": "3.11.7",
            "system": "Linux",
            "release": "6.1",
            "cpu": {"brand_raw": "Test CPU"},
            "memprompt_bench": {
                "memprompt": "0.1.0",
                "letta": "0.16.8" if letta else None,
                "letta_absent": None if letta else "letta is not importable (No module named 'letta')",
                "cpu_count": 2,
                "quick": False,
                "load_before": [0.5, 0.4, 0.3],
                "load_after": [0.6, 0.4, 0.3],
            },
        },
        "commit_info": {"id": "0123456789abcdef", "dirty": True},
        "datetime": "2026-01-15T12:00:00.000000+00:00",
        "benchmarks": benchmarks,
    }
    path.write_text(json.dumps(data))
    return path


US = 1e-6


def sample(tmp_path: Path, letta: bool = True) -> bench.Results:
    benchmarks = []
    benchmarks += row(
        "plain", "5x2KB", {"memprompt": 2 * US, "reference": 14 * US, "letta": 10 * US, "floor": 0.7 * US}, 11_000, 0
    )
    benchmarks += row(
        "plain", "20x5KB", {"memprompt": 10 * US, "reference": 60 * US, "letta": 40 * US, "floor": 6 * US}, 104_000, 1
    )
    benchmarks += row(
        "plain", "10x1MB", {"memprompt": 900 * US, "reference": 9000 * US, "letta": 8000 * US, "floor": 400 * US}, 10_000_000, 2
    )
    benchmarks += row("metadata", "block", {"memprompt": 3 * US, "reference": 9 * US, "letta": 8 * US, "floor": 0.1 * US}, 400, 3)
    for i, (name, speedup) in enumerate((("a", 12.0), ("b", 15.0), ("c", 1.5))):
        benchmarks += row(
            "real agents", name, {"memprompt": 10 * US, "letta": 10 * US * speedup, "floor": 1 * US}, 20_000, 10 + i
        )
    if not letta:
        benchmarks = [b for b in benchmarks if b["extra_info"]["impl"] != "letta"]
    return bench.load_results(write_json(tmp_path / "bench.json", benchmarks, letta))


def verdicts(results: bench.Results) -> dict[str, bench.Verdict]:
    return {goal.title: bench.judge(goal, results) for goal in bench.GOALS}


def test_rows_hold_each_implementation_median(tmp_path):
    results = sample(tmp_path)
    plain = results.of("plain")
    assert [r.case for r in plain] == ["5x2KB", "20x5KB", "10x1MB"]
    assert plain[0].median["letta"] == pytest.approx(10 * US)
    assert plain[0].speedup() == pytest.approx(5.0)
    assert plain[1].ratio("memprompt", "floor") == pytest.approx(10 / 6)
    assert results.renderers() == ["plain", "metadata", "real agents"]
    assert results.letta_present


def test_goals_are_met_missed_or_not_measured(tmp_path):
    found = verdicts(sample(tmp_path))
    assert found["plain, 5 blocks x 2 KB: >=4x faster than Letta"].status == "met"  # 5x
    assert found["plain, ~100 KB (20 x 5 KB): within 2x of the floor"].status == "met"  # 1.67x
    assert found["metadata block: >=5x"].status == "missed"  # 2.67x
    assert found["real agents, whole system message: >=10x (median of agents)"].status == "met"  # median 12x
    each = found["real agents, whole system message: >=2x (each agent)"]
    assert each.status == "missed" and "(c)" in each.measured
    assert found["git memory, 1,000 blocks: >=20x (depth 1, 5, 50)"].status == "not measured"
    over = found["every workload over 100 KB: within 3x of the floor"]
    assert over.status == "met", over.measured  # 20x5KB 1.67x, 10x1MB 2.25x
    linear = found["linear cost: time per output byte grows <2x from smallest to largest output"]
    assert linear.status == "met" and "plain" in linear.measured


def test_goals_against_letta_are_not_measured_without_letta(tmp_path):
    results = sample(tmp_path, letta=False)
    assert not results.letta_present
    found = verdicts(results)
    verdict = found["plain, 5 blocks x 2 KB: >=4x faster than Letta"]
    assert verdict.status == "not measured" and "Letta absent" in verdict.measured
    assert found["plain, ~100 KB (20 x 5 KB): within 2x of the floor"].status == "met"


def test_per_byte_growth():
    rows = [
        bench.Row("r", "small", 0, 1_000, 1_000, median={"memprompt": 1e-6}),
        bench.Row("r", "mid", 1, 100_000, 100_000, median={"memprompt": 50e-6}),
        bench.Row("r", "big", 2, 1_000_000, 1_000_000, median={"memprompt": 2e-3}),
    ]
    first_last, worst = bench.per_byte_growth(rows, "memprompt")
    assert first_last == pytest.approx(2.0)  # 2 ns/B over 1 ns/B
    assert worst == pytest.approx(4.0)  # 2 ns/B over 0.5 ns/B
    assert bench.per_byte_growth(rows[:1], "memprompt") is None


def test_report_has_tables_goals_and_absent_letta(tmp_path):
    results = sample(tmp_path, letta=False)
    lines = bench.render_report(results, None)
    text = "\n".join(lines)
    assert "Test CPU, 2 cores" in text and "Letta absent" in text
    assert "| plain, 5 blocks x 2 KB: >=4x faster than Letta |" in text
    plain_row = next(line for line in lines if line.startswith("| 5x2KB |"))
    assert "| absent |" in plain_row
    assert "## Memory" in text and "## Method" in text


def test_report_with_letta_shows_ratios(tmp_path):
    text = "\n".join(bench.render_report(sample(tmp_path), "chart.png"))
    assert "![time against output size" in text
    plain_row = next(line for line in text.splitlines() if line.startswith("| 5x2KB |"))
    assert "0.2 (5.00x faster)" in plain_row  # memprompt/Letta
    assert "2.86x" in plain_row  # memprompt over the floor


def test_formatting():
    assert bench.fmt_time(9.1e-6) == "9.1 us"
    assert bench.fmt_time(0.0028) == "2.8 ms"
    assert bench.fmt_time(2.5e-7) == "250 ns"
    assert bench.fmt_time(1.5) == "1.5 s"
    assert bench.fmt_bytes(104_000) == "104 KB"
    assert bench.fmt_bytes(999) == "999 B"
    assert bench.fmt_ratio(123.4) == "123x"
    assert bench.fmt_fraction(2.0) == "2 (2.00x slower)"


def test_write_report_and_chart(tmp_path):
    results = sample(tmp_path)
    report = bench.write_report(results, tmp_path / "REPORT.md", tmp_path / "chart.png")
    assert report.read_text().startswith("# memprompt benchmarks")
    if importlib.util.find_spec("matplotlib") is None:
        assert not (tmp_path / "chart.png").exists()
    else:
        assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _can_reset_peak() -> bool:
    try:
        bench._reset_peak()
    except OSError:
        return False
    return True


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _can_reset_peak(), reason="needs /proc/self/clear_refs")
def test_peak_added_sees_memory_outside_python_heap():
    size = 32 * 1024 * 1024

    def allocate():
        buffer = bytearray(size)  # zeroed pages: touched, so resident
        return buffer

    peak = bench.peak_added(allocate)
    assert size <= peak < size * 1.25
    assert bench.peak_added(lambda: None) < 1024 * 1024


def test_traced_peak_sees_python_allocations():
    size = 8 * 1024 * 1024
    assert bench.traced_peak(lambda: bytes(size)) >= size


def test_report_only_without_results_is_an_error(tmp_path, capsys):
    assert bench.main(["--report-only", "--out", str(tmp_path)]) == 2
    assert "no benchmark results" in capsys.readouterr().err


def test_find_suite(tmp_path):
    assert bench.find_suite(BENCHES) == BENCHES
    with pytest.raises(bench.BenchError, match="no benchmark suite"):
        bench.find_suite(tmp_path)


def test_extension_build_is_known():
    build = bench.extension_build()
    assert build["path"] and build["debug"] in (True, False)


# -- the suite itself ------------------------------------------------------------


@pytest.fixture(scope="module")
def workloads():
    sys.path.insert(0, str(BENCHES))
    try:
        import workloads
    finally:
        sys.path.remove(str(BENCHES))
    return workloads


def test_grid_spans_the_issue_ranges(workloads):
    plain = [case.params for case in workloads.cases_of("plain")]
    assert min(p["blocks"] for p in plain) == 1 and max(p["blocks"] for p in plain) == 10_000
    assert min(p["value"] for p in plain) == 100 and max(p["value"] for p in plain) == 1_000_000
    git = [case.params for case in workloads.cases_of("git memory")]
    assert min(p["blocks"] for p in git) == 10 and max(p["blocks"] for p in git) == 10_000
    assert min(p["depth"] for p in git) == 1 and max(p["depth"] for p in git) == 50
    files = [case.params["files"] for case in workloads.cases_of("directories")]
    assert min(files) == 1 and max(files) == 1000
    assert [c.name for c in workloads.cases_of("rebuild decision")] == ["10KB", "100KB", "1MB"]
    # The real agents come from the shared folder beside the repository, when it is there.
    expected = set(workloads.RENDERERS) - (set() if workloads.AGENTFILES.is_dir() else {"real agents"})
    assert expected == {case.renderer for case in workloads.CASES}
    # Every goal names cases that exist.
    ids = {(case.renderer, case.name) for case in workloads.CASES}
    for goal in bench.GOALS:
        if workloads.AGENTFILES.is_dir() or all(renderer != "real agents" for renderer, _ in goal.cases):
            assert set(goal.cases) <= ids, goal.title


def test_every_implementation_agrees_on_a_small_case(workloads):
    env = workloads.Env(with_letta=False)
    for case_id in ("plain/5x2KB", "git memory/10-blocks-depth-50", "rebuild decision/10KB", "recompile/plain-5x2KB"):
        case = next(c for c in workloads.CASES if c.id == case_id)
        prepared = env.prepare(case)
        assert set(prepared.run) == {"memprompt", "reference", "floor"}
        for impl, call in prepared.run.items():
            prepared.verify(impl, call())
        with pytest.raises(AssertionError):
            prepared.verify("memprompt", "not the output")


@pytest.mark.skipif(importlib.util.find_spec("pytest_benchmark") is None, reason="needs pytest-benchmark")
def test_correctness_mode_runs(tmp_path):
    """A slice of the suite in CI's mode: each body once, outputs compared (Letta column off)."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(BENCHES),
            "--benchmark-disable",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "metadata or rebuild_decision or 1x100B",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "MEMPROMPT_BENCH_LETTA": "0"},
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout
