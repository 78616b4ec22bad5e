"""The server and its in-process API: sessions, dynamic turns, delays, control endpoints, toggles."""

from __future__ import annotations

import asyncio
import time

import httpx2
import openai
import pytest

from qdash.evaluation.fake_llm import FakeLLMServer, ModelSpec, RecordedRequest, Turn, call, turn

from .rules import TOOL

ARGS = {"model": "gpt-4o", "input": "q16?", "tools": [TOOL]}


async def test_sessions_keep_separate_queues(fake: FakeLLMServer) -> None:
    fake.script("for A", session="A").script("for B", session="B")
    b = fake.async_openai(default_headers={"x-fake-session": "B"})
    a = fake.async_openai(default_headers={"x-fake-session": "A"})
    assert (await b.responses.create(**ARGS)).output_text == "for B"  # type: ignore[arg-type]
    assert (await a.responses.create(**ARGS)).output_text == "for A"  # type: ignore[arg-type]
    assert [r.session for r in fake.requests] == ["B", "A"]


async def test_dynamic_turn_and_endless_responder(fake: FakeLLMServer) -> None:
    def answer(request: RecordedRequest) -> Turn:
        outputs = request.tool_outputs()
        if outputs:
            return turn(f"got {len(outputs)} outputs")
        return turn(*[call("get_qubit_params", {"qid": str(n), "chip_id": None}) for n in range(3)])

    fake.respond_with(answer)
    client = fake.async_openai()
    for _ in range(2):  # answers forever, never "runs out"
        first = await client.responses.create(**ARGS)  # type: ignore[arg-type]
        calls = [o for o in first.output if o.type == "function_call"]
        assert len(calls) == 3
        replay = [{"role": "user", "content": "q"}, *[c.model_dump(exclude_none=True) for c in calls]]
        replay += [{"type": "function_call_output", "call_id": c.call_id, "output": "1"} for c in calls]
        second = await client.responses.create(**{**ARGS, "input": replay})  # type: ignore[arg-type]
        assert second.output_text == "got 3 outputs"
    fake.respond_with(None)


async def test_a_queued_dynamic_turn_may_read_the_log(fake: FakeLLMServer) -> None:
    fake.script(lambda request: f"request #{len(fake.requests)} from {request.model}")
    reply = await fake.async_openai().responses.create(**ARGS)  # type: ignore[arg-type]
    assert reply.output_text == "request #1 from gpt-4o"


async def test_response_delay_overlaps_for_concurrent_requests() -> None:
    async with FakeLLMServer(response_delay_s=1.0) as fake:
        fake.respond_with(lambda _: "slow answer")
        client = fake.async_openai()
        started = time.monotonic()
        replies = await asyncio.gather(*[client.responses.create(**ARGS) for _ in range(6)])  # type: ignore[arg-type]
        elapsed = time.monotonic() - started
        peak = fake.peak_in_flight
    assert [r.output_text for r in replies] == ["slow answer"] * 6
    assert elapsed >= 1.0  # the delay is served
    # Served concurrently, not one after another: all six were waiting at once. (Counted at the
    # server rather than timed: an elapsed-time bound fails on a loaded machine.)
    assert peak == 6


async def test_control_endpoints(fake: FakeLLMServer) -> None:
    base = fake.base_url
    async with httpx2.AsyncClient() as http:
        queued = await http.post(
            f"{base}/_fake/turns",
            json=[
                {
                    "output": [
                        {
                            "type": "function_call",
                            "name": "get_qubit_params",
                            "arguments": {"qid": "1", "chip_id": None},
                        }
                    ]
                }
            ],
        )
        assert queued.json() == {"queued": 1}
        reply = await fake.async_openai().responses.create(**ARGS)  # type: ignore[arg-type]
        assert reply.output[0].arguments == '{"qid":"1","chip_id":null}'  # type: ignore[union-attr]
        log = (await http.get(f"{base}/_fake/requests")).json()
        assert log[-1]["verdict"] == "accepted" and log[-1]["json"]["model"] == "gpt-4o"
        assert (await http.get(f"{base}/_fake/mismatches")).json() == []
        await http.post(f"{base}/_fake/reset")
    assert fake.requests == []


async def test_auth_toggle_and_models_listing() -> None:
    async with FakeLLMServer(require_auth=True, models=[ModelSpec("tiny")]) as fake:
        async with httpx2.AsyncClient() as http:
            denied = await http.post(
                f"{fake.openai_base_url}/responses", json={"model": "tiny", "input": "x"}
            )
        assert denied.status_code == 401 and denied.json()["error"]["code"] == "invalid_api_key"
        listing = await fake.async_openai().models.list()
        assert [m.id async for m in listing] == ["tiny"]


async def test_done_sentinel_and_obfuscation_toggles() -> None:
    async with FakeLLMServer(responses_done_sentinel=True, obfuscation=True) as fake:
        fake.script("abc", "abc")
        async with httpx2.AsyncClient() as http:
            url = f"{fake.openai_base_url}/responses"
            padded = await http.post(url, json={"model": "gpt-4o", "input": "x", "stream": True})
            plain = await http.post(
                url,
                json={"model": "gpt-4o", "input": "x", "stream": True,
                      "stream_options": {"include_obfuscation": False}},
            )  # fmt: skip
        assert padded.text.endswith("data: [DONE]\n\n")
        assert '"obfuscation"' in padded.text and '"obfuscation"' not in plain.text
        fake.assert_done()


def test_sync_use_and_assert_done_reports_leftovers() -> None:
    with FakeLLMServer() as fake:
        fake.script("used", "left over")
        assert fake.sync_openai().responses.create(model="gpt-4o", input="x").output_text == "used"
        with pytest.raises(AssertionError, match="1 scripted turn"):
            fake.assert_done()
    with pytest.raises(RuntimeError, match="not started"):
        _ = fake.base_url


async def test_unknown_model_on_every_wire_before_a_turn_is_used(fake: FakeLLMServer) -> None:
    fake.script("never used")
    client = fake.async_openai()
    with pytest.raises(openai.NotFoundError):
        await client.responses.create(model="gpt-0", input="x")
    with pytest.raises(openai.NotFoundError):
        await client.chat.completions.create(model="gpt-0", messages=[{"role": "user", "content": "x"}])
    assert fake.remaining() == 1
    fake.reset()


async def test_broken_scripts_fail_loudly(fake: FakeLLMServer) -> None:
    with pytest.raises(TypeError, match="pass several turns as separate arguments"):
        fake.script([turn("a"), turn("b")])  # type: ignore[list-item]
    assert fake.remaining() == 0
    fake.script(lambda request: 1 / 0)
    with pytest.raises(openai.InternalServerError, match="building the turn failed: ZeroDivisionError"):
        await fake.async_openai(max_retries=2).responses.create(**ARGS)  # type: ignore[arg-type]
    assert len(fake.requests) == 1 and fake.remaining() == 0
    fake.reset()
