"""The demo model becomes the default only when no configured real model can answer."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from qdash.copilot.demo_model import DEMO_ALIAS, with_demo_model
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.settings import Settings, load_settings

KEY_ENV = "QDASH_TEST_DEMO_FALLBACK_KEY"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def settings_with(ollama_url: str, **copilot: Any) -> Settings:
    return load_settings(
        database={"mongo_uri": None},
        copilot={
            "default_model": "openai",
            "models": {
                "openai": {"provider": "openai", "name": "gpt-5-mini", "api_key_env": KEY_ENV},
                "ollama": {
                    "provider": "ollama",
                    "name": "qwen3:8b",
                    "base_url": ollama_url,
                    "api_key_env": None,
                },
            },
            **copilot,
        },
    )


def test_no_key_and_no_ollama_makes_the_demo_model_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    settings = with_demo_model(settings_with(f"http://127.0.0.1:{_closed_port()}/v1"))
    assert settings.copilot.default_model == DEMO_ALIAS
    assert settings.copilot.models[DEMO_ALIAS].provider == "demo"
    assert set(settings.copilot.models) == {"openai", "ollama", DEMO_ALIAS}


def test_an_api_key_keeps_the_configured_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    configured = settings_with(f"http://127.0.0.1:{_closed_port()}/v1")
    assert with_demo_model(configured) is configured


def test_a_reachable_ollama_keeps_the_configured_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with FakeLLMServer(flavour="ollama") as ollama:
        configured = settings_with(ollama.openai_base_url)
        assert with_demo_model(configured) is configured


def test_the_fallback_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    configured = settings_with(f"http://127.0.0.1:{_closed_port()}/v1", demo_when_no_model=False)
    assert with_demo_model(configured) is configured


def test_a_configured_demo_model_is_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    configured = settings_with(
        f"http://127.0.0.1:{_closed_port()}/v1",
        models={
            "openai": {"provider": "openai", "name": "gpt-5-mini", "api_key_env": KEY_ENV},
            "scripted": {"provider": "demo", "name": "scripted", "api_key_env": None},
        },
    )
    settings = with_demo_model(configured)
    assert settings.copilot.default_model == "scripted" and DEMO_ALIAS not in settings.copilot.models
