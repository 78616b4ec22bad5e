"""One fake per test module (validation errors consume no turns), reset before each test.

Every ``async_openai()`` client a test makes is closed when the test ends, in its own event loop. Left
open, a client is collected later, while another test's loop runs: the SDK's ``__del__`` schedules
``aclose()`` there on connections of the earlier, closed loop, and that task fails with "Task
exception was never retrieved … RuntimeError: Event loop is closed".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
import pytest

from qdash.evaluation.fake_llm import FakeLLMServer


@pytest.fixture(autouse=True)
async def _close_sdk_clients(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    made: list[openai.AsyncOpenAI] = []
    build = FakeLLMServer.async_openai

    def tracked(self: FakeLLMServer, **options: Any) -> openai.AsyncOpenAI:
        client = build(self, **options)
        made.append(client)
        return client

    monkeypatch.setattr(FakeLLMServer, "async_openai", tracked)
    yield
    for client in made:
        await client.close()


@pytest.fixture(scope="module")
def shared_fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def fake(shared_fake: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The module's fake, emptied; the test fails if it leaves mismatches or unused turns."""
    shared_fake.reset()
    yield shared_fake
    shared_fake.assert_done()


@pytest.fixture
def client(fake: FakeLLMServer) -> openai.AsyncOpenAI:
    """Strict parsing: a payload missing a required field raises APIResponseValidationError."""
    return fake.async_openai(_strict_response_validation=True)
