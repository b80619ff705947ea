"""Where memprompt records what each message[0] was built from: a table of its own in Letta's database.

A row says: the message ``message_id`` whose text has fingerprint ``text_fingerprint`` was built from the
template and memory section of ``stamp``. Keyed by both, so two workers recording the same message at once
each keep their row (neither fails, neither is lost); a row whose text fingerprint no longer matches the
stored text says nothing. Rows of a message older than ``KEEP`` are pruned by the next record of it.

The table is created when memprompt is installed, never by a request. Every failure of the store (the
database unreachable, the table dropped, an error) is logged once and answered with "no stamp": the
decision then parses the message exactly, and the request goes on as stock Letta would serve it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Optional

from .. import _core
from ..rebuild import PromptStamp

TABLE = "memprompt_system_stamps"
#: How long an older row of a message survives a newer record (long enough for any concurrent rebuild).
KEEP = "10 minutes"

logger = logging.getLogger("memprompt.letta")
_warned: set[str] = set()

CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (message_id VARCHAR NOT NULL, text_fingerprint VARCHAR NOT NULL, "
    "stamp VARCHAR NOT NULL, recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(), "
    "PRIMARY KEY (message_id, text_fingerprint))"
)
# One statement per record: prune the message's old rows, add this one (an identical row is already there).
RECORD = (
    f"WITH pruned AS (DELETE FROM {TABLE} WHERE message_id = :id AND text_fingerprint <> :fp "
    f"AND recorded_at < now() - interval '{KEEP}') "
    f"INSERT INTO {TABLE} (message_id, text_fingerprint, stamp) VALUES (:id, :fp, :stamp) "
    "ON CONFLICT (message_id, text_fingerprint) DO NOTHING"
)
LOAD = f"SELECT message_id, text_fingerprint, stamp FROM {TABLE} WHERE message_id = ANY(:ids)"


@dataclass(frozen=True)
class Record:
    """What one built message[0] holds: its id, its whole text, and the stamp of its template and memory."""

    message_id: str
    text: str
    stamp: PromptStamp


def text_key(text: str) -> str:
    return f"{_core.fingerprint(text):032x}"


def warn_once(kind: str, exc: BaseException, fallback: str = "decisions fall back to the exact parse") -> None:
    if kind not in _warned:
        _warned.add(kind)
        logger.warning("memprompt stamp store %s failed (%s): %r", kind, fallback, exc)


def create_table(uri: Optional[str], *others: str) -> bool:
    """Create the table (and the ``others``' CREATE statements) in Letta's PostgreSQL (``uri``), serialised
    across workers by an advisory lock."""
    if not uri or not uri.startswith("postgresql"):
        return False
    try:
        from sqlalchemy import create_engine, text

        engine = create_engine(_sync_uri(uri), poolclass=_null_pool())
        try:
            with engine.begin() as connection:
                # Two workers starting at once: CREATE TABLE IF NOT EXISTS alone can still collide.
                connection.execute(text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": TABLE})
                for create in (CREATE, *others):
                    connection.execute(text(create))
        finally:
            engine.dispose()
        return True
    except Exception as exc:
        warn_once("setup", exc)
        return False


async def record(records: Iterable[Record]) -> None:
    """Record the stamps of messages just written: one statement (an executemany), in its own transaction."""
    rows = [{"id": r.message_id, "fp": text_key(r.text), "stamp": str(r.stamp)} for r in records]
    if not rows:
        return
    try:
        from letta.server.db import db_registry
        from sqlalchemy import text

        async with db_registry.async_session() as session:
            await session.execute(text(RECORD), rows)
            await session.commit()
    except Exception as exc:
        warn_once("write", exc)


async def load(messages: dict[str, str]) -> dict[str, PromptStamp]:
    """The recorded stamps of these messages (id -> current text), for the texts they hold now; one statement."""
    if not messages:
        return {}
    try:
        from letta.server.db import db_registry
        from sqlalchemy import text

        async with db_registry.async_session() as session:
            rows = (await session.execute(text(LOAD), {"ids": list(messages)})).all()
    except Exception as exc:
        warn_once("read", exc)
        return {}
    wanted = {message_id: text_key(text) for message_id, text in messages.items()}
    found: dict[str, PromptStamp] = {}
    for message_id, fingerprint, stamp in rows:
        if wanted.get(message_id) == fingerprint:
            try:
                found[message_id] = PromptStamp.parse(stamp)
            except ValueError as exc:
                warn_once("read", exc)
    return found


def _sync_uri(uri: str) -> str:
    # Letta's URI is for asyncpg or psycopg2; a short sync connection with psycopg2 (Letta's postgres extra).
    for prefix in ("postgresql+asyncpg://", "postgresql+pg8000://", "postgresql://"):
        if uri.startswith(prefix):
            return "postgresql+psycopg2://" + uri[len(prefix) :]
    return uri


def _null_pool() -> Any:
    from sqlalchemy.pool import NullPool

    return NullPool
