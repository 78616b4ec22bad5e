"""CopilotDataService on the demo lab: the catalogue tools, project scope, a session across workers."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from pymongo.database import Database

from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.catalog import INVESTIGATION, SPECS
from qdash.copilot.tools.output import output_data
from qdash.copilot.tools.spec import ToolContext
from qdash.copilot.tools.wrappers.data_store import COLLECTION
from qdash.engine.tool import Tool
from qdash.settings import Settings
from tests.support.turn_tools import OneTurn, one_turn


def _tools(service: CopilotDataService) -> OneTurn:
    return one_turn(service)


def test_builds_every_tool_in_order(small_lab: Database[dict[str, Any]], settings: Settings) -> None:
    tools = CopilotDataService(ToolContext(small_lab, "proj-demo", "alice", settings)).tools()
    assert [t.name for t in tools] == [s.name for s in SPECS if INVESTIGATION not in s.tags]
    assert all(isinstance(t, Tool) and t.label and t.parameters["type"] == "object" for t in tools)


async def test_project_scope_comes_from_the_service(
    small_lab: Database[dict[str, Any]], settings: Settings
) -> None:
    demo = _tools(CopilotDataService(ToolContext(small_lab, "proj-demo", "alice", settings)))
    other = _tools(CopilotDataService(ToolContext(small_lab, "proj-other", "bob", settings)))
    args = {"qid": "Q16", "chip_id": "64Qv3"}
    a = json.loads((await demo["get_qubit_params"](args)).model_text)
    b = json.loads((await other["get_qubit_params"](args)).model_text)
    assert a["qid"] == b["qid"] == "16"
    assert a["params"] != b["params"]  # same chip id, two projects, two different qubits
    sneaky = await demo["get_qubit_params"]({**args, "project_id": "proj-other"})
    assert sneaky.is_error and "project_id" in json.loads(sneaky.model_text)["error"]
    nobody = _tools(CopilotDataService(ToolContext(small_lab, "proj-none", "eve", settings)))
    assert (await nobody["get_qubit_params"]({"qid": "16", "chip_id": None})).is_error


async def test_chip_timeseries_is_stored_and_summarised(
    small_lab: Database[dict[str, Any]], settings: Settings
) -> None:
    session = f"svc-{uuid.uuid4().hex}"  # the lab is shared: write only this session's rows
    try:
        service = CopilotDataService(
            ToolContext(small_lab, "proj-demo", "alice", settings, session_id=session)
        )
        out = await _tools(service)["get_chip_parameter_timeseries"](
            {"parameter_name": "t1", "chip_id": None, "qids": None, "last_n": None}
        )
        summary = json.loads(out.model_text)
        assert summary["data_key"] == "t1" and summary["timeseries"]["_rows"] > 64
        assert summary["qubits"]["_schema"][0] == "qid"
        worker_b = CopilotDataService(
            ToolContext(small_lab, "proj-demo", "alice", settings, session_id=session)
        )
        full = worker_b.data_store().get("t1")
        assert len(full["timeseries"]) == summary["timeseries"]["_rows"]
        assert len(summary["table"]["rows"]) == 64 and len(out.model_text) < 4000
    finally:
        small_lab[COLLECTION].delete_many({"session_id": session})


async def test_real_rate_limit_and_heatmap(small_lab: Database[dict[str, Any]], settings: Settings) -> None:
    service = CopilotDataService(ToolContext(small_lab, "proj-demo", "alice", settings))
    tools = _tools(service)
    for qid in ("0", "1", "2"):
        await tools["get_parameter_timeseries"](
            {"parameter_name": "t1", "qid": qid, "chip_id": None, "last_n": 3}
        )
    fourth = json.loads(
        (await tools["get_parameter_timeseries"]({"parameter_name": "t1", "qid": "3"})).model_text
    )
    assert fourth["error"].startswith(
        "Too many get_parameter_timeseries calls (4). Use get_chip_parameter_timeseries"
    )
    heat = await tools["generate_chip_heatmap"](
        {"metric_name": "t1", "chip_id": None, "selection_mode": None}
    )
    body = json.loads(heat.model_text)
    assert not heat.is_error and body["chart_id"] == "c1" and "chart" not in body
    charts = output_data(heat).charts
    assert charts and charts[0]["data"][0]["type"] == "heatmap"
    assert tools.turn.charts == charts


async def test_whole_chip_notes_are_cut_to_their_first_labels_never_dropped(
    small_lab: Database[dict[str, Any]], settings: Settings
) -> None:
    """Issue 12: a whole-chip note is larger than a tool result may be; every requested note stays,
    each cut to its first labels with a count of the rest and the data key of the full notes."""
    session = f"svc-{uuid.uuid4().hex}"
    query = {"project_id": "proj-demo", "chip_id": "64Qv3"}
    raw = list(small_lab["calibration_note"].find(query).sort("timestamp", -1).limit(2))
    assert len(json.dumps(raw[0]["note"], default=str)) > settings.tools.max_result_chars
    try:
        service = CopilotDataService(
            ToolContext(small_lab, "proj-demo", "alice", settings, session_id=session)
        )
        tool = _tools(service)["get_calibration_notes"]
        for last_n in (1, 2):
            out = await tool(
                {"chip_id": None, "execution_id": None, "task_id": None, "qid": None, "last_n": last_n}
            )
            shown = json.loads(out.model_text)
            assert len(out.model_text) <= settings.tools.max_result_chars
            assert shown["_truncated"]["data_key"] == "calibration_notes"
            notes = shown["notes"]["rows"] if isinstance(shown["notes"], dict) else shown["notes"]
            assert len(notes) == last_n
            for entry, doc in zip(notes, raw, strict=False):
                note = entry[-1] if isinstance(entry, list) else entry["note"]
                for key, entries in doc["note"].items():
                    kept = note[key]
                    first = sorted(entries, key=lambda label: [int(n) for n in re.findall(r"\d+", label)])[
                        : len(kept)
                    ]
                    assert list(kept) == first and len(kept) >= 1
                    label = first[0]
                    assert kept[label] == pytest.approx(entries[label], rel=1e-3)  # 4 s.f. in the view
                    assert len(kept) + note["_more"].get(key, 0) == len(entries)
        stored = service.data_store().get("calibration_notes")
        assert stored["notes"][0]["note"] == raw[0]["note"]
    finally:
        small_lab[COLLECTION].delete_many({"session_id": session})
