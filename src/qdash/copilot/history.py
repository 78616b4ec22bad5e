"""Condense the dashboard's resent conversation before it reaches the model.

The UI resends every earlier turn, assistant turns as the JSON-stringified result with charts
(thousands of tokens each). Condensing keeps the text, names the charts, drops errors and old
turns. It is deterministic, so the prompt prefix stays byte-stable and cacheable across turns.
"""

from __future__ import annotations

import json

from qdash.copilot.answer import chart_title, legacy_to_text
from qdash.copilot.history_digest import digest
from qdash.copilot.requests import HistoryEntry

LEGACY_KEYS = frozenset({"summary", "assessment", "explanation", "potential_issues", "recommendations"})


def condense_assistant(content: str) -> str | None:
    """One assistant turn as plain text; ``None`` drops it (an ``Error: …`` entry)."""
    if content.startswith("Error:"):
        return None
    if not content.startswith("{"):
        return content
    try:
        payload = json.loads(content)
    except ValueError:
        return content
    if not isinstance(payload, dict):
        return content
    if isinstance(payload.get("blocks"), list):
        parts: list[str] = []
        for block in payload["blocks"]:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "chart" or block.get("chart"):
                parts.append(f"[chart: {chart_title(block.get('chart')) or 'untitled'}]")
            elif block.get("type") == "figure" and block.get("content"):
                parts.append(f"[{block['content']}]")
            elif block.get("content"):
                parts.append(str(block["content"]))
        assessment = payload.get("assessment")
        if assessment:
            parts.append(f"Assessment: {assessment}")
        return "\n\n".join(parts)
    if LEGACY_KEYS & payload.keys() and "summary" in payload:
        text = legacy_to_text(payload)
        if payload.get("assessment"):
            text = f"{text}\n\nAssessment: {str(payload['assessment']).lower()}"
        return text
    return content


def condense_history(
    history: list[HistoryEntry], *, max_turns: int, max_chars: int, digest_chars: int = 0
) -> list[HistoryEntry]:
    """Condensed entries, oldest first: the last ``max_turns`` user/assistant pairs within
    ``max_chars``, after a digest (``history_digest``) of the older turns within ``digest_chars``
    (0: older turns are left out)."""
    entries: list[HistoryEntry] = []
    for entry in history:
        if entry.role == "assistant":
            text = condense_assistant(entry.content)
            if text is None or not text.strip():
                continue
            entries.append(HistoryEntry(role="assistant", content=text))
        elif entry.content.strip():
            entries.append(HistoryEntry(role="user", content=entry.content))
    pairs = _pair_up(entries)
    kept: list[list[HistoryEntry]] = []
    total = 0
    for pair in reversed(pairs[-max_turns:] if max_turns else []):
        size = sum(len(e.content) for e in pair)
        if total + size > max_chars:
            break
        kept.append(pair)
        total += size
    recent = [entry for pair in reversed(kept) for entry in pair]
    summary = digest(pairs[: len(pairs) - len(kept)], max_chars=digest_chars)
    return [summary, *recent] if summary else recent


def _pair_up(entries: list[HistoryEntry]) -> list[list[HistoryEntry]]:
    """Group into turns: a user entry opens a turn; following assistant entries join it."""
    pairs: list[list[HistoryEntry]] = []
    for entry in entries:
        if entry.role == "user" or not pairs:
            pairs.append([entry])
        else:
            pairs[-1].append(entry)
    return pairs
