"""The demo model as the default, only when no real model can answer.

Why at start-up and only then: a fresh install (no API key, no Ollama) should show a real answer
on the first try, yet a lab that configured a model must never get scripted answers by surprise.
So the demo model is added (alias ``demo``) and made the default only when every configured real
model is unusable: OpenAI without its key, Ollama or another local server not answering. The
decision is logged with what to set; ``copilot.demo_when_no_model: false`` turns it off.
"""

from __future__ import annotations

import os

import httpx2

from qdash.logging import get_logger
from qdash.settings import ModelSettings, Settings

log = get_logger(__name__)

DEMO_ALIAS = "demo"
DEMO_MODEL = ModelSettings(provider="demo", name="scripted", api_key_env=None)
PROBE_TIMEOUT_S = 1.0


def _server_answers(base_url: str) -> bool:
    """Whether an HTTP server listens at ``base_url`` (any status counts: it is there)."""
    try:
        with httpx2.Client(timeout=PROBE_TIMEOUT_S) as client:
            client.get(base_url.rstrip("/") + "/models")
    except httpx2.HTTPError:
        return False
    return True


def model_usable(config: ModelSettings) -> bool:
    """Whether a real model could answer: its key is set, or its server (Ollama, local) answers."""
    if config.provider == "demo":
        return False
    if config.api_key_env and os.environ.get(config.api_key_env):
        return True
    if config.provider == "openai" and config.base_url is None:
        return False
    return _server_answers(config.base_url or "http://localhost:11434/v1")


def demo_is_default(settings: Settings) -> bool:
    """Whether the demo model answers by default: it is allowed and no configured real model is usable."""
    copilot = settings.copilot
    return copilot.demo_when_no_model and not any(model_usable(c) for c in copilot.models.values())


def with_demo_model(settings: Settings) -> Settings:
    """``settings`` with the demo model as the default when no configured real model is usable."""
    copilot = settings.copilot
    if not demo_is_default(settings):
        return settings
    demo = next((alias for alias, c in copilot.models.items() if c.provider == "demo"), None)
    models = copilot.models if demo else {**copilot.models, DEMO_ALIAS: DEMO_MODEL}
    alias = demo or DEMO_ALIAS
    log.warning(
        "no model can answer (no API key set, no Ollama reachable): the demo model (scripted answers) "
        "is the default; set OPENAI_API_KEY or start Ollama and restart for real answers",
        default_model=alias,
    )
    return settings.model_copy(
        update={"copilot": copilot.model_copy(update={"models": models, "default_model": alias})}
    )
