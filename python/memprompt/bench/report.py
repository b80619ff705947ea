"""``REPORT.md``: the goals met or missed, one table per renderer, the memory probe, and how it was measured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .chart import write_chart
from .formatting import fmt_bytes, fmt_fraction, fmt_ratio, fmt_time, machine_line
from .goals import GOALS, NOT_RENDERS, Verdict, judge, per_byte_growth
from .reads import CHOSEN_PARTS, RENDERER_PARTS, describe_parts
from .results import Results, Row

#: Below this output size, RSS pages and heap growth make a peak uncertain by ~0.1 MB.
SMALL_OUTPUT = 256_000


def write_report(results: Results, report: Path, chart: Path | None = None) -> Path:
    """Write REPORT.md (and the chart, when matplotlib is importable)."""
    chart_written = write_chart(results, chart) if chart is not None else False
    lines = render_report(results, chart.name if chart_written and chart else None)
    report.write_text("\n".join(lines) + "\n")
    return report


def render_report(results: Results, chart_name: str | None) -> list[str]:
    info = results.info
    commit = results.commit or {}
    made = f"Made by `memprompt bench{' --quick' if info.get('quick') else ''}` on {results.when[:19].replace('T', ' ')} UTC"
    if commit.get("id") not in (None, "", "unversioned"):  # run inside a git checkout: its commit
        made += f", commit {commit.get('id', '')[:10]}{' (with uncommitted changes)' if commit.get('dirty') else ''}"
    if info.get("wall_seconds"):
        made += f", in {info['wall_seconds']:.0f} s"
    lines = [
        "# memprompt benchmarks",
        "",
        made + ".",
        "",
        f"Machine: {machine_line(results)}.",
        "",
        "Each case runs every implementation on the same input objects (Letta's own pydantic objects when Letta is "
        "present; memprompt and the reference read them with `getattr`) and asserts that each output equals the "
        "reference's. Times are pytest-benchmark medians. Three floors: the **read floor** is CPython's own "
        "`getattr` of each field Letta's renderer reads on the case's input objects, once per object "
        "(`list(map(operator.attrgetter(*fields), objects))`, in C; the fields are listed under each renderer, and "
        "each run checks them against the reads Letta makes); the **copy floor** is `s[:-1]` of the output `s`, a "
        "fresh `str` of the output's own width and length made from one in memory (one allocation, one copy); "
        "together they are what no renderer that reads the objects and returns a new `str` can pass. The **decode "
        'floor** is `bytes.decode("utf-8")` of the output\'s UTF-8 bytes. Each implementation is shown as a '
        "multiple of the read floor plus the copy floor (`x (read + copy)`), and memprompt also of the copy and "
        "decode floors alone (`x copy / x decode`). "
        "`memprompt/Letta` below 1 means memprompt is faster (the speed-up is in brackets). "
        "memprompt renders in full each time (its compile cache is cleared), except in *recompile*, "
        "which measures the cache hit.",
        "",
        "On a machine shared with other jobs (load average above), medians of runs minutes apart differ by up to "
        "~30% for the same code (up to 2x for outputs of several MB), so a ratio near a goal's threshold is not a "
        "clear pass or miss.",
        "",
    ]
    if (info.get("extension") or {}).get("debug"):
        lines += ["**Warning: memprompt's extension was a debug build in this run: its timings are meaningless.**", ""]
    if chart_name:
        lines += [f"![time against output size, one panel per renderer]({chart_name})", ""]
    lines += render_goals(results)
    for renderer in results.renderers():
        lines += render_renderer(results, renderer)
    lines += render_memory(results)
    lines += METHOD_NOTES
    return lines


def render_goals(results: Results) -> list[str]:
    lines = [
        "## Goals",
        "",
        "| goal | workload | measure | threshold | measured | Letta here | |",
        "|---|---|---|--:|---|---|---|",
    ]
    for verdict in verdicts(results):
        cells = [
            verdict.goal.name,
            verdict.workload(),
            verdict.measure(),
            verdict.threshold(),
            verdict.measured,
            verdict.letta_here,
            mark(verdict.status),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines + [""]


def goals_summary(results: Results) -> list[str]:
    """The goals met or missed, one line each, as ``memprompt bench`` prints them."""
    found = verdicts(results)
    width = max(len(verdict.status) for verdict in found)
    lines = [f"goals ({sum(v.status == 'met' for v in found)} met, {sum(v.status == 'missed' for v in found)} missed):"]
    for verdict in found:
        lines.append(f"  {verdict.status:<{width}}  {verdict.goal.name} [{verdict.threshold()}]: {verdict.measured}")
    return lines


def verdicts(results: Results) -> list[Verdict]:
    return [judge(goal, results) for goal in GOALS]


def mark(status: str) -> str:
    return {"met": "**met**", "missed": "**missed**"}.get(status, status)


def _multiples(row: Row, impl: str) -> str:
    return f"{fmt_ratio(row.ratio(impl, 'copy'))} / {fmt_ratio(row.ratio(impl, 'decode'))}"


def reads_note(renderer: str) -> str:
    """The fields the renderer's read floor reads."""
    if renderer in RENDERER_PARTS:
        return f"Read floor: {describe_parts(RENDERER_PARTS[renderer])}."
    return (
        f"Read floor: the fields of the parts each case's render runs ({CHOSEN_PARTS}; "
        "`memprompt.bench.reads.PARTS` lists each part's fields)."
    )


def render_renderer(results: Results, renderer: str) -> list[str]:
    lines = [f"## {renderer}", ""]
    if RENDERER_NOTES.get(renderer):
        lines += [RENDERER_NOTES[renderer], ""]
    lines += [
        reads_note(renderer),
        "",
        "| case | output | fields read | read floor | copy floor | read + copy | decode floor | memprompt "
        "| x (read + copy) | x copy / x decode | reference | x (read + copy) | Letta | x (read + copy) "
        "| memprompt/Letta | memprompt/reference |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    rows = results.of(renderer)
    for row in rows:
        cells = [
            row.case,
            fmt_bytes(row.output_bytes),
            f"{row.reads:,}",
            fmt_time(row.median.get("read")) if row.reads else "none",
            fmt_time(row.median.get("copy")),
            fmt_time(row.floor()),
            fmt_time(row.median.get("decode")),
        ]
        for impl in ("memprompt", "reference", "letta"):
            if impl in row.median:
                cells += [fmt_time(row.median[impl]), fmt_ratio(row.over_floor(impl))]
            else:
                cells += ["absent" if impl == "letta" else "-", "-"]
            if impl == "memprompt":
                cells.append(_multiples(row, impl))
        cells += [fmt_fraction(row.ratio("memprompt", "letta")), fmt_fraction(row.ratio("memprompt", "reference"))]
        lines.append("| " + " | ".join(cells) + " |")
    growth = per_byte_growth(rows, "memprompt")
    if growth and renderer not in NOT_RENDERS and not renderer.startswith("real agents"):
        lines += [
            "",
            f"memprompt's time per output byte, largest output over smallest: {growth[0]:.2f}x "
            f"(worst over any smaller output: {growth[1]:.2f}x).",
        ]
    return lines + [""]


def render_memory(results: Results) -> list[str]:
    records = results.memory_records()
    if not records:
        return ["## Memory", "", "Not measured in this run (`--no-memory`).", ""]
    by_case: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for record in records:
        by_case.setdefault((record["renderer"], record["case"]), {})[record["impl"]] = record
    lines = [
        "## Memory",
        "",
        "The working memory of one call (its peak less what the inputs and the returned `str` hold: see *Method*), "
        "and in brackets the peak it adds, each as a multiple of the output `str`'s own size (`sys.getsizeof`: 1, 2 "
        "or 4 bytes a character; Rust's allocations included).",
        "",
        "| case | output (UTF-8) | `str` | memprompt | reference | Letta | read floor | copy floor | decode floor |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for (renderer, case), by_impl in by_case.items():
        first = next(iter(by_impl.values()))
        out, size = int(first["output_bytes"]), int(first["str_bytes"])
        small = " (*)" if out < SMALL_OUTPUT else ""
        cells = [f"{renderer}/{case}{small}", fmt_bytes(out), fmt_bytes(size)]
        for impl in ("memprompt", "reference", "letta", "read", "copy", "decode"):
            found = by_impl.get(impl)
            if found is None:
                cells.append("absent" if impl == "letta" else "-")
            else:
                working = found.get("working_bytes", found["peak_bytes"])
                cells.append(f"{working / size:.2f}x ({found['peak_bytes'] / size:.2f}x)")
        lines.append("| " + " | ".join(cells) + " |")
    if any(int(record["output_bytes"]) < SMALL_OUTPUT for record in records):
        lines += ["", f"(*) Output under {fmt_bytes(SMALL_OUTPUT)}: pages and heap growth blur these by ~0.1 MB."]
    lines += ["", f"Method: {(results.memory or {}).get('method', '')}. See *Method* below.", ""]
    return lines


RENDERER_NOTES = {
    "plain": "`Memory.compile()` of a memgpt_agent: `<memory_blocks>`. Cases are blocks x value size "
    "(ASCII prose, every 7th block read-only); `-latin1` and `-ucs2` hold some `é` (and em dashes), so Python "
    "stores them with 1 or 2 bytes a character, not as UTF-8 (and the decode floor is then far above the copy floor).",
    "line-numbered": "`Memory.compile(llm_config=anthropic)` of a letta_v1_agent: every value line numbered. "
    "`-short-lines`: a newline every ~13 characters (~7,600 lines), where the cost per line shows.",
    "git memory": "`Memory.compile()` with git memory: `<self>`, nested `<memory>` tags and the `<external_projection>` "
    "tree. Of every 10 blocks 7 are `system/...`, 1 a skill and 2 external notes; labels are `depth` parts deep.",
    "tree view": "`<memory_filesystem>` of the same memories (Letta: `_render_memory_filesystem`).",
    "available skills": "`compile_available_skills(client_skills)` on the same memories, with 6 client skills; "
    "`-no-skills`: the same memory with no block under `skills/`.",
    "directories": "`Memory.compile(sources=..., max_files_open=...)`: one source per 20 files, "
    "two files in three open (3 KB each).",
    "metadata": "`compile_memory_metadata_block` (America/New_York, archival count and tags).",
    "system message": "The whole message[0] rebuild: tool rules (one of each type) -> `Memory.compile` "
    "(blocks, 8 files in 2 sources) -> `get_system_message_from_compiled_memory`.",
    "real agents: memory section": "The memory section Letta compiles when it rebuilds each agent of the agent files "
    "given with `--agents` (read by `memprompt.agentfile`, converted to Letta's objects): tool rules, then "
    "`Memory.compile`.",
    "real agents: fingerprinted memory section": "The same memory section with its fingerprint and section offsets "
    "(`compile_with_fingerprint`, the reference's too). Letta has no fingerprint: its column is its `Memory.compile`.",
    "real agents: system message": "The whole message[0] rebuild of the same agents: the memory section above, "
    "then `get_system_message_from_compiled_memory`.",
    "rebuild decision": "Is message[0] current (memory unchanged)? memprompt: "
    "`needs_rebuild(template, compiled, text, stamp=...)` (recorded fingerprints). "
    "Letta: `template not in text` and `memory not in text`. Reference: xxhash of template and memory. "
    "Output size and floors: the stored message.",
    "recompile": "`Memory.compile()` again with nothing changed: memprompt's second call returns its cached result; "
    "the reference and Letta render in full. memprompt's `Memory` holds memprompt's own `Block` objects with the "
    "same values (its cache then proves nothing changed from counted attribute writes, reading no field), except in "
    "the `-letta-objects` cases, where it holds Letta's pydantic blocks and reads and compares every field.",
}

METHOD_NOTES = [
    "## Method",
    "",
    "- Suite: `memprompt.bench.suite` (pytest-benchmark 5.3.1), shipped with the package; "
    "`memprompt.bench.workloads` builds every input (`python -m memprompt.bench.workloads [FILE.af ...]` lists the "
    "cases). Run: `memprompt bench [--quick] [--out DIR] [--agents FILE.af ...]`; correctness only: "
    "`python -m pytest --pyargs memprompt.bench.suite --benchmark-disable` (each body once, outputs compared).",
    "- Grids: blocks 1 to 10,000 and values 100 B to 1 MB, but not their product: 10,000 x 1 MB would be a 10 GB "
    "prompt; the largest cases are 10 x 1 MB and 10,000 x 1 KB (~10 MB). Git memory: 10 to 10,000 blocks, depth 1 "
    "to 50, but 10,000 x depth 50 (a ~50 MB prompt) is not run. Letta runs every case that is run.",
    "- memprompt's `Memory` caches its last compile; a full render clears the cache first "
    "(`memory.clear_cache()`, inside the timing).",
    "- Read floor: `memprompt.bench.reads`. `PARTS` lists, per part of a render, the fields Letta 0.16.8 reads of "
    "each kind of input object (the memory, blocks, file blocks, sources, tool rules, client skills, the "
    "llm_config) and which objects of that kind; each renderer runs the parts `RENDERER_PARTS` names (a compile's "
    "follow its memory, as `Memory.compile` chooses them). The floor merges each object's fields and reads them "
    "with one `list(map(attrgetter(*fields), objects))` a field list. Every run records, through each input "
    "object's own attribute lookup, the fields Letta's run reads and the fields the floor reads, and fails unless "
    "they are the same (object, field) pairs, the floor's each once. Not input objects: Letta's `ToolRulesSolver` "
    "(the rules' container, as the list is memprompt's) and the `tool_usage_rules` block made inside the call.",
    "- Memory: a fresh Python per run, glibc told to give every allocation of 64 KiB or more its own pages "
    "(`MALLOC_MMAP_THRESHOLD_=65536`), so freed memory cannot hide a peak. The inputs are built first and resident. "
    "Before each call: `gc.collect()`, `malloc_trim(0)`, and the peak RSS is reset "
    "(`echo 5 > /proc/self/clear_refs`); after it, `VmHWM - VmRSS` from `/proc/self/status` is the memory the call "
    "added at its peak, Rust included, the result included (4 KiB pages; the smallest of 3 calls). Its **working "
    "memory** is that peak less the returned `str` (`sys.getsizeof`) and less the `str` one step of the call hands "
    "the next (the memory section a system message is built around, an input of that step): what the call holds "
    "for itself. `memory.json` also keeps `tracemalloc`'s peak (Python's allocator only: it misses Rust's buffers).",
    "- Time per output byte: memprompt's median divided by the output's UTF-8 size, compared between the largest and "
    "the smallest output of a renderer (and, stricter, between any output and any smaller one).",
    "",
]
