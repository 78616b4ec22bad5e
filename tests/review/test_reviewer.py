"""The reviewer against the fake LLM server (real openai SDK): context, schema, guards, fallbacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qdash.copilot.assistant import Assistant
from qdash.evaluation.fake_llm import FakeLLMServer, HttpError, turn
from qdash.review import REVIEWS, ReviewNotFoundError, ReviewRequest
from qdash.review.reviewer import Reviewed, Reviewer

from .conftest import ReviewLab, review_settings, verdict_json

ALICE = ReviewRequest("alice")


@pytest.fixture
async def assistant_for(review_lab: ReviewLab, tmp_path: Path) -> Any:
    built: list[Assistant] = []

    def make(fake: FakeLLMServer, **options: Any) -> Assistant:
        assistant = Assistant(review_lab.db, review_settings(fake, tmp_path, **options))
        built.append(assistant)
        return assistant

    yield make
    for assistant in built:
        await assistant.aclose()


def _stored(review_lab: ReviewLab, task_id: str) -> dict[str, Any]:
    doc = review_lab.db["task_result_history"].find_one({"project_id": "proj-demo", "task_id": task_id})
    assert doc is not None
    return doc


async def _review(assistant: Assistant, result: dict[str, Any], model: str | None = None) -> Reviewed:
    return await Reviewer(assistant, model=model).review("proj-demo", result["task_id"], ALICE)


def _healthy_t1(review_lab: ReviewLab) -> dict[str, Any]:
    chip = review_lab.report.chip("proj-demo", "64Qv3")
    special = {*chip.bad_qubits, chip.tls_qubit}
    while True:
        doc = review_lab.take(name="CheckT1", status="completed")
        if doc["qid"] not in special and doc["output_parameters"]["t1"]["value"] >= 50:
            return doc


async def test_a_model_verdict_with_the_analysis_context_is_stored(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, assistant_for: Any
) -> None:
    result = _healthy_t1(review_lab)
    fake_llm.script(verdict_json("PASS_WITH_NOTE", reason="Clean decay.\n- Decision: `PASS`"))
    reviewed = await Reviewer(assistant_for(fake_llm)).review("proj-demo", result["task_id"], ALICE)
    assert (reviewed.status, reviewed.decision, reviewed.source) == ("reviewed", "PASS_WITH_NOTE", "model")
    assert reviewed.tokens > 0
    body = fake_llm.last_request.body
    assert body["text"]["format"]["type"] == "json_schema"
    assert body["text"]["format"]["name"] == "review_verdict"
    assert body["text"]["format"]["schema"]["additionalProperties"] is False
    assert "tools" not in body or body["tools"] == []
    assert "Task CheckT1:" in body["instructions"]  # task knowledge
    assert "t1, t1_average [μs]: excellent ≥ 100" in body["instructions"]  # thresholds
    user = json.dumps(body["input"])
    assert f"qubit {result['qid']}" in user and "Recent runs of this task" in user
    assert "Neighbour qubits" in user
    assert "data:image/png;base64," in user  # the result's figure (rendered demo figure)
    stored = review_lab.db["task_result_history"].find_one(
        {"project_id": "proj-demo", "task_id": result["task_id"]}
    )
    assert stored is not None
    content = stored["ai_review_note"]["content"]
    assert "- Decision: `PASS_WITH_NOTE`" in content and "Clean decay. (Decision) 'PASS'" in content
    assert len(content.splitlines()) == 10


async def test_a_guard_fail_asks_no_model_and_a_passing_model_cannot_lift_a_review(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, assistant_for: Any
) -> None:
    reviewer = Reviewer(assistant_for(fake_llm, multimodal=False))
    failed = review_lab.take(status="failed")
    reviewed = await reviewer.review("proj-demo", failed["task_id"], ALICE)
    assert (reviewed.decision, reviewed.source) == ("FAIL", "guards")
    assert fake_llm.requests == []
    bad = review_lab.report.chip("proj-demo", "64Qv3").bad_qubits[0]
    low = review_lab.take(name="X90InterleavedRandomizedBenchmarking", status="completed", qid=bad)
    fake_llm.script(verdict_json("PASS", accepted=["x90_gate_fidelity"]))
    reviewed = await reviewer.review("proj-demo", low["task_id"], ALICE)
    assert (reviewed.decision, reviewed.source) == ("REVIEW", "model")
    assert "cannot be less severe than REVIEW" in json.dumps(fake_llm.last_request.body["input"])
    doc = review_lab.db[REVIEWS].find_one({"_id": reviewed.review_id})
    assert doc is not None and doc["verdict"]["questioned_parameters"] == ["x90_gate_fidelity"]
    assert doc["verdict"]["accepted_parameters"] == []


@pytest.mark.parametrize("answer", ['{"decision": "LGTM"}', "Looks good to me!", ""])
async def test_a_malformed_or_missing_verdict_is_a_safe_review(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, assistant_for: Any, answer: str
) -> None:
    result = _healthy_t1(review_lab)
    fake_llm.script(turn(answer, lenient=True) if answer else turn(lenient=True))
    reviewed = await Reviewer(assistant_for(fake_llm, multimodal=False)).review(
        "proj-demo", result["task_id"], ALICE
    )
    assert (reviewed.status, reviewed.decision, reviewed.source) == ("reviewed", "REVIEW", "fallback")
    doc = review_lab.db[REVIEWS].find_one({"_id": reviewed.review_id})
    assert doc is not None and "verdict" in doc["verdict"]["reason"]


async def test_the_chat_path_falls_back_when_the_server_refuses_the_schema(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, assistant_for: Any
) -> None:
    rejected = {"error": {"message": "'response_format.type' : value is not one of the allowed values "
                                     "['text','json_object']", "type": "invalid_request_error",
                          "param": "response_format", "code": None}}  # fmt: skip
    fake_llm.script(turn("```json\n" + verdict_json("PASS") + "\n```", fault=HttpError(400, body=rejected)))
    result = _healthy_t1(review_lab)
    reviewed = await Reviewer(assistant_for(fake_llm), model="chat").review(
        "proj-demo", result["task_id"], ALICE
    )
    assert (reviewed.decision, reviewed.source) == ("PASS", "model")
    first, second = (request.body for request in fake_llm.requests)
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object"}
    assert '"decision": "PASS" | "PASS_WITH_NOTE"' in second["messages"][0]["content"]
    doc = review_lab.db[REVIEWS].find_one({"_id": reviewed.review_id})
    assert doc is not None and doc["config"]["model"] == "gpt-4o"


async def test_an_unreachable_model_stores_no_review_and_marks_the_request_failed(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, assistant_for: Any
) -> None:
    result = _healthy_t1(review_lab)
    fake_llm.script(turn(fault=HttpError(503)))
    reviewed = await Reviewer(assistant_for(fake_llm, multimodal=False)).review(
        "proj-demo", result["task_id"], ALICE
    )
    assert reviewed.status == "failed" and reviewed.error
    assert review_lab.db[REVIEWS].count_documents({"task_id": result["task_id"]}) == 0
    stored = review_lab.db["task_result_history"].find_one(
        {"project_id": "proj-demo", "task_id": result["task_id"]}
    )
    assert stored["ai_review"]["status"] == "failed"
    assert "ai_review_note" not in stored


async def test_the_same_review_is_not_asked_twice_and_other_projects_are_not_found(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, assistant_for: Any
) -> None:
    reviewer = Reviewer(assistant_for(fake_llm, multimodal=False))
    result = _healthy_t1(review_lab)
    fake_llm.script(verdict_json("PASS"))
    first = await reviewer.review("proj-demo", result["task_id"], ALICE)
    again = await reviewer.review("proj-demo", result["task_id"], ALICE)
    assert (first.status, again.status, again.review_id) == ("reviewed", "skipped", first.review_id)
    assert len(fake_llm.requests) == 1
    theirs = review_lab.take("proj-other", status="completed")
    with pytest.raises(ReviewNotFoundError):
        await reviewer.review("proj-demo", theirs["task_id"], ALICE)
