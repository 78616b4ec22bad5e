"""Chat-mode instructions: role, language, conventions, tool rules, thresholds, answer format."""

from __future__ import annotations

import json
from typing import Any

from qdash.copilot.prompts.parts import (
    DATA_CONVENTIONS,
    OUTPUT_FORMAT,
    ROLE,
    TOOL_RULES,
    join_parts,
    language_part,
)
from qdash.settings import Settings


def build_chat_instructions(settings: Settings) -> str:
    """The fixed chat system prompt (no per-request data, so it is cacheable)."""
    return join_parts(ROLE, language_part(settings), DATA_CONVENTIONS, TOOL_RULES, OUTPUT_FORMAT)


def chat_context_note(chip_id: str | None, qid: str | None, qubit_params: dict[str, Any] | None) -> str:
    """Per-request context placed in the user turn (not the system prompt), e.g. preloaded params."""
    if not chip_id:
        return ""
    lines = [f"Context: chip {chip_id}" + (f", qubit {qid}" if qid else "") + "."]
    if qubit_params:
        compact = json.dumps(qubit_params, ensure_ascii=False, separators=(",", ":"))
        lines.append(f"Current parameters of qubit {qid}: {compact}")
    return "\n".join(lines)
