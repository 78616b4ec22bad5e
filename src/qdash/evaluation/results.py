"""Per-question results and the figures a run reports (pass rates, tokens, calls, time)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel

Mode = Literal["visible", "scripted", "live", "replay"]
MAX_DATA_CALLS = 2
"""The headline figure counts answers reachable in at most this many data-tool calls, no sandbox."""


@dataclass
class ModelRunOptions:
    """What a live run against a model may spend: both suites (questions, reviews) take these."""

    model: str | None = None
    """Configured model alias (``None``: the suite's default model)."""
    concurrency: int = 1
    max_cost_tokens: int | None = None
    """No new work starts once the model has reported this many tokens."""
    timeout_s: float = 180.0
    record: Path | None = None
    """Folder that keeps every model exchange, for a later replay."""


R = TypeVar("R")


@dataclass
class ModelRun(Generic[R]):
    """What a live run against a model gave: its graded results and what it spent."""

    results: list[R] = field(default_factory=list)
    skipped: int = 0
    """Work never started because ``max_cost_tokens`` was spent (question attempts, reviews)."""
    tokens: int = 0


class QuestionResult(BaseModel):
    """One question in one mode (one attempt)."""

    id: str
    category: str
    mode: Mode
    passed: bool
    detail: str
    truth: str
    tool_calls: int = 0
    data_calls: int = 0
    sandbox: bool = False
    needs_data: bool = True
    tool_tokens: int = 0
    """o200k tokens of the tool outputs (visible mode) or model-reported tokens (scripted/live)."""
    seconds: float = 0.0
    answer: str = ""
    attempt: int = 0
    error: str | None = None
    """Set when the attempt did not produce an answer (timeout, model error)."""

    @property
    def answerable_cheaply(self) -> bool:
        """Visible within ``MAX_DATA_CALLS`` data-tool calls and without the sandbox."""
        return self.passed and self.needs_data and self.data_calls <= MAX_DATA_CALLS and not self.sandbox


def percentile(values: list[int], fraction: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * fraction // 1))
    return float(ordered[int(rank) - 1])


class Summary(BaseModel):
    """The headline numbers of one visible run."""

    questions: int
    data_questions: int
    answerable: int
    answerable_cheaply: int
    median_tokens: float
    p90_tokens: float
    by_category: dict[str, tuple[int, int]]

    @classmethod
    def of(cls, results: list[QuestionResult]) -> Summary:
        data = [r for r in results if r.needs_data]
        tokens = [r.tool_tokens for r in data]
        categories: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for result in results:
            categories[result.category][0] += result.passed
            categories[result.category][1] += 1
        return cls(
            questions=len(results),
            data_questions=len(data),
            answerable=sum(r.passed for r in data),
            answerable_cheaply=sum(r.answerable_cheaply for r in data),
            median_tokens=float(statistics.median(tokens)) if tokens else 0.0,
            p90_tokens=percentile(tokens, 0.9),
            by_category={k: (v[0], v[1]) for k, v in sorted(categories.items())},
        )


def pass_hat_k(attempts: list[bool]) -> bool:
    """pass^k of one question: every one of its k attempts passed (reliability, not luck)."""
    return bool(attempts) and all(attempts)


class CategoryScore(BaseModel):
    """One row of the report: a category (or ``all``) over its questions and attempts."""

    category: str
    questions: int
    attempts: int
    pass_at_1: float
    """Mean over questions of (passed attempts / attempts): the chance one answer is right."""
    pass_hat_k: float
    """Share of questions whose every attempt passed."""
    errors: int
    """Attempts without an answer (timeouts, model errors, broken streams)."""
    median_tokens: float
    mean_tool_calls: float
    mean_seconds: float


def score(category: str, results: list[QuestionResult]) -> CategoryScore:
    by_question: dict[str, list[QuestionResult]] = defaultdict(list)
    for result in results:
        by_question[result.id].append(result)
    n = max(1, len(by_question))
    attempts = max(1, len(results))
    return CategoryScore(
        category=category,
        questions=len(by_question),
        attempts=len(results),
        pass_at_1=sum(sum(r.passed for r in rs) / len(rs) for rs in by_question.values()) / n,
        pass_hat_k=sum(pass_hat_k([r.passed for r in rs]) for rs in by_question.values()) / n,
        errors=sum(r.error is not None for r in results),
        median_tokens=float(statistics.median([r.tool_tokens for r in results])) if results else 0.0,
        mean_tool_calls=sum(r.tool_calls for r in results) / attempts,
        mean_seconds=sum(r.seconds for r in results) / attempts,
    )


def scores(results: list[QuestionResult]) -> list[CategoryScore]:
    """Per category in name order, then ``all``."""
    categories = sorted({r.category for r in results})
    rows = [score(c, [r for r in results if r.category == c]) for c in categories]
    return [*rows, score("all", results)]


OnResult = Callable[[QuestionResult], None]
"""Called after each attempt (the CLI's progress bar)."""
