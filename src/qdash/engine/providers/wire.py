"""Send an already-built JSON body through the SDK's public low-level ``post`` and get plain JSON back.

Why not ``responses.create`` / ``chat.completions.create``: both first walk the whole body against
the SDK's ``TypedDict`` params (``async_maybe_transform``) — on the event loop, ~10–30 ms per request
with our tool schemas and transcripts, which is a no-op for bodies that are plain JSON already (ours
are: ``build_params`` returns dicts, lists and strings only; ``tests/engine/test_history.py`` checks they
are accepted by ``create``'s signature). The body is encoded once with orjson (the SDK sends bytes
as ``content``; ``extra_body`` is merged first, as the SDK's ``extra_json`` would). Streams are read by
``sse.EventStream``: each wanted event's ``data:`` is handed over as a dict instead of being
validated into a pydantic event model (~0.3 ms per event). Everything else is the SDK's own code
path, unchanged: headers and auth (``security`` as ``create`` sets it), idempotency key, retries and
backoff, timeouts, status → exception classes with the same messages, in-stream ``{"error": …}``
payloads → ``APIError``.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Any, ClassVar, TypedDict, Unpack

import openai
import orjson
import pydantic

from qdash.engine.items import ModelResponse
from qdash.engine.providers.base import (
    DeltaSink,
    ModelCapabilities,
    ModelError,
    ModelIdentity,
    ModelRequest,
    OutputFormat,
    Pricing,
)
from qdash.engine.providers.errors import from_openai_error
from qdash.engine.providers.fallbacks import Fallbacks, FormatMode
from qdash.engine.providers.sse import EventStream


def _options() -> openai.RequestOptions:
    return {"security": {"bearer_auth": True}}  # what ``create`` sends


def encode_body(body: dict[str, Any], extra_body: dict[str, Any] | None) -> bytes:
    """The request body as JSON bytes, ``extra_body`` keys on top (the SDK's shallow merge).

    Accepts what the SDK's encoder accepts: numpy scalars (float/int subclasses to ``json``),
    datetimes, pydantic models.
    """
    merged = {**body, **extra_body} if extra_body else body
    return orjson.dumps(merged, default=_sdk_json_default, option=orjson.OPT_SERIALIZE_NUMPY)


def _sdk_json_default(value: object) -> object:
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(exclude_unset=True, mode="json", by_alias=True)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


async def post_stream(
    client: openai.AsyncOpenAI,
    path: str,
    body: dict[str, Any],
    extra_body: dict[str, Any] | None,
    stream_cls: type[EventStream] = EventStream,
) -> EventStream:
    """``POST path`` with ``stream: true``; iterate the result for the events' JSON (dicts)."""
    return await client.post(
        path,
        cast_to=object,
        content=encode_body({**body, "stream": True}, extra_body),
        options=_options(),
        stream=True,
        stream_cls=stream_cls,
    )


async def post_json(
    client: openai.AsyncOpenAI, path: str, body: dict[str, Any], extra_body: dict[str, Any] | None
) -> dict[str, Any]:
    """``POST path`` without streaming; the response body as a dict.

    Raises ``json.JSONDecodeError`` when the body is not a JSON object (the SDK hands back text when
    the content type is not JSON; a JSON body under a wrong content type is accepted, as before).
    """
    body_bytes = encode_body(body, extra_body)
    data: object = await client.post(path, cast_to=object, content=body_bytes, options=_options())
    if isinstance(data, str | bytes):
        data = json.loads(data)
    if not isinstance(data, dict):
        raise json.JSONDecodeError("expected a JSON object", str(data)[:100], 0)
    return data


class WireArgs(TypedDict, total=False):
    """What both wire adapters take besides the client and the model name (from ``ModelConfig``)."""

    key: str | None
    temperature: float | None
    max_output_tokens: int | None
    pricing: Pricing | None
    extra_body: dict[str, Any] | None


class WireModel(ModelIdentity, ABC):
    """The request path shared by the Responses and Chat adapters (one OpenAI-style endpoint each).

    Why here and once: both wires send a built body through the same client with the same
    per-model parameter fallbacks (``fallbacks.py``), read a stream with the same error mapping and close it
    the same way; they differ only in the endpoint ``path``, the events their stream decodes
    (``stream_cls``), how the body is built, and how events or a whole body become a response.
    A subclass supplies those: ``build_params``, ``read_events`` and ``parse``.
    """

    path: ClassVar[str]
    stream_cls: ClassVar[type[EventStream]] = EventStream

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        name: str,
        *,
        capabilities: ModelCapabilities,
        **wire: Unpack[WireArgs],
    ) -> None:
        super().__init__(name, key=wire.get("key"), capabilities=capabilities, pricing=wire.get("pricing"))
        self._client = client
        self._temperature = wire.get("temperature")
        self._max_output_tokens = wire.get("max_output_tokens")
        self._extra = dict(wire.get("extra_body") or {})
        self._fallbacks = Fallbacks()

    @abstractmethod
    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The request body (without ``stream``)."""

    def answer_format(
        self, request: ModelRequest, output: OutputFormat, format_with_tools: bool
    ) -> tuple[FormatMode, str]:
        """How this request asks for ``output``, and the instructions to send with it.

        ``json_schema``, or ``json_object`` where the model refused that (``fallbacks.py``), constrains
        the output; ``prompt`` describes the format after the instructions instead. Ollama and vLLM
        turn a format into a grammar on the whole output, which would also stop the model from writing
        tool calls: without ``format_with_tools`` the format is prompted on tool rounds and constrained
        only on the final, tool-free request.
        """
        constrain = not request.tools or request.tool_choice == "none" or format_with_tools
        mode = self._fallbacks.format_mode if constrain else "prompt"
        if mode == "json_schema":
            return mode, request.instructions
        return mode, f"{request.instructions}\n\n{output.instruction}"

    @abstractmethod
    async def read_events(
        self, events: AsyncIterator[object], on_text: DeltaSink | None
    ) -> ModelResponse | None:
        """The response from the stream's events (JSON dicts); None when it ended before completing."""

    @abstractmethod
    def parse(self, body: dict[str, Any]) -> ModelResponse:
        """The response from a non-streamed body."""

    async def request(self, request: ModelRequest, on_text: DeltaSink | None = None) -> ModelResponse:
        """One model request, with the per-model parameter fallbacks.

        A 400 that names a parameter the model rejects is learnt once and the request resent without it;
        a loop-level replay (``retry_attempt``) turns the SDK's own retries off so attempts do not multiply.
        """
        client = self._client.with_options(max_retries=0) if request.retry_attempt else self._client
        while True:
            params = self.build_params(request)
            extra_body = {k: v for k, v in self._extra.items() if k not in self._fallbacks.dropped_extras}
            try:
                if request.stream:
                    return await self._stream(client, params, extra_body, on_text)
                return self.parse(await post_json(client, self.path, params, extra_body))
            except json.JSONDecodeError:
                raise ModelError("model_unavailable", "The model sent an undecodable response.") from None
            except openai.BadRequestError as exc:
                if self._fallbacks.learn(exc, params, extra_body):
                    continue
                raise from_openai_error(exc, during_stream=False) from None
            except openai.APIError as exc:
                raise from_openai_error(exc, during_stream=False) from None

    async def _stream(
        self,
        client: openai.AsyncOpenAI,
        params: dict[str, Any],
        extra_body: dict[str, Any],
        on_text: DeltaSink | None,
    ) -> ModelResponse:
        stream = await post_stream(client, self.path, params, extra_body, self.stream_cls)
        try:
            # ``read_events`` reads to the end even after the terminal event: closing a response
            # early drops the keep-alive connection, and every next round would pay for a new one.
            response = await self.read_events(stream, on_text)
        except openai.APIError as exc:
            raise from_openai_error(exc, during_stream=True) from None
        except json.JSONDecodeError:
            raise ModelError(
                "model_unavailable", "The model stream sent undecodable data.", retryable=True
            ) from None
        finally:
            await stream.close()
        if response is None:
            raise ModelError(
                "model_unavailable", "The model stream ended before the response completed.", retryable=True
            )
        return response
