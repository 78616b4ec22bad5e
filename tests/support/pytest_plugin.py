"""pytest fixtures for the fake LLM server; enable with ``pytest_plugins = ["tests.support.pytest_plugin"]``.

Why teardown checks: a test whose script was not fully used, or whose requests did not fit the
script, must fail even if its own assertions passed. A test that
provokes mismatches on purpose calls ``fake.reset()`` after asserting on them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from qdash.evaluation.fake_llm import FakeLLMServer


def run_checked(fake: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """Start ``fake``, yield it, stop it; then fail the test on mismatches or unused turns."""
    with fake:
        yield fake
        problems = fake.mismatches
        left = fake.remaining()
    if problems or left:
        pytest.fail(
            f"fake LLM script not satisfied: mismatches={problems}, unused turns={left}", pytrace=False
        )


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A fresh OpenAI-flavoured fake (Responses, Chat Completions, Ollama native) for one test."""
    yield from run_checked(FakeLLMServer())


@pytest.fixture
def fake_ollama() -> Iterator[FakeLLMServer]:
    """A fresh Ollama-flavoured fake: lax ``/v1/chat/completions`` plus the native API."""
    yield from run_checked(FakeLLMServer(flavour="ollama"))
