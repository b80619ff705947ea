"""The results of one run: each case's medians (``bench.json``) and the memory probe's records (``memory.json``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_PARAM_KEYS = ("blocks", "value", "depth", "files", "rules", "agent", "agent_type", "kind", "text", "sweep")


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
    #: How many fields the read floor reads (0: none, and the read floor is nothing).
    reads: int = 0

    @property
    def id(self) -> str:
        return f"{self.renderer}/{self.case}"

    def ratio(self, a: str, b: str) -> float | None:
        """``median[a] / median[b]``, or None when either is missing."""
        if a in self.median and b in self.median and self.median[b] > 0:
            return self.median[a] / self.median[b]
        return None

    def floor(self) -> float | None:
        """The read floor plus the copy floor (the read floor is 0 where no field is read), or None."""
        if "copy" not in self.median or (self.reads and "read" not in self.median):
            return None
        return self.median.get("read", 0.0) + self.median["copy"]

    def over_floor(self, impl: str) -> float | None:
        """``impl``'s median over the read floor plus the copy floor."""
        floor = self.floor()
        if impl not in self.median or not floor:
            return None
        return self.median[impl] / floor

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
        info: dict[str, Any] = self.machine.get("memprompt_bench", {})
        return info

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

    def memory_records(self) -> list[dict[str, Any]]:
        return list((self.memory or {}).get("records", []))


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
                reads=info.get("reads", 0),
            )
        row.median[info["impl"]] = bench["stats"]["median"] / info.get("calls", 1)
        row.rounds[info["impl"]] = bench["stats"]["rounds"]
    memory = json.loads(Path(memory_json).read_text()) if memory_json else None
    return Results(
        list(rows.values()), data.get("machine_info", {}), data.get("datetime", ""), data.get("commit_info", {}), memory
    )
