"""Ground-truth evaluation of the copilot: a question set, an independent oracle, graders, runners.

Read ``README.md`` first. Public API: :class:`EvalLab` (a seeded lab + its oracle),
:func:`load_questions`, :func:`run_visible` (ideal plans through the real tools, no model),
:class:`QuestionResult` and :class:`Summary`. ``EvalLab`` and ``run_visible`` are imported on first
use: they load the assistant's tools, the demo generator and the database, which ``qdash eval
--list`` (and any ``qdash`` command that only names this package) does without.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qdash.evaluation.questions import Question, load_questions, select
from qdash.evaluation.results import QuestionResult, Summary

if TYPE_CHECKING:
    from qdash.evaluation.lab import EvalLab
    from qdash.evaluation.visible import run_visible

__all__ = ["EvalLab", "Question", "QuestionResult", "Summary", "load_questions", "run_visible", "select"]


def __getattr__(name: str) -> Any:
    if name == "EvalLab":
        from qdash.evaluation.lab import EvalLab

        return EvalLab
    if name == "run_visible":
        from qdash.evaluation.visible import run_visible

        return run_visible
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
