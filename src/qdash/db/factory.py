"""URI → pymongo ``Database``: a real MongoDB for ``mongodb://`` URIs, the embedded store otherwise.

Everything above this module uses the pymongo API only, so both modes share one code path; the
embedded store's fixes, journal and lock are assembled here and nowhere else.

Modes:
- ``mongodb://`` / ``mongodb+srv://``: ``pymongo.MongoClient``, pinged at open so a wrong URI fails at
  start-up within ``server_selection_timeout_ms`` instead of inside the first request;
- embedded, ``embedded_persist: true`` (default): mongomock-ng + fixes, journaled to
  ``<data_dir>/embedded.sqlite3``, owned by one process through ``<data_dir>/embedded.lock``;
- embedded, ``embedded_persist: false``: the same store in memory only (tests, throw-away demos).
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any, Literal

import pymongo
from pymongo.database import Database
from pymongo.errors import PyMongoError

from qdash.db.errors import DatabaseUnavailableError
from qdash.db.fixes import EmbeddedClient
from qdash.db.journal import Journal
from qdash.db.lock import DataDirLock
from qdash.db.store import EmbeddedServerStore
from qdash.logging import get_logger
from qdash.settings import DatabaseSettings

log = get_logger(__name__)

DatabaseMode = Literal["embedded", "mongodb"]


def open_database(settings: DatabaseSettings) -> Database[dict[str, Any]]:
    """Return the database for ``settings``; blocking (run it off the event loop)."""
    if settings.mongo_uri:
        return _open_server(settings, settings.mongo_uri)
    return _open_embedded(settings)


def not_created(settings: DatabaseSettings) -> str | None:
    """Why there is no database to read yet (an embedded store whose file does not exist), else ``None``.

    Read-only commands (``doctor``, ``db check``, the listings: ``route.read_only``) ask first:
    opening the embedded store creates its data directory, and a command that only looks must leave
    the working directory as it found it.
    """
    if settings.mongo_uri or not settings.embedded_persist:
        return None
    if (settings.data_dir / Journal.FILE_NAME).exists():
        return None
    return (
        f"no embedded database in {settings.data_dir} yet; `qdash serve` creates it and seeds the demo lab "
        "(or run `qdash demo seed`), or set QDASH_MONGO_URI to a lab's MongoDB"
    )


def database_mode(db: Database[Any]) -> DatabaseMode:
    """Which kind of store ``db`` is (for /health, doctor and logs)."""
    return "embedded" if isinstance(db.client, EmbeddedClient) else "mongodb"


def close_database(db: Database[Any]) -> None:
    """Close the client: for the embedded store this flushes nothing (writes are already journaled)
    but closes the SQLite file and releases the data-directory lock."""
    db.client.close()


def ping(db: Database[Any]) -> None:
    """Raise ``DatabaseUnavailableError`` when the database does not answer (blocking)."""
    try:
        if database_mode(db) == "embedded":
            # No server to ask: a closed client raises, an open one can list its collections.
            db.client.server_info()
            db.list_collection_names()
        else:
            db.client.admin.command("ping")
    except (PyMongoError, sqlite3.Error) as exc:
        raise DatabaseUnavailableError(f"database ping failed: {type(exc).__name__}: {exc}") from None


def preflight(settings: DatabaseSettings) -> None:
    """Fail early, with the clear message, when ``open_database`` would fail at start-up.

    For the embedded store this only tries the lock (and lets it go), so a server launched right
    after can take it; for MongoDB it pings. Blocking.
    """
    if settings.mongo_uri:
        close_database(_open_server(settings, settings.mongo_uri))
    elif settings.embedded_persist:
        DataDirLock(settings.data_dir).release()


def _open_server(settings: DatabaseSettings, uri: str) -> Database[dict[str, Any]]:
    timeout = settings.server_selection_timeout_ms
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
        uri,
        tz_aware=True,
        serverSelectionTimeoutMS=timeout,
        connectTimeoutMS=timeout,
        socketTimeoutMS=max(timeout, 30_000),
    )
    try:
        client.admin.command("ping")
    except PyMongoError as exc:
        client.close()
        raise DatabaseUnavailableError(
            f"cannot reach MongoDB at {redact_uri(uri)} within {timeout} ms ({type(exc).__name__}); "
            "start the server (docker compose up -d mongo), check the host and port in QDASH_MONGO_URI, "
            "or unset QDASH_MONGO_URI to use the embedded store"
        ) from None
    return client[settings.name]


def _open_embedded(settings: DatabaseSettings) -> Database[dict[str, Any]]:
    warn_at = settings.embedded_warn_documents
    if not settings.embedded_persist:
        return EmbeddedClient(EmbeddedServerStore(None, warn_at))[settings.name]  # type: ignore[no-any-return]
    started = time.perf_counter()
    lock = DataDirLock(settings.data_dir)
    try:
        journal = Journal(settings.data_dir)
    except sqlite3.Error as exc:
        lock.release()
        raise DatabaseUnavailableError(
            f"cannot open the embedded database in {settings.data_dir} ({exc}); check that the "
            "directory is writable and the file is not corrupt, or set database.data_dir elsewhere"
        ) from None
    try:
        store = EmbeddedServerStore(journal, warn_at)
        count = store.load()
    except Exception as exc:
        journal.close()
        lock.release()
        raise DatabaseUnavailableError(
            f"cannot load the embedded database {journal.path} ({type(exc).__name__}: {exc}); move the "
            "file aside to start empty, or set database.data_dir elsewhere"
        ) from None

    def _close() -> None:
        journal.close()
        lock.release()

    log.info(
        "embedded database opened",
        path=str(journal.path),
        documents=count,
        load_s=round(time.perf_counter() - started, 3),
    )
    return EmbeddedClient(store, on_close=_close)[settings.name]  # type: ignore[no-any-return]


def redact_uri(uri: str) -> str:
    """Hide credentials in a URI before it reaches a message or a log."""
    scheme, _, rest = uri.partition("://")
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    return f"{scheme}://{rest}"
