"""URI → pymongo ``Database``: a real MongoDB for ``mongodb://`` URIs, the embedded store otherwise.

Everything above this module uses the pymongo API only, so both modes share one code path.
"""

from __future__ import annotations

from typing import Any

import mongomock_ng
import pymongo
from pymongo.database import Database
from pymongo.errors import PyMongoError

from qdash.settings import DatabaseSettings


class DatabaseUnavailableError(RuntimeError):
    """The configured database cannot be reached; the message says what to check."""


def open_database(settings: DatabaseSettings) -> Database[dict[str, Any]]:
    """Return the database for ``settings``; a real server is pinged and fails within the timeout."""
    if settings.mongo_uri:
        client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
            settings.mongo_uri,
            tz_aware=True,
            serverSelectionTimeoutMS=settings.server_selection_timeout_ms,
            connectTimeoutMS=settings.server_selection_timeout_ms,
        )
        try:
            client.admin.command("ping")
        except PyMongoError as exc:
            client.close()
            raise DatabaseUnavailableError(
                f"cannot reach MongoDB at {_redact(settings.mongo_uri)} within "
                f"{settings.server_selection_timeout_ms} ms ({type(exc).__name__}); start the server "
                "(docker compose up -d mongo) or unset QDASH_MONGO_URI to use the embedded store"
            ) from None
        return client[settings.name]
    embedded: Any = mongomock_ng.MongoClient(tz_aware=True)
    database: Database[dict[str, Any]] = embedded[settings.name]
    return database


def _redact(uri: str) -> str:
    """Hide credentials in a URI before it reaches a message or a log."""
    scheme, _, rest = uri.partition("://")
    if "@" in rest:
        rest = "***@" + rest.split("@", 1)[1]
    return f"{scheme}://{rest}"
