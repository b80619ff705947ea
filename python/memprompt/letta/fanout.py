"""A block changed: rebuild message[0] of every agent connected to it in one pass.

Stock Letta calls ``rebuild_system_prompt_async(force=True, update_timestamp=False)`` for one agent after
another (a whole ``AgentState`` each, two counts, a read and a write of message[0], each in its own
transaction). Here: the agents' memory inputs in one load (``inputs``: the rows of Letta's batched agent load,
only what a rebuild reads), the message and passage counts in one grouped statement each, the message[0]s in
one, the memories compiled together, and only the message[0]s whose text changes written, in one
transaction: after an interruption every message[0] is either old or new, and the next update completes it.

Each written text is the one stock's rebuild writes from the same agent state. Letta loads an agent's blocks
with no ORDER BY, so their order (and with it the prompt's) is whatever PostgreSQL's plan returns: stock's
own one-agent load returns different orders for the same agent from one call to the next (seen for 17 of
300 agents, nothing written in between), and Letta's batched load, used here, another again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from ..rebuild import needs_rebuild
from . import deferral, inputs, stamps
from .agent_memory import AgentMemory, compile_agent_memories, stamp_of, tool_usage_rules
from .decisions import message_text, text_part
from .patching import copy_names, replace


def install(stable: bool, deferred: bool = False) -> None:
    from letta.services.block_manager import BlockManager

    letta_fan_out = vars(BlockManager)["_rebuild_system_prompts_for_connected_agents"]
    replace(
        BlockManager,
        {"_rebuild_system_prompts_for_connected_agents": copy_names(_fan_out(stable, deferred), letta_fan_out)},
    )


@dataclass
class _Agent:
    state: inputs.AgentInputs
    memory: AgentMemory
    message: Any  # the ORM row of message[0]
    text: Optional[str]


def _fan_out(stable: bool, deferred: bool) -> Callable[..., Any]:
    async def rebuild_connected_agents(self: Any, block_id: str, actor: Any) -> None:
        from letta.services.block_manager import logger

        agent_ids = await self.get_agent_ids_for_block_async(block_id=block_id, actor=actor)
        if not agent_ids:
            return
        try:
            await rebuild_agents(self.agent_manager, agent_ids, actor, stable, deferred)
        except Exception:
            # As stock Letta: a failed rebuild is logged, never fails the block update.
            logger.exception(
                f"Failed to rebuild system prompts of {len(agent_ids)} agents after block {block_id} was updated"
            )

    return rebuild_connected_agents


async def rebuild_agents(
    agent_manager: Any, agent_ids: list[str], actor: Any, stable: bool, deferred: bool = False
) -> int:
    """Rebuild message[0] of each agent as ``rebuild_system_prompt_async(force=True, update_timestamp=False)``
    would (``stable``: only where the template or memory section changed, blocks in label order); returns how
    many were written. ``deferred``: the agent whose own memory tool edited the block waits (``deferral``)."""
    from letta.orm.message import Message as MessageModel
    from letta.server.db import db_registry
    from sqlalchemy import select

    states = [agent for agent in await inputs.load(agent_ids, actor) if agent.message_ids]
    if not states:
        return 0
    memories = compile_agent_memories(states, ordered=stable)
    message_counts = await _message_counts(actor, [state.id for state in states])
    passage_counts = await _passage_counts(actor, [state.id for state in states])

    written: list[stamps.Record] = []
    async with db_registry.async_session() as session:
        first_ids = [state.message_ids[0] for state in states]
        query = MessageModel.apply_access_predicate(select(MessageModel), actor, ["read"])
        query = query.where(MessageModel.id.in_(first_ids), MessageModel.is_deleted == False)  # noqa: E712
        rows = {row.id: row for row in (await session.execute(query)).scalars()}
        agents = [
            _Agent(state, memory, rows[state.message_ids[0]], None)
            for state, memory in zip(states, memories)
            if state.message_ids[0] in rows
        ]
        for agent in agents:
            agent.text = _stored_text(agent.message)
        recorded = await stamps.load({a.message.id: a.text for a in agents if a.text is not None}) if stable else {}
        for agent in agents:
            if stable and _current(agent, recorded.get(agent.message.id)):
                continue
            if deferred and await _defer(agent):
                continue
            new_text = _system_message(
                agent, message_counts.get(agent.state.id, 0), passage_counts.get(agent.state.id, 0)
            )
            if new_text == agent.text:
                continue
            _apply(agent_manager.message_manager, agent, new_text, actor)
            written.append(stamps.Record(agent.message.id, new_text, stamp_of(agent.state.system, agent.memory)))
        # One flush (UPDATEs batched by SQLAlchemy), committed with the session: all or nothing.
    await stamps.record(written)
    await _embed(agent_manager.message_manager, [record.message_id for record in written], actor)
    return len(written)


async def _defer(agent: _Agent) -> bool:
    # Only the agent whose own tool edited the block can wait: its rules compiled again, for it alone.
    if agent.state.id != deferral.editing_agent():
        return False
    rules = tool_usage_rules(agent.state.tool_rules)
    return await deferral.defer(agent.state, rules, agent.message.id, agent.text, agent.memory)


def _stored_text(row: Any) -> Optional[str]:
    # The one text part read off the row; anything else as Letta reads the whole message.
    text = text_part(row.content)
    return text if text is not None else message_text(row.to_pydantic())


def _current(agent: _Agent, stamp: Any) -> bool:
    # Stable mode: neither template nor memory changed; by the recorded stamp, else by the exact parse.
    if stamp is not None:
        return not needs_rebuild(agent.state.system, agent.memory.text, agent.text, stamp=stamp)
    return not needs_rebuild(agent.state.system, agent.memory.text, agent.text)


def _system_message(agent: _Agent, num_messages: int, num_archival: int) -> str:
    from letta.prompts.prompt_generator import PromptGenerator

    state = agent.state
    text: str = PromptGenerator.get_system_message_from_compiled_memory(
        system_prompt=state.system,
        memory_with_sources=agent.memory.text,
        agent_id=state.id,
        conversation_id="default",
        # update_timestamp=False: the time the message was created, as stock's fan-out.
        in_context_memory_last_edit=agent.message.created_at,
        timezone=state.timezone,
        previous_message_count=num_messages - len(state.message_ids),
        archival_memory_size=num_archival,
    )
    return text


def _apply(message_manager: Any, agent: _Agent, new_text: str, actor: Any) -> None:
    """Change the loaded row exactly as Letta's ``update_message_by_id_async`` would (flushed with the session)."""
    from letta.schemas.message import Message, MessageUpdate

    rebuilt = Message.dict_to_message(
        agent_id=agent.state.id,
        model=agent.state.llm_config.model,
        openai_message_dict={"role": "system", "content": new_text},
    )
    rebuilt.id = agent.message.id
    row = message_manager._update_message_by_id_impl(
        agent.message.id, MessageUpdate(**rebuilt.model_dump()), actor, agent.message
    )
    row._set_created_and_updated_by_fields(actor.id)
    row.set_updated_at()


async def _message_counts(actor: Any, agent_ids: list[str]) -> dict[str, int]:
    # MessageManager.size_async(agent_id=...) for every agent at once.
    from letta.orm.message import Message as MessageModel
    from letta.server.db import db_registry
    from sqlalchemy import func, select

    query = MessageModel.apply_access_predicate(select(MessageModel.agent_id, func.count(1)), actor, ["read"])
    query = query.where(MessageModel.agent_id.in_(agent_ids)).group_by(MessageModel.agent_id)
    async with db_registry.async_session() as session:
        return {agent_id: count for agent_id, count in (await session.execute(query)).all()}


async def _passage_counts(actor: Any, agent_ids: list[str]) -> dict[str, int]:
    # PassageManager.agent_passage_size_async(agent_id=...) for every agent at once.
    from letta.orm import ArchivalPassage, ArchivesAgents
    from letta.server.db import db_registry
    from sqlalchemy import func, select

    query = (
        select(ArchivesAgents.agent_id, func.count(ArchivalPassage.id))
        .join(ArchivesAgents, ArchivalPassage.archive_id == ArchivesAgents.archive_id)
        .where(
            ArchivesAgents.agent_id.in_(agent_ids),
            ArchivalPassage.organization_id == actor.organization_id,
            ArchivalPassage.is_deleted == False,  # noqa: E712
        )
        .group_by(ArchivesAgents.agent_id)
    )
    async with db_registry.async_session() as session:
        return {agent_id: count for agent_id, count in (await session.execute(query)).all()}


async def _embed(message_manager: Any, message_ids: list[str], actor: Any) -> None:
    # Letta re-embeds an updated message when messages are embedded (Turbopuffer); the same, once written.
    from letta.helpers.tpuf_client import should_use_tpuf_for_messages

    if not message_ids or not should_use_tpuf_for_messages():
        return
    from letta.utils import fire_and_forget

    for message in await message_manager.get_messages_by_ids_async(message_ids=message_ids, actor=actor):
        text = message_manager._extract_message_text(message)
        if text and message.agent_id:
            fire_and_forget(
                message_manager._update_message_embedding_background(message, text, actor, None, None),
                task_name=f"update_message_embedding_{message.id}",
            )
