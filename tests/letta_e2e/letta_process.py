"""A real ``letta server`` (uvicorn, 2 workers) on the test PostgreSQL, started stock or through ``memprompt run``."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

import httpx

BIN = Path(sys.executable).parent
WORKERS = 2
LOGS = Path(os.environ.get("MEMPROMPT_E2E_LOGS", "/tmp"))
#: The metadata's time, which differs between two servers' renders.
TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [AP]M [A-Z]+[+-]\d{4}")
#: An agent's model when no LLM is called. Port 9 (discard) answers nothing.
LLM = {
    "model": "mock",
    "model_endpoint_type": "openai",
    "model_endpoint": "http://127.0.0.1:9/v1",
    "context_window": 32000,
}
EMBEDDING = {
    "embedding_endpoint_type": "openai",
    "embedding_endpoint": "http://127.0.0.1:9/v1",
    "embedding_model": "mock-embedding",
    "embedding_dim": 1536,
    "embedding_chunk_size": 300,
}
#: Letta adds an agent's base tool rules by iterating over a set of names: a fixed seed fixes their order.
HASH_SEED = "0"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LettaServer:
    """``letta server`` in its own process group; ``mode`` None is stock Letta."""

    def __init__(self, uri: str, config_dir: str, mode: Optional[str], log: Path, extra_env: Optional[dict] = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.mode = mode
        self.log = log
        command = [str(BIN / "letta"), "server", "--host", "127.0.0.1", "--port", str(self.port)]
        if mode is not None:
            command = [str(BIN / "memprompt"), "run", "--mode", mode, "--", *command]
        # A server as users run it: pooled connections (the test process itself runs Letta without a pool).
        env = {k: v for k, v in os.environ.items() if k not in ("MEMPROMPT_LETTA", "LETTA_DISABLE_SQLALCHEMY_POOLING")}
        env.update(
            LETTA_PG_URI=uri,
            MEMGPT_CONFIG_PATH=os.path.join(config_dir, "config"),
            LETTA_UVICORN_WORKERS=str(WORKERS),
            PYTHONHASHSEED=HASH_SEED,
            PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
            **(extra_env or {}),
        )
        self._log_file = open(log, "wb")
        self.process = subprocess.Popen(
            command, env=env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait_ready(self, timeout: float = 240) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"letta server exited with {self.process.returncode}:\n{self.log.read_text()[-4000:]}"
                )
            try:
                if httpx.get(f"{self.url}/v1/health/", timeout=2).status_code == 200 and self._workers_ready():
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"letta server not ready after {timeout} s:\n{self.log.read_text()[-4000:]}")

    def _workers_ready(self) -> bool:
        return (
            len(self.worker_pids()) == WORKERS
            and self.log.read_text(errors="replace").count("Application startup complete") >= WORKERS
        )

    def worker_pids(self) -> set[int]:
        """The uvicorn worker processes: Python processes of this server's process group other than its parents."""
        group = os.getpgid(self.process.pid)
        pids = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            parent, pgrp = int(fields[1]), int(fields[2])
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            if pgrp == group and b"spawn_main" in cmdline and parent != 1:
                pids.add(int(entry.name))
        return pids

    def patched_pids(self) -> dict[int, str]:
        """pid -> mode of every process that logged memprompt's install line."""
        return {
            int(pid): mode
            for mode, pid in re.findall(
                r"memprompt: installed in mode (\w+) \(pid (\d+)\)", self.log.read_text(errors="replace")
            )
        }

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._log_file.close()

    def __enter__(self) -> "LettaServer":
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def client(server: LettaServer) -> Any:
    """letta-client on the server (no retries: a failed request fails the test)."""
    from letta_client import Letta

    return Letta(base_url=server.url, timeout=900, max_retries=0)


def conversation_agent(letta: Any, name: str, llm_url: str) -> Any:
    """A ``letta_v1_agent`` with a persona and a human, talking to the mock LLM at ``llm_url``; it compacts all."""
    return letta.agents.create(
        name=name,
        agent_type="letta_v1_agent",
        memory_blocks=[
            {"label": "persona", "value": "I am Sam, a helpful assistant."},
            {"label": "human", "value": "Name: Ada."},
        ],
        llm_config={
            "model": "mock",
            "model_endpoint_type": "openai",
            "model_endpoint": llm_url,
            "context_window": 32000,
        },
        embedding_config=EMBEDDING,
        include_base_tools=True,
        compaction_settings={"mode": "all"},
    )


def assert_every_worker_patched(server: LettaServer, mode: str) -> None:
    """Every uvicorn worker logged memprompt's install, in ``mode`` (the parent's line alone would not do)."""
    workers, patched = server.worker_pids(), server.patched_pids()
    assert len(workers) == WORKERS and workers <= set(patched), f"workers {sorted(workers)}, patched {patched}"
    assert set(patched.values()) == {mode}


def initialise_database() -> Any:
    """What every worker of a fresh server does at start (default org and user, base providers), done once first:
    two workers doing it at once on an empty database collide (Letta 0.16.8 fails one worker's startup)."""
    import asyncio

    from letta.server.server import SyncServer

    async def init() -> Any:
        server = SyncServer(init_with_default_org_and_user=False)
        await server.init_async(init_with_default_org_and_user=True)
        return server

    return asyncio.run(init())
