"""Write commands: insert, update, delete and findAndModify, run on the embedded collections.

A statement that fails becomes a ``writeErrors`` entry with MongoDB's code (11000 for a duplicate
key, with ``keyPattern``/``keyValue`` when the store names them), so pymongo raises the same
``DuplicateKeyError``/``WriteError``/``BulkWriteError`` it raises against a server; an ordered batch
stops at its first error, an unordered one goes on. ``insert`` goes through ``insert_many``, so a
batch is one journal transaction; update and delete statements run one by one (the store's bulk path
has no ``arrayFilters``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pymongo import ReturnDocument
from pymongo.errors import BulkWriteError

from qdash.logging import get_logger
from tests.support.wire_store.context import (
    Context,
    Handler,
    collection,
    document,
    documents,
    reject,
    sort_spec,
)
from tests.support.wire_store.errors import (
    FAILED_TO_PARSE,
    INTERNAL_ERROR,
    NOT_IMPLEMENTED,
    CommandError,
    describe,
    plain_message,
)

log = get_logger(__name__)


def insert(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    coll = collection(ctx, db, command, "insert")
    batch = documents(command, "documents")
    try:
        coll.insert_many(batch, ordered=bool(command.get("ordered", True)))
    except BulkWriteError as exc:
        errors = [
            {"index": e["index"], "code": e["code"], "errmsg": plain_message(e["errmsg"])}
            for e in exc.details["writeErrors"]
        ]
        return {"n": exc.details.get("nInserted", 0), "writeErrors": errors}
    return {"n": len(batch)}


def update(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    coll = collection(ctx, db, command, "update")
    totals = {"n": 0, "nModified": 0}
    upserted: list[dict[str, Any]] = []

    def run(index: int, statement: dict[str, Any]) -> None:
        result = _update_statement(coll, statement)
        totals["n"] += result.matched_count
        totals["nModified"] += result.modified_count
        if result.upserted_id is not None:
            totals["n"] += 1
            upserted.append({"index": index, "_id": result.upserted_id})

    reply: dict[str, Any] = _statements(command, "updates", run)
    reply.update(totals)
    if upserted:
        reply["upserted"] = upserted
    return reply


def _update_statement(coll: Any, statement: dict[str, Any]) -> Any:
    reject(statement, "collation")
    query = document(statement, "q") or {}
    change = statement.get("u")
    upsert = bool(statement.get("upsert"))
    hint = statement.get("hint")
    if _is_update(change):
        method = coll.update_many if statement.get("multi") else coll.update_one
        return method(query, change, upsert=upsert, array_filters=statement.get("arrayFilters"), hint=hint)
    if not isinstance(change, dict):
        raise CommandError(FAILED_TO_PARSE, "'u' must be a document or a pipeline")
    if statement.get("multi"):
        raise CommandError(FAILED_TO_PARSE, "multi update is not supported for replacement-style update")
    return coll.replace_one(query, change, upsert=upsert, hint=hint)


def delete(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    coll = collection(ctx, db, command, "delete")
    deleted = 0

    def run(_index: int, statement: dict[str, Any]) -> None:
        nonlocal deleted
        reject(statement, "collation")
        limit = statement.get("limit", 0)
        if limit not in (0, 1):
            raise CommandError(FAILED_TO_PARSE, "the limit field in delete objects must be 0 or 1")
        method = coll.delete_one if limit == 1 else coll.delete_many
        result = method(document(statement, "q") or {}, hint=statement.get("hint"))
        deleted += result.deleted_count

    reply = _statements(command, "deletes", run)
    reply["n"] = deleted
    return reply


def find_and_modify(ctx: Context, db: str, command: dict[str, Any]) -> dict[str, Any]:
    reject(command, "collation", "let", "hint")
    if command.get("arrayFilters"):
        raise CommandError(
            NOT_IMPLEMENTED, "arrayFilters in findAndModify is not supported by the embedded store"
        )
    coll = collection(ctx, db, command, next(iter(command)))
    query = document(command, "query") or {}
    options: dict[str, Any] = {"projection": document(command, "fields"), "sort": sort_spec(command)}
    change = command.get("update")
    upsert = bool(command.get("upsert"))
    if command.get("remove"):
        if change is not None or upsert or command.get("new"):
            raise CommandError(FAILED_TO_PARSE, "remove cannot be combined with update, upsert or new")
        value = coll.find_one_and_delete(query, **options)
    elif change is None:
        raise CommandError(FAILED_TO_PARSE, "either an update or remove=true must be specified")
    else:
        options.update(
            upsert=upsert,
            return_document=ReturnDocument.AFTER if command.get("new") else ReturnDocument.BEFORE,
        )
        method = coll.find_one_and_update if _is_update(change) else coll.find_one_and_replace
        value = method(query, change, **options)
    # Only ``value`` reaches pymongo's result; ``n`` says whether a document was found or upserted.
    return {"lastErrorObject": {"n": int(value is not None or upsert)}, "value": value}


def _is_update(change: Any) -> bool:
    """A pipeline or an operator document (as opposed to a replacement document)."""
    if isinstance(change, list):
        return True
    return isinstance(change, dict) and bool(change) and next(iter(change)).startswith("$")


def _statements(
    command: dict[str, Any], field: str, run: Callable[[int, dict[str, Any]], None]
) -> dict[str, Any]:
    """Run each statement of ``command[field]``; failures become writeErrors (ordered: stop at one)."""
    ordered = bool(command.get("ordered", True))
    errors: list[dict[str, Any]] = []
    for index, statement in enumerate(documents(command, field)):
        try:
            run(index, statement)
        except Exception as exc:
            code, message, extra = describe(exc)
            if code == INTERNAL_ERROR:
                log.warning("write statement failed inside the embedded store", error=message, exc_info=True)
            errors.append({"index": index, "code": code, "errmsg": message, **extra})
            if ordered:
                break
    return {"writeErrors": errors} if errors else {}


HANDLERS: dict[str, Handler] = {
    "insert": insert,
    "update": update,
    "delete": delete,
    "findAndModify": find_and_modify,
    "findandmodify": find_and_modify,
}
