"""A throwaway PostgreSQL with pgvector for Letta's server, and Letta's schema in it.

Used by conftest.py, and runnable alone to check the setup::

    python tests/letta_server/pgenv.py     # starts, creates the schema, prints the URI, stops

The steps Letta 0.16.8 needs, found here (the wheel ships no migrations):

1. PostgreSQL with pgvector: ``pgserver`` (PyPI) bundles both. Run as root it starts
   postgres as a system user ``pgserver`` (created with useradd), listening on a unix
   socket only, in a fresh data directory.
2. A ``root`` role when the process runs as root: Letta rewrites the URI
   (letta.database_utils.build_database_uri drops the user of ``postgres:@`` URIs that
   have no host), so asyncpg connects as the OS user.
3. ``CREATE EXTENSION vector`` before the tables (passages have vector columns).
4. ``letta.orm.base.Base.metadata.create_all`` for the tables.
5. Server-side defaults that Letta's alembic migrations add and the ORM only declares
   as FetchedValue: a sequence behind ``messages.sequence_id``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any


def start_postgres() -> tuple[Any, str, Path]:
    """Start PostgreSQL in a fresh data directory: (server handle, URI for Letta, data directory)."""
    import pgserver

    # Short path: the unix socket lives in it and socket paths are limited to 107 bytes.
    pgdata = Path(tempfile.mkdtemp(prefix="mp-pg-", dir="/tmp"))
    server = pgserver.get_server(pgdata, cleanup_mode="delete")
    if os.geteuid() == 0:
        server.psql("DO $$ BEGIN CREATE ROLE root SUPERUSER LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;")
    server.psql("CREATE DATABASE letta;")
    socket_dir = server.get_postmaster_info().socket_dir
    # User and a dummy password, so Letta's URI rewriting keeps the user; the socket via ?host=.
    uri = f"postgresql://postgres:postgres@localhost/letta?host={socket_dir}"
    configure_letta(uri)
    return server, uri, pgdata


def configure_letta(uri: str) -> None:
    """Point Letta at the database. Before Letta is imported: its settings, engine and column types
    (pgvector's Vector, else a BINARY for SQLite) are fixed when its modules load."""
    os.environ["LETTA_PG_URI"] = uri
    # NullPool: no pooled asyncpg connection outlives the event loop that opened it, and no ssl=require.
    os.environ["LETTA_DISABLE_SQLALCHEMY_POOLING"] = "true"


def stop_postgres(server: Any, pgdata: Path) -> None:
    try:
        server.cleanup()
    finally:
        shutil.rmtree(pgdata, ignore_errors=True)


def create_letta_schema(uri: str) -> None:
    """Letta's tables and the server-side defaults its migrations would add."""
    import letta.orm  # noqa: F401  (registers every table on Base.metadata)
    from letta.orm.base import Base
    from sqlalchemy import create_engine, text

    engine = create_engine(uri.replace("postgresql://", "postgresql+psycopg2://", 1))
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
        Base.metadata.create_all(engine)
        with engine.begin() as conn:
            for statement in SERVER_DEFAULTS:
                conn.execute(text(statement))
    finally:
        engine.dispose()


#: What Letta's migrations add beyond the ORM's own DDL.
SERVER_DEFAULTS = [
    "CREATE SEQUENCE IF NOT EXISTS message_sequence_id_seq OWNED BY messages.sequence_id",
    "ALTER TABLE messages ALTER COLUMN sequence_id SET DEFAULT nextval('message_sequence_id_seq')",
]


if __name__ == "__main__":
    server, uri, pgdata = start_postgres()
    try:
        print(uri)
        create_letta_schema(uri)
        print(server.psql("\\dt").count("\n"), "lines of \\dt")
    finally:
        stop_postgres(server, pgdata)
