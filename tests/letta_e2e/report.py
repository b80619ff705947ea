"""The benchmarks' sections of docs/server-bench.md and of the README: each test rewrites only its own."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "docs" / "server-bench.md"
README = ROOT / "README.md"


def write_section(path: Path, name: str, lines: list[str]) -> None:
    """Put ``lines`` between the markers ``<!-- name -->`` and ``<!-- /name -->`` of ``path`` (appended, with
    the markers, when they are not there yet)."""
    start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    text = path.read_text() if path.exists() else ""
    block = "\n".join([start, *lines, end])
    if start in text and end in text:
        before, rest = text.split(start, 1)
        text = before + block + rest.split(end, 1)[1]
    else:
        text = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
