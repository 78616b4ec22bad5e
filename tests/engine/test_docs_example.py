"""The ten-line example in docs/engine.md runs as written (against the fake LLM server)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qdash.evaluation.fake_llm import FakeLLMServer, call, turn

DOC = Path(__file__).resolve().parents[2] / "docs" / "engine.md"


def example_code() -> str:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- example:start -->\s*```python\n(.*?)```\s*<!-- example:end -->", text, re.DOTALL)
    assert block is not None, "docs/engine.md lost its example markers"
    return block.group(1)


def test_example_is_short() -> None:
    lines = [line for line in example_code().splitlines() if line.strip()]
    assert len(lines) <= 12


def test_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    answer = "It is 21.5 °C in Kyoto."
    with FakeLLMServer() as fake:
        fake.script(turn(call("get_temperature", {"city": "Kyoto"})), turn(answer))
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-doc-example")
        exec(compile(example_code(), str(DOC), "exec"), {"__name__": "__main__"})
        assert fake.remaining() == 0 and not fake.mismatches
        tool_outputs = fake.last_request.tool_outputs()
    assert capsys.readouterr().out.strip().endswith("It is 21.5 °C in Kyoto.")
    assert list(tool_outputs.values()) == ['{"city": "Kyoto", "celsius": 21.5}']
