"""Times, sizes and ratios as the report and the chart print them."""

from __future__ import annotations

import math
import platform

from .results import Results


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


def machine_line(results: Results) -> str:
    machine = results.machine
    cpu = machine.get("cpu", {})
    brand = (
        cpu.get("brand_raw") or cpu.get("brand") or machine.get("processor") or platform.processor() or "unknown CPU"
    )
    info = results.info
    cores = info.get("cpu_count") or cpu.get("count")
    python = f"{machine.get('python_implementation', 'CPython')} {machine.get('python_version', '')}".strip()
    absent = info.get("letta_absent") or "not importable"
    letta = f"letta {info['letta']}" if info.get("letta") else f"Letta absent ({absent})"
    load = f"; run at nice {info['nice']}" if info.get("nice") else ""
    if info.get("load_before"):
        load += f"; load average {info['load_before'][0]:g} before, {info.get('load_after', ['?'])[0]} after"
    return (
        f"{brand}, {cores} cores ({machine.get('system', platform.system())} {machine.get('release', '')}); {python}; "
        f"memprompt {info.get('memprompt') or '?'}; {letta}{load}"
    )
