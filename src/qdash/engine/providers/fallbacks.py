"""Parameter fallbacks, learnt per model and kept in memory.

Why learn instead of configure: compatible servers differ in what they accept (no ``temperature`` on
reasoning models, no json_schema on some gateways, ``max_completion_tokens`` vs ``max_tokens``), and
the 400 that names the parameter is the most reliable source. Each lesson changes the request once;
a repeated 400 for the same reason is raised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import openai

FormatMode = Literal["json_schema", "json_object", "prompt"]

DROPPABLE = ("temperature", "top_p", "reasoning_effort", "reasoning", "parallel_tool_calls", "stream_options")
_FORMAT_MARKERS = ("response_format", "text.format", "json_schema", "json_object")


@dataclass
class Fallbacks:
    """What one model has taught us so far."""

    dropped: set[str] = field(default_factory=set)
    format_mode: FormatMode = "json_schema"
    token_param: str | None = None
    """Replacement name for the output-token limit (C10: ``max_tokens`` → ``max_completion_tokens``)."""
    dropped_extras: set[str] = field(default_factory=set)

    def learn(self, exc: openai.BadRequestError, sent: dict[str, object], extras: dict[str, object]) -> bool:
        """Adapt to a 400; return True when the request should be sent again."""
        param = str(getattr(exc, "param", "") or "")
        body = exc.body if isinstance(exc.body, dict) else {}
        inner = body.get("error", body)
        message = str(inner.get("message", "")) if isinstance(inner, dict) else str(exc.message)
        text = f"{param} {message}"
        if "max_tokens" in text and "max_completion_tokens" in text and "max_tokens" in sent:
            if self.token_param == "max_completion_tokens":
                return False
            self.token_param = "max_completion_tokens"
            return True
        asked_format = "response_format" in sent or "text" in sent
        if asked_format and self.format_mode != "prompt" and any(m in text for m in _FORMAT_MARKERS):
            self.format_mode = "json_object" if self.format_mode == "json_schema" else "prompt"
            return True
        for name in DROPPABLE:
            if name in sent and name not in self.dropped and _mentions(text, name):
                self.dropped.add(name)
                return True
        for name in extras:
            if name not in self.dropped_extras and _mentions(text, name):
                self.dropped_extras.add(name)
                return True
        return False


def _mentions(text: str, name: str) -> bool:
    return f"'{name}'" in text or f"{name} " in f"{text} " or text.startswith(name)
