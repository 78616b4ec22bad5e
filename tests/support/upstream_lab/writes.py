"""Upstream's own write paths, replayed against a database: does upstream still work after us?

Each function issues the same MongoDB operation the upstream class issues (filter, upsert,
insert), so a unique index we added — or an upstream index we changed — fails here exactly as it
would fail in the lab (``DuplicateKeyError`` E11000). Sources: README.md next to this file.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pymongo import ReturnDocument
from pymongo.database import Database

from tests.support.upstream_lab.documents import system_info


def upsert_calibration_note(
    db: Database[Any],
    *,
    project_id: str,
    username: str,
    chip_id: str,
    execution_id: str,
    note: dict[str, Any],
) -> dict[str, Any]:
    """``CalibrationNoteDocument.upsert_note`` for the master note: the key includes ``username``,
    so two users' master notes of one execution are two documents."""
    now = datetime.now(UTC)
    key = {
        "project_id": project_id,
        "execution_id": execution_id,
        "task_id": "master",
        "username": username,
        "chip_id": chip_id,
    }
    doc = db["calibration_note"].find_one_and_update(
        key,
        {"$set": {"note": note, "timestamp": now}, "$setOnInsert": {"system_info": system_info(now)}},
        upsert=True,
        return_document=ReturnDocument.AFTER,
    )
    assert doc is not None
    return dict(doc)


def next_execution_index(
    db: Database[Any], *, project_id: str, date: str, username: str, chip_id: str
) -> int:
    """``ExecutionCounterDocument.get_next_index``: one counter per user (first call → 0)."""
    key = {"project_id": project_id, "date": date, "username": username, "chip_id": chip_id}
    counters = db["execution_counter"]
    if counters.find_one(key) is None:
        counters.insert_one({**key, "index": 0, "system_info": system_info(datetime.now(UTC))})
        return 0
    doc = counters.find_one_and_update(key, {"$inc": {"index": 1}}, return_document=ReturnDocument.AFTER)
    assert doc is not None
    return int(doc["index"])


def initialize_chip(
    db: Database[Any], *, project_id: str, username: str, chip_id: str, qids: list[str], couplings: list[str]
) -> None:
    """Upstream's chip initialisation for a user: chip, qubit and coupling documents under that user
    (their unique keys all contain ``username``, so two users may hold the same chip id)."""
    now = datetime.now(UTC)

    def state(qid: str) -> dict[str, Any]:
        return {
            "project_id": project_id,
            "username": username,
            "qid": qid,
            "status": "pending",
            "chip_id": chip_id,
            "data": {},
            "best_data": {},
            "system_info": system_info(now),
        }

    db["chip"].insert_one(
        {
            "project_id": project_id,
            "chip_id": chip_id,
            "username": username,
            "size": len(qids),
            "qubits": {},
            "couplings": {},
            "installed_at": now.isoformat(),
            "system_info": system_info(now),
        }
    )
    db["qubit"].insert_many([state(qid) | {"node_info": None} for qid in qids])
    db["coupling"].insert_many([state(qid) | {"edge_info": None} for qid in couplings])


def create_user(db: Database[Any], *, username: str, access_token: str) -> None:
    """``UserDocument.insert``: ``access_token`` and ``username`` are unique."""
    db["user"].insert_one(
        {
            "username": username,
            "hashed_password": "x",
            "access_token": access_token,
            "full_name": None,
            "default_project_id": None,
            "disabled": False,
            "system_info": system_info(datetime.now(UTC)),
        }
    )
