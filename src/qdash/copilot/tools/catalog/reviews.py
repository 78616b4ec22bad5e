"""AI reviews of task results as the chat tools show them: ``search_task_results`` filters and counts
runs by their review (``review``), and every run it lists, like ``get_latest_task_result``'s run,
carries what the review said.

Why upstream's fields and not our ``copilot_review`` documents: ``task_result_history.ai_review_note``
(the note: decision, label, questioned parameters, reason, action) and ``ai_review`` (the request
state) are what upstream QDash's dashboard and its copilot's AI review list read, so the chat says
what the lab sees there; they hold the reviews upstream's own reviewer wrote too, and the pending
requests (``requested``/``running``) our documents never have; and they sit on the run itself, so a
window's count needs no second query and runs a person excluded drop out with their reviews. Our
documents add guards, usage and a person's label (``label_ai_review``), which these answers do not
need.
"""

from __future__ import annotations

from typing import Any, Literal

from qdash.models.ai_review import PENDING, note_fields
from qdash.repositories.scope import Doc

ReviewFilter = Literal["any", "pass", "flagged", "fail", "pending"]
"""``pass``: PASS or PASS_WITH_NOTE; ``flagged``: REVIEW or FAIL (a person should look); ``fail``:
FAIL; ``pending``: requested and not finished; ``any``: every run with a review state."""
_WANTED: dict[str, frozenset[str]] = {
    "pass": frozenset({"PASS", "PASS_WITH_NOTE"}),
    "flagged": frozenset({"REVIEW", "FAIL"}),
    "fail": frozenset({"FAIL"}),
    "pending": frozenset({"pending"}),
}
_DETAIL = {
    "label": "Human label suggestion",
    "needs_review": "Needs review",
    "reason": "Primary reason",
    "action": "Recommended action",
    "note": "Optional note",
}


def verdict_of(run: Doc) -> str | None:
    """The run's review: its note's decision, else ``pending`` while requested, ``error`` when the
    request failed; ``None`` for a run never sent to review."""
    decision = note_fields(_note(run)).get("Decision")
    if decision:
        return decision
    status = (run.get("ai_review") or {}).get("status") or ""
    if status in PENDING:
        return "pending"
    return "error" if status == "failed" else None


def review_states(wanted: ReviewFilter) -> list[str]:
    """The ``ai_review.status`` values a run matching ``wanted`` can have: the window reads only those
    runs (a week of a 64-qubit chip is ~2,000 runs, a few hundred of them reviewed)."""
    if wanted == "pending":
        return list(PENDING)
    # a pending re-review keeps the earlier note: its run counts by that note's decision
    return ["completed", *PENDING, *(["failed"] if wanted == "any" else [])]


def review_matches(run: Doc, wanted: ReviewFilter) -> bool:
    verdict = verdict_of(run)
    return verdict is not None and (wanted == "any" or verdict in _WANTED[wanted])


def review_cells(run: Doc) -> tuple[str | None, str | None]:
    """``(verdict, reason)`` of a listed run (both ``None`` without a review: the column drops)."""
    return verdict_of(run), note_fields(_note(run)).get(_DETAIL["reason"])


def review_detail(run: Doc) -> dict[str, Any]:
    """``{"ai_review": {decision, label, needs_review, reason, action, note}}`` of one run, the
    fields its note has (``status`` instead while it is pending or failed); empty without one."""
    verdict = verdict_of(run)
    if verdict is None:
        return {}
    fields = note_fields(_note(run))
    found = {key: fields[name] for key, name in _DETAIL.items() if fields.get(name) not in (None, "none")}
    if verdict in ("pending", "error"):
        return {"ai_review": {"status": verdict, "error": (run.get("ai_review") or {}).get("error") or None}}
    return {"ai_review": {"decision": verdict, **found}}


def _note(run: Doc) -> str:
    return str((run.get("ai_review_note") or {}).get("content") or "")
