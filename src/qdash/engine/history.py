"""History repair, run before every request.

Why before every request and not once: items come from several places (UI history, interrupted
turns, a model switch) and one bad item costs a 400 for the whole turn. The repair is deterministic
and idempotent (``repair(repair(h)) == repair(h)``), so it never changes a prefix that is already
valid and never breaks the prompt cache.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

from qdash.engine.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    Reasoning,
)

INTERRUPTED_OUTPUT = json.dumps({"error": "Tool call was interrupted before it returned a result."})


def repair_history(items: list[Item], origin: str | None = None) -> list[Item]:
    """Return a copy of ``items`` that every wire accepts.

    - calls with an empty ``call_id`` get a deterministic ``call_<hash>`` id; a later call reusing a
      ``call_id`` is dropped (its output cannot be told apart from the first one's);
    - a call without an output gets a synthetic "interrupted" output right after its batch;
    - an output without an earlier call is dropped;
    - reasoning from another model (``origin`` differs) is dropped and the server ids of the items
      it preceded are stripped (replay by value);
    - a reasoning item not followed by a non-reasoning output item is dropped, likewise stripping ids.
    """
    items = _drop_duplicate_calls(_fill_call_ids(items))
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


def _drop_duplicate_calls(items: list[Item]) -> list[Item]:
    seen: set[str] = set()
    out: list[Item] = []
    for item in items:
        if isinstance(item, FunctionCall):
            if item.call_id in seen:
                continue
            seen.add(item.call_id)
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
    """Outputs directly after their batch of calls, in call order; synthetic ones for the missing.

    A batch is a run of calls (reasoning items between parallel calls included) up to the first
    output or the next non-call item. Every call takes the first output with its ``call_id`` that
    comes after it, wherever it is (Chat needs the tool messages right after the calls, C2);
    outputs before their call or without one are dropped.
    """
    outputs: dict[str, FunctionCallOutput] = {}
    called: set[str] = set()
    for item in items:
        if isinstance(item, FunctionCall):
            called.add(item.call_id)
        elif isinstance(item, FunctionCallOutput) and item.call_id in called:
            outputs.setdefault(item.call_id, item)

    out: list[Item] = []
    pending: list[str] = []
    answered = False  # an output of the current batch was met: the batch is closed

    def flush() -> None:
        nonlocal answered
        for call_id in pending:
            out.append(outputs.get(call_id) or FunctionCallOutput(call_id, INTERRUPTED_OUTPUT))
        pending.clear()
        answered = False

    for index, item in enumerate(items):
        if isinstance(item, FunctionCallOutput):
            answered = answered or item.call_id in pending
            continue
        if isinstance(item, FunctionCall):
            if answered:
                flush()
            pending.append(item.call_id)
            out.append(item)
            continue
        nxt = items[index + 1] if index + 1 < len(items) else None
        in_batch = isinstance(item, Reasoning) and isinstance(nxt, FunctionCall) and pending and not answered
        if not in_batch:
            flush()
        out.append(item)
    flush()
    return out
