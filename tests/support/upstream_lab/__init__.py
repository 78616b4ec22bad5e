"""A small database written the way upstream QDash writes it (its document classes, save paths and
indexes), to prove the copilot works on a real lab's database without altering it.

Use ``write_upstream_lab(db)`` on an empty database, or the pytest fixtures ``upstream_lab`` (read
only, after our start-up) and ``upstream_lab_db`` (a fresh writable copy per test) from
``tests/conftest.py``. What it holds and which upstream file each shape follows: README.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from pymongo.database import Database

from qdash.bootstrap import prepare_database
from qdash.db import close_database, open_database
from qdash.settings import Settings
from tests.support.upstream_lab import documents as d
from tests.support.upstream_lab import state
from tests.support.upstream_lab.indexes import (
    UPSTREAM_INDEXES,
    create_upstream_indexes,
    upstream_index_snapshot,
)
from tests.support.upstream_lab.provenance import ProvenanceLog
from tests.support.upstream_lab.spec import (
    CHIP_ID,
    COUPLING_TASKS,
    EXCLUDED,
    EXECUTIONS,
    PRE_PROJECT_TASKS,
    PROJECT_ID,
    QUBIT_TASKS,
    SEED_AT,
    TOKENS,
    USER_NOTE,
    Execution,
    task_id,
)

__all__ = [
    "CHIP_ID",
    "EXCLUDED",
    "PROJECT_ID",
    "TOKENS",
    "UPSTREAM_INDEXES",
    "USER_NOTE",
    "UpstreamLab",
    "prepare_upstream_lab",
    "task_id",
    "upstream_index_snapshot",
    "write_upstream_lab",
]


@dataclass(frozen=True)
class UpstreamLab:
    """The written database and what a test needs to know about it.

    ``indexes_before`` is ``upstream_index_snapshot`` taken right after writing, before anything of
    ours touched the database (``prepare_upstream_lab`` then runs our start-up on it).
    """

    db: Database[dict[str, Any]]
    counts: dict[str, int]
    indexes_before: dict[tuple[str, str], dict[str, Any]]
    project_id: str = PROJECT_ID
    chip_id: str = CHIP_ID

    def token(self, username: str) -> str:
        return TOKENS[username]


def _task_rows(execution: Execution) -> list[dict[str, Any]]:
    """The executor's order: per qid, the task chain (``upstream_id`` = the previous task)."""
    tasks = (
        COUPLING_TASKS
        if execution.kind == "2q"
        else PRE_PROJECT_TASKS
        if not execution.in_project
        else QUBIT_TASKS
    )
    rows = []
    start = execution.start
    for qid in execution.qids:
        previous = ""
        for spec in tasks:
            rows.append(d.task_result(spec, qid, execution, start, previous))
            previous = rows[-1]["task_id"]
            start += timedelta(seconds=d.TASK_SECONDS + 7)
    return rows


def _calib_data(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``ExecutionModel.calib_data``: the outputs of the run, per qubit / coupling."""
    calib: dict[str, Any] = {"qubit": {}, "coupling": {}}
    for row in rows:
        calib[row["task_type"]].setdefault(row["qid"], {}).update(row["output_parameters"])
    return calib


def build_documents() -> dict[str, list[dict[str, Any]]]:
    """Every document of the lab, by collection (pure: no database)."""
    docs: dict[str, list[dict[str, Any]]] = {
        "user": state.users(),
        "project": [state.project()],
        "project_membership": state.memberships(),
    }
    provenance = ProvenanceLog()
    saved: list[dict[str, Any]] = []
    seeded = False
    for execution in EXECUTIONS:
        if not seeded and execution.start > SEED_AT:  # the seed import ran between two executions
            provenance.record_seed_import()
            seeded = True
        rows = _task_rows(execution)
        docs.setdefault("task_result_history", []).extend(rows)
        docs.setdefault("execution_history", []).append(
            d.execution_history(execution, rows, _calib_data(rows))
        )
        docs.setdefault("execution_counter", []).append(d.execution_counter(execution))
        if execution.in_project:
            docs.setdefault("calibration_note", []).append(d.calibration_note(execution, rows))
            saved.extend(rows)
        if execution.has_provenance:
            for row in rows:
                provenance.record_task(row)
    docs["execution_counter"] = _last_counter_per_day(docs["execution_counter"])
    qubits, couplings, chips = state.current_state(saved)
    docs |= {"qubit": qubits, "coupling": couplings, "chip": chips}
    docs |= {
        "parameter_versions": provenance.versions,
        "provenance_activities": provenance.activities,
        "provenance_relations": provenance.relations,
        "copilot_chat_session": [state.chat_session(EXECUTIONS[-1].start)],
    }
    return docs


def _last_counter_per_day(counters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One counter document per (project, date, user, chip) holding the day's last index."""
    by_key = {(c.get("project_id"), c["date"], c["username"], c["chip_id"]): c for c in counters}
    return list(by_key.values())


def write_upstream_lab(db: Database[dict[str, Any]]) -> UpstreamLab:
    """Create upstream's indexes, then insert every document (as upstream's start-up and runs would)."""
    create_upstream_indexes(db)
    counts = {}
    for collection, docs in build_documents().items():
        db[collection].insert_many(docs)
        counts[collection] = len(docs)
    return UpstreamLab(db, counts, upstream_index_snapshot(db))


def prepare_upstream_lab(settings: Settings) -> UpstreamLab:
    """Write the lab into the database ``settings`` name (empty), close it, then run our own
    start-up on it (``bootstrap.prepare_database``) as ``qdash serve`` would; the caller closes
    ``lab.db`` with ``qdash.db.close_database``."""
    db = open_database(settings.database)
    try:
        written = write_upstream_lab(db)
    finally:
        close_database(db)
    return replace(written, db=prepare_database(settings))
