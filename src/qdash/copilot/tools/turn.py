"""What the calibration tools keep of one turn: the engine's ``RunContext.deps`` for a copilot turn.

Why an object and not globals: the identical-call counts, the collected charts and the data store
belong to one turn; two users' turns — or two turns of one user — must never see each other's.
The engine counts calls and failures itself (``RunContext.calls``, ``RunContext.failures``); this
holds only what the engine cannot know (normalised arguments, charts, where results are stored).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qdash.copilot.tools.spec import ToolContext
    from qdash.copilot.tools.wrappers.data_store import DataStore


@dataclass
class TurnState:
    """One turn of one caller: counters change on the event loop; charts may arrive from pool threads."""

    context: ToolContext
    """Who is asking and where (the project never comes from the model), with ``store`` set."""
    store: DataStore
    """The session's data store, or the turn's own in memory without a session id."""
    signatures: Counter[str] = field(default_factory=Counter)
    """Calls per canonical (name, arguments) signature (the breaker counts these)."""
    charts: list[dict[str, Any]] = field(default_factory=list)
    """Intercepted figures in collection order; chart ``c<n>`` is ``charts[n-1]``."""
    _chart_lock: threading.Lock = field(default_factory=threading.Lock)

    def add_chart(self, figure: dict[str, Any]) -> str:
        """Collect a figure and return its id (``c1``, ``c2``, …) for the model to place it."""
        with self._chart_lock:
            self.charts.append(figure)
            return f"c{len(self.charts)}"
