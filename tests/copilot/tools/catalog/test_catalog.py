"""The catalogue as a whole: the names in tools.md order, labels, flags, schema budget,
and descriptions that name every field the tools return."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from qdash.copilot.tools.catalog import INVESTIGATION, SPECS
from qdash.copilot.tools.schema import strict_parameters, tool_definition

from .conftest import DEMO_VALUES, SPEC_BY_NAME, Call, sample_arguments

TOOLS_MD = Path(__file__).resolve().parents[4] / "docs" / "tools.md"
LABEL = re.compile(r"[A-Z][a-z]+ing( [\w-]+){1,4}")
"""What the user sees while a tool runs: "Fetching qubit parameters", "Comparing qubits"."""
UPSTREAM_SCHEMA_CHARS = 12_627


def documented_tools() -> list[str]:
    """The names in docs/tools.md's table of the tools (``| 1 | `get_qubit_params` | …``), in order."""
    table = TOOLS_MD.read_text(encoding="utf-8").split("## The tools", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| \d+ \| `(\w+)` \|", table, flags=re.MULTILINE)


def test_names_order_labels_and_flags() -> None:
    assert [spec.name for spec in SPECS] == documented_tools()
    labels = [spec.label for spec in SPECS]
    assert [label for label in labels if not LABEL.fullmatch(label)] == []
    assert len(set(labels)) == len(labels)
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


NO_SANDBOX = {"execute_python_analysis"}
"""Tools these direct calls cannot run (the sandbox's own suite covers its output)."""
CHOSEN: dict[str, dict[str, Any]] = {
    "get_chip_summary": {"param_names": ["t1"]},
    "get_coupling_params": {"qubit_id": "5"},
    "compare_qubits": {"qids": ["1", "2"], "param_names": ["t1"]},
    "search_task_results": {"status": "failed"},
    "get_calibration_notes": {"last_n": 1},
    "get_chip_parameter_timeseries": {"parameter_name": "t1", "last_n": 2},
    "get_degradation_report": {"param_names": ["t1"]},
}
"""Calls chosen instead of a tool's required arguments alone (``sample_arguments``)."""


def _named(description: str) -> set[str]:
    return set(re.findall(r"[a-z_][a-z0-9_]*", description))


def test_descriptions_name_the_returned_fields(call: Call, demo_lab: Any) -> None:
    lineage = call("get_parameter_lineage", parameter_name="t1", qid="16", last_n=1)
    entity = lineage["rows"][0][-1]
    newest = call("get_execution_history", last_n=2)["rows"]
    detail = {"execution_id": newest[0][0]}
    chosen = {**CHOSEN, "get_provenance_lineage_graph": {"entity_id": entity, "max_depth": 1}}
    for name, args in [
        *(
            (s.name, chosen[s.name] if s.name in chosen else sample_arguments(s, DEMO_VALUES))
            for s in SPECS
            if s.name not in NO_SANDBOX
        ),
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
        fields = set(result) - {"chart"}  # the analysis tool's chart: null (its figures go to the user)
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
