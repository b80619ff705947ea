"""memprompt.letta.fanout: a shared block's update rebuilds every connected agent in one pass, as stock does."""

from __future__ import annotations

import uuid

import pytest
from letta_agents import (
    agents_sharing_a_block,
    counting_statements,
    create_agent,
    embedding,
    in_label_order,
    stock_fan_out_texts,
    stored_texts,
    update_block,
)

import memprompt.letta

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.mark.parametrize("mode", ["rebuild", "stable"])
async def test_fan_out_writes_what_stock_writes(server, actor, mode):
    block_id, agent_ids = await agents_sharing_a_block(server, actor, 12)
    before = await stored_texts(server, actor, agent_ids)
    with memprompt.letta.installed(mode=mode):
        with counting_statements() as statements:
            await update_block(server, actor, block_id, "shared v1\nwith a second line")
    after = await stored_texts(server, actor, agent_ids)
    assert all("with a second line" in text for text in after)
    assert all(new != old for new, old in zip(after, before))
    # Each text is what stock's one-by-one forced rebuild builds from the same database (its blocks in
    # whichever order PostgreSQL returns them: test_block_order.test_stock_order_follows_the_plan).
    theirs = await stock_fan_out_texts(server, actor, agent_ids)
    assert in_label_order(after) == in_label_order(theirs)
    # A constant number of statements (stock: about 10 per agent).
    assert len(statements) < 30, statements.statements
    assert len(statements.touching("UPDATE messages")) == 1


async def test_fan_out_reads_every_input_a_rebuild_reads(server, actor):
    """An open file of a source, tool rules, another model's context window, git memory: each text as stock's."""
    from letta.schemas.block import Block
    from letta.schemas.file import FileMetadata
    from letta.schemas.source import Source
    from letta.schemas.tool_rule import TerminalToolRule

    agents = [
        await create_agent(server, actor, blocks=[("persona", "I read files.")]),
        await create_agent(
            server,
            actor,
            blocks=[("persona", "I follow rules.")],
            tool_rules=[TerminalToolRule(tool_name="send_message")],
        ),
        await create_agent(server, actor, blocks=[("persona", "I am Claude.")], anthropic=True),
        await create_agent(server, actor, blocks=[("system/persona", "I live in git.")], tags=["git-memory-enabled"]),
    ]
    source = await server.source_manager.create_source(
        Source(name=f"src-{uuid.uuid4().hex[:8]}", embedding_config=embedding()), actor=actor
    )
    file = await server.file_manager.create_file(
        FileMetadata(file_name="notes.txt", source_id=source.id, organization_id=actor.organization_id),
        actor=actor,
        text="hello\n" * 5000,
    )
    await server.agent_manager.attach_source_async(agent_id=agents[0].id, source_id=source.id, actor=actor)
    await server.file_agent_manager.attach_file(
        agent_id=agents[0].id,
        file_id=file.id,
        file_name=file.file_name,
        source_id=source.id,
        actor=actor,
        max_files_open=5,
        visible_content="hello\n" * 5000,
    )
    shared = await server.block_manager.create_or_update_block_async(
        Block(label="system/shared", value="v0"), actor=actor
    )
    agent_ids = [agent.id for agent in agents]
    for agent_id in agent_ids:
        await server.agent_manager.attach_block_async(agent_id=agent_id, block_id=shared.id, actor=actor)
    with memprompt.letta.installed(mode="rebuild"):
        await update_block(server, actor, shared.id, "v1")
    after = await stored_texts(server, actor, agent_ids)
    assert "notes.txt" in after[0] and "<tool_usage_rules>" in after[1] and "<self>" in after[3]
    assert all("v1" in text for text in after)
    assert in_label_order(after) == in_label_order(await stock_fan_out_texts(server, actor, agent_ids))


async def test_fan_out_statements_do_not_grow_with_the_agents(server, actor):
    counts = []
    for count in (3, 15):
        block_id, _ = await agents_sharing_a_block(server, actor, count)
        with memprompt.letta.installed(mode="rebuild"):
            with counting_statements() as statements:
                await update_block(server, actor, block_id, f"now {count}")
        counts.append(len(statements))
    assert counts[0] == counts[1], counts


async def test_interrupted_fan_out_leaves_old_or_new_and_the_next_update_completes(server, actor, monkeypatch):
    from letta.services.message_manager import MessageManager

    block_id, agent_ids = await agents_sharing_a_block(server, actor, 6)
    before = await stored_texts(server, actor, agent_ids)

    letta_update = MessageManager._update_message_by_id_impl
    calls = []

    def fail_at_the_fourth(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("interrupted")
        return letta_update(self, *args, **kwargs)

    with memprompt.letta.installed(mode="rebuild"):
        monkeypatch.setattr(MessageManager, "_update_message_by_id_impl", fail_at_the_fourth)
        await update_block(server, actor, block_id, "shared v1")  # the block update itself succeeds, as in stock
        after = await stored_texts(server, actor, agent_ids)
        assert len(calls) == 4
        assert after == before  # one transaction: every message[0] still old
        monkeypatch.setattr(MessageManager, "_update_message_by_id_impl", letta_update)
        await update_block(server, actor, block_id, "shared v1 ")
        await update_block(server, actor, block_id, "shared v1")
    completed = await stored_texts(server, actor, agent_ids)
    assert all("shared v1" in text for text in completed)
    assert in_label_order(completed) == in_label_order(await stock_fan_out_texts(server, actor, agent_ids))
