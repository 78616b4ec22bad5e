"""``kill -9`` between the decision and the write, at each step: afterwards the audit and the data
agree, also when another action or a person touches the document right after the restart. A real
process on the embedded store (written through on every change) is killed with SIGKILL at the step
named; the restarted server (``prepare_database``) settles the audit from the document itself
before anything else can touch it."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pymongo.database import Database

from qdash.actions import audit, runner
from qdash.actions.approvals import APPROVALS, Scope
from qdash.actions.decisions import decide
from qdash.bootstrap import prepare_database
from qdash.db import close_database, open_database
from qdash.repositories.task_results import TASK_RESULTS
from qdash.settings import DatabaseSettings, Settings
from tests.actions.helpers import actions_settings

SCOPE = Scope("proj-a", "alice", "s1")
TASK = "t1-run"

# The child claims and carries out the approval; the named function SIGKILLs its own process.
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from qdash.actions import audit, runner
    from qdash.actions.approvals import Scope
    from qdash.actions.decisions import decide
    from qdash.db import open_database
    from qdash.settings import DatabaseSettings, load_settings

    data_dir, module, name, approval_id = sys.argv[1:]
    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    setattr({"audit": audit, "runner": runner}[module], name, die)
    db = open_database(DatabaseSettings(data_dir=data_dir))
    settings = load_settings(actions={"enabled": True}, database={"data_dir": data_dir, "mongo_uri": None})
    decide(db, settings, Scope("proj-a", "alice", "s1"), approval_id, True)
    """
)
POINTS = [
    ("audit", "insert_claimed", "not_applied"),  # claimed, killed before its record
    ("runner", "_checked", "not_applied"),  # record approved, killed before started
    ("runner", "_write", "not_applied"),  # record started, killed before the write
    ("runner", "_finish", "done"),  # written, killed before the record said so
]


def _seed(data_dir: Path) -> str:
    db = open_database(DatabaseSettings(data_dir=data_dir))
    try:
        db["project"].insert_one({"project_id": "proj-a", "owner_username": "alice"})
        db[TASK_RESULTS].insert_one({"project_id": "proj-a", "task_id": TASK, "name": "CheckT1", "qid": "3"})
        args = {"task_id": TASK, "reason": "x"}
        approval = runner.propose(db, SCOPE, "exclude_task_result", args, ttl_s=600, model="m")
        return str(approval["_id"])
    finally:
        close_database(db)


def _killed_at(data_dir: Path, module: str, name: str) -> str:
    approval_id = _seed(data_dir)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(data_dir), module, name, approval_id],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    return approval_id


def _doc(db: Database[dict[str, Any]]) -> dict[str, Any]:
    return db[TASK_RESULTS].find_one({"task_id": TASK}) or {}


def _agree(db: Database[dict[str, Any]], approval_id: str, state: str) -> None:
    """The killed action's record says ``state`` and the document agrees."""
    record = db[audit.AUDIT].find_one({"_id": approval_id})
    assert record is not None and record["state"] == state and record.get("recovered_at") is not None
    doc = _doc(db)
    if state == "done":
        assert audit.holds(doc, record["after"], record["after_missing"])
    else:
        assert "excluded" not in doc


def _restarted(data_dir: Path) -> tuple[Database[dict[str, Any]], Settings]:
    settings = actions_settings(data_dir)
    return prepare_database(settings, seed=False), settings


@pytest.mark.parametrize(("module", "name", "state"), POINTS)
def test_kill_9_leaves_audit_and_data_agreeing(tmp_path: Path, module: str, name: str, state: str) -> None:
    data_dir = tmp_path / "data"
    approval_id = _killed_at(data_dir, module, name)
    db, _ = _restarted(data_dir)
    try:
        assert db[APPROVALS].find_one({"_id": approval_id})["status"] == "approved"  # type: ignore[index]
        _agree(db, approval_id, state)  # settled at start-up, before any request
        assert [r["_id"] for r in audit.records(db, "proj-a")] == [approval_id]
    finally:
        close_database(db)


@pytest.mark.parametrize(("module", "name", "state"), POINTS)
def test_a_person_or_another_action_right_after_the_restart_changes_no_verdict(
    tmp_path: Path, module: str, name: str, state: str
) -> None:
    data_dir = tmp_path / "data"
    approval_id = _killed_at(data_dir, module, name)
    db, settings = _restarted(data_dir)
    try:
        # another action on the same result, decided at once (undo or a new exclusion) ...
        if state == "done":
            follow = runner.propose_undo(db, SCOPE, approval_id, ttl_s=600, model="m")
        else:
            args = {"task_id": TASK, "reason": "again"}
            follow = runner.propose(db, SCOPE, "exclude_task_result", args, ttl_s=600, model="m")
        assert decide(db, settings, SCOPE, follow["_id"], True).outcome.ok  # type: ignore[union-attr]
        # ... then a person toggles it in upstream's dashboard
        db[TASK_RESULTS].update_one({"task_id": TASK}, {"$set": {"excluded": True, "excluded_by": "bob"}})
        audit.settle(db, "proj-a", grace_s=0)
        record = db[audit.AUDIT].find_one({"_id": approval_id})
        assert record is not None and record["state"] == state
        assert db[audit.AUDIT].find_one({"_id": follow["_id"]})["state"] == "done"  # type: ignore[index]
    finally:
        close_database(db)


def test_within_the_grace_another_action_waits_and_the_document_decides(tmp_path: Path) -> None:
    """A shared MongoDB cannot know at start-up that a record's process died: within the grace
    another action on the same document writes nothing, and once settled the record says done."""
    data_dir = tmp_path / "data"
    approval_id = _killed_at(data_dir, "runner", "_finish")
    db = open_database(DatabaseSettings(data_dir=data_dir))  # no start-up recovery
    settings = actions_settings(data_dir)
    try:
        follow = runner.propose(db, SCOPE, "restore_task_result", {"task_id": TASK}, ttl_s=600, model="m")
        refused = decide(db, settings, SCOPE, follow["_id"], True).outcome
        assert refused is not None and not refused.ok and "being written" in refused.message
        assert db[audit.AUDIT].find_one({"_id": follow["_id"]})["state"] == "failed"  # type: ignore[index]
        assert audit.settle(db, "proj-a", grace_s=0) == 1
        _agree(db, approval_id, "done")
    finally:
        close_database(db)
