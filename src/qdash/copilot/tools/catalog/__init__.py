"""The calibration tools: specs (what the model sees) and implementations.

``SPECS`` lists the seventeen core tools in the order of docs/tools.md, then the investigation tools
(degradation report, recalibration suggestion); ``IMPLEMENTATIONS`` holds every tool except
``execute_python_analysis``, whose implementation is the sandbox client bound by the registry.
Every implementation reports integers it clamped as ``"_clamped"`` in its result.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from qdash.copilot.tools.catalog import (
    analysis,
    chip,
    degradation,
    heatmap,
    history,
    notes,
    provenance,
    qubits,
    recalibration,
)
from qdash.copilot.tools.catalog.args import ToolArgs
from qdash.copilot.tools.spec import ToolContext, ToolImpl, ToolSpec

TOOL_ORDER = (
    "get_qubit_params",
    "get_latest_task_result",
    "get_task_history",
    "get_parameter_timeseries",
    "execute_python_analysis",
    "get_chip_summary",
    "get_coupling_params",
    "get_execution_history",
    "compare_qubits",
    "get_chip_topology",
    "search_task_results",
    "get_calibration_notes",
    "get_parameter_lineage",
    "get_provenance_lineage_graph",
    "generate_chip_heatmap",
    "get_chip_parameter_timeseries",
    "list_available_parameters",
    "get_degradation_report",
    "suggest_recalibration",
)
INVESTIGATION_TOOLS = ("get_degradation_report", "suggest_recalibration")
"""Offered to the model only with ``tools.investigation`` (their schemas exceed the prompt budget)."""
_MODULES = (qubits, history, analysis, chip, notes, provenance, heatmap, degradation, recalibration)
_SPECS_BY_NAME = {spec.name: spec for module in _MODULES for spec in module.SPECS}


def _reporting_clamps(impl: Callable[[ToolContext, Any], dict[str, Any]]) -> ToolImpl:
    @wraps(impl)
    def run(ctx: ToolContext, args: Any) -> dict[str, Any]:
        result = impl(ctx, args)
        if isinstance(args, ToolArgs) and args.clamped:
            result = {**result, "_clamped": args.clamped}
        return result

    return run


SPECS: list[ToolSpec] = [_SPECS_BY_NAME[name] for name in TOOL_ORDER]
IMPLEMENTATIONS: dict[str, ToolImpl] = {
    name: _reporting_clamps(impl)
    for module in (qubits, history, chip, notes, provenance, heatmap, degradation, recalibration)
    for name, impl in module.IMPLEMENTATIONS.items()
}

__all__ = ["IMPLEMENTATIONS", "INVESTIGATION_TOOLS", "SPECS", "TOOL_ORDER"]
