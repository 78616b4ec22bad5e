"""generate_chip_heatmap on the demo lab: values, display units, the figure and errors."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from qdash.copilot.tools.catalog.formatting import sig4
from qdash.copilot.tools.output import ToolResult

from .conftest import Call, completed_runs


def _latest(db: Any, parameter: str) -> dict[str, float]:
    latest: dict[str, float] = {}
    for doc in completed_runs(db, parameter):
        latest.setdefault(doc["qid"], doc["output_parameters"][parameter]["value"])
    return latest


def test_t1_heatmap_statistics_and_figure(call_result: Callable[..., ToolResult], demo_lab: Any) -> None:
    full = call_result("generate_chip_heatmap", metric_name="t1")
    result = full.data
    latest = _latest(demo_lab.db, "t1")
    stats = result["statistics"]
    assert result["status"] == "success" and result["message"].startswith("Heatmap chart generated.")
    assert stats == {
        "count": len(latest),
        "total_qubits": 64,
        "coverage": f"{100 * len(latest) / 64:.1f}%",
        "median": sig4(statistics.median(latest.values())),
        "mean": sig4(statistics.fmean(latest.values())),
        "min": [min(latest, key=lambda q: (latest[q], int(q))), sig4(min(latest.values()))],
        "max": [max(latest, key=lambda q: (latest[q], -int(q))), sig4(max(latest.values()))],
        "unit": "μs",
    }
    [figure] = full.charts
    trace = figure["data"][0]
    assert trace["type"] == "heatmap" and trace["colorscale"][0][1].startswith("#")  # Viridis
    z = trace["z"]
    assert len(z) == 8 and len(z[0]) == 8
    assert z[0][2] == latest["4"]  # MUX 1 starts at row 0, column 2


def test_fidelity_and_anharmonicity_use_display_units(call: Call, demo_lab: Any) -> None:
    fidelity = call("generate_chip_heatmap", metric_name="x90_gate_fidelity", selection_mode="average")
    assert fidelity["statistics"]["unit"] == "%"
    assert 90 < fidelity["statistics"]["mean"] <= 99.95
    anharmonicity = call("generate_chip_heatmap", metric_name="Anharmonicity", selection_mode="best")
    best = {}
    for doc in completed_runs(demo_lab.db, "anharmonicity"):
        value = doc["output_parameters"]["anharmonicity"]["value"]
        best[doc["qid"]] = min(value, best.get(doc["qid"], value))  # minimize: more negative is better
    assert anharmonicity["statistics"]["unit"] == "MHz"
    assert anharmonicity["statistics"]["min"][1] == sig4(min(best.values()) * 1000)


def test_heatmap_errors(error: Callable[..., str]) -> None:
    assert error("generate_chip_heatmap", metric_name="foo").startswith("Unknown metric 'foo'")
    assert error("generate_chip_heatmap", metric_name="qubit_frequency", selection_mode="best").startswith(
        "selection_mode 'best' needs"
    )
    assert (
        error("generate_chip_heatmap", project="proj-other", chip_id="144Qv2", metric_name="t1")
        == "Chip 144Qv2 not found; chips of this project: 64Qv3"
    )


def test_a_unique_partial_metric_name_resolves(call: Call, error: Callable[..., str]) -> None:
    """``metric_name`` is free text in the schema (no enum): a unique partial name is that metric,
    an ambiguous one is refused with the list."""
    partial = call("generate_chip_heatmap", metric_name="readout_fidelity")
    full = call("generate_chip_heatmap", metric_name="average_readout_fidelity", selection_mode="latest")
    assert partial["statistics"] == full["statistics"] and partial["statistics"]["unit"] == "%"
    ambiguous = error("generate_chip_heatmap", metric_name="gate_fidelity")
    assert ambiguous.startswith("Unknown metric 'gate_fidelity'")
