"""memprompt.letta.decisions and stamps: no statement more than stock where Letta would not rebuild, one more per
rebuild (the stamp), no difflib, and a failing stamp store never fails a request."""

from __future__ import annotations

import difflib
import logging

import pytest
from letta_agents import counting_statements, create_agent, stock, stored_text

import memprompt.letta
from memprompt.letta import stamps

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _edit(server, actor, agent_id, value):
    """Change the agent's ``human`` block in the database only: no rebuild yet (Letta's own update fans out)."""
    from letta.server.db import db_registry
    from sqlalchemy import text

    agent = await server.agent_manager.get_agent_by_id_async(
        agent_id=agent_id, actor=actor, include_relationships=["memory"]
    )
    block = next(b for b in agent.memory.blocks if b.label == "human")
    async with db_registry.async_session() as session:
        await session.execute(text("UPDATE block SET value = :v WHERE id = :id"), {"v": value, "id": block.id})
        await session.commit()


async def _rebuild_counted(server, actor, agent_id, mode, **kwargs):
    with memprompt.letta.installed(mode=mode) if mode else stock():
        with counting_statements() as statements:
            await server.agent_manager.rebuild_system_prompt_async(agent_id=agent_id, actor=actor, **kwargs)
    return statements


async def test_statements_unforced_rebuild_as_stock(server, actor, frozen_time):
    agent = await create_agent(server, actor, blocks=[("persona", "I am Sam."), ("human", "Ada")])
    # Nothing changed: memprompt's exact decision runs on exactly stock's statements.
    stock_count = len(await _rebuild_counted(server, actor, agent.id, None))
    mine = await _rebuild_counted(server, actor, agent.id, "rebuild")
    assert len(mine) == stock_count, mine.statements
    assert not mine.touching(stamps.TABLE)
    # A real rebuild: at most one statement more than stock's (the stamp).
    await _edit(server, actor, agent.id, "Ada Lovelace")
    text_before = await stored_text(server, actor, agent.id)
    mine = await _rebuild_counted(server, actor, agent.id, "rebuild")
    assert await stored_text(server, actor, agent.id) != text_before
    await _edit(server, actor, agent.id, "Ada King")
    theirs = await _rebuild_counted(server, actor, agent.id, None)
    assert len(mine) <= len(theirs) + 1, (mine.statements, theirs.statements)
    assert len(mine.touching(stamps.TABLE)) == 1


async def test_forced_rebuild_with_nothing_changed_uses_no_difflib(server, actor, frozen_time, monkeypatch):
    agent = await create_agent(server, actor, blocks=[("persona", "I am Sam."), ("human", "Ada")])
    with stock():
        await server.agent_manager.rebuild_system_prompt_async(agent_id=agent.id, actor=actor, force=True)

    def no_difflib(*args, **kwargs):
        raise AssertionError("difflib used outside debug logging")

    monkeypatch.setattr(difflib, "unified_diff", no_difflib)
    before = await stored_text(server, actor, agent.id)
    with memprompt.letta.installed(mode="rebuild"):
        await server.agent_manager.rebuild_system_prompt_async(agent_id=agent.id, actor=actor, force=True)
        await _edit(server, actor, agent.id, "Ada Lovelace")
        await server.agent_manager.rebuild_system_prompt_async(agent_id=agent.id, actor=actor, force=True)
    assert await stored_text(server, actor, agent.id) != before


async def test_stable_forced_refresh_keeps_message_zero(server, actor, frozen_time):
    agent = await create_agent(server, actor, blocks=[("persona", "I am Sam."), ("human", "Ada")])
    before = await stored_text(server, actor, agent.id)
    with memprompt.letta.installed(mode="stable"):
        with counting_statements() as statements:
            await server.agent_manager.rebuild_system_prompt_async(agent_id=agent.id, actor=actor, force=True)
        assert await stored_text(server, actor, agent.id) == before
        assert not statements.touching("UPDATE messages")
        await _edit(server, actor, agent.id, "Ada Lovelace")
        await server.agent_manager.rebuild_system_prompt_async(agent_id=agent.id, actor=actor, force=True)
    after = await stored_text(server, actor, agent.id)
    assert after != before and "Ada Lovelace" in after


@pytest.mark.parametrize("fault", ["table dropped", "statement error"])
async def test_failing_stamp_store_never_fails_a_request(server, actor, frozen_time, monkeypatch, caplog, fault):
    from letta.server.db import db_registry
    from letta_agents import agents_sharing_a_block, in_label_order, stock_fan_out_texts, update_block
    from sqlalchemy import text

    monkeypatch.setattr(stamps, "_warned", set())
    if fault == "table dropped":
        memprompt.letta.install(mode="stable")  # creates the table
        memprompt.letta.uninstall()
        async with db_registry.async_session() as session:
            await session.execute(text(f"DROP TABLE {stamps.TABLE}"))
            await session.commit()
    else:
        monkeypatch.setattr(stamps, "RECORD", "INSERT INTO no_such_table VALUES (:id, :fp, :stamp)")
        monkeypatch.setattr(stamps, "LOAD", "SELECT no_such_column FROM no_such_table WHERE 1 = ANY(:ids)")
    block_id, agent_ids = await agents_sharing_a_block(server, actor, 3)
    caplog.set_level(logging.WARNING, logger="memprompt.letta")
    with memprompt.letta.installed(mode="stable"):
        if fault == "table dropped":
            async with db_registry.async_session() as session:  # install() created it again: drop it once more
                await session.execute(text(f"DROP TABLE {stamps.TABLE}"))
                await session.commit()
        await update_block(server, actor, block_id, "stock value")  # fan-out: stamps read and written
        await server.agent_manager.rebuild_system_prompt_async(agent_id=agent_ids[0], actor=actor, force=True)
        await update_block(server, actor, block_id, "other value")
        await update_block(server, actor, block_id, "stock value")
    got = [await stored_text(server, actor, a) for a in agent_ids]
    assert all("stock value" in text for text in got)
    assert in_label_order(got) == in_label_order(await stock_fan_out_texts(server, actor, agent_ids))
    warnings = [r for r in caplog.records if r.name == "memprompt.letta" and "stamp store" in r.getMessage()]
    assert {r.getMessage().split(" failed")[0] for r in warnings} == {
        "memprompt stamp store read",
        "memprompt stamp store write",
    }
    assert len(warnings) == 2  # once per kind, however many requests
    memprompt.letta.install(mode="rebuild")  # the table back for the other tests
    memprompt.letta.uninstall()
