"""Truth of the cool-down questions, from the raw task results (upstream's ``cooldown_id`` on each).

Written from the data model, not from the tools: a chip's cool-downs are the distinct non-empty
``cooldown_id`` values of its task results, ordered by their first run; a cool-down's executions are
the distinct ``execution_id`` of its runs. A parameter per cool-down is, for each qubit, the median
of its newest ``last_n`` completed runs in that cool-down that a person did not exclude (the
window the question names), and for the chip the median of those per-qubit medians.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from qdash.demo import SeedReport
from qdash.evaluation.oracle.answers import answer
from qdash.evaluation.oracle.raw import Doc, RawLab
from qdash.evaluation.truth import Truth


@answer
def cooldown_ids(raw: RawLab, report: SeedReport, *, chip: str) -> Truth:
    """The chip's cool-down ids, oldest first."""
    return Truth(kind="text", texts=list(raw.runs_by_cooldown(chip)))


@answer
def cooldown_executions(raw: RawLab, report: SeedReport, *, chip: str, cooldown: str) -> Truth:
    """How many executions ran in one cool-down."""
    runs = raw.runs_by_cooldown(chip).get(cooldown)
    if runs is None:
        raise LookupError(f"{chip} has no cool-down {cooldown}")
    return Truth(kind="number", numbers=[len({str(run["execution_id"]) for run in runs})])


@answer
def cooldown_medians(
    raw: RawLab, report: SeedReport, *, chip: str, parameter: str, last_n: int, qid: str | None = None
) -> Truth:
    """Per cool-down (oldest first) the median of ``qid``'s newest ``last_n`` values in it, or without
    ``qid`` the chip's median over every qubit's such median."""
    query: Doc = {"status": "completed", "output_parameter_names": parameter}
    if qid is not None:
        query["qid"] = qid
    numbers, unit = [], ""
    for runs in raw.runs_by_cooldown(chip, query).values():
        per_qubit: dict[str, list[float]] = defaultdict(list)
        for run in reversed(runs):  # newest first
            output = run["output_parameters"][parameter]
            unit = unit or str(output.get("unit") or "")
            if run.get("excluded") is not True and len(per_qubit[str(run["qid"])]) < last_n:
                per_qubit[str(run["qid"])].append(float(output["value"]))
        medians = [statistics.median(values) for values in per_qubit.values() if values]
        if medians:
            numbers.append(statistics.median(medians))
    return Truth(kind="number", numbers=numbers, unit=unit)
