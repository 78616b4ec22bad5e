"""Per-question results and the figures a run reports (pass rates, tokens, calls, time)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Literal

from pydantic import BaseModel

Mode = Literal["visible", "scripted", "live"]
MAX_DATA_CALLS = 2
"""The headline figure counts answers reachable in at most this many data-tool calls, no sandbox."""


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
