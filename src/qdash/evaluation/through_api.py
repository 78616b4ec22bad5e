"""Ask the full assistant a question the way the dashboard does: HTTP POST, SSE back, blocks result.

Why through the API and not the assistant object: the answer a user gets passes the router, the
SSE encoder (LF-only frames, exactly one terminal event) and the result payload; scripted and live
runs check all of it. The app runs in-process (``httpx.ASGITransport``), as the demo user of the lab.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import ValidationError

from qdash.api.app import create_app
from qdash.copilot.assistant import Assistant
from qdash.evaluation.lab import EvalLab
from qdash.evaluation.questions import Question, fill
from qdash.evaluation.recording import Recorder, RecordingRegistry
from qdash.evaluation.visible import session_for, upload_for
from qdash.models.answer import Answer
from qdash.settings import Settings

TERMINAL = ("result", "error")


class PlumbingError(ValueError):
    """The stream broke the dashboard's rules (CRLF, several data lines, no or two terminal events)."""


def parse_sse(raw: str) -> list[tuple[str, dict[str, Any]]]:
    """Frames as the dashboard's parser reads them; refuses what it would not accept."""
    if "\r" in raw:
        raise PlumbingError("CRLF in the SSE stream")
    events: list[tuple[str, dict[str, Any]]] = []
    for chunk in raw.split("\n\n"):
        name, data = None, []
        for line in chunk.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        if len(data) > 1:
            raise PlumbingError(f"{len(data)} data lines in one {name} frame")
        if name and data:
            events.append((name, json.loads(data[0])))
    terminals = [name for name, _ in events if name in TERMINAL]
    if len(terminals) != 1:
        raise PlumbingError(f"expected exactly one result or error event, got {terminals}")
    return events


@dataclass
class Outcome:
    """One asked question: the result (or the error event), tool calls, tokens, seconds."""

    result: Answer | None
    error: str | None
    tool_calls: list[str] = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0


def _tokens(answer: Answer) -> int:
    usage = (answer.meta or {}).get("usage") or {}
    return int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)


class AssistantClient:
    """The production app with the real ``Assistant`` on ``lab``'s database, asked over HTTP."""

    def __init__(self, lab: EvalLab, settings: Settings, client: httpx.AsyncClient) -> None:
        self.lab = lab
        self.settings = settings
        self.client = client
        token = lab.report.token(lab.username)
        self.headers = {"Authorization": f"Bearer {token}", "X-Project-Id": lab.project_id}

    async def ask(self, question: Question, model_alias: str | None = None) -> Outcome:
        started = time.perf_counter()
        facts = self.lab.oracle.facts
        body: dict[str, Any] = {"message": fill(question.text, facts)}
        if model_alias:
            body["model_override"] = {"alias": model_alias}
        if question.upload:
            upload_for(self.lab, question)
            body["session_id"] = session_for(question)
        path = "/copilot/chat/stream"
        if question.analysis is not None:
            body.update(fill(question.analysis.model_dump(), facts))
            path = "/copilot/analyze/stream"
        response = await self.client.post(
            path, params={"events": "extended"}, json=body, headers=self.headers, timeout=None
        )
        seconds = time.perf_counter() - started
        if response.status_code != 200:
            return Outcome(None, f"HTTP {response.status_code}: {response.text[:300]}", seconds=seconds)
        try:
            events = parse_sse(response.text)
        except (PlumbingError, ValueError) as exc:
            return Outcome(None, f"broken stream: {exc}", seconds=seconds)
        calls = [str(data.get("name")) for name, data in events if name == "tool_result"]
        for name, data in events:
            if name == "result":
                try:
                    answer = Answer.model_validate(data)
                except ValidationError as exc:
                    return Outcome(None, f"malformed result: {exc.errors()[0]['msg']}", calls, 0, seconds)
                return Outcome(answer, None, calls, _tokens(answer), seconds)
            if name == "error":
                return Outcome(None, f"{data.get('code')}: {data.get('detail')}", calls, 0, seconds)
        raise PlumbingError("no terminal event")  # parse_sse guarantees one; kept for type checkers


@asynccontextmanager
async def assistant_client(
    lab: EvalLab, settings: Settings, recorder: Recorder | None = None
) -> AsyncIterator[AssistantClient]:
    """An in-process app for ``settings`` (its models) on the lab's database; closed afterwards.

    The per-user request limits are lifted: the evaluation is one user asking many questions fast.
    """
    api = settings.api.model_copy(
        update={"chat_requests_per_minute": 10_000, "max_concurrent_streams_per_user": 100}
    )
    settings = settings.model_copy(update={"api": api})
    app = create_app(settings, db=lab.db)
    assistant = Assistant(lab.db, settings)
    if recorder is not None:
        assistant.models = RecordingRegistry(assistant.models, recorder)
    app.state.assistant = assistant
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://qdash-eval") as client:
            yield AssistantClient(lab, settings, client)
    finally:
        await assistant.aclose()
