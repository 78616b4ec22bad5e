"""A deterministic digest of the turns that no longer fit the history window (issue 15).

Why: the condensed history keeps the last turns within ``copilot.history_max_chars``; before this,
older turns were dropped silently, so "what did you find for Q16 at the start?" could not be
answered in a long investigation. The digest keeps every older turn as one line (the question and
the facts of its answer: sentences with measured numbers or qubit ids first) within its own
budget, shared evenly between the turns; only when a turn would get less than a readable line are
the oldest turns left out, and the digest says how many. Deterministic, so the prompt prefix stays cacheable.
"""

from __future__ import annotations

import re

from qdash.copilot.requests import HistoryEntry

DIGEST_HEADER = "Digest of earlier turns of this conversation (oldest first; condensed, not verbatim):"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NUMBER = re.compile(r"(?<![A-Za-z_\d.])\d+(?:\.\d+)?")  # 42.7, 50 — not the 1 of "T1" or "CheckT1"
_QUBIT = re.compile(r"\bQ\d+\b")
_MAX_LINE = 640
_MIN_LINE = 48
_LINE_OVERHEAD = len("- turn 100: Q:  → A: ")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - 1)].rsplit(" ", 1)[0]
    return f"{cut}…"


def answer_facts(answer: str, limit: int) -> str:
    """The answer's sentences ranked by the facts they carry (measured numbers count twice, qubit
    ids once; ties keep their order), clipped to ``limit`` characters."""
    sentences = [s for s in _SENTENCE.split(" ".join(answer.split())) if s]
    ranked = sorted(sentences, key=lambda s: -(2 * len(_NUMBER.findall(s)) + len(_QUBIT.findall(s))))
    return _clip(" ".join(ranked), limit)


def _line(number: int, turn: list[HistoryEntry], room: int) -> str:
    """One turn in ``room`` characters: a third for the question, the rest for the answer's facts."""
    question = " ".join(e.content for e in turn if e.role == "user")
    answer = " ".join(e.content for e in turn if e.role == "assistant")
    text = room - _LINE_OVERHEAD
    line = f"- turn {number}: Q: {_clip(question, max(16, text // 3))}"
    if answer:
        line += f" → A: {answer_facts(answer, max(16, text - min(len(question), text // 3)))}"
    return line


def digest(turns: list[list[HistoryEntry]], *, max_chars: int) -> HistoryEntry | None:
    """One user-role entry summarising ``turns`` (numbered from 1) within ``max_chars``."""
    omission = len("\n- turns 1–100: left out (over the digest budget)")
    first = 0
    while first < len(turns):
        reserve = len(DIGEST_HEADER) + (omission if first else 0)
        room = min(_MAX_LINE, (max_chars - reserve) // (len(turns) - first) - 1)
        if room >= _MIN_LINE:
            break
        first += 1  # the oldest turn gives its room to the newer ones
    else:
        return None
    lines = [_line(i, turns[i - 1], room) for i in range(first + 1, len(turns) + 1)]
    head = DIGEST_HEADER + (f"\n- turns 1–{first}: left out (over the digest budget)" if first else "")
    return HistoryEntry(role="user", content="\n".join([head, *lines]))
