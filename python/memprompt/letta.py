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

``install(rebuild=True)`` also makes Letta's rebuild decisions for message[0]
(SPEC section 3): ``AgentManager.rebuild_system_prompt_async`` and
``LettaAgentV2._rebuild_memory`` rebuild exactly when the system-prompt template
or the memory section changed, instead of Letta's substring searches. The
fingerprints of what each rebuilt message was built from are recorded in a
memprompt-owned table (``memprompt_system_stamps``, created on first use in
Letta's database); a message without a valid record is parsed exactly.
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


def install(*, allow_other_versions: bool = False, rebuild: bool = False) -> None:
    """Make Letta render its prompts with memprompt. A second call does nothing.

    With ``rebuild=True`` Letta's decisions to rebuild message[0] are made by memprompt
    too (fingerprints, then the exact parse); a later ``install(rebuild=True)`` adds them.
    Raises ``RuntimeError`` for a Letta other than 0.16.8 unless ``allow_other_versions=True``.
    """
    with _lock:
        if not _originals:
            _install_rendering(allow_other_versions)
        if rebuild and not _rebuild_installed():
            _install_rebuild()


def _rebuild_installed() -> bool:
    return any(name in _REBUILD_NAMES for _, name in _originals)


def _install_rendering(allow_other_versions: bool) -> None:
    try:
        import letta
        from letta.helpers import tool_rule_solver
        from letta.otel.tracing import trace_method
        from letta.prompts.prompt_generator import PromptGenerator
        from letta.schemas.memory import Memory
    except ImportError as exc:
        raise ImportError(f"memprompt.letta.install() needs letta=={SUPPORTED_LETTA_VERSION} installed: {exc}") from exc

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
def installed(*, allow_other_versions: bool = False, rebuild: bool = False) -> Iterator[None]:
    """``install()`` for the ``with`` block; uninstalls on exit unless it was installed before."""
    already = is_installed()
    install(allow_other_versions=allow_other_versions, rebuild=rebuild)
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
    user_defined_variables: Optional[dict[str, Any]] = None,
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


# --- the rebuild path: memprompt's decisions, Letta's own rebuild -------------------

_REBUILD_NAMES = ("rebuild_system_prompt_async", "_rebuild_memory")

#: The memprompt-owned table, in Letta's database, that records what each rebuilt message[0] was built from.
STAMP_TABLE = "memprompt_system_stamps"
_stamp_table_ready = False


def _install_rebuild() -> None:
    from letta.agents.letta_agent_v2 import LettaAgentV2
    from letta.services.agent_manager import AgentManager

    targets = [
        (AgentManager, "rebuild_system_prompt_async", _rebuild_system_prompt_async),
        (LettaAgentV2, "_rebuild_memory", _rebuild_memory),
    ]
    originals = {(cls, name): vars(cls)[name] for cls, name, _ in targets}
    for cls, name, make in targets:
        function = make(originals[(cls, name)])
        _copy_names(function, originals[(cls, name)])
        setattr(cls, name, function)
    _originals.update(originals)


def _message_text(message: Any) -> Optional[str]:
    # What Letta's rebuild paths read: to_openai_dict()["content"] and content[0].text are this text.
    content = getattr(message, "content", None)
    if not content:
        return None
    text = getattr(content[0], "text", None)
    return text if isinstance(text, str) else None


async def _ensure_stamp_table(session: Any) -> None:
    global _stamp_table_ready
    if _stamp_table_ready:
        return
    from sqlalchemy import text  # type: ignore[import-not-found]  # Letta's dependency: absent where mypy runs

    await session.execute(
        text(
            f"CREATE TABLE IF NOT EXISTS {STAMP_TABLE} ("
            "message_id VARCHAR PRIMARY KEY, text_fingerprint VARCHAR NOT NULL, stamp VARCHAR NOT NULL)"
        )
    )
    await session.commit()
    _stamp_table_ready = True


async def _load_stamp(message_id: str, message_text: str) -> Optional[Any]:
    """The recorded stamp of this very text of message ``message_id``, else None (then the parse decides)."""
    from letta.server.db import db_registry
    from sqlalchemy import text

    from .rebuild import PromptStamp

    async with db_registry.async_session() as session:
        await _ensure_stamp_table(session)
        row = (
            await session.execute(
                text(f"SELECT text_fingerprint, stamp FROM {STAMP_TABLE} WHERE message_id = :id"),
                {"id": message_id},
            )
        ).first()
    # The text may have been rewritten since (by stock Letta, an API edit): the record then says nothing.
    if row is None or row[0] != f"{_core.fingerprint(message_text):032x}":
        return None
    return PromptStamp.parse(row[1])


async def _record_stamp(message_id: str, message_text: str, system_prompt: str, memory: str) -> None:
    """Record the stamp of a message[0] Letta just built, once the exact parse confirms what it was built from."""
    from letta.server.db import db_registry
    from sqlalchemy import text

    from .rebuild import PromptStamp

    # Letta compiled the memory again inside its own rebuild: record only what the built text really holds.
    if _core.stored_memory_section(system_prompt, message_text) != memory:
        return
    stamp = PromptStamp(_core.fingerprint(system_prompt), _core.fingerprint(memory))
    async with db_registry.async_session() as session:
        await _ensure_stamp_table(session)
        await session.execute(
            text(
                f"INSERT INTO {STAMP_TABLE} (message_id, text_fingerprint, stamp) VALUES (:id, :fp, :stamp) "
                "ON CONFLICT (message_id) DO UPDATE SET text_fingerprint = excluded.text_fingerprint, "
                "stamp = excluded.stamp"
            ),
            {"id": message_id, "fp": f"{_core.fingerprint(message_text):032x}", "stamp": str(stamp)},
        )
        await session.commit()


async def _decide(message: Any, system_prompt: str, memory: str) -> bool:
    from .rebuild import needs_rebuild

    message_text = _message_text(message)
    stamp = None if message_text is None else await _load_stamp(message.id, message_text)
    return bool(needs_rebuild(system_prompt, memory, message_text, stamp))


def _rebuild_system_prompt_async(original: Callable[..., Any]) -> Callable[..., Any]:
    async def rebuild_system_prompt_async(
        self: Any,
        agent_id: str,
        actor: Any,
        force: bool = False,
        update_timestamp: bool = True,
        dry_run: bool = False,
    ) -> Any:
        from letta.helpers.tool_rule_solver import ToolRulesSolver

        if not force:
            # Letta's own reads, in Letta's order; only the decision differs.
            num_messages = await self.message_manager.size_async(actor=actor, agent_id=agent_id)
            num_archival_memories = await self.passage_manager.agent_passage_size_async(actor=actor, agent_id=agent_id)
            agent_state = await self.get_agent_by_id_async(
                agent_id=agent_id, include_relationships=["memory", "sources", "tools"], actor=actor
            )
            if not agent_state.message_ids:
                # Letta logs and returns the missing message: let it.
                return await original(self, agent_id, actor, force, update_timestamp, dry_run)
            message = await self.message_manager.get_message_by_id_async(
                message_id=agent_state.message_ids[0], actor=actor
            )
            if message is None:
                return await original(self, agent_id, actor, force, update_timestamp, dry_run)
            memory = agent_state.memory.compile(
                sources=agent_state.sources,
                tool_usage_rules=ToolRulesSolver(agent_state.tool_rules).compile_tool_rule_prompts(),
                max_files_open=agent_state.max_files_open,
                llm_config=agent_state.llm_config,
            )
            if not await _decide(message, agent_state.system, memory):
                return agent_state, message, num_messages, num_archival_memories
        # Letta's rebuild itself, told to rebuild.
        result = await original(self, agent_id, actor, True, update_timestamp, dry_run)
        agent_state, message = result[0], result[1]
        if not dry_run and message is not None:
            built = await self.message_manager.get_message_by_id_async(message_id=message.id, actor=actor)
            built_text = _message_text(built)
            if built_text is not None:
                state = await self.get_agent_by_id_async(
                    agent_id=agent_id, include_relationships=["memory", "sources", "tools"], actor=actor
                )
                memory = state.memory.compile(
                    sources=state.sources,
                    tool_usage_rules=ToolRulesSolver(state.tool_rules).compile_tool_rule_prompts(),
                    max_files_open=state.max_files_open,
                    llm_config=state.llm_config,
                )
                await _record_stamp(built.id, built_text, state.system, memory)
        return result

    return rebuild_system_prompt_async


def _rebuild_memory(original: Callable[..., Any]) -> Callable[..., Any]:
    async def rebuild_memory(
        self: Any,
        in_context_messages: list[Any],
        num_messages: Optional[int],
        num_archival_memories: Optional[int],
        force: bool = False,
    ) -> Any:
        if not force:
            # Letta's own refreshes, as in LettaAgentV2._rebuild_memory; only the decision differs.
            agent_state = await self.agent_manager.refresh_memory_async(agent_state=self.agent_state, actor=self.actor)
            tool_constraint_block = None
            if self.tool_rules_solver is not None:
                tool_constraint_block = self.tool_rules_solver.compile_tool_rule_prompts()
            agent_state = await self.agent_manager.refresh_file_blocks(agent_state=agent_state, actor=self.actor)
            memory = agent_state.memory.compile(
                tool_usage_rules=tool_constraint_block,
                sources=agent_state.sources,
                max_files_open=agent_state.max_files_open,
                llm_config=agent_state.llm_config,
            )
            if not await _decide(in_context_messages[0], agent_state.system, memory):
                return in_context_messages
        else:
            memory = None
        messages = await original(self, in_context_messages, num_messages, num_archival_memories, force=True)
        built_text = _message_text(messages[0])
        if built_text is not None and messages[0] is not in_context_messages[0]:
            if memory is None:
                agent_state = self.agent_state
                tool_constraint_block = (
                    self.tool_rules_solver.compile_tool_rule_prompts() if self.tool_rules_solver is not None else None
                )
                memory = agent_state.memory.compile(
                    tool_usage_rules=tool_constraint_block,
                    sources=agent_state.sources,
                    max_files_open=agent_state.max_files_open,
                    llm_config=agent_state.llm_config,
                )
            await _record_stamp(messages[0].id, built_text, self.agent_state.system, memory)
        return messages

    return rebuild_memory
