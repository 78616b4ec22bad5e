"""Heartbeats on a real socket: the connection is never silent for longer than ``api.heartbeat_s``.

The idle clock must count bytes written, not engine events: in the default mode text deltas are
not written, so a model that streams its answer slowly used to leave the client without a byte
for the whole answer (proxies and browsers drop such a connection).
"""

from __future__ import annotations

import json
import time

import httpx
from fastapi import FastAPI

from qdash.evaluation.fake_llm import FakeLLMServer, turn
from tests.api.api_helpers import LiveServer, parse_sse

HEARTBEAT_S = 0.8
TEXT = "T1 of Q16 is stable at about forty microseconds."
ANSWER = {"blocks": [{"type": "text", "content": TEXT, "chart": None}], "assessment": "good"}


def test_no_silence_longer_than_heartbeat_while_text_streams(
    real_app: FastAPI, fake_llm: FakeLLMServer
) -> None:
    """A scripted answer streamed in 4-character pieces every 150 ms (several seconds in all)."""
    answer = json.dumps(ANSWER)
    fake_llm.script(turn(answer, chunk_chars=4, event_delay_s=0.15))
    settings = real_app.state.settings
    real_app.state.settings = settings.model_copy(
        update={"api": settings.api.model_copy(update={"heartbeat_s": HEARTBEAT_S})}
    )
    arrivals: list[float] = []
    received = b""
    question = {"message": "How is the T1 of Q16?"}
    headers = {"Authorization": "Bearer demo-token-alice"}
    with (
        LiveServer(real_app) as base,
        httpx.Client(base_url=base, timeout=30) as http,
        http.stream("POST", "/copilot/chat/stream", json=question, headers=headers) as response,
    ):
        assert response.status_code == 200
        start = time.monotonic()
        for chunk in response.iter_raw():
            arrivals.append(time.monotonic())
            received += chunk
    streaming_s = arrivals[-1] - start
    assert streaming_s > 3 * HEARTBEAT_S, "the scripted answer should take several heartbeats to stream"
    gaps = [b - a for a, b in zip([start, *arrivals], arrivals, strict=False)]
    assert max(gaps) <= HEARTBEAT_S + 0.5, f"silent for {max(gaps):.2f} s"
    assert received.count(b": ping\n\n") >= 2
    events = parse_sse(received)
    assert events[-1][0] == "result" and events[-1][1]["blocks"] == ANSWER["blocks"]
