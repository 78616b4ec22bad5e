"""The calibration tools, registered here and only here: ``SPECS`` in the order the model sees them.

Each entry is a function declared with ``@tool`` in its module (name, docstring description and
args model come from the function). ``SPECS`` lists ``docs/tools.md``'s eighteen, then the
investigation tools (tag ``investigation``: degradation report, recalibration suggestion), offered
only with ``tools.investigation``.
"""

from __future__ import annotations

from qdash.copilot.tools.catalog import (
    analysis,
    chip,
    degradation,
    executions,
    heatmap,
    history,
    knowledge,
    notes,
    provenance,
    qubits,
    recalibration,
)
from qdash.copilot.tools.spec import ToolSpec

SPECS: list[ToolSpec] = [
    qubits.get_qubit_params,
    history.get_latest_task_result,
    history.get_task_history,
    history.get_parameter_timeseries,
    analysis.execute_python_analysis,
    chip.get_chip_summary,
    qubits.get_coupling_params,
    executions.get_execution_history,
    qubits.compare_qubits,
    chip.get_chip_topology,
    history.search_task_results,
    notes.get_calibration_notes,
    provenance.get_parameter_lineage,
    provenance.get_provenance_lineage_graph,
    heatmap.generate_chip_heatmap,
    chip.get_chip_parameter_timeseries,
    history.list_available_parameters,
    knowledge.get_task_knowledge,
    degradation.get_degradation_report,
    recalibration.suggest_recalibration,
]
INVESTIGATION = "investigation"
"""The tag of tools offered only with ``tools.investigation`` (their schemas exceed the prompt budget)."""

__all__ = ["INVESTIGATION", "SPECS"]
