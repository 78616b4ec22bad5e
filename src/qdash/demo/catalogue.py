"""The task catalogue the demo lab runs: outputs with exact units, inputs, timing.

Why a table: the generator, the figure renderer, the tests and docs/demo-data.md all read the same
rows, so a unit string or an output name cannot drift between them. Inputs list only the few
versioned parameters that matter for each task (they become ``used``/``wasDerivedFrom`` relations);
listing every input upstream reads would multiply the provenance graph without telling more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from qdash.models.task import TaskType

FigureKind = Literal[
    "decay", "echo", "ramsey", "rabi", "pulse", "resonance", "readout", "rb", "cr", "bell", "status", "limit"
]
Role = Literal["", "control", "target", "coupling"]

US = "μs"  # U+03BC GREEK SMALL LETTER MU, as every upstream task writes it


@dataclass(frozen=True)
class Output:
    name: str
    unit: str
    description: str


@dataclass(frozen=True)
class Input:
    """A versioned parameter read at task start; ``role`` picks the qubit of a 2-qubit task."""

    parameter_name: str
    role: Role = ""

    @property
    def key(self) -> str:
        """Key in ``input_parameters``: ``control_qubit_frequency`` for roles, the name otherwise."""
        if self.role in ("control", "target"):
            return f"{self.role}_{self.parameter_name}"
        return self.parameter_name


@dataclass(frozen=True)
class TaskDef:
    name: str
    task_type: TaskType
    outputs: tuple[Output, ...]
    inputs: tuple[Input, ...]
    elapsed_s: tuple[float, float]
    figure: FigureKind


CW = (5.0, 30.0)
COHERENCE = (60.0, 120.0)
RB = (200.0, 600.0)

_CR_OUTPUTS = (
    Output("cr_amplitude", "a.u.", "Cross-resonance drive amplitude"),
    Output("cr_phase", "a.u.", "Cross-resonance drive phase"),
    Output("cancel_amplitude", "a.u.", "Cancellation pulse amplitude"),
    Output("cancel_phase", "a.u.", "Cancellation pulse phase"),
    Output("cancel_beta", "a.u.", "Cancellation pulse DRAG beta"),
    Output("rotary_amplitude", "a.u.", "Rotary echo amplitude"),
    Output("zx_rotation_rate", "a.u.", "ZX rotation rate"),
)


def _q(
    name: str,
    outputs: tuple[Output, ...],
    inputs: tuple[str, ...],
    elapsed: tuple[float, float],
    figure: FigureKind,
) -> TaskDef:
    return TaskDef(name, "qubit", outputs, tuple(Input(p) for p in inputs), elapsed, figure)


TASKS: dict[str, TaskDef] = {
    task.name: task
    for task in (
        TaskDef("CheckStatus", "global", (), (), CW, "status"),
        TaskDef("Configure", "global", (), (), CW, "status"),
        TaskDef("CheckSkew", "system", (), (), CW, "status"),
        _q(
            "CheckReadoutFrequency",
            (Output("readout_frequency", "GHz", "Readout frequency"),),
            (),
            CW,
            "resonance",
        ),
        _q(
            "CheckQubitSpectroscopy",
            (
                Output("qubit_frequency", "GHz", "Qubit frequency"),
                Output("anharmonicity", "GHz", "Anharmonicity"),
            ),
            ("readout_frequency",),
            CW,
            "resonance",
        ),
        _q(
            "CheckRabi",
            (
                Output("rabi_amplitude", "a.u.", "Rabi oscillation amplitude"),
                Output("rabi_frequency", "MHz", "Rabi oscillation frequency"),
                Output("rabi_phase", "a.u.", "Rabi oscillation phase"),
                Output("rabi_offset", "a.u.", "Rabi oscillation offset"),
                Output("rabi_noise", "a.u.", "Rabi oscillation noise"),
                Output("rabi_distance", "a.u.", "Rabi distance between |0> and |1>"),
                Output("rabi_reference_phase", "a.u.", "Rabi reference phase"),
                Output("control_amplitude", "a.u.", "Control amplitude"),
                Output("rabi_angle", "degree", "Rabi angle"),
                Output("maximum_rabi_frequency", "MHz/a.u.", "Rabi frequency per unit control amplitude"),
            ),
            ("qubit_frequency",),
            CW,
            "rabi",
        ),
        _q(
            "CreateHPIPulse",
            (
                Output("hpi_amplitude", "", "HPI pulse amplitude"),
                Output("hpi_length", "ns", "HPI pulse length"),
            ),
            ("rabi_amplitude",),
            CW,
            "pulse",
        ),
        _q("CheckHPIPulse", (), ("hpi_amplitude",), CW, "pulse"),
        _q(
            "CreatePIPulse",
            (Output("pi_amplitude", "", "PI pulse amplitude"), Output("pi_length", "ns", "PI pulse length")),
            ("hpi_amplitude",),
            CW,
            "pulse",
        ),
        _q("CheckPIPulse", (), ("pi_amplitude",), CW, "pulse"),
        _q("CheckT1", (Output("t1", US, "T1 time"),), ("qubit_frequency",), COHERENCE, "decay"),
        _q(
            "CheckT1Average",
            (Output("t1_average", US, "Average T1 time"), Output("t1_std", US, "Standard deviation of T1")),
            (),
            COHERENCE,
            "decay",
        ),
        _q(
            "CheckT2Echo",
            (Output("t2_echo", US, "T2 echo time"),),
            ("qubit_frequency",),
            COHERENCE,
            "echo",
        ),
        _q(
            "CheckT2EchoAverage",
            (
                Output("t2_echo_average", US, "Average T2 echo time"),
                Output("t2_echo_std", US, "Standard deviation of T2 echo"),
            ),
            (),
            COHERENCE,
            "echo",
        ),
        _q(
            "CheckRamsey",
            (
                Output("ramsey_frequency", "MHz", "Ramsey oscillation frequency"),
                Output("qubit_frequency", "GHz", "Qubit frequency"),
                Output("t2_star", US, "T2* time"),
            ),
            ("qubit_frequency",),
            COHERENCE,
            "ramsey",
        ),
        _q(
            "CreateDRAGHPIPulse",
            (
                Output("drag_hpi_amplitude", "a.u.", "DRAG HPI pulse amplitude"),
                Output("drag_hpi_beta", "a.u.", "DRAG HPI pulse beta"),
                Output("drag_hpi_length", "ns", "DRAG HPI pulse length"),
            ),
            ("hpi_amplitude",),
            CW,
            "pulse",
        ),
        _q("CheckDRAGHPIPulse", (), (), CW, "pulse"),
        _q(
            "CreateDRAGPIPulse",
            (
                Output("drag_pi_amplitude", "", "DRAG PI pulse amplitude"),
                Output("drag_pi_beta", "", "DRAG PI pulse beta"),
                Output("drag_pi_length", "ns", "DRAG PI pulse length"),
            ),
            ("pi_amplitude",),
            CW,
            "pulse",
        ),
        _q("CheckDRAGPIPulse", (), (), CW, "pulse"),
        _q(
            "ReadoutClassification",
            (
                Output("average_readout_fidelity", "a.u.", "Average readout fidelity"),
                Output("readout_fidelity_0", "a.u.", "Readout fidelity of |0>"),
                Output("readout_fidelity_1", "a.u.", "Readout fidelity of |1>"),
            ),
            (),
            CW,
            "readout",
        ),
        _q(
            "RandomizedBenchmarking",
            (
                Output("average_gate_fidelity", "a.u.", "Average gate fidelity"),
                Output("depolarizing_rate", "a.u.", "Depolarizing rate"),
            ),
            ("drag_hpi_amplitude",),
            RB,
            "rb",
        ),
        _q(
            "X90InterleavedRandomizedBenchmarking",
            (
                Output("x90_gate_fidelity", "a.u.", "X90 gate fidelity"),
                Output("x90_depolarizing_rate", "a.u.", "X90 depolarizing rate"),
            ),
            ("drag_hpi_amplitude",),
            RB,
            "rb",
        ),
        _q(
            "X180InterleavedRandomizedBenchmarking",
            (
                Output("x180_gate_fidelity", "a.u.", "X180 gate fidelity"),
                Output("x180_depolarizing_rate", "a.u.", "X180 depolarizing rate"),
            ),
            ("drag_pi_amplitude",),
            RB,
            "rb",
        ),
        _q(
            "Check1QGateCoherenceLimit",
            (Output("one_qubit_gate_coherence_limit", "a.u.", "Coherence-limited 1Q gate fidelity"),),
            ("t1", "t2_echo"),
            CW,
            "limit",
        ),
        TaskDef(
            "CheckCrossResonance",
            "coupling",
            _CR_OUTPUTS,
            (Input("qubit_frequency", "control"), Input("qubit_frequency", "target")),
            CW,
            "cr",
        ),
        TaskDef(
            "CreateZX90",
            "coupling",
            (*_CR_OUTPUTS, Output("zx90_gate_time", "ns", "ZX90 gate time")),
            (Input("cr_amplitude", "coupling"),),
            CW,
            "cr",
        ),
        TaskDef("CheckZX90", "coupling", (), (), CW, "cr"),
        TaskDef("CheckBellState", "coupling", (), (), CW, "bell"),
        TaskDef(
            "CheckBellStateTomography",
            "coupling",
            (Output("bell_state_fidelity", "a.u.", "Bell state fidelity"),),
            (),
            CW,
            "bell",
        ),
        TaskDef(
            "ZX90InterleavedRandomizedBenchmarking",
            "coupling",
            (
                Output("zx90_gate_fidelity", "a.u.", "ZX90 gate fidelity"),
                Output("zx90_depolarizing_rate", "a.u.", "ZX90 depolarizing rate"),
            ),
            (Input("zx90_gate_time", "coupling"),),
            RB,
            "rb",
        ),
        TaskDef(
            "Check2QGateCoherenceLimit",
            "coupling",
            (Output("two_qubit_gate_coherence_limit", "a.u.", "Coherence-limited 2Q gate fidelity"),),
            (Input("t1", "control"), Input("t1", "target")),
            CW,
            "limit",
        ),
    )
}

GLOBAL_PREFIX = ("CheckStatus", "Configure")
"""Global tasks (``qid: ""``) opening every 1Q-Calibration execution."""

FULL_1Q_ORDER = (
    "CheckReadoutFrequency",
    "CheckQubitSpectroscopy",
    "CheckRabi",
    "CreateHPIPulse",
    "CheckHPIPulse",
    "CreatePIPulse",
    "CheckPIPulse",
    "CheckT1",
    "CheckT2Echo",
    "CheckRamsey",
    "CheckT1Average",
    "CheckT2EchoAverage",
    "CreateDRAGHPIPulse",
    "CheckDRAGHPIPulse",
    "CreateDRAGPIPulse",
    "CheckDRAGPIPulse",
    "ReadoutClassification",
    "RandomizedBenchmarking",
    "X90InterleavedRandomizedBenchmarking",
    "X180InterleavedRandomizedBenchmarking",
    "Check1QGateCoherenceLimit",
)
"""Bring-up (a chip's first day): spectroscopy, the 1Q calibration order, averages, X180, coherence limit."""

WEEKLY_1Q_ORDER = (
    "CheckT1",
    "CheckT2Echo",
    "CheckRamsey",
    "ReadoutClassification",
    "X90InterleavedRandomizedBenchmarking",
)
"""Every 7th day: coherence, qubit frequency (Ramsey), readout and the X90 gate."""

DAILY_1Q_ORDER = ("CheckT1", "CheckT2Echo", "X90InterleavedRandomizedBenchmarking")
"""Other days: the quick health check (T1, T2 echo, X90 fidelity)."""

FULL_2Q_ORDER = (
    "CheckCrossResonance",
    "CreateZX90",
    "CheckZX90",
    "CheckBellState",
    "CheckBellStateTomography",
    "ZX90InterleavedRandomizedBenchmarking",
    "Check2QGateCoherenceLimit",
)
"""Bring-up 2Q calibration: the 2Q calibration order plus the coherence limit."""

DAILY_2Q_ORDER = ("CheckBellStateTomography", "ZX90InterleavedRandomizedBenchmarking")
"""Every other day after bring-up: Bell-state and ZX90 fidelity."""

FIDELITY_PARAMETERS = frozenset(
    {
        "average_readout_fidelity",
        "readout_fidelity_0",
        "readout_fidelity_1",
        "average_gate_fidelity",
        "x90_gate_fidelity",
        "x180_gate_fidelity",
        "zx90_gate_fidelity",
        "bell_state_fidelity",
        "one_qubit_gate_coherence_limit",
        "two_qubit_gate_coherence_limit",
    }
)
"""Fractions capped at 0.9995."""

FIDELITY_CAP = 0.9995


def output_units() -> dict[str, str]:
    """Parameter name → unit over the whole catalogue (one unit per name)."""
    units: dict[str, str] = {}
    for task in TASKS.values():
        for output in task.outputs:
            units.setdefault(output.name, output.unit)
    return units
