"""Faults produce what openai-python 3.54 really does with them."""

from __future__ import annotations

import asyncio
import json
import re
import time

import openai
import pytest

from qdash.evaluation.fake_llm import (
    BadSseData,
    DelayHeaders,
    Drop,
    FakeLLMServer,
    HttpError,
    MalformedArguments,
    OmitTerminal,
    Refusal,
    ResponseFailed,
    Stall,
    StreamErrorEvent,
    Turn,
    WrongOrder,
    call,
    errors,
    message,
    turn,
)
from qdash.evaluation.fake_llm.faults import api_error

from .rules import CHAT_TOOL, TOOL

ARGS = {"model": "gpt-4o", "input": "q16?", "tools": [TOOL]}
TEXT = turn(message("Q16 is calibrated and looks healthy."), chunk_chars=4)


def retry_counts(fake: FakeLLMServer) -> list[int | None]:
    return [r.retry_count for r in fake.requests]


async def test_429_with_retry_after_ms_then_success(fake: FakeLLMServer) -> None:
    fake.script(turn(message("ok"), fault=HttpError(429, headers={"retry-after-ms": "200"})))
    client = fake.async_openai(max_retries=2)
    started = time.monotonic()
    reply = await client.responses.create(**ARGS)  # type: ignore[arg-type]
    assert reply.output_text == "ok"
    assert retry_counts(fake) == [0, 1]
    assert time.monotonic() - started >= 0.2  # the header's wait was honoured (no upper bound: load)
    assert [r.verdict for r in fake.requests] == ["fault:http_error", "accepted+fault:HttpError"]


async def test_429_exhausts_retries_with_rate_limit_error(fake: FakeLLMServer) -> None:
    fake.script(Turn(fault=HttpError(429, headers={"retry-after-ms": "10"}, repeat=3)))
    client = fake.async_openai(max_retries=2)
    with pytest.raises(openai.RateLimitError) as caught:
        await client.responses.create(**ARGS)  # type: ignore[arg-type]
    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.type == "tokens"
    assert retry_counts(fake) == [0, 1, 2]


async def test_retry_after_above_120_s_is_not_retried(fake: FakeLLMServer) -> None:
    fake.script(Turn(fault=HttpError(429, headers={"retry-after": "121"})))
    client = fake.async_openai(max_retries=2)
    with pytest.raises(openai.RateLimitError):
        await client.responses.create(**ARGS)  # type: ignore[arg-type]
    assert retry_counts(fake) == [0]


@pytest.mark.parametrize(("status", "exc"), [(500, openai.InternalServerError), (409, openai.ConflictError)])
async def test_retryable_status_then_success(
    fake: FakeLLMServer, status: int, exc: type[openai.APIStatusError]
) -> None:
    fake.script(turn(message("ok"), fault=HttpError(status, headers={"retry-after-ms": "1"})))
    reply = await fake.async_openai(max_retries=1).responses.create(**ARGS)  # type: ignore[arg-type]
    assert reply.output_text == "ok"
    assert retry_counts(fake) == [0, 1]
    fake.script(Turn(fault=HttpError(status)))
    with pytest.raises(exc):
        await fake.async_openai().responses.create(**ARGS)  # type: ignore[arg-type]


async def test_x_should_retry_false_and_html_gateway_pages(fake: FakeLLMServer) -> None:
    fake.script(Turn(fault=HttpError(503, headers={"x-should-retry": "false"})))
    with pytest.raises(openai.InternalServerError) as overloaded:
        await fake.async_openai(max_retries=2).responses.create(**ARGS)  # type: ignore[arg-type]
    assert overloaded.value.code == "server_is_overloaded"
    assert retry_counts(fake) == [0]
    fake.script(Turn(fault=HttpError(502, body="<html>Bad gateway</html>")))
    with pytest.raises(openai.InternalServerError) as gateway:
        await fake.async_openai().responses.create(**ARGS)  # type: ignore[arg-type]
    assert gateway.value.body == "<html>Bad gateway</html>"


async def test_delay_beyond_client_timeout_is_retried_then_times_out(fake: FakeLLMServer) -> None:
    fake.script(Turn(fault=DelayHeaders(1.0, repeat=2)))
    client = fake.async_openai(max_retries=1, timeout=0.3)
    with pytest.raises(openai.APITimeoutError):
        await client.responses.create(**ARGS)  # type: ignore[arg-type]
    assert retry_counts(fake) == [0, 1]
    for _ in range(100):  # the server notices the second disconnect right after the client leaves
        if fake.remaining() == 0:
            break
        await asyncio.sleep(0.01)


async def test_delay_shorter_than_timeout_answers(fake: FakeLLMServer) -> None:
    fake.script(turn(message("slow"), fault=DelayHeaders(0.2)))
    started = time.monotonic()
    reply = await fake.async_openai(timeout=2).responses.create(**ARGS)  # type: ignore[arg-type]
    assert reply.output_text == "slow" and time.monotonic() - started >= 0.2


@pytest.mark.parametrize("fault", [Drop(after_events=4), Drop(after_events=4, partial=True), OmitTerminal()])
async def test_cut_stream_is_silent_until_the_final_response_is_asked_for(
    client: openai.AsyncOpenAI, fake: FakeLLMServer, fault: Drop | OmitTerminal
) -> None:
    fake.script(Turn(output=TEXT.output, chunk_chars=4, fault=fault))
    async with client.responses.stream(**ARGS) as stream:  # type: ignore[arg-type]
        kinds = [e.type async for e in stream]
        with pytest.raises(RuntimeError, match=re.escape("Didn't receive a `response.completed` event.")):
            await stream.get_final_response()
    assert "response.completed" not in kinds


async def test_stall_mid_stream_raises_timeout_from_the_iterator(fake: FakeLLMServer) -> None:
    # The stall is 10x the read timeout: on a busy machine a 1 s stall ended before the client noticed.
    fake.script(Turn(output=TEXT.output, fault=Stall(after_events=3, seconds=3.0)))
    client = fake.async_openai(timeout=0.3, max_retries=2)
    stream = await client.responses.create(**ARGS, stream=True)  # type: ignore[call-overload]
    seen = []
    with pytest.raises(openai.APITimeoutError):
        async for event in stream:
            seen.append(event.type)
    assert seen == ["response.created", "response.in_progress", "response.output_item.added"]
    assert len(fake.requests) == 1  # not retried while iterating


async def test_stream_error_event_is_yielded_on_responses_and_raised_on_chat(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fault = StreamErrorEvent(after_events=2, code="server_error", message="boom")
    fake.script(Turn(output=TEXT.output, fault=fault), Turn(output=TEXT.output, fault=fault))
    stream = await client.responses.create(**ARGS, stream=True)  # type: ignore[call-overload]
    events = [e async for e in stream]
    assert [e.type for e in events] == ["response.created", "response.in_progress", "error"]
    assert (events[-1].code, events[-1].message) == ("server_error", "boom")
    chat = await client.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": "x"}],
        stream=True,
    )
    with pytest.raises(openai.APIError, match="boom"):
        async for _ in chat:
            pass


async def test_response_failed_terminal_and_json(client: openai.AsyncOpenAI, fake: FakeLLMServer) -> None:
    fault = ResponseFailed(code="rate_limit_exceeded", message="slow down")
    fake.script(Turn(fault=fault), Turn(fault=fault))
    failed = await client.responses.create(**ARGS)  # type: ignore[arg-type]
    assert (
        failed.status == "failed" and failed.error is not None and failed.error.code == "rate_limit_exceeded"
    )
    stream = await client.responses.create(**ARGS, stream=True)  # type: ignore[call-overload]
    kinds = [e.type async for e in stream]
    assert kinds[-1] == "response.failed"


async def test_bad_sse_data_raises_json_decode_error(client: openai.AsyncOpenAI, fake: FakeLLMServer) -> None:
    fake.script(Turn(output=TEXT.output, fault=BadSseData(after_events=2)))
    stream = await client.responses.create(**ARGS, stream=True)  # type: ignore[call-overload]
    with pytest.raises(json.JSONDecodeError):
        async for _ in stream:
            pass


async def test_wrong_order_trips_the_stream_helper(client: openai.AsyncOpenAI, fake: FakeLLMServer) -> None:
    fake.script(Turn(output=TEXT.output, fault=WrongOrder()))
    with pytest.raises(RuntimeError, match=re.escape("Expected to have received `response.created`")):
        async with client.responses.stream(**ARGS) as stream:  # type: ignore[arg-type]
            async for _ in stream:
                pass


async def test_malformed_strict_arguments(client: openai.AsyncOpenAI, fake: FakeLLMServer) -> None:
    bad = turn(call("get_qubit_params", {"qid": "16", "chip_id": None}), fault=MalformedArguments('{"qid": '))
    fake.script(bad, bad, bad)
    raw = await client.responses.create(**ARGS)  # type: ignore[arg-type]
    assert raw.output[0].arguments == '{"qid": '  # type: ignore[union-attr]
    with pytest.raises(json.JSONDecodeError):
        async with client.responses.stream(**ARGS) as stream:  # type: ignore[arg-type]
            async for _ in stream:
                pass
    with pytest.raises(json.JSONDecodeError):
        await client.chat.completions.parse(
            model="gpt-4o",
            messages=[{"role": "user", "content": "q16"}],
            tools=[CHAT_TOOL],  # type: ignore[list-item]
        )


async def test_stream_only_fault_on_a_json_request_is_a_mismatch(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(Turn(output=TEXT.output, fault=Drop(after_events=1)))
    with pytest.raises(openai.InternalServerError, match="fake: fault Drop needs a streamed request"):
        await client.responses.create(**ARGS)  # type: ignore[arg-type]
    assert fake.mismatches == ["fault Drop needs a streamed request"]
    fake.reset()


async def test_api_error_fault_returns_a_rules_exact_body(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(
        Turn(fault=api_error("R18", model="gpt-5")), Turn(fault=api_error("C2", index=3, ids=["a", "b"]))
    )
    with pytest.raises(openai.NotFoundError) as missing:
        await client.responses.create(**ARGS)  # type: ignore[arg-type]
    assert missing.value.code == "model_not_found"
    assert (
        missing.value.message
        == "Error code: 404 - The model `gpt-5` does not exist or you do not have access to it."
    )
    with pytest.raises(openai.BadRequestError, match=r"did not have response messages: a, b$"):
        await client.responses.create(**ARGS)  # type: ignore[arg-type]


async def test_fault_a_wire_cannot_express_is_a_mismatch(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(Turn(output=TEXT.output, fault=WrongOrder()))
    with pytest.raises(openai.InternalServerError, match="not supported on the chat endpoint"):
        await client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "x"}], stream=True
        )
    fake.reset()


def test_json_turns_accept_refusal_and_api_error_kinds() -> None:
    refused = Turn.from_dict({"fault": {"kind": "refusal", "text": "no"}})
    assert refused.output == (Refusal("no"),) and refused.fault is None
    failing = Turn.from_dict({"fault": {"kind": "api_error", "rule": "R9", "call_id": "call_7", "repeat": 2}})
    assert failing.fault == api_error("R9", repeat=2, call_id="call_7")


async def test_insufficient_quota_is_retried_unless_the_server_says_not_to(fake: FakeLLMServer) -> None:
    quota = errors.quota_exceeded()
    fake.script(Turn(fault=HttpError(429, body=quota, headers={"retry-after-ms": "1"}, repeat=2)))
    with pytest.raises(openai.RateLimitError) as retried:
        await fake.async_openai(max_retries=1).responses.create(**ARGS)  # type: ignore[arg-type]
    assert retried.value.code == "insufficient_quota" and retry_counts(fake) == [0, 1]
    fake.reset()
    fake.script(Turn(fault=HttpError(429, body=quota, headers={"x-should-retry": "false"})))
    with pytest.raises(openai.RateLimitError):
        await fake.async_openai(max_retries=2).responses.create(**ARGS)  # type: ignore[arg-type]
    assert retry_counts(fake) == [0]
