"""``get_execution_history`` with ``execution_id`` (one run in detail) and ``compare_to``; checked
against the demo lab's raw documents and upstream-shaped rows (excluded runs, another project)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from qdash.settings import Settings

from .conftest import DEMO, OTHER, Call
from .upstream_rows import chip_doc, excluded, tool_caller, upstream_run


def _newest(demo_lab: Any, name: str, n: int) -> list[dict[str, Any]]:
    query = {"project_id": DEMO, "chip_id": "64Qv3", "name": name}
    return list(demo_lab.db.execution_history.find(query).sort("start_at", -1).limit(n))


def _runs(demo_lab: Any, execution_id: str) -> list[dict[str, Any]]:
    return list(demo_lab.db.task_result_history.find({"project_id": DEMO, "execution_id": execution_id}))


def _table(section: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(zip(section["cols"], row, strict=True)) for row in section["rows"]]


def test_one_execution_in_detail(call: Call, demo_lab: Any) -> None:
    execution = _newest(demo_lab, "1Q-Calibration", 1)[0]
    runs = _runs(demo_lab, execution["execution_id"])
    result = call("get_execution_history", execution_id=execution["execution_id"])
    shown = result["execution"]
    assert (shown["execution_id"], shown["status"], shown["runs"]) == (
        execution["execution_id"],
        execution["status"],
        len(runs),
    )
    assert result["units"] == {"elapsed_time": "s"}
    assert abs(shown["elapsed_time"] - execution["elapsed_time"]) <= 0.001 * execution["elapsed_time"]
    assert shown["status_counts"] == dict(Counter(run["status"] for run in runs))
    tasks = {row["task_name"]: row for row in _table(result["tasks"])}
    for name in {run["name"] for run in runs}:
        own = [run for run in runs if run["name"] == name]
        assert tasks[name]["completed"] == sum(run["status"] == "completed" for run in own)
        assert tasks[name]["figures"] == sum(len(run["figure_path"]) for run in own)
    failed = {(run["name"], run["qid"]) for run in runs if run["status"] == "failed"}
    listed = {(row["task_name"], qid) for row in _table(result["failures"]) for qid in row["qids"]}
    assert listed == failed
    assert shown["targets"] == {"qubits": 64, "couplings": 0}


def test_a_small_execution_names_its_qids(call: Call, demo_lab: Any) -> None:
    rerun = _newest(demo_lab, "Ad-hoc Rerun", 1)[0]
    qids = sorted({run["qid"] for run in _runs(demo_lab, rerun["execution_id"])})
    result = call("get_execution_history", execution_id=rerun["execution_id"])
    assert result["execution"]["targets"] == qids and result["execution"]["name"] == "Ad-hoc Rerun"


def test_two_executions_compared_older_to_newer(call: Call, demo_lab: Any) -> None:
    new, old = _newest(demo_lab, "1Q-Calibration", 2)
    result = call("get_execution_history", execution_id=new["execution_id"], compare_to=old["execution_id"])
    assert [row[0] for row in result["executions"]["rows"]] == [old["execution_id"], new["execution_id"]]
    before = {
        (run["qid"], "t1"): run["output_parameters"]["t1"]["value"]
        for run in _runs(demo_lab, old["execution_id"])
        if run["name"] == "CheckT1" and run["status"] == "completed"
    }
    after = {
        (run["qid"], "t1"): run["output_parameters"]["t1"]["value"]
        for run in _runs(demo_lab, new["execution_id"])
        if run["name"] == "CheckT1" and run["status"] == "completed"
    }
    pcts = {key: (after[key] - before[key]) / abs(before[key]) * 100 for key in before.keys() & after.keys()}
    t1 = next(row for row in _table(result["parameters"]) if row["parameter"] == "t1")
    assert (t1["unit"], t1["compared"]) == ("μs", len(pcts))
    largest = max((row for row in _table(result["changes"])), key=lambda row: abs(row["change_pct"]))
    assert abs(largest["change_pct"]) >= max(abs(p) for p in pcts.values()) - 0.05
    failed_old = {
        (r["name"], r["qid"]) for r in _runs(demo_lab, old["execution_id"]) if r["status"] == "failed"
    }
    failed_new = {
        (r["name"], r["qid"]) for r in _runs(demo_lab, new["execution_id"]) if r["status"] == "failed"
    }
    only_new = {
        (row["task_name"], qid)
        for row in _table(result["failed_only_in"][new["execution_id"]])
        for qid in row["qids"]
    }
    assert only_new == failed_new - failed_old


def test_an_unknown_or_foreign_execution_is_an_empty_result(call: Call, demo_lab: Any) -> None:
    foreign = demo_lab.db.execution_history.find_one({"project_id": OTHER})["execution_id"]
    mine = {e["execution_id"] for e in demo_lab.db.execution_history.find({"project_id": DEMO})}
    if foreign in mine:  # ids are dated per project, so another project may reuse one
        foreign = "20000101-001"
    assert call("get_execution_history", execution_id=foreign) == {
        "count": 0,
        "filters": {"execution_id": foreign},
    }


def test_excluded_runs_are_left_out_and_counted(mongo_db: Any, settings: Settings) -> None:
    runs = [upstream_run(str(q), 1, 40.0 + q) for q in range(3)]
    runs[2] = excluded(runs[2])
    mongo_db.task_result_history.insert_many(runs)
    mongo_db.chip.insert_one(chip_doc())
    mongo_db.execution_history.insert_one(
        {"project_id": "proj-up", "execution_id": "20260301-001", "chip_id": "64Qv3", "status": "completed",
         "name": "1Q", "elapsed_time": "0:01:05", "note": {}}
    )  # fmt: skip
    call = tool_caller(mongo_db, settings)
    result = call("get_execution_history", execution_id="20260301-001")
    assert (result["execution"]["runs"], result["excluded"], result["execution"]["targets"]) == (
        2,
        1,
        ["0", "1"],
    )
    assert result["execution"]["elapsed_time"] == 65


def _started_between(demo_lab: Any, since: datetime, until: datetime) -> list[dict[str, Any]]:
    query = {"project_id": DEMO, "chip_id": "64Qv3", "start_at": {"$gte": since, "$lt": until}}
    return list(demo_lab.db.execution_history.find(query).sort("start_at", -1))


def test_a_window_lists_its_executions_with_totals(call: Call, demo_lab: Any) -> None:
    newest = _newest(demo_lab, "1Q-Calibration", 1)[0]["start_at"]
    until = (newest.replace(tzinfo=UTC) + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
    since = until - timedelta(days=10)
    started = _started_between(demo_lab, since, until)
    result = call("get_execution_history", since=since.isoformat(), until=until.isoformat(), last_n=3)
    assert set(result["window"]) == {"since", "until"}
    assert result["total"] == len(started) > 3
    assert result["failed"] == sum(e["status"] == "failed" for e in started)
    assert result["status_counts"] == dict(Counter(e["status"] for e in started))
    assert [row[0] for row in result["rows"]] == [e["execution_id"] for e in started[:3]]
    assert result["shown"] == f"newest 3 of {len(started)}"
    failed = call("get_execution_history", since=since.isoformat(), until=until.isoformat(), status="failed")
    assert failed.get("total", 0) == result["failed"]  # a filter narrows the totals too


def test_a_window_takes_the_searches_time_formats(call: Call, error: Any) -> None:
    week = call("get_execution_history", since="7d")
    assert week["total"] >= len(week["rows"]) and "window" in week
    empty = call("get_execution_history", since="2001-01-01", until="2001-01-02")
    assert empty["count"] == 0 and empty["filters"]["since"]
    assert error("get_execution_history", since="last monday").startswith("'last monday' is not a time")


def test_the_newest_listing_counts_the_whole_history(call: Call, demo_lab: Any) -> None:
    """Without a window the listing still says how many executions there are and how many failed
    (all of the chip's history), so "how many failed" is never read off a list cut at last_n."""
    docs = list(demo_lab.db.execution_history.find({"project_id": DEMO, "chip_id": "64Qv3"}))
    result = call("get_execution_history", last_n=3)
    assert result["total"] == len(docs) and len(result["rows"]) == 3
    assert result["failed"] == sum(doc["status"] == "failed" for doc in docs)
    assert result["shown"].startswith(f"newest 3 of {len(docs)}")
    daily = [doc for doc in docs if "daily" in (doc.get("tags") or [])]
    tagged = call("get_execution_history", last_n=2, tags=["daily"], status="completed")
    assert tagged["total"] == sum(doc["status"] == "completed" for doc in daily) and tagged["failed"] == 0
