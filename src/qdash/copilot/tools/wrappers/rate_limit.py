"""Per-turn rate limit for rate-limited tools (``get_parameter_timeseries``).

Why: upstream measured models fetching one qubit at a time for chip-wide questions, about 20 % of
the time despite the prompt; the refusal text names the chip-wide tool so the model switches.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

CHIP_WIDE_HINT = (
    "Use get_chip_parameter_timeseries instead — it returns per-qubit timeseries arrays "
    "(value + timestamp, suitable for plotting), stats, and trends for ALL qubits in one call."
)


def check_rate_limit(count: int, name: str, limit: int) -> dict[str, Any] | None:
    """``count``: this turn's calls of ``name`` so far, this one included (the engine counts them).
    From call ``limit + 1`` on return the exact refusal (not executed)."""
    if count <= limit:
        return None
    log.warning("rate limit: %s called %d times this turn (limit %d)", name, count, limit)
    return {"error": f"Too many {name} calls ({count}). {CHIP_WIDE_HINT}"}
