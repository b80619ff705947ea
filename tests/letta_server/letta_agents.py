"""Agents in a real Letta server (SyncServer on PostgreSQL), and stock Letta on demand: shared by the tests."""

from __future__ import annotations

import contextlib
import uuid

import memprompt.letta

# --- agents of every mode -------------------------------------------------------------


def llm(anthropic: bool):
    from letta.schemas.llm_config import LLMConfig

    if anthropic:
        return LLMConfig(
            model="claude-sonnet-4-5-20250929",
            model_endpoint_type="anthropic",
            model_endpoint="https://api.anthropic.com/v1",
            context_window=200000,
        )
    return LLMConfig(
        model="gpt-4o-mini",
        model_endpoint_type="openai",
        model_endpoint="https://api.openai.com/v1",
        context_window=128000,
    )


def embedding():
    from letta.schemas.embedding_config import EmbeddingConfig

    return EmbeddingConfig(
        embedding_endpoint_type="openai",
        embedding_endpoint="https://api.openai.com/v1",
        embedding_model="text-embedding-3-small",
        embedding_dim=1536,
        embedding_chunk_size=300,
    )


async def create_agent(server, actor, *, blocks, anthropic=False, tags=None, tool_rules=None, system=None):
    from letta.schemas.agent import CreateAgent
    from letta.schemas.block import CreateBlock

    request = CreateAgent(
        name=f"mp-{uuid.uuid4().hex[:8]}",
        agent_type="memgpt_v2_agent",
        memory_blocks=[CreateBlock(label=label, value=value, limit=5000) for label, value in blocks],
        llm_config=llm(anthropic),
        embedding_config=embedding(),
        include_base_tools=False,
        tags=tags or [],
        tool_rules=tool_rules or [],
        **({"system": system} if system is not None else {}),
    )
    with stock():
        agent = await server.agent_manager.create_agent_async(agent_create=request, actor=actor)
    return agent


class stock:
    """Stock Letta for the block (memprompt uninstalled, reinstalled on exit if it was)."""

    def __enter__(self):
        self.was = memprompt.letta.installed_mode()
        memprompt.letta.uninstall()

    def __exit__(self, *exc):
        if self.was:
            memprompt.letta.install(mode=self.was)


async def stored_text(server, actor, agent_id) -> str:
    agent = await server.agent_manager.get_agent_by_id_async(agent_id=agent_id, actor=actor)
    message = await server.message_manager.get_message_by_id_async(message_id=agent.message_ids[0], actor=actor)
    return message.content[0].text


async def agents_sharing_a_block(server, actor, count: int, value: str = "shared v0"):
    """``count`` agents (each with its own persona) attached to one new block labelled ``shared``: (block id, agent ids)."""
    from letta.schemas.block import Block

    with stock():
        block = await server.block_manager.create_or_update_block_async(
            Block(label="shared", value=value, limit=5000), actor=actor
        )
        agent_ids = []
        for index in range(count):
            agent = await create_agent(server, actor, blocks=[("persona", f"I am agent {index}.")])
            await server.agent_manager.attach_block_async(agent_id=agent.id, block_id=block.id, actor=actor)
            agent_ids.append(agent.id)
    return block.id, agent_ids


async def update_block(server, actor, block_id: str, value: str) -> None:
    from letta.schemas.block import BlockUpdate

    await server.block_manager.update_block_async(block_id=block_id, block_update=BlockUpdate(value=value), actor=actor)


async def stored_texts(server, actor, agent_ids) -> list[str]:
    return [await stored_text(server, actor, agent_id) for agent_id in agent_ids]


class counting_statements:
    """Counts the SQL statements Letta's engine executes inside the block (an executemany counts once)."""

    def __enter__(self):
        from letta.server.db import engine
        from sqlalchemy import event

        self.statements: list[str] = []
        self._engine = engine.sync_engine
        event.listen(self._engine, "before_cursor_execute", self._count)
        return self

    def _count(self, conn, cursor, statement, parameters, context, executemany):
        self.statements.append(statement)

    def __exit__(self, *exc):
        from sqlalchemy import event

        event.remove(self._engine, "before_cursor_execute", self._count)

    def __len__(self) -> int:
        return len(self.statements)

    def touching(self, table: str) -> list[str]:
        return [s for s in self.statements if table in s]


async def stock_fan_out_texts(server, actor, agent_ids) -> list[str]:
    """What stock's fan-out would write for each agent now (its one-by-one forced rebuild, as a dry run)."""
    texts = []
    with stock():
        for agent_id in agent_ids:
            _, message, _, _ = await server.agent_manager.rebuild_system_prompt_async(
                agent_id=agent_id, actor=actor, force=True, update_timestamp=False, dry_run=True
            )
            texts.append(message.content[0].text)
    return texts


def in_label_order(texts: list[str]) -> list[str]:
    """Each text with the blocks inside ``<memory_blocks>`` sorted by label, everything else byte for byte:
    Letta 0.16.8 loads an agent's blocks with no ORDER BY, so stock itself writes them in whichever order
    PostgreSQL's plan returns (test_block_order.test_stock_order_follows_the_plan)."""
    return [_blocks_in_label_order(text) for text in texts]


def _blocks_in_label_order(text: str) -> str:
    lines = text.split("\n")
    if "<memory_blocks>" not in lines:
        return text  # git memory: its blocks are drawn in path order
    start, end = lines.index("<memory_blocks>"), lines.index("</memory_blocks>")
    head, blocks, label = [], [], None
    for line in lines[start + 1 : end]:
        if label is None and line.startswith("<") and not line.startswith("</"):
            label = line[1:-1]
            blocks.append([line])
        elif label is not None:
            blocks[-1].append(line)
            label = None if line == f"</{label}>" else label
        elif not blocks:
            head.append(line)
    body = "\n\n".join("\n".join(block) for block in sorted(blocks, key=lambda block: block[0]))
    return "\n".join([*lines[: start + 1], *head, body, "", *lines[end:]])


@contextlib.asynccontextmanager
async def planner_settings(*settings: str):
    """PostgreSQL's planner settings off for every new connection (the tests' engine opens one per session)."""
    from letta.server.db import db_registry
    from sqlalchemy import text

    async def alter(action: str) -> None:
        async with db_registry.async_session() as session:
            for setting in settings:
                statement = f"ALTER DATABASE %I {action.format(setting)}"
                await session.execute(text(f"DO $$ BEGIN EXECUTE format('{statement}', current_database()); END $$"))
            await session.commit()

    await alter("SET {} = off")
    try:
        yield
    finally:
        await alter("RESET {}")
