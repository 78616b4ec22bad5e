"""The dispatcher: handshake and server commands pymongo sends on its own, unknown commands."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo import MongoClient
from pymongo.errors import OperationFailure

from qdash.db import open_database
from qdash.settings import DatabaseSettings
from tests.support.wire_store.commands import run_command
from tests.support.wire_store.context import Context
from tests.support.wire_store.cursors import CursorRegistry

Client = MongoClient[dict[str, Any]]


def test_handshake_advertises_a_standalone_mongodb_7_without_sessions(client: Client) -> None:
    hello = client.admin.command("hello")
    assert hello["isWritablePrimary"] is True and hello["maxWireVersion"] == 21
    assert "logicalSessionTimeoutMinutes" not in hello and "setName" not in hello
    assert client.server_info()["versionArray"][:2] == [7, 0]
    assert client.admin.command("ping")["ok"] == 1.0


def test_unknown_command_is_command_not_found(client: Client) -> None:
    with pytest.raises(OperationFailure, match="no such command: 'frobnicate'") as err:
        client.db.command("frobnicate")
    assert err.value.code == 59


def test_a_command_without_a_database_is_refused() -> None:
    db = open_database(DatabaseSettings(embedded_persist=False))
    ctx = Context(db.client, CursorRegistry(), 1)  # type: ignore[arg-type]
    assert run_command(ctx, {"ping": 1})["code"] == 14
    assert run_command(ctx, {})["code"] == 59
