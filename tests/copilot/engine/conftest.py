"""Engine test fixtures: the fake LLM server (from ``qdash.testing``) and model builders on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from qdash.copilot.engine.providers import Model, build_model, clear_capability_cache
from qdash.settings import ModelSettings
from qdash.testing.pytest_plugin import fake_llm, fake_ollama

__all__ = ["fake_llm", "fake_ollama"]

FAKE_KEY_ENV = "QDASH_TEST_FAKE_LLM_KEY"


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(FAKE_KEY_ENV, "sk-test-not-a-real-key")
    clear_capability_cache()
    yield
    clear_capability_cache()


ModelFactory = Callable[..., Model]


def make_model_factory(base_url: str) -> ModelFactory:
    def factory(max_retries: int = 0, **config: Any) -> Model:
        config.setdefault("read_timeout_s", 5)
        settings = ModelSettings(base_url=base_url, api_key_env=FAKE_KEY_ENV, **config)
        return build_model(config.get("name", "model"), settings, max_retries=max_retries)

    return factory
