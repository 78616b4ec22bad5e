"""Replay of recorded real exchanges (tests/fixtures/recorded): every
recorded response parses into our items, and the requests our loop builds for the same conversation
carry what the real client sent (reasoning in place, call_id pairing, output_text for assistant turns).

The recorded responses are served in order by an in-process ``httpx2.MockTransport`` (no sockets);
stand-in tools with the recorded names return the recorded tool outputs.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import httpx2
import openai
import pytest
import yaml

from qdash.engine import Agent, RunContext, ToolOutput
from qdash.engine.events import Failed, Final
from qdash.engine.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    UserMessage,
    from_responses_output,
    to_responses_input,
)
from qdash.engine.providers.base import ModelRequest
from qdash.engine.providers.chat import ChatCompletionsModel
from qdash.engine.providers.responses import ResponsesModel
from tests.recorded import RECORDED


def interactions(name: str) -> list[dict[str, Any]]:
    data = yaml.safe_load((RECORDED / name).read_text(encoding="utf-8"))
    keep = ("/v1/responses", "/v1/chat/completions")
    return [i for i in data["interactions"] if i["request"]["uri"].endswith(keep)]


class Replay:
    """Serves recorded responses in order; records what we sent; extra requests get ``extra``."""

    def __init__(self, recorded: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> None:
        self.queue = list(recorded)
        self.extra = extra
        self.sent: list[dict[str, Any]] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.sent.append(json.loads(request.content))
        if not self.queue:
            assert self.extra is not None, "more requests than recorded"
            return httpx2.Response(200, json=self.extra)
        response = self.queue.pop(0)["response"]
        code = response["status"]["code"]
        if "body" in response:
            text = response["body"]["string"]
            return httpx2.Response(code, headers={"content-type": "text/event-stream"}, content=text.encode())
        return httpx2.Response(code, json=response["parsed_body"])

    def client(self) -> openai.AsyncOpenAI:
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle))
        return openai.AsyncOpenAI(api_key="sk-test", base_url="http://replay.invalid/v1", http_client=http,
                                  max_retries=0)  # fmt: skip


class RecordedTool:
    """A stand-in for a recorded tool: the recorded schema, the recorded outputs in order."""

    description = "recorded tool"
    label = "Recorded"
    ends_turn = False
    calls: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def __init__(self, name: str, parameters: dict[str, Any], outputs: list[str]) -> None:
        self.name = name
        self.parameters = parameters
        self._outputs = list(outputs)

    async def __call__(self, ctx: RunContext[Any], arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput(self._outputs.pop(0) if self._outputs else "ok")


def recorded_outputs(recorded: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Tool name → outputs, in order, from the recorded later requests."""
    names: dict[str, str] = {}
    found: dict[str, list[str]] = {}
    first = recorded[0]["request"]["parsed_body"]
    in_history = {
        str(e.get("call_id") or e.get("tool_call_id")) for e in first.get("input") or first.get("messages")
    }
    for interaction in recorded:
        body = interaction["request"]["parsed_body"]
        for entry in body.get("input") or body.get("messages") or []:
            if entry.get("type") == "function_call":
                names[entry["call_id"]] = entry["name"]
            for tc in entry.get("tool_calls") or []:
                names[tc["id"]] = tc["function"]["name"]
            call_id = entry.get("call_id") if entry.get("type") == "function_call_output" else None
            call_id = call_id or (entry.get("tool_call_id") if entry.get("role") == "tool" else None)
            if call_id and call_id in names and call_id not in in_history:
                text = entry.get("output", entry.get("content"))
                outs = found.setdefault(names[call_id], [])
                if text not in outs:
                    outs.append(text)
    return found


def tools_of(body: dict[str, Any], outputs: dict[str, list[str]]) -> list[RecordedTool]:
    tools = []
    for raw in body.get("tools") or []:
        spec = raw.get("function", raw)
        tools.append(RecordedTool(spec["name"], spec["parameters"], outputs.get(spec["name"], [])))
    return tools


def responses_view(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What must match between the recorded and our Responses input.

    Call ids are compared as pairing (``#n`` = the n-th distinct call id): the streamed cassette's
    client sent the ``fc_`` item id as ``call_id``, which the server tolerated; we send the real
    ``call_…`` id, checked separately against the recorded responses.
    """
    view: list[tuple[Any, ...]] = []
    pairing: dict[str, str] = {}

    def pair(call_id: str) -> str:
        return pairing.setdefault(call_id, f"#{len(pairing)}")

    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            content = item["content"]
            text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
            part_types = [] if isinstance(content, str) else [p["type"] for p in content]
            if item["role"] == "assistant":
                assert all(t in ("output_text", "refusal") for t in part_types), part_types
            view.append(("message", item["role"], text))
        elif kind == "reasoning":
            view.append(("reasoning", item.get("id"), item.get("encrypted_content")))
        elif kind == "function_call":
            view.append(
                ("function_call", item.get("id"), pair(item["call_id"]), item["name"], item["arguments"])
            )
        elif kind == "function_call_output":
            view.append(("function_call_output", pair(item["call_id"]), item["output"]))
    return view


def same(ours: list[tuple[Any, ...]], theirs: list[tuple[Any, ...]]) -> bool:
    """Equal views, where an id the real client left out (``None``) matches whatever we sent."""
    if len(ours) != len(theirs):
        return False
    return all(
        len(a) == len(b) and all(y is None or x == y for x, y in zip(a, b, strict=True))
        for a, b in zip(ours, theirs, strict=True)
    )


def final_message(text: str) -> dict[str, Any]:
    return {"id": "resp_extra", "object": "response", "created_at": 0, "model": "m", "status": "completed",
            "output": [{"type": "message", "role": "assistant", "id": "msg_extra", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}  # fmt: skip


@pytest.mark.parametrize(
    "name",
    [
        "openai_responses__test_openai_responses_model_simple_response_with_tool_call.yaml",
        "openai_responses__test_openai_responses_thinking_with_tool_calls.yaml",
        "openai_responses__test_openai_responses_stream.yaml",
    ],
)
async def test_responses_loop_replays_recorded_conversation(name: str) -> None:
    recorded = interactions(name)
    first = recorded[0]["request"]["parsed_body"]
    replay = Replay(recorded, extra=final_message("extra final"))
    effort = (first.get("reasoning") or {}).get("effort")
    model = ResponsesModel(replay.client(), first["model"], reasoning_effort=effort)
    agent = Agent(
        model, instructions=first.get("instructions") or "", stream=bool(first.get("stream")),
        tools=tools_of(first, recorded_outputs(recorded)),
    )  # fmt: skip
    final = await agent.run(first["input"][0]["content"])
    assert isinstance(final, Final), final
    for ours, theirs in zip(replay.sent, recorded, strict=False):
        theirs_view = responses_view(theirs["request"]["parsed_body"]["input"])
        assert same(responses_view(ours["input"]), theirs_view), (responses_view(ours["input"]), theirs_view)
    issued = [
        o["call_id"]
        for r in recorded if "parsed_body" in r["response"]
        for o in r["response"]["parsed_body"]["output"] if o["type"] == "function_call"
    ]  # fmt: skip
    sent = [i["call_id"] for body in replay.sent for i in body["input"] if i.get("type") == "function_call"]
    assert set(issued) <= set(sent)
    last = recorded[-1]["response"]
    if "parsed_body" in last:
        items = from_responses_output(last["parsed_body"]["output"])
        texts = "".join(i.text for i in items if isinstance(i, AssistantMessage))
        if not any(isinstance(i, FunctionCall) for i in items):
            assert final.result == texts.strip()


def test_every_recorded_responses_body_parses_into_items() -> None:
    for path in sorted(RECORDED.glob("openai_responses__*.yaml")):
        for interaction in interactions(path.name):
            body = interaction["response"].get("parsed_body")
            if not body or "output" not in body:
                continue
            items = from_responses_output(body["output"])
            assert len(items) == len(body["output"]), path.name
            # Rendering back gives the same replay view (ids, call ids, encrypted reasoning).
            assert responses_view(to_responses_input(items)) == responses_view(body["output"])


async def test_previous_response_id_request_matches_recording() -> None:
    recorded = interactions("openai_responses__test_openai_previous_response_id.yaml")
    first_out = from_responses_output(recorded[0]["response"]["parsed_body"]["output"])
    assert isinstance(first_out[0], AssistantMessage) and first_out[0].id == "msg_test_previous_response_id"
    second = recorded[1]["request"]["parsed_body"]
    model = ResponsesModel(Replay([]).client(), "gpt-5")
    request = ModelRequest(instructions="", items=[UserMessage.text(second["input"][0]["content"])], tools=[],
                           previous_response_id="resp_1234")  # fmt: skip
    params = model.build_params(request)
    assert params["previous_response_id"] == second["previous_response_id"]
    assert params["store"] is True and "include" not in params
    assert responses_view(params["input"]) == responses_view(second["input"])


async def test_recorded_http_error_becomes_a_safe_failed_event() -> None:
    recorded = interactions("openai_responses__test_openai_responses_model_http_error.yaml")
    model = ResponsesModel(Replay(recorded).client(), "gpt-4o")
    final = await Agent(model).run("What is the capital of France?")
    assert isinstance(final, Failed) and final.code == "model_error"
    assert final.detail.startswith("Invalid 'temperature': decimal below minimum value.")


def chat_to_items(messages: list[dict[str, Any]]) -> list[Item]:
    items: list[Item] = []
    for m in messages:
        if m["role"] == "user":
            items.append(UserMessage.text(m["content"]))
        elif m["role"] == "assistant":
            if m.get("content"):
                items.append(AssistantMessage(m["content"]))
            for tc in m.get("tool_calls") or []:
                items.append(FunctionCall(tc["id"], tc["function"]["name"], tc["function"]["arguments"]))
        elif m["role"] == "tool":
            items.append(FunctionCallOutput(m["tool_call_id"], m["content"]))
    return items


def chat_view(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    view: list[tuple[Any, ...]] = []
    for m in messages:
        if m["role"] == "system":
            continue
        calls = tuple(
            (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or []
        )
        view.append((m["role"], m.get("content") or None, calls, m.get("tool_call_id")))
    return view


@pytest.mark.parametrize(
    "name",
    [
        "openai__test_openai_tool_output.yaml",
        "openai__test_multiple_agent_tool_calls.yaml",
        "ollama__test_ollama_cloud_tool_output.yaml",
    ],
)
async def test_chat_loop_replays_recorded_conversation(name: str) -> None:
    recorded = interactions(name)
    first = recorded[0]["request"]["parsed_body"]
    extra = {"id": "chatcmpl-extra", "object": "chat.completion", "created": 0, "model": "m",
             "choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": "extra final"}}]}  # fmt: skip
    replay = Replay(recorded, extra=extra)
    model = ChatCompletionsModel(replay.client(), first["model"])
    history = chat_to_items(first["messages"][:-1])
    agent = Agent(model, stream=False, tools=tools_of(first, recorded_outputs(recorded)))
    final = await agent.run(first["messages"][-1]["content"], history=history)
    assert isinstance(final, Final), final
    # Each of our requests matches the recording as long as the recorded client followed the same
    # path (pydantic-ai's output tool / retry prompts diverge after the first text answer).
    for ours, theirs in zip(replay.sent, recorded, strict=False):
        theirs_view = chat_view(theirs["request"]["parsed_body"]["messages"])
        if len(theirs_view) <= len(chat_view(ours["messages"])):
            assert chat_view(ours["messages"]) == theirs_view
    first_response = recorded[0]["response"]["parsed_body"]["choices"][0]["message"]
    if first_response.get("content") and not first_response.get("tool_calls"):
        assert final.result == first_response["content"].strip()
