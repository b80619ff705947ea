"""``memprompt.bench.report``, ``chart`` and ``formatting``: REPORT.md and chart.png from known results."""

from __future__ import annotations

import importlib.util

from bench_sample import sample

from memprompt.bench import formatting
from memprompt.bench.report import render_report, write_report


def test_report_has_tables_goals_and_absent_letta(tmp_path):
    lines = render_report(sample(tmp_path, letta=False), None)
    text = "\n".join(lines)
    assert "Test CPU, 2 cores" in text and "Letta absent" in text
    goal = next(line for line in lines if line.startswith("| plain, 5 x 2 KB |"))
    assert goal.endswith("| not measured |") and ">= 4x" in goal
    plain_row = next(line for line in lines if line.startswith("| 5x2KB |"))
    assert "| absent |" in plain_row
    assert "## Memory" in text and "Not measured in this run" in text and "## Method" in text


def test_report_with_letta_shows_ratios_over_both_floors(tmp_path):
    lines = render_report(sample(tmp_path, memory=True), "chart.png")
    text = "\n".join(lines)
    assert "![time against output size" in text
    plain_row = next(line for line in lines if line.startswith("| 5x2KB |"))
    assert "0.2 (5.00x faster)" in plain_row  # memprompt/Letta
    assert "| 10.0x / 2.86x |" in plain_row  # memprompt over the copy floor and over the decode floor
    goal = next(line for line in lines if line.startswith("| plain, 5 x 2 KB |"))
    assert goal.endswith("| **met** |") and "10 us" in goal  # Letta's median here
    memory = next(line for line in lines if line.startswith("| plain/10x1MB |"))
    assert "1.10x (0.55x)" in memory  # memprompt's peak over the str's size (tracemalloc's)


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
