"""``visible`` mode of the review suite: what a reviewing model is sent, and the guards alone, no model.

For every known-bad result the real :class:`~qdash.review.reviewer.Reviewer` builds the prompt it
would send (analysis mode's context + the guards' findings); the result is *answerable* when that
prompt shows the evidence the oracle names (the failure message of a failed fit, every scored value
of a TLS-dip or bad-qubit result), or when the guards FAIL it and no model is asked. Every finished
result also gets the guards' own decision, graded as guard-only precision and recall.
"""

from __future__ import annotations

import math
import re

from qdash.evaluation.oracle.reviews import ResultTruth
from qdash.evaluation.reviews.grades import OnReview, ReviewResult
from qdash.evaluation.reviews.lab import ReviewLab
from qdash.evaluation.reviews.models import prompt_settings
from qdash.evaluation.visible import count_tokens

NUMBER = re.compile(r'(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(\s*%|,\s*"unit":\s*"%")?')
"""A number as written, and whether it is in percent ("95.83 %" in text, ``{"value": 95.83, "unit":
"%"}`` in JSON): the prompt shows fidelities in %, the oracle keeps the stored fraction 0.9583."""
REL_TOL = 1e-3
"""A value counts as shown when the prompt writes it to 3 significant digits or better."""


def evidence_shown(truth: ResultTruth, text: str) -> tuple[bool, str]:
    """Whether ``text`` (what the model reads) shows why ``truth`` is bad, and what was (not) shown."""
    if truth.kind == "failed_fit":
        said = truth.message or "failed"
        return said in text, f"failure {said!r} {'shown' if said in text else 'not shown'}"
    numbers = [float(n) / 100 if percent else float(n) for n, percent in NUMBER.findall(text)]
    shown = {
        name: any(math.isclose(value, n, rel_tol=REL_TOL, abs_tol=1e-12) for n in numbers)
        for name, value in truth.values.items()
    }
    if not shown:
        return False, "no scored value to show"
    missing = [name for name, ok in shown.items() if not ok]
    if missing:
        return False, "not shown: " + ", ".join(missing)
    return True, "shown: " + ", ".join(f"{name}={truth.values[name]:.4g}" for name in shown)


async def run_visible_reviews(
    lab: ReviewLab, truths: list[ResultTruth], on_result: OnReview | None = None
) -> list[ReviewResult]:
    """The guards on every result; the prompt's evidence on every known-bad one the guards do not FAIL."""
    from qdash.copilot.assistant import Assistant
    from qdash.review.reviewer import Reviewer

    ids = [truth.task_id for truth in truths]
    docs = {
        str(doc["task_id"]): doc
        for doc in lab.db["task_result_history"].find({"project_id": lab.project_id, "task_id": {"$in": ids}})
    }
    assistant = Assistant(lab.db, prompt_settings(lab.settings))
    results: list[ReviewResult] = []
    try:
        reviewer = Reviewer(assistant)
        for truth in truths:
            report = reviewer.policy.guards(docs[truth.task_id])
            evidence: bool | None = None
            detail, tokens = "", 0
            if truth.bad and report.floor == "FAIL":
                evidence, detail = True, "guards FAIL it (no model request)"
            elif truth.bad:
                prompt = await reviewer.prompt(lab.project_id, lab.username, docs[truth.task_id], report)
                evidence, detail = evidence_shown(truth, prompt.text)
                tokens = count_tokens(prompt.instructions) + count_tokens(prompt.text)
            result = ReviewResult.of(
                truth,
                "visible",
                decision=report.floor,
                label=report.label,
                source="guards",
                tokens=tokens,
                evidence=evidence,
                detail=detail or report.reason,
            )
            results.append(result)
            if on_result is not None:
                on_result(result)
    finally:
        await assistant.aclose()
    return results
