"""Scripted turns: what the fake model answers next, independent of the wire it is rendered into.

Why provider-neutral: one script drives the Responses, Chat Completions and Ollama adapters alike,
so adapter tests compare like with like. A turn is a tuple of output parts (reasoning, calls,
text, refusal) plus optional expectations, usage, stream pacing and one fault. A callable turn
builds the reply from the recorded request (dynamic behaviour, endless benchmark answers).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from qdash.evaluation.fake_llm.faults import Fault, Incomplete, fault_from_dict


@dataclass(frozen=True)
class Message:
    """Visible assistant text."""

    text: str


@dataclass(frozen=True)
class Refusal:
    """A refusal part (Responses ``refusal`` content, Chat ``message.refusal``)."""

    text: str


@dataclass(frozen=True)
class FunctionCall:
    """One call; a ``dict`` is serialised compactly, a ``str`` is sent verbatim (may be malformed)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Reasoning:
    """A reasoning item (reasoning models only); ``summary`` texts become ``summary_text`` parts."""

    summary: tuple[str, ...] = ()
    tokens: int | None = None


OutputPart: TypeAlias = Message | Refusal | FunctionCall | Reasoning

Endpoint = Literal["responses", "chat", "ollama_chat", "any"]


@dataclass(frozen=True)
class Expect:
    """What the request consuming this turn must look like; a failure is a script mismatch."""

    endpoint: Endpoint = "any"
    model: str | None = None
    has_tool_outputs: tuple[str, ...] = ()
    last_user_contains: str | None = None
    stream: bool | None = None


@dataclass(frozen=True)
class Usage:
    """Reported tokens; ``None`` fields default to characters / 4."""

    input_tokens: int | None = None
    cached_tokens: int = 0
    output_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass(frozen=True)
class Turn:
    """One model call's answer.

    ``chunk_chars`` sizes stream deltas; ``event_delay_s`` paces stream events; ``delay_s`` waits
    before the status line (a slow model). ``lenient`` turns off the "could a real model say this"
    checks (``checks.py``) for turns that deliberately break them.
    """

    output: tuple[OutputPart, ...] = ()
    expect: Expect | None = None
    usage: Usage | None = None
    chunk_chars: int = 8
    event_delay_s: float = 0.0
    delay_s: float = 0.0
    fault: Fault | None = None
    lenient: bool = False

    @property
    def calls(self) -> list[FunctionCall]:
        return [p for p in self.output if isinstance(p, FunctionCall)]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        """The JSON form of a turn (used by ``POST /_fake/turns``)."""
        parts: list[OutputPart] = []
        for item in data.get("output", []):
            kind = item["type"]
            if kind == "message":
                parts.append(Message(item["text"]))
            elif kind == "refusal":
                parts.append(Refusal(item["text"]))
            elif kind == "function_call":
                parts.append(FunctionCall(item["name"], item.get("arguments", {})))
            elif kind == "reasoning":
                parts.append(Reasoning(tuple(item.get("summary", [])), item.get("tokens")))
            else:
                raise ValueError(f"unknown output type {kind!r}")
        fault_data = data.get("fault")
        if fault_data and fault_data.get("kind") == "refusal":  # a refusal may be declared as a fault
            parts.append(Refusal(fault_data["text"]))
            fault_data = None
        fault = fault_from_dict(fault_data) if fault_data else None
        if data.get("status") == "incomplete" and fault is None:
            fault = Incomplete(data.get("incomplete_reason", "max_output_tokens"))
        expect = data.get("expect")
        stream = data.get("stream") or {}
        return cls(
            output=tuple(parts),
            expect=Expect(
                endpoint=expect.get("endpoint", "any"),
                model=expect.get("model"),
                has_tool_outputs=tuple(expect.get("has_tool_outputs", ())),
                last_user_contains=expect.get("last_user_contains"),
                stream=expect.get("stream"),
            )
            if expect
            else None,
            usage=Usage(**data["usage"]) if data.get("usage") else None,
            chunk_chars=int(stream.get("chunk_chars", 8)),
            event_delay_s=float(stream.get("delay_ms", 0)) / 1000,
            fault=fault,
            lenient=bool(data.get("lenient", False)),
        )


# --- builders: ``fake.script(turn(call("f", {"a": 1})), "final text")`` ------------------------


def message(text: str) -> Message:
    return Message(text)


def refusal(text: str) -> Refusal:
    return Refusal(text)


def call(name: str, arguments: dict[str, Any] | str | None = None) -> FunctionCall:
    return FunctionCall(name, {} if arguments is None else arguments)


def reasoning(*summary: str, tokens: int | None = None) -> Reasoning:
    return Reasoning(tuple(summary), tokens)


def turn(*parts: OutputPart | str, **options: Any) -> Turn:
    """A turn from parts (a bare ``str`` is a message) and :class:`Turn` keyword options."""
    return Turn(output=tuple(Message(p) if isinstance(p, str) else p for p in parts), **options)


def as_turn(value: Turn | str | OutputPart | Sequence[OutputPart]) -> Turn:
    """Normalise the shorthands a script may use into a :class:`Turn`."""
    if isinstance(value, Turn):
        return value
    if isinstance(value, str):
        return Turn(output=(Message(value),))
    if isinstance(value, Message | Refusal | FunctionCall | Reasoning):
        return Turn(output=(value,))
    parts = tuple(value)
    for part in parts:
        if not isinstance(part, Message | Refusal | FunctionCall | Reasoning):
            raise TypeError(
                f"a list in a script is one turn made of output parts, got {type(part).__name__}; "
                "pass several turns as separate arguments: fake.script(turn_1, turn_2)"
            )
    return Turn(output=parts)
