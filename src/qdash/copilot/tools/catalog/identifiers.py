"""Normalisers for what users and models type: qubits, couplings, parameters, tasks.

Why one module: the same label must map to the same stored id everywhere (tool arguments, Qubex
note labels such as ``"Q00"``/``"Q16-Q22"``, topology pairs), or a query silently finds nothing.
"""

from __future__ import annotations

import difflib
import re

MAX_ID_CHARS = 64
_QUBIT = re.compile(r"^(?:qubit|q)?\s*0*(\d+)$")
_PAIR_SEPARATOR = re.compile(r"\s*[-–_,/]\s*|\s+")

# Task names of upstream QDash's calibration tasks, for case-insensitive matching and "did you mean" hints.
TASK_NAMES: tuple[str, ...] = (
    "CheckStatus", "LinkUp", "DumpBox", "CheckNoise", "Configure", "ReadoutConfigure", "CheckSkew",
    "CheckResonatorFrequencies", "CheckResonatorSpectroscopy", "CheckReadoutFrequency",
    "CheckReflectionCoefficient", "CheckElectricalDelay", "CheckReadoutAmplitude",
    "CheckQubitFrequencies", "CheckQubitSpectroscopy", "CheckQubitFrequency", "ChevronPattern",
    "CheckQubit", "CheckRabi", "CreateHPIPulse", "CreatePIPulse", "CheckHPIPulse", "CheckPIPulse",
    "CheckDRAGHPIPulse", "CheckDRAGPIPulse", "CreateDRAGHPIPulse", "CreateDRAGPIPulse", "CheckT1",
    "CheckT1Average", "CheckT2Echo", "CheckT2EchoAverage", "CheckRamsey", "CheckDispersiveShift",
    "CheckOptimalReadoutAmplitude", "ReadoutClassification", "RandomizedBenchmarking",
    "X90InterleavedRandomizedBenchmarking", "X180InterleavedRandomizedBenchmarking",
    "Check1QGateCoherenceLimit", "CheckCrossResonance", "CreateZX90", "CheckZX90", "CheckBellState",
    "CheckBellStateTomography", "ZX90InterleavedRandomizedBenchmarking", "Check2QGateCoherenceLimit",
)  # fmt: skip
_TASKS_BY_LOWER = {name.lower(): name for name in TASK_NAMES}


def _check_length(raw: str) -> str:
    text = raw.strip()
    if len(text) > MAX_ID_CHARS:
        raise ValueError(f"at most {MAX_ID_CHARS} characters")
    return text


def normalize_qid(raw: str | int) -> str:
    """``Q16``/``q16``/``qubit 16``/``16`` → ``"16"``, ``Q00`` → ``"0"``."""
    text = _check_length(str(raw)).lower()
    match = _QUBIT.match(text)
    if match is None:
        raise ValueError(f"'{raw}' is not a qubit id; use the index, e.g. 16 or Q16")
    return str(int(match.group(1)))


def normalize_coupling_id(raw: str) -> str:
    """``Q16-Q22``/``16_22``/``q16 q22`` → ``"16-22"`` (order kept; see :func:`both_orders`)."""
    text = _check_length(raw)
    parts = [p for p in _PAIR_SEPARATOR.split(text) if p]
    if len(parts) != 2:
        raise ValueError(f"'{raw}' is not a coupling id; use two qubits, e.g. 16-22")
    return f"{normalize_qid(parts[0])}-{normalize_qid(parts[1])}"


def normalize_target(raw: str | int) -> str:
    """A qubit or a coupling id, whichever ``raw`` spells (Qubex note labels included)."""
    text = _check_length(str(raw))
    try:
        return normalize_qid(text)
    except ValueError:
        return normalize_coupling_id(text)


def both_orders(target: str) -> list[str]:
    """``"22-16"`` → ``["22-16", "16-22"]``: a coupling is stored once, in topology order, and
    users may type either; a qubit id stays ``[qid]``."""
    if "-" not in target:
        return [target]
    first, second = target.split("-")
    return [target] if first == second else [target, f"{second}-{first}"]


def qids_of(target: str) -> tuple[str, ...]:
    """The qubits a qubit or coupling id touches."""
    return tuple(target.split("-"))


def normalize_parameter_name(raw: str) -> str:
    """``"T1"``/``"Qubit Frequency"``/``"x90-gate-fidelity"`` → lower snake_case."""
    text = _check_length(raw).lower()
    name = re.sub(r"[\s\-]+", "_", text)
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise ValueError(f"'{raw}' is not a parameter name; use snake_case such as t1 or qubit_frequency")
    return name


def canonical_task_name(raw: str) -> str | None:
    """The catalogue spelling of a task name (case-insensitive), or ``None`` when unknown."""
    return _TASKS_BY_LOWER.get(raw.strip().lower())


def closest_task_names(raw: str, limit: int = 3) -> list[str]:
    """Known task names that look like ``raw``, for an "unknown task" hint."""
    matches = difflib.get_close_matches(raw.strip().lower(), list(_TASKS_BY_LOWER), n=limit, cutoff=0.5)
    return [_TASKS_BY_LOWER[m] for m in matches]
