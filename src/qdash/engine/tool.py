"""What the engine knows of a tool: a name, a description, a strict JSON schema, an async call
with the turn's :class:`RunContext`.

The engine never imports a calibration tool; anything with this shape can be used, which is what
lets the engine serve as a library for any agent. Why a context at the call: a tool is declared
once and shared by every turn, while what a call needs of its turn (the application's state, the
counts of calls so far) changes per turn; the engine hands it over, so nothing is rebuilt per turn.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

DepsT = TypeVar("DepsT")


@dataclass
class RunContext(Generic[DepsT]):
    """One turn as its tools see it: the application's ``deps`` and the engine's counters.

    The engine makes one per turn and passes it to every call; the application chooses ``deps``
    (who is asking, where results go). The counters are the engine's business: it counts before a
    call runs, so a tool reading ``calls`` sees its own call included."""

    deps: DepsT
    calls: Counter[str] = field(default_factory=Counter)
    """Calls per tool name this turn that reached the tool (the refused-unrun ones excluded)."""
    failures: Counter[str] = field(default_factory=Counter)
    """Consecutive failed calls per tool name; a success resets it."""


@runtime_checkable
class Tool(Protocol):
    """One callable tool as the loop sees it."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]:
        """Strict-mode JSON Schema of the arguments object."""
        ...

    @property
    def label(self) -> str:
        """Human status label, e.g. "Fetching qubit parameters"."""
        ...

    @property
    def ends_turn(self) -> bool:
        """Whether a call of it ends the turn with its own answer (a question for the user, a
        proposal to approve). A round runs at most one such call: the answer shows one."""
        ...

    async def __call__(self, ctx: RunContext[Any], arguments: dict[str, Any], /) -> ToolOutput: ...


@dataclass(frozen=True)
class ToolOutput:
    """The result of one call: text for the model, plus application data that bypasses the model."""

    model_text: str
    """JSON text the model sees (``{"error": …}`` on failure)."""
    is_error: bool = False
    stop_reason: str | None = None
    """Set by a wrapper (e.g. the identical-call breaker) to make the loop force the final answer;
    the text becomes the reason in the forced-final note, e.g. "Detected repeated identical tool calls"."""
    ends_turn: bool = False
    """The call's output is the turn's answer, without another model round: the loop hands it to
    the output type's ``tool_answer`` (e.g. a question for the user, whose reply is the next message)."""
    data: Any = None
    """Whatever the application's tool returns beside the text (e.g. figures for the answer). The
    engine never reads it: it passes it to the output type and on ``ToolFinished`` events."""
