"""Reading a model server's event stream: each event's JSON as a dict, skipping events nobody reads.

Why not the SDK's own decoder: with 100 concurrent chat streams, reading the model's answers was the
largest share of the event loop's CPU (``bench/concurrency.py``): the SDK splits the body into lines
and decodes each into a ``ServerSentEvent`` in Python, then ``json.loads`` every event, and a
Responses round is ~47 KB, most of it ``response.created``/``response.in_progress`` echoing the whole
request's tools, which no adapter reads. Here events are cut at the blank line on bytes, an event
whose name the adapter does not read is dropped before any decoding, and the rest are parsed with
orjson. The SDK still does everything else: the request, retries, status errors, and it builds this
class as its ``stream_cls``; in-stream ``{"error": …}`` payloads and transport failures raise the
same exceptions its decoder raises.

Framing, as model servers send it (SSE spec subset): events end at a blank line, LF or CRLF;
``data:`` lines are joined with LF; ``event:`` names the event; comments (``:``) and other fields
are ignored; ``data: [DONE]`` ends the stream (the rest of the body is still read, so the
keep-alive connection can be reused).
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from typing import ClassVar

import httpx2
import openai
import orjson

_DONE = b"[DONE]"


def parse_event(block: bytes) -> tuple[str | None, bytes] | None:
    """``(event name or None, data)`` of one event block, or None when it carries no data."""
    name: str | None = None
    data: list[bytes] = []
    for line in block.split(b"\n"):
        if line.startswith(b"data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(b" ") else value)
        elif line.startswith(b"event:"):
            name = line[6:].strip().decode("utf-8", "replace")
    if not data:
        return None
    return name, b"\n".join(data)


async def split_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[tuple[str | None, bytes]]:
    """Events from a byte stream cut anywhere (mid-line, mid-CRLF, mid-event)."""
    buffer = b""
    async for chunk in chunks:
        buffer += chunk
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n")  # a trailing "\r" waits for its "\n"
        start = 0
        while (end := buffer.find(b"\n\n", start)) >= 0:
            event = parse_event(buffer[start:end])
            start = end + 2
            if event is not None:
                yield event
        buffer = buffer[start:]
    event = parse_event(buffer.strip(b"\r\n"))
    if event is not None:
        yield event


class EventStream(openai.AsyncStream[object]):
    """The SDK's stream class with our reader: events' JSON as dicts (all events)."""

    # Event names that are decoded; ``None``: every event (Chat Completions chunks have no names).
    # Events without a name are always decoded.
    wanted: ClassVar[frozenset[str] | None] = None

    async def __stream__(self) -> AsyncIterator[object]:
        response = self.response
        done = False
        try:
            async for name, data in self._events():
                if done or (name is not None and self.wanted is not None and name not in self.wanted):
                    continue
                if data.startswith(_DONE):
                    done = True
                    continue
                payload = orjson.loads(data)
                if isinstance(payload, dict) and payload.get("error"):
                    raise _in_stream_error(payload["error"], response.request)
                yield payload  # (undecodable data: orjson's JSONDecodeError is json's, as before)
        finally:
            await response.aclose()

    async def _events(self) -> AsyncIterator[tuple[str | None, bytes]]:
        request = self.response.request
        try:
            async for event in split_events(self.response.aiter_bytes()):
                yield event
        except httpx2.TimeoutException as exc:
            raise openai.APITimeoutError(request=request) from exc
        except (httpx2.RequestError, ssl.SSLError) as exc:
            raise openai.APIConnectionError(request=request) from exc


class ResponsesEventStream(EventStream):
    """Responses API events: only the ones ``ResponsesModel`` reads are decoded."""

    wanted = frozenset(
        {
            "response.output_text.delta",
            "response.output_item.done",
            "response.completed",
            "response.incomplete",
            "response.failed",
            "error",
        }
    )


def _in_stream_error(error: object, request: httpx2.Request) -> openai.APIError:
    """The SDK's exception for an ``{"error": …}`` payload inside a stream (same message rule)."""
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(message, str) or not message:
        message = "An error occurred during streaming"
    return openai.APIError(message=message, request=request, body=error)
