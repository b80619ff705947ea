"""The timed run: pytest-benchmark over the shipped suite, in this Python, into ``bench.json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: pytest-benchmark settings: (full run, --quick).
TIMING = {
    False: [
        "--benchmark-min-rounds=5",
        "--benchmark-max-time=0.5",
        "--benchmark-warmup=on",
        "--benchmark-warmup-iterations=3",
    ],
    True: ["-m", "quick", "--benchmark-min-rounds=3", "--benchmark-max-time=0.02", "--benchmark-warmup=off"],
}


def suite_command(agent_files: Sequence[str], *options: str) -> list[str]:
    """``python -m pytest`` over the suite shipped in this package, from whatever folder it runs in."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "memprompt.bench.suite.plugin",
        "--pyargs",
        "memprompt.bench.suite",
    ]
    command += ["-q", "-p", "no:cacheprovider"]
    command += [*options]
    if agent_files:
        command += ["--agents", *agent_files]
    return command


def run_timing(bench_json: Path, quick: bool, agent_files: Sequence[str] = (), extra: Sequence[str] = ()) -> int:
    """pytest-benchmark over the suite; its exit status. ``bench_json`` also records the machine's load."""
    command = suite_command(
        agent_files,
        f"--benchmark-json={bench_json}",
        "--benchmark-group-by=group",
        "--benchmark-sort=name",
        "--benchmark-columns=min,median,max,rounds",
        *TIMING[quick],
        *extra,
    )
    print("$ " + " ".join(command), flush=True)
    load_before = load_average()
    started = time.monotonic()
    status = subprocess.call(command)
    if bench_json.is_file():
        data = json.loads(bench_json.read_text())
        for benchmark in data.get("benchmarks", []):
            # Every round's time: ~2 MB a benchmark for the fast ones. The statistics stay.
            (benchmark.get("stats") or {}).pop("data", None)
        # How loaded the machine was: a busy machine inflates every column alike.
        data.setdefault("machine_info", {}).setdefault("memprompt_bench", {}).update(
            load_before=load_before,
            load_after=load_average(),
            wall_seconds=round(time.monotonic() - started, 1),
            quick=quick,
        )
        bench_json.write_text(json.dumps(data, indent=1))
    return status


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def extension_build() -> dict[str, Any]:
    """Where memprompt's compiled extension is, and whether it is a debug build (its timings mean nothing)."""
    try:
        from memprompt import _core
    except ImportError as e:
        return {"path": None, "debug": None, "error": str(e)}
    path = getattr(_core, "__file__", None)
    debug = None
    if path:
        # A debug build of the crate carries DWARF sections; a release build (profile.release) has none.
        with open(path, "rb") as f:
            debug = b".debug_info\x00" in f.read()
    return {"path": path, "debug": debug}
