"""Which demo results are known to be bad, from the generator's own story record.

Why here: tests and ``bench/reviews.py`` grade reviews against truth the demo generator knows, not
against a list someone typed. The record is :class:`qdash.demo.ChipReport` (bad qubits, the TLS
qubit and the dates of its dip) plus what the generator wrote into each run (``status: failed``).
Kinds:

- ``failed_fit``: every failed run (the generator chose to fail it);
- ``tls_dip``: CheckT1 on the TLS qubit inside its dip window (T1 drawn from 5–15 μs);
- ``bad_qubit``: completed runs of scored parameters on a bad qubit (low T1, gate fidelity 0.90–0.95,
  readout 0.80–0.86), and of couplings that touch one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from qdash.demo.report import ChipReport
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import TASK_RESULTS

GATE_FIDELITIES = frozenset({"x90_gate_fidelity", "x180_gate_fidelity", "average_gate_fidelity"})
"""Bad-qubit parameters the generator draws below their ``bad`` threshold by construction (0.90–0.95
against 0.98); its other bad-qubit values (T1 8–18 μs with 10–20 % scatter, couplings' ZX90 0.80–0.90)
mostly but not always cross theirs."""
_PROJECTION = {"task_id": 1, "name": 1, "qid": 1, "status": 1, "execution_id": 1, "output_parameter_names": 1}


def _on_bad_qubit(qid: str, bad: set[str]) -> bool:
    return qid in bad or any(part in bad for part in qid.split("-"))


def classify_run(run: Mapping[str, Any], chip: ChipReport, scored: Iterable[str]) -> str | None:
    """The kind of bad this run is, or ``None`` for a run the generator made healthy."""
    if run.get("status") == "failed":
        return "failed_fit"
    if run.get("status") != "completed":
        return None
    qid = str(run.get("qid") or "")
    date = str(run.get("execution_id") or "").split("-")[0]
    first, last = chip.tls_days
    if run.get("name") == "CheckT1" and qid == chip.tls_qubit and first and first <= date <= last:
        return "tls_dip"
    outputs = set(run.get("output_parameter_names") or [])
    if _on_bad_qubit(qid, set(chip.bad_qubits)) and outputs & set(scored):
        return "bad_qubit"
    return None


def known_bad_results(scope: ProjectScope, chip: ChipReport, scored: Iterable[str]) -> dict[str, str]:
    """``task_id → kind`` for every known-bad run of one demo chip (``scored``: the scoring metric names)."""
    scored = list(scored)
    runs: Iterable[Doc] = scope.iter_find(TASK_RESULTS, {"chip_id": chip.chip_id}, _PROJECTION)
    return {
        str(run["task_id"]): kind for run in runs if (kind := classify_run(run, chip, scored)) is not None
    }


@dataclass(frozen=True)
class Grades:
    """How well "needs a human" (FAIL or REVIEW) matches the known-bad results."""

    precision: float
    recall: float
    recall_by_kind: dict[str, tuple[int, int]]
    """kind → (caught, total)."""
    false_alarms: int
    healthy: int


def grade(flagged: Mapping[str, bool], truth: Mapping[str, str]) -> Grades:
    """Grade ``task_id → flagged`` (FAIL/REVIEW) against ``known_bad_results``; results absent from
    ``flagged`` were not reviewed and are left out of both sides."""
    bad = {task_id for task_id in truth if task_id in flagged}
    hits = {task_id for task_id, flag in flagged.items() if flag}
    kinds: dict[str, tuple[int, int]] = {}
    for task_id in bad:
        caught, total = kinds.get(truth[task_id], (0, 0))
        kinds[truth[task_id]] = (caught + (task_id in hits), total + 1)
    healthy = set(flagged) - bad
    return Grades(
        precision=len(hits & bad) / len(hits) if hits else 0.0,
        recall=len(hits & bad) / len(bad) if bad else 0.0,
        recall_by_kind=dict(sorted(kinds.items())),
        false_alarms=len(hits & healthy),
        healthy=len(healthy),
    )
