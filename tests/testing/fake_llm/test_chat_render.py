"""Chat Completions rendering: strict chunk validation, stream == JSON, usage chunk, Ollama's style."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from qdash.evaluation.fake_llm import (
    FakeLLMServer,
    Incomplete,
    Usage,
    call,
    message,
    reasoning,
    refusal,
    turn,
)

from .rules import CHAT_TOOL

USER = [{"role": "user", "content": "q16 vs q17"}]
TWO_CALLS = turn(
    reasoning("dropped on OpenAI chat"),
    call("get_qubit_params", {"qid": "16", "chip_id": None}),
    call("get_qubit_params", {"qid": "17", "chip_id": None}),
    chunk_chars=6,
    usage=Usage(input_tokens=50, output_tokens=10),
)


def sse_payloads(text: str) -> tuple[list[dict[str, Any]], bool]:
    """``data:`` payloads and whether the stream ended with ``[DONE]``."""
    frames = [f.removeprefix("data: ") for f in text.split("\n\n") if f]
    done = frames[-1] == "[DONE]"
    return [json.loads(f) for f in frames if f != "[DONE]"], done


async def test_chunks_validate_and_accumulate_by_index(fake: FakeLLMServer) -> None:
    fake.script(TWO_CALLS)
    async with httpx2.AsyncClient() as http:
        reply = await http.post(
            f"{fake.openai_base_url}/chat/completions",
            json={"model": "gpt-4o", "messages": USER, "tools": [CHAT_TOOL], "stream": True,
                  "stream_options": {"include_usage": True}},
        )  # fmt: skip
    chunks, done = sse_payloads(reply.text)
    assert done and "event:" not in reply.text
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk, strict=False)
    assert len({c["id"] for c in chunks}) == 1 and len({c["created"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    starts = [
        c["choices"][0]["delta"]["tool_calls"][0]
        for c in chunks[:-1]
        if "tool_calls" in c["choices"][0]["delta"]
    ]
    opened = [s for s in starts if "id" in s]
    assert [(s["index"], s["function"]["arguments"]) for s in opened] == [(0, ""), (1, "")]
    assert all(set(s) == {"index", "function"} for s in starts if "id" not in s)  # continuations
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == 50
    assert all(c["usage"] is None for c in chunks[:-1])


async def test_stream_helper_final_equals_json(client: openai.AsyncOpenAI, fake: FakeLLMServer) -> None:
    fake.script(TWO_CALLS, TWO_CALLS)
    args: dict[str, Any] = {"model": "gpt-5", "messages": USER, "tools": [CHAT_TOOL]}
    plain = await client.chat.completions.create(**args)
    async with client.chat.completions.stream(**args, stream_options={"include_usage": True}) as stream:
        async for _ in stream:
            pass
        final = await stream.get_final_completion()

    def shape(completion: ChatCompletion) -> list[Any]:
        msg = completion.choices[0].message
        calls = [(c.function.name, c.function.arguments) for c in msg.tool_calls or []]  # type: ignore[union-attr]
        return [msg.content, msg.refusal, calls, completion.choices[0].finish_reason, completion.usage]

    assert shape(final) == shape(plain)
    assert plain.choices[0].message.content is None  # reasoning is not rendered on OpenAI chat


async def test_text_refusal_and_length(client: openai.AsyncOpenAI, fake: FakeLLMServer) -> None:
    fake.script(
        turn(message("Q16 "), message("is fine")),
        refusal("I can't."),
        turn(message("cut"), fault=Incomplete()),
    )
    text = await client.chat.completions.create(model="gpt-4o", messages=USER)  # type: ignore[arg-type]
    assert text.choices[0].message.content == "Q16 is fine"
    refused = await client.chat.completions.create(model="gpt-4o", messages=USER)  # type: ignore[arg-type]
    assert refused.choices[0].message.refusal == "I can't." and refused.choices[0].message.content is None
    cut = await client.chat.completions.create(model="gpt-4o", messages=USER)  # type: ignore[arg-type]
    assert cut.choices[0].finish_reason == "length"


async def test_ollama_v1_style_whole_calls_and_reasoning_field() -> None:
    async with FakeLLMServer(flavour="ollama") as fake:
        fake.script(TWO_CALLS, TWO_CALLS)
        async with httpx2.AsyncClient() as http:
            url = f"{fake.openai_base_url}/chat/completions"
            body = {"model": "gpt-oss:20b", "messages": USER, "tools": [CHAT_TOOL]}
            plain = (await http.post(url, json=body)).json()
            streamed = await http.post(url, json={**body, "stream": True})
        assert plain["choices"][0]["message"]["reasoning"] == "dropped on OpenAI chat"
        assert [c["index"] for c in plain["choices"][0]["message"]["tool_calls"]] == [0, 1]
        chunks, done = sse_payloads(streamed.text)
        assert done
        whole = [
            c["choices"][0]["delta"]["tool_calls"][0]
            for c in chunks
            if "tool_calls" in c["choices"][0]["delta"]
        ]
        assert [w["function"]["arguments"] for w in whole] == [
            '{"qid":"16","chip_id":null}',
            '{"qid":"17","chip_id":null}',
        ]
        assert all(w["id"].startswith("call_") and len(w["id"]) == 13 for w in whole)
        fake.script(turn(reasoning("hidden"), message("hi")))
        no_thinking = await fake.async_openai().chat.completions.create(model="llama3.2", messages=USER)  # type: ignore[arg-type]
        assert not hasattr(no_thinking.choices[0].message, "reasoning")  # llama3.2 cannot think
        fake.assert_done()
