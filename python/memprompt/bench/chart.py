"""``chart.png``: log-log median time against output size, one panel per renderer (needs matplotlib)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .formatting import machine_line
from .results import Results
from .workloads import IMPLEMENTATIONS

LABELS = {
    "memprompt": "memprompt (Rust)",
    "reference": "reference (Python)",
    "letta": "letta 0.16.8",
    "read": "read floor (attrgetter)",
    "copy": "copy floor (s[:-1])",
    "decode": "decode floor",
}
COLORS = {
    "memprompt": "#d95f02",
    "reference": "#1f78b4",
    "letta": "#33a02c",
    "read": "#7570b3",
    "copy": "#000000",
    "decode": "#9f9f9f",
}
MARKERS = {"memprompt": "o", "reference": "s", "letta": "^", "read": "_", "copy": "_", "decode": "_"}
#: Line styles of a panel's sweeps (first, second ...); the floors are always dashed.
SWEEP_STYLES = ("-", ":", "-.")
FLOOR_STYLE = {"read": "-.", "copy": "--", "decode": (0, (1, 2))}


def write_chart(results: Results, path: Path) -> bool:
    """Log-log median time against output size, one panel per renderer. False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.lines
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    renderers = results.renderers()
    if not renderers:
        return False
    columns = 3
    rows_count = math.ceil(len(renderers) / columns)
    fig, axes = plt.subplots(rows_count, columns, figsize=(5.2 * columns, 3.9 * rows_count), squeeze=False)
    for ax, renderer in zip(axes.flat, renderers):
        rows = sorted(results.of(renderer), key=lambda r: r.output_bytes)
        sweeps = list(dict.fromkeys(row.params["sweep"] for row in rows if row.params.get("sweep")))
        for impl in IMPLEMENTATIONS:
            floor = impl in FLOOR_STYLE
            style: dict[str, Any] = dict(
                color=COLORS[impl], markersize=4, linewidth=1.0 if floor else 1.4, marker=MARKERS[impl]
            )
            labelled = False
            # Each sweep is a curve; the other cases (separate inputs) are points.
            for number, sweep in enumerate(sweeps):
                points = [
                    (row.output_bytes, row.median[impl])
                    for row in rows
                    if row.params.get("sweep") == sweep and impl in row.median
                ]
                if points:
                    xs, ys = zip(*points)
                    linestyle = FLOOR_STYLE[impl] if floor else SWEEP_STYLES[number % len(SWEEP_STYLES)]
                    ax.plot(xs, ys, linestyle=linestyle, label=None if labelled else LABELS[impl], **style)
                    labelled = True
            points = [
                (row.output_bytes, row.median[impl])
                for row in rows
                if not row.params.get("sweep") and impl in row.median
            ]
            if points:
                xs, ys = zip(*points)
                ax.plot(xs, ys, linestyle="none", label=None if labelled else LABELS[impl], **style)
        if len(sweeps) > 1 or (sweeps and any(not row.params.get("sweep") for row in rows)):
            keys = [
                matplotlib.lines.Line2D(
                    [], [], color="black", linestyle=SWEEP_STYLES[n % len(SWEEP_STYLES)], linewidth=1
                )
                for n in range(len(sweeps))
            ]
            names = list(sweeps)
            if any(not row.params.get("sweep") for row in rows):
                keys.append(matplotlib.lines.Line2D([], [], color="black", marker="o", linestyle="none", markersize=3))
                names.append("other cases")
            ax.legend(keys, names, fontsize=6, loc="upper left", frameon=False)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(renderer, fontsize=11)
        ax.set_xlabel("message size (bytes)" if renderer == "rebuild decision" else "output size (bytes)", fontsize=8)
        ax.set_ylabel("median time (s)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="major", linewidth=0.4, alpha=0.6)
    for ax in list(axes.flat)[len(renderers) :]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    for ax in axes.flat:
        panel_handles, panel_labels = ax.get_legend_handles_labels()
        if len(panel_handles) > len(handles):
            handles, labels = panel_handles, panel_labels
    fig.legend(handles, labels, loc="upper center", ncol=6, frameon=False, fontsize=10, bbox_to_anchor=(0.5, 1.0))
    fig.suptitle(f"memprompt vs reference vs Letta: {machine_line(results)}", fontsize=8, y=0.965)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
