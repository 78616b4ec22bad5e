"""Answer feedback: the newest dashboard's thumbs-down kept through the session PATCH, listed per
project and user (``GET /copilot/chat/feedback``), and written as draft eval cases that the question
loader refuses until a person fills in the expected answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from qdash.evaluation.questions import DraftQuestionError, Question, load_questions
from qdash.feedback.drafts import write_drafts
from tests.api.api_helpers import auth

SESSIONS = "/copilot/chat/sessions"
FEEDBACK = "/copilot/chat/feedback"


def rated_answer(text: str, feedback: str | None, tools: tuple[str, ...] = ("get_qubit_params",)) -> str:
    """An assistant message as the newest dashboard stores it: the blocks result, its trace and the
    rating, JSON-encoded in ``content`` (``CopilotBlocksResult`` of ``ui/src/types/copilotChat.ts``)."""
    steps: list[dict[str, Any]] = [{"kind": "thinking", "text": "…", "startedAt": 1}]
    steps += [
        {"kind": "tool", "id": f"t{i}", "tool": tool, "label": tool, "args": {"qid": "5"}, "status": "done"}
        for i, tool in enumerate(tools)
    ]
    payload: dict[str, Any] = {
        "blocks": [{"type": "text", "content": text, "chart": None}],
        "assessment": None,
        "trace": {"steps": steps, "durationMs": 1200},
    }
    if feedback:
        payload["feedback"] = feedback
    return json.dumps(payload)


async def rate(
    client: httpx.AsyncClient,
    session: str,
    question: str,
    answer: str,
    headers: dict[str, str],
    *,
    context: dict[str, str] | None = None,
) -> None:
    """What the dashboard does: create the session, then PATCH the whole conversation (the rated answer)."""
    created = await client.post(SESSIONS, json={"session_id": session, "context": context}, headers=headers)
    assert created.status_code == 200, created.text
    messages = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    patched = await client.patch(f"{SESSIONS}/{session}", json={"messages": messages}, headers=headers)
    assert patched.status_code == 200, patched.text


async def listed(client: httpx.AsyncClient, headers: dict[str, str], **params: str) -> list[dict[str, Any]]:
    response = await client.get(FEEDBACK, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return list(response.json()["feedback"])


async def test_patch_keeps_the_rating_in_upstream_shape(client: httpx.AsyncClient) -> None:
    answer = rated_answer("T1 of Q05 is 12 us.", "down")
    await rate(client, "s-down", "What is the T1 of Q05?", answer, auth())
    got = (await client.get(f"{SESSIONS}/s-down", headers=auth())).json()
    assert got["messages"][1]["content"] == answer, "the answer JSON, rating and trace, is stored as sent"
    assert json.loads(got["messages"][1]["content"])["feedback"] == "down"


async def test_only_thumbs_down_of_the_callers_project_and_user(client: httpx.AsyncClient) -> None:
    await rate(client, "a-down", "What is the T1 of Q05?", rated_answer("12 us", "down"), auth())
    await rate(client, "a-up", "What is the T2 of Q05?", rated_answer("30 us", "up"), auth())
    await rate(client, "a-none", "Which qubit is worst?", rated_answer("Q07", None), auth())
    await rate(client, "b-by-alice", "Chip B T1?", rated_answer("no data", "down"), auth("alice", "proj-b"))
    await rate(client, "b-by-bob", "Bob's question", rated_answer("wrong", "down", ()), auth("bob"))

    mine = await listed(client, auth())
    assert [(r["session_id"], r["project_id"], r["username"]) for r in mine] == [
        ("a-down", "proj-a", "alice")
    ]
    only = mine[0]
    assert only["question"] == "What is the T1 of Q05?" and only["answer"] == "12 us" and only["index"] == 1
    assert only["tools"] == [{"tool": "get_qubit_params", "args": {"qid": "5"}, "status": "done"}]

    # bob owns proj-b: every member's ratings there, narrowed by user; alice (a viewer) sees her own
    assert {r["session_id"] for r in await listed(client, auth("bob"))} == {"b-by-alice", "b-by-bob"}
    assert [r["session_id"] for r in await listed(client, auth("bob"), user="alice")] == ["b-by-alice"]
    assert [r["session_id"] for r in await listed(client, auth("alice", "proj-b"))] == ["b-by-alice"]
    refused = await client.get(FEEDBACK, params={"user": "bob"}, headers=auth("alice", "proj-b"))
    assert refused.status_code == 403 and "owner" in refused.json()["detail"]
    assert await listed(client, auth(), since="2999-01-01T00:00:00Z") == []


async def test_a_trace_less_answer_says_so(client: httpx.AsyncClient) -> None:
    answer = json.dumps({"blocks": [{"type": "text", "content": "no", "chart": None}], "feedback": "down"})
    await rate(client, "plain", "Why?", answer, auth())
    assert (await listed(client, auth()))[0]["tools"] is None


async def test_draft_case_loads_once_its_todo_is_filled(client: httpx.AsyncClient, tmp_path: Path) -> None:
    context = {"taskName": "CheckT1", "chipId": "64Qv3", "qid": "5", "executionId": "e1", "taskId": "t1"}
    await rate(
        client,
        "Sess 1",
        "Is this T1 fit good?",
        rated_answer("Looks\nfine.", "down"),
        auth(),
        context=context,
    )
    (path,) = write_drafts(await listed(client, auth()), tmp_path / "drafts")
    text = path.read_text(encoding="utf-8")
    assert path.name == "questions_fb-sess-1-1.yaml"
    assert "# project: proj-a   chip: 64Qv3   user: alice" in text and "#   Looks\n#   fine." in text

    (tmp_path / "questions.yaml").write_text("questions: []\n", encoding="utf-8")
    beside = tmp_path / path.name
    beside.write_text(text, encoding="utf-8")
    with pytest.raises(DraftQuestionError, match=r"'fb-sess-1-1' is a draft: replace its TODO values"):
        load_questions.__wrapped__(tmp_path / "questions.yaml")

    (case,) = yaml.safe_load(text)["questions"]
    assert case["text"] == "Is this T1 fit good?" and case["mode"] == "analysis"
    assert case["analysis"] == {
        "task_name": "CheckT1",
        "qid": "5",
        "execution_id": "e1",
        "task_id": "t1",
        "chip_id": "64Qv3",
    }
    assert case["plan"] == [{"tool": "get_qubit_params", "args": {"qid": "5"}}]
    assert [k for k, v in case.items() if v == "TODO"] == ["category"]
    assert case["truth"] == {"fn": "TODO"} and case["grader"] == {"type": "TODO"}
    filled = {
        **case,
        "category": "analysis_mode",
        "truth": {"fn": "current_value"},
        "grader": {"type": "assessment"},
    }
    assert Question.model_validate(filled).id == "fb-sess-1-1"


def test_eval_refuses_to_grade_a_draft(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from qdash.cli import app
    from qdash.commands import eval as eval_cli

    (tmp_path / "questions.yaml").write_text("questions: []\n", encoding="utf-8")
    draft = {
        "id": "fb-x-1",
        "category": "TODO",
        "text": "Q?",
        "truth": {"fn": "TODO"},
        "grader": {"type": "TODO"},
    }
    (tmp_path / "questions_fb-x-1.yaml").write_text(yaml.safe_dump({"questions": [draft]}), encoding="utf-8")
    monkeypatch.setattr(
        eval_cli, "load_questions", lambda: load_questions.__wrapped__(tmp_path / "questions.yaml")
    )
    result = CliRunner().invoke(app, ["eval", "--list"])
    assert result.exit_code == 2
    assert "error: questions_fb-x-1.yaml: question 'fb-x-1' is a draft" in result.output
