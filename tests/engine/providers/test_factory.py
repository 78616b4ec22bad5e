"""Models from configuration: adapters per provider, clients from ModelConfig, aliases."""

from __future__ import annotations

import openai
import pytest

from qdash.engine.providers.base import ModelError
from qdash.engine.providers.factory import ModelConfig, ModelRegistry, build_client, build_model
from qdash.engine.providers.ollama import AdaptiveToolModel
from qdash.engine.providers.responses import ResponsesModel
from qdash.engine.providers.text_protocol import TextProtocolModel


def test_openai_responses_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-factory-key")
    model = build_model("openai", ModelConfig("gpt-5-mini", price_input_per_mtok=1.25))
    assert isinstance(model, ResponsesModel)
    assert model.name == "gpt-5-mini" and model.key == "openai" and model.pricing.input == 1.25
    assert not model.capabilities.local


def test_ollama_is_local_chat_with_tool_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = build_model(
        "local", ModelConfig(provider="ollama", api_style="chat_completions", name="qwen3:8b")
    )
    assert isinstance(model, AdaptiveToolModel)
    assert model.capabilities.local and not model.capabilities.honours_tool_choice
    assert model.uses_text_protocol is None


def test_tool_mode_text_is_decided_up_front(monkeypatch: pytest.MonkeyPatch) -> None:
    config = ModelConfig("vllm-model", provider="openai_compatible", api_style="chat_completions",
                         base_url="http://127.0.0.1:9/v1", tool_mode="text", api_key_env=None)  # fmt: skip
    model = build_model("vllm", config)
    assert isinstance(model, AdaptiveToolModel) and model.uses_text_protocol is True
    responses = build_model(
        "r", ModelConfig("gpt-5-mini", base_url="http://127.0.0.1:9/v1", tool_mode="text", api_key_env=None)
    )
    assert isinstance(responses, TextProtocolModel) and responses.name == "gpt-5-mini"


def test_client_takes_base_url_timeout_and_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-test-client-key")
    config = ModelConfig(
        "gpt-5-mini", base_url="http://127.0.0.1:9/v1", api_key_env="MY_KEY", read_timeout_s=7
    )
    client = build_client(config, max_retries=1)
    assert str(client.base_url) == "http://127.0.0.1:9/v1/"
    assert client.max_retries == 1 and client.api_key == "sk-test-client-key"
    assert client.timeout.read == 7 and client.timeout.connect == 5  # type: ignore[union-attr]


def test_missing_openai_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match="set the OPENAI_API_KEY environment variable"):
        build_model("openai", ModelConfig("gpt-5-mini"))


def test_registry_caches_by_alias_and_rejects_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-registry-key")
    models = {
        "openai": ModelConfig("gpt-5-mini"),
        "chat": ModelConfig("gpt-5-mini", api_style="chat_completions"),
    }
    registry = ModelRegistry(models, default="openai")
    assert registry.get() is registry.get("openai")
    assert isinstance(registry.get("chat"), AdaptiveToolModel)
    with pytest.raises(KeyError, match="configured models: openai, chat"):
        registry.get("gpt-99")


async def test_clients_use_aiohttp_and_the_registry_closes_the_ones_it_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-registry-key")
    registry = ModelRegistry({"openai": ModelConfig("gpt-5-mini")}, default="openai")
    first = registry.get()
    client = first._client  # type: ignore[attr-defined]
    assert isinstance(client._client, openai.DefaultAioHttpClient)  # the SDK's aiohttp option
    await registry.aclose()
    assert client.is_closed()
    assert registry.get() is not first  # a later request builds a fresh client


async def test_a_callers_http_client_stays_open(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx2

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-registry-key")
    async with httpx2.AsyncClient() as shared:
        registry = ModelRegistry({"openai": ModelConfig("gpt-5-mini")}, default="openai", http_client=shared)
        registry.get()
        await registry.aclose()
        assert not shared.is_closed
