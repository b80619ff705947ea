"""memprompt.letta.fanout: a shared block's update rebuilds every connected agent in one pass, as stock does."""

from __future__ import annotations

import pytest
from letta_agents import (
    agents_sharing_a_block,
    counting_statements,
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
    # Each text is what stock's one-by-one forced rebuild builds from the same database.
    theirs = await stock_fan_out_texts(server, actor, agent_ids)
    assert after == theirs
    # A constant number of statements, and per agent only stock's own load of it (for its block order).
    assert len(statements) < 30 + 12 * await _statements_of_one_agent_load(server, actor, agent_ids[0])
    assert len(statements.touching("UPDATE messages")) == 1


async def test_fan_out_statements_grow_by_one_agent_load_per_agent(server, actor):
    counts = []
    for count in (3, 15):
        block_id, agent_ids = await agents_sharing_a_block(server, actor, count)
        with memprompt.letta.installed(mode="rebuild"):
            with counting_statements() as statements:
                await update_block(server, actor, block_id, f"now {count}")
        counts.append(len(statements))
    # Stock's own load of each agent (Letta orders its blocks by no ORDER BY); the rest is constant.
    per_agent = await _statements_of_one_agent_load(server, actor, agent_ids[0])
    assert counts[1] - counts[0] == (15 - 3) * per_agent, counts


async def _statements_of_one_agent_load(server, actor, agent_id) -> int:
    """The statements of the load stock's rebuild makes of one agent."""
    with counting_statements() as statements:
        await server.agent_manager.get_agent_by_id_async(
            agent_id=agent_id, actor=actor, include_relationships=["memory", "sources", "tools"]
        )
    return len(statements)


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
    assert completed == await stock_fan_out_texts(server, actor, agent_ids)
