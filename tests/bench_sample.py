"""A made-up ``bench.json`` with known medians, for the report and goal tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memprompt.bench.results import Results, load_results

US = 1e-6


def benchmark(
    renderer: str, case: str, impl: str, median: float, output_bytes: int, order: int, reads: int
) -> dict[str, Any]:
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
            "reads": reads,
            **sweep,
        },
    }


def row(
    renderer: str, case: str, times: dict[str, float], output_bytes: int, order: int, reads: int = 100
) -> list[dict[str, Any]]:
    return [benchmark(renderer, case, impl, t, output_bytes, order, reads) for impl, t in times.items()]


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


def memory_record(renderer: str, case: str, impl: str, peak: int, size: int, passed: int = 0) -> dict[str, Any]:
    """A probe record of a call that returns a ``size``-byte str."""
    return {
        "renderer": renderer,
        "case": case,
        "impl": impl,
        "output_bytes": size,
        "str_bytes": size,
        "peak_bytes": peak,
        "result_bytes": size,
        "passed_bytes": passed,
        "working_bytes": max(0, peak - size - passed),
        "traced_bytes": peak // 2,
    }


def write_memory(path: Path, letta: bool = True) -> Path:
    # plain/10x1MB: memprompt works in 1 MB beside its 10 MB str (0.10x), Letta in 30 MB.
    records = [
        memory_record("plain", "10x1MB", impl, peak, 10_000_000)
        for impl, peak in (("memprompt", 11_000_000), ("reference", 30_000_000), ("letta", 40_000_000))
        if letta or impl != "letta"
    ]
    records.append(memory_record("plain", "10x1MB", "copy", 10_000_000, 10_000_000))
    path.write_text(json.dumps({"method": "test", "letta": None, "records": records}))
    return path


def sample(tmp_path: Path, letta: bool = True, memory: bool = False) -> Results:
    """Plain (three sizes), the tree view, metadata, and three real agents whose speed-ups are 12x, 15x and 1.5x.

    memprompt over the read floor plus the copy floor: plain 5x2KB 1.67x, 20x5KB 1.25x, 10x1MB
    3.58x; the tree view 1.98x; metadata (no field read: the copy floor alone) 30x.
    """
    benchmarks = []
    benchmarks += row(
        "plain",
        "5x2KB",
        {
            "memprompt": 2 * US,
            "reference": 14 * US,
            "letta": 10 * US,
            "read": 1 * US,
            "copy": 0.2 * US,
            "decode": 0.7 * US,
        },
        11_000,
        0,
    )
    benchmarks += row(
        "plain",
        "20x5KB",
        {
            "memprompt": 10 * US,
            "reference": 60 * US,
            "letta": 40 * US,
            "read": 4 * US,
            "copy": 4 * US,
            "decode": 6 * US,
        },
        104_000,
        1,
    )
    benchmarks += row(
        "plain",
        "10x1MB",
        {
            "memprompt": 900 * US,
            "reference": 9000 * US,
            "letta": 8000 * US,
            "read": 1.4 * US,
            "copy": 250 * US,
            "decode": 400 * US,
        },
        10_000_000,
        2,
    )
    benchmarks += row(
        "tree view",
        "1000-blocks",
        {"memprompt": 20 * US, "reference": 400 * US, "letta": 300 * US, "read": 10 * US, "copy": 0.1 * US},
        30_000,
        3,
        reads=1300,
    )
    benchmarks += row(
        "metadata",
        "block",
        {"memprompt": 3 * US, "reference": 9 * US, "letta": 8 * US, "copy": 0.1 * US},
        400,
        4,
        reads=0,
    )
    for i, (name, speedup) in enumerate((("a", 12.0), ("b", 15.0), ("c", 1.5))):
        times = {"memprompt": 10 * US, "letta": 10 * US * speedup, "read": 2 * US, "copy": 1 * US, "decode": 1 * US}
        benchmarks += row("real agents: system message", name, times, 20_000, 10 + i)
    if not letta:
        benchmarks = [b for b in benchmarks if b["extra_info"]["impl"] != "letta"]
    memory_json = write_memory(tmp_path / "memory.json", letta) if memory else None
    return load_results(write_json(tmp_path / "bench.json", benchmarks, letta), memory_json)
