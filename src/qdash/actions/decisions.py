"""The user's decision on a proposal: from a chat request (the newest dashboard's ``approval`` field,
or "yes"/"no" in words for the dashboard that shows the proposal as text) or from the API.

A decision names what it decides. The id decides (the card); the text card carries a short code the
person can type back ("yes 3FA9C2"); a bare "yes"/"no" decides only the approval shown in the answer
right before it — the last assistant message of the conversation the request carries, never the
session, which clients without sessions share — and only when that answer showed exactly one.
Otherwise the reply says what is pending and how to decide it, and nothing is written.

Two steps, so that a refusal is an HTTP status and the write is a step of the chat turn: the
request binds the decision (``bind``: reads only, so a stale, foreign or viewer's decision is a
400/403 before the stream starts) and the turn carries it out (``decide``: the claim and the write,
on one worker thread, as the first step the engine runs and reports like any tool call). A client
that goes away before that step leaves the approval pending (nothing claimed: it can be decided
again); once the step runs, the thread finishes the claim and the write whatever happens to the
stream, and the audit records it (``audit.py``). A decision that lost a race between the two steps
is told to the model as the step's error.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from pymongo.database import Database

from qdash.actions import approvals
from qdash.actions.approvals import LAB_ACTIONS, ApprovalError, Scope, check, claim, code_of, supersede
from qdash.actions.runner import Outcome, carry_out
from qdash.repositories.membership import editor_refusal
from qdash.settings import Settings

YES = frozenset({"yes", "y", "approve", "approved", "ok", "okay", "go ahead", "yes please", "do it"})
NO = frozenset({"no", "n", "decline", "declined", "cancel", "no thanks", "don't", "do not"})
CALL_PREFIX = "call_"
_SHOWN = re.compile(r"\bapv_([0-9a-f]{6})[0-9a-f]{18}\b|\byes ([0-9A-F]{6})\b")
Doc = dict[str, Any]


@dataclass(frozen=True)
class Pending:
    """A decision bound to one approval and checked, not carried out yet (the turn's first step)."""

    approval: Doc
    approve: bool

    @property
    def label(self) -> str:
        return str(self.approval["label"])

    @property
    def call_id(self) -> str:
        """The server-run call's id: the model sees the decision as this call's output."""
        return f"{CALL_PREFIX}{self.approval['_id']}"

    def user_text(self) -> str:
        return f"{'Approved' if self.approve else 'Declined'}: {self.label}"


@dataclass(frozen=True)
class Decided:
    """A claimed approval, the decision, and (approved) the write's outcome."""

    approval: Doc
    approve: bool
    outcome: Outcome | None
    duration_ms: float

    def result(self) -> Doc:
        """What the model is told of the decision, as the output of the call it proposed."""
        tool = self.approval["tool"]
        if self.outcome is None:
            return {
                "declined": True,
                "written": False,
                "note": f"The user declined; it was not run. Acknowledge it in one sentence; do not call "
                f"{tool} again unless the user asks.",
            }
        return {
            **self.outcome.as_json(),
            "note": "The user approved it and the server ran it with the approved arguments. Tell the "
            f"user the outcome (the message above) in one or two sentences; do not call {tool} again.",
        }


@dataclass(frozen=True)
class Unbound:
    """A "yes"/"no" that names no one approval: the reply says what is pending, nothing is written."""

    text: str


def is_decision_call(call_id: str) -> bool:
    """Whether a call in a turn's items is a decided approval the server ran (only the server puts
    such a call there: a client's history holds messages, never calls)."""
    return call_id.startswith(f"{CALL_PREFIX}apv_")


def decision_words(message: str) -> tuple[bool, str | None] | None:
    """``(approve, code)`` for "yes", "no", "yes 3FA9C2" …; ``None`` for any other message."""
    words = re.sub(r"[^\w' ]+", " ", message.lower()).strip()
    words = re.sub(r"\s+", " ", words)
    head, _, last = words.rpartition(" ")
    code = None
    if head and re.fullmatch(r"[0-9a-f]{6}", last):
        words, code = head, last.upper()
    if words in YES:
        return True, code
    if words in NO:
        return False, code
    return None


def shown_codes(answer: str | None) -> set[str]:
    """The codes of the approvals an answer showed: its approval blocks' ids, its text cards' codes."""
    return {(a or b).upper() for a, b in _SHOWN.findall(answer or "")}


def _check_editor(db: Database[Doc], scope: Scope, approve: bool) -> None:
    if approve and (refusal := editor_refusal(db, scope.project_id, scope.username, LAB_ACTIONS)) is not None:
        raise ApprovalError(403, refusal)


def pending(db: Database[Doc], scope: Scope, approval_id: str, approve: bool) -> Pending:
    """The decision on the scope's approval if it can be made now (reads only; ApprovalError)."""
    _check_editor(db, scope, approve)
    return Pending(check(db, approval_id, scope), approve)


def decide(db: Database[Doc], settings: Settings, scope: Scope, approval_id: str, approve: bool) -> Decided:
    """Claim the approval for this caller and, approved, carry it out (blocking; ApprovalError)."""
    _check_editor(db, scope, approve)
    approval = claim(db, approval_id, scope, approve)
    started = time.monotonic()
    outcome = carry_out(db, settings, approval, scope.username) if approve else None
    return Decided(approval, approve, outcome, (time.monotonic() - started) * 1000)


def how_to_decide(doc: Doc) -> str:
    code = code_of(doc["_id"])
    return f"Pending: **{doc['label']}**. Reply **yes {code}** to approve or **no {code}** to decline."


def _unbound(db: Database[Doc], scope: Scope, why: str) -> Unbound | None:
    """Nothing decided: say why and what is pending (``None`` when nothing is: an ordinary message)."""
    pending = approvals.live(db, scope)
    if pending is None:
        return Unbound(f"{why} Nothing is pending: ask the assistant again.") if why else None
    return Unbound(f"{why} {how_to_decide(pending)}".strip())


def bind(
    db: Database[Doc],
    settings: Settings,
    scope: Scope,
    approval: tuple[str, bool] | None,
    *,
    message: str,
    last_answer: str | None,
) -> Pending | Unbound | None:
    """The decision a chat request carries, if any, checked (blocking; ApprovalError for a card's
    decision); the turn carries it out. Any other message voids the session's pending proposal: it
    was valid only until the user's next message. ``last_answer``: the conversation's last
    assistant message, as the client sent it."""
    if not settings.actions.enabled:
        return None
    if approval is not None:
        return pending(db, scope, *approval)
    words = decision_words(message)
    if words is None:
        supersede(db, scope)
        return None
    approve, code = words
    if code is None:
        shown = shown_codes(last_answer)
        if len(shown) != 1:
            many = f"The answer before showed {len(shown)} proposals; nothing was decided." if shown else ""
            return _unbound(db, scope, many)
        (code,) = shown
    doc = approvals.by_code(db, scope, code)
    if doc is None:
        return _unbound(db, scope, f"No proposal with code {code} here; nothing was decided.")
    try:
        return pending(db, scope, doc["_id"], approve)
    except ApprovalError as refused:
        return _unbound(db, scope, f"{refused.detail} Nothing was decided.")
