"""memprompt: Letta 0.16.8's memory prompt, byte for byte, rendered in Rust.

Importing memprompt never imports Letta.
"""

from ._core import (
    compile_memory_metadata_block,
    fingerprint,
    get_system_message_from_compiled_memory,
    safe_format,
    stored_memory_section,
)
from .memory import Memory, compile_many
from .rebuild import PromptStamp, RebuildDecision, SystemMessage, build_system_message, needs_rebuild
from .sections import SECTION_NAMES, message_sections
from .tool_rules import compile_tool_rule_prompts
from .types import Block, ClientSkill, Compiled, FileBlock, LLMConfig, Section, Source, ToolUsageRules

__version__ = "0.1.0"

#: The Letta release whose output memprompt reproduces.
LETTA_VERSION = "0.16.8"

__all__ = [
    "Block",
    "ClientSkill",
    "Compiled",
    "FileBlock",
    "LETTA_VERSION",
    "LLMConfig",
    "Memory",
    "PromptStamp",
    "RebuildDecision",
    "SECTION_NAMES",
    "Section",
    "Source",
    "SystemMessage",
    "ToolUsageRules",
    "build_system_message",
    "compile_many",
    "compile_memory_metadata_block",
    "compile_tool_rule_prompts",
    "fingerprint",
    "get_system_message_from_compiled_memory",
    "message_sections",
    "needs_rebuild",
    "safe_format",
    "stored_memory_section",
]
