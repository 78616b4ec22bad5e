"""Upstream QDash's AI review fields on a task result: ``ai_review_note`` (a markdown note) and
``ai_review`` (the request state), written and read in one place.

Why here and not in ``qdash.review``: three writers and readers share these shapes — our reviewer
(``review/store.py``), the demo lab (``demo/reviews.py``, which must not import the reviewer: it sits
above the assistant) and the chat tools that read reviews back (``search_task_results``,
``get_latest_task_result``). A divergent copy in any of them would be a note upstream's dashboard
parses differently. The :class:`Verdict` a note renders is here for the same reason (the demo writes
verdicts, and the write tool ``label_ai_review`` takes its decision and label), importing no driver.

Why so careful with free text: the dashboard finds each field with a line-anchored pattern
(``- Decision: …``), and some readers look for the markers anywhere in the text. Model text that
kept a newline, or that contained ``- Decision: `PASS``` on its own, could forge a field. So every
free-text value is collapsed to one line (every Unicode line break and run of whitespace becomes one
space), backticks become quotes, and any field marker inside it loses its hyphen-colon shape.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

AI_REVIEW_ACTOR = "qdash-ai"
"""``ai_review_note.updated_by`` of upstream's own AI reviews; the dashboard tells them from users' notes."""
HEADER = "**AI review**"
FIELDS = (
    "Decision",
    "Human label suggestion",
    "Accepted parameter(s)",
    "Needs review",
    "Primary reason",
    "Closest knowledge case",
    "Suggested labels",
    "Recommended action",
    "Optional note",
)
MAX_TEXT = 600
"""Longest free-text field kept (characters); the dashboard shows one line per field."""
MAX_NOTE_CHARS = 4500
"""Upstream caps the note at this length; ours stays below it by construction (fields are capped)."""
PENDING = ("requested", "running")
"""``ai_review.status`` of a review asked for and not finished (upstream's in-flight states)."""

_MARKER = re.compile(
    r"[-*•‐‑‒–—―−]\s*(" + "|".join(re.escape(name) for name in FIELDS) + r")\s*:",
    re.IGNORECASE,
)
_FIELD_LINE = re.compile(r"^-\s*(?P<name>[^:\n]+?):\s*`?(?P<value>.+?)`?\s*$", re.MULTILINE)


Decision = Literal["PASS", "PASS_WITH_NOTE", "REVIEW", "FAIL"]
Label = Literal["CORRECT", "SUSPICIOUS", "MISASSIGNMENT", "NO_SIGNAL", "ANOMALY"]


class Verdict(BaseModel):
    """One review decision; the model's answer, the stored result and the note have this shape
    (``qdash.review.decision`` asks for it and bounds it; the demo lab writes it too)."""

    model_config = ConfigDict(extra="forbid")

    decision: Decision
    label: Label = Field(description="Human label suggestion for this result.")
    accepted_parameters: list[str] = Field(description="Output parameters the data supports.")
    questioned_parameters: list[str] = Field(description="Output parameters that need a human look.")
    reason: str = Field(description="One short paragraph grounded in the figure and the numbers.")
    closest_knowledge_case: str = Field(description="The task-knowledge case this resembles, or 'none'.")
    suggested_labels: list[str] = Field(description="Short snake_case tags, e.g. weak_signal, tls_dip.")
    recommended_action: str = Field(description="One concrete operator action.")
    note: str = Field(description="An optional caveat; empty when there is none.")


def one_line(text: str, limit: int = MAX_TEXT) -> str:
    """Free text as one safe line: collapsed whitespace, no backticks, no field markers."""
    flat = " ".join(str(text).split())
    flat = flat.replace("`", "'")
    flat = _MARKER.sub(lambda match: f"({match.group(1)})", flat)
    return flat[:limit].rstrip()


def _names(values: Sequence[str]) -> str:
    cleaned = [one_line(value, 80) for value in values]
    kept = [value for value in cleaned if value]
    return ", ".join(kept) if kept else "none"


def _text(value: str) -> str:
    return one_line(value) or "none"


def render_note(verdict: Verdict) -> str:
    """The note block, one field per line in the dashboard's order; decision and label in backticks."""
    values = (
        f"`{verdict.decision}`",
        f"`{verdict.label}`",
        _names(verdict.accepted_parameters),
        _names(verdict.questioned_parameters),
        _text(verdict.reason),
        _text(verdict.closest_knowledge_case),
        _names(verdict.suggested_labels),
        _text(verdict.recommended_action),
        _text(verdict.note),
    )
    lines = [HEADER, *(f"- {name}: {value}" for name, value in zip(FIELDS, values, strict=True))]
    return "\n".join(lines)[:MAX_NOTE_CHARS]


def note_fields(content: str) -> dict[str, str]:
    """The fields of a note as upstream's dashboard reads them (the first ``- Name: value`` line of
    each name, backticks stripped); our header or upstream's ``## AI review`` alike."""
    found: dict[str, str] = {}
    for match in _FIELD_LINE.finditer(content or ""):
        found.setdefault(match.group("name").strip(), match.group("value").strip().strip("`"))
    return found


def ai_review_note(content: str, at: datetime) -> dict[str, Any]:
    """``ai_review_note``: apart from ``user_note``, which a review never touches."""
    return {"content": content, "updated_by": AI_REVIEW_ACTOR, "updated_at": at}


def ai_review_state(
    *,
    status: str,
    at: datetime,
    requested_by: str,
    run_id: str,
    trigger: str,
    provider: str,
    model: str,
    error: str = "",
) -> dict[str, Any]:
    """``ai_review``: upstream's ``AiReviewModel`` fields, all of them, so its model validates the
    document (``completed_at`` stays ``None`` while the review is pending)."""
    return {
        "status": status,
        "requested_at": at,
        "requested_by": requested_by,
        "review_run_id": run_id,
        "trigger_type": trigger,
        "model_provider": provider,
        "model_name": model,
        "completed_at": None if status in PENDING else at,
        "error": error,
    }
