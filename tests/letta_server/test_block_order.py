"""One block order: in stable (and deferred) mode message[0] holds an agent's blocks in label order, whatever order
PostgreSQL's plan returned them in, so an unchanged memory is never rewritten and every path writes the same bytes;
render and rebuild keep stock's order, byte for byte.

Letta 0.16.8 loads an agent's blocks with no ORDER BY. The plans are forced here: a scan of the tables (the order
the rows were written in), an index (with sequential and bitmap scans off), and a scan after an UPDATE that moves
a block's row to the end of its table.
"""

from __future__ import annotations

import pytest
from letta_agents import (
    counting_statements,
    create_agent,
    planner_settings,
    stock,
    stock_fan_out_texts,
    stored_text,
)

import memprompt.letta
from memprompt.letta import fanout

pytestmark = pytest.mark.asyncio(loop_scope="session")

LABELS = ("zeta", "beta", "alpha")


async def unordered_agent(server, actor, tag: str):
    """An agent whose blocks are written in the reverse of label order, with ids in label order: a scan of the
    tables returns zeta first, an index (by label, by block id) alpha first."""
    from letta.schemas.block import Block

    agent = await create_agent(server, actor, blocks=[])
    with stock():
        for label in LABELS:
            index = LABELS[::-1].index(label)
            block = await server.block_manager.create_or_update_block_async(
                Block(id=f"block-00000000-0000-4000-{tag}-{index:012d}", label=label, value=label), actor=actor
            )
            await server.agent_manager.attach_block_async(agent_id=agent.id, block_id=block.id, actor=actor)
    return agent


async def move_row(block_label: str, agent_id: str) -> None:
    """An UPDATE that changes nothing (each block here holds its label) but writes a new version of its row, at
    the end of the table."""
    await set_value(agent_id, block_label, block_label)


def order(text: str) -> list[str]:
    return sorted(LABELS, key=lambda label: text.index(f"<{label}>"))


async def test_stock_order_follows_the_plan(server, actor):
    """The three plans below do return stock's blocks in different orders (else the other tests prove nothing)."""
    agent = await unordered_agent(server, actor, "8001")
    scanned = await stock_fan_out_texts(server, actor, [agent.id])
    async with planner_settings("enable_seqscan", "enable_bitmapscan"):
        indexed = await stock_fan_out_texts(server, actor, [agent.id])
    await move_row("zeta", agent.id)
    moved = await stock_fan_out_texts(server, actor, [agent.id])
    # The index returns them by id (alpha first); a scan in the order the rows lie, which writes changed.
    assert order(indexed[0]) == sorted(LABELS)
    assert len({tuple(order(text)) for text in scanned + indexed + moved}) >= 2


@pytest.mark.parametrize("mode", ["stable", "deferred"])
async def test_unchanged_memory_never_rewritten_whatever_the_plan(server, actor, mode):
    agent = await unordered_agent(server, actor, "8002" if mode == "stable" else "8003")
    with memprompt.letta.installed(mode=mode):
        # The first change writes the blocks in label order.
        await server.agent_manager.modify_block_by_label_async(
            agent_id=agent.id, block_label="beta", block_update=_value("beta v1"), actor=actor
        )
        await server.agent_manager.rebuild_system_prompt_async(agent_id=agent.id, actor=actor, force=True)
        written = await stored_text(server, actor, agent.id)
        assert order(written) == sorted(LABELS) and "beta v1" in written
        for plan in ("index", "moved", "scan"):
            if plan == "moved":
                await move_row("alpha", agent.id)
            settings = ("enable_seqscan", "enable_bitmapscan") if plan == "index" else ()
            async with planner_settings(*settings):
                with counting_statements() as statements:
                    await server.agent_manager.rebuild_system_prompt_async(agent_id=agent.id, actor=actor, force=True)
                    await fanout.rebuild_agents(server.agent_manager, [agent.id], actor, stable=True)
            assert not statements.touching("UPDATE messages"), plan
            assert await stored_text(server, actor, agent.id) == written, plan


async def test_a_message_zero_in_another_order_is_kept(server, actor):
    """A message[0] written by stock (the blocks in the order they were loaded) is current for stable mode too,
    whatever order they are loaded in now."""
    agent = await unordered_agent(server, actor, "8004")
    with stock():
        await server.agent_manager.rebuild_system_prompt_async(agent_id=agent.id, actor=actor, force=True)
    before = await stored_text(server, actor, agent.id)
    assert order(before) != sorted(LABELS)
    for settings in ((), ("enable_seqscan", "enable_bitmapscan")):
        async with planner_settings(*settings):
            with memprompt.letta.installed(mode="stable"):
                with counting_statements() as statements:
                    await server.agent_manager.rebuild_system_prompt_async(agent_id=agent.id, actor=actor, force=True)
        assert not statements.touching("UPDATE messages"), settings
        assert await stored_text(server, actor, agent.id) == before


async def test_every_path_and_plan_writes_the_same_bytes(server, actor):
    """The one-agent rebuild (AgentManager's load) and the fan-out (Letta's batched load), each under another plan."""
    agent = await unordered_agent(server, actor, "8005")
    with memprompt.letta.installed(mode="stable"):
        await set_value(agent.id, "beta", "beta v1")  # in the database only: nothing rebuilt yet
        _, message, _, _ = await server.agent_manager.rebuild_system_prompt_async(
            agent_id=agent.id, actor=actor, force=True, update_timestamp=False, dry_run=True
        )
        one_agent = message.content[0].text
        await move_row("zeta", agent.id)
        async with planner_settings("enable_seqscan", "enable_bitmapscan"):
            assert await fanout.rebuild_agents(server.agent_manager, [agent.id], actor, stable=True) == 1
    fanned = await stored_text(server, actor, agent.id)
    assert "beta v1" in fanned and order(fanned) == sorted(LABELS)
    assert one_agent == fanned


@pytest.mark.parametrize("mode", ["render", "rebuild"])
async def test_render_and_rebuild_keep_stocks_order(server, actor, mode):
    agent = await unordered_agent(server, actor, "8006" if mode == "render" else "8007")
    for settings in ((), ("enable_seqscan", "enable_bitmapscan")):
        async with planner_settings(*settings):
            (theirs,) = await stock_fan_out_texts(server, actor, [agent.id])
            with memprompt.letta.installed(mode=mode):
                _, message, _, _ = await server.agent_manager.rebuild_system_prompt_async(
                    agent_id=agent.id, actor=actor, force=True, update_timestamp=False, dry_run=True
                )
        assert message.content[0].text == theirs, settings


async def set_value(agent_id: str, label: str, value: str) -> None:
    from letta.server.db import db_registry
    from sqlalchemy import text

    async with db_registry.async_session() as session:
        await session.execute(
            text(
                "UPDATE block SET value = :value WHERE label = :label AND id IN "
                "(SELECT block_id FROM blocks_agents WHERE agent_id = :agent)"
            ),
            {"value": value, "label": label, "agent": agent_id},
        )
        await session.commit()


def _value(value: str):
    from letta.schemas.block import BlockUpdate

    return BlockUpdate(value=value)
