"""The wires the fake speaks, each a :class:`Wire` of validator + renderers + error format.

Why here and not in the renderers: storing a Responses answer for ``previous_response_id`` and
choosing OpenAI or Ollama behaviour are decisions about the endpoint, not about rendering.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from starlette.responses import JSONResponse, Response

from qdash.evaluation.fake_llm import chat_render, ollama_native, validate_chat, validate_responses
from qdash.evaluation.fake_llm import responses_render as rr
from qdash.evaluation.fake_llm.errors import ApiError
from qdash.evaluation.fake_llm.faults import OllamaNoTools, ResponseFailed, WrongOrder
from qdash.evaluation.fake_llm.flow import Wire, openai_error
from qdash.evaluation.fake_llm.script import Reasoning, Turn
from qdash.evaluation.fake_llm.state import FakeState, ModelSpec, StoredResponse


def _store(
    state: FakeState, body: dict[str, Any], context: list[dict[str, Any]], rendered: rr.Rendered
) -> None:
    if state.flavour == "openai" and body.get("store", True) is not False:  # Ollama never stores
        with state.lock:
            state.stored[rendered.response["id"]] = StoredResponse(context, rendered.items, rendered.response)


def _responses_json(
    state: FakeState, turn: Turn, spec: ModelSpec, body: dict[str, Any], context: list[dict[str, Any]]
) -> dict[str, Any]:
    rendered = rr.render(state, turn, spec, body)
    _store(state, body, context, rendered)
    return rendered.response


def _responses_frames(
    state: FakeState, turn: Turn, spec: ModelSpec, body: dict[str, Any], context: list[dict[str, Any]]
) -> list[str]:
    rendered = rr.render(state, turn, spec, body)
    _store(state, body, context, rendered)
    wants = (body.get("stream_options") or {}).get("include_obfuscation", True) is not False
    frames = [rr.sse_frame(e) for e in rr.stream_events(rendered, turn, state.obfuscation and wants)]
    if state.responses_done_sentinel:
        frames.append("data: [DONE]\n\n")
    return frames


def _thinking_only_if_able(turn: Turn, spec: ModelSpec) -> Turn:
    """Reasoning only from models that show it (Ollama's thinking models, ``chat_reasoning_field``)."""
    if "thinking" in spec.capabilities or spec.chat_reasoning_field:
        return turn
    return replace(turn, output=tuple(p for p in turn.output if not isinstance(p, Reasoning)))


def _chat_json(state: FakeState, turn: Turn, spec: ModelSpec, body: dict[str, Any], _: Any) -> dict[str, Any]:
    return chat_render.render_json(
        state, _thinking_only_if_able(turn, spec), spec, body, ollama=state.flavour == "ollama"
    )


def _chat_frames(state: FakeState, turn: Turn, spec: ModelSpec, body: dict[str, Any], _: Any) -> list[str]:
    visible = _thinking_only_if_able(turn, spec)
    chunks = chat_render.stream_chunks(state, visible, spec, body, ollama=state.flavour == "ollama")
    return chat_render.sse_frames(chunks, turn)


def ollama_v1_error(error: ApiError) -> Response:
    """Ollama's ``/v1`` envelope: type by status, no param/code."""
    if error.rule == "mismatch":
        return openai_error(error)
    kind = {400: "invalid_request_error", 404: "not_found_error"}.get(error.status, "api_error")
    body = {"error": {"message": error.message, "type": kind, "param": None, "code": None}}
    return JSONResponse(body, status_code=error.status, headers=error.headers)


def native_error(error: ApiError) -> Response:
    """Ollama's native envelope ``{"error": "<text>"}``."""
    return JSONResponse({"error": error.message}, status_code=error.status, headers=error.headers)


RESPONSES = Wire(
    "responses",
    validate_responses.validate,
    _responses_json,
    _responses_frames,
    openai_error,
    unsupported=(OllamaNoTools,),
)


def chat_wire(state: FakeState) -> Wire:
    if state.flavour == "ollama":
        return Wire(
            "chat",
            validate_chat.validate_ollama,
            _chat_json,
            _chat_frames,
            ollama_v1_error,
            unsupported=(ResponseFailed, WrongOrder),
        )
    return Wire(
        "chat",
        validate_chat.validate,
        _chat_json,
        _chat_frames,
        openai_error,
        unsupported=(ResponseFailed, WrongOrder, OllamaNoTools),
    )


OLLAMA_CHAT = Wire(
    "ollama_chat",
    ollama_native.validate,
    ollama_native.render_json,
    ollama_native.render_frames,
    native_error,
    media_type="application/x-ndjson",
    stream_default=True,
    bad_frame="{not json}\n",
    unsupported=(ResponseFailed, WrongOrder),
)
