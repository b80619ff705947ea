"""``memprompt bench``: run the benchmark suite, then write ``REPORT.md`` and ``chart.png``.

The suite is ``benches/`` of a source checkout (pytest-benchmark). Three phases:

1. Time: ``python -m pytest benches --benchmark-json=DIR/bench.json`` in this Python.
   Each case runs memprompt (Rust), ``memprompt.reference`` (pure Python), letta
   0.16.8 when it is importable, and the floor (``bytes.decode`` of the output's
   UTF-8 bytes) on the same input; each asserts its output equals the reference's.
2. Memory: a fresh Python (``DIR/memory.json``) measures the peak memory one call
   adds, on the largest case of each renderer (see :func:`measure_memory`).
3. Report: ``DIR/REPORT.md`` (medians, ratios, memory, goals met or missed) and
   ``DIR/chart.png`` (log-log time against output size, one panel per renderer;
   needs matplotlib, the ``bench`` extra).

``--quick`` runs the ``quick`` subset with fewer rounds (about a minute).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

__all__ = ["BenchError", "Goal", "Results", "add_arguments", "load_results", "main", "run", "write_report"]

IMPLEMENTATIONS = ("memprompt", "reference", "letta", "floor")
LABELS = {"memprompt": "memprompt (Rust)", "reference": "reference (Python)", "letta": "letta 0.16.8", "floor": "floor (decode)"}
COLORS = {"memprompt": "#d95f02", "reference": "#1f78b4", "letta": "#33a02c", "floor": "#7f7f7f"}
MARKERS = {"memprompt": "o", "reference": "s", "letta": "^", "floor": "_"}
#: Line styles of a panel's sweeps (first, second ...); the floor is always dashed.
SWEEP_STYLES = ("-", ":", "-.")

#: pytest-benchmark settings: (full run, --quick).
TIMING = {
    False: ["--benchmark-min-rounds=5", "--benchmark-max-time=0.5", "--benchmark-warmup=on", "--benchmark-warmup-iterations=3"],
    True: ["-m", "quick", "--benchmark-min-rounds=3", "--benchmark-max-time=0.02", "--benchmark-warmup=off"],
}

# The glibc allocator setting of the memory phase: every allocation of 64 KiB or more
# gets pages of its own, returned on free, so one call's peak is not hidden by
# memory freed earlier (the dynamic threshold would otherwise keep large freed blocks).
MEMORY_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "131072"}


#: The renderers whose memory ``--quick`` measures (the full run measures every renderer).
QUICK_MEMORY = ("plain", "line-numbered", "git memory")

#: Below this output size, RSS pages and heap growth make a peak uncertain by ~0.1 MB.
SMALL_OUTPUT = 256_000


class BenchError(Exception):
    """A failure to report as one line (the suite is missing, pytest failed ...)."""


# -- the command -----------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="a subset of the cases with fewer rounds (about a minute)")
    parser.add_argument(
        "--out",
        metavar="DIR",
        default="bench-report",
        help="where bench.json, memory.json, REPORT.md and chart.png go (default: ./bench-report)",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="only rewrite REPORT.md and chart.png from DIR/bench.json and DIR/memory.json",
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory measurement")
    parser.add_argument(
        "--suite",
        metavar="DIR",
        help="the benches/ folder (default: the one of this source checkout)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the phases; the exit status is 0, or pytest's when a benchmark failed."""
    out = Path(args.out)
    bench_json, memory_json = out / "bench.json", out / "memory.json"
    if not args.report_only:
        out.mkdir(parents=True, exist_ok=True)
        suite = find_suite(args.suite)
        _require("pytest_benchmark", "pytest-benchmark")
        if extension_build().get("debug"):
            print(
                "memprompt bench: warning: memprompt's extension is a debug build; its timings are meaningless "
                "(build it with `maturin develop --release` or `pip install .`)",
                file=sys.stderr,
            )
        status = run_timing(suite, bench_json, args.quick)
        if status != 0:
            raise BenchError(f"the benchmark suite failed (pytest exit status {status}); see its output above")
        if args.no_memory:
            memory_json.unlink(missing_ok=True)
        else:
            run_memory(suite, memory_json, args.quick)
    if not bench_json.is_file():
        raise BenchError(f"{bench_json}: no benchmark results (run without --report-only first)")
    results = load_results(bench_json, memory_json if memory_json.is_file() else None)
    report = write_report(results, out / "REPORT.md", out / "chart.png")
    print(f"wrote {report}" + (f" and {out / 'chart.png'}" if (out / "chart.png").is_file() else ""))
    return 0


def find_suite(suite: str | os.PathLike[str] | None = None) -> Path:
    """The benches/ folder: given, else the one of this source checkout, else ./benches."""
    if suite:
        candidates = [Path(suite)]
    else:
        candidates = [Path(__file__).resolve().parents[2] / "benches", Path.cwd() / "benches"]
    for path in candidates:
        if (path / "workloads.py").is_file():
            return path.resolve()
    raise BenchError(
        f"{candidates[0]}: no benchmark suite here; run `memprompt bench` from a source checkout "
        "(the folder holding benches/), or pass --suite DIR"
    )


def extension_build() -> dict[str, Any]:
    """Where memprompt's compiled extension is, and whether it is a debug build (its timings mean nothing)."""
    try:
        from . import _core
    except ImportError as e:
        return {"path": None, "debug": None, "error": str(e)}
    path = getattr(_core, "__file__", None)
    debug = None
    if path:
        # A debug build of the crate carries DWARF sections; a release build (profile.release) has none.
        with open(path, "rb") as f:
            debug = b".debug_info\x00" in f.read()
    return {"path": path, "debug": debug}


def _require(module: str, package: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise BenchError(f"{package} is not installed in {sys.executable}: pip install 'memprompt[bench]'")


def run_timing(suite: Path, bench_json: Path, quick: bool, extra: Sequence[str] = ()) -> int:
    """pytest-benchmark over the suite, in this Python; its status."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(suite),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--benchmark-json={bench_json}",
        "--benchmark-group-by=group",
        "--benchmark-sort=name",
        "--benchmark-columns=min,median,max,rounds",
        *TIMING[quick],
        *extra,
    ]
    print("$ " + " ".join(command), flush=True)
    load_before = _load()
    started = time.monotonic()
    status = subprocess.call(command)
    if bench_json.is_file():
        # Record how loaded the machine was: a busy machine inflates every column alike.
        data = json.loads(bench_json.read_text())
        for benchmark in data.get("benchmarks", []):
            # Every round's time: ~2 MB a benchmark for the fast ones. The statistics stay.
            (benchmark.get("stats") or {}).pop("data", None)
        data.setdefault("machine_info", {}).setdefault("memprompt_bench", {}).update(
            load_before=load_before, load_after=_load(), wall_seconds=round(time.monotonic() - started, 1), quick=quick
        )
        bench_json.write_text(json.dumps(data, indent=1))
    return status


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def run_memory(suite: Path, memory_json: Path, quick: bool) -> None:
    """The memory phase, in a fresh Python with :data:`MEMORY_ENV`."""
    command = [sys.executable, "-m", "memprompt.bench", "--memory-worker", str(suite), str(memory_json)]
    if quick:
        command.append("--quick")
    print("$ " + " ".join(command), flush=True)
    status = subprocess.call(command, env={**os.environ, **MEMORY_ENV})
    if status != 0:
        raise BenchError(f"the memory measurement failed (exit status {status})")


# -- memory ----------------------------------------------------------------------


def _status_kib(field_name: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    raise BenchError(f"/proc/self/status has no {field_name}")


def _reset_peak() -> None:
    # Linux >= 4.0: "5" resets the peak resident set size (VmHWM) to the current one.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def peak_added(call: Callable[[], Any], before: Callable[[], None] = lambda: None, repeats: int = 3) -> int:
    """The most resident memory ``call()`` adds at its peak, in bytes (the smallest of ``repeats``).

    Before each call: ``before()`` (drop caches), ``gc.collect()``, ``malloc_trim(0)``
    (return freed heap to the system), then the peak RSS is reset to the current RSS
    (``/proc/self/clear_refs``). After it, VmHWM - VmRSS(before) is what the call
    touched at its peak, in Python and in Rust alike, its result included.
    """
    import ctypes

    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    peaks = []
    for _ in range(repeats):
        before()
        gc.collect()
        if trim is not None:
            trim(0)
        _reset_peak()
        rss = _status_kib("VmRSS")
        result = call()
        peaks.append(max(0, _status_kib("VmHWM") - rss) * 1024)
        del result
    return min(peaks)


def traced_peak(call: Callable[[], Any], before: Callable[[], None] = lambda: None) -> int:
    """``tracemalloc``'s peak for one call: Python's allocator only (it does not see Rust's)."""
    import tracemalloc

    before()
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = call()
        peak = tracemalloc.get_traced_memory()[1] - base
        del result
    finally:
        tracemalloc.stop()
    return peak


def measure_memory(suite: Path, quick: bool) -> dict[str, Any]:
    """Peak memory per call on every case marked ``memory`` (in the ``quick`` subset with ``quick``)."""
    import warnings

    sys.path.insert(0, str(suite))
    import workloads  # type: ignore[import-not-found]

    warnings.simplefilter("ignore", DeprecationWarning)
    env = workloads.Env()
    # Letta's modules are a million objects: keep them out of every gc.collect() below.
    gc.collect()
    gc.freeze()
    records = []
    for case in workloads.CASES:
        if not case.memory or (quick and not (case.quick and case.renderer in QUICK_MEMORY)):
            continue
        prepared = env.prepare(case)
        for impl in IMPLEMENTATIONS:
            call = prepared.run.get(impl)
            if call is None:
                continue
            prepared.verify(impl, call())  # and warm up
            records.append(
                {
                    "renderer": case.renderer,
                    "case": case.name,
                    "impl": impl,
                    "output_bytes": len(prepared.encoded),
                    "str_bytes": sys.getsizeof(prepared.text),
                    "peak_bytes": peak_added(call, env.clear_caches),
                    "traced_bytes": traced_peak(call, env.clear_caches),
                }
            )
            print(f"memory: {case.id} {impl}: {records[-1]['peak_bytes'] / records[-1]['output_bytes']:.2f}x output", flush=True)
    return {
        "method": "peak VmHWM - VmRSS around one call (/proc/self/clear_refs reset), min of 3; glibc "
        + " ".join(f"{k}={v}" for k, v in MEMORY_ENV.items()),
        "letta": env.letta.version if env.letta else None,
        "records": records,
    }


# -- results ---------------------------------------------------------------------


@dataclass
class Row:
    """One case: its output size and each implementation's median time (seconds)."""

    renderer: str
    case: str
    order: int
    output_bytes: int
    output_chars: int
    params: dict[str, Any] = field(default_factory=dict)
    median: dict[str, float] = field(default_factory=dict)
    rounds: dict[str, int] = field(default_factory=dict)

    def ratio(self, a: str, b: str) -> float | None:
        """``median[a] / median[b]``, or None when either is missing."""
        if a in self.median and b in self.median and self.median[b] > 0:
            return self.median[a] / self.median[b]
        return None

    def speedup(self) -> float | None:
        """How many times faster memprompt is than Letta."""
        return self.ratio("letta", "memprompt")


@dataclass
class Results:
    rows: list[Row]
    machine: dict[str, Any]
    when: str
    commit: dict[str, Any]
    memory: dict[str, Any] | None = None

    @property
    def info(self) -> dict[str, Any]:
        return self.machine.get("memprompt_bench", {})

    @property
    def letta_present(self) -> bool:
        return any("letta" in row.median for row in self.rows)

    def renderers(self) -> list[str]:
        seen: list[str] = []
        for row in sorted(self.rows, key=lambda r: r.order):
            if row.renderer not in seen:
                seen.append(row.renderer)
        return seen

    def of(self, renderer: str) -> list[Row]:
        return sorted((row for row in self.rows if row.renderer == renderer), key=lambda r: r.order)

    def get(self, renderer: str, case: str) -> Row | None:
        return next((row for row in self.rows if row.renderer == renderer and row.case == case), None)


_PARAM_KEYS = ("blocks", "value", "depth", "files", "rules", "agent", "agent_type", "kind", "text", "sweep")


def load_results(bench_json: Path, memory_json: Path | None = None) -> Results:
    """The medians of a pytest-benchmark JSON written by the suite, one row per case."""
    data = json.loads(Path(bench_json).read_text())
    rows: dict[tuple[str, str], Row] = {}
    for bench in data.get("benchmarks", []):
        info = bench.get("extra_info", {})
        if "renderer" not in info or not bench.get("stats"):
            continue
        key = (info["renderer"], info["case"])
        row = rows.get(key)
        if row is None:
            row = rows[key] = Row(
                info["renderer"],
                info["case"],
                info.get("order", len(rows)),
                info["output_bytes"],
                info["output_chars"],
                {k: info[k] for k in _PARAM_KEYS if k in info},
            )
        row.median[info["impl"]] = bench["stats"]["median"] / info.get("calls", 1)
        row.rounds[info["impl"]] = bench["stats"]["rounds"]
    memory = json.loads(Path(memory_json).read_text()) if memory_json else None
    return Results(
        list(rows.values()), data.get("machine_info", {}), data.get("datetime", ""), data.get("commit_info", {}), memory
    )


# -- goals -----------------------------------------------------------------------


@dataclass
class Goal:
    """A target of issue 7, judged on the measured medians.

    ``kind``: ``speedup`` (Letta / memprompt >= target on every listed case),
    ``speedup-median`` / ``speedup-min`` (over every case of ``renderer``),
    ``floor`` (memprompt / floor <= target on every listed case), ``floor-all``
    (every case whose output is over ``min_bytes``), ``linear`` (memprompt's time
    per output byte, largest over smallest output, < target for every renderer of
    ``renderers``).
    """

    title: str
    kind: str
    target: float
    cases: tuple[tuple[str, str], ...] = ()
    renderer: str | None = None
    renderers: tuple[str, ...] = ()
    min_bytes: int = 0
    #: Letta's time on the issue writer's machine, "for scale" (shown beside ours).
    issue_letta: str | None = None


GOALS = (
    Goal("plain, 5 blocks x 2 KB: >=4x faster than Letta", "speedup", 4, (("plain", "5x2KB"),), issue_letta="9 us"),
    Goal("plain, ~100 KB (20 x 5 KB): within 2x of the floor", "floor", 2, (("plain", "20x5KB"),), issue_letta="36 us"),
    Goal(
        "line-numbered: >=50x faster than Letta (5 x 2 KB, 20 x 5 KB)",
        "speedup",
        50,
        (("line-numbered", "5x2KB"), ("line-numbered", "20x5KB")),
        issue_letta="355 us; 3.0 ms",
    ),
    Goal(
        "git memory, 1,000 blocks: >=20x (depth 1, 5, 50)",
        "speedup",
        20,
        tuple(("git memory", f"1000-blocks-depth-{d}") for d in (1, 5, 50)),
        issue_letta="2.8 ms",
    ),
    Goal(
        "tree view, 1,000 blocks: >=20x (depth 1, 5, 50)",
        "speedup",
        20,
        tuple(("tree view", f"1000-blocks-depth-{d}") for d in (1, 5, 50)),
        issue_letta="1.4 ms",
    ),
    Goal(
        "available skills, 1,000 blocks: >=10x (depth 1, 5, 50)",
        "speedup",
        10,
        tuple(("available skills", f"1000-blocks-depth-{d}") for d in (1, 5, 50)),
    ),
    Goal("metadata block: >=5x", "speedup", 5, (("metadata", "block"),), issue_letta="8.7 us"),
    Goal("real agents, whole system message: >=10x (median of agents)", "speedup-median", 10, renderer="real agents"),
    Goal("real agents, whole system message: >=2x (each agent)", "speedup-min", 2, renderer="real agents"),
    Goal("rebuild decision, 100 KB: >=100x", "speedup", 100, (("rebuild decision", "100KB"),), issue_letta="120 us"),
    Goal(
        "recompile with nothing changed: >=50x (every case on memprompt's own objects)",
        "speedup",
        50,
        tuple(("recompile", name) for name in ("plain-5x2KB", "plain-20x5KB", "line-numbered-20x5KB", "git-1000-blocks-depth-5")),
    ),
    Goal("every workload over 100 KB: within 3x of the floor", "floor-all", 3, min_bytes=100_000),
    Goal(
        "linear cost: time per output byte grows <2x from smallest to largest output",
        "linear",
        2,
        renderers=("plain", "line-numbered", "git memory", "tree view", "available skills", "directories", "system message"),
    ),
)


@dataclass
class Verdict:
    goal: Goal
    status: str  # "met", "missed", "not measured"
    measured: str
    letta_here: str = ""


def judge(goal: Goal, results: Results) -> Verdict:
    if goal.kind == "speedup":
        rows = [row for row in (results.get(*key) for key in goal.cases) if row is not None]
        pairs = [(row, row.speedup()) for row in rows]
        pairs = [(row, s) for row, s in pairs if s is not None]
        if not pairs:
            return Verdict(goal, "not measured", _absent(results, "the cases were not run"))
        worst = min(s for _, s in pairs)
        measured = "; ".join(f"{row.case}: {s:.1f}x" for row, s in pairs) if len(pairs) > 1 else f"{worst:.1f}x"
        missing = len(goal.cases) - len(pairs)
        status = "met" if worst >= goal.target else "missed"
        if missing and status == "met":
            measured += f" ({missing} case(s) not run)"
        letta_here = "; ".join(fmt_time(row.median["letta"]) for row, _ in pairs)
        return Verdict(goal, status, measured, letta_here)
    if goal.kind in ("speedup-median", "speedup-min"):
        rows = results.of(goal.renderer or "")
        speedups = [(row, row.speedup()) for row in rows if row.speedup() is not None]
        if not speedups:
            return Verdict(goal, "not measured", _absent(results, "no real agents were run"))
        values = [s for _, s in speedups]
        if goal.kind == "speedup-median":
            value = statistics.median(values)
            measured = f"median {value:.1f}x over {len(values)} agents"
        else:
            row, value = min(speedups, key=lambda p: p[1])
            measured = f"lowest {value:.1f}x ({row.case})"
        return Verdict(goal, "met" if value >= goal.target else "missed", measured)
    if goal.kind == "floor":
        rows = [row for row in (results.get(*key) for key in goal.cases) if row is not None]
        ratios = [(row, row.ratio("memprompt", "floor")) for row in rows]
        ratios = [(row, r) for row, r in ratios if r is not None]
        if not ratios:
            return Verdict(goal, "not measured", "the case was not run")
        worst = max(r for _, r in ratios)
        letta_here = "; ".join(fmt_time(row.median["letta"]) for row, _ in ratios if "letta" in row.median)
        return Verdict(goal, "met" if worst <= goal.target else "missed", f"{worst:.2f}x the floor", letta_here)
    if goal.kind == "floor-all":
        ratios = [(row, row.ratio("memprompt", "floor")) for row in results.rows if row.output_bytes > goal.min_bytes]
        ratios = [(row, r) for row, r in ratios if r is not None]
        if not ratios:
            return Verdict(goal, "not measured", "no case over 100 KB was run")
        over = sorted(((row, r) for row, r in ratios if r > goal.target), key=lambda p: -p[1])
        worst_row, worst = max(ratios, key=lambda p: p[1])
        if over:
            listed = ", ".join(f"{row.renderer}/{row.case} {r:.1f}x" for row, r in over[:8])
            more = f" and {len(over) - 8} more" if len(over) > 8 else ""
            return Verdict(goal, "missed", f"{len(over)} of {len(ratios)} cases over {goal.target:g}x: {listed}{more}")
        return Verdict(goal, "met", f"{len(ratios)} cases; worst {worst:.2f}x ({worst_row.renderer}/{worst_row.case})")
    if goal.kind == "linear":
        parts, worst = [], 0.0
        for renderer in goal.renderers:
            growth = per_byte_growth(results.of(renderer), "memprompt")
            if growth is None:
                continue
            first_last, _ = growth
            worst = max(worst, first_last)
            parts.append(f"{renderer} {first_last:.2f}x")
        if not parts:
            return Verdict(goal, "not measured", "no renderer has two sizes")
        return Verdict(goal, "met" if worst < goal.target else "missed", "; ".join(parts))
    raise ValueError(goal.kind)


def per_byte_growth(rows: Iterable[Row], impl: str) -> tuple[float, float] | None:
    """(largest over smallest output, worst over any smaller output) of ``impl``'s time per output byte."""
    points = sorted(
        (row.output_bytes, row.median[impl] / row.output_bytes) for row in rows if impl in row.median and row.output_bytes
    )
    if len(points) < 2 or points[0][0] == points[-1][0]:
        return None
    first_last = points[-1][1] / points[0][1]
    worst = max(points[j][1] / points[i][1] for j in range(len(points)) for i in range(j) if points[i][0] < points[j][0])
    return first_last, worst


def _absent(results: Results, otherwise: str) -> str:
    if not results.letta_present:
        return f"Letta absent ({results.info.get('letta_absent') or 'not importable'})"
    return otherwise


# -- formatting ------------------------------------------------------------------


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_bytes(n: int) -> str:
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            value = n / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{n} B"


def fmt_ratio(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f}x"
    if value >= 10:
        return f"{value:.1f}x"
    return f"{value:.2f}x"


def fmt_fraction(value: float | None) -> str:
    """memprompt / other: a fraction, with the speed-up behind it."""
    if value is None:
        return "-"
    speedup = 1 / value if value else math.inf
    return f"{value:.3g} ({fmt_ratio(speedup)} faster)" if value < 1 else f"{value:.3g} ({fmt_ratio(value)} slower)"


def _machine_line(results: Results) -> str:
    machine = results.machine
    cpu = machine.get("cpu", {})
    brand = cpu.get("brand_raw") or cpu.get("brand") or machine.get("processor") or platform.processor() or "unknown CPU"
    info = results.info
    cores = info.get("cpu_count") or cpu.get("count")
    python = f"{machine.get('python_implementation', 'CPython')} {machine.get('python_version', '')}".strip()
    letta = f"letta {info['letta']}" if info.get("letta") else f"Letta absent ({info.get('letta_absent') or 'not importable'})"
    load = f"; run at nice {info['nice']}" if info.get("nice") else ""
    if info.get("load_before"):
        load += f"; load average {info['load_before'][0]:g} before, {info.get('load_after', ['?'])[0]} after"
    return (
        f"{brand}, {cores} cores ({machine.get('system', platform.system())} {machine.get('release', '')}); {python}; "
        f"memprompt {info.get('memprompt') or '?'}; {letta}{load}"
    )


def write_report(results: Results, report: Path, chart: Path | None = None) -> Path:
    """Write REPORT.md (and the chart, when matplotlib is importable)."""
    chart_written = False
    if chart is not None:
        chart_written = write_chart(results, chart)
    lines = render_report(results, chart.name if chart_written and chart else None)
    report.write_text("\n".join(lines) + "\n")
    return report


def render_report(results: Results, chart_name: str | None) -> list[str]:
    info = results.info
    quick = info.get("quick")
    commit = results.commit or {}
    lines = [
        "# memprompt benchmarks",
        "",
        f"Made by `memprompt bench{' --quick' if quick else ''}` on {results.when[:19].replace('T', ' ')} UTC"
        + (
            f", commit {commit.get('id', '')[:10]}{' (with uncommitted changes)' if commit.get('dirty') else ''}"
            if commit.get("id")
            else ""
        )
        + (f", in {info['wall_seconds']:.0f} s" if info.get("wall_seconds") else "")
        + ".",
        "",
        f"Machine: {_machine_line(results)}.",
        "",
        "Each case runs every implementation on the same input objects (Letta's own pydantic objects when Letta is present; "
        "memprompt and the reference read them with `getattr`) and asserts that each output equals the reference's. "
        'Times are pytest-benchmark medians. The **floor** is `bytes.decode("utf-8")` of the output\'s UTF-8 bytes: the cost of '
        "making a Python `str` of that size from bytes already in memory; `xfloor` is a time divided by it. "
        "`memprompt/Letta` below 1 means memprompt is faster (the speed-up is in brackets). "
        "memprompt renders in full each time (its compile cache is cleared), except in *recompile*, "
        "which measures the cache hit.",
        "",
        "The machine was shared with other jobs while this ran (load average above): medians of runs minutes apart "
        "differ by up to ~30% for the same code (up to 2x for outputs of several MB), so a ratio near a goal's "
        "threshold is not a clear pass or miss.",
        "",
    ]
    extension = info.get("extension") or {}
    if extension.get("debug"):
        lines += ["**Warning: memprompt's extension was a debug build in this run: its timings are meaningless.**", ""]
    if chart_name:
        lines += [f"![time against output size, one panel per renderer]({chart_name})", ""]
    lines += ["## Goals", "", "| goal | measured | Letta here (issue's machine) | |", "|---|---|---|---|"]
    for goal in GOALS:
        verdict = judge(goal, results)
        mark = {"met": "**met**", "missed": "**missed**"}.get(verdict.status, verdict.status)
        scale = (
            verdict.letta_here + (f" ({goal.issue_letta})" if goal.issue_letta else "")
            if verdict.letta_here
            else (goal.issue_letta or "")
        )
        lines.append(f"| {goal.title} | {verdict.measured} | {scale} | {mark} |")
    lines += [""]
    for renderer in results.renderers():
        lines += (
            [f"## {renderer}", "", RENDERER_NOTES.get(renderer, ""), ""]
            if RENDERER_NOTES.get(renderer)
            else [f"## {renderer}", ""]
        )
        lines += [
            "| case | output | floor | memprompt | xfloor | reference | xfloor | Letta | xfloor "
            "| memprompt/Letta | memprompt/reference |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for row in results.of(renderer):
            cells = [row.case, fmt_bytes(row.output_bytes), fmt_time(row.median.get("floor"))]
            for impl in ("memprompt", "reference", "letta"):
                if impl in row.median:
                    cells += [fmt_time(row.median[impl]), fmt_ratio(row.ratio(impl, "floor"))]
                else:
                    cells += ["absent" if impl == "letta" else "-", "-"]
            cells += [fmt_fraction(row.ratio("memprompt", "letta")), fmt_fraction(row.ratio("memprompt", "reference"))]
            lines.append("| " + " | ".join(cells) + " |")
        growth = per_byte_growth(results.of(renderer), "memprompt")
        if growth and renderer not in ("real agents", "rebuild decision", "recompile"):
            lines += [
                "",
                f"memprompt's time per output byte, largest output over smallest: {growth[0]:.2f}x "
                f"(worst over any smaller output: {growth[1]:.2f}x).",
            ]
        lines.append("")
    lines += render_memory(results)
    lines += METHOD_NOTES
    return lines


def render_memory(results: Results) -> list[str]:
    memory = results.memory
    if not memory or not memory.get("records"):
        return ["## Memory", "", "Not measured in this run (`--no-memory`).", ""]
    by_case: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for record in memory["records"]:
        by_case.setdefault((record["renderer"], record["case"]), {})[record["impl"]] = record
    lines = [
        "## Memory",
        "",
        "Peak memory one call adds, as a multiple of the output's UTF-8 size (Rust's allocations included), "
        "and in brackets what `tracemalloc` sees (Python's allocator only: it misses Rust's buffers). "
        "The output `str` itself is `str` bytes (1, 2 or 4 bytes per character).",
        "",
        "| case | output | `str` | memprompt | reference | Letta | floor |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for (renderer, case), records in by_case.items():
        any_record = next(iter(records.values()))
        out = any_record["output_bytes"]
        small = " (*)" if out < SMALL_OUTPUT else ""
        cells = [f"{renderer}/{case}{small}", fmt_bytes(out), fmt_bytes(any_record["str_bytes"])]
        for impl in ("memprompt", "reference", "letta", "floor"):
            record = records.get(impl)
            if record is None:
                cells.append("absent" if impl == "letta" else "-")
            else:
                cells.append(f"{record['peak_bytes'] / out:.2f}x ({record['traced_bytes'] / out:.2f}x)")
        lines.append("| " + " | ".join(cells) + " |")
    if any(record["output_bytes"] < SMALL_OUTPUT for record in memory["records"]):
        lines += ["", f"(*) Output under {fmt_bytes(SMALL_OUTPUT)}: pages and heap growth blur these by ~0.1 MB."]
    lines += ["", f"Method: {memory.get('method', '')}. See *Method* below.", ""]
    return lines


RENDERER_NOTES = {
    "plain": "`Memory.compile()` of a memgpt_agent: `<memory_blocks>`. Cases are blocks x value size "
    "(ASCII prose, every 7th block read-only); `-latin1` and `-ucs2` hold some `é` (and em dashes), so Python "
    "stores them with 1 or 2 bytes a character, not as UTF-8 (and decoding UTF-8, the floor, is no longer a lower bound).",
    "line-numbered": "`Memory.compile(llm_config=anthropic)` of a letta_v1_agent: every value line numbered.",
    "git memory": "`Memory.compile()` with git memory: `<self>`, nested `<memory>` tags and the `<external_projection>` tree. "
    "Of every 10 blocks 7 are `system/...`, 1 a skill and 2 external notes; labels are `depth` parts deep.",
    "tree view": "`<memory_filesystem>` of the same memories (Letta: `_render_memory_filesystem`).",
    "available skills": "`compile_available_skills(client_skills)` on the same memories, with 6 client skills.",
    "directories": "`Memory.compile(sources=..., max_files_open=...)`: one source per 20 files, "
    "two files in three open (3 KB each).",
    "metadata": "`compile_memory_metadata_block` (America/New_York, archival count and tags).",
    "system message": "The whole message[0] rebuild: tool rules (one of each type) -> `Memory.compile` "
    "(blocks, 8 files in 2 sources) -> `get_system_message_from_compiled_memory`.",
    "real agents": "The same rebuild for every agent of the shared agent files (`memprompt.agentfile`), "
    "converted to Letta's objects.",
    "rebuild decision": "Is message[0] current (memory unchanged)? memprompt: "
    "`needs_rebuild(template, compiled, text, stamp=...)` (recorded fingerprints). "
    "Letta: `template not in text` and `memory not in text`. Reference: xxhash of template and memory. "
    "Output size and floor: the stored message.",
    "recompile": "`Memory.compile()` again with nothing changed: memprompt's second call returns its cached result; "
    "the reference and Letta render in full. memprompt's `Memory` holds memprompt's own `Block` objects with the same "
    "values (its cache then proves nothing changed from counted attribute writes, reading no field), except in the "
    "`-letta-objects` cases, where it holds Letta's pydantic blocks and reads and compares every field.",
}

METHOD_NOTES = [
    "## Method",
    "",
    "- Suite: `benches/` (pytest-benchmark 5.3.1); `benches/workloads.py` builds every input. "
    "`python benches/workloads.py` lists the cases. Run: `memprompt bench [--quick] [--out DIR]`; "
    "correctness only: `python -m pytest benches --benchmark-disable` (each body once, outputs compared).",
    "- Grids: blocks 1 to 10,000 and values 100 B to 1 MB, but not their product: 10,000 x 1 MB would be a 10 GB prompt; "
    "the largest cases are 10 x 1 MB and 10,000 x 1 KB (~10 MB). Git memory: 10 to 10,000 blocks, depth 1 to 50, "
    "but 10,000 x depth 50 (a ~50 MB prompt) is not run. Letta runs every case that is run.",
    "- memprompt's `Memory` caches its last compile; a full render clears the cache first "
    "(`memory.clear_cache()`, inside the timing).",
    "- Memory: a fresh Python per run, glibc told to give every allocation of 64 KiB or more its own pages "
    "(`MALLOC_MMAP_THRESHOLD_=65536`), so freed memory cannot hide a peak. Before each call: `gc.collect()`, `malloc_trim(0)`, "
    "and the peak RSS is reset (`echo 5 > /proc/self/clear_refs`); after it, `VmHWM - VmRSS` from `/proc/self/status` is the "
    "memory the call touched at its peak, Rust included, the result included (4 KiB pages; the smallest of 3 calls). "
    "`tracemalloc` is shown beside it to show what a Python-only measure misses.",
    "- Time per output byte: memprompt's median divided by the output's UTF-8 size, compared between the largest and the "
    "smallest output of a renderer (and, stricter, between any output and any smaller one).",
    "",
]


# -- chart -----------------------------------------------------------------------


def write_chart(results: Results, path: Path) -> bool:
    """Log-log median time against output size, one panel per renderer. False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.lines
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    renderers = results.renderers()
    if not renderers:
        return False
    columns = 3
    rows_count = math.ceil(len(renderers) / columns)
    fig, axes = plt.subplots(rows_count, columns, figsize=(5.2 * columns, 3.9 * rows_count), squeeze=False)
    for ax, renderer in zip(axes.flat, renderers):
        rows = sorted(results.of(renderer), key=lambda r: r.output_bytes)
        sweeps = list(dict.fromkeys(row.params["sweep"] for row in rows if row.params.get("sweep")))
        for impl in IMPLEMENTATIONS:
            style = dict(color=COLORS[impl], markersize=4, linewidth=1.4 if impl != "floor" else 1.0, marker=MARKERS[impl])
            labelled = False
            # Each sweep is a curve; the other cases (separate inputs) are points.
            for number, sweep in enumerate(sweeps):
                points = [
                    (row.output_bytes, row.median[impl])
                    for row in rows
                    if row.params.get("sweep") == sweep and impl in row.median
                ]
                if points:
                    xs, ys = zip(*points)
                    linestyle = SWEEP_STYLES[number % len(SWEEP_STYLES)] if impl != "floor" else "--"
                    ax.plot(xs, ys, linestyle=linestyle, label=None if labelled else LABELS[impl], **style)
                    labelled = True
            points = [(row.output_bytes, row.median[impl]) for row in rows if not row.params.get("sweep") and impl in row.median]
            if points:
                xs, ys = zip(*points)
                ax.plot(xs, ys, linestyle="none", label=None if labelled else LABELS[impl], **style)
        if len(sweeps) > 1 or (sweeps and any(not row.params.get("sweep") for row in rows)):
            keys = [
                matplotlib.lines.Line2D([], [], color="black", linestyle=SWEEP_STYLES[n % len(SWEEP_STYLES)], linewidth=1)
                for n in range(len(sweeps))
            ]
            names = list(sweeps)
            if any(not row.params.get("sweep") for row in rows):
                keys.append(matplotlib.lines.Line2D([], [], color="black", marker="o", linestyle="none", markersize=3))
                names.append("other cases")
            ax.legend(keys, names, fontsize=6, loc="upper left", frameon=False)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(renderer, fontsize=11)
        ax.set_xlabel("message size (bytes)" if renderer == "rebuild decision" else "output size (bytes)", fontsize=8)
        ax.set_ylabel("median time (s)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="major", linewidth=0.4, alpha=0.6)
    for ax in list(axes.flat)[len(renderers) :]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    for ax in axes.flat:
        panel_handles, panel_labels = ax.get_legend_handles_labels()
        if len(panel_handles) > len(handles):
            handles, labels = panel_handles, panel_labels
    fig.legend(handles, labels, loc="upper center", ncol=4, frameon=False, fontsize=10, bbox_to_anchor=(0.5, 1.0))
    fig.suptitle(f"memprompt vs reference vs Letta: {_machine_line(results)}", fontsize=8, y=0.965)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# -- python -m memprompt.bench ---------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--memory-worker"]:
        suite, out = Path(argv[1]), Path(argv[2])
        out.write_text(json.dumps(measure_memory(suite, "--quick" in argv[3:]), indent=1))
        return 0
    parser = argparse.ArgumentParser(prog="memprompt bench", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except BenchError as e:
        print(f"memprompt bench: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
