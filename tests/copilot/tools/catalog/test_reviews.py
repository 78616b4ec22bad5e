"""AI reviews through the chat tools on the demo lab: ``search_task_results`` with ``review`` counts and
lists runs by their review's verdict, ``get_latest_task_result`` shows what the review said; every
number is checked against the raw runs, their notes read here with a plain pattern."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from .conftest import DEMO, Call

_DECISION = re.compile(r"^- Decision: `(\w+)`$", re.MULTILINE)


def _decision(run: dict[str, Any]) -> str | None:
    found = _DECISION.search((run.get("ai_review_note") or {}).get("content") or "")
    return found.group(1) if found else None


def _reviewed(demo_lab: Any, days: int = 7) -> tuple[datetime, list[dict[str, Any]]]:
    """The start of a ``days`` window and the kept runs inside it with a review state."""
    since = (datetime.now(UTC) - timedelta(days=days)).replace(minute=0, second=0, microsecond=0)
    query = {"project_id": DEMO, "chip_id": "64Qv3", "ai_review.status": {"$exists": True}}
    runs = [
        run
        for run in demo_lab.db.task_result_history.find(query)
        if run["start_at"].replace(tzinfo=UTC) >= since and run.get("excluded") is not True
    ]
    return since, runs


def test_flagged_reviews_are_counted_by_verdict_and_listed_with_reasons(call: Call, demo_lab: Any) -> None:
    since, runs = _reviewed(demo_lab)
    flagged = [run for run in runs if _decision(run) in ("REVIEW", "FAIL")]
    result = call("search_task_results", since=since.isoformat(), review="flagged", last_n=50)
    assert result["total"] == len(flagged) > 0
    assert result["review_counts"] == dict(Counter(_decision(run) for run in flagged))
    assert "executions" not in result  # a review count, not the window's executions
    cols = result["cols"]
    rows = [dict(zip(cols, row, strict=True)) for row in result["rows"]]
    assert {row["task_id"] for row in rows} == {run["task_id"] for run in flagged}
    assert all(row["review"] in ("REVIEW", "FAIL") and row["review_reason"] for row in rows)


def test_reviews_grouped_by_task_count_each_verdict(call: Call, demo_lab: Any) -> None:
    since, runs = _reviewed(demo_lab)
    verdicts = Counter((run["name"], _decision(run) or "pending") for run in runs)
    result = call("search_task_results", since=since.isoformat(), review="any", group_by="task")
    assert result["total"] == len(runs)
    cols = result["groups"]["cols"]
    assert cols[:2] == ["task_name", "results"] and {"PASS", "FAIL", "REVIEW", "pending"} <= set(cols[2:])
    for row in result["groups"]["rows"]:
        counts = dict(zip(cols[2:], row[2:], strict=True))
        assert counts == {verdict: verdicts[(row[0], verdict)] for verdict in cols[2:]}


def test_pending_reviews_are_those_requested_and_not_finished(call: Call, demo_lab: Any) -> None:
    _, runs = _reviewed(demo_lab)
    running = [run for run in runs if run["ai_review"]["status"] == "running"]
    result = call("search_task_results", review="pending")
    assert result["total"] == len(running) > 0
    assert result["review_counts"] == {"pending": len(running)}
    assert all(run.get("ai_review_note") is None for run in running)


def test_the_latest_result_carries_its_review(call: Call, demo_lab: Any) -> None:
    bad = demo_lab.report.chip(DEMO, "64Qv3").bad_qubits[0]
    result = call("get_latest_task_result", task_name="CheckT1", qid=bad)
    stored = demo_lab.db.task_result_history.find_one({"project_id": DEMO, "task_id": result["task_id"]})
    note = stored["ai_review_note"]["content"]
    review = result["ai_review"]
    assert review["decision"] == _decision(stored) == "REVIEW"
    assert f"- Human label suggestion: `{review['label']}`" in note
    assert f"- Primary reason: {review['reason']}" in note
    assert review["needs_review"] == "t1"


def test_a_run_without_a_review_shows_none(call: Call) -> None:
    result = call("search_task_results", task_name="X90InterleavedRandomizedBenchmarking", last_n=3)
    cols = result["cols"]
    assert "review" not in cols or all(row[cols.index("review")] is None for row in result["rows"])
