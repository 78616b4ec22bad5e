"""``qdash eval --suite reviews``: a live model on the fake LLM server (answers some results wrong) is
graded with exact counts, its recording replays to the same grades, and the run's token budget, the
per-review deadline and bad options are reported as such."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qdash.cli import app
from qdash.demo import DemoSpec
from qdash.evaluation.attempts import with_model
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.evaluation.fake_llm.records import RecordedRequest
from qdash.evaluation.oracle.reviews import known_bad
from qdash.evaluation.reviews.grades import grade
from qdash.evaluation.reviews.lab import ReviewLab, choose
from qdash.review import ReviewPolicy
from qdash.settings import ModelSettings, Settings, load_settings
from tests.support.settings import fake_model

LIMIT = 60
COLUMNS = {"COLUMNS": "200"}


@pytest.fixture
def reuse_lab(review_eval_lab: ReviewLab, monkeypatch: pytest.MonkeyPatch) -> ReviewLab:
    """The CLI seeds a fresh lab; tests hand it the one-day lab instead, with the CLI's settings."""

    def seeded(settings: Settings, spec: DemoSpec, chip_id: str) -> ReviewLab:
        return ReviewLab(review_eval_lab.db, review_eval_lab.report, settings, chip_id=chip_id)

    monkeypatch.setattr("qdash.commands.eval_reviews.seed_lab", seeded)
    return review_eval_lab


def _configure(fake: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = ModelSettings(**fake_model(fake.openai_base_url, "gpt-4.1-mini", multimodal=False))
    configured = with_model(load_settings(database={"data_dir": str(tmp_path)}), "my-model", model)
    monkeypatch.setattr("qdash.commands.eval.get_settings", lambda: configured)


def _flags_only_t1(request: RecordedRequest) -> str:
    """A model that is wrong on purpose: every CheckT1 result needs a look, everything else passes."""
    about_t1 = "task CheckT1 on" in "\n".join(request.user_texts())
    decision, label = ("REVIEW", "SUSPICIOUS") if about_t1 else ("PASS", "CORRECT")
    verdict = {
        "decision": decision,
        "label": label,
        "accepted_parameters": [],
        "questioned_parameters": [],
        "reason": "T1 results always need a look." if about_t1 else "Fine.",
        "closest_knowledge_case": "none",
        "suggested_labels": [],
        "recommended_action": "Look." if about_t1 else "Use it.",
        "note": "",
    }
    return json.dumps(verdict)


def _report(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((path / "report.json").read_text())
    return loaded


def test_live_grades_a_model_exactly_and_its_recording_replays_identically(
    reuse_lab: ReviewLab, fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.respond_with(_flags_only_t1)
    _configure(fake_llm, tmp_path, monkeypatch)
    live = ["eval", "--suite", "reviews", "--mode", "live", "--model", "my-model", "--limit", str(LIMIT)]
    record = ["--record", str(tmp_path / "rec"), "--out", str(tmp_path / "live")]
    result = CliRunner().invoke(app, [*live, *record], env=COLUMNS)
    assert result.exit_code == 0, result.output
    assert "precision" in result.output and "failed_fit" in result.output

    sample = choose(list(reuse_lab.truths().values()), [], LIMIT)
    policy = ReviewPolicy.from_settings(reuse_lab.settings)
    docs = {d["task_id"]: d for d in reuse_lab.db["task_result_history"].find({"project_id": "proj-demo"})}
    expected = {  # the guards' floor, else what this model says (computed here, not by the run)
        t.task_id: policy.guards(docs[t.task_id]).floor is not None or t.name == "CheckT1" for t in sample
    }
    grades = grade(expected, known_bad({t.task_id: t for t in sample}))
    report = _report(tmp_path / "live")
    flagged = {r["task_id"]: r["decision"] in ("REVIEW", "FAIL") for r in report["results"]}
    assert flagged == expected
    score = report["score"]
    assert (score["precision"], score["recall"], score["false_alarms"]) == (
        grades.precision,
        grades.recall,
        grades.false_alarms,
    )
    rows = {row["kind"]: (row["flagged"], row["results"]) for row in score["rows"]}
    assert {kind: rows[kind] for kind in grades.recall_by_kind} == grades.recall_by_kind
    assert report["meta"]["skipped (token budget)"] == 0 and report["meta"]["tokens"] > 0
    assert score["model_reviews"] == sum(r["source"] == "model" for r in report["results"]) > 0
    markdown = (tmp_path / "live" / "report.md").read_text()
    missed = [r for r in report["results"] if r["kind"] != "healthy" and not flagged[r["task_id"]]]
    assert f"## Missed known-bad results ({len(missed)})" in markdown
    assert all(r["task_id"] in markdown for r in missed)

    fake_llm.respond_with(lambda _request: "not a verdict")  # a replay must not ask the model
    replay = ["eval", "--suite", "reviews", "--replay", str(tmp_path / "rec"), "--out", str(tmp_path / "re")]
    result = CliRunner().invoke(app, replay, env=COLUMNS)
    assert result.exit_code == 0, result.output
    replayed = _report(tmp_path / "re")
    assert [(r["task_id"], r["decision"]) for r in replayed["results"]] == [
        (r["task_id"], r["decision"]) for r in report["results"]
    ]
    assert {k: replayed["score"][k] for k in ("precision", "recall", "false_alarms")} == {
        k: score[k] for k in ("precision", "recall", "false_alarms")
    }


def test_token_budget_and_deadline_are_reported_not_graded(
    reuse_lab: ReviewLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLMServer(response_delay_s=1.5) as slow:
        slow.respond_with(_flags_only_t1)
        _configure(slow, tmp_path, monkeypatch)
        base = ["eval", "--suite", "reviews", "--mode", "live", "--model", "my-model"]
        late = [*base, "--limit", "4", "--timeout", "1", "--record", str(tmp_path / "rec")]
        result = CliRunner().invoke(app, [*late, "--out", str(tmp_path / "late")], env=COLUMNS)
        assert result.exit_code == 0, result.output
        budget = [*base, "--limit", "12", "--concurrency", "1", "--max-cost-tokens", "1"]
        result = CliRunner().invoke(app, [*budget, "--out", str(tmp_path / "budget")], env=COLUMNS)
        assert result.exit_code == 0, result.output
    late_report = _report(tmp_path / "late")
    errors = {r["task_id"]: r["error"] for r in late_report["results"] if r["error"]}
    asked = [r for r in late_report["results"] if r["kind"] != "failed_fit"]  # a failed fit asks no model
    assert set(errors) == {r["task_id"] for r in asked} and len(errors) == 3
    assert set(errors.values()) == {"timeout after 1 s"} and late_report["score"]["errors"] == 3
    replay = ["eval", "--suite", "reviews", "--replay", str(tmp_path / "rec"), "--out", str(tmp_path / "re")]
    result = CliRunner().invoke(app, replay, env=COLUMNS)
    assert result.exit_code == 0, result.output
    assert {r["task_id"]: r["error"] for r in _report(tmp_path / "re")["results"] if r["error"]} == errors
    spent = _report(tmp_path / "budget")
    assert spent["meta"]["skipped (token budget)"] == 12 - len(spent["results"]) > 0
    assert sum(r["source"] == "model" for r in spent["results"]) == 1  # the first model review spent it


def test_bad_options_are_refused_with_the_fix(reuse_lab: ReviewLab, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "--suite", "reviews", "--only", "nope"], env=COLUMNS)
    assert result.exit_code == 2 and "failed_fit" in result.output and "--list" in result.output
    result = CliRunner().invoke(app, ["eval", "--suite", "reviews", "--k", "3"], env=COLUMNS)
    assert result.exit_code == 2 and "question suite" in result.output
    result = CliRunner().invoke(app, ["eval", "--suite", "reviews", "--replay", str(tmp_path)], env=COLUMNS)
    assert result.exit_code == 2 and "run.json" in result.output
    result = CliRunner().invoke(app, ["eval", "--suite", "reviews", "--list"], env=COLUMNS)
    assert result.exit_code == 0 and "tls_dip" in result.output


def test_visible_through_the_cli(reuse_lab: ReviewLab, tmp_path: Path) -> None:
    arguments = ["eval", "--suite", "reviews", "--only", "CheckT1", "--out", str(tmp_path)]
    result = CliRunner().invoke(app, arguments, env=COLUMNS)
    assert result.exit_code == 0, result.output
    report = _report(tmp_path)
    assert {r["name"] for r in report["results"]} == {"CheckT1"}
    assert report["score"]["evidence_share"] == 1.0 and "answerable from what the model sees" in result.output
