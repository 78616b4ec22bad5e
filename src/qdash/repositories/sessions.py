"""Chat sessions (``copilot_project_chat_session``), always scoped by (project_id, username).

Upstream QDash keeps its own, unscoped sessions in ``copilot_chat_session`` with a unique
(username, session_id): ours live apart so neither breaks the other.

Why a repository: the HTTP layer and the chat stream (which appends each finished turn) share the
same limits and the same clean-up, and both run these blocking calls in a worker thread.
Limits (docs/api.md, Sessions): ≤ 500 messages, ≤ 256 KB per message, ≤ 8 MiB per session document,
≤ 200 sessions per user and project. Deleting a session also deletes its data-store entries and
uploaded tables.

A turn in progress is recorded before the model runs (``running_turn``: the user's message, the run
id and when the run's lease expires), so a crash or a restart mid-turn never loses the question:
the session shows it as running while the run can still be alive and as interrupted afterwards, and
the next turn stores it as an interrupted user/assistant pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import bson
from pymongo import DESCENDING
from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from qdash.repositories.refused import RefusedError

COLLECTION = "copilot_project_chat_session"
#: Where our sessions lived before upstream's own collection of that name was known (0.1.0 stores).
LEGACY_COLLECTION = "copilot_chat_session"
DATA_STORE = "copilot_data_store"
UPLOADS = "copilot_upload"
MAX_MESSAGES = 500
MAX_MESSAGE_BYTES = 256 * 1024
MAX_SESSION_BYTES = 8 * 1024 * 1024
MAX_SESSIONS = 200
LIST_LIMIT = 200


class SessionError(RefusedError):
    """A session rule was broken; ``status`` and the message are the HTTP answer."""


def not_found() -> SessionError:
    return SessionError(404, "Session not found")


def too_large() -> SessionError:
    return SessionError(413, "Session too large")


@dataclass(frozen=True)
class Owner:
    """Whose sessions: every query carries both keys."""

    project_id: str
    username: str

    def key(self, session_id: str | None = None) -> dict[str, str]:
        query = {"project_id": self.project_id, "username": self.username}
        if session_id is not None:
            query["session_id"] = session_id
        return query


def ensure_indexes(db: Database[dict[str, Any]]) -> None:
    sessions = db[COLLECTION]
    sessions.create_index([("project_id", 1), ("username", 1), ("session_id", 1)], unique=True)
    sessions.create_index([("project_id", 1), ("username", 1), ("updated_at", DESCENDING)])


def copy_legacy_sessions(db: Database[dict[str, Any]]) -> int:
    """Copy our sessions from ``copilot_chat_session`` (where 0.1.0 kept them) into ``COLLECTION``.

    Only documents with a ``project_id`` are ours (upstream's sessions there have none); they are
    copied once (an existing copy wins) and the old collection is never modified, so a lab's
    upstream sessions stay exactly as upstream wrote them. Blocking.
    """
    copied = 0
    for doc in db[LEGACY_COLLECTION].find({"project_id": {"$type": "string"}}):
        key = {name: doc.get(name) for name in ("project_id", "username", "session_id")}
        if db[COLLECTION].find_one(key, {"_id": 1}) is None:
            try:
                db[COLLECTION].insert_one(doc)
            except DuplicateKeyError:  # same _id copied by another process meanwhile
                continue
            copied += 1
    return copied


def _now() -> datetime:
    return datetime.now(UTC)


def normalise_messages(messages: list[dict[str, Any]], now: datetime | None = None) -> list[dict[str, Any]]:
    """Keep only the stored fields, fill ``created_at`` and enforce the count and size limits."""
    if len(messages) > MAX_MESSAGES:
        raise too_large()
    stamp = now or _now()
    clean: list[dict[str, Any]] = []
    for message in messages:
        content = str(message.get("content", ""))
        if len(content.encode("utf-8")) > MAX_MESSAGE_BYTES:
            raise too_large()
        created = message.get("created_at")
        clean.append(
            {
                "role": message.get("role", "user"),
                "content": content,
                "attached_image": "1" if message.get("attached_image") else None,
                "created_at": created if isinstance(created, datetime) else stamp,
            }
        )
    return clean


def _check_document(document: dict[str, Any]) -> None:
    if len(bson.encode(document)) > MAX_SESSION_BYTES:
        raise too_large()


def summary(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "session_id": doc["session_id"],
        "title": doc.get("title", "New Chat"),
        "context": doc.get("context"),
        "message_count": int(doc.get("message_count", len(doc.get("messages", [])))),
        "created_at": doc["created_at"],
        "updated_at": doc["updated_at"],
    }


INTERRUPTED_ANSWER = "Error: interrupted — the server stopped before this answer was complete; ask again."
DISCONNECTED_ANSWER = "Error: interrupted — the connection closed before this answer was complete; ask again."


def _running_messages(doc: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    """The turn in progress as messages: the user's question marked ``running`` while its run may
    still be alive, ``interrupted`` (with an ``Error:`` answer the dashboard leaves out of the
    model's history) once its lease has expired."""
    running = doc.get("running_turn")
    if not isinstance(running, dict):
        return []
    started = running.get("started_at", doc["created_at"])
    expires = running.get("expires_at")
    if isinstance(expires, datetime) and expires.tzinfo is None:
        expires = expires.replace(tzinfo=UTC)  # BSON datetimes come back naive from some stores
    alive = isinstance(expires, datetime) and expires > now and not running.get("interrupted")
    question = {
        "role": "user",
        "content": running.get("user_message", ""),
        "attached_image": "1" if running.get("attached_image") else None,
        "created_at": started,
        "state": "running" if alive else "interrupted",
    }
    if alive:
        return [question]
    answer = {"role": "assistant", "content": INTERRUPTED_ANSWER, "attached_image": None}
    return [question, {**answer, "created_at": started, "state": "interrupted"}]


def full(doc: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    body = summary(doc)
    body.pop("message_count")
    body["messages"] = [
        {
            "role": m.get("role", "user"),
            "content": m.get("content", ""),
            "attached_image": m.get("attached_image"),
            "created_at": m.get("created_at", doc["created_at"]),
            **({"state": m["state"]} if m.get("state") else {}),
        }
        for m in doc.get("messages", [])
    ] + _running_messages(doc, now or _now())
    return body


def list_sessions(db: Database[dict[str, Any]], owner: Owner) -> list[dict[str, Any]]:
    cursor = (
        db[COLLECTION]
        .find(owner.key(), {"messages": 0})
        .sort([("updated_at", DESCENDING), ("session_id", 1)])
        .limit(LIST_LIMIT)
    )
    return [summary(doc) for doc in cursor]


def get_session(db: Database[dict[str, Any]], owner: Owner, session_id: str) -> dict[str, Any]:
    doc = db[COLLECTION].find_one(owner.key(session_id))
    if doc is None:
        raise not_found()
    return full(doc)


def create_session(
    db: Database[dict[str, Any]],
    owner: Owner,
    session_id: str,
    *,
    title: str,
    context: dict[str, Any] | None,
    messages: list[dict[str, Any]],
) -> dict[str, Any]:
    now = _now()
    clean = normalise_messages(messages, now)
    sessions = db[COLLECTION]
    if sessions.find_one(owner.key(session_id), {"_id": 1}) is not None:
        raise SessionError(409, "Session already exists")
    if sessions.count_documents(owner.key()) >= MAX_SESSIONS:
        raise SessionError(409, "Too many sessions")
    doc = {
        **owner.key(session_id),
        "title": title,
        "context": context,
        "messages": clean,
        "message_count": len(clean),
        "created_at": now,
        "updated_at": now,
    }
    _check_document(doc)
    try:
        sessions.insert_one(doc)
    except DuplicateKeyError:
        raise SessionError(409, "Session already exists") from None
    return full(doc)


def update_session(
    db: Database[dict[str, Any]], owner: Owner, session_id: str, changes: dict[str, Any]
) -> dict[str, Any]:
    """Apply a dashboard PATCH: ``messages`` replaces the whole list."""
    sessions = db[COLLECTION]
    doc = sessions.find_one(owner.key(session_id))
    if doc is None:
        raise not_found()
    update: dict[str, Any] = {"updated_at": _now()}
    if "title" in changes and changes["title"] is not None:
        update["title"] = changes["title"]
    if "context" in changes:
        update["context"] = changes["context"]
    if "messages" in changes and changes["messages"] is not None:
        update["messages"] = normalise_messages(changes["messages"], update["updated_at"])
        update["message_count"] = len(update["messages"])
    merged = {**doc, **update}
    _check_document(merged)
    sessions.update_one({"_id": doc["_id"]}, {"$set": update})
    return summary(merged)


def begin_turn(
    db: Database[dict[str, Any]],
    owner: Owner,
    session_id: str,
    *,
    run_id: str,
    user_message: str,
    attached_image: bool = False,
    ttl_s: float,
) -> None:
    """Record the turn in progress before the model runs (creating the session on first use); an
    earlier turn that never finished is first stored as an interrupted pair, so nothing is lost."""
    now = _now()
    sessions = db[COLLECTION]
    doc = sessions.find_one(owner.key(session_id))
    if doc is None:
        try:
            create_session(db, owner, session_id, title=_title(user_message), context=None, messages=[])
        except SessionError:
            return  # too many sessions: the turn still runs, it is just not recorded
        doc = sessions.find_one(owner.key(session_id))
        if doc is None:
            return
    _store_interrupted(db, doc, now)
    running = {
        "run_id": run_id,
        "user_message": user_message[: MAX_MESSAGE_BYTES // 4],
        "attached_image": attached_image,
        "started_at": now,
        "expires_at": now + timedelta(seconds=ttl_s),
    }
    sessions.update_one({"_id": doc["_id"]}, {"$set": {"running_turn": running, "updated_at": now}})


def _store_interrupted(db: Database[dict[str, Any]], doc: dict[str, Any], now: datetime) -> None:
    """Move a previous turn that never finished into the messages, marked interrupted."""
    running = doc.get("running_turn")
    if not isinstance(running, dict):
        return
    pair = _running_messages({**doc, "running_turn": {**running, "interrupted": True}}, now)
    count = int(doc.get("message_count", len(doc.get("messages", []))))
    update: dict[str, Any] = {"$unset": {"running_turn": ""}}
    if count + len(pair) <= MAX_MESSAGES:
        update["$push"] = {"messages": {"$each": pair}}
        update["$set"] = {"message_count": count + len(pair)}
    db[COLLECTION].update_one({"_id": doc["_id"], "running_turn.run_id": running.get("run_id")}, update)


def mark_runs_interrupted(db: Database[dict[str, Any]]) -> int:
    """At the start of the embedded store's only process every recorded run is dead: mark them
    interrupted now instead of when their leases would have expired."""
    result = db[COLLECTION].update_many(
        {"running_turn": {"$exists": True}}, {"$set": {"running_turn.interrupted": True}}
    )
    return int(result.modified_count)


def append_turn(
    db: Database[dict[str, Any]],
    owner: Owner,
    session_id: str,
    *,
    user_message: str,
    answer_json: str,
    attached_image: bool = False,
    state: str | None = None,
) -> bool:
    """Store one finished (or ``state``: stopped) turn, ending the turn in progress; creates the
    session if the client never did. False when full."""
    now = _now()
    turn = normalise_messages(
        [
            {"role": "user", "content": user_message, "attached_image": attached_image, "created_at": now},
            {"role": "assistant", "content": answer_json, "created_at": now},
        ],
        now,
    )
    if state:
        turn = [{**message, "state": state} for message in turn]
    sessions = db[COLLECTION]
    doc = sessions.find_one(owner.key(session_id))
    if doc is None:
        try:
            create_session(db, owner, session_id, title=_title(user_message), context=None, messages=turn)
        except SessionError:
            return False
        return True
    count = int(doc.get("message_count", len(doc.get("messages", []))))
    if count + len(turn) > MAX_MESSAGES:
        return False
    try:
        _check_document({**doc, "messages": [*doc.get("messages", []), *turn]})
    except SessionError:
        return False
    result = sessions.update_one(
        {"_id": doc["_id"], "message_count": count},
        {
            "$push": {"messages": {"$each": turn}},
            "$set": {"message_count": count + len(turn), "updated_at": now},
            "$unset": {"running_turn": ""},
        },
    )
    return result.modified_count == 1


def _title(message: str) -> str:
    text = " ".join(message.split())
    return text if len(text) <= 60 else text[:57] + "..."


def delete_session(db: Database[dict[str, Any]], owner: Owner, session_id: str) -> None:
    """Delete the session and everything stored for it (data store, uploaded tables)."""
    result = db[COLLECTION].delete_one(owner.key(session_id))
    if result.deleted_count == 0:
        raise not_found()
    db[DATA_STORE].delete_many(owner.key(session_id))
    db[UPLOADS].delete_many(owner.key(session_id))
