"""``kill -9`` between the decision and the write, at each step: afterwards the audit and the data
agree. A real process on the embedded store (written through on every change) is killed with
SIGKILL at the step named; the next process settles the audit from the document itself."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from qdash.actions import audit
from qdash.actions.approvals import APPROVALS, Scope, create
from qdash.actions.catalog import Target
from qdash.db import close_database, open_database
from qdash.repositories.task_results import TASK_RESULTS
from qdash.settings import DatabaseSettings

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
    from qdash.settings import DatabaseSettings

    data_dir, module, name, approval_id = sys.argv[1:]
    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    setattr({"audit": audit, "runner": runner}[module], name, die)
    db = open_database(DatabaseSettings(data_dir=data_dir))
    decide(db, Scope("proj-a", "alice", "s1"), approval_id, True)
    """
)


def _seed(data_dir: Path) -> str:
    db = open_database(DatabaseSettings(data_dir=data_dir))
    try:
        db["project"].insert_one({"project_id": "proj-a", "owner_username": "alice"})
        db[TASK_RESULTS].insert_one({"project_id": "proj-a", "task_id": TASK, "name": "CheckT1", "qid": "3"})
        approval = create(
            db,
            SCOPE,
            tool="exclude_task_result",
            label="Exclude CheckT1 on Q3",
            args={"task_id": TASK, "reason": "x"},
            target=Target(TASK_RESULTS, {"task_id": TASK}),
            model="m",
            ttl_s=600,
        )
        return str(approval["_id"])
    finally:
        close_database(db)


@pytest.mark.parametrize(
    ("module", "name", "state"),
    [
        ("audit", "settle", None),  # claimed, then killed: no record, nothing written
        ("runner", "_write", "not_applied"),  # record started, killed before the write
        ("runner", "_finish", "done"),  # written, killed before the record said so
    ],
)
def test_kill_9_leaves_audit_and_data_agreeing(
    tmp_path: Path, module: str, name: str, state: str | None
) -> None:
    data_dir = tmp_path / "data"
    approval_id = _seed(data_dir)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(data_dir), module, name, approval_id],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()

    db = open_database(DatabaseSettings(data_dir=data_dir))
    try:
        doc: dict[str, Any] = db[TASK_RESULTS].find_one({"task_id": TASK}) or {}
        assert db[APPROVALS].find_one({"_id": approval_id})["status"] == "approved"  # type: ignore[index]
        audit.settle(db, "proj-a", grace_s=0)  # the next read, once the grace has passed
        records = audit.records(db, "proj-a")
        if state is None:
            assert records == [] and "excluded" not in doc
            return
        (record,) = records
        assert record["state"] == state and record.get("recovered_at") is not None
        assert ("excluded" in doc) == (state == "done")
        assert audit.holds(doc, record["after"], record["after_missing"]) == (state == "done")
    finally:
        close_database(db)
