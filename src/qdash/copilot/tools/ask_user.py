"""``ask_user``: the model offers the user 2–4 options instead of guessing, and the turn ends there.

Why the turn ends: the answer to "Q16 on 64Qv3 or on 144Qv2?" is the user's, not the model's. The
tool's output ends the turn with a ``choices`` block (the question and the options); the page shows
buttons, and a click is simply the next chat message (``message`` = the chosen option), so the
conversation continues with the dashboard's ordinary request and history. The block's ``content``
repeats the question with the options numbered, so a client that knows no ``choices`` block (the
dashboard) still shows something the user can answer by typing.

The tool needs no data access and is the same on every wire: native tools on the Responses and Chat
Completions APIs, a ``<tool_call>`` in the text protocol.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints, ValidationError, field_validator

from qdash.copilot.engine.strict_schema import strict_schema_for_model
from qdash.copilot.engine.tool import ToolOutput
from qdash.copilot.tools.executor import describe_validation_error

NAME = "ask_user"
LABEL = "Asking you to choose"
DESCRIPTION = (
    "Ask the user to choose between 2-4 short options when the question is ambiguous in a way the "
    "data cannot settle (which chip, which qubit, which time range). The options are shown as "
    "buttons; your turn ends here and the user's choice arrives as the next message. Do not use it "
    "when the data or the conversation already answers the question."
)
ASKED_NOTE = "The question and options are shown to the user; the user's choice arrives as the next message."

Option = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class AskUserArgs(BaseModel):
    question: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)] = Field(
        description="the question, one sentence."
    )
    options: list[Option] = Field(
        min_length=2, max_length=4, description="2-4 distinct short answers the user can click"
    )

    @field_validator("options")
    @classmethod
    def _distinct(cls, options: list[str]) -> list[str]:
        if len({option.casefold() for option in options}) != len(options):
            raise ValueError("options must be distinct")
        return options


def choices_block(question: str, options: list[str]) -> dict[str, Any]:
    """The answer block: ``choices`` for clients with buttons, ``content`` as readable fallback."""
    numbered = "\n".join(f"{index}. {option}" for index, option in enumerate(options, 1))
    return {
        "type": "choices",
        "content": f"{question}\n\n{numbered}",
        "chart": None,
        "choices": {"question": question, "options": list(options)},
    }


class AskUserTool:
    """The engine's ``Tool`` protocol; stateless, so one instance serves every turn."""

    name = NAME
    description = DESCRIPTION
    label = LABEL

    def __init__(self) -> None:
        self._parameters = strict_schema_for_model(AskUserArgs)

    @property
    def parameters(self) -> dict[str, Any]:
        return self._parameters

    async def __call__(self, arguments: dict[str, Any]) -> ToolOutput:
        try:
            args = AskUserArgs.model_validate(arguments)
        except ValidationError as exc:
            message = f"{describe_validation_error(NAME, exc)}. Give a question and 2-4 distinct options."
            return ToolOutput(json.dumps({"error": message}, ensure_ascii=False), is_error=True)
        text = json.dumps({"asked": True, "note": ASKED_NOTE}, ensure_ascii=False)
        return ToolOutput(text, answer=[choices_block(args.question, args.options)])
