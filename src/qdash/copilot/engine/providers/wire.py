"""Send an already-built JSON body through the SDK's public low-level ``post`` and get plain JSON back.

Why not ``responses.create`` / ``chat.completions.create``: both first walk the whole body against
the SDK's ``TypedDict`` params (``async_maybe_transform``) — on the event loop, ~10–30 ms per request
with our tool schemas and transcripts, which is a no-op for bodies that are plain JSON already (ours
are: ``build_params`` returns dicts, lists and strings only; ``test_history_contract`` checks they
are accepted by ``create``'s signature). Streams are read as ``AsyncStream[object]``, so each SSE
``data:`` is ``json.loads``-ed and handed over as a dict instead of being validated into a pydantic
event model (~0.3 ms per event). Everything else is the SDK's own code path, unchanged: headers and
auth (``security`` as ``create`` sets it), idempotency key, retries and backoff, timeouts, status →
exception classes with the same messages, in-stream ``{"error": …}`` payloads → ``APIError``.
"""

from __future__ import annotations

import json
from typing import Any

import openai

JsonStream = openai.AsyncStream[object]


def _options(extra_body: dict[str, Any] | None) -> openai.RequestOptions:
    options: openai.RequestOptions = {"security": {"bearer_auth": True}}  # what ``create`` sends
    if extra_body:
        options["extra_json"] = extra_body
    return options


async def post_stream(
    client: openai.AsyncOpenAI, path: str, body: dict[str, Any], extra_body: dict[str, Any] | None
) -> JsonStream:
    """``POST path`` with ``stream: true``; iterate the result for the events' JSON (dicts)."""
    return await client.post(
        path,
        cast_to=object,
        body={**body, "stream": True},
        options=_options(extra_body),
        stream=True,
        stream_cls=JsonStream,
    )


async def post_json(
    client: openai.AsyncOpenAI, path: str, body: dict[str, Any], extra_body: dict[str, Any] | None
) -> dict[str, Any]:
    """``POST path`` without streaming; the response body as a dict.

    Raises ``json.JSONDecodeError`` when the body is not a JSON object (the SDK hands back text when
    the content type is not JSON; a JSON body under a wrong content type is accepted, as before).
    """
    data: object = await client.post(path, cast_to=object, body=body, options=_options(extra_body))
    if isinstance(data, str | bytes):
        data = json.loads(data)
    if not isinstance(data, dict):
        raise json.JSONDecodeError("expected a JSON object", str(data)[:100], 0)
    return data
