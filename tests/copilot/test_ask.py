"""``qdash ask``: scope resolution, live progress and the printed answer (fake LLM, demo lab)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console

from qdash.commands.ask import run_ask
from qdash.commands.scope import resolve_scope
from qdash.copilot.requests import ChatRequest
from qdash.evaluation.fake_llm import FakeLLMServer, call
from tests.copilot.test_assistant import KEY_ENV, blocks, fake_settings


def test_scope_defaults_to_the_users_project_and_checks_membership(demo_lab: Any) -> None:
    assert resolve_scope(demo_lab.db, "alice", None).project_id == "proj-demo"
    with pytest.raises(typer.BadParameter, match="not an active member of project 'proj-other'"):
        resolve_scope(demo_lab.db, "alice", "proj-other")
    with pytest.raises(typer.BadParameter, match="no user 'mallory'"):
        resolve_scope(demo_lab.db, "mallory", None)


async def test_ask_prints_progress_answer_and_writes_charts(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    chart = {"data": [{"type": "bar", "x": ["Q0"], "y": [1]}], "layout": {"title": "T1 by qubit"}}
    answer = json.dumps(
        {
            "blocks": [
                {"type": "text", "content": "**T1** is fine.", "chart": None},
                {"type": "chart", "content": None, "chart": chart},
            ],
            "assessment": "good",
        }
    )
    fake_llm.script(call("get_qubit_params", {"chip_id": None, "qid": "16"}), answer)
    console = Console(record=True, width=200)
    code = await run_ask(
        fake_settings(fake_llm, tmp_path),
        demo_lab.db,
        resolve_scope(demo_lab.db, "alice", None),
        ChatRequest(message="T1 of Q16?"),
        console=console,
        charts_dir=tmp_path / "charts",
    )
    text = console.export_text()
    assert code == 0
    assert "✓ Fetching qubit parameters" in text
    assert "T1 is fine." in text and "Assessment: good" in text
    assert "[chart 1: T1 by qubit] → " in text
    assert (tmp_path / "charts" / "chart-1.html").read_text(encoding="utf-8").count("plotly") > 10
    assert blocks("x")  # the shared helper stays importable


async def test_ask_reports_model_errors_with_exit_code_1(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    settings = fake_settings(fake_llm, tmp_path)
    console = Console(record=True, width=200)
    broken = settings.copilot.models["fake"].model_copy(update={"base_url": None})
    settings = settings.model_copy(
        update={"copilot": settings.copilot.model_copy(update={"models": {"fake": broken}})}
    )
    code = await run_ask(
        settings,
        demo_lab.db,
        resolve_scope(demo_lab.db, "alice", None),
        ChatRequest(message="hi"),
        console=console,
        charts_dir=None,
    )
    assert code == 1
    assert f"set the {KEY_ENV} environment variable" in console.export_text()
