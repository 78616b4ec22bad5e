"""The user's decision on a proposal: from a chat request (the newest dashboard's ``approval`` field,
or "yes"/"no" in words for the dashboard that shows the proposal as text) or from the API.

Why decided before the stream starts: a refusal (stale, someone else's, a viewer) must be an HTTP
400/403, and the write must not depend on the stream's life — a client that goes away right after
the 200 would otherwise leave a claimed approval that was never carried out. So the claim and the
write run in the request; the stream then reports the write as a tool call and the model, told the
outcome, summarises it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from pymongo.database import Database

from qdash.actions.approvals import ApprovalError, Scope, claim, editor_refusal, supersede, the_pending_one
from qdash.actions.runner import Outcome, carry_out
from qdash.settings import Settings

DECISION_PREFIX = "Action decision: "
"""How the model's message of a decision turn begins (the demo model recognises it)."""
YES = frozenset({"yes", "y", "approve", "approved", "ok", "okay", "go ahead", "yes please", "do it"})
NO = frozenset({"no", "n", "decline", "declined", "cancel", "no thanks", "don't", "do not"})
Doc = dict[str, Any]


@dataclass(frozen=True)
class Decided:
    """A claimed approval, the decision, and (approved) the write's outcome."""

    approval: Doc
    approve: bool
    outcome: Outcome | None
    duration_ms: float

    @property
    def label(self) -> str:
        return str(self.approval["label"])

    def model_note(self) -> str:
        """What the model is told instead of the user's "Approved: …" / "yes"."""
        tool = self.approval["tool"]
        if not self.approve:
            return (
                f'{DECISION_PREFIX}the user declined "{self.label}"; it was not run. Acknowledge it in '
                f"one sentence; do not call {tool} again unless the user asks."
            )
        assert self.outcome is not None
        state = "done" if self.outcome.ok else "failed"
        return (
            f'{DECISION_PREFIX}the user approved "{self.label}"; the server ran {tool} with the approved '
            f"arguments: {state}. {self.outcome.message} (audit record {self.outcome.audit_id}). Tell "
            f"the user the outcome in one or two sentences; do not call {tool} again."
        )


def yes_or_no(message: str) -> bool | None:
    """``True``/``False`` for a bare yes or no in words, else ``None``."""
    words = re.sub(r"[^\w' ]+", " ", message.lower()).strip()
    words = re.sub(r"\s+", " ", words)
    if words in YES:
        return True
    if words in NO:
        return False
    return None


def decide(db: Database[Doc], scope: Scope, approval_id: str, approve: bool) -> Decided:
    """Claim the approval for this caller and, approved, carry it out (blocking; ApprovalError)."""
    if approve and (refusal := editor_refusal(db, scope.project_id, scope.username)) is not None:
        raise ApprovalError(403, refusal)
    approval = claim(db, approval_id, scope, approve)
    started = time.monotonic()
    outcome = carry_out(db, approval, scope.username) if approve else None
    return Decided(approval, approve, outcome, (time.monotonic() - started) * 1000)


def from_chat(
    db: Database[Doc], settings: Settings, scope: Scope, approval: tuple[str, bool] | None, message: str
) -> Decided | None:
    """The decision a chat request carries, if any (blocking; ApprovalError). Any other message voids
    the session's pending proposal: it was valid only until the user's next message."""
    if not settings.actions.enabled:
        return None
    if approval is not None:
        return decide(db, scope, *approval)
    word = yes_or_no(message)
    pending = the_pending_one(db, scope) if word is not None else None
    if pending is not None and word is not None:
        return decide(db, scope, pending["_id"], word)
    supersede(db, scope)
    return None
