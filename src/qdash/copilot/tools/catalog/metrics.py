"""Heatmap metrics (upstream ``config/metrics.yaml`` ``qubit_metrics``).

Kept as data in code so the ``metric_name`` enum of the tool schema is fixed at registration;
``scale`` turns stored units into the display unit, which only the heatmap applies:
every other tool reports stored units.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["maximize", "minimize", "none"]


@dataclass(frozen=True)
class Metric:
    title: str
    unit: str
    """Display unit (after ``scale``)."""
    scale: float
    mode: Mode


QUBIT_METRICS: dict[str, Metric] = {
    "readout_frequency": Metric("Readout frequency", "GHz", 1.0, "none"),
    "qubit_frequency": Metric("Qubit frequency", "GHz", 1.0, "none"),
    "anharmonicity": Metric("Anharmonicity", "MHz", 1000.0, "minimize"),
    "t1": Metric("T1", "μs", 1.0, "maximize"),
    "t1_average": Metric("T1 (average)", "μs", 1.0, "maximize"),
    "t2_echo": Metric("T2 echo", "μs", 1.0, "maximize"),
    "t2_echo_average": Metric("T2 echo (average)", "μs", 1.0, "maximize"),
    "t2_star": Metric("T2*", "μs", 1.0, "maximize"),
    "average_readout_fidelity": Metric("Readout fidelity", "%", 100.0, "maximize"),
    "average_gate_fidelity": Metric("Average gate fidelity", "%", 100.0, "maximize"),
    "x90_gate_fidelity": Metric("X90 gate fidelity", "%", 100.0, "maximize"),
    "x180_gate_fidelity": Metric("X180 gate fidelity", "%", 100.0, "maximize"),
    "maximum_rabi_frequency": Metric("Maximum Rabi frequency", "MHz/a.u.", 1.0, "maximize"),
    "hpi_amplitude": Metric("π/2 pulse amplitude", "a.u.", 1.0, "none"),
    "hpi_length": Metric("π/2 pulse length", "ns", 1.0, "none"),
    "one_qubit_gate_coherence_limit": Metric("1Q gate coherence limit", "%", 100.0, "maximize"),
}
