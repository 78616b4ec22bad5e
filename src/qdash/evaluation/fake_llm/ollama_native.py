"""Ollama's native API: ``/api/chat`` (NDJSON or JSON), ``/api/tags``, ``/api/show``, ``/api/version``.

Why its own module: the native wire differs in every detail that matters to an adapter — arguments
are JSON objects, calls arrive whole, ``stream`` defaults to true, errors are ``{"error": "<text>"}``
and capabilities come from ``/api/show``.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from qdash.evaluation.fake_llm.errors import ApiError
from qdash.evaluation.fake_llm.faults import Incomplete, OmitTerminal, StreamErrorEvent
from qdash.evaluation.fake_llm.responses_render import call_arguments, chunks, estimate_tokens
from qdash.evaluation.fake_llm.script import Message, Reasoning, Turn
from qdash.evaluation.fake_llm.state import FakeState, ModelSpec

MODIFIED_AT = "2026-11-01T00:00:00Z"


def full_name(name: str) -> str:
    """``gemma:2b`` → ``registry.ollama.ai/library/gemma:2b`` (as in Ollama's error texts)."""
    tagged = name if ":" in name else f"{name}:latest"
    return f"registry.ollama.ai/library/{tagged}"


def no_tools(name: str) -> ApiError:
    return ApiError(400, f"{full_name(name)} does not support tools", rule="ollama_no_tools")


def lookup(state: FakeState, body: dict[str, Any]) -> ModelSpec:
    """The requested model, or Ollama's ``model is required`` / ``not found`` errors."""
    model = body.get("model")
    if not model:
        raise ApiError(400, "model is required", rule="ollama_model_required")
    spec = state.find_model(str(model))
    if spec is None:
        raise ApiError(404, f"model '{model}' not found", rule="ollama_model_not_found")
    return spec


def validate(state: FakeState, body: dict[str, Any], notes: list[str]) -> tuple[ModelSpec, None]:
    """Ollama checks capabilities, not conversations."""
    spec = lookup(state, body)
    if body.get("tools") and "tools" not in spec.capabilities:
        raise no_tools(str(body["model"]))
    if body.get("think") and "thinking" not in spec.capabilities:
        raise ApiError(400, f'"{body["model"]}" does not support thinking', rule="ollama_no_thinking")
    return spec, None


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _thinking(turn: Turn, spec: ModelSpec, body: dict[str, Any]) -> str:
    if "thinking" not in spec.capabilities or body.get("think") is False:
        return ""
    return "\n".join(s for p in turn.output if isinstance(p, Reasoning) for s in p.summary)


def _tool_calls(state: FakeState, turn: Turn) -> list[dict[str, Any]]:
    calls = []
    for n, (call, raw) in enumerate(zip(turn.calls, call_arguments(turn), strict=True)):
        try:
            arguments: Any = json.loads(raw)
        except ValueError:
            arguments = raw
        calls.append(
            {
                "id": state.ollama_call_id(),
                "function": {"index": n, "name": call.name, "arguments": arguments},
            }
        )
    return calls


def _final_fields(turn: Turn, body: dict[str, Any], text: str) -> dict[str, Any]:
    prompt = estimate_tokens(json.dumps(body.get("messages", [])))
    output = estimate_tokens(text)
    if turn.usage is not None:
        prompt = turn.usage.input_tokens if turn.usage.input_tokens is not None else prompt
        output = turn.usage.output_tokens if turn.usage.output_tokens is not None else output
    return {
        "done": True,
        "done_reason": "length" if isinstance(turn.fault, Incomplete) else "stop",
        "total_duration": 1_000_000,
        "load_duration": 100_000,
        "prompt_eval_count": prompt,
        "prompt_eval_duration": 200_000,
        "eval_count": output,
        "eval_duration": 700_000,
    }


def render_json(
    state: FakeState, turn: Turn, spec: ModelSpec, body: dict[str, Any], _: Any
) -> dict[str, Any]:
    text = "".join(p.text for p in turn.output if isinstance(p, Message))
    message: dict[str, Any] = {"role": "assistant", "content": text}
    thinking = _thinking(turn, spec, body)
    if thinking:
        message["thinking"] = thinking
    calls = _tool_calls(state, turn)
    if calls:
        message["tool_calls"] = calls
    return {
        "model": body["model"],
        "created_at": _now(),
        "message": message,
        **_final_fields(turn, body, text),
    }


def render_frames(state: FakeState, turn: Turn, spec: ModelSpec, body: dict[str, Any], _: Any) -> list[str]:
    """NDJSON lines; the last has ``done: true`` and the counters."""
    text = "".join(p.text for p in turn.output if isinstance(p, Message))
    head = {"model": body["model"]}
    lines: list[dict[str, Any]] = []
    for piece in chunks(_thinking(turn, spec, body), turn.chunk_chars):
        lines.append(
            {**head, "created_at": _now(), "message": {"role": "assistant", "content": "", "thinking": piece}}
        )
    for piece in chunks(text, turn.chunk_chars):
        lines.append({**head, "created_at": _now(), "message": {"role": "assistant", "content": piece}})
    calls = _tool_calls(state, turn)
    if calls:
        lines.append(
            {
                **head,
                "created_at": _now(),
                "message": {"role": "assistant", "content": "", "tool_calls": calls},
            }
        )
    lines = [{**line, "done": False} for line in lines]
    fault = turn.fault
    if isinstance(fault, StreamErrorEvent):
        lines = [*lines[: fault.after_events], {"error": fault.message}]
    elif not isinstance(fault, OmitTerminal):
        final = {**head, "created_at": _now(), "message": {"role": "assistant", "content": ""}}
        lines.append({**final, **_final_fields(turn, body, text)})
    return [json.dumps(line, ensure_ascii=False) + "\n" for line in lines]


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def _details(spec: ModelSpec) -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": spec.family,
        "families": [spec.family],
        "parameter_size": spec.parameter_size,
        "quantization_level": "Q4_K_M",
    }


def tags(state: FakeState) -> dict[str, Any]:
    models = [
        {
            "name": spec.name,
            "model": spec.name,
            "modified_at": MODIFIED_AT,
            "size": 1_000_000_000,
            "digest": _digest(spec.name),
            "details": _details(spec),
        }
        for spec in state.models.values()
    ]
    return {"models": models}


def version_at_least(version: str, minimum: str) -> bool:
    """``0.13.3`` ≥ ``0.6.4`` (numeric, dot-separated; a suffix such as ``-rc1`` is ignored)."""

    def parts(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in v.split("-", maxsplit=1)[0].split("."))

    return parts(version) >= parts(minimum)


def show(spec: ModelSpec, version: str) -> dict[str, Any]:
    """``/api/show``; ``capabilities`` only from Ollama 0.6.4 on, as capability detection expects."""
    shown = {
        "modelfile": f"FROM {spec.name}\n",
        "parameters": "temperature 1",
        "template": "{{ .Prompt }}",
        "details": _details(spec),
        "model_info": {
            "general.architecture": spec.family,
            f"{spec.family}.context_length": spec.context_length,
        },
        "capabilities": list(spec.capabilities),
        "modified_at": MODIFIED_AT,
    }
    if not version_at_least(version, "0.6.4"):
        del shown["capabilities"]
    return shown
