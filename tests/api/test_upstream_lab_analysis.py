"""Analysis mode end to end on the upstream-shaped lab: the real assistant and tools, the fake LLM.

What only this shows: an upstream task result (absolute figure path, empty input producers, a
user note) is analysed through HTTP — the context reaches the model, the figure is found through
``lab.figure_roots`` and sent as an image, and a tool call runs in the caller's project.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from qdash.api.app import create_app
from qdash.copilot.assistant import Assistant
from qdash.evaluation.fake_llm import FakeLLMServer, call
from tests.api.api_helpers import fake_llm_settings, parse_sse
from tests.support.upstream_lab import UpstreamLab, task_id

EXECUTION = "20260227-000"
STORED_FIGURE = "/app/calib_data/alice/20260227/000/fig/CheckT1_Q05.png"
ANSWER = {
    "blocks": [{"type": "text", "content": "T1 of Q05 is consistent.", "chart": None}],
    "assessment": "good",
}


def _png() -> bytes:
    """A valid 1×1 grey PNG (the model wire carries it as a data URL)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\x80"))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
async def upstream_app(
    tmp_path: Path, upstream_lab_db: UpstreamLab, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[FastAPI]:
    local = tmp_path / "calib_data"
    figure = local / STORED_FIGURE.removeprefix("/app/calib_data/")
    figure.parent.mkdir(parents=True)
    figure.write_bytes(_png())
    lab = {"timezone": "Asia/Tokyo", "figure_roots": {"/app/calib_data": str(local)}}
    settings = fake_llm_settings(fake_llm, monkeypatch, tmp_path / "data", lab=lab)
    app = create_app(settings, db=upstream_lab_db.db)
    app.state.assistant = Assistant(upstream_lab_db.db, settings)
    yield app
    await app.state.assistant.aclose()


async def test_analysis_of_an_upstream_task_result(
    upstream_app: FastAPI, fake_llm: FakeLLMServer, upstream_lab_db: UpstreamLab
) -> None:
    chip = upstream_lab_db.chip_id
    fake_llm.script(
        call(
            "get_task_history",
            {"task_name": "CheckT1", "chip_id": chip, "qid": "5", "last_n": 5, "cooldown_id": None},
        ),
        json.dumps(ANSWER),
    )
    body = {
        "task_name": "CheckT1",
        "chip_id": chip,
        "qid": "5",
        "execution_id": EXECUTION,
        "task_id": task_id(EXECUTION, "CheckT1", "5"),
        "message": "Is this T1 fit trustworthy?",
    }
    headers = {"Authorization": f"Bearer {upstream_lab_db.token('bob')}"}  # no default project
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=upstream_app), base_url="http://t", timeout=30
    ) as c:
        response = await c.post("/copilot/analyze/stream", json=body, headers=headers)
    assert response.status_code == 200, response.text
    events = parse_sse(response.content)
    name, result = events[-1]
    assert name == "result", events[-3:]
    assert result["blocks"] == ANSWER["blocks"]
    assert result["images_sent"]["experiment_figure"] is True
    assert result["images_sent"]["experiment_figure_paths"] == [STORED_FIGURE]
    first = fake_llm.requests[0].body
    sent = json.dumps(first)
    assert "data:image/png;base64," in sent  # the mapped figure went to the model
    assert EXECUTION in sent and "t1" in sent  # the analysis context
    history = json.loads(next(iter(fake_llm.last_request.tool_outputs().values())))
    assert history["qid"] == "5" and history.get("error") is None
