"""Send an already-built JSON body through the SDK's public low-level ``post`` and get plain JSON back.

Why not ``responses.create`` / ``chat.completions.create``: both first walk the whole body against
the SDK's ``TypedDict`` params (``async_maybe_transform``) — on the event loop, ~10–30 ms per request
with our tool schemas and transcripts, which is a no-op for bodies that are plain JSON already (ours
are: ``build_params`` returns dicts, lists and strings only; ``test_history_contract`` checks they
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
from collections.abc import Awaitable, Callable
from typing import Any

import openai
import orjson
import pydantic

from qdash.copilot.engine.items import ModelResponse
from qdash.copilot.engine.providers.base import DeltaSink, ModelError, ModelRequest
from qdash.copilot.engine.providers.errors import from_openai_error
from qdash.copilot.engine.providers.fallbacks import Fallbacks
from qdash.copilot.engine.providers.sse import EventStream

StreamReader = Callable[
    [openai.AsyncOpenAI, dict[str, Any], dict[str, Any], DeltaSink | None], Awaitable[ModelResponse]
]


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


async def send(
    client: openai.AsyncOpenAI,
    path: str,
    request: ModelRequest,
    on_text: DeltaSink | None,
    *,
    build_params: Callable[[ModelRequest], dict[str, Any]],
    extra: dict[str, Any],
    fallbacks: Fallbacks,
    read_stream: StreamReader,
    parse: Callable[[dict[str, Any]], ModelResponse],
) -> ModelResponse:
    """One model request on either wire, with the per-model parameter fallbacks (§6.3).

    A 400 that names a parameter the model rejects is learnt once and the request resent without it;
    a loop-level replay (``retry_attempt``) turns the SDK's own retries off so attempts do not multiply.
    """
    if request.retry_attempt:
        client = client.with_options(max_retries=0)
    while True:
        params = build_params(request)
        extra_body = {k: v for k, v in extra.items() if k not in fallbacks.dropped_extras}
        try:
            if request.stream:
                return await read_stream(client, params, extra_body, on_text)
            return parse(await post_json(client, path, params, extra_body))
        except json.JSONDecodeError:
            raise ModelError("model_unavailable", "The model sent an undecodable response.") from None
        except openai.BadRequestError as exc:
            if fallbacks.learn(exc, params, extra_body):
                continue
            raise from_openai_error(exc, during_stream=False) from None
        except openai.APIError as exc:
            raise from_openai_error(exc, during_stream=False) from None
