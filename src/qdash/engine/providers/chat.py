"""Chat Completions adapter for any OpenAI-compatible server (OpenAI, Ollama ``/v1``, vLLM, LM Studio).

Why items are converted here and nowhere else: Chat has no reasoning items and nests calls inside
the assistant message, so the projection (calls grouped per assistant message, one ``tool`` message
per call right after it, reasoning dropped) is this adapter's job. Streamed tool calls arrive in
fragments keyed by ``index`` and are accumulated here, so the loop only ever sees complete calls.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Unpack

import openai

from qdash.engine.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    ModelResponse,
    Reasoning,
    TokenUsage,
    UserMessage,
)
from qdash.engine.providers.base import (
    DeltaSink,
    ModelCapabilities,
    ModelError,
    ModelRequest,
)
from qdash.engine.providers.chat_calls import (
    REASONING_KEYS,
    CallAccumulator,
    accumulate,
    signature_of,
    tool_call_message,
)
from qdash.engine.providers.wire import WireArgs, WireModel


@dataclass(frozen=True)
class ChatOptions:
    """Server quirks, set by the factory from the configured provider."""

    send_tool_choice: bool = True
    """Ollama ignores ``tool_choice`` (and may hang on it): never send it there."""
    send_strict: bool = True
    token_param: str = "max_completion_tokens"
    include_usage: bool = True
    format_with_tools: bool = True
    """Send ``response_format`` on rounds that offer tools (OpenAI only, see ``build_params``)."""
    local: bool = False
    reasoning_field: str | None = None
    """Keep the server's reasoning and send it back on the assistant message under this key."""
    thought_signatures: bool = False
    """Keep Gemini's ``thought_signature`` on tool calls and send it back (``extra_content``)."""


def items_to_messages(
    instructions: str, items: list[Item], options: ChatOptions | None = None
) -> list[dict[str, Any]]:
    """Project canonical items onto Chat messages (assistant text + its calls form one message).

    Reasoning is dropped unless ``options.reasoning_field`` names the key the server reads it back
    from; then it rides on the assistant message that followed it.
    """
    options = options or ChatOptions()
    messages: list[dict[str, Any]] = [{"role": "system", "content": instructions}] if instructions else []
    assistant: dict[str, Any] | None = None
    reasoning: list[str] = []

    def open_assistant(content: str | None) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if options.reasoning_field and reasoning:
            message[options.reasoning_field] = "\n".join(reasoning)
            reasoning.clear()
        messages.append(message)
        return message

    for item in items:
        if isinstance(item, Reasoning):
            if options.reasoning_field:
                reasoning.extend(item.summary)
            continue
        if isinstance(item, AssistantMessage):
            text = item.text or item.refusal or ""
            if assistant is not None and assistant.get("tool_calls") and not assistant.get("_closed"):
                # Text after calls in one response: keep it in that message, so the tool messages
                # still follow their calls directly (C2).
                assistant["content"] = "\n".join(filter(None, [assistant.get("content"), text]))
                continue
            assistant = open_assistant(text)
            continue
        if isinstance(item, FunctionCall):
            if assistant is None or assistant.get("_closed"):
                assistant = open_assistant(None)
            assistant.setdefault("tool_calls", []).append(tool_call_message(item, options.thought_signatures))
            continue
        if assistant is not None:
            assistant["_closed"] = True
        if isinstance(item, FunctionCallOutput):
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})
        elif isinstance(item, UserMessage):
            messages.append({"role": "user", "content": _user_content(item)})
            assistant = None
            reasoning.clear()
    for message in messages:
        message.pop("_closed", None)
    return messages


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    if all(p.get("type") == "input_text" for p in message.parts):
        return message.text_content
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if part.get("type") == "input_text":
            parts.append({"type": "text", "text": part.get("text", "")})
        elif part.get("type") == "input_image":
            parts.append({"type": "image_url", "image_url": {"url": part.get("image_url", "")}})
    return parts


class ChatCompletionsModel(WireModel):
    """One model on a Chat Completions endpoint."""

    path = "/chat/completions"

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        name: str,
        *,
        options: ChatOptions | None = None,
        **wire: Unpack[WireArgs],
    ) -> None:
        options = options or ChatOptions()
        capabilities = ModelCapabilities(honours_tool_choice=options.send_tool_choice, local=options.local)
        super().__init__(client, name, capabilities=capabilities, **wire)
        self._options = options

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The request body (without ``stream``) for ``chat.completions.create``."""
        params: dict[str, Any] = {"model": self.name}
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                        **({"strict": True} if self._options.send_strict else {}),
                    },
                }
                for t in request.tools
            ]
            if self._options.send_tool_choice:
                params["tool_choice"] = request.tool_choice
                params["parallel_tool_calls"] = True
        instructions = request.instructions
        if (output := request.output) is not None:
            mode, instructions = self.answer_format(request, output, self._options.format_with_tools)
            if mode == "json_schema":
                params["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": output.name, "schema": output.schema, "strict": False},
                }
            elif mode == "json_object":
                params["response_format"] = {"type": "json_object"}
        params["messages"] = items_to_messages(instructions, request.items, self._options)
        if self._max_output_tokens:
            params[self._fallbacks.token_param or self._options.token_param] = self._max_output_tokens
        if self._temperature is not None:
            params["temperature"] = self._temperature
        if request.stream and self._options.include_usage:
            params["stream_options"] = {"include_usage": True}
        for name in self._fallbacks.dropped:
            params.pop(name, None)
        return params

    async def read_events(
        self, events: AsyncIterator[object], on_text: DeltaSink | None
    ) -> ModelResponse | None:
        # The chunks arrive as plain JSON dicts (see ``wire``).
        text: list[str] = []
        thinking: list[str] = []
        calls: dict[int, CallAccumulator] = {}
        finish: str | None = None
        usage: TokenUsage | None = None
        model: str | None = None
        async for data in events:
            if not isinstance(data, dict):
                continue
            model = data.get("model") or model
            if data.get("usage"):
                usage = _usage(data["usage"])
            for choice in data.get("choices") or []:
                if not isinstance(choice, dict):
                    continue
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    text.append(delta["content"])
                    if on_text is not None:
                        await on_text(delta["content"])
                for key in REASONING_KEYS:
                    if isinstance(delta.get(key), str):
                        thinking.append(delta[key])
                for fragment in delta.get("tool_calls") or []:
                    if isinstance(fragment, dict):
                        accumulate(calls, fragment)
                finish = choice.get("finish_reason") or finish
        if finish is None:
            return None
        found = [
            FunctionCall(acc.id, acc.name, "".join(acc.arguments), signature=acc.signature)
            for _, acc in sorted(calls.items())
        ]
        items = self._answer_items("".join(text), "".join(thinking), None, found)
        return self._response(items, usage, finish, model)

    def _answer_items(
        self, text: str, thinking: str, refusal: str | None, calls: list[FunctionCall]
    ) -> list[Item]:
        """The round's items; a server that put its whole answer into reasoning gets it as text.

        Reasoning is kept (before the message and calls, as on the Responses wire) only when the
        model is configured to have it sent back.
        """
        thinking_is_answer = not text and not calls
        items: list[Item] = []
        if self._options.reasoning_field and thinking and not thinking_is_answer:
            items.append(Reasoning(None, (thinking,), None, self.key))
        content = thinking if thinking_is_answer else text
        if content or refusal:
            items.append(AssistantMessage(content, refusal))
        return items + calls

    def parse(self, body: dict[str, Any]) -> ModelResponse:
        choices = body.get("choices") or []
        if not choices:
            raise ModelError("model_error", "The model returned no choices.")
        message = choices[0].get("message") or {}
        thinking = next(
            (message[key] for key in REASONING_KEYS if isinstance(message.get(key), str) and message[key]),
            "",
        )
        calls: list[FunctionCall] = []
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            arguments = function.get("arguments", "")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            name = str(function.get("name", ""))
            calls.append(
                FunctionCall(str(call.get("id") or ""), name, arguments, signature=signature_of(call))
            )
        items = self._answer_items(message.get("content") or "", thinking, message.get("refusal"), calls)
        usage = _usage(body["usage"]) if body.get("usage") else None
        return self._response(items, usage, choices[0].get("finish_reason"), body.get("model"))

    @staticmethod
    def _response(
        items: list[Item], usage: TokenUsage | None, finish: str | None, model: str | None
    ) -> ModelResponse:
        incomplete = finish == "length"
        return ModelResponse(
            items=items,
            usage=usage,
            status="incomplete" if incomplete else "completed",
            incomplete_reason="max_output_tokens" if incomplete else None,
            model=model,
        )


def _usage(raw: dict[str, Any]) -> TokenUsage:
    return TokenUsage.from_wire(raw, "prompt", "completion")
