"""Replay bundles: export what a review sent, re-run it on another model, guards bound it again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qdash.cli import app
from qdash.copilot.assistant import Assistant
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.review import ReviewRequest
from qdash.review.bundle import BUNDLE_FORMAT, BundleError, export_bundle, replay_bundle
from qdash.review.reviewer import Reviewer

from .conftest import ReviewLab, review_settings, verdict_json


async def test_export_then_replay_on_another_model(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    settings = review_settings(fake_llm, tmp_path)
    assistant = Assistant(review_lab.db, settings)
    try:
        bad = review_lab.report.chip("proj-demo", "64Qv3").bad_qubits[0]
        result = review_lab.take(name="X90InterleavedRandomizedBenchmarking", status="completed", qid=bad)
        fake_llm.script(verdict_json("PASS", accepted=["x90_gate_fidelity"]))
        reviewed = await Reviewer(assistant).review("proj-demo", result["task_id"], ReviewRequest("alice"))
        sent = fake_llm.last_request.body
        assert reviewed.review_id is not None
        bundle = await export_bundle(assistant, "proj-demo", reviewed.review_id)
        with pytest.raises(LookupError):
            await export_bundle(assistant, "proj-other", reviewed.review_id)
        guarded = await Reviewer(assistant).review(
            "proj-demo", review_lab.take(status="failed")["task_id"], ReviewRequest("alice")
        )
        assert guarded.review_id is not None
        with pytest.raises(BundleError, match="guards alone"):
            await export_bundle(assistant, "proj-demo", guarded.review_id)
    finally:
        await assistant.aclose()
    assert bundle["format"] == BUNDLE_FORMAT
    assert bundle["instructions"] == sent["instructions"]
    user_parts = sent["input"][-1]["content"]
    assert bundle["text"] == next(part["text"] for part in user_parts if part["type"] == "input_text")
    assert bundle["images"] == [part["image_url"] for part in user_parts if part["type"] == "input_image"]
    assert bundle["images"] and bundle["config"]["model"] == "gpt-5-mini"
    assert bundle["verdict"]["decision"] == "REVIEW" and bundle["guards"][0]["code"] == "below_threshold"

    bundle = json.loads(json.dumps(bundle))  # as read back from the file
    fake_llm.script(verdict_json("PASS", reason="Replayed on the chat model."))
    sides = await replay_bundle(settings, bundle, model="chat", instructions="Be strict.")
    assert sides["original"]["decision"] == "REVIEW" and sides["original"]["model"] == "gpt-5-mini"
    assert sides["replay"]["model"] == "gpt-4o" and sides["replay"]["decision"] == "REVIEW"  # guards bound it
    assert sides["replay"]["reason"] == "Replayed on the chat model."
    replayed = fake_llm.last_request.body["messages"]
    assert replayed[0]["content"].startswith("Be strict.")
    assert replayed[-1]["content"] == bundle["text"]  # the chat model takes no images: text only


def test_replay_refuses_a_file_that_is_not_a_bundle(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"format": "something else"}), encoding="utf-8")
    result = CliRunner().invoke(app, ["review", "replay", str(path)])
    assert result.exit_code == 1
    assert "not a review bundle" in result.output
    assert "Traceback" not in result.output


def _unused(_: Any) -> None: ...
