"""The review prompt: analysis mode's knowledge and context, asking for one verdict instead of prose.

Why not the analysis prompt itself: that one asks for the chat blocks format and invites tool calls;
a review is one model request with every fact gathered up front (bulk runs review hundreds of
results) and a closed verdict schema. The parts that matter are shared: the task knowledge, the
thresholds, the data conventions, the rendered analysis context and the images note.
"""

from __future__ import annotations

from qdash.copilot.prompts.analysis import ResultPrompt
from qdash.review.decision import VERDICT_INSTRUCTION
from qdash.review.guards import GuardReport

REVIEW_ROLE = (
    "You are QDash Copilot reviewing one finished calibration result of a superconducting qubit for a "
    "lab that cannot read every fit. Decide whether the result can be used as is."
)

DECISION_RULES = """Decisions:
- PASS: the fit matches the data and every output is plausible; the values can be used.
- PASS_WITH_NOTE: usable, with a caveat worth recording (borderline value, weak but clear signal).
- REVIEW: a human should look before the values are used (suspicious shape, jump against history or \
neighbours, borderline fit).
- FAIL: the result must not be used (no signal, wrong feature fitted, impossible value).
Labels: CORRECT (the fit is right), SUSPICIOUS (doubtful), MISASSIGNMENT (the fit locked onto the \
wrong feature), NO_SIGNAL (no usable signal), ANOMALY (the physics looks abnormal, e.g. a TLS dip).
accepted_parameters / questioned_parameters name output parameters only. reason: one short paragraph \
grounded in the figure and the numbers. closest_knowledge_case: the typical failure of the task \
knowledge this resembles, or "none". note: empty unless a caveat helps."""

IMAGES = (
    "The first image is this result's figure; further images are reference figures of a healthy result "
    "(ideal examples, not this qubit's data)."
)


REVIEW_PROMPT = ResultPrompt(REVIEW_ROLE, DECISION_RULES, IMAGES, VERDICT_INSTRUCTION)
"""A review: one verdict on one result (byte-stable per task: cacheable across a bulk run)."""


def guard_findings(report: GuardReport) -> str:
    """What the guards found, and the bound it puts on the decision (the model is told, not asked)."""
    if not report.hits:
        return "Deterministic guards: nothing found."
    lines = [f"- {hit.decision}: {hit.reason}" for hit in report.hits]
    return (
        "Deterministic guards already found (your decision cannot be less severe than "
        f"{report.floor}):\n" + "\n".join(lines)
    )
