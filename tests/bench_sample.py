"""A made-up ``bench.json`` with known medians, for the report and goal tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memprompt.bench.results import Results, load_results

US = 1e-6


def benchmark(renderer: str, case: str, impl: str, median: float, output_bytes: int, order: int) -> dict[str, Any]:
    sweep = {"sweep": "sizes"} if renderer == "plain" else {}
    return {
        "group": f"{renderer}/{case}",
        "name": f"test_case[{case}-{impl}]",
        "stats": {"median": median, "rounds": 5, "min": median, "max": median},
        "extra_info": {
            "renderer": renderer,
            "case": case,
            "impl": impl,
            "order": order,
            "output_bytes": output_bytes,
            "output_chars": output_bytes,
            **sweep,
        },
    }


def row(renderer: str, case: str, times: dict[str, float], output_bytes: int, order: int) -> list[dict[str, Any]]:
    return [benchmark(renderer, case, impl, t, output_bytes, order) for impl, t in times.items()]


def write_json(path: Path, benchmarks: list[dict[str, Any]], letta: bool = True) -> Path:
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


def write_memory(path: Path) -> Path:
    records = [
        {
            "renderer": "plain",
            "case": "10x1MB",
            "impl": impl,
            "output_bytes": 10_000_000,
            "str_bytes": 10_000_049,
            "peak_bytes": peak,
            "traced_bytes": peak // 2,
        }
        for impl, peak in (("memprompt", 11_000_000), ("reference", 30_000_000), ("copy", 10_000_000))
    ]
    path.write_text(json.dumps({"method": "test", "letta": None, "records": records}))
    return path


def sample(tmp_path: Path, letta: bool = True, memory: bool = False) -> Results:
    """Plain (three sizes), metadata, and three real agents whose speed-ups are 12x, 15x and 1.5x."""
    benchmarks = []
    benchmarks += row(
        "plain",
        "5x2KB",
        {"memprompt": 2 * US, "reference": 14 * US, "letta": 10 * US, "copy": 0.2 * US, "decode": 0.7 * US},
        11_000,
        0,
    )
    benchmarks += row(
        "plain",
        "20x5KB",
        {"memprompt": 10 * US, "reference": 60 * US, "letta": 40 * US, "copy": 4 * US, "decode": 6 * US},
        104_000,
        1,
    )
    benchmarks += row(
        "plain",
        "10x1MB",
        {"memprompt": 900 * US, "reference": 9000 * US, "letta": 8000 * US, "copy": 250 * US, "decode": 400 * US},
        10_000_000,
        2,
    )
    benchmarks += row(
        "metadata", "block", {"memprompt": 3 * US, "reference": 9 * US, "letta": 8 * US, "copy": 0.1 * US}, 400, 3
    )
    for i, (name, speedup) in enumerate((("a", 12.0), ("b", 15.0), ("c", 1.5))):
        times = {"memprompt": 10 * US, "letta": 10 * US * speedup, "copy": 1 * US, "decode": 1 * US}
        benchmarks += row("real agents: system message", name, times, 20_000, 10 + i)
    if not letta:
        benchmarks = [b for b in benchmarks if b["extra_info"]["impl"] != "letta"]
    memory_json = write_memory(tmp_path / "memory.json") if memory else None
    return load_results(write_json(tmp_path / "bench.json", benchmarks, letta), memory_json)
