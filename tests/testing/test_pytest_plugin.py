"""The fixtures fail a test whose script was not satisfied, after the test body ran."""

from __future__ import annotations

import pytest

from qdash.evaluation.fake_llm import FakeLLMServer
from tests.support.pytest_plugin import run_checked


def test_teardown_fails_on_unused_turns_and_mismatches() -> None:
    steps = run_checked(FakeLLMServer())
    fake = next(steps)
    fake.script("never requested")
    with pytest.raises(pytest.fail.Exception, match="unused turns=1"):
        next(steps)


def test_teardown_passes_when_the_script_was_used() -> None:
    steps = run_checked(FakeLLMServer())
    fake = next(steps)
    fake.script("used")
    assert fake.sync_openai().responses.create(model="gpt-4o", input="x").output_text == "used"
    with pytest.raises(StopIteration):
        next(steps)
