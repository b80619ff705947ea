"""The shared-block fan-out through the REST API of a real ``letta server`` with 2 workers: stock Letta, then
``memprompt run --mode M -- letta server`` for each mode, on the same agents; times into docs/server-bench.md.

Each mode's texts are checked against what stock's one-by-one rebuild builds from the same database, and
every worker of every memprompt server must have logged its install (the parent's line alone would not do).
"""

from __future__ import annotations

import asyncio
import os
import platform
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

from letta_agents import in_label_order
from letta_process import EMBEDDING, LLM, LOGS, LettaServer, assert_every_worker_patched, client
from report import BENCH, write_section

SIZES = tuple(int(n) for n in os.environ.get("MEMPROMPT_E2E_SIZES", "100,300,1000").split(","))
MODES = ("render", "rebuild", "stable")


def _create_agents(letta, blocks: dict[int, str]) -> list[str]:
    """max(SIZES) agents; agent i is attached to the shared block of every size greater than i."""

    def create(index: int) -> str:
        shared = [block_id for size, block_id in blocks.items() if index < size]
        agent = letta.agents.create(
            name=f"fan-{index}",
            agent_type="memgpt_v2_agent",
            memory_blocks=[{"label": "persona", "value": f"I am agent {index}."}],
            block_ids=shared,
            llm_config=LLM,
            embedding_config=EMBEDDING,
            include_base_tools=False,
        )
        return agent.id

    with ThreadPoolExecutor(6) as pool:
        return list(pool.map(create, range(max(SIZES))))


def _time_fan_outs(letta, blocks: dict[int, str], value: str) -> dict[int, float]:
    times = {}
    for size, block_id in blocks.items():
        start = time.perf_counter()
        letta.blocks.update(block_id, value=f"{value} (shared by {size})")
        times[size] = time.perf_counter() - start
    return times


def _stored_and_stock_texts(sync_server, agent_ids: list[str]) -> tuple[list[str], list[str]]:
    """message[0] of each agent as stored, and as stock's forced one-by-one rebuild builds it now (dry runs)."""

    async def read() -> tuple[list[str], list[str]]:
        import memprompt.letta

        memprompt.letta.uninstall()
        actor = await sync_server.user_manager.get_default_actor_async()
        stored, stock = [], []
        for agent_id in agent_ids:
            agent = await sync_server.agent_manager.get_agent_by_id_async(agent_id=agent_id, actor=actor)
            message = await sync_server.message_manager.get_message_by_id_async(
                message_id=agent.message_ids[0], actor=actor
            )
            stored.append(message.content[0].text)
            _, rebuilt, _, _ = await sync_server.agent_manager.rebuild_system_prompt_async(
                agent_id=agent_id, actor=actor, force=True, update_timestamp=False, dry_run=True
            )
            stock.append(rebuilt.content[0].text)
        return stored, stock

    return asyncio.run(read())


def test_fan_out_stock_and_every_mode(database):
    uri, config_dir, sync_server = database
    times: dict[str, dict[int, float]] = {}
    with LettaServer(uri, config_dir, None, LOGS / "mp-e2e-stock.log") as server:
        assert not server.patched_pids()
        letta = client(server)
        # One label per block: Letta allows one block of a label per agent.
        blocks = {size: letta.blocks.create(label=f"shared_{size}", value="version 0", limit=5000).id for size in SIZES}
        start = time.perf_counter()
        agent_ids = _create_agents(letta, blocks)
        created = time.perf_counter() - start
        times["stock"] = _time_fan_outs(letta, blocks, "stock")
    checked = agent_ids[: min(SIZES)]
    stored, stock = _stored_and_stock_texts(sync_server, checked)
    # Blocks compared in label order: Letta orders them by no ORDER BY (see in_label_order).
    assert in_label_order(stored) == in_label_order(stock)
    for mode in MODES:
        with LettaServer(uri, config_dir, mode, LOGS / f"mp-e2e-{mode}.log") as server:
            assert_every_worker_patched(server, mode)
            times[mode] = _time_fan_outs(client(server), blocks, mode)
        stored, stock = _stored_and_stock_texts(sync_server, checked)
        assert all(f"{mode} (shared by" in text for text in stored)
        assert in_label_order(stored) == in_label_order(stock), f"mode {mode}: message[0] differs from stock's rebuild"
    _write_report(times, created)
    for size in SIZES:
        assert times["rebuild"][size] < times["stock"][size]


def _write_report(times: dict[str, dict[int, float]], created: float) -> None:
    lines = [
        "## Shared-block fan-out through a real `letta server`",
        "",
        f"Written by `tests/letta_e2e/test_fanout_bench.py` (`make test-letta-server`) on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC,",
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. `letta server` 0.16.8, 2 uvicorn",
        "workers, PostgreSQL from pgserver on a unix socket; one `PATCH /v1/blocks/{id}` (letta-client 1.7.12) per row,",
        "timed at the client: the request returns once every connected agent's message[0] is rebuilt. Stock Letta",
        "first, then `memprompt run --mode MODE -- letta server` on the same agents. Each run changes the block's value,",
        "so every message[0] is rewritten in every run. One run each (a single sample: expect noise on a shared machine).",
        f"Creating the {max(SIZES)} agents over HTTP took {created:.1f} s.",
        "",
        "| agents | stock | " + " | ".join(MODES) + " | " + " | ".join(f"stock / {m}" for m in MODES) + " |",
        "|---:|---:|" + "---:|" * (2 * len(MODES)),
    ]
    for size in SIZES:
        stock = times["stock"][size]
        row = [
            f"{size:,}",
            f"{stock:.2f} s",
            *(f"{times[m][size]:.2f} s" for m in MODES),
            *(f"{stock / times[m][size]:.1f}x" for m in MODES),
        ]
        lines.append("| " + " | ".join(row) + " |")
    goals = []
    if 300 in times["stock"]:
        ratio = times["stock"][300] / times["rebuild"][300]
        goals.append(
            f"- 300 agents at least 10x faster than stock (rebuild mode): {ratio:.1f}x, {'met' if ratio >= 10 else 'missed'}."
        )
    if 1000 in times["stock"]:
        t = times["rebuild"][1000]
        goals.append(f"- 1,000 agents under 3 s (rebuild mode): {t:.2f} s, {'met' if t < 3 else 'missed'}.")
    lines += ["", "Goals:", "", *goals]
    write_section(BENCH, "fan-out", lines)
