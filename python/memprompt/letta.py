"""Run a stock letta 0.16.8 on memprompt's Rust core.

``install()`` replaces, on Letta's own classes, the functions that render the
system prompt; each replacement returns what the Letta function returns::

    import memprompt.letta

    memprompt.letta.install()            # or: with memprompt.letta.installed(): ...

Replaced: ``Memory.compile`` (and so ``compile_async``, which calls it),
``Memory.compile_available_skills``, ``Memory._render_memory_filesystem``,
``PromptGenerator.compile_memory_metadata_block``,
``PromptGenerator.get_system_message_from_compiled_memory`` and
``ToolRulesSolver.compile_tool_rule_prompts``. Letta's pydantic objects are read
as they are. Importing this module does not import Letta; ``install()`` does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Optional

from . import _core

__all__ = ["SUPPORTED_LETTA_VERSION", "install", "installed", "is_installed", "uninstall"]

#: The only Letta release whose output memprompt is proven to reproduce.
SUPPORTED_LETTA_VERSION = "0.16.8"

# (class, attribute name) -> the exact object found in the class's __dict__ before install().
_originals: dict[tuple[type, str], Any] = {}
_lock = threading.Lock()


def is_installed() -> bool:
    """Whether memprompt currently renders Letta's prompts."""
    return bool(_originals)


def install(*, allow_other_versions: bool = False) -> None:
    """Make Letta render its prompts with memprompt. A second call does nothing.

    Raises ``RuntimeError`` for a Letta other than 0.16.8 unless ``allow_other_versions=True``.
    """
    with _lock:
        if _originals:
            return
        try:
            import letta
            from letta.helpers import tool_rule_solver
            from letta.otel.tracing import trace_method
            from letta.prompts.prompt_generator import PromptGenerator
            from letta.schemas.memory import Memory
        except ImportError as exc:
            raise ImportError(
                f"memprompt.letta.install() needs letta=={SUPPORTED_LETTA_VERSION} installed: {exc}"
            ) from exc

        found = _letta_version(letta)
        if found != SUPPORTED_LETTA_VERSION and not allow_other_versions:
            raise RuntimeError(
                f"memprompt reproduces letta {SUPPORTED_LETTA_VERSION} but letta {found} is installed, "
                "whose prompts may differ; call memprompt.letta.install(allow_other_versions=True) to patch it anyway"
            )

        solver = tool_rule_solver.ToolRulesSolver
        # (class, name, replacement, is it a @trace_method @staticmethod in Letta)
        targets: list[tuple[type, str, Callable[..., Any], bool]] = [
            (Memory, "compile", _compile(vars(Memory)["compile"]), False),
            (Memory, "compile_available_skills", _compile_available_skills, False),
            (Memory, "_render_memory_filesystem", _render_memory_filesystem, False),
            (PromptGenerator, "compile_memory_metadata_block", _compile_memory_metadata_block, True),
            (
                PromptGenerator,
                "get_system_message_from_compiled_memory",
                _get_system_message_from_compiled_memory,
                True,
            ),
            # The tool_rule_solver module's own Block, so the result is exactly the class Letta returns.
            (solver, "compile_tool_rule_prompts", _tool_rule_prompts_method(tool_rule_solver.Block), False),
        ]
        # Read every original first: a missing attribute (another Letta) leaves nothing half-patched.
        originals = {(cls, name): vars(cls)[name] for cls, name, _, _ in targets}
        for cls, name, function, traced_static in targets:
            _copy_names(function, originals[(cls, name)])
            # Letta stacks @trace_method on @staticmethod, so its class attribute is trace_method's plain
            # wrapper around a staticmethod: store the same shape (same spans, same call semantics).
            setattr(cls, name, trace_method(staticmethod(function)) if traced_static else function)
        _originals.update(originals)


def uninstall() -> None:
    """Put Letta's own functions back (the very objects ``install()`` replaced). Harmless when not installed."""
    with _lock:
        for (cls, name), original in _originals.items():
            setattr(cls, name, original)
        _originals.clear()


@contextmanager
def installed(*, allow_other_versions: bool = False) -> Iterator[None]:
    """``install()`` for the ``with`` block; uninstalls on exit unless it was installed before."""
    already = is_installed()
    install(allow_other_versions=allow_other_versions)
    try:
        yield
    finally:
        if not already:
            uninstall()


def _letta_version(letta: Any) -> str:
    # letta.__version__ is what Letta reports about itself (it honours $LETTA_VERSION); else the installed metadata.
    version = getattr(letta, "__version__", None)
    if version is None:
        from importlib.metadata import version as metadata_version

        version = metadata_version("letta")
    return str(version)


def _copy_names(function: Any, original: Any) -> None:
    # Letta's name and qualname (tracing spans read them); __module__ stays memprompt.letta, to show who rendered.
    for attr in ("__name__", "__qualname__", "__doc__"):
        setattr(function, attr, getattr(original, attr))


# --- the replacements: Letta's signatures, memprompt's core -------------------------


def _compile(original: Callable[..., str]) -> Callable[..., str]:
    def compile_memory(
        self: Any,
        tool_usage_rules: Any = None,
        sources: Any = None,
        max_files_open: Any = None,
        llm_config: Any = None,
        client_skills: Any = None,
    ) -> str:
        # Letta's own fields, read by the Rust core as they are (client_skills is unused, as in Letta).
        text = _core.compile_memory(
            self.blocks,
            self.file_blocks,
            self.agent_type,
            self.git_enabled,
            tool_usage_rules,
            sources,
            max_files_open,
            llm_config,
        )
        if text is None:
            # The rare git-memory labels that the Rust core leaves to Python: Letta renders them itself.
            return original(
                self,
                tool_usage_rules=tool_usage_rules,
                sources=sources,
                max_files_open=max_files_open,
                llm_config=llm_config,
                client_skills=client_skills,
            )
        return text

    return compile_memory


def _compile_available_skills(self: Any, client_skills: Any = None) -> str:
    return _core.compile_available_skills(self.blocks, client_skills)


def _render_memory_filesystem(self: Any, s: Any, client_skills: Any = None) -> None:
    # Letta writes the tree into the buffer it is given and returns None.
    text = _core.render_memory_filesystem(self.blocks, client_skills)
    if text:
        s.write(text)


def _compile_memory_metadata_block(
    memory_edit_timestamp: datetime,
    timezone: str,
    agent_id: str,
    conversation_id: str = "default",
    previous_message_count: int = 0,
    archival_memory_size: Optional[int] = 0,
    archive_tags: Optional[list[str]] = None,
) -> str:
    return _core.compile_memory_metadata_block(
        memory_edit_timestamp,
        timezone,
        agent_id,
        conversation_id,
        previous_message_count,
        archival_memory_size,
        archive_tags,
    )


def _get_system_message_from_compiled_memory(
    system_prompt: str,
    memory_with_sources: str,
    agent_id: str,
    in_context_memory_last_edit: datetime,
    timezone: str,
    user_defined_variables: Optional[dict] = None,
    append_icm_if_missing: bool = True,
    template_format: str = "f-string",
    previous_message_count: int = 0,
    archival_memory_size: int = 0,
    archive_tags: Optional[list[str]] = None,
    conversation_id: str = "default",
) -> str:
    return _core.get_system_message_from_compiled_memory(
        system_prompt,
        memory_with_sources,
        agent_id,
        in_context_memory_last_edit,
        timezone,
        user_defined_variables,
        append_icm_if_missing,
        template_format,
        previous_message_count,
        archival_memory_size,
        archive_tags,
        conversation_id,
    )


def _tool_rule_prompts_method(block_class: type) -> Callable[[Any], Any]:
    def compile_tool_rule_prompts(self: Any) -> Any:
        # The solver's own grouped lists, in the order Letta concatenates them (it skips the other groups).
        rules = (
            self.init_tool_rules
            + self.continue_tool_rules
            + self.child_based_tool_rules
            + self.parent_tool_rules
            + self.terminal_tool_rules
        )
        compiled = _core.compile_tool_rule_prompts(rules)
        if compiled is None:
            return None
        description, value = compiled
        return block_class(label="tool_usage_rules", value=value, description=description)

    return compile_tool_rule_prompts
