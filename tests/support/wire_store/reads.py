"""Read commands: find, aggregate, count, distinct and the listings, run on the embedded collections.

Each maps onto the embedded collection's pymongo-style method with the same arguments the driver
would have passed in process, so an answer over the wire equals the in-process answer; results that
come back as cursors are handed to the ``CursorRegistry``.
"""

from __future__ import annotations

from typing import Any

from mongomock_ng.filtering import filter_applies

from tests.support.wire_store.context import (
    Context,
    Handler,
    collection,
    count,
    document,
    name_field,
    namespace,
    reject,
    sort_spec,
)
from tests.support.wire_store.errors import NAMESPACE_NOT_FOUND, NOT_IMPLEMENTED, TYPE_MISMATCH, CommandError

_UNSUPPORTED_FIND = ("collation", "let", "tailable", "awaitData", "min", "max", "returnKey", "showRecordId")


def find(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    reject(command, *_UNSUPPORTED_FIND)
    coll = collection(ctx, db, command, "find")
    cursor = coll.find(
        document(command, "filter") or {},
        projection=document(command, "projection"),
        sort=sort_spec(command),
        skip=count(command, "skip"),
        limit=count(command, "limit"),
    )
    return {
        "cursor": ctx.cursors.open(
            namespace(db, coll.name),
            list(cursor),
            command.get("batchSize"),
            single_batch=bool(command.get("singleBatch")),
        )
    }


def aggregate(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    reject(command, "collation", "let", "explain")
    if not isinstance(command.get("aggregate"), str):
        raise CommandError(
            NOT_IMPLEMENTED,
            "database-level aggregate is not supported by the embedded store; aggregate a collection",
        )
    pipeline = command.get("pipeline")
    if not isinstance(pipeline, list):
        raise CommandError(TYPE_MISMATCH, "'pipeline' must be an array of stages")
    options = document(command, "cursor")
    if options is None:
        raise CommandError(TYPE_MISMATCH, "the 'cursor' option is required")
    coll = collection(ctx, db, command, "aggregate")
    results = list(coll.aggregate(pipeline))
    return {"cursor": ctx.cursors.open(namespace(db, coll.name), results, options.get("batchSize"))}


def count_command(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    reject(command, "collation")
    coll = collection(ctx, db, command, "count")
    limit = command.get("limit", 0)
    options: dict[str, int] = {"skip": count(command, "skip")}
    if isinstance(limit, int) and not isinstance(limit, bool) and limit != 0:
        options["limit"] = abs(limit)  # MongoDB counts with |limit|; 0 means no limit
    return {"n": coll.count_documents(document(command, "query") or {}, **options)}


def distinct(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    reject(command, "collation")
    key = command.get("key")
    if not isinstance(key, str) or not key:
        raise CommandError(TYPE_MISMATCH, "'key' must be a field name")
    coll = collection(ctx, db, command, "distinct")
    return {"values": coll.distinct(key, document(command, "query"))}


def list_collections(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    database = ctx.client[db]
    name_only = bool(command.get("nameOnly"))
    found = []
    for name in database.list_collection_names():
        entry: dict[str, Any] = {"name": name, "type": "collection"}
        if not name_only:
            entry.update(options=database[name].options(), info={"readOnly": False})
        found.append(entry)
    return _listing(ctx, f"{db}.$cmd.listCollections", found, command)


def list_indexes(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    name = name_field(command, "listIndexes")
    if name not in ctx.client[db].list_collection_names():
        raise CommandError(NAMESPACE_NOT_FOUND, f"ns does not exist: {namespace(db, name)}")
    indexes = list(ctx.client[db][name].list_indexes())
    return _listing(ctx, namespace(db, name), indexes, {"cursor": command.get("cursor")})


def list_databases(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    names = ctx.client.list_database_names()
    if command.get("nameOnly"):
        found: list[dict[str, Any]] = [{"name": name} for name in names]
    else:
        found = [{"name": name, "sizeOnDisk": 0, "empty": False} for name in names]
    return {"databases": _matching(found, command), "totalSize": 0}


def _matching(entries: list[dict[str, Any]], command: dict[str, Any]) -> list[dict[str, Any]]:
    wanted = document(command, "filter")
    return [entry for entry in entries if filter_applies(wanted, entry)] if wanted else entries


def _listing(ctx: Context, ns: str, entries: list[dict[str, Any]], command: dict[str, Any]) -> dict[str, Any]:
    options = document(command, "cursor") or {}
    return {"cursor": ctx.cursors.open(ns, _matching(entries, command), options.get("batchSize"))}


HANDLERS: dict[str, Handler] = {
    "find": find,
    "aggregate": aggregate,
    "count": count_command,
    "distinct": distinct,
    "listCollections": list_collections,
    "listIndexes": list_indexes,
    "listDatabases": list_databases,
}
