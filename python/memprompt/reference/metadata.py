"""``<memory_metadata>``: the agent's ids, when the prompt was built, and memory counts."""

from __future__ import annotations

import datetime as _dt
from typing import Any

import pytz

from .fields import type_name

TIMESTAMP_FORMAT = "%Y-%m-%d %I:%M:%S %p %Z%z"


def format_timestamp(when: object, timezone: object) -> str:
    """``when`` in ``timezone`` (a pytz name), or as it is when ``timezone`` is falsy."""
    if not isinstance(when, _dt.datetime):
        raise TypeError(f"memory_edit_timestamp must be a datetime, not {type_name(when)}")
    if not timezone:
        return when.strftime(TIMESTAMP_FORMAT)
    if not isinstance(timezone, str):
        raise TypeError(f"timezone must be str or None, not {type_name(timezone)}")
    return when.astimezone(pytz.timezone(timezone)).strftime(TIMESTAMP_FORMAT)


def compile_memory_metadata_block(
    memory_edit_timestamp: Any,
    timezone: Any,
    agent_id: Any,
    conversation_id: Any = "default",
    previous_message_count: Any = 0,
    archival_memory_size: Any = 0,
    archive_tags: Any = None,
) -> str:
    stamp = format_timestamp(memory_edit_timestamp, timezone)
    lines = [
        "<memory_metadata>",
        f"- AGENT_ID: {agent_id}",
        f"- CONVERSATION_ID: {conversation_id}",
        f"- System prompt last recompiled: {stamp}",
        f"- {previous_message_count} previous messages between you and the user are stored in recall memory",
    ]
    if archival_memory_size is not None and not isinstance(archival_memory_size, int):
        raise TypeError(f"archival_memory_size must be int or None, not {type_name(archival_memory_size)}")
    if archival_memory_size is not None and archival_memory_size > 0:
        lines.append(
            f"- {archival_memory_size} total memories you created are stored in archival memory"
            " (use tools to access them)"
        )
    if archive_tags:
        lines.append(f"- Available archival memory tags: {', '.join(archive_tags)}")
    lines.append("</memory_metadata>")
    return "\n".join(lines)
