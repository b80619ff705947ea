"""``memprompt bench``: the timed run, then the memory probe, then ``REPORT.md`` and ``chart.png``.

1. Time: the suite shipped in ``memprompt.bench.suite`` (pytest-benchmark), in this Python,
   into ``DIR/bench.json``. Each case runs memprompt (Rust), ``memprompt.reference`` (pure
   Python), letta 0.16.8 when it is importable, and the three floors (read, copy, decode)
   on the same input; each asserts that its output equals the reference's, and the read
   floor that it reads exactly the fields Letta reads (``memprompt.bench.reads``).
2. Memory: a fresh Python (``DIR/memory.json``) measures the peak memory one call adds
   and its working memory, on the largest cases of each renderer (``memprompt.bench.memory``).
3. Report: ``DIR/REPORT.md`` (medians, ratios to the read, copy and decode floors,
   memory, goals met or missed) and ``DIR/chart.png`` (needs matplotlib, the ``bench``
   extra); the goals, met or missed, are printed too.

``--quick`` runs the ``quick`` subset with fewer rounds (about a minute).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from .memory import ProbeError, run_memory
from .report import goals_summary, write_report
from .results import load_results
from .timing import extension_build, run_timing


class BenchError(Exception):
    """A failure to report as one line (pytest-benchmark missing, a benchmark failed ...)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="a subset of the cases with fewer rounds (about a minute)")
    parser.add_argument(
        "--out",
        metavar="DIR",
        default="bench-report",
        help="where bench.json, memory.json, REPORT.md and chart.png go (default: ./bench-report)",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=[],
        metavar="FILE.af",
        help="agent files whose agents are workloads too (memory section and whole system message)",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="only rewrite REPORT.md and chart.png from DIR/bench.json and DIR/memory.json",
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory measurement")


def run(args: argparse.Namespace) -> int:
    """Run the phases; 0, or a :class:`BenchError`."""
    out = Path(args.out)
    bench_json, memory_json = out / "bench.json", out / "memory.json"
    agent_files = [str(Path(file).resolve()) for file in args.agents]
    if not args.report_only:
        out.mkdir(parents=True, exist_ok=True)
        if importlib.util.find_spec("pytest_benchmark") is None:
            raise BenchError(f"pytest-benchmark is not installed in {sys.executable}: pip install 'memprompt[bench]'")
        if extension_build().get("debug"):
            print(
                "memprompt bench: warning: memprompt's extension is a debug build; its timings are meaningless "
                "(build it with `maturin develop --release` or `pip install .`)",
                file=sys.stderr,
            )
        status = run_timing(bench_json.resolve(), args.quick, agent_files)
        if status != 0:
            raise BenchError(f"the benchmark suite failed (pytest exit status {status}); see its output above")
        if args.no_memory:
            memory_json.unlink(missing_ok=True)
        else:
            try:
                run_memory(memory_json.resolve(), args.quick, agent_files)
            except ProbeError as e:
                raise BenchError(str(e)) from e
    if not bench_json.is_file():
        raise BenchError(f"{bench_json}: no benchmark results (run without --report-only first)")
    results = load_results(bench_json, memory_json if memory_json.is_file() else None)
    report = write_report(results, out / "REPORT.md", out / "chart.png")
    print("\n".join(goals_summary(results)))
    print(f"wrote {report}" + (f" and {out / 'chart.png'}" if (out / "chart.png").is_file() else ""))
    return 0
