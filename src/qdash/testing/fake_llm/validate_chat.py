"""Request validation for ``POST /v1/chat/completions`` (llm-wire-contract §8.3, rules C1–C11).

Why two modes: OpenAI validates the conversation strictly, Ollama's ``/v1`` accepts almost
anything (§4.2); the fake must be exactly as strict as the server it stands in for.
"""

from __future__ import annotations

from typing import Any

from qdash.testing.fake_llm import errors, ollama_native
from qdash.testing.fake_llm.state import FakeState, ModelSpec


def validate(state: FakeState, body: dict[str, Any]) -> tuple[ModelSpec, None]:
    """Check a Chat Completions request; returns the model."""
    model = body.get("model")
    if model is None:
        raise errors.missing("model")
    spec = state.find_model(str(model))
    if spec is None:
        raise errors.model_not_found(str(model))
    return spec, None


def validate_ollama(state: FakeState, body: dict[str, Any]) -> tuple[ModelSpec, None]:
    """Ollama's ``/v1``: no conversation rules; model, empty messages and tool capability only."""
    spec = ollama_native.lookup(state, body)
    if not body.get("messages"):
        raise errors.ApiError(400, "[] is too short - 'messages'", rule="ollama_empty_messages")
    if body.get("tools") and "tools" not in spec.capabilities:
        raise ollama_native.no_tools(str(body["model"]))
    return spec, None
