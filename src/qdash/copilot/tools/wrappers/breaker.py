"""Identical-call breaker: the same call a third time in one turn is refused.

Why: a model that repeats an identical call is looping; the earlier result is already in its
context. The executor returns the refusal with ``ToolOutput.stop_reason`` so the loop forces the
final answer. The engine has no breaker of its own: only here are the arguments normalised
(``Q16`` = ``16``), so only here is "identical" right.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any


def call_signature(name: str, args: dict[str, Any]) -> str:
    """Tool name + canonical JSON (sorted keys) of the validated, normalised arguments."""
    return name + ":" + json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)


def check_breaker(
    signatures: Counter[str], name: str, args: dict[str, Any], max_identical: int
) -> dict[str, Any] | None:
    """Count this call in the turn's ``signatures``; return the refusal when it exceeds
    ``max_identical`` (config), else None."""
    signature = call_signature(name, args)
    signatures[signature] += 1
    count = signatures[signature]
    if count <= max_identical:
        return None
    return {
        "error": f"Repeated identical call to {name} ({count} times this turn). "
        "Use the earlier result instead of calling again."
    }
