"""What a rebuild reads of each connected agent, for a fan-out: one load of every agent, not an ``AgentState`` each.

The rows are the ones Letta's ``get_agents_by_ids_async(include_relationships=["memory", "sources"])`` loads (its
query and relationship filters), converted by Letta's own ``to_pydantic`` calls as its ``Agent.to_pydantic_async``
does, but only the fields a rebuild reads, and a block shared by many agents converted once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

INCLUDE = ["memory", "sources"]


@dataclass
class AgentInputs:
    """The fields of ``AgentState`` that ``rebuild_system_prompt_async`` reads (same names, same values)."""

    id: str
    system: str
    message_ids: list[str]  # [] where Letta has None: a rebuild skips both
    timezone: Optional[str]
    memory: Any  # letta.schemas.memory.Memory
    sources: list[Any]
    tool_rules: Any
    max_files_open: int
    llm_config: Any


async def load(agent_ids: list[str], actor: Any) -> list[AgentInputs]:
    """The agents of ``agent_ids`` that ``actor`` may read (in the database's order)."""
    from letta.orm.agent import Agent as AgentModel
    from letta.orm.sqlalchemy_base import AccessType
    from letta.server.db import db_registry
    from letta.services.helpers.agent_manager_helper import _apply_relationship_filters
    from sqlalchemy import select

    query = AgentModel.apply_access_predicate(select(AgentModel), actor, ["read"], AccessType.ORGANIZATION)
    query = _apply_relationship_filters(query.where(AgentModel.id.in_(agent_ids)), INCLUDE)
    async with db_registry.async_session() as session:
        agents = (await session.execute(query)).scalars().all()
        blocks: dict[str, Any] = {}
        return [_inputs(agent, blocks) for agent in agents]


def _inputs(agent: Any, blocks: dict[str, Any]) -> AgentInputs:
    from letta.schemas.memory import Memory
    from letta.utils import calculate_file_defaults_based_on_context_window

    char_limit = agent._get_per_file_view_window_char_limit()
    memory = Memory(
        blocks=[_block(row, blocks) for row in agent.core_memory],
        file_blocks=[
            block
            for row in agent.file_agents
            if (block := row.to_pydantic_block(per_file_view_window_char_limit=char_limit)) is not None
        ],
        agent_type=agent.agent_type,
        git_enabled=any(tag.tag == "git-memory-enabled" for tag in agent.tags),
    )
    max_files_open = agent.max_files_open
    if max_files_open is None:
        # AgentState's default (set_file_defaults_based_on_context_window).
        llm_config = agent.llm_config
        context_window = llm_config.context_window if llm_config and llm_config.context_window else None
        max_files_open, _ = calculate_file_defaults_based_on_context_window(context_window)
    return AgentInputs(
        id=agent.id,
        system=agent.system,
        message_ids=agent.message_ids or [],
        timezone=agent.timezone,
        memory=memory,
        sources=[row.to_pydantic() for row in agent.sources],
        tool_rules=agent.tool_rules,
        max_files_open=max_files_open,
        llm_config=agent.llm_config,
    )


def _block(row: Any, blocks: dict[str, Any]) -> Any:
    # Rendering never changes a block: one pydantic Block per row serves every agent it is attached to.
    block = blocks.get(row.id)
    if block is None:
        block = blocks[row.id] = row.to_pydantic()
    return block
