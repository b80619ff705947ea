"""Pure-Python reference renderer: the oracle that memprompt's Rust core is tested against.

It returns, for every input Letta 0.16.8 accepts, the same strings as Letta's
own code; the input contract is described in :mod:`memprompt.reference.fields`.
"""

from __future__ import annotations

import xxhash

from .memory import Memory
from .metadata import compile_memory_metadata_block
from .sections import message_sections
from .system_message import get_system_message_from_compiled_memory, safe_format
from .tool_rules import compile_tool_rule_prompts

__all__ = [
    "Memory",
    "compile_memory_metadata_block",
    "compile_tool_rule_prompts",
    "fingerprint",
    "get_system_message_from_compiled_memory",
    "message_sections",
    "safe_format",
]


def fingerprint(text: str) -> int:
    """XXH3-128 of ``text`` in UTF-8, lone surrogates kept (``surrogatepass``)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    return xxhash.xxh3_128_intdigest(text.encode("utf-8", "surrogatepass"))
