"""Render a scripted turn as a Responses API answer: the JSON object or the SSE events.

Why events are built as a list first: the fault writer cuts, stalls or corrupts the stream "after
N events", and the same list assembled by the SDK must equal the JSON rendering of the same turn.
Ids are deterministic; which reasoning item preceded which output item is remembered for R12.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from qdash.evaluation.fake_llm.faults import (
    Incomplete,
    MalformedArguments,
    OmitTerminal,
    ResponseFailed,
    StreamErrorEvent,
    WrongOrder,
)
from qdash.evaluation.fake_llm.script import FunctionCall, Message, Reasoning, Turn
from qdash.evaluation.fake_llm.state import FakeState, ModelSpec


def chunks(text: str, size: int) -> list[str]:
    """Delta pieces of ``size`` characters (none for an empty text)."""
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def call_arguments(turn: Turn) -> list[str]:
    """Each call's wire arguments, with a ``MalformedArguments`` fault applied."""
    args = [c.arguments_json() for c in turn.calls]
    fault = turn.fault
    if isinstance(fault, MalformedArguments) and 0 <= fault.call < len(args):
        args[fault.call] = fault.raw
    return args


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


@dataclass
class Rendered:
    """A rendered answer: the final response object and its output items."""

    response: dict[str, Any]
    items: list[dict[str, Any]]


def _encrypted_token(rs_id: str, summary: tuple[str, ...]) -> str:
    digest = hashlib.sha256("\n".join(summary).encode()).hexdigest()[:16]
    return "gAAAAB" + base64.urlsafe_b64encode(f"{rs_id}:{digest}".encode()).decode()


def build_items(state: FakeState, turn: Turn, spec: ModelSpec, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Output items in model order; reasoning only for reasoning models."""
    include = body.get("include") or []
    want_encrypted = "reasoning.encrypted_content" in include
    arguments = iter(call_arguments(turn))
    items: list[dict[str, Any]] = []
    pending_rs: str | None = None
    for part in turn.output:
        item: dict[str, Any]
        if isinstance(part, Reasoning):
            if not spec.reasoning:
                continue
            rs_id = state.new_id("rs")
            item = {
                "type": "reasoning",
                "id": rs_id,
                "summary": [{"type": "summary_text", "text": s} for s in part.summary],
            }
            ollama = state.flavour == "ollama"  # Ollama's /v1/responses: the raw thinking text
            token = "\n".join(part.summary) if ollama else _encrypted_token(rs_id, part.summary)
            with state.lock:
                state.encrypted[token] = rs_id
            if want_encrypted or ollama:
                item["encrypted_content"] = token
            items.append(item)
            pending_rs = rs_id
            continue
        if isinstance(part, FunctionCall):
            item = {
                "type": "function_call",
                "id": state.new_id("fc"),
                "call_id": state.new_id("call"),
                "name": part.name,
                "arguments": next(arguments),
                "status": None if spec.bare_function_calls else "completed",
            }
        else:
            content = (
                {"type": "output_text", "text": part.text, "annotations": [], "logprobs": []}
                if isinstance(part, Message)
                else {"type": "refusal", "refusal": part.text}
            )
            item = {
                "type": "message",
                "id": state.new_id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [content],
            }
            if spec.phase:
                item["phase"] = "commentary" if turn.calls else "final_answer"
        if pending_rs is not None:
            with state.lock:
                state.preceded_by[item["id"]] = pending_rs
            pending_rs = None
        items.append(item)
    return items


def _echo_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for tool in body.get("tools") or []:
        if tool.get("type") == "function":
            tools.append(
                {
                    "type": "function",
                    "name": tool.get("name"),
                    "description": tool.get("description"),
                    "parameters": tool.get("parameters"),
                    "strict": tool.get("strict", True),
                }
            )
        else:
            tools.append(tool)
    return tools


def _usage(turn: Turn, body: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    given = turn.usage
    prompt = json.dumps(body.get("input", "")) + str(body.get("instructions") or "")
    text = "".join(
        json.dumps(i.get("content")) if i["type"] == "message" else str(i.get("arguments", ""))
        for i in items
        if i["type"] != "reasoning"
    )
    shown = [i for i in items if i["type"] == "reasoning"]  # none for non-reasoning models
    scripted = sum(p.tokens or 0 for p in turn.output if isinstance(p, Reasoning)) if shown else 0
    reasoning = scripted or estimate_tokens("".join(s["text"] for i in shown for s in i["summary"]))
    if given and given.reasoning_tokens is not None:
        reasoning = given.reasoning_tokens
    input_tokens = given.input_tokens if given and given.input_tokens is not None else estimate_tokens(prompt)
    output = (
        given.output_tokens
        if given and given.output_tokens is not None
        else estimate_tokens(text) + reasoning
    )
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {
            "cached_tokens": given.cached_tokens if given else 0,
            "cache_write_tokens": 0,
        },
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output,
    }


def render(state: FakeState, turn: Turn, spec: ModelSpec, body: dict[str, Any]) -> Rendered:
    """The final response object (``status`` completed, incomplete or failed)."""
    items = build_items(state, turn, spec, body)
    fault = turn.fault
    status, incomplete, error = "completed", None, None
    if isinstance(fault, Incomplete):
        status, incomplete = "incomplete", {"reason": fault.reason}
    elif isinstance(fault, ResponseFailed):
        status, error = "failed", {"code": fault.code, "message": fault.message}
    response = {
        "id": state.new_id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "background": False,
        "error": error,
        "incomplete_details": incomplete,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": body.get("max_tool_calls"),
        "model": body.get("model"),
        "output": items,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "store": body.get("store", True) if state.flavour == "openai" else False,
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": _echo_tools(body),
        "top_p": body.get("top_p", 1.0),
        "truncation": body.get("truncation", "disabled"),
        "usage": None if status == "failed" else _usage(turn, body, items),
        "user": None,
        "metadata": body.get("metadata") or {},
    }
    return Rendered(response, items)


def _item_events(index: int, item: dict[str, Any], size: int) -> list[dict[str, Any]]:
    """``output_item.added`` … ``output_item.done`` for one output item."""
    kind, item_id = item["type"], item["id"]
    where = {"item_id": item_id, "output_index": index}
    events: list[dict[str, Any]] = []
    if kind == "reasoning":
        events.append(
            {"type": "response.output_item.added", "output_index": index, "item": {**item, "summary": []}}
        )
        for n, part in enumerate(item["summary"]):
            at = {**where, "summary_index": n}
            events.append(
                {"type": "response.reasoning_summary_part.added", **at, "part": {**part, "text": ""}}
            )
            events += [
                {"type": "response.reasoning_summary_text.delta", **at, "delta": d}
                for d in chunks(part["text"], size)
            ]
            events.append({"type": "response.reasoning_summary_text.done", **at, "text": part["text"]})
            events.append({"type": "response.reasoning_summary_part.done", **at, "part": part})
    elif kind == "function_call":
        added = {**item, "arguments": "", "status": "in_progress"}
        events.append({"type": "response.output_item.added", "output_index": index, "item": added})
        events += [
            {"type": "response.function_call_arguments.delta", **where, "delta": d}
            for d in chunks(item["arguments"], size)
        ]
        events.append(
            {
                "type": "response.function_call_arguments.done",
                **where,
                "name": item["name"],
                "arguments": item["arguments"],
            }
        )
    else:
        added = {**item, "status": "in_progress", "content": []}
        events.append({"type": "response.output_item.added", "output_index": index, "item": added})
        for n, part in enumerate(item["content"]):
            at = {**where, "content_index": n}
            if part["type"] == "output_text":
                empty = {**part, "text": ""}
                events.append({"type": "response.content_part.added", **at, "part": empty})
                events += [
                    {"type": "response.output_text.delta", **at, "delta": d, "logprobs": []}
                    for d in chunks(part["text"], size)
                ]
                events.append(
                    {"type": "response.output_text.done", **at, "text": part["text"], "logprobs": []}
                )
            else:
                events.append({"type": "response.content_part.added", **at, "part": {**part, "refusal": ""}})
                events += [
                    {"type": "response.refusal.delta", **at, "delta": d}
                    for d in chunks(part["refusal"], size)
                ]
                events.append({"type": "response.refusal.done", **at, "refusal": part["refusal"]})
            events.append({"type": "response.content_part.done", **at, "part": part})
    events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return events


def stream_events(rendered: Rendered, turn: Turn, obfuscate: bool) -> list[dict[str, Any]]:
    """The full event list with ``sequence_number``s, faults applied (except transport ones)."""
    final = rendered.response
    start = {
        **final,
        "status": "in_progress",
        "output": [],
        "usage": None,
        "error": None,
        "incomplete_details": None,
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
    ]
    for index, item in enumerate(rendered.items):
        events += _item_events(index, item, turn.chunk_chars)
    terminal = {
        "completed": "response.completed",
        "incomplete": "response.incomplete",
        "failed": "response.failed",
    }
    fault = turn.fault
    if not isinstance(fault, OmitTerminal):
        events.append({"type": terminal[final["status"]], "response": final})
    if isinstance(fault, StreamErrorEvent):
        events = events[: fault.after_events]
        events.append({"type": "error", "code": fault.code, "message": fault.message, "param": None})
    if isinstance(fault, WrongOrder):
        deltas = [i for i, e in enumerate(events) if e["type"].endswith(".delta")]
        events.insert(0, events.pop(deltas[0] if deltas else 1))
    for n, event in enumerate(events):
        event["sequence_number"] = n
        if obfuscate and event["type"].endswith(".delta"):
            event["obfuscation"] = "x" * (16 - len(str(event["delta"])) % 16)
    return events


def sse_frame(event: dict[str, Any]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"
