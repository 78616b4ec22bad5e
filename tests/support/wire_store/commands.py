"""Command dispatch: one command document in, one reply document out, never an exception.

Besides the read, write and DDL commands this answers what the driver sends on its own: the
handshake (``hello``/``isMaster``), ``ping``, ``buildInfo``, ``getMore``, ``killCursors`` and
``endSessions``. The handshake advertises a standalone MongoDB 7.0 (maxWireVersion 21, so pymongo never
uses 8.0's ``bulkWrite`` command) and no ``logicalSessionTimeoutMinutes``: without it pymongo sends no
session ids and does no retryable writes, which this server does not implement.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from qdash.logging import get_logger
from tests.support.wire_store import ddl, reads, writes
from tests.support.wire_store.context import Context, Handler
from tests.support.wire_store.errors import (
    COMMAND_NOT_FOUND,
    INTERNAL_ERROR,
    TYPE_MISMATCH,
    CommandError,
    describe,
    error_reply,
)
from tests.support.wire_store.protocol import MAX_BSON_OBJECT_SIZE, MAX_MESSAGE_SIZE

log = get_logger(__name__)

MAX_WIRE_VERSION = 21  # MongoDB 7.0
MAX_WRITE_BATCH_SIZE = 100_000
VERSION = "7.0.0"


def run_command(ctx: Context, command: dict[str, Any]) -> dict[str, Any]:
    """The reply to ``command`` (a decoded request body with ``$db``), ``ok: 1`` or MongoDB's error."""
    name = next(iter(command), "")
    try:
        handler = HANDLERS.get(name)
        if handler is None:
            raise CommandError(COMMAND_NOT_FOUND, f"no such command: '{name}'")
        db = command.get("$db")
        if not isinstance(db, str) or not db:
            raise CommandError(TYPE_MISMATCH, "the command has no '$db' (database name)")
        reply = handler(ctx, db, command)
    except Exception as exc:
        if describe(exc)[0] == INTERNAL_ERROR:
            log.warning("command failed inside the embedded store", command=name, exc_info=True)
        return error_reply(exc)
    reply["ok"] = 1.0
    return reply


def hello(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    primary = "isWritablePrimary" if "hello" in command else "ismaster"
    return {
        primary: True,
        "helloOk": True,
        "maxBsonObjectSize": MAX_BSON_OBJECT_SIZE,
        "maxMessageSizeBytes": MAX_MESSAGE_SIZE,
        "maxWriteBatchSize": MAX_WRITE_BATCH_SIZE,
        "localTime": datetime.now(UTC),
        "connectionId": ctx.connection_id,
        "minWireVersion": 0,
        "maxWireVersion": MAX_WIRE_VERSION,
        "readOnly": False,
    }


def build_info(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    return {
        "version": VERSION,
        "versionArray": [7, 0, 0, 0],
        "gitVersion": "qdash-embedded",
        "bits": 64,
        "maxBsonObjectSize": MAX_BSON_OBJECT_SIZE,
        "storageEngines": ["qdash-embedded"],
    }


def get_more(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    return {"cursor": ctx.cursors.get_more(command.get("getMore"), command.get("batchSize"))}


def kill_cursors(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    cursor_ids = command.get("cursors")
    if not isinstance(cursor_ids, list):
        raise CommandError(TYPE_MISMATCH, "'cursors' must be an array of cursor ids")
    return ctx.cursors.kill(cursor_ids)


def nothing(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    """``ping`` and ``endSessions``: nothing to do but answer."""
    return {}


HANDLERS: dict[str, Handler] = {
    "hello": hello,
    "isMaster": hello,
    "ismaster": hello,
    "ping": nothing,
    "endSessions": nothing,
    "buildInfo": build_info,
    "buildinfo": build_info,
    "getMore": get_more,
    "killCursors": kill_cursors,
    **reads.HANDLERS,
    **writes.HANDLERS,
    **ddl.HANDLERS,
}
