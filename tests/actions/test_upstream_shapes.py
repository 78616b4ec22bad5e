"""The upstream-shaped lab after an approved exclude and an approved note: the documents keep
upstream's field types (its models would load them), upstream's reads find them, and upstream's
indexes, unique keys and own writes still work (``tests.support.upstream_lab``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from pymongo.errors import DuplicateKeyError

from qdash.actions.approvals import Scope
from qdash.actions.decisions import decide
from qdash.repositories.notes import user_notes
from qdash.repositories.scope import ProjectScope
from qdash.repositories.task_results import TASK_RESULTS
from tests.actions.helpers import actions_settings, approval_of, call_tool
from tests.support.upstream_lab import CHIP_ID, PROJECT_ID, UpstreamLab, task_id, upstream_index_snapshot
from tests.support.upstream_lab import writes as upstream
from tests.support.upstream_lab.indexes import create_upstream_indexes

EXCLUDE = task_id("20260227-000", "CheckT1", "6")
NOTE = task_id("20260210-000", "CheckT1", "1")  # older shape: no user_note field yet


@pytest.fixture
async def acted(upstream_lab_db: UpstreamLab, tmp_path: Path) -> UpstreamLab:
    lab, settings = upstream_lab_db, actions_settings(tmp_path)
    for tool, args in (
        ("exclude_task_result", {"task_id": EXCLUDE, "reason": "TLS spike"}),
        ("note_task_result", {"task_id": NOTE, "content": "Re-run after the fridge warm-up"}),
    ):
        out = await call_tool(lab.db, settings, tool, args, project=PROJECT_ID, user="alice")
        decide(lab.db, settings, Scope(PROJECT_ID, "alice", "s1"), approval_of(out)["id"], True)
    return lab


def _doc(lab: UpstreamLab, tid: str) -> dict[str, object]:
    doc = lab.db[TASK_RESULTS].find_one({"project_id": PROJECT_ID, "task_id": tid})
    assert doc is not None
    return doc


def test_written_fields_have_upstream_types(acted: UpstreamLab) -> None:
    excluded = _doc(acted, EXCLUDE)
    assert excluded["excluded"] is True and excluded["excluded_reason"] == "TLS spike"
    assert excluded["excluded_by"] == "alice" and isinstance(excluded["excluded_at"], datetime)
    note = _doc(acted, NOTE)["user_note"]
    assert isinstance(note, dict) and set(note) == {"content", "updated_by", "updated_at"}
    assert note["content"] == "Re-run after the fridge warm-up" and note["updated_by"] == "alice"
    assert isinstance(note["updated_at"], datetime)  # a BSON date: upstream's partial note index keys it


def test_upstream_reads_find_them(acted: UpstreamLab) -> None:
    db = acted.db
    # The dashboard's notes summary: task results whose user_note or ai_review_note was written.
    noted = db[TASK_RESULTS].find(
        {
            "project_id": PROJECT_ID,
            "chip_id": CHIP_ID,
            "$or": [{"user_note.updated_at": {"$ne": None}}, {"ai_review_note.updated_at": {"$ne": None}}],
        },
        {"task_id": 1},
    )
    assert NOTE in {doc["task_id"] for doc in noted}
    # Metrics leave excluded measurements out.
    kept = db[TASK_RESULTS].find({"project_id": PROJECT_ID, "chip_id": CHIP_ID, "excluded": {"$ne": True}})
    assert EXCLUDE not in {doc["task_id"] for doc in kept}
    found = user_notes(ProjectScope(db, PROJECT_ID), CHIP_ID, "20260210-000", None, 1)
    assert [doc["task_id"] for doc in found] == [NOTE]


def test_upstream_indexes_unique_keys_and_writes_still_work(acted: UpstreamLab) -> None:
    db = acted.db
    assert upstream_index_snapshot(db) == acted.indexes_before
    create_upstream_indexes(db)  # upstream's next start-up re-declares its indexes: no conflict
    row = {k: v for k, v in _doc(acted, EXCLUDE).items() if k != "_id"}
    with pytest.raises(DuplicateKeyError):  # (project_id, task_id) is still unique
        db[TASK_RESULTS].insert_one(row)
    upstream.upsert_calibration_note(
        db, project_id=PROJECT_ID, username="bob", chip_id=CHIP_ID, execution_id="20260227-000", note={}
    )
    assert (
        upstream.next_execution_index(
            db, project_id=PROJECT_ID, date="20260227", username="bob", chip_id=CHIP_ID
        )
        == 0
    )
