"""An approval binds to exactly what the person saw, tried as an attacker would: a scripted model
that puts any calls in one round, tabs that share no session, a proposal decided after the document
or the configuration changed. Over HTTP with the real assistant, the real openai SDK and the fake
LLM on loopback; the oracle is the task result documents themselves."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pymongo.database import Database

from qdash.actions import approvals
from qdash.evaluation.fake_llm import FakeLLMServer, call, turn
from qdash.repositories.task_results import TASK_RESULTS
from tests.api.api_helpers import assistant_app, fake_llm_settings, parse_sse, t1_run
from tests.api.conftest import ACTION_TASK as Q16

Q60 = "t1-q60-newest"
PLOT = {"question": "Shall I plot the T1 history of Q16?", "options": ["yes", "no"]}


def answer(text: str) -> str:
    return json.dumps({"blocks": [{"type": "text", "content": text, "chart": None}], "assessment": None})


def exclude(task_id: str, reason: str = "TLS spike") -> dict[str, Any]:
    return {"task_id": task_id, "reason": reason}


@pytest.fixture
def app(actions_app: FastAPI, lab_db: Database[dict[str, Any]]) -> FastAPI:
    """Lab actions on, with two CheckT1 runs to act on (Q16's and Q60's)."""
    lab_db[TASK_RESULTS].insert_one({**t1_run(Q60, [], execution="20261120-000"), "qid": "60"})
    return actions_app


async def post(app: FastAPI, body: dict[str, Any]) -> tuple[int, Any]:
    """alice's chat request: the status and the last SSE event (or the refusal's JSON)."""
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=60
    ) as c:
        response = await c.post(
            "/copilot/chat/stream", json=body, headers={"Authorization": "Bearer demo-token-alice"}
        )
    if response.status_code != 200:
        return response.status_code, response.json()
    return 200, parse_sse(response.content)[-1][1]


def shown(result: dict[str, Any]) -> str:
    """What the older dashboard shows and later sends back as the assistant's history entry."""
    return "\n\n".join(block["content"] for block in result["blocks"] if block.get("content"))


def excluded(db: Database[dict[str, Any]], task_id: str) -> dict[str, Any]:
    doc = db[TASK_RESULTS].find_one({"task_id": task_id}) or {}
    return {key: doc.get(key) for key in ("excluded", "excluded_reason", "excluded_by")}


NOT_EXCLUDED = {"excluded": None, "excluded_reason": None, "excluded_by": None}


async def test_a_question_and_a_proposal_in_one_round_store_no_proposal(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    fake_llm.script(turn(call("ask_user", PLOT), call("exclude_task_result", exclude(Q60))))
    status, result = await post(app, {"message": "How is Q16?"})
    assert status == 200 and [block["type"] for block in result["blocks"]] == ["text"]  # the question
    assert lab_db[approvals.APPROVALS].count_documents({}) == 0  # the proposal was never stored
    fake_llm.script(turn(answer("Here is the plot.")))
    history = [{"role": "user", "content": "How is Q16?"}, {"role": "assistant", "content": shown(result)}]
    status, _ = await post(app, {"message": "yes", "conversation_history": history})
    assert status == 200 and excluded(lab_db, Q60) == NOT_EXCLUDED


async def test_two_proposals_in_one_round_show_and_store_only_the_first(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    fake_llm.script(
        turn(call("exclude_task_result", exclude(Q16)), call("exclude_task_result", exclude(Q60)))
    )
    status, result = await post(app, {"message": "Exclude both", "session_id": "s-1", "request_id": "r"})
    card = result["blocks"][-1]["approval"]
    assert status == 200 and card["args"] == exclude(Q16)
    assert lab_db[approvals.APPROVALS].count_documents({}) == 1
    fake_llm.script(turn(answer("Excluded.")))
    decision = {
        "message": "Approved",
        "session_id": "s-1",
        "request_id": "r",
        "approval": card | {"approve": True},
    }
    status, _ = await post(app, decision)
    assert status == 200 and excluded(lab_db, Q16)["excluded"] is True  # the card shown is the card decided
    fake_llm.script(turn(answer("Nothing else pending.")))
    status, _ = await post(app, {"message": "yes", "session_id": "s-1"})
    assert status == 200 and excluded(lab_db, Q60) == NOT_EXCLUDED


async def test_yes_in_one_tab_never_decides_another_tabs_card(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    """Clients without a session id share one scope: each tab's "yes" names its own card."""
    results = []
    for task_id in (Q16, Q60):  # tab 1 is shown Q16's proposal, then tab 2 Q60's
        fake_llm.script(turn(call("exclude_task_result", exclude(task_id))))
        results.append((await post(app, {"message": f"Exclude {task_id}"}))[1])
    history = [{"role": "user", "content": "Exclude"}, {"role": "assistant", "content": shown(results[0])}]
    status, reply = await post(app, {"message": "yes", "conversation_history": history})
    assert status == 200 and excluded(lab_db, Q60) == NOT_EXCLUDED == excluded(lab_db, Q16)
    code = shown(results[1]).split("**yes ")[1][:6]
    assert "no longer pending" in shown(reply) and f"yes {code}" in shown(
        reply
    )  # what is pending, how to decide
    history[-1]["content"] = shown(results[1])
    fake_llm.script(turn(answer("Excluded.")))
    status, _ = await post(app, {"message": "yes", "conversation_history": history})  # tab 2's own "yes"
    assert status == 200 and excluded(lab_db, Q60)["excluded"] is True
    assert excluded(lab_db, Q16) == NOT_EXCLUDED


async def test_a_bare_yes_after_an_answer_without_a_card_decides_nothing(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    fake_llm.script(turn(call("exclude_task_result", exclude(Q16))))
    status, result = await post(app, {"message": "Exclude Q16's newest T1"})
    status, reply = await post(app, {"message": "yes"})  # no history: nothing was shown right before
    assert status == 200 and excluded(lab_db, Q16) == NOT_EXCLUDED
    code = shown(result).split("**yes ")[1][:6]
    assert f"**yes {code}**" in shown(reply)
    fake_llm.script(turn(answer("Excluded.")))
    status, _ = await post(app, {"message": f"yes {code}"})  # the code names it
    assert status == 200 and excluded(lab_db, Q16)["excluded"] is True


async def test_an_older_proposal_never_overwrites_a_newer_approval(
    app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    cards = []
    for session, reason in (("s-1", "first"), ("s-2", "second")):
        fake_llm.script(turn(call("exclude_task_result", exclude(Q16, reason))))
        body = {"message": "Exclude it", "session_id": session, "request_id": "r"}
        cards.append((session, (await post(app, body))[1]["blocks"][-1]["approval"]))
    for session, card in reversed(cards):  # the second session decides first
        fake_llm.script(turn(answer("Told.")))
        decision = {"message": "Approved", "session_id": session, "request_id": "r"}
        assert (await post(app, decision | {"approval": {"id": card["id"], "approve": True}}))[0] == 200
    assert excluded(lab_db, Q16) == {"excluded": True, "excluded_reason": "second", "excluded_by": "alice"}
    told = json.loads(fake_llm.last_request.body["input"][-1]["output"])
    assert told["done"] is False and "changed since this was proposed" in told["message"]


@asynccontextmanager
async def restarted(
    fake_llm: FakeLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    db: Database[Any],
    **actions: Any,
) -> AsyncIterator[FastAPI]:
    settings = fake_llm_settings(
        fake_llm, monkeypatch, tmp_path / "data2", actions={"enabled": True, **actions}
    )
    async with assistant_app(settings, db) as app:
        yield app


async def test_a_proposal_whose_action_was_switched_off_writes_nothing(
    app: FastAPI,
    fake_llm: FakeLLMServer,
    lab_db: Database[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    fake_llm.script(turn(call("exclude_task_result", exclude(Q16))))
    card = (await post(app, {"message": "Exclude it", "session_id": "s-1", "request_id": "r"}))[1]
    approval = {"id": card["blocks"][-1]["approval"]["id"], "approve": True}
    async with restarted(fake_llm, monkeypatch, tmp_path, lab_db, exclude_task_result=False) as later:
        fake_llm.script(turn(answer("Not done.")))
        body = {"message": "Approved", "session_id": "s-1", "request_id": "r", "approval": approval}
        assert (await post(later, body))[0] == 200
    assert excluded(lab_db, Q16) == NOT_EXCLUDED
    told = json.loads(fake_llm.last_request.body["input"][-1]["output"])
    assert told["done"] is False and "actions.exclude_task_result: false" in told["message"]
