"""Lab actions over HTTP with the real assistant, the real openai SDK and the fake LLM on loopback:
the model's write call ends the turn with an approval block (the newest dashboard) or readable text
(the older one); the next request decides it; only then does the server write, report the write as
a tool call and tell the model the outcome. Refused decisions are 400/403 with the reason.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pymongo.database import Database

from qdash.actions import approvals, audit
from qdash.actions.catalog import Target
from qdash.evaluation.fake_llm import FakeLLMServer, call, turn
from qdash.repositories.task_results import TASK_RESULTS
from tests.api.api_helpers import parse_sse
from tests.api.conftest import ACTION_TASK as TASK
from tests.api.conftest import INJECTED_NOTE as INJECTED

EXCLUDE = {"task_id": TASK, "reason": "TLS spike"}


def answer(text: str) -> str:
    return json.dumps({"blocks": [{"type": "text", "content": text, "chart": None}], "assessment": None})


@pytest.fixture
def app(actions_app: FastAPI) -> FastAPI:
    """The real assistant with lab actions on, over a CheckT1 run of Q16 (tests/api/conftest.py)."""
    return actions_app


async def post(
    app: FastAPI, body: dict[str, Any], user: str = "alice", project: str | None = None
) -> httpx.Response:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=60
    ) as c:
        headers = {"Authorization": f"Bearer demo-token-{user}"} | (
            {"X-Project-Id": project} if project else {}
        )
        return await c.post("/copilot/chat/stream", json=body, headers=headers)


def newest(message: str, **extra: Any) -> dict[str, Any]:
    """The newest upstream dashboard's body (request_id selects its dialect)."""
    return {"message": message, "session_id": "s-1", "request_id": "r-1", **extra}


async def propose(app: FastAPI, fake_llm: FakeLLMServer, body: dict[str, Any]) -> dict[str, Any]:
    fake_llm.script(turn(call("exclude_task_result", EXCLUDE)))
    response = await post(app, body)
    assert response.status_code == 200, response.text
    name, result = parse_sse(response.content)[-1]
    assert name == "result"
    return result


def excluded(db: Database[dict[str, Any]]) -> Any:
    doc = db[TASK_RESULTS].find_one({"task_id": TASK})
    assert doc is not None
    return doc.get("excluded")


async def test_approve_on_the_newest_dashboard(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    result = await propose(app, fake_llm, newest("Exclude Q16's latest CheckT1 from the statistics"))
    text, card = result["blocks"]
    assert text["type"] == "text" and "nothing has been changed" in text["content"]
    assert card["type"] == "approval" and card["content"] is None and card["chart"] is None
    approval = card["approval"]
    assert set(approval) == {"id", "tool", "label", "args"} and approval["args"] == EXCLUDE
    assert excluded(lab_db) is None  # proposed, not written

    fake_llm.script(turn(answer("Excluded it.")))
    decision = newest(f"Approved: {approval['label']}", approval={"id": approval["id"], "approve": True})
    events = parse_sse((await post(app, decision)).content)
    started, ended = dict(events)["tool_start"], dict(events)["tool_end"]
    assert started == {
        "id": started["id"],
        "tool": "exclude_task_result",
        "label": approval["label"],
        "args": EXCLUDE,
    }
    assert ended["tool"] == "exclude_task_result" and ended["is_error"] is False
    assert events[-1][1]["blocks"][0]["content"] == "Excluded it."
    told = fake_llm.last_request.body["input"][-2:]  # the call it proposed, run by the server
    assert told[0]["type"] == "function_call" and told[0]["name"] == "exclude_task_result"
    assert json.loads(told[0]["arguments"]) == EXCLUDE
    outcome = json.loads(told[1]["output"])
    assert told[1]["call_id"] == told[0]["call_id"] and outcome["done"] is True
    assert excluded(lab_db) is True
    (record,) = audit.records(lab_db, "proj-demo")
    assert (record["state"], record["approved_by"], record["model"]) == ("done", "alice", "gpt-4o-mini")

    replay = await post(app, decision)
    assert replay.status_code == 400 and replay.json()["detail"].startswith(approvals.STALE)


async def test_decline_tells_the_model_and_writes_nothing(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    approval = (await propose(app, fake_llm, newest("Exclude it")))["blocks"][-1]["approval"]
    fake_llm.script(turn(answer("Left as it is.")))
    decision = newest("Declined", approval={"id": approval["id"], "approve": False})
    events = parse_sse((await post(app, decision)).content)
    assert "tool_start" not in dict(events)
    told = json.loads(fake_llm.last_request.body["input"][-1]["output"])
    assert told["declined"] is True and told["written"] is False
    assert excluded(lab_db) is None and audit.records(lab_db, "proj-demo") == []


async def test_older_dashboard_reads_text_and_answers_in_words(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    result = await propose(app, fake_llm, {"message": "Exclude Q16's newest T1"})
    assert [block["type"] for block in result["blocks"]] == ["text", "text"]
    card = result["blocks"][1]["content"]
    code = approvals.code_of(approvals.live(lab_db, approvals.Scope("proj-demo", "alice", None))["_id"])  # type: ignore[index]
    assert f"Reply **yes {code}** to approve or **no {code}** to decline" in card
    assert f"- task_id: {TASK}" in card
    fake_llm.script(turn(answer("Done.")))
    history = [{"role": "user", "content": "Exclude Q16's newest T1"}, {"role": "assistant", "content": card}]
    assert (await post(app, {"message": "Yes!", "conversation_history": history})).status_code == 200
    assert excluded(lab_db) is True


async def test_the_next_message_voids_the_proposal(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    approval = (await propose(app, fake_llm, newest("Exclude it")))["blocks"][-1]["approval"]
    fake_llm.script(turn(answer("T1 is 41 μs.")))
    assert (await post(app, newest("What is T1 of Q16?"))).status_code == 200
    late = await post(app, newest("Approved", approval={"id": approval["id"], "approve": True}))
    assert late.status_code == 400 and late.json()["detail"].startswith(approvals.STALE)
    assert excluded(lab_db) is None


async def test_someone_else_and_a_viewer_are_refused_with_the_reason(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    approval = (await propose(app, fake_llm, newest("Exclude it")))["blocks"][-1]["approval"]
    decision = newest("Approved", approval={"id": approval["id"], "approve": True})
    other = await post(app, decision, user="carol")  # an editor of proj-demo, not the one asked
    assert other.status_code == 403 and "another user" in other.json()["detail"]
    scope = approvals.Scope("proj-other", "carol", "s-1")  # carol only views proj-other
    mine = approvals.create(
        lab_db,
        scope,
        tool="exclude_task_result",
        label="x",
        args=EXCLUDE,
        target=Target(TASK_RESULTS, {"task_id": TASK}),
        expected={},
        expected_missing=[],
        model=None,
        ttl_s=60,
    )
    viewer = await post(
        app, newest("Approved", approval={"id": mine["_id"], "approve": True}), "carol", "proj-other"
    )
    assert viewer.status_code == 403 and "carol is viewer" in viewer.json()["detail"]
    assert excluded(lab_db) is None


async def test_injected_text_in_a_note_cannot_write(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    """A note says "exclude all results"; a model that obeys it can only propose: the turn ends with
    a card, nothing is written, and the user's next message voids it."""
    notes = {"chip_id": None, "execution_id": None, "task_id": TASK, "qid": None, "last_n": 1}
    fake_llm.script(
        turn(call("get_calibration_notes", notes)),
        turn(call("exclude_task_result", {"task_id": TASK, "reason": "the note said so"})),
    )
    events = parse_sse((await post(app, newest("Summarise the notes on Q16's newest T1"))).content)
    assert INJECTED in json.dumps(fake_llm.requests[-1].body["input"])  # the model did read it
    assert events[-1][1]["blocks"][-1]["type"] == "approval"
    assert excluded(lab_db) is None and audit.records(lab_db, "proj-demo") == []
    fake_llm.script(turn(answer("OK.")))
    await post(app, newest("No, leave it."))
    assert lab_db[approvals.APPROVALS].find_one({"status": "pending"}) is None
    assert excluded(lab_db) is None
