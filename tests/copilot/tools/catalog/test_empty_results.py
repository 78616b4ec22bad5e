"""A lab whose chip has no qubits, runs, notes or versions yet: every data tool answers with an
empty result (count 0 and the filters it used), never an error, so the dashboards' traces do not
mark the step failed and the model does not retry a call that was right. Wrong arguments (an
unknown qubit or entity) stay errors."""

from __future__ import annotations

from typing import Any

import pytest

from qdash.copilot.tools.catalog import SPECS
from qdash.copilot.tools.spec import ToolError
from qdash.settings import Settings

from .conftest import sample_arguments
from .upstream_rows import CHIP, chip_doc, tool_caller

VALUES = {"qid": "0", "task_name": "CheckT1", "parameter_name": "t1", "metric_name": "t1"}
NOT_EMPTY = {
    "get_qubit_params": "an unknown qubit is a wrong argument (below)",
    "compare_qubits": "unknown qubits are wrong arguments",
    "get_provenance_lineage_graph": "an unknown entity is a wrong argument",
    "list_available_parameters": "an empty list (below)",
    "get_chip_topology": "the chip's layout, whatever ran on it",
    "get_task_knowledge": "the packaged knowledge, not the lab's data",
    "execute_python_analysis": "the sandbox's output over the data store",
}
"""The tools that do not answer an empty lab with ``{"count": 0, "filters": …}``, and why."""
CHOSEN: list[tuple[str, dict[str, Any]]] = [
    ("search_task_results", {"status": "failed", "execution_id": "e-1"}),
    ("get_execution_history", {"tags": ["1Q"]}),
    ("get_coupling_params", {"coupling_id": "0-1"}),
    ("get_coupling_params", {"param_names": ["zx90_gate_fidelity"]}),
    ("get_calibration_notes", {"task_id": "t-1"}),
    ("get_degradation_report", {"within_days": 7}),
]
"""Calls beside each data tool's required arguments alone with filters of their own."""
EMPTY_CALLS = [
    *((s.name, sample_arguments(s, VALUES)) for s in SPECS if s.name not in NOT_EMPTY),
    *CHOSEN,
]
"""Each data tool with arguments that are right but match nothing; the filters echo them."""


@pytest.fixture
def call(mongo_db: Any, settings: Settings) -> Any:
    mongo_db.chip.insert_one(chip_doc())
    return tool_caller(mongo_db, settings)


@pytest.mark.parametrize(("tool", "args"), EMPTY_CALLS, ids=[c[0] for c in EMPTY_CALLS])
def test_nothing_found_is_a_result_with_the_filters(call: Any, tool: str, args: dict[str, Any]) -> None:
    result = call(tool, **args)
    assert result["count"] == 0
    assert result["filters"] == {"chip_id": CHIP, **args}


def test_not_empty_names_registered_tools() -> None:
    assert set(NOT_EMPTY) <= {s.name for s in SPECS}  # no stale entries


def test_no_parameters_is_an_empty_list(call: Any) -> None:
    assert call("list_available_parameters", qid="0") == {
        "chip_id": CHIP,
        "qid": "0",
        "parameter_names": [],
        "count": 0,
    }


def test_wrong_arguments_stay_errors(call: Any) -> None:
    with pytest.raises(ToolError, match="Qubit 0 not found"):
        call("get_qubit_params", qid="0")
    with pytest.raises(ToolError, match="Unknown task_name"):
        call("search_task_results", task_name="CheckT1x")
    with pytest.raises(ToolError, match="Chip NOPE not found"):
        call("get_execution_history", chip_id="NOPE")
