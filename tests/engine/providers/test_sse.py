"""The event-stream reader: framing on bytes, skipped events never decoded, the SDK's errors."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import openai
import pytest

from qdash.engine.providers.sse import EventStream, ResponsesEventStream, parse_event, split_events

BODY = (
    b": keep-alive comment\r\n\r\n"
    b"event: response.created\ndata: {not json at all, and never decoded}\n\n"
    b'event: response.output_text.delta\r\ndata: {"delta": "Hi"}\r\n\r\n'
    b'data: {"a":\ndata: 1}\n\n'
    b"event: response.completed\nid: 7\nretry: 10\ndata: " + b'{"type": "response.completed"}' + b"\n\n"
    b"data: [DONE]\n\n"
    b'data: {"after": "done"}\n\n'
)


async def _chunks(body: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


async def _split(body: bytes, size: int) -> list[tuple[str | None, bytes]]:
    return [event async for event in split_events(_chunks(body, size))]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 10_000])
async def test_events_are_the_same_however_the_bytes_are_cut(size: int) -> None:
    assert await _split(BODY, size) == [
        ("response.created", b"{not json at all, and never decoded}"),
        ("response.output_text.delta", b'{"delta": "Hi"}'),
        (None, b'{"a":\n1}'),
        ("response.completed", b'{"type": "response.completed"}'),
        (None, b"[DONE]"),
        (None, b'{"after": "done"}'),
    ]


def test_a_block_without_data_is_no_event() -> None:
    assert parse_event(b": comment") is None
    assert parse_event(b"event: ping") is None
    assert parse_event(b"data:x") == (None, b"x")  # the space after the colon is optional


def _stream(cls: type[EventStream], body: bytes | AsyncIterator[bytes]) -> EventStream:
    request = httpx2.Request("POST", "http://model.test/v1/responses")
    if isinstance(body, bytes):
        response = httpx2.Response(200, content=body, request=request)
    else:
        response = httpx2.Response(200, stream=_ByteStream(body), request=request)
    client = openai.AsyncOpenAI(api_key="sk-test", base_url="http://model.test/v1")
    return cls(cast_to=object, response=response, client=client)


class _ByteStream(httpx2.AsyncByteStream):
    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks:
            yield chunk


async def test_responses_stream_decodes_only_what_the_adapter_reads() -> None:
    events = [event async for event in _stream(ResponsesEventStream, BODY)]
    # created (undecodable!) is skipped undecoded; unnamed events are decoded; nothing after [DONE]
    assert events == [{"delta": "Hi"}, {"a": 1}, {"type": "response.completed"}]


async def test_the_plain_stream_decodes_every_event() -> None:
    with pytest.raises(ValueError):  # orjson's error is json's JSONDecodeError, which adapters map
        [event async for event in _stream(EventStream, BODY)]


async def test_an_error_payload_raises_the_sdks_api_error() -> None:
    body = b'data: {"error": {"message": "Rate limit reached", "type": "tokens"}}\n\n'
    with pytest.raises(openai.APIError, match="Rate limit reached") as caught:
        [event async for event in _stream(EventStream, body)]
    assert caught.value.body == {"message": "Rate limit reached", "type": "tokens"}
    with pytest.raises(openai.APIError, match="An error occurred during streaming"):
        [event async for event in _stream(EventStream, b'data: {"error": "x"}\n\n')]


async def test_transport_failures_become_the_sdks_exceptions() -> None:
    async def dies(error: Exception) -> AsyncIterator[bytes]:
        yield b'data: {"n": 1}\n\n'
        raise error

    with pytest.raises(openai.APITimeoutError):
        [event async for event in _stream(EventStream, dies(httpx2.ReadTimeout("slow")))]
    with pytest.raises(openai.APIConnectionError):
        [event async for event in _stream(EventStream, dies(httpx2.RemoteProtocolError("cut")))]


def test_bodies_encode_what_the_sdks_encoder_encodes() -> None:
    import datetime as dt

    import numpy as np
    import orjson
    import pydantic

    from qdash.engine.providers.wire import encode_body

    class Note(pydantic.BaseModel):
        text: str
        extra: int | None = None

    at = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    body = {"t": np.float64(1.5), "n": np.int64(3), "at": at, "m": Note(text="x")}
    assert orjson.loads(encode_body(body, {"seed": 7})) == {
        "t": 1.5,
        "n": 3,
        "at": "2026-01-02T00:00:00+00:00",
        "m": {"text": "x"},
        "seed": 7,
    }
    with pytest.raises(TypeError, match="not JSON serializable: set"):
        encode_body({"bad": {1, 2}}, None)
