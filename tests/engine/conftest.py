"""Engine test fixtures: the fake LLM server (``qdash.evaluation.fake_llm``) and model builders on it.

One fake per flavour and test module (starting and stopping uvicorn costs ~0.3 s), reset before
each test; teardown fails a test whose script did not fit or was not used up, like the plugin's
per-test fixtures do.

Models built by ``make_model_factory`` are closed when their test ends, in the test's event loop:
their clients use aiohttp sessions tied to that loop, and one dropped unclosed logs "Unclosed client
session" / "Unclosed connector" whenever it happens to be collected.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import openai
import pytest

from qdash.engine.providers.base import Model
from qdash.engine.providers.factory import ModelConfig, build_client, build_model
from qdash.engine.providers.ollama import clear_capability_cache
from qdash.evaluation.fake_llm import FakeLLMServer

FAKE_KEY_ENV = "QDASH_TEST_FAKE_LLM_KEY"


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(FAKE_KEY_ENV, "sk-test-not-a-real-key")
    clear_capability_cache()
    yield
    clear_capability_cache()


def _checked(fake: FakeLLMServer) -> Iterator[FakeLLMServer]:
    fake.reset()
    yield fake
    problems, left = fake.mismatches, fake.remaining()
    fake.reset()
    if problems or left:
        message = f"fake LLM script not satisfied: mismatches={problems}, unused turns={left}"
        pytest.fail(message, pytrace=False)


@pytest.fixture(scope="module")
def _openai_fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture(scope="module")
def _ollama_fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(flavour="ollama") as fake:
        yield fake


@pytest.fixture
def fake_llm(_openai_fake: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The module's OpenAI-flavoured fake, reset for this test."""
    yield from _checked(_openai_fake)


@pytest.fixture
def fake_ollama(_ollama_fake: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The module's Ollama-flavoured fake, reset for this test."""
    yield from _checked(_ollama_fake)


ModelFactory = Callable[..., Model]


# Clients built by make_model_factory in the running test; _close_model_clients closes them. A plain
# list rather than a fixture because the factory is called from module-level helpers (agent_on, …).
_open_clients: list[openai.AsyncOpenAI] = []


@pytest.fixture(autouse=True)
async def _close_model_clients() -> AsyncIterator[None]:
    yield
    clients = list(_open_clients)
    _open_clients.clear()
    for client in clients:
        await client.close()


def make_model_factory(base_url: str) -> ModelFactory:
    def factory(max_retries: int = 0, **config: Any) -> Model:
        alias = config.get("name", "model")
        config.setdefault("name", "gpt-5-mini")
        config.setdefault("read_timeout_s", 5)
        model_config = ModelConfig(base_url=base_url, api_key_env=FAKE_KEY_ENV, **config)
        client = build_client(model_config, max_retries=max_retries)
        _open_clients.append(client)
        return build_model(alias, model_config, client=client)

    return factory
