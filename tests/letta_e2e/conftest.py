"""End-to-end: a real ``letta server`` 0.16.8 (uvicorn, 2 workers) on a throwaway PostgreSQL, over HTTP.

Nothing here imports Letta at module level: the session fixture starts PostgreSQL and points Letta at it first.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import pytest

if importlib.util.find_spec("pgserver") is None or importlib.util.find_spec("letta_client") is None:
    pytest.skip("the end-to-end tests run in the letta-server venv (make test-letta-server)", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "letta_server"))
import pgenv  # noqa: E402


@pytest.fixture(scope="session")
def database():
    """(URI, config dir, an in-process SyncServer on the same database for stock dry runs)."""
    from letta_process import initialise_database

    config_dir = tempfile.mkdtemp(prefix="mp-letta-e2e-")
    os.environ["MEMGPT_CONFIG_PATH"] = os.path.join(config_dir, "config")
    server, uri, pgdata = pgenv.start_postgres()
    try:
        pgenv.create_letta_schema(uri)
        yield uri, config_dir, initialise_database()
    finally:
        pgenv.stop_postgres(server, pgdata)
