"""Canonical conversation items, shaped like Responses API input/output items.

Why Responses items: it is the richest wire (reasoning with encrypted content, call ids separate from
item ids), so every other wire is a lossy projection of it, done at the edge by its adapter. The loop
and the history repair only ever see these types.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class UserMessage:
    """A user (or system-injected) message; ``parts`` are ``input_text``/``input_image`` dicts."""

    parts: tuple[dict[str, Any], ...]

    @classmethod
    def text(cls, text: str, images: list[str] | None = None) -> UserMessage:
        """A message with one text part and optional image data URLs."""
        parts: list[dict[str, Any]] = [{"type": "input_text", "text": text}]
        parts += [{"type": "input_image", "image_url": url} for url in images or []]
        return cls(tuple(parts))

    @property
    def text_content(self) -> str:
        return "\n".join(str(p.get("text", "")) for p in self.parts if p.get("type") == "input_text")


@dataclass(frozen=True)
class AssistantMessage:
    """Assistant text (``output_text``) and/or a refusal; ``id`` is the server's ``msg_…`` id.

    ``phase`` (Responses: ``commentary`` or ``final_answer``) is kept exactly as the server sent
    it and sent back with the message: recent OpenAI models expect it on every assistant message
    of the transcript and answer worse without it.
    """

    text: str
    refusal: str | None = None
    id: str | None = None
    phase: str | None = None


@dataclass(frozen=True)
class Reasoning:
    """A reasoning item; only ever replayed to the model (``origin``) that issued it."""

    id: str | None
    summary: tuple[str, ...] = ()
    encrypted_content: str | None = None
    origin: str | None = None


@dataclass(frozen=True)
class FunctionCall:
    """A tool call; ``arguments`` is the raw JSON string as the model wrote it.

    ``signature`` is an opaque token some servers want back with the call (Gemini's
    ``thought_signature``); adapters that do not need it ignore it.
    """

    call_id: str
    name: str
    arguments: str
    id: str | None = None
    signature: str | None = None

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments object; raises ``ValueError`` (incl. JSONDecodeError) when not an object."""
        value = json.loads(self.arguments) if self.arguments.strip() else {}
        if not isinstance(value, dict):
            raise ValueError(f"expected a JSON object, got {type(value).__name__}")
        return value


@dataclass(frozen=True)
class FunctionCallOutput:
    """The result of a call, as the JSON text the model sees."""

    call_id: str
    output: str


Item = UserMessage | AssistantMessage | Reasoning | FunctionCall | FunctionCallOutput


@dataclass
class TokenUsage:
    """Normalised usage of one response (each wire reports it differently); ``None`` = not reported."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None

    @classmethod
    def from_wire(cls, raw: dict[str, Any], sent: str, received: str) -> TokenUsage:
        """A wire's usage object, whose counts are named ``<sent>_tokens`` / ``<received>_tokens``
        (Responses: ``input`` / ``output``, Chat: ``prompt`` / ``completion``), each with details."""
        sent_details = raw.get(f"{sent}_tokens_details") or {}
        received_details = raw.get(f"{received}_tokens_details") or {}
        return cls(
            input_tokens=raw.get(f"{sent}_tokens"),
            output_tokens=raw.get(f"{received}_tokens"),
            cached_input_tokens=sent_details.get("cached_tokens"),
            reasoning_tokens=received_details.get("reasoning_tokens"),
        )

    @property
    def total(self) -> int:
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    def add(self, other: TokenUsage) -> None:
        """Add ``other`` in place (a turn's running total; unreported counts add nothing)."""
        self.input_tokens = (self.input_tokens or 0) + (other.input_tokens or 0)
        self.output_tokens = (self.output_tokens or 0) + (other.output_tokens or 0)
        self.cached_input_tokens = (self.cached_input_tokens or 0) + (other.cached_input_tokens or 0)
        self.reasoning_tokens = (self.reasoning_tokens or 0) + (other.reasoning_tokens or 0)


@dataclass
class ModelResponse:
    """One model round as the loop sees it, whatever the wire."""

    items: list[Item]
    usage: TokenUsage | None = None
    status: str = "completed"
    incomplete_reason: str | None = None
    response_id: str | None = None
    model: str | None = None

    @property
    def calls(self) -> list[FunctionCall]:
        return [item for item in self.items if isinstance(item, FunctionCall)]

    @property
    def text(self) -> str:
        """Joined ``output_text`` of the message items (refusals excluded), never ``None``."""
        return "".join(item.text for item in self.items if isinstance(item, AssistantMessage))

    @property
    def refusal(self) -> str:
        """Joined refusal text of the message items ("" when the model did not refuse)."""
        return "".join(i.refusal or "" for i in self.items if isinstance(i, AssistantMessage))

    @property
    def reasoning_summaries(self) -> list[str]:
        """Each reasoning item's summary parts joined, reasoning with no readable summary left out."""
        joined = (
            "\n\n".join(p for p in i.summary if p.strip()) for i in self.items if isinstance(i, Reasoning)
        )
        return [text for text in joined if text]


# --- Responses wire <-> items --------------------------------------------------------------


def to_responses_input(items: list[Item]) -> list[dict[str, Any]]:
    """Render items as Responses ``input`` (assistant parts are always ``output_text``/``refusal``)."""
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, UserMessage):
            out.append({"type": "message", "role": "user", "content": [dict(p) for p in item.parts]})
        elif isinstance(item, AssistantMessage):
            content: list[dict[str, Any]] = []
            if item.text or item.refusal is None:
                content.append({"type": "output_text", "text": item.text, "annotations": []})
            if item.refusal is not None:
                content.append({"type": "refusal", "refusal": item.refusal})
            msg: dict[str, Any] = {"type": "message", "role": "assistant", "content": content}
            if item.id:
                msg["id"] = item.id
                msg["status"] = "completed"
            if item.phase:
                msg["phase"] = item.phase
            out.append(msg)
        elif isinstance(item, Reasoning):
            rs: dict[str, Any] = {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": s} for s in item.summary],
            }
            if item.id:
                rs["id"] = item.id
            if item.encrypted_content is not None:
                rs["encrypted_content"] = item.encrypted_content
            out.append(rs)
        elif isinstance(item, FunctionCall):
            fc: dict[str, Any] = {
                "type": "function_call",
                "call_id": item.call_id,
                "name": item.name,
                "arguments": item.arguments,
            }
            if item.id:
                fc["id"] = item.id
                fc["status"] = "completed"
            out.append(fc)
        else:
            out.append({"type": "function_call_output", "call_id": item.call_id, "output": item.output})
    return out


def from_responses_output(output: list[dict[str, Any]], origin: str | None = None) -> list[Item]:
    """Parse a Responses ``output`` list (or input list) into items, keeping order and ids."""
    items: list[Item] = []
    for raw in output:
        kind = raw.get("type", "message" if "role" in raw else None)
        if kind == "message":
            items.append(_message_from_raw(raw))
        elif kind == "reasoning":
            summary = tuple(
                str(s.get("text", "")) if isinstance(s, dict) else str(s) for s in raw.get("summary") or []
            )
            items.append(Reasoning(raw.get("id"), summary, raw.get("encrypted_content"), origin))
        elif kind == "function_call":
            args = raw.get("arguments", "")
            items.append(
                FunctionCall(
                    call_id=str(raw.get("call_id") or ""),
                    name=str(raw.get("name", "")),
                    arguments=args if isinstance(args, str) else json.dumps(args),
                    id=raw.get("id"),
                )
            )
        elif kind == "function_call_output":
            value = raw.get("output", "")
            items.append(
                FunctionCallOutput(
                    str(raw.get("call_id") or ""), value if isinstance(value, str) else json.dumps(value)
                )
            )
    return items


def _message_from_raw(raw: dict[str, Any]) -> Item:
    content = raw.get("content", "")
    role = raw.get("role", "assistant")
    if role == "assistant":
        phase = raw.get("phase") if isinstance(raw.get("phase"), str) else None
        if isinstance(content, str):
            return AssistantMessage(content, None, raw.get("id"), phase)
        texts = [str(p.get("text", "")) for p in content if p.get("type") in ("output_text", "input_text")]
        refusals = [str(p.get("refusal", "")) for p in content if p.get("type") == "refusal"]
        refusal = "".join(refusals) if refusals else None
        return AssistantMessage("".join(texts), refusal, raw.get("id"), phase)
    if isinstance(content, str):
        return UserMessage.text(content)
    return UserMessage(tuple(dict(p) for p in content))
