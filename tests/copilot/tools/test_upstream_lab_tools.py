"""Every tool and the prompts' context builders on the upstream-shaped lab (after our start-up).

Each registered tool gets arguments a model would send about this lab (its required ones, the
others ``null``, unless chosen below); each must answer (no tool error, no
escaped exception) with JSON under the size cap. ``pytest -s`` prints the per-tool table for the
release note. The sandbox is a stand-in (the real pool has its own suite): what matters here is
that the stored series reach it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from qdash.copilot.analysis_context import gather_analysis_inputs
from qdash.copilot.prompts.analysis import ANALYSIS_PROMPT, render_analysis_context
from qdash.copilot.prompts.chat import chat_context_note
from qdash.copilot.prompts.knowledge import load_task_knowledge
from qdash.copilot.requests import AnalyzeRequest
from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.catalog import SPECS
from qdash.copilot.tools.executor import FAILURE_HINT
from qdash.copilot.tools.spec import ToolContext
from qdash.settings import Settings
from tests.api.api_helpers import EchoSandbox
from tests.support.turn_tools import one_turn
from tests.support.upstream_lab import UpstreamLab, task_id
from tests.support.upstream_lab.spec import PAIRS, PRE_PROJECT

from .catalog.conftest import sample_arguments

T1_Q5 = task_id("20260227-000", "CheckT1", "5")
VALUES: dict[str, Any] = {
    "qid": "Q05",
    "qids": ["3", "5"],
    "task_name": "CheckT1",
    "parameter_name": "t1",
    "metric_name": "t1",
    "code": "print(sorted(data))",
}
"""Every tool's required arguments, by name; the others are sent as ``null`` (``sample_arguments``)."""
CHOSEN: dict[str, dict[str, Any]] = {
    "get_latest_task_result": {"task_name": "CheckT1", "chip_id": None, "qid": "5"},
    "get_task_history": {"task_name": "CheckT1", "chip_id": None, "qid": "3", "last_n": 10},
    "get_parameter_timeseries": {"parameter_name": "t1", "chip_id": None, "qid": "3", "last_n": 10},
    "get_coupling_params": {"chip_id": None, "coupling_id": "1-0", "qubit_id": None, "param_names": None},
    "get_execution_history": {"chip_id": None, "status": None, "tags": None, "last_n": 10},
    "compare_qubits": {"chip_id": None, "qids": ["3", "5"], "param_names": ["t1", "qubit_frequency"]},
    "search_task_results": {
        "chip_id": None,
        "task_name": None,
        "qid": None,
        "status": "failed",
        "execution_id": None,
        "last_n": 10,
    },
    "get_calibration_notes": {
        "chip_id": None,
        "execution_id": None,
        "task_id": None,
        "qid": "5",
        "last_n": 5,
    },
    "get_parameter_lineage": {"parameter_name": "t1", "qid": "3", "chip_id": None, "last_n": 10},
    "get_provenance_lineage_graph": {
        "entity_id": f"t1:5:20260227-000:{T1_Q5}",
        "chip_id": None,
        "max_depth": 5,
    },
}
"""Arguments chosen instead of a tool's required ones alone: this lab's qubits, runs and values."""
ANALYSIS = "execute_python_analysis"


def _service(lab: UpstreamLab, settings: Settings, session: str | None = None) -> CopilotDataService:
    return CopilotDataService(
        ToolContext(lab.db, lab.project_id, "alice", settings, session, sandbox=EchoSandbox())
    )


def _summary(body: dict[str, Any]) -> str:
    """A short line for the table: scalars as values, lists and tables as their row counts."""

    def brief(value: Any) -> str:
        if isinstance(value, dict):
            return f"{value['_rows']} rows" if "_rows" in value else f"{len(value)} keys"
        if isinstance(value, list):
            return f"{len(value)} items"
        return str(value)[:24]

    return ", ".join(f"{key}={brief(value)}" for key, value in body.items() if not key.startswith("_"))


async def test_every_tool_answers_on_the_upstream_lab(
    upstream_lab_db: UpstreamLab, settings: Settings
) -> None:
    assert set(CHOSEN) <= {spec.name for spec in SPECS}  # no stale entries
    settings = settings.model_copy(
        update={"tools": settings.tools.model_copy(update={"investigation": True})}
    )
    tools = one_turn(_service(upstream_lab_db, settings, "s-upstream"))
    calls = {
        s.name: CHOSEN[s.name] if s.name in CHOSEN else sample_arguments(s, VALUES, nulls=True) for s in SPECS
    }
    rows = []
    for name in sorted(calls, key=lambda name: name == ANALYSIS):  # last: it reads the stored series
        arguments = calls[name]
        output = await tools[name](arguments)
        body = json.loads(output.model_text)
        rows.append(f"| {name} | {'error' if output.is_error else 'ok'} | {_summary(body)[:160]} |")
        assert "Traceback" not in output.model_text
        assert len(output.model_text) <= settings.tools.max_result_chars
        assert body.get("hint") != FAILURE_HINT, f"{name} raised: {body.get('error')}"
        assert not output.is_error, f"{name}: {body}"
    print("\n| tool | result | reply (keys, counts) |\n|---|---|---|\n" + "\n".join(rows))


async def test_analysis_context_builders_on_upstream_rows(
    upstream_lab: UpstreamLab, settings: Settings
) -> None:
    service = _service(upstream_lab, settings)
    knowledge = load_task_knowledge(settings.config_dir)
    cases = {
        ("CheckT1", "5", "20260227-000"): True,  # newest shape, user_note
        ("CheckT1", "3", "20260210-000"): True,  # older shape: elapsed_time a string, no new fields
        ("ZX90InterleavedRandomizedBenchmarking", "0-1", "20260227-001"): True,  # roles
        ("CheckT1", "0", PRE_PROJECT.execution_id): False,  # no project_id: never read
    }
    for (task_name, qid, execution_id), visible in cases.items():
        request = AnalyzeRequest(
            task_name=task_name,
            chip_id=upstream_lab.chip_id,
            qid=qid,
            execution_id=execution_id,
            task_id=task_id(execution_id, task_name, qid),
            message="Is this result good?",
        )
        inputs = await gather_analysis_inputs(service, request, None, 1_000_000)
        assert (inputs.not_found == "") is visible, (task_name, qid, inputs.not_found)
        if not visible:
            continue
        context = inputs.context
        assert context.output_parameters and context.input_parameters, (task_name, qid)
        assert context.qubit_parameters and context.recent_history, (task_name, qid)
        rendered = render_analysis_context(context)
        assert task_name in rendered and execution_id in rendered
        instructions = ANALYSIS_PROMPT.instructions(settings, task_name, knowledge.get(task_name), False)
        assert task_name in instructions
    note = chat_context_note(upstream_lab.chip_id, "5", {"t1": {"value": 40.0, "unit": "μs"}})
    assert upstream_lab.chip_id in note and "5" in note


@pytest.mark.parametrize("username", ["carol", "dave"])
async def test_revoked_and_pending_users_see_nothing_through_the_service_layer(
    upstream_lab: UpstreamLab, username: str
) -> None:
    """The HTTP layer refuses them (tests/api/test_upstream_lab_api.py); this pins the membership
    rows that decision reads, so a fixture change cannot make that test vacuous."""
    rows = {m["username"]: m["status"] for m in upstream_lab.db["project_membership"].find()}
    assert rows[username] in ("revoked", "pending")


async def test_chip_without_topology_id_gets_the_fallback_grid_with_its_pairs(
    upstream_lab: UpstreamLab, settings: Settings
) -> None:
    """Upstream chips carry no topology_id; each pair is stored in both directions."""
    tools = one_turn(_service(upstream_lab, settings))
    body = json.loads((await tools["get_chip_topology"]({"chip_id": None})).model_text)
    assert body["topology_id"] == "fallback-grid-64" and body["num_qubits"] == 64
    assert sorted(body["couplings"]) == sorted(f"{c}-{t}" for c, t in PAIRS)  # once each, not twice
    neighbours = json.loads((await tools["get_coupling_params"]({"qubit_id": "0"})).model_text)
    couplings = neighbours["couplings"]  # columnar only from 3 rows on (the output wrapper)
    listed = [c["coupling_id"] for c in couplings] if isinstance(couplings, list) else couplings["rows"]
    assert sorted(str(c[0] if isinstance(c, list) else c) for c in listed) == ["0-1", "0-2"]  # once each
