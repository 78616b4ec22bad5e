"""Our readers on the upstream-shaped lab (``tests.support.upstream_lab``): the excluded CheckT1 on
qid 3 (2.1 μs) is absent from every statistic and series, the provenance graph of a task-produced
value has all its recorded relations, notes read ``user_note`` and lab-local Qubex times, and a
series across the two cool-downs says so."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from qdash.copilot.tools.spec import ToolContext
from qdash.settings import Settings, load_settings
from tests.support.upstream_lab import EXCLUDED, UpstreamLab, task_id
from tests.support.upstream_lab.spec import EXCLUDED_T1, USER_NOTE, USER_NOTE_TEXT

from .catalog.conftest import run_tool

Call = Callable[..., dict[str, Any]]


@pytest.fixture
def call(upstream_lab: UpstreamLab, settings: Settings) -> Call:
    ctx = ToolContext(
        db=upstream_lab.db, project_id=upstream_lab.project_id, username="alice", settings=settings
    )
    return lambda name, **args: run_tool(ctx, name, args)


def _column(result: dict[str, Any], name: str) -> list[Any]:
    return [row[result["cols"].index(name)] for row in result["rows"]]


def test_the_excluded_measurement_is_in_no_statistic_or_series(call: Call) -> None:
    qid = EXCLUDED[2]
    series = call("get_parameter_timeseries", parameter_name="t1", qid=qid, last_n=100)
    assert EXCLUDED_T1 not in _column(series, "value") and series["excluded"] == 1
    history = call("get_task_history", task_name="CheckT1", qid=qid, last_n=50)
    assert EXCLUDED_T1 not in _column(history, "t1") and history["excluded"] == 1
    latest = call("get_latest_task_result", task_name="CheckT1", qid=qid)
    assert latest["output_parameters"]["t1"]["value"] != EXCLUDED_T1 and latest["excluded"] == 1
    found = call("search_task_results", task_name="CheckT1", qid=qid, last_n=50)
    assert task_id(*EXCLUDED) not in _column(found, "task_id") and found["excluded"] == 1
    chip = call("get_chip_parameter_timeseries", parameter_name="t1", last_n=100)
    assert EXCLUDED_T1 not in [point["v"] for point in chip["timeseries"]] and chip["excluded"] == 1
    assert chip["statistics"]["min"][1] > EXCLUDED_T1
    for mode in ("latest", "best", "average"):
        statistics = call("generate_chip_heatmap", metric_name="t1", selection_mode=mode)["statistics"]
        assert statistics["min"][1] > EXCLUDED_T1 and statistics["excluded"] == 1, mode
    for params in (["t1"], None):  # one parameter, and every parameter of the chip
        summary = call("get_chip_summary", param_names=params)
        assert EXCLUDED_T1 not in [row.get("t1") for row in summary["qubits"]], params
        assert summary["statistics"]["t1"]["min"][1] > EXCLUDED_T1, params
        assert qid in summary["statistics"]["t1"]["last_good_for"], params  # its last good value
    current = call("get_qubit_params", qid=qid)["params"]["t1"]  # the document still holds it: marked
    assert current["value"] == EXCLUDED_T1 and current["invalid"].startswith("excluded: TLS spike")
    assert current["last_good"]["value"] > EXCLUDED_T1 and "grade" not in current


def _recorded_ancestry(db: Any, project_id: str, origin: str) -> set[tuple[str, str, str]]:
    """Every relation reachable from ``origin`` backwards in PROV direction, read straight from the
    collection (by source), as the recorder stored it."""
    found: set[tuple[str, str, str]] = set()
    frontier = {origin}
    while frontier:
        query = {"project_id": project_id, "source_id": {"$in": sorted(frontier)}}
        relations = list(db.provenance_relations.find(query))
        new = {(r["relation_type"], r["source_id"], r["target_id"]) for r in relations} - found
        found |= new
        frontier = {target for _, _, target in new}
    return found


def test_the_graph_of_a_task_produced_value_has_all_its_recorded_relations(
    upstream_lab: UpstreamLab, call: Call
) -> None:
    origin = f"t1:5:20260227-000:{task_id('20260227-000', 'CheckT1', '5')}"
    recorded = _recorded_ancestry(upstream_lab.db, upstream_lab.project_id, origin)
    assert {kind for kind, _, _ in recorded} == {"wasGeneratedBy", "used", "wasDerivedFrom"}
    graph = call("get_provenance_lineage_graph", entity_id=origin, max_depth=20)
    edges = {(e["relation"], e["source"], e["target"]) for e in graph["edges"]}
    assert recorded <= edges
    recorded_nodes = {node for _, source, target in recorded for node in (source, target)}
    assert {node["id"] for node in graph["nodes"]} == recorded_nodes and "truncated" not in graph


def test_user_note_and_lab_local_note_times(upstream_lab: UpstreamLab, tmp_path: Any) -> None:
    def notes(zone: str) -> dict[str, Any]:
        settings = load_settings(
            database={"data_dir": str(tmp_path), "mongo_uri": None}, lab={"timezone": zone}
        )
        ctx = ToolContext(upstream_lab.db, upstream_lab.project_id, "alice", settings)
        return run_tool(ctx, "get_calibration_notes", {"qid": USER_NOTE[2], "last_n": 2})

    tokyo, utc = notes("Asia/Tokyo"), notes("UTC")
    assert [n["content"] for n in tokyo["user_notes"]] == [USER_NOTE_TEXT]
    entries = [
        (tokyo_entry["timestamp"], utc_entry["timestamp"])
        for key, by_label in tokyo["notes"][0]["note"].items()
        for label, tokyo_entry in by_label.items()
        if isinstance(tokyo_entry, dict) and "timestamp" in tokyo_entry
        for utc_entry in [utc["notes"][0]["note"][key][label]]
    ]
    assert entries
    for tokyo_shown, utc_shown in entries:  # read in Tokyo, shown in UTC: 9 h earlier
        assert int(utc_shown[-5:-3]) == (int(tokyo_shown[-5:-3]) + 9) % 24


def test_a_series_across_cooldowns_says_so(call: Call) -> None:
    series = call("get_parameter_timeseries", parameter_name="t1", qid="4", last_n=100)
    cycles = [c["cooldown_id"] for c in series["cooldowns"]]
    assert cycles[-2:] == ["CD-2026-01", "CD-2026-02"]
    newest = call(
        "get_parameter_timeseries", parameter_name="t1", qid="4", last_n=100, cooldown_id="CD-2026-02"
    )
    assert set(_column(newest, "cooldown_id")) == {"CD-2026-02"}


def test_lineage_keeps_the_excluded_version_and_marks_it(call: Call) -> None:
    lineage = call("get_parameter_lineage", parameter_name="t1", qid=EXCLUDED[2], last_n=50)
    marked = [row for row in lineage["rows"] if row[lineage["cols"].index("excluded")]]
    assert [row[lineage["cols"].index("value")] for row in marked] == [EXCLUDED_T1]
    assert lineage["excluded"] == 1
