"""The catalogue as a whole: the twenty names in tools.md order, labels, flags, schema budget,
and descriptions that name every field the tools return."""

from __future__ import annotations

import json
import re
from typing import Any

from qdash.copilot.tools.catalog import INVESTIGATION, SPECS
from qdash.copilot.tools.schema import strict_parameters, tool_definition

from .conftest import SPEC_BY_NAME, Call

LABELS = {
    "get_qubit_params": "Fetching qubit parameters",
    "get_latest_task_result": "Fetching latest task result",
    "get_task_history": "Fetching task history",
    "get_parameter_timeseries": "Fetching parameter timeseries",
    "execute_python_analysis": "Executing Python analysis",
    "get_chip_summary": "Fetching chip summary",
    "get_coupling_params": "Fetching coupling parameters",
    "get_execution_history": "Fetching execution history",
    "compare_qubits": "Comparing qubits",
    "get_chip_topology": "Fetching chip topology",
    "search_task_results": "Searching task results",
    "get_calibration_notes": "Fetching calibration notes",
    "get_parameter_lineage": "Fetching parameter lineage",
    "get_provenance_lineage_graph": "Fetching provenance lineage graph",
    "generate_chip_heatmap": "Generating chip heatmap",
    "get_chip_parameter_timeseries": "Fetching chip-wide parameter timeseries",
    "list_available_parameters": "Listing available parameters",
    "get_task_knowledge": "Reading task knowledge",
    "get_degradation_report": "Building degradation report",
    "suggest_recalibration": "Suggesting recalibration",
}
UPSTREAM_SCHEMA_CHARS = 12_627


def test_names_order_labels_and_flags() -> None:
    assert [spec.name for spec in SPECS] == list(LABELS)
    assert {spec.name: spec.label for spec in SPECS} == LABELS
    assert [s.name for s in SPECS if INVESTIGATION in s.tags] == [
        "get_degradation_report",
        "suggest_recalibration",
    ]
    stored = {
        "get_chip_summary",
        "get_chip_parameter_timeseries",
        "get_degradation_report",
        "suggest_recalibration",
    }
    assert {s.name for s in SPECS if s.stored} == stored
    assert {s.name for s in SPECS if s.rate_limited} == {"get_parameter_timeseries"}
    assert SPEC_BY_NAME["get_chip_parameter_timeseries"].key_for({"parameter_name": "t1"}) == "t1"
    assert SPEC_BY_NAME["get_chip_summary"].key_for({}) == "chip_summary"


def test_every_integer_is_bounded_and_schemas_beat_upstreams_size() -> None:
    total = 0
    for spec in SPECS:
        parameters = strict_parameters(spec.args_model, spec.name)
        for name, prop in parameters["properties"].items():
            if "integer" in json.dumps(prop.get("type")):
                # bounds as text ("1-50, default 10"): fewer tokens, still enforced by the args model
                assert re.match(r"\d+-\d+", prop.get("description", "")), (spec.name, name)
        total += len(json.dumps(tool_definition(spec.name, spec.description, parameters), ensure_ascii=False))
    assert total < UPSTREAM_SCHEMA_CHARS


def _named(description: str) -> set[str]:
    return set(re.findall(r"[a-z_][a-z0-9_]*", description))


def test_descriptions_name_the_returned_fields(call: Call, demo_lab: Any) -> None:
    lineage = call("get_parameter_lineage", parameter_name="t1", qid="16", last_n=1)
    entity = lineage["rows"][0][-1]
    calls: dict[str, dict[str, Any]] = {
        "get_qubit_params": {"qid": "16"},
        "get_latest_task_result": {"task_name": "CheckT1", "qid": "16"},
        "get_task_history": {"task_name": "CheckT1", "qid": "16"},
        "get_parameter_timeseries": {"parameter_name": "t1", "qid": "16"},
        "get_chip_summary": {"param_names": ["t1"]},
        "get_coupling_params": {"qubit_id": "5"},
        "get_execution_history": {},
        "compare_qubits": {"qids": ["1", "2"], "param_names": ["t1"]},
        "get_chip_topology": {},
        "search_task_results": {"status": "failed"},
        "get_calibration_notes": {"last_n": 1},
        "get_parameter_lineage": {"parameter_name": "t1", "qid": "16"},
        "get_provenance_lineage_graph": {"entity_id": entity, "max_depth": 1},
        "generate_chip_heatmap": {"metric_name": "t1"},
        "get_chip_parameter_timeseries": {"parameter_name": "t1", "last_n": 2},
        "list_available_parameters": {},
        "get_task_knowledge": {"task_name": "CheckT1"},
        "get_degradation_report": {"param_names": ["t1"]},
        "suggest_recalibration": {},
    }
    newest = call("get_execution_history", last_n=2)["rows"]
    detail = {"execution_id": newest[0][0]}
    for name, args in [
        *calls.items(),
        ("get_execution_history", detail),
        ("get_execution_history", {**detail, "compare_to": newest[1][0]}),
    ]:
        result = call(name, **args)
        assert json.loads(json.dumps(result, allow_nan=False)) == result  # JSON-safe, no NaN
        spec = SPEC_BY_NAME[name]
        named = _named(spec.description)
        # Top-level fields must be named; columns and row keys reach the model in the output itself
        # (``cols``, compaction's cols/rows, or the data-store summary's ``_schema``), and so do the
        # table's own keys and the fields that echo an argument (``chip_id``, ``qid``): naming them
        # would cost tokens on every request and tell the model nothing.
        fields = set(result) - {"chart", "_attach"}  # figures and attachments go to the user, not the model
        fields -= {"t1", "_clamped"}  # parameter names are data, not schema
        fields -= {
            "units",
            "unit",
            "cols",
            "rows",
            "count",
            "status",
            "message",
            "shown",  # a note in words of what the rows are and what was cut
            *spec.args_model.model_fields,
        }
        assert fields <= named, (name, sorted(fields - named))
