"""Lifecycle: loopback-only binding, a restart keeps the data, close releases the data-directory lock
and ends open connections, idle cursors are reaped while serving."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest
from pymongo import MongoClient

from qdash.db import DatabaseInUseError, open_database
from qdash.db.lock import DataDirLock
from qdash.settings import DatabaseSettings
from tests.support.wire_store import BindRefusedError, WireServer
from tests.testing.wire_store.conftest import StartServer


@pytest.mark.parametrize("host", ["0.0.0.0", "no-such-host.invalid"])
def test_non_loopback_and_unresolvable_hosts_are_refused(host: str) -> None:
    with pytest.raises(BindRefusedError):
        WireServer(host, 0)


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback (::1) on this machine")
def test_ipv6_loopback_uri() -> None:
    server = WireServer("::1", 0)
    assert server.uri.startswith("mongodb://[::1]:")
    server.close()


def test_restart_keeps_data_and_close_releases_the_lock(start_server: StartServer, tmp_path: Path) -> None:
    server = start_server()
    client: MongoClient[dict[str, Any]] = MongoClient(server.uri, serverSelectionTimeoutMS=2000)
    client.db.c.insert_one({"_id": "kept"})
    with pytest.raises(DatabaseInUseError):
        DataDirLock(tmp_path / "data")
    server.close()  # with the client still connected
    client.close()
    DataDirLock(tmp_path / "data").release()
    with MongoClient(start_server().uri) as again:
        assert again.db.c.find_one() == {"_id": "kept"}


def test_only_an_embedded_store_can_be_served() -> None:
    server = WireServer("127.0.0.1", 0)
    try:
        with pytest.raises(TypeError, match="embedded"):
            server.start(MongoClient("mongodb://127.0.0.1:1", connect=False)["x"])
    finally:
        server.close()


def test_idle_cursors_are_reaped_while_serving() -> None:
    server = WireServer("127.0.0.1", 0, cursor_timeout_s=0.2)
    server.start(open_database(DatabaseSettings(embedded_persist=False)))
    try:
        with MongoClient(server.uri) as client:
            client.db.c.insert_many([{"_id": i} for i in range(10)])
            cursor = client.db.c.find(batch_size=2)
            next(cursor)
            assert len(server.cursors) == 1
            deadline = time.monotonic() + 5
            while len(server.cursors) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert len(server.cursors) == 0
    finally:
        server.close()
