"""Render a scripted turn as a Chat Completions answer: JSON or SSE chunks.

Why two styles here: OpenAI streams tool-call arguments in fragments that clients must accumulate
by ``index``; Ollama's ``/v1`` sends each call whole in one chunk, uses ``call_`` + 8 characters
as ids and puts thinking into a non-standard ``reasoning`` field. Reasoning is dropped for OpenAI.
"""

from __future__ import annotations

import json
import time
from typing import Any

from qdash.evaluation.fake_llm.faults import Incomplete, OmitTerminal, StreamErrorEvent
from qdash.evaluation.fake_llm.responses_render import call_arguments, chunks, estimate_tokens
from qdash.evaluation.fake_llm.script import Message, Reasoning, Refusal, Turn
from qdash.evaluation.fake_llm.state import FakeState, ModelSpec


def _parts(turn: Turn) -> tuple[str, str, str]:
    text = "".join(p.text for p in turn.output if isinstance(p, Message))
    refusal = "".join(p.text for p in turn.output if isinstance(p, Refusal))
    thinking = "\n".join(s for p in turn.output if isinstance(p, Reasoning) for s in p.summary)
    return text, refusal, thinking


def _finish_reason(turn: Turn) -> str:
    if isinstance(turn.fault, Incomplete):
        return "content_filter" if turn.fault.reason == "content_filter" else "length"
    return "tool_calls" if turn.calls else "stop"


def _tool_calls(state: FakeState, turn: Turn, ollama: bool, signed: bool) -> list[dict[str, Any]]:
    """The calls; ``signed``: Gemini's signature on the first call only (parallel calls share it)."""
    calls = []
    for n, (c, args) in enumerate(zip(turn.calls, call_arguments(turn), strict=True)):
        call_id = state.ollama_call_id() if ollama else state.new_id("call")
        entry: dict[str, Any] = {
            "id": call_id,
            "type": "function",
            "function": {"name": c.name, "arguments": args},
        }
        if ollama:
            entry["index"] = n
        if signed and n == 0:
            entry["extra_content"] = {"google": {"thought_signature": f"sig_{call_id}"}}
        calls.append(entry)
    return calls


def _usage(turn: Turn, body: dict[str, Any], text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    given = turn.usage
    prompt = estimate_tokens(json.dumps(body.get("messages", [])))
    if given and given.input_tokens is not None:
        prompt = given.input_tokens
    reasoning = given.reasoning_tokens if given and given.reasoning_tokens is not None else 0
    completion = estimate_tokens(text + "".join(c["function"]["arguments"] for c in calls)) + reasoning
    if given and given.output_tokens is not None:
        completion = given.output_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": given.cached_tokens if given else 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0},
    }


def _envelope(state: FakeState, body: dict[str, Any], ollama: bool, obj: str) -> dict[str, Any]:
    if ollama:
        with state.lock:
            state.counters["ollama_chat"] += 1
            cid = f"chatcmpl-{state.counters['ollama_chat']}"
    else:
        cid = state.new_id("chatcmpl")
    return {
        "id": cid,
        "object": obj,
        "created": int(time.time()),
        "model": body.get("model"),
        "system_fingerprint": "fp_ollama" if ollama else "fp_fake",
    }


def render_json(
    state: FakeState, turn: Turn, spec: ModelSpec, body: dict[str, Any], ollama: bool
) -> dict[str, Any]:
    text, refusal, thinking = _parts(turn)
    calls = _tool_calls(state, turn, ollama, spec.thought_signatures)
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if ollama:
        message["content"] = text
        if thinking:
            message["reasoning"] = thinking
    else:
        message["refusal"] = refusal or None
        message["annotations"] = []
        if spec.chat_reasoning_field and thinking:
            message[spec.chat_reasoning_field] = thinking
    if calls:
        message["tool_calls"] = calls
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": _finish_reason(turn)}
    return {
        **_envelope(state, body, ollama, "chat.completion"),
        "choices": [choice],
        "usage": _usage(turn, body, text, calls),
    }


def _openai_deltas(
    turn: Turn, text: str, refusal: str, calls: list[dict[str, Any]], thinking: tuple[str | None, str]
) -> list[dict[str, Any]]:
    """Role first (``content`` null for a calls-only answer), then fragments; calls by ``index``.

    ``thinking`` is (the key a server streams reasoning under, or None for OpenAI, the text).
    """
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "" if text else None, "refusal": None}]
    field, reasoning = thinking
    if field:
        deltas += [{field: d} for d in chunks(reasoning, turn.chunk_chars)]
    deltas += [{"content": d} for d in chunks(text, turn.chunk_chars)]
    deltas += [{"refusal": d} for d in chunks(refusal, turn.chunk_chars)]
    for n, c in enumerate(calls):
        opening = {
            "index": n,
            "id": c["id"],
            "type": "function",
            "function": {**c["function"], "arguments": ""},
            **({"extra_content": c["extra_content"]} if "extra_content" in c else {}),
        }
        deltas.append({"tool_calls": [opening]})
        deltas += [
            {"tool_calls": [{"index": n, "function": {"arguments": piece}}]}
            for piece in chunks(c["function"]["arguments"], turn.chunk_chars)
        ]
    return deltas


def _ollama_deltas(turn: Turn, text: str, thinking: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every chunk carries role and content; thinking in ``reasoning``; each call whole."""
    deltas: list[dict[str, Any]] = [
        {"role": "assistant", "content": "", "reasoning": d} for d in chunks(thinking, turn.chunk_chars)
    ]
    deltas += [{"role": "assistant", "content": d} for d in chunks(text, turn.chunk_chars)]
    deltas += [{"role": "assistant", "content": "", "tool_calls": [c]} for c in calls]
    return deltas or [{"role": "assistant", "content": ""}]


def stream_chunks(
    state: FakeState, turn: Turn, spec: ModelSpec, body: dict[str, Any], ollama: bool
) -> list[dict[str, Any]]:
    """Chunks in wire order (without ``[DONE]``), a ``StreamErrorEvent`` fault applied."""
    text, refusal, thinking = _parts(turn)
    calls = _tool_calls(state, turn, ollama, spec.thought_signatures)
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    head = _envelope(state, body, ollama, "chat.completion.chunk")
    deltas = (
        _ollama_deltas(turn, text, thinking, calls)
        if ollama
        else _openai_deltas(turn, text, refusal, calls, (spec.chat_reasoning_field, thinking))
    )
    out = []
    for delta in deltas:
        chunk = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}
        if include_usage:
            chunk["usage"] = None
        out.append(chunk)
    finish = {
        **head,
        "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": _finish_reason(turn)}],
    }
    if include_usage:
        finish["usage"] = None
    out.append(finish)
    if include_usage:
        out.append({**head, "choices": [], "usage": _usage(turn, body, text, calls)})
    fault = turn.fault
    if isinstance(fault, StreamErrorEvent):
        out = out[: fault.after_events]
        kind = "server_error" if fault.code == "server_error" else "invalid_request_error"
        out.append({"error": {"message": fault.message, "type": kind, "param": None, "code": fault.code}})
    return out


def sse_frames(chunk_list: list[dict[str, Any]], turn: Turn) -> list[str]:
    frames = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunk_list]
    if not isinstance(turn.fault, OmitTerminal | StreamErrorEvent):
        frames.append("data: [DONE]\n\n")
    return frames
