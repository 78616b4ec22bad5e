"""The two kinds of run the dashboard starts (a chat turn, an analysis) and the texts each shows.

Why one table: the assistant (its status lines and failures) and the API (timeouts, a run that
ends without an answer) must word a run's events the same way, and the dashboard shows them as
they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["chat", "analysis"]


@dataclass(frozen=True)
class RunTexts:
    step: str
    """The ``step`` of the run's status line and of its failures."""
    running: str
    """The status line while the model works."""
    fail_prefix: str
    """Every failure's detail starts with it (``"Chat failed: ..."``)."""
    done: str
    """The ``complete`` status line before the answer."""

    def failed_detail(self, reason: object) -> str:
        return f"{self.fail_prefix}: {reason}"


RUN_TEXTS: dict[Mode, RunTexts] = {
    "chat": RunTexts("run_chat", "AI is responding...", "Chat failed", "Done"),
    "analysis": RunTexts("run_analysis", "AI is analyzing...", "Analysis failed", "Analysis complete"),
}
