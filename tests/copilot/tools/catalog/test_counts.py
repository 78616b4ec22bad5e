"""search_task_results over a time window (``since``/``until``/``group_by``) on the demo lab: every
count checked against the raw runs of the window, read here with a plain query."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from qdash.copilot.tools.catalog.counts import parse_moment
from qdash.db.indexes import ensure_indexes
from qdash.settings import Settings

from .conftest import DEMO, Call
from .upstream_rows import CHIP, PROJECT, START, chip_doc, tool_caller, upstream_run


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _window(demo_lab: Any, days: int) -> tuple[datetime, list[dict[str, Any]]]:
    """A window of ``days`` ending after the newest run, and its runs (not excluded)."""
    query = {"project_id": DEMO, "chip_id": "64Qv3"}
    newest = _aware(demo_lab.db.task_result_history.find_one(query, sort=[("start_at", -1)])["start_at"])
    since = (newest - timedelta(days=days)).replace(minute=0, second=0, microsecond=0)
    runs = [
        run
        for run in demo_lab.db.task_result_history.find(query)
        if _aware(run["start_at"]) >= since and run.get("excluded") is not True
    ]
    return since, runs


def test_a_window_counts_every_run_by_status_and_lists_its_executions(call: Call, demo_lab: Any) -> None:
    since, runs = _window(demo_lab, 3)
    result = call("search_task_results", since=since.isoformat(), last_n=3)
    assert result["unit"] == "task results"
    assert result["total"] == len(runs) > 50
    assert result["status_counts"] == dict(Counter(r["status"] for r in runs))
    failed = Counter(r["name"] for r in runs if r["status"] == "failed")
    assert {row[0]: row[1] for row in result["failures"]["rows"]} == dict(failed)
    started = sorted(
        (
            e
            for e in demo_lab.db.execution_history.find({"project_id": DEMO, "chip_id": "64Qv3"})
            if _aware(e["start_at"]) >= since
        ),
        key=lambda e: _aware(e["start_at"]),
        reverse=True,
    )
    assert result["executions"]["count"] == len(started)
    assert [row[0] for row in result["executions"]["rows"]] == [e["execution_id"] for e in started[:10]]
    assert len(result["rows"]) == 3  # the newest runs, as without a window
    newest = max(runs, key=lambda r: _aware(r["start_at"]))
    assert result["rows"][0][0] == newest["task_id"]


def test_group_by_ranks_qubits_tasks_and_executions(call: Call, demo_lab: Any) -> None:
    since, runs = _window(demo_lab, 5)
    failed = [r for r in runs if r["status"] == "failed"]
    for group_by, field in (("qid", "qid"), ("task", "name"), ("execution", "execution_id")):
        result = call("search_task_results", since=since.isoformat(), status="failed", group_by=group_by)
        counts = Counter(str(r[field]) for r in failed)
        assert result["total"] == len(failed)
        assert result["groups"]["total_groups"] == len(counts)
        rows = result["groups"]["rows"]
        assert [row[1] for row in rows] == sorted(counts.values(), reverse=True)[: len(rows)]
        assert all(counts[row[0]] == row[1] for row in rows)
        assert "rows" not in result  # grouped: the ranking, not the runs


def test_until_and_filters_narrow_the_window(call: Call, demo_lab: Any) -> None:
    since, runs = _window(demo_lab, 4)
    until = since + timedelta(days=2)
    inside = [r for r in runs if _aware(r["start_at"]) < until and r["name"] == "CheckT1"]
    result = call(
        "search_task_results", task_name="CheckT1", since=since.isoformat(), until=until.isoformat()
    )
    assert result["total"] == len(inside)
    assert set(result["window"]) == {"since", "until"}  # the zone is named once, on the output


def test_an_empty_window_is_a_result_and_a_wrong_time_an_error(call: Call, error: Callable[..., str]) -> None:
    empty = call("search_task_results", since="2001-01-01", until="2001-01-02")
    assert empty["count"] == 0
    assert empty["filters"]["chip_id"] == "64Qv3" and "since" in empty["filters"]
    assert error("search_task_results", since="last monday").startswith("'last monday' is not a time")
    assert error("search_task_results", since="2026-01-02", until="2026-01-01").startswith("Empty window")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7d", datetime(2026, 11, 20, 12, tzinfo=UTC)),
        ("24h", datetime(2026, 11, 26, 12, tzinfo=UTC)),
        ("2026-11-20", datetime(2026, 11, 19, 15, tzinfo=UTC)),  # Tokyo midnight
        ("2026-11-20T00:00Z", datetime(2026, 11, 20, tzinfo=UTC)),
    ],
)
def test_times_are_iso_or_a_span_back_from_now(text: str, expected: datetime) -> None:
    now = datetime(2026, 11, 27, 12, tzinfo=UTC)
    assert parse_moment(text, "Asia/Tokyo", now) == expected


def test_a_window_counts_the_runs_of_an_execution_that_started_days_before_it(
    mongo_db: Any, settings: Settings
) -> None:
    """A run belongs to the window by its own start: an execution that began three days before the
    window (a long scan, a resumed flow) still has its runs inside it counted."""
    ensure_indexes(mongo_db)
    day = timedelta(days=1)
    executions = [
        {"execution_id": "long", "start_at": START, "end_at": START + 4 * day, "status": "completed"},
        {"execution_id": "short", "start_at": START + 3 * day + timedelta(hours=5), "status": "completed"},
    ]
    mongo_db.execution_history.insert_many(
        [{"project_id": PROJECT, "chip_id": CHIP, "name": "1Q", **e} for e in executions]
    )
    runs = [upstream_run("0", 3 * 24 * 60 + 60 * hour, 40.0, execution_id="long") for hour in range(3)]
    runs[1]["status"] = "failed"
    runs.append(upstream_run("1", 3 * 24 * 60 + 6 * 60, 50.0, execution_id="short"))
    runs.append(upstream_run("1", 60, 50.0, execution_id="long"))  # before the window
    mongo_db.task_result_history.insert_many(runs)
    mongo_db.chip.insert_one(chip_doc())
    call = tool_caller(mongo_db, settings)
    since, until = (START + 3 * day - timedelta(hours=1)).isoformat(), (START + 4 * day).isoformat()
    result = call("search_task_results", since=since, until=until)
    assert result["total"] == 4 and result["status_counts"] == {"completed": 3, "failed": 1}
    assert [row[0] for row in result["executions"]["rows"]] == ["short"]  # the one that started inside
    grouped = call("search_task_results", since=since, until=until, group_by="execution")
    assert grouped["groups"]["rows"] == [["long", 3, 2, 1], ["short", 1, 1, 0]]


def test_a_ranking_says_what_it_cut_how_it_ranked_and_the_window_it_chose(call: Call, demo_lab: Any) -> None:
    result = call("search_task_results", group_by="qid", last_n=5)
    groups = result["groups"]
    assert len(groups["rows"]) == 5 < groups["total_groups"]
    assert groups["shown"] == f"5 of {groups['total_groups']} qids, ranked by results (most first)"
    assert result["window"]["default"] == "7d back from until (no since given)"
    assert "default" not in call("search_task_results", group_by="qid", since="3d")["window"]


def test_a_listing_counts_all_of_an_execution_and_says_what_it_cut(call: Call, demo_lab: Any) -> None:
    """ "How many failed in execution X?": the 10 rows shown are not the answer; the total is."""
    failed = Counter(
        run["execution_id"]
        for run in demo_lab.db.task_result_history.find({"project_id": DEMO, "status": "failed"})
        if run.get("excluded") is not True
    )
    busiest, count = failed.most_common(1)[0]
    result = call("search_task_results", execution_id=busiest, status="failed")
    assert count > 10 and len(result["rows"]) == 10
    assert result["total"] == count and result["status_counts"] == {"failed": count}
    assert result["shown"] == f"newest 10 of {count}"
    assert sum(row[1] for row in result["failures"]["rows"]) == count  # per task, over all of them
    anywhere = call("search_task_results", status="failed", last_n=3)
    assert anywhere["shown"] == "newest 3; status_counts of these; since/until counts all"
