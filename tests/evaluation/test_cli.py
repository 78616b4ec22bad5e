"""``qdash eval``: table, progress, reports; refuses unknown questions with the fix."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qdash.cli import app
from qdash.evaluation import EvalLab, QuestionResult, load_questions
from qdash.evaluation.attempts import with_model
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.evaluation.plan_model import PlanFollower
from qdash.evaluation.report import markdown
from qdash.evaluation.scripted import plan_script
from qdash.settings import ModelSettings, Settings, load_settings
from tests.support.settings import fake_model


@pytest.fixture
def reuse_lab(eval_lab: EvalLab, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI seeds a fresh lab; tests hand it the session's instead (same spec, seconds saved),
    with the settings the CLI built (its models, its scratch data directory)."""

    def seeded(cls: type[EvalLab], settings: Settings, *args: Any, **kwargs: Any) -> EvalLab:
        lab = copy.copy(eval_lab)
        lab.settings = settings
        return lab

    monkeypatch.setattr(EvalLab, "seed", classmethod(seeded))


def test_visible_run_prints_a_table_and_writes_both_reports(reuse_lab: None, tmp_path: Path) -> None:
    out = tmp_path / "report"
    arguments = ["eval", "--only", "current_values", "--only", "t1-below-30", "--out", str(out)]
    result = CliRunner().invoke(app, arguments, env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "current_values" in result.output and "pass@1" in result.output
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    assert {r["id"] for r in report["results"]} >= {"current-t1", "t1-below-30"}
    overall = report["scores"][-1]
    assert overall["category"] == "all" and overall["questions"] == len(report["results"])
    assert "| all |" in (out / "report.md").read_text()


def test_markdown_lists_failed_attempts_with_the_reason() -> None:
    failed = QuestionResult(
        id="t1-below-30",
        category="rankings_thresholds",
        mode="live",
        passed=False,
        detail="answered []",
        truth="4, 5",
    )
    passed = failed.model_copy(update={"id": "current-t1", "passed": True})
    text = markdown([failed, passed], {"mode": "live"})
    assert "| t1-below-30 | 0 | 4, 5 | answered [] |" in text
    assert "current-t1" not in text.split("## Failed attempts")[1]


def test_unknown_question_is_refused_with_the_way_to_list_them(reuse_lab: None) -> None:
    result = CliRunner().invoke(app, ["eval", "--only", "nope"])
    assert result.exit_code == 2
    assert "qdash eval --list" in result.output


def test_list_shows_every_question() -> None:
    result = CliRunner().invoke(app, ["eval", "--list"])
    assert result.exit_code == 0
    assert "tls-dates" in result.output and "analysis-failed-fit" in result.output


def test_live_refuses_an_unconfigured_model_and_a_missing_replay_directory(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "--mode", "live", "--model", "no-such-model"])
    assert result.exit_code == 2 and "configured models:" in result.output
    result = CliRunner().invoke(app, ["eval", "--replay", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "not a directory of recordings" in result.output


def test_live_with_k_and_record_then_replay_gives_the_same_scores(
    reuse_lab: None,
    eval_lab: EvalLab,
    fake_llm: FakeLLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chosen = [q for q in load_questions() if q.category == "current_values"][:3]
    fake_llm.respond_with(PlanFollower([plan_script(eval_lab, q, eval_lab.oracle.truth(q)) for q in chosen]))
    model = ModelSettings(**fake_model(fake_llm.openai_base_url, "gpt-4.1-mini"))
    configured = with_model(load_settings(database={"data_dir": str(tmp_path)}), "my-model", model)
    monkeypatch.setattr("qdash.commands.eval.get_settings", lambda: configured)
    only = [option for q in chosen for option in ("--only", q.id)]
    live = ["eval", "--mode", "live", "--model", "my-model", "--k", "2", "--record", str(tmp_path / "rec")]
    result = CliRunner().invoke(app, [*live, *only, "--out", str(tmp_path / "live")], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    replay = ["eval", "--replay", str(tmp_path / "rec"), "--out", str(tmp_path / "replay")]
    result = CliRunner().invoke(app, [*replay, *only], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    live_report = json.loads((tmp_path / "live" / "report.json").read_text())
    replay_report = json.loads((tmp_path / "replay" / "report.json").read_text())
    assert live_report["meta"]["k"] == 2 and len(live_report["results"]) == 2 * len(chosen)
    assert live_report["meta"]["skipped_attempts (token budget)"] == 0
    grades = [
        [(r["id"], r["attempt"], r["passed"]) for r in report["results"]]
        for report in (live_report, replay_report)
    ]
    assert grades[0] == grades[1] and all(passed for _, _, passed in grades[0])
