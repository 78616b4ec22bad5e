"""The review verdict: what the model must answer, and how guards bound it.

Why a closed schema: the verdict is stored, counted and shown as a badge, so a decision or label
outside the fixed vocabulary (or a missing field) must never reach the store. :func:`parse_verdict`
turns anything the model returned into a :class:`Verdict` or a safe ``REVIEW`` that says why;
:func:`bound_by_guards` makes sure a guard hit can never end up as ``PASS``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from qdash.engine.output import strip_code_fence
from qdash.models.ai_review import MAX_TEXT, Decision, Label, Verdict

DECISIONS: tuple[Decision, ...] = ("PASS", "PASS_WITH_NOTE", "REVIEW", "FAIL")
"""In increasing severity: a bound only ever moves a decision to the right."""
LABELS: tuple[Label, ...] = ("CORRECT", "SUSPICIOUS", "MISASSIGNMENT", "NO_SIGNAL", "ANOMALY")
NEEDS_HUMAN: frozenset[Decision] = frozenset({"REVIEW", "FAIL"})


def verdict_schema() -> dict[str, Any]:
    """The JSON schema sent as the structured-output format: closed, every field required."""
    schema = Verdict.model_json_schema()
    schema["required"] = list(schema["properties"])
    schema["additionalProperties"] = False
    for prop in schema["properties"].values():
        prop.pop("title", None)
    schema.pop("title", None)
    return schema


VERDICT_INSTRUCTION = (
    "Reply with one JSON object only, no prose around it: "
    '{"decision": "PASS" | "PASS_WITH_NOTE" | "REVIEW" | "FAIL", '
    '"label": "CORRECT" | "SUSPICIOUS" | "MISASSIGNMENT" | "NO_SIGNAL" | "ANOMALY", '
    '"accepted_parameters": [names], "questioned_parameters": [names], "reason": "...", '
    '"closest_knowledge_case": "...", "suggested_labels": [tags], "recommended_action": "...", '
    '"note": "..."}.'
)
"""Appended to the instructions when a server cannot enforce the schema (the Chat path's fallback)."""


def safe_review(reason: str, *, label: Label = "SUSPICIOUS") -> Verdict:
    """The verdict used when no usable model verdict exists: a human looks, and is told why."""
    return Verdict(
        decision="REVIEW",
        label=label,
        accepted_parameters=[],
        questioned_parameters=[],
        reason=reason,
        closest_knowledge_case="none",
        suggested_labels=["model_format_error"],
        recommended_action="Open the figure and judge the fit by hand; re-run the review if the model failed",
        note="",
    )


def read_verdict(text: str) -> Verdict | str:
    """The model's final text as a verdict, or why it is not one (a short sentence).

    Accepts a fenced JSON block (the prompt-only fallback of local models) and ignores case in the
    decision and label (``"pass"``); it never invents a field the model did not give.
    """
    stripped = strip_code_fence(text.strip()).strip()
    if not stripped:
        return "The model returned no verdict."
    try:
        data = json.loads(stripped)
    except ValueError:
        return "The model's verdict was not JSON."
    if not isinstance(data, dict):
        return "The model's verdict was not a JSON object."
    for key in ("decision", "label"):
        if isinstance(data.get(key), str):
            data[key] = data[key].strip().upper()
    try:
        verdict = Verdict.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "verdict"
        return f"The model's verdict was malformed ({where}: {first['msg']})."
    return verdict.model_copy(update={"reason": verdict.reason[:MAX_TEXT], "note": verdict.note[:MAX_TEXT]})


def parse_verdict(text: str) -> Verdict:
    """:func:`read_verdict`, with anything unusable turned into :func:`safe_review` naming the cause."""
    verdict = read_verdict(text)
    return safe_review(verdict) if isinstance(verdict, str) else verdict


def stricter(a: Decision, b: Decision) -> Decision:
    """The more severe of two decisions."""
    return a if DECISIONS.index(a) >= DECISIONS.index(b) else b


def bound_by_guards(
    verdict: Verdict, floor: Decision | None, guard_label: Label | None, questioned: Sequence[str]
) -> Verdict:
    """The verdict raised to at least ``floor``; the guards' label replaces ``CORRECT`` and the guarded
    parameters move from accepted to questioned. ``floor=None`` (no guard hit) leaves it unchanged."""
    if floor is None:
        return verdict
    decision = stricter(verdict.decision, floor)
    label = verdict.label
    if decision != verdict.decision or label == "CORRECT":
        label = guard_label or ("ANOMALY" if decision == "FAIL" else "SUSPICIOUS")
    questioned_all = list(dict.fromkeys([*verdict.questioned_parameters, *questioned]))
    accepted = [name for name in verdict.accepted_parameters if name not in questioned_all]
    return verdict.model_copy(
        update={
            "decision": decision,
            "label": label,
            "accepted_parameters": accepted,
            "questioned_parameters": questioned_all,
        }
    )
