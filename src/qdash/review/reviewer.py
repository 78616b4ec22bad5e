"""Review one task result: guards, then (when they allow) one structured model request, then storage.

Why through the assistant: the model registry (every configured wire with its fallbacks: json_schema
→ json_object → prompt on servers that refuse a format), the figure loader and the reference
figures are the ones analysis mode uses, so a review sees what the analysis sidebar would show.
The context (task knowledge, the result's figure, the qubit's recent history and neighbours) is
gathered up front by analysis mode's builder; the model gets no tools, so a review is one request.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from qdash.copilot.analysis_context import gather_analysis_inputs
from qdash.copilot.prompts import images_note, render_analysis_context
from qdash.copilot.requests import AnalyzeRequest, ModelOverride
from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.spec import ToolContext
from qdash.engine.providers.base import ModelError
from qdash.models.ai_review import Decision, Label
from qdash.repositories.scope import Doc
from qdash.review.budget import TokenBudget
from qdash.review.config import ReviewConfig
from qdash.review.guards import GuardReport
from qdash.review.outcome import combine, needs_model
from qdash.review.policy import ReviewPolicy
from qdash.review.prompt import REVIEW_PROMPT, guard_findings
from qdash.review.slots import ProjectSlots, SlotsBusyError
from qdash.review.store import ReviewRequest, ReviewStore
from qdash.review.verdict_request import ReviewPrompt, ask_model

if TYPE_CHECKING:
    from qdash.copilot.assistant import Assistant

Status = Literal["reviewed", "skipped", "failed", "deferred"]
"""``deferred``: left unreviewed because the project's daily token budget is spent (``error`` says until
when and which setting to raise); a later run reviews it."""


@dataclass(frozen=True)
class Reviewed:
    """What happened to one result: reviewed now, already reviewed (skipped), failed, or deferred by the
    token budget."""

    task_id: str
    status: Status
    decision: Decision | None = None
    label: Label | None = None
    source: str | None = None
    review_id: str | None = None
    tokens: int = 0
    error: str = ""

    @classmethod
    def from_document(cls, doc: Doc, status: Status) -> Reviewed:
        usage = doc.get("usage") or {}
        return cls(
            str(doc["task_id"]),
            status,
            doc.get("decision"),
            doc.get("label"),
            doc.get("source"),
            str(doc.get("_id") or doc.get("review_id")),
            int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0),
        )


class Reviewer:
    """Reviews results of any project with one configured model (a dry run needs only ``policy``)."""

    def __init__(
        self,
        assistant: Assistant,
        *,
        model: str | None = None,
        budget: TokenBudget | None = None,
        slots: ProjectSlots | None = None,
    ) -> None:
        from qdash.copilot.assistant import resolve_model_alias

        self.assistant = assistant
        self.settings = assistant.settings
        self.policy = ReviewPolicy.from_settings(self.settings)
        wanted = model or self.settings.review.model
        self.alias = resolve_model_alias(self.settings, ModelOverride(alias=wanted) if wanted else None)
        self.model_settings = self.settings.copilot.models[self.alias]
        self.budget = budget or TokenBudget(assistant.db, self.settings.review)
        self.slots = slots or ProjectSlots(assistant.db, self.settings.review)

    def config(self, task_name: str) -> ReviewConfig:
        """This reviewer's configuration for a result of ``task_name``."""
        return self.policy.config(task_name, self.model_settings.name, self.model_settings.provider)

    async def review(self, project_id: str, task_id: str, request: ReviewRequest) -> Reviewed:
        """Review one result of ``project_id``; :class:`~qdash.review.store.ReviewNotFoundError` when
        the project has no such result."""
        store = ReviewStore(self.assistant.db, project_id)
        result = await asyncio.to_thread(store.task_result, task_id)
        config = self.config(str(result.get("name") or ""))
        report = self.policy.guards(result)
        if not request.force:
            found = await asyncio.to_thread(store.existing, task_id, config)
            if found is not None:
                return Reviewed.from_document(found, "skipped")
        if needs_model(report):
            try:
                async with self.slots.hold(project_id):
                    reservation = await self.budget.acquire(project_id)
                    if reservation is None:  # never a verdict the model did not give: left for later
                        state = await asyncio.to_thread(self.budget.state, project_id)
                        return Reviewed(task_id, "deferred", error=state.message())
                    usage: dict[str, Any] = {}
                    try:
                        prompt = await self.prompt(project_id, request.requested_by, result, report)
                        model = self.assistant.models.get(self.alias)
                        verdict, source, usage = await ask_model(model, self.settings, prompt)
                    except ModelError as exc:
                        await asyncio.to_thread(store.mark_failed, result, config, exc.detail, request)
                        return Reviewed(task_id, "failed", error=exc.detail)
                    finally:
                        await asyncio.to_thread(self.budget.settle, reservation, usage)
            except SlotsBusyError as exc:  # nothing stored: the next run or resume reviews it
                return Reviewed(task_id, "failed", error=str(exc))
            outcome = combine(report, verdict, source, usage, prompt.record())
        else:
            outcome = combine(report, None, "guards")
        doc, created = await asyncio.to_thread(store.save, result, config, outcome, request)
        return Reviewed.from_document(doc, "reviewed" if created else "skipped")

    async def prompt(self, project_id: str, username: str, result: Doc, report: GuardReport) -> ReviewPrompt:
        """Analysis mode's context for the result (figures only for a multimodal model) + the guards:
        what the model is sent (public for the evaluation, which checks what a model could see)."""
        settings, assistant = self.settings, self.assistant
        multimodal = settings.analysis.multimodal and self.model_settings.multimodal
        task_name = str(result.get("name") or "")
        service = CopilotDataService(ToolContext(assistant.db, project_id, username, settings))
        inputs = await gather_analysis_inputs(
            service,
            _analyze_request(result),
            assistant.figures if multimodal else None,
            settings.analysis.max_image_bytes,
            assistant.references if multimodal else None,
        )
        images = [f"data:image/png;base64,{b64}" for b64 in [*inputs.figure_images, *inputs.reference_images]]
        note = images_note(task_name, len(inputs.figure_images), [ref.alt_text for ref in inputs.references])
        parts = (render_analysis_context(inputs.context), note, guard_findings(report), "Give your verdict.")
        knowledge = self.policy.knowledge.get(task_name)
        return ReviewPrompt(
            instructions=REVIEW_PROMPT.instructions(settings, task_name, knowledge, bool(images)),
            text="\n\n".join(part for part in parts if part),
            images=images,
            figure_paths=inputs.figure_paths,
            reference_indices=[ref.index for ref in inputs.references],
        )


def _analyze_request(result: Doc) -> AnalyzeRequest:
    return AnalyzeRequest(
        task_name=str(result.get("name") or "unknown"),
        chip_id=str(result.get("chip_id") or "unknown"),
        qid=str(result.get("qid") or ""),
        execution_id=str(result.get("execution_id") or "unknown"),
        task_id=str(result["task_id"]),
        message="Review this result.",
    )
