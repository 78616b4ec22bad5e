"""Per-turn state: one object per user message, shared by all its model rounds and tool calls.

Why an object and not globals: counters (rate limit, identical-call breaker), collected charts
and the session-less data store belong to one turn; two users' turns — or two turns of one user —
must never see each other's counts.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class TurnState:
    """Mutable state of one turn: counters change on the event loop; charts may arrive from pool threads."""

    calls: Counter[str] = field(default_factory=Counter)
    """Executed-or-refused calls per tool name (the rate limit counts these)."""
    signatures: Counter[str] = field(default_factory=Counter)
    """Calls per canonical (name, arguments) signature (the breaker counts these)."""
    charts: list[dict[str, Any]] = field(default_factory=list)
    """Intercepted figures in collection order; chart ``c<n>`` is ``charts[n-1]``."""
    turn_data: dict[str, Any] = field(default_factory=dict)
    """The data store of a turn without a session id (it lives and dies with the turn)."""
    _chart_lock: threading.Lock = field(default_factory=threading.Lock)

    def add_chart(self, figure: dict[str, Any]) -> str:
        """Collect a figure and return its id (``c1``, ``c2``, …) for the model to place it."""
        with self._chart_lock:
            self.charts.append(figure)
            return f"c{len(self.charts)}"
