"""Heatmap metrics (upstream ``config/metrics.yaml`` ``qubit_metrics``).

Kept as data in code so the ``metric_name`` enum of the tool schema is fixed at registration.
``stored`` is the unit the values are stored in; the heatmap shows them in the display unit of
``qdash.units`` (the table every tool reads), never a unit of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["maximize", "minimize", "none"]


@dataclass(frozen=True)
class Metric:
    title: str
    stored: str
    """Unit of the stored values."""
    mode: Mode


QUBIT_METRICS: dict[str, Metric] = {
    "readout_frequency": Metric("Readout frequency", "GHz", "none"),
    "qubit_frequency": Metric("Qubit frequency", "GHz", "none"),
    "anharmonicity": Metric("Anharmonicity", "GHz", "minimize"),
    "t1": Metric("T1", "μs", "maximize"),
    "t1_average": Metric("T1 (average)", "μs", "maximize"),
    "t2_echo": Metric("T2 echo", "μs", "maximize"),
    "t2_echo_average": Metric("T2 echo (average)", "μs", "maximize"),
    "t2_star": Metric("T2*", "μs", "maximize"),
    "average_readout_fidelity": Metric("Readout fidelity", "a.u.", "maximize"),
    "average_gate_fidelity": Metric("Average gate fidelity", "a.u.", "maximize"),
    "x90_gate_fidelity": Metric("X90 gate fidelity", "a.u.", "maximize"),
    "x180_gate_fidelity": Metric("X180 gate fidelity", "a.u.", "maximize"),
    "maximum_rabi_frequency": Metric("Maximum Rabi frequency", "MHz/a.u.", "maximize"),
    "hpi_amplitude": Metric("π/2 pulse amplitude", "a.u.", "none"),
    "hpi_length": Metric("π/2 pulse length", "ns", "none"),
    "one_qubit_gate_coherence_limit": Metric("1Q gate coherence limit", "a.u.", "maximize"),
}
