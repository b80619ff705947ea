"""Instruction counts of the bench's callables, under valgrind's callgrind.

Counts do not depend on what else the machine does; from one run to the next they agree within about 1%
(Letta's objects carry random ids), so two builds can be compared well inside a bound such as "at most 5%
more on any real agent".

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=OUT/cg.%p \
        python scripts/callgrind_bench.py [--impl memprompt] [--match REGEX] [--agents FILE.af ...]

or, doing that for you: ``python scripts/callgrind_bench.py --run OUT [same options]``, which prints one
line per case: its id and the instructions of one call of the implementation, less an empty call.
Each case is prepared and called once outside the count (warm-up, checked against the reference), then
counted over --repeat calls (the median is printed); each call's counts are dumped to OUT/cg.<pid>.<n>
(``callgrind_annotate`` reads them; a dump's trigger names its case).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

# Callgrind's client requests, from its own header: a C function per request, loaded with ctypes.
_REQUESTS = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void cg_stop(const char *name) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT(name); }
"""


def _requests(folder: Path) -> ctypes.CDLL:
    # A fixed path (not a random temporary one): every run of the script then holds the same objects.
    (folder / "requests.c").write_text(_REQUESTS)
    subprocess.run(
        ["gcc", "-O1", "-shared", "-fPIC", "-o", str(folder / "requests.so"), str(folder / "requests.c")],
        check=True,
    )
    lib = ctypes.CDLL(str(folder / "requests.so"))
    lib.cg_stop.argtypes = [ctypes.c_char_p]
    return lib


def measure(folder: Path, impl: str, match: str, agents: list[str], repeat: int) -> None:
    from memprompt.bench import workloads

    lib = _requests(folder)
    env = workloads.Env(with_letta=True)
    for _ in range(repeat):
        lib.cg_start()
        lib.cg_stop(b"empty")
    pattern = re.compile(match)
    for case in workloads.all_cases(agents):
        if not pattern.search(case.id):
            continue
        prepared = env.prepare(case)
        run = prepared.once.get(impl)
        if run is None:
            continue
        prepared.verify(impl, run())  # warm-up, and the output is the reference's
        for _ in range(repeat):
            gc.collect()  # the collector's next run falls at the same point of every count
            lib.cg_start()
            run()
            lib.cg_stop(case.id.encode())
        env.forget()


def _totals(folder: Path) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = {}
    for dump in sorted(folder.glob("cg.*"), key=lambda p: [int(x) for x in re.findall(r"\d+", p.name)]):
        text = dump.read_text(errors="replace")
        trigger = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        summary = re.search(r"^totals: (\d+)", text, re.M)
        if trigger and summary:
            rows.setdefault(trigger.group(1), []).append(int(summary.group(1)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--impl", default="memprompt", help="the implementation counted (default memprompt)")
    parser.add_argument("--match", default="^real agents", help="a regex over case ids (default: the real agents)")
    parser.add_argument("--agents", nargs="*", default=[], help="agent files for the real-agent cases")
    parser.add_argument("--repeat", type=int, default=5, help="counted calls per case; the median is printed")
    parser.add_argument("--out", default=".", help="where the client-request library is built (under --run: OUT)")
    parser.add_argument("--run", metavar="OUT", help="run this script under callgrind, dumps in OUT, and print totals")
    args = parser.parse_args()
    if args.run is None:
        measure(Path(args.out), args.impl, args.match, args.agents, args.repeat)
        return
    out = Path(args.run)
    out.mkdir(parents=True, exist_ok=True)
    # setarch -R: no address randomization, so pointer-keyed lookups probe alike from run to run.
    command = [
        "setarch",
        "-R",
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}/cg.%p",
        sys.executable,
        __file__,
        "--out",
        str(out),
        "--impl",
        args.impl,
        "--match",
        args.match,
        "--repeat",
        str(args.repeat),
        "--agents",
        *args.agents,
    ]
    env = dict(os.environ, PYTHONHASHSEED="0")
    subprocess.run(command, check=True, env=env, stderr=subprocess.DEVNULL)
    rows = {name: statistics.median(counts) for name, counts in _totals(out).items()}
    empty = rows.pop("empty", 0)
    for name, total in rows.items():
        print(f"{int(total - empty):>12,}  {name}")


if __name__ == "__main__":
    main()
