"""History repair, run before every request (agent-loop.md §4).

Why before every request and not once: items come from several places (UI history, interrupted
turns, a model switch) and one bad item costs a 400 for the whole turn. The repair is deterministic
and idempotent (``repair(repair(h)) == repair(h)``), so it never changes a prefix that is already
valid and never breaks the prompt cache.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

from qdash.copilot.engine.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    Reasoning,
)

INTERRUPTED_OUTPUT = json.dumps({"error": "Tool call was interrupted before it returned a result."})


def repair_history(items: list[Item], origin: str | None = None) -> list[Item]:
    """Return a copy of ``items`` that every wire accepts.

    - calls with an empty ``call_id`` get a deterministic ``call_<hash>`` id;
    - a call without an output gets a synthetic "interrupted" output right after its batch;
    - an output without an earlier call is dropped;
    - reasoning from another model (``origin`` differs) is dropped and the server ids of the items
      it preceded are stripped (replay by value);
    - a reasoning item not followed by a non-reasoning output item is dropped, likewise stripping ids.
    """
    items = _fill_call_ids(items)
    items = _drop_foreign_or_dangling_reasoning(items, origin)
    return _pair_calls_and_outputs(items)


def _fill_call_ids(items: list[Item]) -> list[Item]:
    out: list[Item] = []
    for index, item in enumerate(items):
        if isinstance(item, FunctionCall) and not item.call_id:
            digest = hashlib.sha256(f"{index}:{item.name}:{item.arguments}".encode()).hexdigest()[:16]
            out.append(replace(item, call_id=f"call_{digest}"))
        else:
            out.append(item)
    return out


def _follows_reasoning(item: Item) -> bool:
    return isinstance(item, (FunctionCall, AssistantMessage))


def _drop_foreign_or_dangling_reasoning(items: list[Item], origin: str | None) -> list[Item]:
    out: list[Item] = []
    strip_ids = False
    for index, item in enumerate(items):
        if isinstance(item, Reasoning):
            foreign = origin is not None and item.origin is not None and item.origin != origin
            nxt = items[index + 1] if index + 1 < len(items) else None
            dangling = nxt is None or not _follows_reasoning(nxt)
            if foreign or dangling:
                strip_ids = True
                continue
            strip_ids = False
            out.append(item)
            continue
        if strip_ids and isinstance(item, (FunctionCall, AssistantMessage)):
            out.append(replace(item, id=None))
            continue
        if not isinstance(item, (FunctionCall, AssistantMessage, FunctionCallOutput)):
            strip_ids = False
        out.append(item)
    return out


def _pair_calls_and_outputs(items: list[Item]) -> list[Item]:
    answered = {i.call_id for i in items if isinstance(i, FunctionCallOutput)}
    seen_calls: set[str] = set()
    used_outputs: set[str] = set()
    out: list[Item] = []
    pending: list[str] = []  # calls of the current batch still waiting for an output

    def flush() -> None:
        for call_id in pending:
            if call_id not in answered:
                out.append(FunctionCallOutput(call_id, INTERRUPTED_OUTPUT))
        pending.clear()

    for item in items:
        if isinstance(item, FunctionCall):
            if pending and out and isinstance(out[-1], FunctionCallOutput):
                flush()
            seen_calls.add(item.call_id)
            pending.append(item.call_id)
            out.append(item)
        elif isinstance(item, FunctionCallOutput):
            if item.call_id not in seen_calls or item.call_id in used_outputs:
                continue
            used_outputs.add(item.call_id)
            out.append(item)
        else:
            # Anything else ends a batch; unanswered calls get their synthetic output first.
            # A reasoning item directly before a call belongs to the next batch's call.
            flush()
            out.append(item)
    flush()
    return out
