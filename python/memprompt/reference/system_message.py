"""The whole system message: the prompt template with the memory section in place of ``{CORE_MEMORY}``."""

from __future__ import annotations

from typing import Any

from .fields import type_name
from .metadata import compile_memory_metadata_block

PLACEHOLDER = "{CORE_MEMORY}"


def get_system_message_from_compiled_memory(
    system_prompt: Any,
    memory_with_sources: Any,
    agent_id: Any,
    in_context_memory_last_edit: Any,
    timezone: Any,
    user_defined_variables: Any = None,
    append_icm_if_missing: Any = True,
    template_format: Any = "f-string",
    previous_message_count: Any = 0,
    archival_memory_size: Any = 0,
    archive_tags: Any = None,
    conversation_id: Any = "default",
) -> str:
    if user_defined_variables is not None:
        raise NotImplementedError("user_defined_variables is not supported")
    metadata = compile_memory_metadata_block(
        in_context_memory_last_edit,
        timezone,
        agent_id,
        conversation_id=conversation_id,
        previous_message_count=previous_message_count,
        archival_memory_size=archival_memory_size,
        archive_tags=archive_tags,
    )
    if not isinstance(memory_with_sources, str):
        raise TypeError(f"memory_with_sources must be str, not {type_name(memory_with_sources)}")
    memory = f"{str.__str__(memory_with_sources)}\n\n{metadata}"
    if template_format != "f-string":
        raise NotImplementedError(template_format)
    if not isinstance(system_prompt, str):
        raise TypeError(f"system_prompt must be str, not {type_name(system_prompt)}")
    system_prompt = str.__str__(system_prompt)
    if append_icm_if_missing and PLACEHOLDER not in system_prompt:
        # The appended placeholder is the only one, so it is replaced by the memory alone.
        return f"{system_prompt}\n\n{memory}"
    return str(system_prompt.replace(PLACEHOLDER, memory))


class _KeepUnknown(dict[str, Any]):
    """Names the variables do not define stay in the text as ``{name}``."""

    def __missing__(self, key: str) -> str:
        return f"{{{key}}}"


def safe_format(template: Any, variables: Any) -> str:
    """``str.format_map`` that leaves ``{}`` and unknown ``{name}`` fields as they are."""
    return str(template.replace("{}", "{{}}").format_map(_KeepUnknown(variables)))
