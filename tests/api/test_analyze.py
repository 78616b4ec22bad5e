"""Analysis sidebar endpoints: SSE steps with ``images_sent`` in the result, and the JSON variant."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI

from tests.api.api_helpers import RESULT, FakeAssistant, auth, parse_sse

BODY = {
    "task_name": "CheckT1",
    "chip_id": "64Qv3",
    "qid": "16",
    "execution_id": "20260227-001",
    "task_id": "t-1",
    "message": "Is this fit good?",
}
IMAGES = {
    "experiment_figure": True,
    "experiment_figure_paths": ["/data/fig.png"],
    "expected_images": [],
    "task_name": "CheckT1",
}


async def test_analysis_stream(client: httpx.AsyncClient, fake: FakeAssistant) -> None:
    response = await client.post("/copilot/analyze/stream", json=BODY, headers=auth())
    events = parse_sse(response.content)
    steps = [p["step"] for name, p in events if name == "status"]
    assert steps == [
        "build_context",
        "load_images",
        "run_analysis",
        "thinking",
        "tool_call",
        "thinking",
        "complete",
    ]
    assert events[-2][1] == {"step": "complete", "message": "Analysis complete"}
    assert events[-1][0] == "result" and events[-1][1]["images_sent"] == IMAGES
    assert fake.calls[0][1].task_id == "t-1"


async def test_analysis_json(client: httpx.AsyncClient) -> None:
    response = await client.post("/copilot/analyze", json=BODY, headers=auth())
    assert response.status_code == 200
    body = response.json()
    assert body["blocks"] == RESULT["blocks"] and body["assessment"] == "good"
    assert body["images_sent"] == IMAGES


async def test_analysis_json_errors(client: httpx.AsyncClient, fake: FakeAssistant, app: FastAPI) -> None:
    missing = {k: v for k, v in BODY.items() if k != "task_id"}
    assert (await client.post("/copilot/analyze", json=missing, headers=auth())).status_code == 422
    fake.behaviour = "fail"
    failed = await client.post("/copilot/analyze", json=BODY, headers=auth())
    assert failed.status_code == 500 and failed.json() == {"detail": "Analysis failed: model unavailable"}
    fake.behaviour = "raise"
    bug = await client.post("/copilot/analyze", json=BODY, headers=auth())
    assert bug.status_code == 500 and bug.json() == {"detail": "Analysis failed: internal error"}
    settings: Any = app.state.settings
    app.state.settings = settings.model_copy(
        update={"copilot": settings.copilot.model_copy(update={"enabled": False})}
    )
    disabled = await client.post("/copilot/analyze", json=BODY, headers=auth())
    assert disabled.status_code == 503 and disabled.json() == {"detail": "Copilot is not enabled"}
