"""Deferred mode: an edit that an agent made with its own memory tool waits to reach its message[0].

The agent has just seen the edit in the tool's return; rewriting message[0] now would re-bill the provider's
whole cached prefix. Inside a core tool's execution (``LettaCoreToolExecutor.execute``, the agent whose tool
runs is ``editing_agent()``), a rebuild of that agent's own message[0] (the tool's forced one, the rebuild of
``update_memory_if_changed_async``, the fan-out of the block it edited) is deferred instead, when all that
message[0] misses is this call's edits and edits already waiting (a block attached, a source, an outside edit not
yet written: rebuilt, as stock would): one statement records, in a table of memprompt's own keyed by the message
and the text it holds, the memory it now waits for and how many edits wait. What waits is the blocks themselves: every later rebuild outside a tool of the agent
(a compaction, a message reset, a recompile, an edit through the REST API, another agent's edit of a shared
block) finds its memory section changed and writes it, as stable mode does. Nothing lives in one process: a
restart or another worker loses nothing, and the count belongs to the text, so a new message[0] starts at 0.

When more than ``bound()`` edits would wait (``$MEMPROMPT_DEFERRED_EDITS``, default ``DEFAULT_BOUND``; 0 is
stable mode), or the store fails (logged once), message[0] is rebuilt at once.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from dataclasses import replace as replace_field
from typing import Any, Optional

from ..rebuild import PromptStamp
from . import stamps
from .agent_memory import AgentMemory, current_memory, stamp_of
from .inputs import AgentInputs
from .patching import copy_names, replace

TABLE = "memprompt_deferred_edits"
BOUND_VARIABLE = "MEMPROMPT_DEFERRED_EDITS"
#: How many of an agent's own edits may wait for its message[0] (a compaction usually comes first).
DEFAULT_BOUND = 10

CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (message_id VARCHAR NOT NULL, text_fingerprint VARCHAR NOT NULL, "
    "stamp VARCHAR NOT NULL, edits INTEGER NOT NULL, recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(), "
    "PRIMARY KEY (message_id, text_fingerprint))"
)
# One statement per decision; a row back means "deferred". The message's rows for texts it no longer holds
# are pruned. The text's row waits for the memory before this tool call (:before): it now waits for :after,
# one edit more, unless the bound is reached; it waits for :after already: unchanged. No such row, and the
# text holds :before itself (:fresh): a first edit waits.
DEFER = (
    f"WITH pruned AS (DELETE FROM {TABLE} WHERE message_id = :id AND text_fingerprint <> :fp "
    f"AND recorded_at < now() - interval '{stamps.KEEP}'), "
    f"counted AS (UPDATE {TABLE} SET stamp = :after, recorded_at = now(), "
    "edits = edits + (stamp <> :after)::int WHERE message_id = :id AND text_fingerprint = :fp "
    "AND (stamp = :after OR (stamp = :before AND edits < :bound)) RETURNING edits), "
    f"first AS (INSERT INTO {TABLE} (message_id, text_fingerprint, stamp, edits) "
    "SELECT :id, :fp, :after, 1 WHERE :fresh AND NOT EXISTS (SELECT 1 FROM counted) "
    "ON CONFLICT (message_id, text_fingerprint) DO UPDATE SET stamp = excluded.stamp, edits = 1, "
    "recorded_at = now() RETURNING edits) "
    "SELECT edits FROM counted UNION ALL SELECT edits FROM first"
)


@dataclass
class _ToolCall:
    """The agent whose core tool runs, its blocks before the call (id -> block), and what the call already
    deferred (message id -> stamp)."""

    agent_id: str
    before: dict[str, Any]
    deferred: dict[str, PromptStamp] = field(default_factory=dict)


_tool_call: ContextVar[Optional[_ToolCall]] = ContextVar("memprompt_tool_call", default=None)


def install() -> None:
    from letta.services.agent_manager import AgentManager
    from letta.services.tool_executor.core_tool_executor import LettaCoreToolExecutor

    letta_execute = vars(LettaCoreToolExecutor)["execute"]
    replace(LettaCoreToolExecutor, {"execute": copy_names(_execute(letta_execute), letta_execute)})
    letta_update = vars(AgentManager)["update_memory_if_changed_async"]
    replace(AgentManager, {"update_memory_if_changed_async": copy_names(_update_memory_if_changed, letta_update)})


def editing_agent() -> Optional[str]:
    """The agent whose core tool is running in this task, or None."""
    call = _tool_call.get()
    return call.agent_id if call is not None else None


def bound() -> int:
    """``$MEMPROMPT_DEFERRED_EDITS`` (a whole number >= 0), else ``DEFAULT_BOUND``."""
    value = os.environ.get(BOUND_VARIABLE, "").strip()
    if value.isdigit():
        return int(value)
    if value:
        stamps.warn_once("bound", ValueError(f"{BOUND_VARIABLE}={value!r} is not a whole number"), _BOUND_FALLBACK)
    return DEFAULT_BOUND


_BOUND_FALLBACK = f"the default, {DEFAULT_BOUND}, applies"


async def defer(state: Any, rules_block: Any, message_id: str, text: Optional[str], memory: AgentMemory) -> bool:
    """Whether the rebuild of the message[0] (``message_id``, holding ``text``) of the agent of ``state`` (an
    ``AgentState`` or the fan-out's inputs) for ``memory`` waits: only inside the agent's own tool call, when all
    that message[0] misses is this call's edits and edits already waiting, under the bound, the store answering."""
    call = _tool_call.get()
    if call is None or call.agent_id != state.id or text is None:
        return False
    after = stamp_of(state.system, memory)
    if call.deferred.get(message_id) == after:
        return True  # this tool call deferred this very memory already: no statement
    limit = bound()
    if limit <= 0:
        return False
    previous, fresh = current_memory(_with_blocks(state, call.before), rules_block, text, force=False, stable=True)
    parameters = {
        "id": message_id,
        "fp": stamps.text_key(text),
        "after": str(after),
        "before": str(stamp_of(state.system, previous)),
        "fresh": fresh,
        "bound": limit,
    }
    try:
        from letta.server.db import db_registry
        from sqlalchemy import text as sql

        async with db_registry.async_session() as session:
            row = (await session.execute(sql(DEFER), parameters)).first()
            await session.commit()
    except Exception as exc:
        stamps.warn_once("deferral", exc, "message[0] is rebuilt at once")
        return False
    if row is None:
        return False
    call.deferred[message_id] = after
    return True


def _with_blocks(state: Any, before: dict[str, Any]) -> Any:
    """``state`` with each block as it was before the tool call (blocks it added or removed as they are now)."""
    memory = state.memory.model_copy(update={"blocks": [before.get(block.id, block) for block in state.memory.blocks]})
    if isinstance(state, AgentInputs):
        return replace_field(state, memory=memory)
    return state.model_copy(update={"memory": memory})


def _execute(letta_execute: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def execute(
        self: Any,
        function_name: str,
        function_args: dict[str, Any],
        tool: Any,
        actor: Any,
        agent_state: Any = None,
        sandbox_config: Any = None,
        sandbox_env_vars: Any = None,
    ) -> Any:
        # The blocks as the agent saw them before the call (the memory tools change them in place).
        call = None
        if agent_state is not None:
            call = _ToolCall(agent_state.id, {block.id: block.model_copy() for block in agent_state.memory.blocks})
        token = _tool_call.set(call)
        try:
            return await letta_execute(
                self, function_name, function_args, tool, actor, agent_state, sandbox_config, sandbox_env_vars
            )
        finally:
            _tool_call.reset(token)

    return execute


async def _update_memory_if_changed(self: Any, agent_id: str, new_memory: Any, actor: Any) -> Any:
    """Letta's, deciding by the blocks in the database rather than by message[0]'s text: with an edit waiting,
    message[0] shows an older value, and an edit back to it would be dropped (Letta checks ``in`` the text)."""
    from letta.schemas.block import BlockUpdate
    from letta.schemas.memory import Memory

    agent_state = await self.get_agent_by_id_async(
        agent_id=agent_id, actor=actor, include_relationships=["memory", "sources"]
    )
    stored = {block.label: block.value for block in agent_state.memory.blocks}
    changed = [
        block for block in new_memory.get_blocks() if block.label in stored and block.value != stored[block.label]
    ]
    if not changed:
        return agent_state
    for block in changed:
        await self.block_manager.update_block_async(
            block_id=block.id, block_update=BlockUpdate(value=block.value), actor=actor
        )
    blocks = await self.block_manager.get_all_blocks_by_ids_async(
        block_ids=[block.id for block in new_memory.get_blocks()], actor=actor
    )
    agent_state.memory = Memory(
        blocks=blocks,
        file_blocks=agent_state.memory.file_blocks,
        agent_type=agent_state.agent_type,
        git_enabled=agent_state.memory.git_enabled,
    )
    await self.rebuild_system_prompt_async(agent_id=agent_id, actor=actor)
    return agent_state
