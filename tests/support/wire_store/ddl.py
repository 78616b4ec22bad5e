"""Collection, database and index commands, run on the embedded store.

Index and collection changes go through the store's own ``create_index``/``drop_index``/``drop``,
which the journal records, so they survive a restart like documents do. (Dropping all indexes drops
them one by one: the library's ``drop_indexes`` replaces the index table directly, which the journal
would not see.)
"""

from __future__ import annotations

from typing import Any

from pymongo.errors import CollectionInvalid, OperationFailure

from tests.support.wire_store.context import Context, Handler, collection, documents, name_field, namespace
from tests.support.wire_store.errors import (
    BAD_VALUE,
    INDEX_NOT_FOUND,
    INDEX_OPTIONS_CONFLICT,
    NAMESPACE_EXISTS,
    NAMESPACE_NOT_FOUND,
    NOT_IMPLEMENTED,
    TYPE_MISMATCH,
    CommandError,
)

_INDEX_OPTIONS = {"unique", "sparse", "expireAfterSeconds", "partialFilterExpression"}
_IGNORED_INDEX_FIELDS = {"key", "name", "v", "background", "ns"}  # no effect on an in-memory index
_COMMAND_FIELDS = {"lsid", "writeConcern", "comment", "maxTimeMS", "txnNumber"}
# the library's codes for renameCollection → MongoDB's
_RENAME_CODES = {10026: NAMESPACE_NOT_FOUND, 10027: NAMESPACE_EXISTS}


def create(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    name = name_field(command, "create")
    options = {
        k: v
        for k, v in command.items()
        if k != "create" and not k.startswith("$") and k not in _COMMAND_FIELDS
    }
    try:
        ctx.client[db].create_collection(name, **options)
    except CollectionInvalid:
        raise CommandError(NAMESPACE_EXISTS, f"Collection {namespace(db, name)} already exists.") from None
    return {}


def drop(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    coll = collection(ctx, db, command, "drop")
    indexes = len(coll.index_information())  # 0 when the collection does not exist (MongoDB 7: not an error)
    ctx.client[db].drop_collection(coll.name)
    return {"ns": namespace(db, coll.name), "nIndexesWas": indexes}


def drop_database(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    ctx.client.drop_database(db)
    return {"dropped": db}


def create_indexes(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    coll = collection(ctx, db, command, "createIndexes")
    created_collection = coll.name not in ctx.client[db].list_collection_names()
    before = len(coll.index_information()) or 1  # a new collection starts with its _id index
    for spec in documents(command, "indexes"):
        key, name = spec.get("key"), spec.get("name")
        if not isinstance(key, dict) or not key or not isinstance(name, str) or not name:
            raise CommandError(TYPE_MISMATCH, "each index needs a non-empty 'key' document and a 'name'")
        unknown = sorted(set(spec) - _INDEX_OPTIONS - _IGNORED_INDEX_FIELDS)
        if unknown:
            raise CommandError(
                NOT_IMPLEMENTED, f"index option {unknown[0]!r} is not supported by the embedded store"
            )
        options = {k: spec[k] for k in _INDEX_OPTIONS if k in spec}
        try:
            coll.create_index(list(key.items()), name=name, **options)
        except OperationFailure as exc:
            if exc.code is None and "different options" in str(exc):
                raise CommandError(INDEX_OPTIONS_CONFLICT, str(exc)) from None
            raise
    return {
        "numIndexesBefore": before,
        "numIndexesAfter": len(coll.index_information()),
        "createdCollectionAutomatically": created_collection,
    }


def drop_indexes(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    coll = collection(ctx, db, command, "dropIndexes")
    existing = coll.index_information()
    if not existing:
        raise CommandError(NAMESPACE_NOT_FOUND, f"ns not found {namespace(db, coll.name)}")
    target = command.get("index")
    if target == "*":
        names = [name for name in existing if name != "_id_"]
    elif isinstance(target, str):
        names = [target]
    elif isinstance(target, list) and all(isinstance(item, str) for item in target):
        names = target
    elif isinstance(target, dict):
        names = [n for n, info in existing.items() if list(info["key"]) == list(target.items())][:1]
        if not names:
            raise CommandError(INDEX_NOT_FOUND, f"can't find index with key: {target}")
    else:
        raise CommandError(TYPE_MISMATCH, "'index' must be a name, a list of names, a key document or '*'")
    for name in names:
        if name == "_id_":
            raise CommandError(BAD_VALUE, "cannot drop _id index")
        if name not in existing:
            raise CommandError(INDEX_NOT_FOUND, f"index not found with name [{name}]")
    for name in names:
        coll.drop_index(name)
    return {"nIndexesWas": len(existing)}


def rename_collection(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    source_db, _, source = name_field(command, "renameCollection").partition(".")
    target_db, _, target = name_field(command, "to").partition(".")
    if not source or not target:
        raise CommandError(BAD_VALUE, "renameCollection and to must be full namespaces (db.collection)")
    if source_db != target_db:
        raise CommandError(
            NOT_IMPLEMENTED, "renaming across databases is not supported by the embedded store"
        )
    try:
        ctx.client[source_db].rename_collection(source, target, dropTarget=bool(command.get("dropTarget")))
    except OperationFailure as exc:
        code = _RENAME_CODES.get(exc.code or 0)
        if code is None:
            raise
        raise CommandError(code, str(exc)) from None
    return {}


HANDLERS: dict[str, Handler] = {
    "create": create,
    "drop": drop,
    "dropDatabase": drop_database,
    "createIndexes": create_indexes,
    "dropIndexes": drop_indexes,
    "deleteIndexes": drop_indexes,
    "renameCollection": rename_collection,
}
