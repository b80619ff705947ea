"""memprompt.letta.deferral: in deferred mode an agent's own memory-tool edit waits to reach its message[0]; each
catch-up point applies it, the bound applies it, every outside path applies at once, the decision lives in the
database, and a failing store never fails a request.

The edits run through Letta's own core tool executor (``LettaCoreToolExecutor.execute``), as an agent's step runs
them; the catch-up points are the calls Letta makes there (a compaction's forced rebuild, ``reset_messages_async``,
the recompile route's forced rebuild, a new conversation's system message).
"""

from __future__ import annotations

import logging

import pytest
from letta_agents import (
    agents_sharing_a_block,
    counting_statements,
    create_agent,
    stored_text,
    stored_texts,
    update_block,
)

import memprompt.letta
from memprompt.letta import deferral, stamps

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture
def deferred():
    memprompt.letta.install(mode="deferred")
    try:
        yield
    finally:
        memprompt.letta.uninstall()


async def tool(server, actor, agent_id, name, **arguments):
    """Letta's core tool ``name`` run for the agent as its step runs it (the agent's state loaded first)."""
    from letta.services.tool_executor.core_tool_executor import LettaCoreToolExecutor

    state = await server.agent_manager.get_agent_by_id_async(
        agent_id=agent_id, actor=actor, include_relationships=["memory", "sources", "tools"]
    )
    executor = LettaCoreToolExecutor(
        message_manager=server.message_manager,
        agent_manager=server.agent_manager,
        block_manager=server.block_manager,
        run_manager=server.run_manager,
        passage_manager=server.passage_manager,
        actor=actor,
    )
    result = await executor.execute(name, arguments, None, actor, state)
    assert result.status == "success", result.stderr
    return result


async def insert(server, actor, agent_id, line, label="human"):
    return await tool(server, actor, agent_id, "memory_insert", label=label, new_string=line)


async def block_value(server, actor, agent_id, label):
    agent = await server.agent_manager.get_agent_by_id_async(
        agent_id=agent_id, actor=actor, include_relationships=["memory"]
    )
    return agent.memory.get_block(label).value


async def new_agent(server, actor):
    return await create_agent(server, actor, blocks=[("persona", "I am Sam."), ("human", "Name: Ada.")])


async def test_own_edit_waits_for_one_statement(server, actor, deferred):
    agent = await new_agent(server, actor)
    before = await stored_text(server, actor, agent.id)
    with counting_statements() as statements:
        await insert(server, actor, agent.id, "Likes tea.")
    assert await block_value(server, actor, agent.id, "human") == "Name: Ada.\nLikes tea."
    assert await stored_text(server, actor, agent.id) == before
    assert not statements.touching("UPDATE messages")
    # The fan-out, update_memory_if_changed's rebuild and the tool's: one decision, one statement.
    assert len(statements.touching(deferral.TABLE)) == 1
    assert not [s for s in statements.touching(stamps.TABLE) if "INSERT" in s]  # no message[0] written


async def test_no_statement_where_letta_would_not_rebuild(server, actor, deferred):
    agent = await new_agent(server, actor)
    with counting_statements() as statements:
        await tool(server, actor, agent.id, "memory_replace", label="human", old_string="Ada", new_string="Ada")
    assert not statements.touching(deferral.TABLE) and not statements.touching("UPDATE messages")


async def _compaction(server, actor, agent_id):
    # What LettaAgentV3 calls after it compacts.
    await server.agent_manager.rebuild_system_prompt_async(
        agent_id=agent_id, actor=actor, force=True, update_timestamp=True
    )
    return await stored_text(server, actor, agent_id)


async def _reset(server, actor, agent_id):
    # The messages/reset route.
    await server.agent_manager.reset_messages_async(agent_id=agent_id, actor=actor, rebuild_system_prompt=True)
    return await stored_text(server, actor, agent_id)


async def _recompile(server, actor, agent_id):
    # POST /v1/agents/{id}/recompile.
    await server.agent_manager.rebuild_system_prompt_async(
        agent_id=agent_id, actor=actor, force=True, update_timestamp=False
    )
    return await stored_text(server, actor, agent_id)


async def _new_conversation(server, actor, agent_id):
    from letta.schemas.conversation import CreateConversation
    from letta.services.conversation_manager import ConversationManager

    manager = ConversationManager()
    conversation = await manager.create_conversation(
        agent_id=agent_id, conversation_create=CreateConversation(), actor=actor
    )
    (first, *_) = await manager.get_message_ids_for_conversation(conversation_id=conversation.id, actor=actor)
    message = await server.message_manager.get_message_by_id_async(message_id=first, actor=actor)
    return message.content[0].text


CATCH_UP = {"compaction": _compaction, "reset": _reset, "recompile": _recompile, "new conversation": _new_conversation}


@pytest.mark.parametrize("point", sorted(CATCH_UP))
async def test_each_catch_up_point_applies_every_waiting_edit(server, actor, deferred, point):
    agent = await new_agent(server, actor)
    before = await stored_text(server, actor, agent.id)
    await insert(server, actor, agent.id, "Likes tea.")
    await insert(server, actor, agent.id, "Prefers green tea.", label="persona")
    assert await stored_text(server, actor, agent.id) == before
    text = await CATCH_UP[point](server, actor, agent.id)
    assert "Likes tea." in text and "Prefers green tea." in text
    if point != "new conversation":
        assert await stored_text(server, actor, agent.id) == text
        # Caught up: the next edit waits again, from the new message[0].
        await insert(server, actor, agent.id, "Dislikes coffee.")
        assert await stored_text(server, actor, agent.id) == text


async def test_the_bound_applies_them(server, actor, deferred, monkeypatch):
    monkeypatch.setenv(deferral.BOUND_VARIABLE, "2")
    agent = await new_agent(server, actor)
    before = await stored_text(server, actor, agent.id)
    await insert(server, actor, agent.id, "one")
    await insert(server, actor, agent.id, "two")
    assert await stored_text(server, actor, agent.id) == before
    await insert(server, actor, agent.id, "three")  # a third would wait: written now, with all three
    written = await stored_text(server, actor, agent.id)
    assert all(f"\n{line}" in written for line in ("one", "two", "three"))
    await insert(server, actor, agent.id, "four")  # the count starts again for the new message[0]
    assert await stored_text(server, actor, agent.id) == written


async def test_a_bound_of_zero_is_stable_mode(server, actor, deferred, monkeypatch):
    monkeypatch.setenv(deferral.BOUND_VARIABLE, "0")
    agent = await new_agent(server, actor)
    with counting_statements() as statements:
        await insert(server, actor, agent.id, "Likes tea.")
    assert "Likes tea." in await stored_text(server, actor, agent.id)
    assert not statements.touching(deferral.TABLE)


async def test_an_outside_edit_applies_at_once_with_the_waiting_ones(server, actor, deferred):
    from letta.schemas.block import BlockUpdate

    agent = await new_agent(server, actor)
    await insert(server, actor, agent.id, "Likes tea.")
    # PATCH /v1/agents/{id}/core-memory/blocks/persona: the block update (fan-out), then the route's rebuild.
    await server.agent_manager.modify_block_by_label_async(
        agent_id=agent.id,
        block_label="persona",
        block_update=BlockUpdate(value="I am Sam, at a tea shop."),
        actor=actor,
    )
    await server.agent_manager.rebuild_system_prompt_async(
        agent_id=agent.id, actor=actor, force=True, update_timestamp=False
    )
    text = await stored_text(server, actor, agent.id)
    assert "at a tea shop" in text and "Likes tea." in text


async def test_an_attached_block_does_not_wait_with_the_own_edit(server, actor, deferred):
    """Letta writes no message[0] when a block is attached; the next rebuild does, the own tool's one too: what
    message[0] misses is then more than the agent's own edit, so nothing waits."""
    from letta.schemas.block import Block

    agent = await new_agent(server, actor)
    block = await server.block_manager.create_or_update_block_async(Block(label="notes", value="Buy tea."), actor=actor)
    await server.agent_manager.attach_block_async(agent_id=agent.id, block_id=block.id, actor=actor)
    await insert(server, actor, agent.id, "Likes tea.")
    text = await stored_text(server, actor, agent.id)
    assert "Buy tea." in text and "Likes tea." in text


async def test_a_source_does_not_wait_with_the_own_edit(server, actor, deferred):
    import uuid

    from letta.schemas.source import Source
    from letta_agents import embedding

    agent = await new_agent(server, actor)
    source = await server.source_manager.create_source(
        Source(name=f"src-{uuid.uuid4().hex[:8]}", embedding_config=embedding()), actor=actor
    )
    await server.agent_manager.attach_source_async(agent_id=agent.id, source_id=source.id, actor=actor)
    await insert(server, actor, agent.id, "Likes tea.")
    text = await stored_text(server, actor, agent.id)
    assert source.name in text and "Likes tea." in text


async def test_a_shared_block_edit_rebuilds_the_others_at_once_and_its_own_agent_later(server, actor, deferred):
    block_id, agent_ids = await agents_sharing_a_block(server, actor, 3)
    for agent_id in agent_ids:  # Letta attached the block without a rebuild: message[0] holds it after one
        assert "shared v0" in await _recompile(server, actor, agent_id)
    before = await stored_texts(server, actor, agent_ids)
    await insert(server, actor, agent_ids[0], "A line from agent 0.", label="shared")
    after = await stored_texts(server, actor, agent_ids)
    assert after[0] == before[0]
    assert all("A line from agent 0." in text for text in after[1:])
    assert "A line from agent 0." in await _recompile(server, actor, agent_ids[0])
    # Another agent's edit reaches agent 0 at once (its own waits no more).
    await insert(server, actor, agent_ids[1], "And one from agent 1.", label="shared")
    assert "And one from agent 1." in await stored_text(server, actor, agent_ids[0])
    assert "And one from agent 1." not in await stored_text(server, actor, agent_ids[1])
    await update_block(server, actor, block_id, "rewritten through the REST API")
    assert all("rewritten through the REST API" in text for text in await stored_texts(server, actor, agent_ids))


async def test_an_edit_back_to_what_message_zero_shows_is_kept(server, actor, deferred):
    """Letta's update_memory_if_changed_async skips the write when the new memory is found in message[0]: with an
    edit waiting, message[0] shows the old value, and an edit back to it would be lost."""
    agent = await new_agent(server, actor)
    before = await stored_text(server, actor, agent.id)
    await tool(server, actor, agent.id, "memory_replace", label="human", old_string="Ada.", new_string="Ada King.")
    await tool(server, actor, agent.id, "memory_replace", label="human", old_string="Ada King.", new_string="Ada.")
    assert await block_value(server, actor, agent.id, "human") == "Name: Ada."
    assert await stored_text(server, actor, agent.id) == before
    assert "Name: Ada.\n" in await _recompile(server, actor, agent.id)


async def test_two_workers_and_a_restart_agree(server, actor, monkeypatch):
    """Everything a decision reads is in the database: a new process (install again: nothing in memory) goes on
    counting the same waiting edits, and a catch-up after it loses none."""
    monkeypatch.setenv(deferral.BOUND_VARIABLE, "2")
    agent = await new_agent(server, actor)
    before = await stored_text(server, actor, agent.id)
    with memprompt.letta.installed(mode="deferred"):
        await insert(server, actor, agent.id, "one")
    with memprompt.letta.installed(mode="deferred"):  # another worker, or the server restarted
        await insert(server, actor, agent.id, "two")
        assert await stored_text(server, actor, agent.id) == before
        await insert(server, actor, agent.id, "three")
        written = await stored_text(server, actor, agent.id)
    assert all(f"\n{line}" in written for line in ("one", "two", "three"))
    with memprompt.letta.installed(mode="deferred"):
        await insert(server, actor, agent.id, "four")
    with memprompt.letta.installed(mode="deferred"):
        assert "\nfour" in await _compaction(server, actor, agent.id)


async def test_a_failing_store_never_fails_a_request(server, actor, deferred, monkeypatch, caplog):
    monkeypatch.setattr(stamps, "_warned", set())
    monkeypatch.setattr(deferral, "DEFER", "SELECT edits FROM no_such_table WHERE :id = :fp")
    caplog.set_level(logging.WARNING, logger="memprompt.letta")
    agent = await new_agent(server, actor)
    await insert(server, actor, agent.id, "Likes tea.")
    await insert(server, actor, agent.id, "Prefers green tea.")
    text = await stored_text(server, actor, agent.id)
    assert "Likes tea." in text and "Prefers green tea." in text  # rebuilt at once, as stable mode
    warnings = [r.getMessage() for r in caplog.records if "stamp store deferral failed" in r.getMessage()]
    assert len(warnings) == 1, warnings
