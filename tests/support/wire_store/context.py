"""What a command handler gets (the store, the cursors, its connection) and checked access to its fields.

Handlers read only the fields they understand; a field whose meaning the embedded store cannot honour
(``collation``, ``let``, …) is refused by name with NotImplemented instead of being ignored, because
ignoring it would return a silently different answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from qdash.db.fixes import EmbeddedClient
from tests.support.wire_store.cursors import CursorRegistry
from tests.support.wire_store.errors import NOT_IMPLEMENTED, TYPE_MISMATCH, CommandError


@dataclass
class Context:
    client: EmbeddedClient
    cursors: CursorRegistry
    connection_id: int


# (context, database name, command document) → reply fields (``ok`` is added by the dispatcher)
Handler = Callable[[Context, str, dict[str, Any]], dict[str, Any]]


def name_field(command: Mapping[str, Any], field: str) -> str:
    """A collection name (non-empty string) held by ``field``."""
    value = command.get(field)
    if not isinstance(value, str) or not value:
        raise CommandError(TYPE_MISMATCH, f"'{field}' must be a collection name (a non-empty string)")
    return value


def collection(ctx: Context, db: str, command: Mapping[str, Any], field: str) -> Any:
    """The embedded collection named by ``command[field]``."""
    return ctx.client[db][name_field(command, field)]


def document(command: Mapping[str, Any], field: str) -> dict[str, Any] | None:
    """An optional sub-document (None when absent)."""
    value = command.get(field)
    if value is not None and not isinstance(value, dict):
        raise CommandError(TYPE_MISMATCH, f"'{field}' must be a document, not {type(value).__name__}")
    return value


def documents(command: Mapping[str, Any], field: str) -> list[dict[str, Any]]:
    """A required, non-empty array of documents."""
    value = command.get(field)
    if not isinstance(value, list) or not value or not all(isinstance(item, dict) for item in value):
        raise CommandError(TYPE_MISMATCH, f"'{field}' must be a non-empty array of documents")
    return value


def count(command: Mapping[str, Any], field: str) -> int:
    """A non-negative integer (0 when absent)."""
    value = command.get(field, 0)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CommandError(TYPE_MISMATCH, f"'{field}' must be a non-negative integer, not {value!r}")
    return value


def sort_spec(command: Mapping[str, Any], field: str = "sort") -> list[tuple[str, Any]] | None:
    """A sort document as the (key, direction) pairs the embedded store takes."""
    value = document(command, field)
    return list(value.items()) if value else None


def reject(command: Mapping[str, Any], *fields: str) -> None:
    """Refuse fields the embedded store cannot honour rather than answer as if they were absent."""
    for field in fields:
        if command.get(field) not in (None, {}, []):
            raise CommandError(NOT_IMPLEMENTED, f"'{field}' is not supported by the embedded store")


def namespace(db: str, name: str) -> str:
    return f"{db}.{name}"
