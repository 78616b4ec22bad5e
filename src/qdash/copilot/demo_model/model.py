"""``provider: demo``: a model that answers by script, so a fresh install shows a real answer.

Why a model and not a canned reply: it goes through the same loop, tools, sandbox, chart
interception and SSE as a real model, so what the page shows is what the product does on the
lab's data. It reads the turn's question and the tool outputs from the request's items (it keeps
no state), asks for the next tool calls of its plan (``plans.py``) and finally writes the answer
from those outputs. It is labelled as a demo everywhere it appears ("demo model: scripted answers").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from qdash.actions.catalog import ACTIONS, UNDO
from qdash.actions.decisions import is_decision_call
from qdash.copilot.demo_model.plans import Answer, Calls, Seen, Step, next_step, plan_action_decision
from qdash.copilot.demo_model.questions import read_question
from qdash.engine.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    ModelResponse,
    UserMessage,
)
from qdash.engine.providers.base import DeltaSink, ModelCapabilities, ModelRequest, Pricing
from qdash.models.answer import Answer as Reply
from qdash.models.answer import TextBlock

DEMO_LABEL = "demo model: scripted answers"


def _turn_items(items: Sequence[Item]) -> list[Item]:
    """This turn's items: from the first user message after the last assistant answer."""
    last_answer = max((i for i, item in enumerate(items) if isinstance(item, AssistantMessage)), default=-1)
    return list(items[last_answer + 1 :])


def _parsed(output: str) -> dict[str, Any]:
    try:
        value = json.loads(output)
    except json.JSONDecodeError:
        return {"error": output}
    return value if isinstance(value, dict) else {"result": value}


def _seen(turn: Sequence[Item]) -> list[Seen]:
    """The calls of this turn with their outputs, in call order (unanswered calls are skipped)."""
    outputs = {item.call_id: item.output for item in turn if isinstance(item, FunctionCallOutput)}
    seen = []
    for item in turn:
        if isinstance(item, FunctionCall) and item.call_id in outputs:
            try:
                arguments = item.parsed_arguments()
            except ValueError:
                arguments = {}
            seen.append(Seen(item.name, arguments, _parsed(outputs[item.call_id])))
    return seen


def _decided(turn: Sequence[Item]) -> Seen | None:
    """The decided approval the server ran at this turn's start (its call and output), if any."""
    outputs = {item.call_id: item.output for item in turn if isinstance(item, FunctionCallOutput)}
    for item in turn:
        if isinstance(item, FunctionCall) and is_decision_call(item.call_id) and item.call_id in outputs:
            return Seen(item.name, {}, _parsed(outputs[item.call_id]))
    return None


def _answer_text(answer: Answer, structured: bool) -> str:
    if not structured:
        return "\n\n".join(answer.texts)
    reply = Reply(blocks=[TextBlock(content=text) for text in answer.texts], assessment=answer.assessment)
    return json.dumps(reply.wire(), ensure_ascii=False)


def _not_offered(missing: list[str], offered: set[str]) -> str:
    """Why the plan stops short; for write tools also the switch that offers them, since "not
    available" alone leaves the user of a fresh install (lab actions off) nothing to act on."""
    text = f"The tool(s) this answer needs are not available here: {', '.join(missing)}."
    writes = [name for name in missing if name in ACTIONS or name == UNDO]
    if not writes:
        return text
    if UNDO in offered:  # offered whenever lab actions are on: this action's own switch is off
        switch = ACTIONS[writes[0]].switch
        what, key = "This lab action is switched off", f"actions.{switch}"
    else:
        what, key = "Lab actions are off", "actions.enabled"
    env = "QDASH_" + key.upper().replace(".", "__")
    return (
        f"{text} {what}: set `{key}: true` in config/copilot.local.yaml (or {env}=true) and restart "
        "the server; see docs/actions.md."
    )


@dataclass
class DemoModel:
    """The scripted model behind ``provider: demo`` (see the module docstring)."""

    key: str
    name: str
    suggestions: Sequence[str] = ()
    capabilities: ModelCapabilities = field(default_factory=ModelCapabilities)
    pricing: Pricing = field(default_factory=Pricing)

    async def request(self, request: ModelRequest, on_text: DeltaSink | None = None) -> ModelResponse:
        turn = _turn_items(request.items)
        question = next((item.text_content for item in turn if isinstance(item, UserMessage)), "")
        seen = _seen(turn)
        decided = _decided(turn)
        if decided is not None:
            step: Step = plan_action_decision(decided)
        else:
            step = next_step(read_question(question), seen, self.suggestions)
        reply = step if isinstance(step, Answer) else self._calls_or_stop(step, request, len(seen))
        if isinstance(reply, ModelResponse):
            return reply
        text = _answer_text(reply, structured=request.output is not None)
        if on_text is not None:
            await on_text(text)
        return ModelResponse([AssistantMessage(text)], model=self.name)

    def _calls_or_stop(self, step: Calls, request: ModelRequest, first: int) -> ModelResponse | Answer:
        """The plan's calls, or why it stops: tools switched off (forced final) or not offered here."""
        offered = {tool.name for tool in request.tools}
        missing = [name for name, _ in step.calls if name not in offered]
        if request.tool_choice != "auto":
            return Answer(
                ["I had to stop before my plan finished (no more tool calls were allowed this turn)."]
            )
        if missing:
            return Answer([_not_offered(missing, offered)])
        calls: list[Item] = [
            FunctionCall(f"call_demo_{first + n}", name, json.dumps(args))
            for n, (name, args) in enumerate(step.calls)
        ]
        return ModelResponse(calls, model=self.name)
