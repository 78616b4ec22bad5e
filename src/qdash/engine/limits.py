"""Per-turn budgets and the texts of the forced final answer.

Why a separate frozen object: the application builds it from its own configuration once per
request (QDash: ``qdash.copilot.engine_config.run_limits``; local models get the larger round
budget) and tests build it directly with tiny numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

# ``meta.stop_reason`` is one of: completed, max_rounds, max_tool_calls, token_budget, time_budget,
# repeated_calls, incomplete, awaiting_user (a tool such as ask_user ended the turn with its own
# answer); cancelled turns end without a terminal event for the consumer.
REASON_TEXT = {
    "max_rounds": "Tool round limit reached",
    "max_tool_calls": "Tool call limit reached",
    "token_budget": "Token budget exhausted",
    "time_budget": "Time budget exhausted",
    "repeated_calls": "Detected repeated identical tool calls",
    "incomplete": "The answer was cut off",
}

FORCED_FINAL_MESSAGE = (
    "Tool execution was stopped ({reason}). Do not call any more tools. Using only the tool results "
    "above, produce the best possible final answer{in_format}. Say what is missing; do not invent data."
)
IN_FORMAT = " in the required JSON format"
"""Completes the forced-final message when the output type asks for a structured answer."""
LAST_ROUND_NOTE = "1 tool round left: plan your final answer; you may call tools once more at most."


def with_note(output: str, note: str) -> str:
    """A tool output carrying ``note``: a ``_note`` key in a JSON object, else a bracketed line."""
    try:
        data = json.loads(output)
    except ValueError:
        data = None
    if isinstance(data, dict):
        return json.dumps({**data, "_note": note}, ensure_ascii=False)
    return f"{output}\n\n[{note}]"


@dataclass(frozen=True)
class RunLimits:
    """Budgets for one turn."""

    max_rounds: int = 10
    max_tool_calls: int = 40
    max_tokens: int = 300_000
    time_s: float = 120.0
    final_grace_s: float = 60.0
    """Extra time the forced final answer may take after the time budget ran out."""
    max_retries: int = 2
    """Loop-level replays of a round whose stream failed after it started."""
    retry_base_s: float = 0.5
    """Back-off without Retry-After: ``retry_base_s·2ⁿ`` capped at 8 s, up to −25 % jitter."""
    max_concurrency: int = 8
    tool_timeout_s: float = 20.0
    log_tool_payloads: bool = False
