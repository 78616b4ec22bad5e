"""``open_database``: mode selection, the unreachable-server error, ping."""

from __future__ import annotations

import os
import socket
import time
from typing import Any

import pytest
from pymongo.database import Database

from qdash.db import DatabaseUnavailableError, database_mode, open_database, ping, redact_uri
from qdash.db.factory import close_database
from qdash.settings import DatabaseSettings


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens here any more


def test_unreachable_server_fails_fast_with_the_fix() -> None:
    port = _closed_port()
    settings = DatabaseSettings(
        mongo_uri=f"mongodb://admin:hunter2@127.0.0.1:{port}/?directConnection=true",
        server_selection_timeout_ms=800,
    )
    started = time.monotonic()
    with pytest.raises(DatabaseUnavailableError) as err:
        open_database(settings)
    assert time.monotonic() - started < 5
    message = str(err.value)
    assert f"127.0.0.1:{port}" in message
    assert "docker compose up -d mongo" in message and "unset QDASH_MONGO_URI" in message
    assert "hunter2" not in message


def test_default_timeout_is_about_five_seconds() -> None:
    assert DatabaseSettings().server_selection_timeout_ms == 5000


def test_embedded_in_memory_mode_and_ping(settings: Any) -> None:
    db = open_database(settings.database.model_copy(update={"embedded_persist": False}))
    assert database_mode(db) == "embedded"
    ping(db)
    close_database(db)
    with pytest.raises(DatabaseUnavailableError, match="ping failed"):
        ping(db)


def test_mode_of_a_real_client_is_mongodb(mongo_db: Database[dict[str, Any]]) -> None:
    import pymongo

    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
        "mongodb://127.0.0.1:1", connect=False, serverSelectionTimeoutMS=100
    )
    assert database_mode(client["x"]) == "mongodb"
    client.close()


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("mongodb://u:p@h:1/db", "mongodb://***@h:1/db"),
        ("mongodb+srv://h/db", "mongodb+srv://h/db"),
        ("mongodb://u:p@ss@h", "mongodb://***@h"),
    ],
)
def test_redact_uri(uri: str, expected: str) -> None:
    assert redact_uri(uri) == expected


REAL_MONGO_URI = os.environ.get("QDASH_TEST_MONGO_URI")


@pytest.mark.mongodb
@pytest.mark.skipif(not REAL_MONGO_URI, reason="needs a real MongoDB: set QDASH_TEST_MONGO_URI=mongodb://…")
def test_real_server_opens_pings_and_reports_its_mode() -> None:
    assert REAL_MONGO_URI is not None
    db = open_database(DatabaseSettings(mongo_uri=REAL_MONGO_URI, name="qdash_test_factory"))
    try:
        assert database_mode(db) == "mongodb"
        ping(db)
        db["c"].insert_one({"project_id": "p"})
        assert db["c"].count_documents({"project_id": "p"}) == 1
    finally:
        db.client.drop_database("qdash_test_factory")
        close_database(db)
