"""newest_points reads execution by execution and returns exactly each qid's newest points, checked
against plain pymongo over the whole history; it reads a bounded number of executions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from qdash.repositories import recent_points
from qdash.repositories.recent_points import newest_points
from qdash.repositories.scope import ProjectScope

PROJECT, CHIP = "proj-demo", "64Qv3"


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _expected(db: Any, parameter: str, per_qid: int, since: datetime | None = None) -> dict[str, list[str]]:
    query: dict[str, Any] = {
        "project_id": PROJECT,
        "chip_id": CHIP,
        "status": "completed",
        "output_parameter_names": parameter,
    }
    newest: dict[str, list[str]] = {}
    for doc in db.task_result_history.find(query).sort("start_at", -1):
        if doc.get("excluded") is True or (since is not None and _utc(doc["start_at"]) < since):
            continue
        kept = newest.setdefault(doc["qid"], [])
        if len(kept) < per_qid:
            kept.append(doc["task_id"])
    return newest


@pytest.mark.parametrize(("parameter", "per_qid"), [("t1", 1), ("t1", 5), ("x90_gate_fidelity", 3)])
def test_newest_points_per_qid_match_the_whole_history(demo_lab: Any, parameter: str, per_qid: int) -> None:
    expected = _expected(demo_lab.db, parameter, per_qid)
    scope = ProjectScope(demo_lab.db, PROJECT)
    found = newest_points(scope, CHIP, parameter, sorted(expected, key=int), per_qid=per_qid)
    assert {qid: [doc["task_id"] for doc in docs] for qid, docs in found.items()} == expected
    assert found.excluded == 0


def test_a_window_keeps_only_its_points(demo_lab: Any) -> None:
    newest = demo_lab.db.task_result_history.find_one(
        {"project_id": PROJECT, "chip_id": CHIP}, sort=[("start_at", -1)]
    )
    since = _utc(newest["start_at"]) - timedelta(days=2)
    expected = _expected(demo_lab.db, "t1", 4, since)
    found = newest_points(
        ProjectScope(demo_lab.db, PROJECT), CHIP, "t1", sorted(expected, key=int), per_qid=4, since=since
    )
    assert {qid: [doc["task_id"] for doc in docs] for qid, docs in found.items()} == expected


def test_the_walk_is_bounded_and_short_qids_read_their_own_history(
    demo_lab: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a walk of two executions, qids still short get their points from their own query."""
    monkeypatch.setattr(recent_points, "WALK_SLACK", 0)
    monkeypatch.setattr(recent_points, "WALK_PER_POINT", 0)
    reads: list[tuple[str, object]] = []
    real_find = ProjectScope.iter_find

    def counting(self: ProjectScope, collection: str, query: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(
            ("execution", query["execution_id"]) if "execution_id" in query else ("qid", query.get("qid"))
        )
        return real_find(self, collection, query, *args, **kwargs)

    monkeypatch.setattr(ProjectScope, "iter_find", counting)
    expected = _expected(demo_lab.db, "t1", 3)
    found = newest_points(
        ProjectScope(demo_lab.db, PROJECT), CHIP, "t1", sorted(expected, key=int), per_qid=3
    )
    assert {qid: [doc["task_id"] for doc in docs] for qid, docs in found.items()} == expected
    assert {("qid", qid) for qid in expected} <= set(reads)  # every short qid read its own history
    assert not [read for read in reads if read[0] == "execution"]  # no execution's runs were read
