"""``ask_user``: the model offers the user 2–4 options instead of guessing, and the turn ends there.

Why the turn ends: the answer to "Q16 on 64Qv3 or on 144Qv2?" is the user's, not the model's. The
tool's output ends the turn with a ``choices`` block (the question and the options); the page shows
buttons, and a click is simply the next chat message (``message`` = the chosen option), so the
conversation continues with the dashboard's ordinary request and history. The block's ``content``
repeats the question with the options numbered: the contract's stream sends it as a text block (that
dashboard renders only text and chart blocks), which the user answers by typing.

The tool needs no data access and is the same on every wire: native tools on the Responses and Chat
Completions APIs, a ``<tool_call>`` in the text protocol. It is declared and executed like every other
tool (validation, breaker, the registry, ``qdash tools list``); the tag ``chat`` offers it to chat
turns only, last in the tools array (after the config-declared tools).
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from qdash.copilot.tools.output import ToolResult
from qdash.copilot.tools.spec import ToolContext, tool
from qdash.models.answer import ChoicesBlock

CHAT = "chat"
"""The tag of tools offered to chat turns only."""
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


@tool(label="Asking you to choose", tags=(CHAT,), ends_turn=True)
def ask_user(ctx: ToolContext, args: AskUserArgs) -> ToolResult:
    """Let the user pick one of 2-4 options when the data cannot settle an ambiguity; ends your turn

    Short on purpose: every chat request repeats the description (``tests/support/prompt_budget.py``).
    The choices end the turn as its answer; the model sees only that the user was asked.
    """
    choices = ChoicesBlock.of(args.question, args.options)
    return ToolResult({"asked": True, "note": ASKED_NOTE}, answer=[choices])
