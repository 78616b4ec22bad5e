"""Answer-first outputs of the chip-wide tools, checked against values computed here from the raw
documents with plain pymongo queries and the thresholds written out as inequalities (never through
the tool code, ``qdash.copilot.scoring`` or ``overview``)."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from qdash.copilot.tools.spec import ToolContext
from qdash.copilot.tools.wrappers.data_store import summarise
from qdash.settings import Settings
from tests.support.turn_tools import one_turn

from .conftest import DEMO, Call, completed_runs, run_tool

CHIP = "64Qv3"


def _round4(value: float) -> float | int:
    """4 significant figures, written independently of the tools' ``sig4``."""
    rounded = float(f"{value:.4g}")
    return int(rounded) if rounded.is_integer() else rounded


def _utc(moment: str | datetime) -> datetime:
    parsed = datetime.fromisoformat(moment) if isinstance(moment, str) else moment
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _t1_grade(value: float) -> str:
    """Default scoring for t1 (μs, higher is better): excellent ≥ 100, good ≥ 50, bad < 20."""
    if value >= 100:
        return "excellent"
    if value >= 50:
        return "good"
    return "bad" if value < 20 else "fair"


def _current(db: Any, name: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for doc in db.qubit.find({"project_id": DEMO, "chip_id": CHIP}):
        value = (doc.get("data") or {}).get(name, {}).get("value")
        if isinstance(value, int | float) and math.isfinite(value):
            values[doc["qid"]] = value
    return values


def _by_grade(values: dict[str, float]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for qid in sorted(values, key=int):
        grouped.setdefault(_t1_grade(values[qid]), []).append(qid)
    return grouped


def _history(
    db: Any, name: str, last_n: int, *, newest_cooldown: bool = False
) -> dict[str, list[tuple[Any, float]]]:
    """Newest ``last_n`` completed values per qubit, oldest first, straight from the history (only
    those of the qubit's newest cool-down when ``newest_cooldown``: where a trend is computed)."""
    runs: dict[str, list[tuple[Any, float]]] = {}
    cycles: dict[str, str] = {}
    for doc in completed_runs(db, name):
        points = runs.setdefault(doc["qid"], [])
        value = doc["output_parameters"][name]["value"]
        newest = cycles.setdefault(doc["qid"], doc["cooldown_id"])
        if len(points) < last_n and (not newest_cooldown or doc["cooldown_id"] == newest):
            points.append((doc["start_at"], value))
    return {qid: points[::-1] for qid, points in runs.items()}


def _small_budget(settings: Settings, chars: int) -> Settings:
    return settings.model_copy(
        update={"tools": settings.tools.model_copy(update={"answer_table_chars": chars})}
    )


def test_chip_summary_shows_every_qubit_and_names_the_bad_ones(call: Call, demo_lab: Any) -> None:
    result = call("get_chip_summary", param_names=["t1", "t2_echo"])
    t1, t2 = _current(demo_lab.db, "t1"), _current(demo_lab.db, "t2_echo")
    assert result["table"]["cols"] == ["qid", "t1", "t2_echo"]
    expected_rows = [
        [qid, _round4(t1[qid]) if qid in t1 else None, _round4(t2[qid]) if qid in t2 else None]
        for qid in sorted(set(t1) | set(t2), key=int)
    ]
    assert result["table"]["rows"] == expected_rows and len(expected_rows) == 64
    assert result["grades"]["t1"] == _by_grade(t1)
    assert result["grades"]["t1"]["bad"], "the demo chip has a qubit with a bad T1"
    assert result["statistics"]["t1"]["unit"] == "μs"
    assert "extremes" not in result


def test_chip_summary_over_the_budget_ranks_extremes_and_names_bad_and_fair(
    demo_lab: Any, settings: Settings
) -> None:
    ctx = ToolContext(
        db=demo_lab.db, project_id=DEMO, username="alice", settings=_small_budget(settings, 200)
    )
    result = run_tool(ctx, "get_chip_summary", {"param_names": ["t1"]})
    t1 = _current(demo_lab.db, "t1")
    assert "table" not in result
    lowest = sorted(t1.items(), key=lambda item: (item[1], int(item[0])))[:5]
    assert result["extremes"]["t1"]["lowest"] == [[qid, _round4(v)] for qid, v in lowest]
    assert result["extremes"]["t1"]["highest"][0] == [max(t1, key=t1.__getitem__), _round4(max(t1.values()))]
    grades = _by_grade(t1)
    assert result["grades"]["t1"]["bad"] == grades["bad"]
    assert result["grades"]["t1"]["good"] == {"count": len(grades["good"])}


def test_chip_timeseries_ranks_drops_and_rises_with_dates(call: Call, demo_lab: Any) -> None:
    result = call("get_chip_parameter_timeseries", parameter_name="t1", last_n=10)
    history = _history(demo_lab.db, "t1", 10)
    changes = []
    for qid, points in _history(demo_lab.db, "t1", 10, newest_cooldown=True).items():
        (first_at, first), (last_at, last) = points[0], points[-1]
        changes.append(((last - first) / abs(first) * 100, qid, first, last, first_at, last_at))
    changes.sort(key=lambda c: (c[0], int(c[1])))
    drops = result["changes"]["largest_drops"]
    assert result["changes"]["cols"] == ["qid", "from", "to", "change_pct", "from_at", "to_at"]
    assert [row[0] for row in drops] == [c[1] for c in changes[:5]]
    pct, qid, first, last, first_at, last_at = changes[0]
    assert drops[0][1:4] == [_round4(first), _round4(last), round(pct, 1)]
    assert [_utc(drops[0][4]), _utc(drops[0][5])] == [_utc(first_at), _utc(last_at)]
    degrading = demo_lab.report.chip(DEMO, CHIP).t1_degrading_qubit
    assert str(degrading) in [row[0] for row in drops]
    rises = result["changes"]["largest_rises"]
    assert [row[0] for row in rises] == [c[1] for c in changes[::-1][:5] if c[0] > 0]
    latest = {qid: points[-1][1] for qid, points in history.items()}
    assert result["grades"] == _by_grade(latest)
    assert result["table"]["cols"] == ["qid", "latest", "change_pct", "n"]
    assert [row[0] for row in result["table"]["rows"]] == sorted(history, key=int)
    assert [row[3] for row in result["table"]["rows"]] == [len(history[q]) for q in sorted(history, key=int)]
    times = [t for points in history.values() for t, _ in points]
    assert _utc(result["window"]["from"]) == _utc(min(times))
    assert _utc(result["window"]["to"]) == _utc(max(times))
    assert result["unit"] == "μs"


def test_chip_timeseries_model_view_keeps_the_answer(call: Call) -> None:
    """What the data-store summary hands the model: the table, grades and changes survive."""
    result = call("get_chip_parameter_timeseries", parameter_name="t1", last_n=10)
    view = summarise(result, "t1", ["t1"])
    assert view["table"] == result["table"] and view["changes"] == result["changes"]
    assert view["grades"] == result["grades"] and view["timeseries"]["_rows"] == len(result["timeseries"])
    assert len(json.dumps(view, ensure_ascii=False)) < 9000


def test_heatmap_lists_every_qubit_in_display_units_and_grades(call: Call, demo_lab: Any) -> None:
    result = call("generate_chip_heatmap", metric_name="t1")
    latest = {qid: points[-1][1] for qid, points in _history(demo_lab.db, "t1", 1).items()}
    assert result["unit"] == "μs"
    assert result["table"]["rows"] == [[qid, _round4(latest[qid])] for qid in sorted(latest, key=int)]
    assert result["grades"] == _by_grade(latest)
    fidelity = call("generate_chip_heatmap", metric_name="x90_gate_fidelity")
    assert fidelity["unit"] == "%" and all(90 < row[1] <= 100 for row in fidelity["table"]["rows"])


def test_compare_grades_the_compared_qubits(call: Call, demo_lab: Any) -> None:
    qids = ["0", "1", "2", "3"]
    result = call("compare_qubits", qids=qids, param_names=["t1"])
    t1 = {q: v for q, v in _current(demo_lab.db, "t1").items() if q in qids}
    assert result["grades"]["t1"] == _by_grade(t1)


def test_search_summarises_failures(call: Call, demo_lab: Any, error: Callable[..., str]) -> None:
    result = call("search_task_results", last_n=50)
    query = {"project_id": DEMO, "chip_id": CHIP}
    newest = list(demo_lab.db.task_result_history.find(query).sort("start_at", -1).limit(50))
    assert result["status_counts"] == dict(Counter(doc["status"] for doc in newest))
    failed = call("search_task_results", status="failed", last_n=50)
    docs = list(
        demo_lab.db.task_result_history.find({**query, "status": "failed"}).sort("start_at", -1).limit(50)
    )
    by_task = Counter(doc["name"] for doc in docs)
    rows = failed["failures"]["rows"]
    assert {row[0]: row[1] for row in rows} == dict(by_task)
    first = rows[0]
    assert first[2] == sorted({d["qid"] for d in docs if d["name"] == first[0]}, key=int)


def test_single_qubit_parameters_carry_their_grade_and_chip_tools_their_thresholds(
    call: Call, demo_lab: Any
) -> None:
    """The chat prompt no longer lists thresholds: every graded value arrives with its grade."""
    params = call("get_qubit_params", qid="16")["params"]
    t1 = _current(demo_lab.db, "t1")["16"]
    assert params["t1"]["grade"] == _t1_grade(t1)
    assert "grade" not in params.get("qubit_frequency", {})  # no threshold, no grade
    summary = call("get_chip_summary", param_names=["t1", "anharmonicity"])
    assert summary["thresholds"] == {
        "t1": "excellent ≥ 100, good ≥ 50, bad < 20",
        "anharmonicity": "excellent ≤ -320, good ≤ -280, bad > -250",  # MHz, like the values
    }
    heatmap = call("generate_chip_heatmap", metric_name="x90_gate_fidelity")
    assert heatmap["thresholds"] == "excellent ≥ 99.9, good ≥ 99.5, bad < 98"  # the table's unit, %


def test_current_state_tools_never_read_the_run_history(
    call: Call, demo_lab: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Heatmap latest, chip summary and compare cost O(qubits), whatever the history length: the
    only reads of task_result_history are by task id as ``_id`` (the exclusion check of the values
    shown), never a search of the history."""
    from qdash.repositories.scope import ProjectScope

    queried: list[tuple[str, Any]] = []
    real = ProjectScope.iter_find

    def recording(self: ProjectScope, collection: str, query: Any, *args: Any, **kwargs: Any) -> Any:
        queried.append((collection, query))
        return real(self, collection, query, *args, **kwargs)

    monkeypatch.setattr(ProjectScope, "iter_find", recording)
    heatmap = call("generate_chip_heatmap", metric_name="t1")
    call("get_chip_summary", param_names=["t1"])
    call("compare_qubits", qids=["0", "1"], param_names=["t1"])
    history = [query for collection, query in queried if collection == "task_result_history"]
    assert history and all(set(query["_id"]) == {"$in"} for query in history)
    assert "qubit" in {collection for collection, _ in queried}
    assert heatmap["table"]["rows"] == [
        [q, _round4(v)] for q, v in sorted(_current(demo_lab.db, "t1").items(), key=lambda i: int(i[0]))
    ]


async def test_a_chip_summary_of_every_parameter_reaches_the_model_within_the_cap(
    small_lab: Any, settings: Settings
) -> None:
    """Above the table budget the whole-chip summary still answers (grades, ranked extremes of the
    scored parameters first, statistics) inside ``tools.max_result_chars``, never 'Result too large'."""
    from qdash.copilot.service import CopilotDataService

    service = CopilotDataService(ToolContext(small_lab, DEMO, "alice", settings))
    tools = one_turn(service)
    shown = json.loads((await tools["get_chip_summary"]({"chip_id": None, "param_names": None})).model_text)
    assert "error" not in shown and "table" not in shown
    assert next(iter(shown["extremes"])) in settings.scoring and "t1" in shown["extremes"]
    lowest = sorted(_current(small_lab, "t1").items(), key=lambda item: (item[1], int(item[0])))[0]
    assert shown["extremes"]["t1"]["lowest"][0] == [lowest[0], _round4(lowest[1])]
    assert shown["grades"]["t1"]["bad"] == _by_grade(_current(small_lab, "t1"))["bad"]
    assert len(out_text := json.dumps(shown, ensure_ascii=False, separators=(",", ":"))) <= 12_000, len(
        out_text
    )
