"""The memory probe: the peak resident memory one call adds, and its working memory, in a fresh Python.

``python -m memprompt.bench.memory OUT.json [--quick] [FILE.af ...]`` measures every
case marked ``memory`` (``memprompt bench`` starts it with :data:`MEMORY_ENV`).

The *working memory* of a call is its peak less what the inputs and the returned
``str`` hold: ``peak_bytes - result_bytes - passed_bytes`` (at least 0), where

- ``peak_bytes`` is the resident memory the call adds at its peak over the resident
  memory just before it, when the inputs are already built and resident (so what they
  hold is not counted);
- ``result_bytes`` is ``sys.getsizeof`` of the ``str`` it returns (0 for anything else);
- ``passed_bytes`` is the ``str`` one step of the call hands to the next (the memory
  section a system message is built around, an input of that step, alive until it returns).

What is left is what the call holds for itself at its peak: buffers, tables, copies.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import subprocess
import sys
import tracemalloc
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import workloads

# The glibc allocator setting of the memory phase: every allocation of 64 KiB or more
# gets pages of its own, returned on free, so one call's peak is not hidden by
# memory freed earlier (the dynamic threshold would otherwise keep large freed blocks).
MEMORY_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "131072"}

#: The renderers whose memory ``--quick`` measures (the full run measures every renderer).
QUICK_MEMORY = ("plain", "line-numbered", "git memory")


class ProbeError(Exception):
    """The probe cannot run here (no /proc/self/status) or failed."""


def run_memory(memory_json: Path, quick: bool, agent_files: Sequence[str] = ()) -> None:
    """The probe in a fresh Python with :data:`MEMORY_ENV`."""
    command = [sys.executable, "-m", "memprompt.bench.memory", str(memory_json), *(["--quick"] if quick else [])]
    command += list(agent_files)
    print("$ " + " ".join(command), flush=True)
    status = subprocess.call(command, env={**os.environ, **MEMORY_ENV})
    if status != 0:
        raise ProbeError(f"the memory measurement failed (exit status {status})")


def _status_kib(field_name: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    raise ProbeError(f"/proc/self/status has no {field_name}")


def reset_peak() -> None:
    # Linux >= 4.0: "5" resets the peak resident set size (VmHWM) to the current one.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _nothing() -> None:
    pass


def peak_added(call: Callable[[], Any], before: Callable[[], None] = _nothing, repeats: int = 3) -> int:
    """The most resident memory ``call()`` adds at its peak, in bytes (the smallest of ``repeats``).

    Before each call: ``before()`` (drop caches), ``gc.collect()``, ``malloc_trim(0)``
    (return freed heap to the system), then the peak RSS is reset to the current RSS
    (``/proc/self/clear_refs``). After it, VmHWM - VmRSS(before) is what the call
    touched at its peak, in Python and in Rust alike, its result included.
    """
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    peaks = []
    for _ in range(repeats):
        before()
        gc.collect()
        if trim is not None:
            trim(0)
        reset_peak()
        rss = _status_kib("VmRSS")
        result = call()
        peaks.append(max(0, _status_kib("VmHWM") - rss) * 1024)
        del result
    return min(peaks)


def working_bytes(peak: int, result: int, passed: int) -> int:
    """A call's working memory: its peak less the str it returns and the str one step hands the next."""
    return max(0, peak - result - passed)


def traced_peak(call: Callable[[], Any], before: Callable[[], None] = _nothing) -> int:
    """``tracemalloc``'s peak for one call: Python's allocator only (it does not see Rust's)."""
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


def measure_memory(quick: bool, agent_files: Sequence[str] = ()) -> dict[str, Any]:
    """Peak memory per call on every case marked ``memory`` (in the ``quick`` subset with ``quick``)."""
    warnings.simplefilter("ignore", DeprecationWarning)
    env = workloads.Env()
    # Letta's modules are a million objects: keep them out of every gc.collect() below.
    gc.collect()
    gc.freeze()
    records = []
    for case in workloads.all_cases(agent_files):
        if not case.memory or (quick and not (case.quick and case.renderer in QUICK_MEMORY)):
            continue
        prepared = env.prepare(case)
        for impl in workloads.IMPLEMENTATIONS:
            call = prepared.run.get(impl)
            if call is None:
                continue
            result = call()  # and warm up
            prepared.verify(impl, result)
            result_bytes = sys.getsizeof(result) if isinstance(result, str) else 0
            del result
            peak = peak_added(call, env.clear_caches)
            record: dict[str, Any] = {
                "renderer": case.renderer,
                "case": case.name,
                "impl": impl,
                "output_bytes": len(prepared.encoded),
                "str_bytes": sys.getsizeof(prepared.text),
                "peak_bytes": peak,
                "result_bytes": result_bytes,
                "passed_bytes": prepared.passed,
                "working_bytes": working_bytes(peak, result_bytes, prepared.passed),
                "traced_bytes": traced_peak(call, env.clear_caches),
            }
            records.append(record)
            print(
                f"memory: {case.id} {impl}: peak {peak / record['str_bytes']:.2f}x the str, "
                f"working {record['working_bytes'] / record['str_bytes']:.2f}x",
                flush=True,
            )
    return {
        "method": "peak VmHWM - VmRSS around one call (/proc/self/clear_refs reset), min of 3; glibc "
        + " ".join(f"{k}={v}" for k, v in MEMORY_ENV.items())
        + "; working memory: that peak less the returned str and the str passed between the call's steps",
        "letta": env.letta.version if env.letta else None,
        "records": records,
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    out, rest = Path(args[0]), args[1:]
    quick = "--quick" in rest
    agent_files = [a for a in rest if a != "--quick"]
    out.write_text(json.dumps(measure_memory(quick, agent_files), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
