"""Whose database this is: ours (the copilot created it) or a lab's (upstream QDash writes it).

Why it matters: a lab points ``QDASH_MONGO_URI`` at the MongoDB its upstream QDash already runs on.
There we are a guest: dropping, rewriting or adding a unique index breaks upstream's own start-up and
writes (``IndexOptionsConflict``, E11000). Only a database the copilot found empty is ours; it then
carries a marker document, and only then may index definitions be replaced or made unique on the
collections upstream also writes. Collections only the copilot writes (``OWN_COLLECTIONS``) are ours
in any database.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

META_COLLECTION = "copilot_meta"
OWNER_MARKER_ID = "database_owner"
DEMO_MARKER_ID = "demo_lab"
"""Written by the demo generator before its data: a database of that size by design (no size warning)."""

#: Collections upstream QDash never writes: indexes there may be unique and may be rebuilt.
#: (Upstream's own ``copilot_chat_session`` is deliberately absent: ours is ``copilot_project_chat_session``.)
OWN_COLLECTIONS = frozenset(
    {
        META_COLLECTION,
        "copilot_project_chat_session",
        "copilot_data_store",
        "copilot_upload",
        "copilot_rate_limit",
        "copilot_stream_lease",
        "copilot_review",
        "copilot_review_job",
        "copilot_review_budget",
        "copilot_review_write",
        "copilot_review_undo",
        "copilot_action_approval",
        "copilot_action_audit",
        "copilot_action_pending",
    }
)


def is_owned(db: Database[Any]) -> bool:
    """Whether the copilot created this database (its marker document is there)."""
    return db[META_COLLECTION].find_one({"_id": OWNER_MARKER_ID}, {"_id": 1}) is not None


def holds_lab_data(db: Database[Any]) -> bool:
    """Any document outside the copilot's own collections (indexes alone do not count)."""
    return any(
        db[name].estimated_document_count()
        for name in db.list_collection_names()
        if name not in OWN_COLLECTIONS
    )


def claim_if_empty(db: Database[Any]) -> bool:
    """Mark ``db`` as the copilot's when it holds no lab data yet; return whether it is ours now.

    Called before the first write of a fresh database (server start, ``qdash demo seed``), so an
    empty MongoDB set up for the copilot (docker compose) and a new embedded store become ours, and a
    lab's populated database never does.
    """
    if is_owned(db):
        return True
    if holds_lab_data(db):
        return False
    with suppress(DuplicateKeyError):  # another process claimed it first: still ours
        db[META_COLLECTION].insert_one(
            {"_id": OWNER_MARKER_ID, "owner": "qdash-copilot", "claimed_at": datetime.now(UTC)}
        )
    return True
