"""The markdown note upstream QDash's dashboard parses line by line (``ai_review_note.content``).

Why so careful with free text: the dashboard finds each field with a line-anchored pattern
(``- Decision: …``), and some readers look for the markers anywhere in the text. Model text that
kept a newline, or that contained ``- Decision: `PASS``` on its own, could forge a field. So every
free-text value is collapsed to one line (every Unicode line break and run of whitespace becomes one
space), backticks become quotes, and any field marker inside it loses its hyphen-colon shape.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from qdash.review.decision import MAX_TEXT, Verdict

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
MAX_NOTE_CHARS = 4500
"""Upstream caps the note at this length; ours stays below it by construction (fields are capped)."""

_MARKER = re.compile(
    r"[-*•‐‑‒–—―−]\s*(" + "|".join(re.escape(name) for name in FIELDS) + r")\s*:",
    re.IGNORECASE,
)


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
