"""Text tool protocol for models without native tools.

Why a wrapper around another model: the protocol is a pure projection of canonical items (calls
become ``<tool_call>`` tags in assistant text, outputs become ``<tool_response>`` user messages,
tools become a catalogue in the instructions) plus a parser for the reply, so it works on top of any
wire. Parsed calls are stored as ordinary function-call items, so repair, budgets and the tool
wrappers work unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from qdash.engine.items import (
    AssistantMessage,
    FunctionCall,
    Item,
    ModelResponse,
    Reasoning,
    UserMessage,
)
from qdash.engine.output import strip_code_fence
from qdash.engine.providers.base import (
    DeltaSink,
    Model,
    ModelCapabilities,
    ModelIdentity,
    ModelRequest,
    ToolDef,
)

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_FENCED_JSON = re.compile(r"```(?:json)?\s*\n(.*?)\n?\s*```", re.DOTALL)
FORCED_FINAL_NOTE = "Do not call any tools now. Reply with {answer} only."


def _answer(request: ModelRequest) -> str:
    """What the final reply is: the requested JSON object, else free text."""
    return "the final JSON object" if request.output is not None else "your final answer"


def tool_catalogue(tools: list[ToolDef], answer: str) -> str:
    """The protocol text (``answer`` says what the final reply is) and one line per tool (name,
    description, compact schema)."""
    lines = [
        "# Tools",
        "You can call these tools. To call tools, reply with one or more blocks of the form",
        '<tool_call>{"name": "<tool>", "arguments": {...}}</tool_call>',
        "and nothing else. Results arrive in the next user message as "
        '<tool_response name="<tool>" call_id="<id>">...</tool_response>. '
        f"When you have what you need, reply with {answer} only.",
        "",
    ]
    for tool in tools:
        schema = json.dumps(tool.parameters, separators=(",", ":"), ensure_ascii=False)
        lines.append(f"- {tool.name}: {tool.description} Arguments schema: {schema}")
    return "\n".join(lines)


def render_items(items: list[Item], tool_names: dict[str, str]) -> list[Item]:
    """Canonical items → plain user/assistant messages carrying the protocol's tags."""
    out: list[Item] = []
    for item in items:
        if isinstance(item, Reasoning):
            continue
        if isinstance(item, FunctionCall):
            tag = f"<tool_call>{json.dumps({'name': item.name, 'arguments': _args(item)})}</tool_call>"
            previous = out[-1] if out else None
            if isinstance(previous, AssistantMessage):
                out[-1] = AssistantMessage(f"{previous.text}\n{tag}".strip())
            else:
                out.append(AssistantMessage(tag))
        elif isinstance(item, AssistantMessage):
            out.append(AssistantMessage(item.text or item.refusal or ""))
        elif isinstance(item, UserMessage):
            out.append(item)
        else:  # a call's output
            name = tool_names.get(item.call_id, "unknown")
            block = f'<tool_response name="{name}" call_id="{item.call_id}">{item.output}</tool_response>'
            previous = out[-1] if out else None
            if isinstance(previous, UserMessage) and previous.text_content.startswith("<tool_response"):
                out[-1] = UserMessage.text(f"{previous.text_content}\n{block}")
            else:
                out.append(UserMessage.text(block))
    return out


def _args(call: FunctionCall) -> Any:
    try:
        return json.loads(call.arguments)
    except ValueError:
        return call.arguments


def parse_reply(text: str, call_prefix: str, answer_keys: Collection[str] = ()) -> list[Item]:
    """The reply as canonical items: function calls if it contains any, else one message.

    ``answer_keys`` are the top-level keys of the requested answer's schema: an untagged JSON
    object with one of them is the final answer even if it also looks like a call.
    """
    visible = _THINK.sub("", text).strip()
    raw_calls = [m.group(1) for m in _TOOL_CALL.finditer(visible)]
    candidates: list[Any] = []
    if raw_calls:
        for raw in raw_calls:
            candidates.append(_loads(strip_code_fence(raw.strip()).strip()))
    else:
        fenced = _FENCED_JSON.search(visible)
        data = _loads(fenced.group(1) if fenced else visible)
        if isinstance(data, list) or (isinstance(data, dict) and not any(key in data for key in answer_keys)):
            candidates = data if isinstance(data, list) else [data]
    calls: list[Item] = []
    for candidate in candidates:
        call = _as_call(candidate)
        if call is not None:
            name, arguments = call
            calls.append(FunctionCall(f"{call_prefix}_{len(calls)}", name, arguments))
        elif raw_calls:
            # A tag we could not read still becomes a call, so the model hears about its mistake.
            calls.append(
                FunctionCall(f"{call_prefix}_{len(calls)}", "invalid_tool_call", json.dumps(candidate))
            )
    if calls:
        return calls
    return [AssistantMessage(visible)] if visible else []


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _as_call(candidate: Any) -> tuple[str, str] | None:
    if not isinstance(candidate, dict) or not isinstance(candidate.get("name"), str):
        return None
    arguments = candidate.get("arguments", candidate.get("parameters", {}))
    if isinstance(arguments, str):
        parsed = _loads(arguments)
        arguments = parsed if isinstance(parsed, dict) else arguments
    return candidate["name"], arguments if isinstance(arguments, str) else json.dumps(arguments)


class TextProtocolModel(ModelIdentity):
    """Wraps a model so tools travel as text; the inner model never receives native tools."""

    def __init__(self, inner: Model) -> None:
        super().__init__(
            inner.name,
            key=f"{inner.key}+text",
            capabilities=ModelCapabilities(
                honours_tool_choice=True,
                supports_previous_response_id=False,
                local=inner.capabilities.local,
                streams_text=False,
            ),
            pricing=inner.pricing,
        )
        self._inner = inner

    async def request(self, request: ModelRequest, on_text: DeltaSink | None = None) -> ModelResponse:
        names = {i.call_id: i.name for i in request.items if isinstance(i, FunctionCall)}
        instructions = request.instructions
        if request.tools:
            instructions = f"{instructions}\n\n{tool_catalogue(request.tools, _answer(request))}"
        forced = request.tool_choice == "none"
        if forced:
            instructions = f"{instructions}\n\n{FORCED_FINAL_NOTE.format(answer=_answer(request))}"
        if request.output is not None:
            instructions = f"{instructions}\n\n{request.output.instruction}"
        inner_request = replace(
            request,
            instructions=instructions,
            items=render_items(request.items, names),
            tools=[],
            tool_choice="auto",
            output=request.output if forced else None,
            previous_response_id=None,
        )
        # Text is buffered, not streamed: until the reply is complete we cannot tell a call from an answer.
        response = await self._inner.request(inner_request, None)
        turn = sum(1 for i in request.items if isinstance(i, AssistantMessage | FunctionCall)) + 1
        answer_keys = request.output.schema.get("properties", {}) if request.output is not None else {}
        items = parse_reply(response.text, f"call_{turn}", list(answer_keys))
        if forced:
            # Calls in a forced final answer are never executed; the loop reports what is missing.
            items = [i for i in items if not isinstance(i, FunctionCall)]
        response.items = items
        return response
