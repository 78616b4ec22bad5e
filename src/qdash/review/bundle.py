"""Replay bundles: one review's inputs and outcome in a file, re-run later with another model or prompt.

Why: to compare prompts or models on the same inputs. A bundle holds what the model was sent (the
system prompt, the user turn with the analysis context, the images as data URLs), the guards' hits
(they bound the replayed verdict exactly as they bounded the original), the configuration and model
identity, and the verdict. Replaying needs no database: only a configured model.
"""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from qdash.copilot.engine_config import model_registry
from qdash.copilot.requests import ModelOverride
from qdash.review.guards import GuardHit, GuardReport
from qdash.review.outcome import combine
from qdash.review.store import ReviewStore
from qdash.review.verdict_request import ReviewPrompt, ask_model
from qdash.settings import Settings

if TYPE_CHECKING:
    from qdash.copilot.assistant import Assistant

BUNDLE_FORMAT = "qdash-review-bundle/1"
RESULT_KEYS = ("task_id", "task_name", "chip_id", "qid", "execution_id")


class BundleError(ValueError):
    """A file that is not a review bundle, or a review that was decided without a model."""


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _images(assistant: Assistant, result: dict[str, Any], prompt: dict[str, Any]) -> list[str]:
    """The review's images again, from where they came: the result's figure, the task's references."""
    limit = assistant.settings.analysis.max_image_bytes
    images = (
        [_data_url(png) for _, png in assistant.figures(result, limit)] if prompt.get("figure_paths") else []
    )
    wanted = set(prompt.get("reference_indices") or [])
    if wanted:
        refs = assistant.references(str(result.get("name") or ""), limit)
        images += [_data_url(ref.png) for ref in refs if ref.index in wanted]
    return images


async def export_bundle(assistant: Assistant, project_id: str, review_id: str) -> dict[str, Any]:
    """The bundle of one review of ``project_id`` (``ReviewNotFoundError`` for another project's)."""
    store = ReviewStore(assistant.db, project_id)
    review = await asyncio.to_thread(store.get, review_id)
    prompt = review.get("prompt") or {}
    if not prompt:
        raise BundleError(f"review {review_id} was decided by the guards alone: there is no prompt to replay")
    result = await asyncio.to_thread(store.task_result, review["task_id"])
    images = await asyncio.to_thread(_images, assistant, result, prompt)
    return {
        "format": BUNDLE_FORMAT,
        "exported_at": datetime.now(UTC).isoformat(),
        "review_id": review_id,
        "project_id": project_id,
        "result": {
            key: review.get(key) for key in ("task_id", "task_name", "chip_id", "qid", "execution_id")
        },
        "config": review["config"],
        "instructions": prompt["instructions"],
        "text": prompt["text"],
        "images": images,
        "outputs": review.get("outputs") or [],
        "guards": review.get("guards") or [],
        "verdict": review["verdict"],
        "source": review["source"],
        "usage": review.get("usage") or {},
    }


async def replay_bundle(
    settings: Settings, bundle: dict[str, Any], *, model: str | None = None, instructions: str | None = None
) -> dict[str, Any]:
    """Send the bundle's prompt (or ``instructions`` instead of its system prompt) to a configured
    model; the verdict is bounded by the bundle's guards. Returns the original and the replayed side."""
    from qdash.copilot.assistant import resolve_model_alias

    if bundle.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"not a review bundle (format {bundle.get('format')!r}; expected {BUNDLE_FORMAT})")
    alias = resolve_model_alias(settings, ModelOverride(alias=model) if model else None)
    config = settings.copilot.models[alias]
    multimodal = settings.analysis.multimodal and config.multimodal
    prompt = ReviewPrompt(
        instructions=instructions if instructions is not None else bundle["instructions"],
        text=bundle["text"],
        images=list(bundle.get("images") or []) if multimodal else [],
    )
    report = GuardReport(
        [GuardHit(**hit) for hit in bundle.get("guards") or []], list(bundle.get("outputs") or [])
    )
    registry = model_registry(settings)
    try:
        verdict, source, usage = await ask_model(registry.get(alias), settings, prompt)
    finally:
        await registry.aclose()
    outcome = combine(report, verdict, source, usage)
    return {
        "original": {"model": bundle["config"]["model"], "source": bundle["source"], **bundle["verdict"]},
        "replay": {
            "model": config.name,
            "source": outcome.source,
            "usage": usage,
            **outcome.verdict.model_dump(),
        },
    }
