"""Same spec and seed → identical documents; another seed → different data."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any

import mongomock_ng

from qdash.demo import ChipPlan, DemoSpec, ProjectPlan, UserPlan, seed_demo
from qdash.demo.writer import DEMO_COLLECTIONS

END = datetime(2026, 2, 27, 12, tzinfo=UTC)


def _tiny(seed: int) -> DemoSpec:
    return DemoSpec(
        seed=seed,
        end_at=END,
        projects=(ProjectPlan("proj-x", "X Lab", "xavier"),),
        users=(UserPlan("xavier", "proj-x", (("proj-x", "owner"),)),),
        chips=(ChipPlan("proj-x", "16Q", "linear-16", "xavier", 9, 30),),
    )


def _seed(seed: int) -> dict[str, list[dict[str, Any]]]:
    db = mongomock_ng.MongoClient(tz_aware=True)["det"]
    seed_demo(db, _tiny(seed))
    return {name: list(db[name].find({}).sort("_id", 1)) for name in DEMO_COLLECTIONS}


_dump = cache(_seed)
"""Seeded once per seed for this module (tests only read the documents)."""


def test_same_seed_gives_identical_documents() -> None:
    first, second = _dump(3), _seed(3)
    assert sum(len(docs) for docs in first.values()) > 1000
    for name in DEMO_COLLECTIONS:
        assert first[name] == second[name], name


def test_another_seed_gives_other_data() -> None:
    first, other = _dump(3), _dump(4)
    t1 = [d["data"]["t1"]["value"] for d in first["qubit"]]
    t1_other = [d["data"]["t1"]["value"] for d in other["qubit"]]
    assert t1 != t1_other
    assert {d["_id"] for d in first["task_result_history"]}.isdisjoint(
        d["_id"] for d in other["task_result_history"]
    )


def test_the_schedule_of_a_small_chip() -> None:
    docs = _dump(3)
    executions = docs["execution_history"]
    one_q = [e for e in executions if e["name"] == "1Q-Calibration"]
    assert len(one_q) == 9
    assert sorted(e["tags"] for e in one_q)[0] == ["daily", "1Q"]
    assert sum("full" in e["tags"] for e in one_q) == 1 and sum("weekly" in e["tags"] for e in one_q) == 1
    assert len([e for e in executions if e["name"] == "2Q-Calibration"]) == 5
    aborted = [e for e in executions if e["status"] == "failed" and e["message"].startswith("Aborted after")]
    assert len(aborted) == 1
    names = {
        d["name"] for d in docs["task_result_history"] if d["execution_id"] == aborted[0]["execution_id"]
    }
    assert names == {"CheckBellStateTomography"}
    assert all(e["end_at"] <= END for e in executions)
    globals_ = [d for d in docs["task_result_history"] if d["task_type"] in ("global", "system")]
    assert globals_ and all(d["qid"] == "" for d in globals_)


def test_task_result_count_follows_the_schedule() -> None:
    docs = _dump(3)
    qubits, couplings = 16, 15
    reruns = sum(e["name"] == "Ad-hoc Rerun" for e in docs["execution_history"])
    full_1q = 3 + qubits * 21  # CheckStatus, Configure, CheckSkew + the bring-up order
    weekly_1q = 2 + qubits * 5
    daily_1q = 2 + qubits * 3
    one_q = full_1q + weekly_1q + 7 * daily_1q  # days 0 | 7 | 1-6 and 8
    two_q = couplings * 7 + 3 * couplings * 2 + couplings * 1  # bring-up, 3 daily, 1 aborted after step 1
    assert len(docs["task_result_history"]) == one_q + two_q + reruns
    assert len(docs["provenance_activities"]) == len(docs["task_result_history"])
    assert len(docs["calibration_note"]) == len(docs["execution_history"]) == 9 + 5 + reruns
