"""What a new user sees without a key, over HTTP against a real ``qdash serve`` with lab actions on:
the demo model proposes the exclusion, the card, approve, the statistics without that result,
``qdash actions list``, "undo that" (itself approved), and the result back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.api.api_helpers import parse_sse
from tests.served import cli_env, one_chip_lab, run_qdash, seed_lab, serve_process

HEADERS = {"Authorization": "Bearer demo-token-alice"}
QUESTION = "Exclude Q16's latest CheckT1 result from the statistics"


def chat(base: str, message: str, n: int, **extra: Any) -> list[tuple[str, dict[str, Any]]]:
    body = {"message": message, "session_id": "demo-actions", "request_id": f"r-{n}", **extra}
    response = httpx.post(f"{base}/copilot/chat/stream", json=body, headers=HEADERS, timeout=120)
    assert response.status_code == 200, response.text
    return parse_sse(response.content)


def card(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    name, result = events[-1]
    assert name == "result" and result["blocks"][-1]["type"] == "approval", result
    approval: dict[str, Any] = result["blocks"][-1]["approval"]
    return approval


def latest_t1(base: str) -> dict[str, Any]:
    args = {"task_name": "CheckT1", "qid": "16"}
    response = httpx.post(
        f"{base}/copilot/tools/get_latest_task_result", json=args, headers=HEADERS, timeout=60
    )
    assert response.status_code == 200, response.text
    output: dict[str, Any] = response.json()["output"]
    return output


def approve(base: str, approval: dict[str, Any], n: int) -> list[tuple[str, dict[str, Any]]]:
    decision = {"id": approval["id"], "approve": True}
    return chat(base, f"Approved: {approval['label']}", n, approval=decision)


def test_demo_model_exclude_approve_undo(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    seed_lab(data_dir, one_chip_lab(days=2))
    env = {**cli_env(data_dir), "QDASH_ACTIONS__ENABLED": "true", "COLUMNS": "160"}
    with serve_process(data_dir, env) as (port, _):
        base = f"http://127.0.0.1:{port}"
        newest = latest_t1(base)["task_id"]
        proposal = card(chat(base, QUESTION, 1))
        assert proposal["tool"] == "exclude_task_result" and proposal["args"]["task_id"] == newest
        assert proposal["label"].startswith("Exclude CheckT1 on Q16 (64Qv3")
        assert latest_t1(base)["task_id"] == newest  # only proposed

        events = approve(base, proposal, 2)
        assert dict(events)["tool_end"] == {
            "id": dict(events)["tool_start"]["id"],
            "tool": "exclude_task_result",
            "is_error": False,
            "figures": [],
        }
        assert "Done" in events[-1][1]["blocks"][0]["content"]
        without = latest_t1(base)
        assert without["task_id"] != newest and "excluded" in str(without)  # statistics skip it, and say so

        listed = run_qdash(env, "actions", "list")
        assert listed.returncode == 0, listed.stderr
        assert "Exclude CheckT1 on Q16" in listed.stdout and "done" in listed.stdout

        unknown = httpx.post(f"{base}/copilot/actions/audit/no-such-record/undo", json={}, headers=HEADERS)
        assert (unknown.status_code, unknown.json()) == (
            400,
            {"detail": "No such action in this project's audit"},
        )

        undo = card(chat(base, "Undo that", 3))
        assert undo["tool"] == "undo_action" and undo["args"] == {"audit_id": proposal["id"]}
        approve(base, undo, 4)
        assert latest_t1(base)["task_id"] == newest
    stored = run_qdash(env, "actions", "list", "--json")  # the server has stopped: the store itself
    assert stored.returncode == 0, stored.stderr
    assert '"undone_by": "' in stored.stdout and '"undo_of": "' in stored.stdout
