"""A real Letta 0.16.8 server (SyncServer and its managers) on a throwaway PostgreSQL with pgvector.

Letta fixes its database settings when its modules load, so nothing here imports Letta at
module level: the session fixture starts PostgreSQL and points Letta at it first.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from datetime import datetime, timezone

import pytest
import pytest_asyncio

# find_spec, not importorskip: importing Letta now would fix its database settings to SQLite.
if importlib.util.find_spec("pgserver") is None or importlib.util.find_spec("letta") is None:
    pytest.skip("the Letta server tests run in the letta-server venv (make test-letta-server)", allow_module_level=True)

import pgenv  # noqa: E402  (this directory is on sys.path: rootdir-less conftest)

#: The time every rebuild is stamped with, so that stock and memprompt outputs compare byte for byte.
FROZEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture(scope="session")
def postgres():
    if "letta" in sys.modules:
        pytest.fail("Letta was imported before its database was configured")
    # Letta writes its config file at start: keep it out of the user's ~/.letta.
    config_dir = tempfile.mkdtemp(prefix="mp-letta-")
    os.environ["MEMGPT_CONFIG_PATH"] = os.path.join(config_dir, "config")
    server, uri, pgdata = pgenv.start_postgres()
    try:
        pgenv.create_letta_schema(uri)
        yield uri
    finally:
        pgenv.stop_postgres(server, pgdata)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def server(postgres):
    from letta.server.server import SyncServer

    # Not SyncServer.init_async: it syncs provider models over the network. Only its org and user.
    server = SyncServer(init_with_default_org_and_user=False)
    server.default_org = await server.organization_manager.create_default_organization_async()
    server.default_user = await server.user_manager.create_default_actor_async()
    return server


@pytest.fixture(scope="session")
def actor(server):
    return server.default_user


@pytest.fixture
def frozen_time(monkeypatch):
    import letta.agents.letta_agent_v2 as v2
    import letta.services.agent_manager as am

    monkeypatch.setattr(am, "get_utc_time", lambda: FROZEN)
    monkeypatch.setattr(v2, "get_utc_time", lambda: FROZEN)
    return FROZEN
