"""One fake per test module (validation errors consume no turns), reset before each test."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from qdash.testing.fake_llm import FakeLLMServer


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
