"""A wire server in a thread on a free loopback port, over a persistent embedded store in tmp_path,
and a real pymongo client connected to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pymongo import MongoClient

from qdash.db import open_database
from qdash.settings import DatabaseSettings
from tests.support.wire_store import WireServer

StartServer = Callable[..., WireServer]


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    """Start a server on ``tmp_path/data`` (call again after ``close()`` to restart on the same files)."""
    servers: list[WireServer] = []

    def start(**options: Any) -> WireServer:
        settings = DatabaseSettings(name="wire_test", data_dir=tmp_path / "data")
        server = WireServer("127.0.0.1", 0, **options)
        server.start(open_database(settings))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def server(start_server: StartServer) -> WireServer:
    return start_server()


@pytest.fixture
def client(server: WireServer) -> Iterator[MongoClient[dict[str, Any]]]:
    connected: MongoClient[dict[str, Any]] = MongoClient(
        server.uri, tz_aware=True, serverSelectionTimeoutMS=3000
    )
    yield connected
    connected.close()
