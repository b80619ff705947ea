"""``<directories>``: each attached source with its files, and the rule that file
blocks are unique by label."""

from __future__ import annotations

from typing import Any

from .fields import FILE_BLOCK, BlockData, SourceData, read_label


def first_of_each_label(file_blocks: Any) -> list[Any]:
    """The file blocks without the later ones whose label was already seen (None counts as a label)."""
    seen: set[str | None] = set()
    kept = []
    for index, block in enumerate(file_blocks):
        label = read_label(block, index, FILE_BLOCK)
        if label not in seen:
            seen.add(label)
            kept.append(block)
    return kept


def render_directories(
    file_blocks: list[BlockData], sources: list[SourceData], max_files_open: int | None, react: bool
) -> str:
    out = ["\n\n<directories>\n"]
    if max_files_open is not None:
        open_count = sum(1 for block in file_blocks if block.value)
        out.append(
            f"<file_limits>\n- current_files_open={open_count}\n- max_files_open={max_files_open}\n</file_limits>\n"
        )
    write_file = _react_file if react else _file
    for source in sources:
        out.append(f'<directory name="{source.name}">\n')
        if source.description:
            out.append(f"<description>{source.description}</description>\n")
        if source.instructions:
            out.append(f"<instructions>{source.instructions}</instructions>\n")
        if source.id is not None:
            out.extend(write_file(block) for block in file_blocks if block.source_id == source.id)
        out.append("</directory>\n")
    out.append("</directories>")
    return "".join(out)


def _metadata(block: BlockData) -> str:
    read_only = "\n- read_only=true" if block.read_only else ""
    limit = 0 if block.limit is None else block.limit
    return f"<metadata>{read_only}\n- chars_current={len(block.value or '')}\n- chars_limit={limit}\n</metadata>\n"


def _status(block: BlockData) -> str:
    return "open" if block.value else "closed"


def _file(block: BlockData) -> str:
    parts = [f'<file status="{_status(block)}" name="{block.label or "file"}">\n']
    if block.description:
        parts.append(f"<description>\n{block.description}\n</description>\n")
    parts.append(_metadata(block))
    if block.value:
        parts.append(f"<value>\n{block.value}\n</value>\n")
    parts.append("</file>\n")
    return "".join(parts)


def _react_file(block: BlockData) -> str:
    label = block.label or "file"
    return (
        f'<file status="{_status(block)}">\n<{label}>\n'
        f"<description>\n{block.description or ''}\n</description>\n"
        f"{_metadata(block)}<value>\n{block.value or ''}\n</value>\n</{label}>\n</file>\n"
    )
