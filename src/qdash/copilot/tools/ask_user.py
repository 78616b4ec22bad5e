"""``ask_user``: the model offers the user 2–4 options instead of guessing, and the turn ends there.

Why the turn ends: the answer to "Q16 on 64Qv3 or on 144Qv2?" is the user's, not the model's. The
tool's output ends the turn with a ``choices`` block (the question and the options); the page shows
buttons, and a click is simply the next chat message (``message`` = the chosen option), so the
conversation continues with the dashboard's ordinary request and history. The block's ``content``
repeats the question with the options numbered: the contract's stream sends it as a text block (that
dashboard renders only text and chart blocks), which the user answers by typing.

The tool needs no data access and is the same on every wire: native tools on the Responses and Chat
Completions APIs, a ``<tool_call>`` in the text protocol.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from qdash.copilot.tools.executor import describe_validation_error
from qdash.engine.strict_schema import strict_schema_for_model
from qdash.engine.tool import ToolOutput

NAME = "ask_user"
LABEL = "Asking you to choose"
DESCRIPTION = (
    "Offer 2-4 short options when the question is ambiguous and the data cannot settle it; "
    "your turn ends, the pick is the next message."
)
"""Short on purpose: every chat request repeats it (``prompts/budget.py``)."""
ASKED_NOTE = "The question and options are shown to the user; the user's choice arrives as the next message."
MAX_QUESTION_CHARS = 500
MAX_OPTION_CHARS = 200


# Limits are checked by the validators, not written into the schema (every word there is paid on
# every request); no docstring either, it would become the schema's description.
class AskUserArgs(BaseModel):
    question: str
    options: list[str] = Field(min_length=2, max_length=4)

    @field_validator("question")
    @classmethod
    def _question(cls, question: str) -> str:
        question = question.strip()
        if not question or len(question) > MAX_QUESTION_CHARS:
            raise ValueError(f"give one sentence of 1-{MAX_QUESTION_CHARS} characters")
        return question

    @field_validator("options")
    @classmethod
    def _options(cls, options: list[str]) -> list[str]:
        options = [option.strip() for option in options]
        if any(not option or len(option) > MAX_OPTION_CHARS for option in options):
            raise ValueError(f"each option needs 1-{MAX_OPTION_CHARS} characters")
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
