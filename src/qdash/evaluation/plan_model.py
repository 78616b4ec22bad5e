"""A scripted model for the fake LLM server that follows a plan and answers from what it saw.

Why: to test the assistant end to end (wire, loop, tools, SSE, blocks, charts) on questions whose
answers are known, the model must be perfectly competent but honest: it calls the plan's tools one
round at a time, then hands every text it received (tool outputs, the user message with any
analysis context) to the script's ``compose`` function, which writes the final answer. It never
sees the database, so a tool that hides an answer makes the answer fail.

Use: ``fake.respond_with(PlanFollower([PlanScript(question_text, plan, compose)]))``. The script is
chosen by the question text in the request's user messages, so concurrent questions share one
server. Arguments are completed with ``null`` for every property the strict schema requires.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from qdash.evaluation.fake_llm.records import RecordedRequest
from qdash.evaluation.fake_llm.script import FunctionCall, Message, Turn
from qdash.models.answer import Answer

Compose = Callable[[list[str]], Answer]
"""Texts the model saw (user messages, then tool outputs in order) → the blocks result to answer."""


@dataclass(frozen=True)
class PlanStep:
    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanScript:
    question: str
    """The question as the user asked it (matched inside the request's user messages)."""
    plan: Sequence[PlanStep]
    compose: Compose
    delay_s: float = 0.0
    """Wait this long before every answer (a model that times out)."""


class UnknownQuestionError(LookupError):
    """A request whose user messages match no script (a script mismatch on the fake)."""


def _schema_properties(request: RecordedRequest, tool: str) -> list[str]:
    for entry in request.body.get("tools") or []:
        inner = entry.get("function") if isinstance(entry.get("function"), dict) else entry
        if isinstance(inner, dict) and inner.get("name") == tool:
            return list((inner.get("parameters") or {}).get("properties") or {})
    return []


class PlanFollower:
    """A fake-server responder: next plan call, or the composed answer once the plan is done."""

    def __init__(self, scripts: Sequence[PlanScript]) -> None:
        self.scripts = list(scripts)

    def script_for(self, request: RecordedRequest) -> PlanScript:
        texts = request.user_texts()
        for script in sorted(self.scripts, key=lambda s: -len(s.question)):
            if any(script.question in text for text in texts):
                return script
        raise UnknownQuestionError(f"no plan for a request whose user said {texts[:1]!r}")

    def __call__(self, request: RecordedRequest) -> Turn:
        script = self.script_for(request)
        outputs = list(request.tool_outputs().values())
        done = len(outputs)
        if done < len(script.plan) and request.body.get("tool_choice") != "none":
            step = script.plan[done]
            arguments = {name: None for name in _schema_properties(request, step.tool)}
            arguments.update(step.args)
            return Turn(output=(FunctionCall(step.tool, arguments),), delay_s=script.delay_s)
        answer = script.compose([*request.user_texts(), *outputs])
        return Turn(output=(Message(json.dumps(answer.wire(), ensure_ascii=False)),), delay_s=script.delay_s)
