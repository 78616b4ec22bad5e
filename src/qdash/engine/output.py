"""The answer's type: what the model is asked to produce and how its final text becomes a result.

Why a protocol: the engine knows no answer format. An application hands the agent an
``output_type`` (the dashboard's blocks: ``qdash.copilot.answer``); the loop asks it for the
structured format to request, whether a cut-off answer is still usable and how to build the
:class:`~qdash.engine.events.Final` result, and passes it every tool output of the turn in order,
so the data tools return beside their text (``ToolOutput.data``) reach the answer without the loop
reading it. :class:`TextOutput`, the default, is the final text itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:  # the providers import this module's fence helper: no runtime import back
    from qdash.engine.providers.base import OutputFormat
    from qdash.engine.tool import ToolOutput

ResultT_co = TypeVar("ResultT_co", covariant=True)

_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


class OutputType(Protocol[ResultT_co]):
    """An answer format; ``outputs`` are the turn's tool outputs in call order, round after round."""

    @property
    def format(self) -> OutputFormat | None:
        """The structured answer to request (``text.format`` / ``response_format``); ``None``: free text."""
        ...

    def usable(self, text: str) -> bool:
        """Whether an answer the model was cut off in (``status: incomplete``) can still be used."""
        ...

    def parse(self, text: str, outputs: Sequence[ToolOutput]) -> ResultT_co | None:
        """The result of the model's final text; ``None`` when there is nothing to show."""
        ...

    def fallback(self, message: str, outputs: Sequence[ToolOutput]) -> ResultT_co:
        """The result when the model gave no answer after a budget ran out: the loop's ``message``
        says why and which steps completed."""
        ...

    def tool_answer(self, answer: ToolOutput, outputs: Sequence[ToolOutput]) -> ResultT_co:
        """The result when a tool ended the turn with its own answer (``ToolOutput.ends_turn``)."""
        ...


@dataclass(frozen=True)
class TextOutput:
    """The final text as the result (stripped); ``format`` asks for structured text (e.g. JSON)
    that the caller reads itself."""

    format: OutputFormat | None = None

    def usable(self, text: str) -> bool:
        return usable_answer(text)

    def parse(self, text: str, outputs: Sequence[ToolOutput]) -> str | None:
        return text.strip() or None

    def fallback(self, message: str, outputs: Sequence[ToolOutput]) -> str:
        return message

    def tool_answer(self, answer: ToolOutput, outputs: Sequence[ToolOutput]) -> str:
        return answer.model_text


def strip_code_fence(text: str) -> str:
    """The inside of a fenced block that wraps the whole text, else the text itself."""
    match = _FENCE.match(text)
    return match.group(1) if match else text


def usable_answer(text: str) -> bool:
    """Whether a cut-off answer can still be used: non-empty, and complete JSON if it is JSON."""
    stripped = strip_code_fence(text.strip()).strip()
    if not stripped:
        return False
    if not stripped.startswith("{"):
        return True
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True
