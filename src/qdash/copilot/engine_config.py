"""The engine's configuration, built from QDash's settings.

Why here: the engine reads no application settings (``tests/test_architecture.py``); it takes
plain values (:class:`ModelConfig`, :class:`RunLimits`) and the application decides where they
come from.
"""

from __future__ import annotations

from collections.abc import Mapping

from qdash.engine.limits import RunLimits
from qdash.engine.providers.factory import ModelBuilder, ModelConfig, ModelRegistry
from qdash.settings import ModelSettings, Settings


def model_config(config: ModelSettings) -> ModelConfig:
    """One configured model as the engine's config (``multimodal`` is the application's concern)."""
    return ModelConfig(**config.model_dump(exclude={"multimodal", "wire"}), **config.wire.model_dump())


def model_registry(
    settings: Settings,
    *,
    builders: Mapping[str, ModelBuilder] | None = None,
) -> ModelRegistry:
    """The configured models (``copilot.models``) by alias, with the SDK retries of ``agent.max_retries``."""
    return ModelRegistry(
        {alias: model_config(config) for alias, config in settings.copilot.models.items()},
        default=settings.copilot.default_model,
        max_retries=settings.agent.max_retries,
        builders=builders,
    )


def run_limits(settings: Settings, *, local: bool = False) -> RunLimits:
    """One turn's budgets; a local model gets ``agent.max_rounds_local`` rounds."""
    agent = settings.agent
    return RunLimits(
        max_rounds=agent.max_rounds_local if local else agent.max_rounds,
        max_tool_calls=agent.max_tool_calls,
        max_tokens=agent.max_tokens_per_turn,
        time_s=agent.turn_time_s,
        final_grace_s=max(0.0, settings.copilot.request_timeout_s - agent.turn_time_s),
        max_retries=agent.max_retries,
        max_concurrency=settings.tools.max_concurrency,
        tool_timeout_s=settings.tools.timeout_s,
        log_tool_payloads=agent.log_tool_payloads,
    )
