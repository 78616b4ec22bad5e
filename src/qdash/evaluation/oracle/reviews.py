"""Which finished results of a seeded demo chip are bad, from the generator's own story record.

Why here (the oracle) and not in ``qdash.review``: reviews are graded against truth the demo
generator knows, computed with plain pymongo from the raw documents and the generator's
:class:`~qdash.demo.ChipReport` (bad qubits, the TLS qubit and the dates of its dip) plus what it
wrote into each run (``status: failed``). Nothing here imports the guards or the repositories, so
a guard bug shows up as a missed result instead of an agreeing truth. Kinds:

- ``failed_fit``: every failed run (the generator chose to fail it);
- ``tls_dip``: CheckT1 on the TLS qubit inside its dip window (T1 drawn from 5–15 μs);
- ``bad_qubit``: completed runs of scored parameters on a bad qubit (low T1, gate fidelity 0.90–0.95,
  readout 0.80–0.86), and of couplings that touch one;
- ``healthy``: every other finished result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from qdash.demo import ChipReport
from qdash.evaluation.oracle.raw import RawLab

Kind = Literal["failed_fit", "tls_dip", "bad_qubit", "healthy"]
BAD_KINDS: tuple[Kind, ...] = ("failed_fit", "tls_dip", "bad_qubit")
HEALTHY: Kind = "healthy"
GATE_FIDELITIES = frozenset({"x90_gate_fidelity", "x180_gate_fidelity", "average_gate_fidelity"})
"""Bad-qubit parameters the generator draws below their ``bad`` threshold by construction (0.90–0.95
against 0.98); its other bad-qubit values (T1 8–18 μs with 10–20 % scatter, couplings' ZX90 0.80–0.90)
mostly but not always cross theirs."""


@dataclass(frozen=True)
class ResultTruth:
    """One finished result: its kind, and the evidence a reviewer needs to call it bad."""

    task_id: str
    name: str
    qid: str
    execution_id: str
    status: str
    kind: Kind
    message: str = ""
    """The failure message the generator wrote (``failed_fit``)."""
    values: dict[str, float] = field(default_factory=dict)
    """The scored output values of a ``tls_dip`` / ``bad_qubit`` result (stored units)."""

    @property
    def bad(self) -> bool:
        return self.kind != HEALTHY


def _on_bad_qubit(qid: str, bad: set[str]) -> bool:
    return qid in bad or any(part in bad for part in qid.split("-"))


def classify_run(run: Mapping[str, Any], chip: ChipReport, scored: Iterable[str]) -> Kind | None:
    """The kind of one run, or ``None`` for a run that is not finished (never reviewed)."""
    status = run.get("status")
    if status == "failed":
        return "failed_fit"
    if status != "completed":
        return None
    qid = str(run.get("qid") or "")
    date = str(run.get("execution_id") or "").split("-")[0]
    first, last = chip.tls_days
    if run.get("name") == "CheckT1" and qid == chip.tls_qubit and first and first <= date <= last:
        return "tls_dip"
    outputs = set(run.get("output_parameter_names") or [])
    if _on_bad_qubit(qid, set(chip.bad_qubits)) and outputs & set(scored):
        return "bad_qubit"
    return HEALTHY


def _values(run: Mapping[str, Any], scored: Iterable[str]) -> dict[str, float]:
    outputs = run.get("output_parameters") or {}
    values: dict[str, float] = {}
    for name in scored:
        entry = outputs.get(name)
        value = entry.get("value") if isinstance(entry, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            values[name] = float(value)
    return values


def review_truth(raw: RawLab, chip: ChipReport) -> dict[str, ResultTruth]:
    """``task_id → truth`` for every finished, non-excluded result of one demo chip, in start order."""
    scored = sorted(raw.scoring)
    truths: dict[str, ResultTruth] = {}
    for run in raw.runs(chip.chip_id, {"status": {"$in": ["completed", "failed"]}}):
        kind = classify_run(run, chip, scored)
        if kind is None or run.get("excluded") is True:
            continue
        task_id = str(run["task_id"])
        truths[task_id] = ResultTruth(
            task_id=task_id,
            name=str(run.get("name") or ""),
            qid=str(run.get("qid") or ""),
            execution_id=str(run.get("execution_id") or ""),
            status=str(run["status"]),
            kind=kind,
            message=str(run.get("message") or "").strip() if kind == "failed_fit" else "",
            values=_values(run, scored) if kind in ("tls_dip", "bad_qubit") else {},
        )
    return truths


def known_bad(truths: Mapping[str, ResultTruth]) -> dict[str, Kind]:
    """``task_id → kind`` of the known-bad results only."""
    return {task_id: truth.kind for task_id, truth in truths.items() if truth.bad}
