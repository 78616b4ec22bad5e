"""AI review of task results: guards, a strict verdict, upstream's note fields. See README.md."""

from qdash.models.ai_review import Verdict, render_note
from qdash.review.config import PROMPT_VERSION, ReviewConfig
from qdash.review.decision import DECISIONS, LABELS, parse_verdict, safe_review
from qdash.review.guards import GuardHit, GuardReport, run_guards
from qdash.review.outcome import Outcome, combine, guard_verdict, needs_model
from qdash.review.policy import ReviewPolicy
from qdash.review.store import REVIEWS, ReviewNotFoundError, ReviewRequest, ReviewStore

__all__ = [
    "DECISIONS",
    "LABELS",
    "PROMPT_VERSION",
    "REVIEWS",
    "GuardHit",
    "GuardReport",
    "Outcome",
    "ReviewConfig",
    "ReviewNotFoundError",
    "ReviewPolicy",
    "ReviewRequest",
    "ReviewStore",
    "Verdict",
    "combine",
    "guard_verdict",
    "needs_model",
    "parse_verdict",
    "render_note",
    "run_guards",
    "safe_review",
]
