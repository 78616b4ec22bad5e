"""Ground-truth evaluation of the copilot: a question set, an independent oracle, graders, runners.

Read ``README.md`` first. Public API: :class:`EvalLab` (a seeded lab + its oracle),
:func:`load_questions`, :func:`run_visible` (ideal plans through the real tools, no model),
:class:`QuestionResult` and :class:`Summary`.
"""

from qdash.evaluation.lab import EvalLab
from qdash.evaluation.questions import Question, load_questions, select
from qdash.evaluation.results import QuestionResult, Summary
from qdash.evaluation.visible import run_visible

__all__ = ["EvalLab", "Question", "QuestionResult", "Summary", "load_questions", "run_visible", "select"]
