"""Chat Completions tool calls and reasoning on the wire: streamed call fragments accumulated by
``index``, the call objects sent back, and the per-server extras they carry.

Why apart from ``chat.py``: these are the pieces that differ between servers (Gemini's
``thought_signature`` on calls, where reasoning is streamed), kept small and in one place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from qdash.engine.items import FunctionCall

REASONING_KEYS = ("reasoning", "reasoning_content", "thinking")
"""Where servers put reasoning on Chat (Ollama, new vLLM: ``reasoning``; DeepSeek: ``reasoning_content``)."""


@dataclass
class CallAccumulator:
    """One streamed call while its fragments arrive."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    signature: str | None = None


def tool_call_message(item: FunctionCall, signatures: bool) -> dict[str, Any]:
    """The call inside an assistant message; Gemini's signature only when the model needs it."""
    call: dict[str, Any] = {
        "id": item.call_id,
        "type": "function",
        "function": {"name": item.name, "arguments": item.arguments},
    }
    if signatures and item.signature:
        call["extra_content"] = {"google": {"thought_signature": item.signature}}
    return call


def signature_of(raw: dict[str, Any]) -> str | None:
    """Gemini's ``extra_content.google.thought_signature`` of a tool call (or fragment), if any."""
    extra = raw.get("extra_content")
    google = extra.get("google") if isinstance(extra, dict) else None
    value = google.get("thought_signature") if isinstance(google, dict) else None
    return value if isinstance(value, str) else None


def accumulate(calls: dict[int, CallAccumulator], fragment: dict[str, Any]) -> None:
    """Add one streamed fragment to the call it continues (by ``index``, or by id without one)."""
    raw_index = fragment.get("index")
    if raw_index is None:
        # Old servers send whole calls without ``index``: a new id starts a new call.
        last = max(calls) if calls else -1
        same = last >= 0 and (not fragment.get("id") or calls[last].id == fragment.get("id"))
        raw_index = last if same else last + 1
    acc = calls.setdefault(int(raw_index), CallAccumulator())
    if fragment.get("id"):
        acc.id = str(fragment["id"])
    acc.signature = signature_of(fragment) or acc.signature
    function = fragment.get("function") or {}
    if function.get("name"):
        acc.name = str(function["name"])
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        acc.arguments.append(json.dumps(arguments))
    elif arguments:
        acc.arguments.append(str(arguments))
