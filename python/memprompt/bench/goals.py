"""The goals: a table, one row each (name, then one or more criteria), judged on one run's results.

A criterion is a *workload* (the report's rows it is about), a *measure* (those rows
to one number, with the detail a reader needs) and a threshold: it is met when that
number is at least (``speedup`` measures) or at most (every other measure) the
threshold. A goal is met when every criterion is measured and met.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .formatting import fmt_time
from .results import Results, Row
from .workloads import RENDERERS

# -- workloads: which rows a goal is about ---------------------------------------


@dataclass(frozen=True)
class Workload:
    """A set of the report's rows: named cases, or whole renderers."""

    text: str
    renderers: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()

    def rows(self, results: Results) -> list[Row]:
        rows = [row for renderer in self.renderers for row in results.of(renderer)]
        return [row for row in rows if row.case in self.cases] if self.cases else rows

    def expected(self) -> int | None:
        """How many rows the workload names (None when it is every row of its renderers)."""
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
    #: Every case's value, where the measure holds each case to the threshold.
    values: tuple[float, ...] = ()


def _each(rows: list[Row], ratio: Callable[[Row], float | None], worst: Callable[..., float]) -> Measured | None:
    pairs = [(row, r) for row in rows if (r := ratio(row)) is not None]
    if not pairs:
        return None
    value = worst(r for _, r in pairs)
    values = tuple(r for _, r in pairs)
    if len(pairs) <= 4:
        return Measured(value, "; ".join(f"{row.case}: {r:.1f}x" for row, r in pairs), values)
    row = next(row for row, r in pairs if r == value)
    word = "lowest" if worst is min else "highest"
    return Measured(value, f"{word} {value:.2f}x ({row.id}) of {len(pairs)} cases", values)


def speedup_each(results: Results, rows: list[Row]) -> Measured | None:
    return _each(rows, Row.speedup, min)


def speedup_median(results: Results, rows: list[Row]) -> Measured | None:
    values = [s for row in rows if (s := row.speedup()) is not None]
    if not values:
        return None
    return Measured(statistics.median(values), f"{statistics.median(values):.1f}x over {len(values)} cases")


def floor_each(results: Results, rows: list[Row]) -> Measured | None:
    return _each(rows, lambda row: row.over_floor("memprompt"), max)


def over_compile_each(results: Results, rows: list[Row]) -> Measured | None:
    """memprompt's time on each row over its time on the same agent's memory section (``compile``)."""
    compiles = {row.case: row for row in results.of(REAL_MEMORY)}

    def over_compile(row: Row) -> float | None:
        compiled = compiles.get(row.case)
        if compiled is None or "memprompt" not in row.median or not compiled.median.get("memprompt"):
            return None
        return row.median["memprompt"] / compiled.median["memprompt"]

    return _each(rows, over_compile, max)


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


def _memory_of(results: Results, rows: list[Row]) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """The memory records of the rows' cases, by case, then implementation."""
    ids = {(row.renderer, row.case) for row in rows}
    found: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for record in results.memory_records():
        if (record["renderer"], record["case"]) in ids and "working_bytes" in record:
            found.setdefault((record["renderer"], record["case"]), {})[record["impl"]] = record
    return found


def working_over_str(results: Results, rows: list[Row]) -> Measured | None:
    """memprompt's working memory over the output str's size, the highest of the cases measured."""
    ratios = [
        (f"{renderer}/{case}", by_impl["memprompt"]["working_bytes"] / by_impl["memprompt"]["str_bytes"])
        for (renderer, case), by_impl in _memory_of(results, rows).items()
        if "memprompt" in by_impl
    ]
    if not ratios:
        return None
    case, worst = max(ratios, key=lambda p: p[1])
    return Measured(worst, f"highest {worst:.2f}x the output str ({case}) of {len(ratios)} cases")


def working_over_letta(results: Results, rows: list[Row]) -> Measured | None:
    """memprompt's working memory over Letta's on the same case, the highest of the cases measured."""
    ratios = []
    for (renderer, case), by_impl in _memory_of(results, rows).items():
        if "memprompt" in by_impl and "letta" in by_impl:
            ours, letta = by_impl["memprompt"]["working_bytes"], by_impl["letta"]["working_bytes"]
            ratios.append((f"{renderer}/{case}", ours / letta if letta else 0.0 if not ours else math.inf))
    if not ratios:
        return None
    case, worst = max(ratios, key=lambda p: p[1])
    return Measured(worst, f"highest {worst:.2f}x Letta's ({case}) of {len(ratios)} cases")


@dataclass(frozen=True)
class Measure:
    text: str
    judge: Callable[[Results, list[Row]], Measured | None]
    #: Met when the value is at least the threshold (else: at most).
    at_least: bool
    needs_letta: bool = False
    needs_memory: bool = False


MEASURES = {
    "speedup": Measure("memprompt's speed-up over Letta, every case", speedup_each, True, True),
    "median speedup": Measure("memprompt's speed-up over Letta, median of the cases", speedup_median, True, True),
    "x read + copy floor": Measure(
        "memprompt's time over the read floor plus the copy floor, every case", floor_each, False
    ),
    "x compile": Measure(
        "memprompt's time over its own `compile` of the same agent's memory section, every case",
        over_compile_each,
        False,
    ),
    "per-byte growth": Measure(
        "memprompt's time per output byte, largest output over smallest, every renderer", linear_growth, False
    ),
    "working memory": Measure(
        "memprompt's working memory over the output str's size, every case measured",
        working_over_str,
        False,
        needs_memory=True,
    ),
    "working memory over Letta's": Measure(
        "memprompt's working memory over Letta's, every case measured",
        working_over_letta,
        False,
        needs_letta=True,
        needs_memory=True,
    ),
}

# -- the goals -------------------------------------------------------------------


@dataclass(frozen=True)
class Criterion:
    """One threshold of a goal: a workload, a measure and its threshold."""

    workload: Workload
    measure: str
    threshold: float
    #: What this criterion is, where a goal has several ("memory section: median").
    label: str = ""


@dataclass(frozen=True)
class Goal:
    """A row of the goals table: met when every criterion is measured and met."""

    name: str
    criteria: tuple[Criterion, ...]


def goal(name: str, workload: Workload, measure: str, threshold: float) -> Goal:
    return Goal(name, (Criterion(workload, measure, threshold),))


REAL_MEMORY, REAL_MESSAGE = "real agents: memory section", "real agents: system message"
REAL_FINGERPRINTED = "real agents: fingerprinted memory section"
#: The renderers whose cases render one section (or message) in full, by size.
RENDERS = tuple(
    r for r in RENDERERS if r not in ("metadata", REAL_MEMORY, REAL_FINGERPRINTED, REAL_MESSAGE, *NOT_RENDERS)
)
#: The renderers held within 1.5x of the read and copy floors.
NEAR_FLOOR = ("plain", "line-numbered", "git memory", "available skills", "directories", "system message")
#: The renderers whose output holds the blocks' values, so that it grows with what they read
#: (the tree view and the skills listing show labels and descriptions only).
OUTPUT_GROWS = ("plain", "line-numbered", "git memory", "directories", "system message")

AGENTS = "every agent given"

GOALS = (
    goal(
        "plain, line-numbered, git memory, skills, directories, system message: every case",
        every(*NEAR_FLOOR, text="every case of these renderers"),
        "x read + copy floor",
        1.5,
    ),
    goal("tree view: every case", every("tree view", text="every case"), "x read + copy floor", 2.5),
    Goal(
        "real agents, memory section and whole system message",
        (
            Criterion(every(REAL_MEMORY, text=AGENTS), "median speedup", 10, "memory section, median"),
            Criterion(every(REAL_MEMORY, text=AGENTS), "speedup", 3, "memory section, every agent"),
            Criterion(every(REAL_MESSAGE, text=AGENTS), "median speedup", 10, "system message, median"),
            Criterion(every(REAL_MESSAGE, text=AGENTS), "speedup", 3, "system message, every agent"),
        ),
    ),
    Goal(
        "working memory of one compile (peak less what the inputs and the returned str hold)",
        (
            Criterion(
                every(*OUTPUT_GROWS, text="the cases measured whose output holds the values"),
                "working memory",
                0.5,
                "where the output grows with the input",
            ),
            Criterion(every(*RENDERS, text="every case measured"), "working memory over Letta's", 1, "against Letta"),
        ),
    ),
    goal("plain, 5 x 2 KB", cases("plain", "5x2KB"), "speedup", 4),
    goal("line-numbered, 20 x 5 KB with short lines", cases("line-numbered", "20x5KB-short-lines"), "speedup", 30),
    goal("metadata block", cases("metadata", "block"), "speedup", 5),
    goal("rebuild decision, 100 KB message", cases("rebuild decision", "100KB"), "speedup", 100),
    goal(
        "recompile with nothing changed, memprompt's own objects",
        cases("recompile", "plain-5x2KB", "plain-20x5KB", "line-numbered-20x5KB", "git-1000-blocks-depth-5"),
        "speedup",
        50,
    ),
    goal("linear cost", every(*RENDERS, text="the size sweeps of each renderer"), "per-byte growth", 2),
    goal(
        "compile_with_fingerprint against compile, every real agent",
        every(REAL_FINGERPRINTED, text=AGENTS),
        "x compile",
        1.3,
    ),
)


@dataclass
class Judged:
    """One criterion of a goal on one run."""

    criterion: Criterion
    #: "met", "missed" or "not measured".
    status: str
    measured: str
    #: Letta's medians on the criterion's cases, when they are few.
    letta_here: str = ""


@dataclass
class Verdict:
    goal: Goal
    #: "met" (every criterion met), "missed" (one missed), or "not measured".
    status: str
    parts: list[Judged]

    def _joined(self, text: Callable[[Judged], str]) -> str:
        labelled = len(self.parts) > 1
        return "; ".join(f"{j.criterion.label}: {text(j)}" if labelled else text(j) for j in self.parts if text(j))

    @property
    def measured(self) -> str:
        return self._joined(lambda j: j.measured)

    @property
    def letta_here(self) -> str:
        return self._joined(lambda j: j.letta_here)

    def threshold(self) -> str:
        return self._joined(lambda j: threshold_text(j.criterion))

    def workload(self) -> str:
        return "; ".join(dict.fromkeys(c.workload.text for c in self.goal.criteria))

    def measure(self) -> str:
        return "; ".join(dict.fromkeys(MEASURES[c.measure].text for c in self.goal.criteria))


def threshold_text(criterion: Criterion) -> str:
    return f"{'>=' if MEASURES[criterion.measure].at_least else '<='} {criterion.threshold:g}x"


def judge_criterion(criterion: Criterion, results: Results) -> Judged:
    measure = MEASURES[criterion.measure]
    rows = criterion.workload.rows(results)
    measured = measure.judge(results, rows)
    if measured is None:
        if measure.needs_letta and not results.letta_present:
            why = f"Letta absent ({results.info.get('letta_absent') or 'not importable'})"
        elif measure.needs_memory and not results.memory_records():
            why = "memory not measured in this run"
        else:
            why = "the cases were not run"
        return Judged(criterion, "not measured", why)
    met = measured.value >= criterion.threshold if measure.at_least else measured.value <= criterion.threshold
    detail = measured.detail
    beyond = [v for v in measured.values if (v < criterion.threshold if measure.at_least else v > criterion.threshold)]
    if beyond and len(measured.values) > 4:
        detail += f", {len(beyond)} {'under' if measure.at_least else 'over'} {criterion.threshold:g}x"
    expected = criterion.workload.expected()
    if expected is not None and len(rows) < expected:
        detail += f" ({expected - len(rows)} case(s) not run)"
    timed = [row for row in rows if "letta" in row.median]
    letta_here = "; ".join(fmt_time(row.median["letta"]) for row in timed) if 0 < len(timed) <= 4 else ""
    return Judged(criterion, "met" if met else "missed", detail, letta_here)


def judge(goal: Goal, results: Results) -> Verdict:
    parts = [judge_criterion(criterion, results) for criterion in goal.criteria]
    statuses = {part.status for part in parts}
    status = "missed" if "missed" in statuses else "met" if statuses == {"met"} else "not measured"
    return Verdict(goal, status, parts)
