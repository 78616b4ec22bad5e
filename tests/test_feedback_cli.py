"""The feedback round trip over HTTP: a thumbs-down PATCHed into a session of a running ``qdash
serve`` → ``qdash feedback list`` (through that server, then on the store once it has stopped) →
``qdash eval --from-feedback`` writes a draft case the question loader refuses until completed."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml

from qdash.db.server_record import OPERATOR_USER_HEADER, read_server
from qdash.evaluation.questions import DraftQuestionError, load_questions
from tests.api.test_feedback import rated_answer
from tests.served import cli_env, one_chip_lab, run_qdash, seed_lab, served

QUESTION = "What is the T1 of Q16 on 64Qv3?"


def patch_rating(base: str, headers: dict[str, str], session: str, feedback: str) -> None:
    """The dashboard's calls: create the session, PATCH the conversation with the rated answer."""
    created = httpx.post(f"{base}/copilot/chat/sessions", json={"session_id": session}, headers=headers)
    assert created.status_code == 200, created.text
    messages = [
        {"role": "user", "content": QUESTION if feedback == "down" else "Liked question"},
        {"role": "assistant", "content": rated_answer("T1 of Q16 is 3 us (wrong).", feedback)},
    ]
    patched = httpx.patch(
        f"{base}/copilot/chat/sessions/{session}", json={"messages": messages}, headers=headers
    )
    assert patched.status_code == 200, patched.text


def test_thumbs_down_to_draft_case(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    seed_lab(data_dir, one_chip_lab(days=1))
    env = {**cli_env(data_dir), "COLUMNS": "80"}
    with served(data_dir) as port:
        record = read_server(data_dir)
        assert record is not None
        headers = {"Authorization": f"Bearer {record.token}", OPERATOR_USER_HEADER: "alice"}
        base = f"http://127.0.0.1:{port}"
        patch_rating(base, headers, "s-down", "down")
        patch_rating(base, headers, "s-up", "up")

        table = run_qdash(env, "feedback", "list")
        assert table.returncode == 0, table.stderr
        assert "held by qdash serve" in table.stderr
        assert "T1 of Q16" in table.stdout and "get_qubit_params" in table.stdout
        assert "Liked question" not in table.stdout, "a thumbs-up is not listed"
        assert max(len(line) for line in table.stdout.splitlines()) <= 80

        drafts = tmp_path / "drafts"
        wrote = run_qdash(env, "eval", "--from-feedback", str(drafts))
        assert wrote.returncode == 0, wrote.stderr
    listed = run_qdash(env, "feedback", "list", "--json")  # the server has stopped: the store itself
    assert listed.returncode == 0, listed.stderr
    (rated,) = json.loads(listed.stdout)
    assert (rated["project_id"], rated["username"], rated["question"]) == ("proj-demo", "alice", QUESTION)
    assert rated["tools"] == [{"tool": "get_qubit_params", "args": {"qid": "5"}, "status": "done"}]

    (draft,) = drafts.glob("questions_*.yaml")
    assert draft.name == "questions_fb-s-down-1.yaml" and "1 draft case(s)" in wrote.stdout
    (case,) = yaml.safe_load(draft.read_text(encoding="utf-8"))["questions"]
    assert case["text"] == QUESTION and case["plan"] == [{"tool": "get_qubit_params", "args": {"qid": "5"}}]
    assert "#   T1 of Q16 is 3 us (wrong)." in draft.read_text(encoding="utf-8")
    (drafts / "questions.yaml").write_text("questions: []\n", encoding="utf-8")
    with pytest.raises(DraftQuestionError, match="is a draft"):
        load_questions.__wrapped__(drafts / "questions.yaml")
