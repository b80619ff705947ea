"""``<memory_blocks>``: the plain form and the line-numbered form."""

from __future__ import annotations

from .fields import BlockData

HEADER = "<memory_blocks>\nThe following memory blocks are currently engaged in your core memory unit:\n\n"
FOOTER = "\n</memory_blocks>"
# Letta 0.16.8 constants.CORE_MEMORY_LINE_NUMBER_WARNING, verbatim: it is part of the output.
LINE_NUMBER_WARNING = (
    "# NOTE: Line numbers shown below (with arrows like '1→') are to help during editing. "
    "Do NOT include line number prefixes in your memory edit tool calls."
)


def render_plain(blocks: list[BlockData]) -> str:
    """Every block with its value as it is; "" when there are no blocks."""
    if not blocks:
        return ""
    return HEADER + "\n".join(_section(block, numbered=False) for block in blocks) + FOOTER


def render_line_numbered(blocks: list[BlockData]) -> str:
    """Every block with numbered value lines; the wrapper is written even with no blocks."""
    return HEADER + "\n".join(_section(block, numbered=True) for block in blocks) + FOOTER


def _section(block: BlockData, numbered: bool) -> str:
    label = block.label or "block"
    value = block.value or ""
    limit = 0 if block.limit is None else block.limit
    read_only = "\n- read_only=true" if block.read_only else ""
    parts = [
        f"<{label}>\n<description>\n{block.description or ''}\n</description>\n",
        f"<metadata>{read_only}\n- chars_current={len(value)}\n- chars_limit={limit}\n</metadata>\n",
    ]
    if numbered:
        parts.append(f"<warning>\n{LINE_NUMBER_WARNING}\n</warning>\n<value>\n")
        if value:
            parts.extend(f"{number}→ {line}\n" for number, line in enumerate(value.split("\n"), start=1))
    else:
        parts.append(f"<value>\n{value}\n")
    parts.append(f"</value>\n</{label}>\n")
    return "".join(parts)
