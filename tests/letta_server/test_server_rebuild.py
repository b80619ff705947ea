"""Letta's own rebuild path, in a real Letta 0.16.8 server on PostgreSQL: stock vs memprompt.

Every check rebuilds the same stored agent three ways, as dry runs (nothing written):
stock Letta, stock Letta with force=True, and memprompt.letta.install(rebuild=True).
Time is frozen so the outputs compare byte for byte.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from letta_agents import (
    create_agent as _create_agent,
)
from letta_agents import (
    embedding as _embedding,
)
from letta_agents import (
    stock as _stock,
)
from letta_agents import (
    stored_text as _stored_text,
)

import memprompt.letta

pytestmark = pytest.mark.asyncio(loop_scope="session")


# --- agents of every mode: letta_agents.py ----------------------------------------------


async def _three_ways(server, actor, agent_id) -> tuple[str, str, str, str]:
    """(stored, stock, stock forced, memprompt) texts of message[0], as dry runs."""
    am = server.agent_manager
    stored = await _stored_text(server, actor, agent_id)
    with _stock():
        _, stock, _, _ = await am.rebuild_system_prompt_async(agent_id=agent_id, actor=actor, dry_run=True)
        _, forced, _, _ = await am.rebuild_system_prompt_async(agent_id=agent_id, actor=actor, force=True, dry_run=True)
    memprompt.letta.install(rebuild=True)
    try:
        _, mine, _, _ = await am.rebuild_system_prompt_async(agent_id=agent_id, actor=actor, dry_run=True)
    finally:
        memprompt.letta.uninstall()
    return stored, stock.content[0].text, forced.content[0].text, mine.content[0].text


async def _rebuild_with_memprompt(server, actor, agent_id) -> str:
    """A real (written) rebuild through memprompt's decision; returns the stored text after it."""
    memprompt.letta.install(rebuild=True)
    try:
        await server.agent_manager.rebuild_system_prompt_async(agent_id=agent_id, actor=actor)
    finally:
        memprompt.letta.uninstall()
    return await _stored_text(server, actor, agent_id)


async def _same(server, actor, agent_id) -> str:
    """An edit stock Letta handles correctly: memprompt decides and builds the same; then apply it."""
    stored, stock, forced, mine = await _three_ways(server, actor, agent_id)
    assert mine == stock
    after = await _rebuild_with_memprompt(server, actor, agent_id)
    assert after == mine
    return after


async def _stale(server, actor, agent_id) -> None:
    """A stale case of Letta's substring check (README, Rebuild decisions): stock keeps the old message[0], memprompt rebuilds it as force=True would."""
    stored, stock, forced, mine = await _three_ways(server, actor, agent_id)
    assert stock == stored, "stock Letta rebuilt: not a stale case"
    assert forced != stored, "the edit did not change the prompt"
    assert mine == forced
    # Written through Letta's manager too, and the recorded fingerprints then agree with it.
    assert await _rebuild_with_memprompt(server, actor, agent_id) == forced
    stored, stock, forced, mine = await _three_ways(server, actor, agent_id)
    assert mine == stored == forced


async def _edit_block(server, actor, agent_id, label, value):
    from letta.schemas.block import BlockUpdate

    await server.agent_manager.modify_block_by_label_async(
        agent_id=agent_id, block_label=label, block_update=BlockUpdate(value=value), actor=actor
    )


async def _detach_blocks(server, actor, agent_id, keep=()):
    agent = await server.agent_manager.get_agent_by_id_async(agent_id=agent_id, actor=actor)
    for block in agent.memory.blocks:
        if block.label not in keep:
            await server.agent_manager.detach_block_async(agent_id=agent_id, block_id=block.id, actor=actor)


async def _start(server, actor, agent_id) -> None:
    # Rebuild once at the frozen time, so later comparisons differ only by what the edits changed.
    with _stock():
        await server.agent_manager.rebuild_system_prompt_async(agent_id=agent_id, actor=actor, force=True)


# --- edit sequences: memprompt builds what stock Letta builds --------------------------


@pytest.mark.parametrize("anthropic", [False, True], ids=["plain", "anthropic-line-numbers"])
async def test_edit_sequence_same_as_stock(server, actor, frozen_time, anthropic):
    agent = await _create_agent(
        server, actor, blocks=[("persona", "I am Sam."), ("human", "Name: Ada")], anthropic=anthropic
    )
    await _start(server, actor, agent.id)
    await _same(server, actor, agent.id)  # nothing changed
    await _edit_block(server, actor, agent.id, "human", "Name: Ada\nLikes: tea")
    text = await _same(server, actor, agent.id)
    assert "Likes: tea" in text
    if anthropic:
        assert "Line numbers" in text or "1: " in text
    await _edit_block(server, actor, agent.id, "persona", "I am Sam, a helper.")
    await _same(server, actor, agent.id)


# --- the four stale cases of Letta's substring check -----------------------------------------------


async def test_stale_every_block_removed(server, actor, frozen_time):
    agent = await _create_agent(server, actor, blocks=[("persona", "I am Sam."), ("human", "Name: Ada")])
    await _start(server, actor, agent.id)
    await _detach_blocks(server, actor, agent.id)
    await _stale(server, actor, agent.id)


async def test_stale_tool_rules_removed(server, actor, frozen_time):
    from letta.schemas.agent import UpdateAgent
    from letta.schemas.tool_rule import TerminalToolRule

    agent = await _create_agent(
        server, actor, blocks=[("persona", "I am Sam.")], tool_rules=[TerminalToolRule(tool_name="send_message")]
    )
    await _start(server, actor, agent.id)
    assert "<tool_usage_rules>" in await _stored_text(server, actor, agent.id)
    with _stock():
        await server.agent_manager.update_agent_async(
            agent_id=agent.id, agent_update=UpdateAgent(tool_rules=[]), actor=actor
        )
    await _stale(server, actor, agent.id)


async def test_stale_git_memory_all_but_persona_removed(server, actor, frozen_time):
    agent = await _create_agent(
        server,
        actor,
        blocks=[("system/persona", "I am Sam."), ("system/human", "Name: Ada"), ("system/notes", "n")],
        tags=["git-memory-enabled"],
    )
    assert agent.memory.git_enabled
    await _start(server, actor, agent.id)
    await _detach_blocks(server, actor, agent.id, keep=("system/persona",))
    await _stale(server, actor, agent.id)


async def test_stale_sources_detached(server, actor, frozen_time):
    from letta.schemas.file import FileMetadata
    from letta.schemas.source import Source

    agent = await _create_agent(server, actor, blocks=[("persona", "I am Sam.")])
    source = await server.source_manager.create_source(
        Source(name=f"src-{uuid.uuid4().hex[:8]}", embedding_config=_embedding()), actor=actor
    )
    file = await server.file_manager.create_file(
        FileMetadata(file_name="notes.txt", source_id=source.id, organization_id=actor.organization_id),
        actor=actor,
        text="hello",
    )
    await server.agent_manager.attach_source_async(agent_id=agent.id, source_id=source.id, actor=actor)
    await server.file_agent_manager.attach_file(
        agent_id=agent.id,
        file_id=file.id,
        file_name=file.file_name,
        source_id=source.id,
        actor=actor,
        max_files_open=5,
        visible_content="hello",
    )
    await _start(server, actor, agent.id)
    assert "notes.txt" in await _stored_text(server, actor, agent.id)
    await server.agent_manager.detach_source_async(agent_id=agent.id, source_id=source.id, actor=actor)
    await _stale(server, actor, agent.id)


# --- {CORE_MEMORY}: stock LettaAgentV2._rebuild_memory rewrites an unchanged prompt -----------


async def test_core_memory_placeholder_not_rewritten(server, actor, frozen_time, monkeypatch):
    from letta.agents.letta_agent_v2 import LettaAgentV2

    agent = await _create_agent(
        server, actor, blocks=[("persona", "I am Sam.")], system="You are a helper.\n\n{CORE_MEMORY}\n\nBe brief."
    )

    async def run_rebuild():
        state = await server.agent_manager.get_agent_by_id_async(agent_id=agent.id, actor=actor)
        messages = await server.message_manager.get_messages_by_ids_async(message_ids=state.message_ids, actor=actor)
        before = messages[0].content[0].text
        writes = []
        runner = LettaAgentV2(agent_state=state, actor=actor)
        real = runner.message_manager.update_message_by_id_async

        async def counting(*args, **kwargs):
            writes.append(1)
            return await real(*args, **kwargs)

        runner.message_manager.update_message_by_id_async = counting
        new = await runner._rebuild_memory(messages, num_messages=None, num_archival_memories=None)
        return before, new[0].content[0].text, len(writes)

    import letta.agents.letta_agent_v2 as v2

    # Nothing changes, but a step a minute later: stock rewrites message[0], at every step, because
    # the placeholder is never found in the built text (only the timestamp in it differs).
    for minutes in (1, 2):
        monkeypatch.setattr(v2, "get_utc_time", lambda minutes=minutes: frozen_time + timedelta(minutes=minutes))
        with _stock():
            before, after, writes = await run_rebuild()
        assert writes == 1 and after != before
    monkeypatch.setattr(v2, "get_utc_time", lambda: frozen_time + timedelta(minutes=3))
    memprompt.letta.install(rebuild=True)
    try:
        before, after, writes = await run_rebuild()
        assert writes == 0 and after == before
        before, after, writes = await run_rebuild()
        assert writes == 0 and after == before
    finally:
        memprompt.letta.uninstall()
