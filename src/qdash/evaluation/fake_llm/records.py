"""The request log: every request the fake saw, with its verdict and the turn it consumed.

Why a neutral view on top of the raw body: expectations and dynamic turns ask the same questions
("which tool outputs came back?", "what did the user say last?") of three different wires.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeAlias

from qdash.evaluation.fake_llm.script import OutputPart, Turn


def _text_of(content: Any) -> str:
    """Plain text of a message ``content``: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


@dataclass
class RecordedRequest:
    """One HTTP request: raw facts plus what the fake decided."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any
    session: str | None = None
    endpoint: str = ""
    status: int = 200
    verdict: str = "accepted"
    """``accepted``; ``accepted+fault:<Kind>`` (answered, with a stream/render fault); a rule id
    (``R9``, ``C1``…); ``mismatch``; or ``fault:http_error`` / ``fault:delay_headers`` /
    ``fault:ollama_no_tools`` (a request-level fault answered instead of the turn)."""
    error: dict[str, Any] | None = None
    turn: Turn | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def body(self) -> dict[str, Any]:
        return self.json if isinstance(self.json, dict) else {}

    @property
    def model(self) -> str | None:
        model = self.body.get("model")
        return model if isinstance(model, str) else None

    @property
    def stream(self) -> bool:
        default = self.endpoint == "ollama_chat"
        return bool(self.body.get("stream", default))

    @property
    def retry_count(self) -> int | None:
        """``x-stainless-retry-count`` as sent by openai-python (0 on the first attempt)."""
        raw = self.headers.get("x-stainless-retry-count")
        return int(raw) if raw is not None else None

    def _entries(self) -> list[dict[str, Any]]:
        """Input items (Responses, a bare string becomes one user message) or messages."""
        body = self.body
        if self.endpoint == "responses":
            raw = body.get("input", [])
            if isinstance(raw, str):
                return [{"role": "user", "content": raw}]
            return [i for i in raw if isinstance(i, dict)] if isinstance(raw, list) else []
        messages = body.get("messages", [])
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    def tool_outputs(self) -> dict[str, str]:
        """``call_id`` → output text (Ollama native without ids: ``tool_name#n``)."""
        found: dict[str, str] = {}
        for n, entry in enumerate(self._entries()):
            if entry.get("type") == "function_call_output":
                output = entry.get("output")
                found[str(entry.get("call_id"))] = output if isinstance(output, str) else json.dumps(output)
            elif entry.get("role") == "tool":
                key = entry.get("tool_call_id") or f"{entry.get('tool_name')}#{n}"
                found[str(key)] = _text_of(entry.get("content"))
        return found

    def user_texts(self) -> list[str]:
        """Every user message's text, in order."""
        return [_text_of(e.get("content")) for e in self._entries() if e.get("role") == "user"]

    def last_user_text(self) -> str:
        for entry in reversed(self._entries()):
            if entry.get("role") == "user" and entry.get("type", "message") == "message":
                return _text_of(entry.get("content"))
        return ""

    def tool_names(self) -> list[str]:
        names: list[str] = []
        for tool in self.body.get("tools") or []:
            if not isinstance(tool, dict):
                continue
            inner = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                names.append(inner["name"])
        return names

    def summary(self) -> dict[str, Any]:
        """JSON-friendly form for ``GET /_fake/requests``: every field but the scripted turn."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "turn"}


DynamicTurn: TypeAlias = Callable[[RecordedRequest], Turn | str | OutputPart | Sequence[OutputPart]]
"""Builds the answer from the request (e.g. answer every tool output with N new calls)."""

TurnLike: TypeAlias = Turn | str | OutputPart | Sequence[OutputPart] | DynamicTurn
"""What ``FakeLLMServer.script`` accepts: a turn, its parts, or a function of the request."""
