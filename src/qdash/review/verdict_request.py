"""One structured model request for a verdict: what a review and a replay both send.

Why apart from the reviewer: a replay bundle re-sends a stored prompt to another model without any
database, so the request and the parsing of its answer must not depend on where the prompt came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from qdash.copilot.engine_config import run_limits
from qdash.engine.agent import Agent
from qdash.engine.events import Failed
from qdash.engine.items import UserMessage
from qdash.engine.output import TextOutput
from qdash.engine.providers.base import Model, ModelError, OutputFormat
from qdash.models.ai_review import Verdict
from qdash.review.decision import VERDICT_INSTRUCTION, read_verdict, safe_review, verdict_schema
from qdash.review.outcome import Source
from qdash.settings import Settings

VERDICT_FORMAT = OutputFormat("review_verdict", verdict_schema(), VERDICT_INSTRUCTION)


@dataclass(frozen=True)
class ReviewPrompt:
    """The system prompt, the user turn and its images (data URLs) of one review."""

    instructions: str
    text: str
    images: list[str] = field(default_factory=list)
    figure_paths: list[str] = field(default_factory=list)
    reference_indices: list[int] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """What the review document keeps: the texts and where the images came from (not the bytes)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "images"}


async def ask_model(
    model: Model, settings: Settings, prompt: ReviewPrompt
) -> tuple[Verdict, Source, dict[str, Any]]:
    """The model's verdict on ``prompt``; a missing or malformed one is a safe ``REVIEW`` saying why.
    A model that cannot answer raises :class:`ModelError` (the caller stores nothing)."""
    agent = Agent(
        model,
        instructions=prompt.instructions,
        limits=run_limits(settings, local=model.capabilities.local),
        output_type=TextOutput(VERDICT_FORMAT),
        stream=False,
        step="run_review",
    )
    terminal = await agent.run(UserMessage.text(prompt.text, prompt.images))
    if isinstance(terminal, Failed):
        if terminal.code == "empty_answer":
            return safe_review("The model returned no verdict."), "fallback", {}
        raise ModelError("model_error", terminal.detail)
    usage = dict(terminal.meta.get("usage") or {})
    verdict = read_verdict(terminal.result)
    if isinstance(verdict, str):
        return safe_review(verdict), "fallback", usage
    return verdict, "model", usage
