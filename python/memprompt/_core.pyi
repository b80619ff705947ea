"""Types of the compiled extension ``memprompt._core`` (the Rust core).

Inputs are read with ``getattr``, as Letta reads them: memprompt's own classes,
Letta's pydantic objects and any object with the same attributes all work.
"""

from datetime import datetime
from typing import Any, Callable, Iterable, Optional, final

from typing_extensions import Self, disjoint_base

from .types import Compiled, ToolUsageRules

__all__ = [
    "MemoryBase",
    "ReferenceRender",
    "set_reference_renderer",
    "count_edit",
    "track_edits",
    "fingerprint",
    "stored_memory_section",
    "message_sections",
    "compile_memory",
    "compile_many",
    "compile_available_skills",
    "render_memory_filesystem",
    "first_of_each_label",
    "compile_memory_metadata_block",
    "get_system_message_from_compiled_memory",
    "safe_format",
    "compile_tool_rule_prompts",
]

@disjoint_base
class MemoryBase:
    """The Rust half of ``memprompt.Memory``: its fields, ``compile``, and its last compile."""

    blocks: list[Any]
    """The core memory blocks, in order."""
    agent_type: Any
    """The agent type (Letta's enum, a str in any case, or None): it picks the renderer."""
    git_enabled: bool
    """Whether the blocks render as git memory."""
    def __new__(
        cls,
        blocks: Iterable[Any],
        file_blocks: Optional[Iterable[Any]] = None,
        agent_type: Any = None,
        git_enabled: Any = False,
    ) -> Self:
        """A memory of ``blocks`` and ``file_blocks`` (later duplicates of a file label dropped), as Letta's."""
    @property
    def file_blocks(self) -> list[Any]:
        """The file blocks, the first of each label only."""
    @file_blocks.setter
    def file_blocks(self, value: Optional[Iterable[Any]]) -> None:
        """Sets the file blocks, dropping later duplicates of a label."""
    def compile(
        self,
        tool_usage_rules: Any = None,
        sources: Any = None,
        max_files_open: Optional[int] = None,
        llm_config: Any = None,
        client_skills: Any = None,
    ) -> str:
        """The memory section of the system prompt, as Letta's ``Memory.compile`` returns it.

        An input the Rust core leaves to the reference is handed, as a ``ReferenceRender``, to the
        function registered with ``set_reference_renderer``, and its result returned.
        """
    def compile_with_fingerprint(
        self,
        tool_usage_rules: Any = None,
        sources: Any = None,
        max_files_open: Optional[int] = None,
        llm_config: Any = None,
        client_skills: Any = None,
    ) -> Compiled:
        """``compile``'s text, with its fingerprint and section offsets (code points), computed while rendering.

        While nothing changed, the same ``Compiled`` is returned again. A hand-off is rendered as ``compile``'s is.
        """
    def clear_cache(self) -> None:
        """Forgets the last compile, so that the next one renders in full."""

@final
class ReferenceRender:
    """The hand-off to the reference: a compile of an input the Rust core does not render.

    Only git memory with a ``system/`` label part named like Letta's internal keys
    (``__value__``, ``__description__``, ``__label__``) is handed off.
    """

    @property
    def memory(self) -> MemoryBase:
        """The memory whose fields the reference renders."""
    @property
    def method(self) -> str:
        """The reference ``Memory``'s method that renders it: ``"compile"`` or ``"compile_with_fingerprint"``."""
    @property
    def args(self) -> tuple[Any, ...]:
        """The method's arguments, as the caller gave them."""

def set_reference_renderer(renderer: Callable[[ReferenceRender], Any]) -> None:
    """Registers the function that renders the hand-offs ``MemoryBase``'s compiles meet (``memprompt.memory`` does)."""

def compile_memory(
    blocks: Iterable[Any],
    file_blocks: Iterable[Any],
    agent_type: Any,
    git_enabled: bool,
    tool_usage_rules: Any = None,
    sources: Any = None,
    max_files_open: Optional[int] = None,
    llm_config: Any = None,
) -> Optional[str]:
    """The memory section as ``Memory.compile`` returns it; ``None`` when the reference must render it."""

def count_edit() -> None:
    """Counts one attribute write to an object of a tracked class."""

def track_edits(*classes: type) -> None:
    """Registers classes whose attribute writes all call ``count_edit``."""

def compile_many(
    memories: Iterable[Any],
    tool_usage_rules: Any = None,
    sources: Any = None,
    max_files_open: Optional[int] = None,
    llm_config: Any = None,
) -> list[Optional[str]]:
    """``compile_memory`` of each memory, rendered in parallel with the GIL released."""

def compile_available_skills(blocks: Iterable[Any], client_skills: Any = None) -> str:
    """``<available_skills>`` from the ``skills/`` blocks and the client's skills, as Letta's method returns it."""

def render_memory_filesystem(blocks: Iterable[Any], client_skills: Any = None) -> str:
    """``<memory_filesystem>``: the tree view that Letta's ``_render_memory_filesystem`` writes."""

def first_of_each_label(file_blocks: Optional[Iterable[Any]] = None) -> list[Any]:
    """The file blocks with later duplicates of a label dropped."""

def fingerprint(text: str) -> int:
    """XXH3-128 of ``text.encode("utf-8", "surrogatepass")``."""

def stored_memory_section(template: str, message: str) -> Optional[str]:
    """The memory section of ``message`` if it was built from ``template``, else ``None``."""

def message_sections(
    system_prompt: str, memory_text: str, memory_sections: dict[str, tuple[int, int]], message: str
) -> list[tuple[str, int, int]]:
    """Where each section of ``message`` lies (``(name, start, end)`` in code points, in message order), if it
    was built from ``system_prompt`` around the memory ``memory_text`` with those sections; else ``ValueError``."""

def compile_memory_metadata_block(
    memory_edit_timestamp: datetime,
    timezone: Optional[str],
    agent_id: Any,
    conversation_id: Any = "default",
    previous_message_count: Any = 0,
    archival_memory_size: Optional[int] = 0,
    archive_tags: Optional[list[str]] = None,
) -> str:
    """``<memory_metadata>``, as Letta's ``PromptGenerator.compile_memory_metadata_block`` returns it."""

def get_system_message_from_compiled_memory(
    system_prompt: str,
    memory_with_sources: str,
    agent_id: Any,
    in_context_memory_last_edit: datetime,
    timezone: Optional[str],
    user_defined_variables: Optional[dict[str, Any]] = None,
    append_icm_if_missing: bool = True,
    template_format: str = "f-string",
    previous_message_count: Any = 0,
    archival_memory_size: Optional[int] = 0,
    archive_tags: Optional[list[str]] = None,
    conversation_id: Any = "default",
) -> str:
    """The whole system message, as Letta's ``PromptGenerator.get_system_message_from_compiled_memory`` builds it."""

def safe_format(template: str, variables: dict[str, Any]) -> str:
    """``str.format_map`` that leaves ``{}`` and unknown ``{name}`` fields as they are (Letta's ``safe_format``)."""

def compile_tool_rule_prompts(rules: Optional[Iterable[Any]]) -> Optional[ToolUsageRules]:
    """The ``<tool_usage_rules>`` block made from Letta ``ToolRule`` objects or agent-file rule dicts.

    ``None`` when no rule renders a prompt, as in Letta.
    """
