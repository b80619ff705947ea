"""The goals: a table, one row each (name, workload, measure, threshold), judged on one run's results.

A *workload* picks the report's rows a goal is about; a *measure* turns those rows
into one number (with the detail a reader needs); the goal is met when that number
is at least (``speedup`` measures) or at most (every other measure) the threshold.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .formatting import fmt_time
from .results import Results, Row
from .workloads import RENDERERS

# -- workloads: which rows a goal is about ---------------------------------------


@dataclass(frozen=True)
class Workload:
    """A set of the report's rows: named cases, whole renderers, or every output of a size."""

    text: str
    renderers: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()
    min_bytes: int = 0
    except_renderers: tuple[str, ...] = ()

    def rows(self, results: Results) -> list[Row]:
        if self.min_bytes:
            return [
                row
                for row in results.rows
                if row.output_bytes >= self.min_bytes and row.renderer not in self.except_renderers
            ]
        rows = [row for renderer in self.renderers for row in results.of(renderer)]
        return [row for row in rows if row.case in self.cases] if self.cases else rows

    def expected(self) -> int | None:
        """How many rows the workload names (None when it is every row of a renderer or a size)."""
        return len(self.renderers) * len(self.cases) if self.cases else None


def cases(renderer: str, *names: str, text: str | None = None) -> Workload:
    return Workload(text or f"{renderer}: {', '.join(names)}", (renderer,), names)


def every(*renderers: str, text: str) -> Workload:
    return Workload(text, renderers)


#: The renders a run times that are not renders in full (a decision; a cache hit).
NOT_RENDERS = ("rebuild decision", "recompile")

# -- measures: rows to one number ------------------------------------------------


@dataclass(frozen=True)
class Measured:
    value: float
    detail: str


def _each(rows: list[Row], ratio: Callable[[Row], float | None], worst: Callable[..., float]) -> Measured | None:
    pairs = [(row, r) for row in rows if (r := ratio(row)) is not None]
    if not pairs:
        return None
    value = worst(r for _, r in pairs)
    if len(pairs) <= 4:
        return Measured(value, "; ".join(f"{row.case}: {r:.1f}x" for row, r in pairs))
    row = next(row for row, r in pairs if r == value)
    return Measured(value, f"{'lowest' if worst is min else 'highest'} {value:.2f}x ({row.id}) of {len(pairs)} cases")


def speedup_each(results: Results, rows: list[Row]) -> Measured | None:
    return _each(rows, Row.speedup, min)


def speedup_median(results: Results, rows: list[Row]) -> Measured | None:
    values = [s for row in rows if (s := row.speedup()) is not None]
    if not values:
        return None
    return Measured(statistics.median(values), f"median {statistics.median(values):.1f}x over {len(values)} cases")


def copy_floor_each(results: Results, rows: list[Row]) -> Measured | None:
    return _each(rows, lambda row: row.ratio("memprompt", "copy"), max)


def over_compile_each(results: Results, rows: list[Row]) -> Measured | None:
    """memprompt's time on each row over its time on the same agent's memory section (``compile``)."""
    compiles = {row.case: row for row in results.of(REAL_MEMORY)}

    def over_compile(row: Row) -> float | None:
        compiled = compiles.get(row.case)
        if compiled is None or "memprompt" not in row.median or not compiled.median.get("memprompt"):
            return None
        return row.median["memprompt"] / compiled.median["memprompt"]

    return _each(rows, over_compile, max)


def decode_floor_each(results: Results, rows: list[Row]) -> Measured | None:
    return _each(rows, lambda row: row.ratio("memprompt", "decode"), max)


def per_byte_growth(rows: Iterable[Row], impl: str) -> tuple[float, float] | None:
    """(largest over smallest output, worst over any smaller output) of ``impl``'s time per output byte."""
    points = sorted(
        (row.output_bytes, row.median[impl] / row.output_bytes)
        for row in rows
        if impl in row.median and row.output_bytes
    )
    if len(points) < 2 or points[0][0] == points[-1][0]:
        return None
    first_last = points[-1][1] / points[0][1]
    worst = max(
        points[j][1] / points[i][1] for j in range(len(points)) for i in range(j) if points[i][0] < points[j][0]
    )
    return first_last, worst


def linear_growth(results: Results, rows: list[Row]) -> Measured | None:
    growths = []
    for renderer in dict.fromkeys(row.renderer for row in rows):
        # Along the size sweeps only: another workload's time per byte is another question.
        growth = per_byte_growth(
            [row for row in rows if row.renderer == renderer and "sweep" in row.params], "memprompt"
        )
        if growth is not None:
            growths.append((renderer, growth[0]))
    if not growths:
        return None
    return Measured(max(g for _, g in growths), "; ".join(f"{renderer} {g:.2f}x" for renderer, g in growths))


def peak_memory_over_str(results: Results, rows: list[Row]) -> Measured | None:
    ids = {(row.renderer, row.case) for row in rows}
    records = [r for r in results.memory_records() if r["impl"] == "memprompt" and (r["renderer"], r["case"]) in ids]
    if not records:
        return None
    ratios = [(f"{r['renderer']}/{r['case']}", r["peak_bytes"] / r["str_bytes"]) for r in records]
    case, worst = max(ratios, key=lambda p: p[1])
    return Measured(worst, f"highest {worst:.2f}x the output str ({case}) of {len(ratios)} cases")


@dataclass(frozen=True)
class Measure:
    text: str
    judge: Callable[[Results, list[Row]], Measured | None]
    #: Met when the value is at least the threshold (else: at most).
    at_least: bool
    needs_letta: bool = False


MEASURES = {
    "speedup": Measure("memprompt's speed-up over Letta, every case", speedup_each, True, True),
    "median speedup": Measure("memprompt's speed-up over Letta, median of the cases", speedup_median, True, True),
    "x copy floor": Measure("memprompt's time over the copy floor, every case", copy_floor_each, False),
    "x compile": Measure(
        "memprompt's time over its own `compile` of the same agent's memory section, every case",
        over_compile_each,
        False,
    ),
    "x decode floor": Measure("memprompt's time over the decode floor, every case", decode_floor_each, False),
    "per-byte growth": Measure(
        "memprompt's time per output byte, largest output over smallest, every renderer", linear_growth, False
    ),
    "peak memory": Measure(
        "peak memory one memprompt call adds over the output str's own size, every case measured",
        peak_memory_over_str,
        False,
    ),
}

# -- the goals -------------------------------------------------------------------


@dataclass(frozen=True)
class Goal:
    name: str
    workload: Workload
    measure: str
    threshold: float


GIT_1000 = tuple(f"1000-blocks-depth-{d}" for d in (1, 5, 50))
REAL_MEMORY, REAL_MESSAGE = "real agents: memory section", "real agents: system message"
REAL_FINGERPRINTED = "real agents: fingerprinted memory section"
#: The renderers whose cases render one section (or message) in full, by size.
RENDERS = tuple(
    r for r in RENDERERS if r not in ("metadata", REAL_MEMORY, REAL_FINGERPRINTED, REAL_MESSAGE, *NOT_RENDERS)
)

GOALS = (
    # Issue 11: rendering at the physical limit.
    Goal("plain, 5 x 2 KB", cases("plain", "5x2KB"), "speedup", 4),
    Goal(
        "plain 20 x 5 KB, and every output of 100 KB or more except line-numbered ones",
        Workload(
            "every render with >= 100 KB of output but line-numbered ones",
            min_bytes=100_000,
            except_renderers=("line-numbered", *NOT_RENDERS),
        ),
        "x copy floor",
        3,
    ),
    Goal("line-numbered, 20 x 5 KB with short lines", cases("line-numbered", "20x5KB-short-lines"), "speedup", 30),
    Goal("git memory, 1,000 blocks", cases("git memory", *GIT_1000), "speedup", 20),
    Goal("tree view, 1,000 blocks", cases("tree view", *GIT_1000), "speedup", 20),
    Goal(
        "available skills, 1,000 blocks, with and without skills",
        cases("available skills", *GIT_1000, "1000-blocks-depth-5-no-skills"),
        "speedup",
        10,
    ),
    Goal("metadata block", cases("metadata", "block"), "speedup", 5),
    Goal("real agents, memory section: median", every(REAL_MEMORY, text="every agent given"), "median speedup", 10),
    Goal("real agents, memory section: every agent", every(REAL_MEMORY, text="every agent given"), "speedup", 3),
    Goal("real agents, system message: median", every(REAL_MESSAGE, text="every agent given"), "median speedup", 10),
    Goal("real agents, system message: every agent", every(REAL_MESSAGE, text="every agent given"), "speedup", 3),
    Goal(
        "compile_with_fingerprint against compile, every real agent",
        every(REAL_FINGERPRINTED, text="every agent given"),
        "x compile",
        1.3,
    ),
    Goal(
        "peak memory of one compile",
        every(*RENDERS, text="the largest case of each renderer"),
        "peak memory",
        1.2,
    ),
    # Earlier goals (issue 7), still held.
    Goal("plain, ~100 KB (20 x 5 KB), decode floor", cases("plain", "20x5KB"), "x decode floor", 2),
    Goal("line-numbered, ordinary lines", cases("line-numbered", "5x2KB", "20x5KB"), "speedup", 50),
    Goal("rebuild decision, 100 KB message", cases("rebuild decision", "100KB"), "speedup", 100),
    Goal(
        "recompile with nothing changed, memprompt's own objects",
        cases("recompile", "plain-5x2KB", "plain-20x5KB", "line-numbered-20x5KB", "git-1000-blocks-depth-5"),
        "speedup",
        50,
    ),
    Goal(
        "linear cost",
        every(*RENDERS, text="the size sweeps of each renderer"),
        "per-byte growth",
        2,
    ),
)


@dataclass
class Verdict:
    goal: Goal
    #: "met", "missed" or "not measured".
    status: str
    measured: str
    #: Letta's medians on the goal's cases, when they are few.
    letta_here: str = ""


def judge(goal: Goal, results: Results) -> Verdict:
    measure = MEASURES[goal.measure]
    rows = goal.workload.rows(results)
    measured = measure.judge(results, rows)
    if measured is None:
        if measure.needs_letta and not results.letta_present:
            why = f"Letta absent ({results.info.get('letta_absent') or 'not importable'})"
        elif goal.measure == "peak memory" and not results.memory_records():
            why = "memory not measured in this run"
        else:
            why = "the cases were not run"
        return Verdict(goal, "not measured", why)
    met = measured.value >= goal.threshold if measure.at_least else measured.value <= goal.threshold
    detail = measured.detail
    expected = goal.workload.expected()
    if expected is not None and len(rows) < expected:
        detail += f" ({expected - len(rows)} case(s) not run)"
    timed = [row for row in rows if "letta" in row.median]
    letta_here = "; ".join(fmt_time(row.median["letta"]) for row in timed) if 0 < len(timed) <= 4 else ""
    return Verdict(goal, "met" if met else "missed", detail, letta_here)
