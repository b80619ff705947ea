"""``memprompt.bench.report``, ``chart`` and ``formatting``: REPORT.md and chart.png from known results."""

from __future__ import annotations

import importlib.util

from bench_sample import sample

from memprompt.bench import formatting
from memprompt.bench.goals import GOALS
from memprompt.bench.report import goals_summary, render_report, write_report


def test_report_has_tables_goals_and_absent_letta(tmp_path):
    lines = render_report(sample(tmp_path, letta=False), None)
    text = "\n".join(lines)
    assert "Test CPU, 2 cores" in text and "Letta absent" in text
    goal = next(line for line in lines if line.startswith("| plain, 5 x 2 KB |"))
    assert goal.endswith("| not measured |") and ">= 4x" in goal
    plain_row = next(line for line in lines if line.startswith("| 5x2KB |"))
    assert "| absent |" in plain_row
    assert "## Memory" in text and "Not measured in this run" in text and "## Method" in text


def test_report_with_letta_shows_ratios_over_the_floors(tmp_path):
    lines = render_report(sample(tmp_path, memory=True), "chart.png")
    text = "\n".join(lines)
    assert "![time against output size" in text
    plain_row = next(line for line in lines if line.startswith("| 5x2KB |"))
    assert "0.2 (5.00x faster)" in plain_row  # memprompt/Letta
    # 100 fields read in 1 us, the copy floor 200 ns: memprompt's 2 us is 1.67x both, 10x the copy floor alone.
    assert "| 100 | 1 us | 200 ns | 1.2 us | 700 ns | 2 us | 1.67x | 10.0x / 2.86x |" in plain_row, plain_row
    assert "| 10 us | 8.33x |" in plain_row  # Letta over the read and copy floors
    metadata_row = next(line for line in lines if line.startswith("| block |"))
    assert "| 0 | none | 100 ns | 100 ns |" in metadata_row, metadata_row  # no field read: the copy floor alone
    assert (
        "Read floor: memory .agent_type; agent type .value (an enum); llm config .model_endpoint_type (if given);"
        in text
    )
    goal = next(line for line in lines if line.startswith("| plain, 5 x 2 KB |"))
    assert goal.endswith("| **met** |") and "10 us" in goal  # Letta's median here
    memory = next(line for line in lines if line.startswith("| plain/10x1MB |"))
    assert "| 0.10x (1.10x) |" in memory  # memprompt's working memory (and peak) over the str's size


def test_goals_summary_has_every_goal_met_missed_or_not_measured(tmp_path):
    lines = goals_summary(sample(tmp_path, memory=True))
    assert lines[0] == "goals (4 met, 3 missed):", lines
    assert len(lines) == 1 + len(GOALS)
    assert "  met           tree view: every case [<= 2.5x]: 1000-blocks: 2.0x" in lines
    statuses = [line.split()[0] for line in lines[1:]]
    assert set(statuses) == {"met", "missed", "not"}


def test_formatting():
    assert formatting.fmt_time(9.1e-6) == "9.1 us"
    assert formatting.fmt_time(0.0028) == "2.8 ms"
    assert formatting.fmt_time(2.5e-7) == "250 ns"
    assert formatting.fmt_time(1.5) == "1.5 s"
    assert formatting.fmt_bytes(104_000) == "104 KB"
    assert formatting.fmt_bytes(999) == "999 B"
    assert formatting.fmt_ratio(123.4) == "123x"
    assert formatting.fmt_fraction(2.0) == "2 (2.00x slower)"


def test_write_report_and_chart(tmp_path):
    report = write_report(sample(tmp_path), tmp_path / "REPORT.md", tmp_path / "chart.png")
    assert report.read_text().startswith("# memprompt benchmarks")
    if importlib.util.find_spec("matplotlib") is None:
        assert not (tmp_path / "chart.png").exists()
    else:
        assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
