"""OpenAI Responses API adapter (``POST /v1/responses``) via ``AsyncOpenAI``.

Why it assembles items itself: the SDK's ``output_text`` is an empty string when there is no message
and the ``output_item.added`` copy of a reasoning item may lack ``encrypted_content``; we take items
from ``output_item.done`` / the terminal response, in model order, and join message text ourselves.
Stateless (``store:false`` + encrypted reasoning) by default; ``previous_response_id`` only when the
loop asks for it, never mixed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Unpack

import openai

from qdash.engine.items import ModelResponse, TokenUsage, from_responses_output, to_responses_input
from qdash.engine.providers.base import (
    DeltaSink,
    ModelCapabilities,
    ModelError,
    ModelRequest,
)
from qdash.engine.providers.errors import safe_detail
from qdash.engine.providers.sse import ResponsesEventStream
from qdash.engine.providers.wire import WireArgs, WireModel

_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5", "gpt-oss")
_RETRYABLE_FAILURES = ("server_error", "rate_limit_exceeded")
_RESPONSE_FIELDS = ("id", "model", "status", "output", "usage", "incomplete_details", "error")


def is_reasoning_model(name: str, effort: str | None) -> bool:
    """Reasoning models reject ``temperature`` and need encrypted reasoning replayed statelessly."""
    return effort is not None or name.rsplit("/", maxsplit=1)[-1].startswith(_REASONING_PREFIXES)


class ResponsesModel(WireModel):
    """One model on a Responses endpoint."""

    path = "/responses"
    stream_cls = ResponsesEventStream

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        name: str,
        *,
        reasoning_effort: str | None = None,
        local: bool = False,
        format_with_tools: bool = True,
        bare_function_calls: bool = False,
        **wire: Unpack[WireArgs],
    ) -> None:
        capabilities = ModelCapabilities(supports_previous_response_id=not local, local=local)
        super().__init__(client, name, capabilities=capabilities, **wire)
        self._effort = reasoning_effort
        self._reasoning = is_reasoning_model(name, reasoning_effort)
        self._format_with_tools = format_with_tools
        """False for servers that apply ``text.format`` to the whole output (vLLM): calls need it off."""
        self._bare_function_calls = bare_function_calls
        """vLLM wants function calls back with ``status: null`` and without item ids."""

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The request body (without ``stream``) for ``responses.create``."""
        params: dict[str, Any] = {"model": self.name, "input": self._input(request)}
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": True,
                }
                for t in request.tools
            ]
            params["tool_choice"] = request.tool_choice
            if "parallel_tool_calls" not in self._fallbacks.dropped:
                params["parallel_tool_calls"] = True
        if request.store or request.previous_response_id:
            params["store"] = True
            if request.previous_response_id:
                params["previous_response_id"] = request.previous_response_id
        else:
            params["store"] = False
            if self._reasoning:
                params["include"] = ["reasoning.encrypted_content"]
        instructions = request.instructions
        if (output := request.output) is not None:
            mode, instructions = self.answer_format(request, output, self._format_with_tools)
            if mode == "json_schema":
                params["text"] = {
                    "format": {
                        "type": "json_schema",
                        "name": output.name,
                        "schema": output.schema,
                        "strict": False,
                    }
                }
            elif mode == "json_object":
                params["text"] = {"format": {"type": "json_object"}}
        params["instructions"] = instructions
        if self._max_output_tokens:
            params["max_output_tokens"] = self._max_output_tokens
        if request.cache_key:
            params["prompt_cache_key"] = request.cache_key
        if self._effort and "reasoning" not in self._fallbacks.dropped:
            params["reasoning"] = {"effort": self._effort, "summary": "auto"}
        if self._temperature is not None and not self._reasoning:
            params["temperature"] = self._temperature
        for name in self._fallbacks.dropped:
            params.pop(name, None)
        return params

    def _input(self, request: ModelRequest) -> list[dict[str, Any]]:
        items = to_responses_input(request.items)
        if self._bare_function_calls:
            for item in items:
                if item.get("type") == "function_call":
                    item.pop("id", None)
                    item["status"] = None
        return items

    async def read_events(
        self, events: AsyncIterator[object], on_text: DeltaSink | None
    ) -> ModelResponse | None:
        # The events arrive as plain JSON dicts (see ``wire``): only the fields below are read.
        done_items: dict[int, Any] = {}
        final: ModelResponse | None = None
        async for event in events:
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            if kind == "response.output_text.delta":
                if on_text is not None and isinstance(event.get("delta"), str):
                    await on_text(event["delta"])
            elif kind == "response.output_item.done":
                item, index = event.get("item"), event.get("output_index")
                if isinstance(item, dict):
                    done_items[index if isinstance(index, int) else len(done_items)] = item
            elif kind in ("response.completed", "response.incomplete"):
                response = _mapping(event.get("response"))
                body = {name: response.get(name) for name in _RESPONSE_FIELDS}
                if not body.get("output") and done_items:
                    body["output"] = [done_items[i] for i in sorted(done_items)]
                final = self.parse(body)
            elif kind == "response.failed":
                raise self._failed(_mapping(_mapping(event.get("response")).get("error")))
            elif kind == "error":
                raise ModelError(
                    "model_unavailable",
                    f"The model stream failed: {safe_detail(str(event.get('message')))}",
                    retryable=True,
                )
        return final

    @staticmethod
    def _failed(error: dict[str, Any]) -> ModelError:
        code = str(error.get("code") or "")
        detail = safe_detail(str(error.get("message") or "the response failed"))
        kind = "rate_limited" if code == "rate_limit_exceeded" else "model_error"
        if code == "server_error":
            kind = "model_unavailable"
        return ModelError(kind, f"The model failed: {detail}", retryable=code in _RETRYABLE_FAILURES)  # type: ignore[arg-type]

    def parse(self, body: dict[str, Any]) -> ModelResponse:
        if body.get("status") == "failed":
            raise self._failed(body.get("error") or {})
        usage = body.get("usage") or None
        details = body.get("incomplete_details") or {}
        return ModelResponse(
            items=from_responses_output(body.get("output") or [], origin=self.key),
            usage=TokenUsage.from_wire(usage, "input", "output") if usage else None,
            status=str(body.get("status") or "completed"),
            incomplete_reason=details.get("reason") if isinstance(details, dict) else None,
            response_id=body.get("id"),
            model=body.get("model"),
        )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
