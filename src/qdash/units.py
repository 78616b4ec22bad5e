"""The display unit of every parameter: one table read by every tool, chart, review reason and
scoring line, so a value and its unit are the same wherever a user or the model sees them.

Stored values keep the unit the calibration task wrote (fidelities as fractions in ``a.u.``,
anharmonicity in GHz); a lab user reads fidelities as %, as upstream QDash's dashboard shows them
(its ``metrics.yaml`` scales them ×100), and anharmonicity in MHz. Parameters not in the table are
shown in their stored unit. A value is converted only when its stored unit is the one the table
expects, so a lab that already stores % is never scaled twice.

:func:`convention` states these units in words for the prompts, from this table, so the prompt and
the tools cannot disagree (``tests/copilot/tools/test_conventions.py`` checks every tool).
"""

from __future__ import annotations

from dataclasses import dataclass

MICRO = "μs"  # U+03BC, the unit string every upstream task writes
_UNIT_ALIASES = {"µs": MICRO, "us": MICRO}


def normalize_unit(unit: object) -> str:
    """Stored unit string with ``µs`` (U+00B5) and ``us`` mapped to ``μs``."""
    text = "" if unit is None else str(unit)
    return _UNIT_ALIASES.get(text, text)


@dataclass(frozen=True)
class Display:
    unit: str
    """What users and the model see."""
    scale: float
    """Stored value × ``scale`` = displayed value."""
    stored: tuple[str, ...]
    """The stored units this entry converts from (``""`` when a task wrote none)."""
    family: str
    """What the prompt calls the parameters shown this way."""
    example: str = ""
    """A reading the prompt spells out, where the stored number would mislead."""


_FRACTION = Display("%", 100.0, ("a.u.", ""), "fidelities", " (99.8, not 0.998)")

DISPLAY: dict[str, Display] = {
    "average_readout_fidelity": _FRACTION,
    "readout_fidelity_0": _FRACTION,
    "readout_fidelity_1": _FRACTION,
    "average_gate_fidelity": _FRACTION,
    "x90_gate_fidelity": _FRACTION,
    "x180_gate_fidelity": _FRACTION,
    "one_qubit_gate_coherence_limit": _FRACTION,
    "zx90_gate_fidelity": _FRACTION,
    "bell_state_fidelity": _FRACTION,
    "two_qubit_gate_coherence_limit": _FRACTION,
    "anharmonicity": Display("MHz", 1000.0, ("GHz",), "anharmonicity"),
}


def convention() -> str:
    """The display units in one sentence, for every prompt: ``fidelities in %`` and so on (a stored
    fraction 0.998 is shown as 99.8, which a model told "fractions" would misread)."""
    families = {entry.family: f"{entry.unit}{entry.example}" for entry in DISPLAY.values()}
    shown = ", ".join(f"{family} in {unit}" for family, unit in families.items())
    return f"Values are in the unit each output names: {shown}."


def shown_unit(name: str, stored_unit: object) -> tuple[float, str]:
    """``(scale, unit)`` that turn a stored value of parameter ``name`` into its display value."""
    unit = normalize_unit(stored_unit)
    entry = DISPLAY.get(name)
    if entry is None or unit not in entry.stored:
        return 1.0, unit
    return entry.scale, entry.unit
