"""Attachments: result blocks a tool hands to the user's answer (run figures), never to the model.

Why a reserved key: a tool implementation only returns a dict; ``{"_attach": [block, …]}`` in it is
taken out here and travels as ``ToolData.attachments`` to the answer, while the model learns only
that the user sees them (so it neither repeats the reference nor describes an image it never saw).
``{"_answer": [block, …]}`` is taken out the same way and ends the turn with those blocks as its
answer (``ToolData.answer``: ``ask_user``'s question and options).
"""

from __future__ import annotations

from typing import Any

ATTACH_KEY = "_attach"
ANSWER_KEY = "_answer"
SHOWN_NOTE = "shown to the user with your answer (do not describe it; you cannot see it)"


def take_attachments(result: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``result`` without its attachments (each named in an ``attached`` note) and the blocks."""
    raw = result.get(ATTACH_KEY)
    if ATTACH_KEY not in result:
        return result, []
    model = {key: value for key, value in result.items() if key != ATTACH_KEY}
    blocks = [block for block in raw or [] if isinstance(block, dict) and block.get("type")]
    if blocks:
        model["attached"] = [f"{block.get('content') or block['type']}: {SHOWN_NOTE}" for block in blocks]
    return model, blocks


def take_answer(result: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    """``result`` without the blocks that end the turn, and those blocks (``None`` when absent)."""
    if ANSWER_KEY not in result:
        return result, None
    blocks = [block for block in result[ANSWER_KEY] or [] if isinstance(block, dict)]
    return {key: value for key, value in result.items() if key != ANSWER_KEY}, blocks or None
