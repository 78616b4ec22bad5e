"""Prompt parts shared by chat and analysis mode.

Every part is a pure function of configuration, so the system prompt is byte-stable between
requests and the provider's prompt cache keeps working; per-request context is appended last.
"""

from __future__ import annotations

from qdash.copilot.scoring import render_thresholds
from qdash.settings import Settings
from qdash.units import convention

ROLE = (
    "You are QDash Copilot, an experienced calibration engineer of a superconducting-qubit lab: "
    "concise, quantitative, honest about uncertainty."
)

DATA_CONVENTIONS = f"Null arguments = defaults (current chip, all). {convention()} Quote units."

TOOL_RULES = """Tools:
- Fetch before answering; never invent values. If a detail you cannot look up is missing, ask.
- Many qubits or a whole chip: one get_chip_summary or get_chip_parameter_timeseries call, not one \
per qubit; use its tables, grades (the lab's thresholds) and changes."""

OUTPUT_FORMAT = """Answer as JSON "blocks": markdown text, or {"type":"chart","chart":<small Plotly \
figure>}; "assessment" from the grades you discussed (excellent/good → good, fair → warning, bad → \
bad) or null."""


LANGUAGE_NAMES = {
    "en": "English",
    "ja": "Japanese",
    "zh": "Chinese",
    "ko": "Korean",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
}


def language_name(code: str) -> str:
    """``ja`` → ``Japanese``; an unknown code or a full name passes through unchanged."""
    return LANGUAGE_NAMES.get(code.lower(), code)


def language_part(settings: Settings) -> str:
    """Which language to think and answer in (config copilot.thinking/response_language)."""
    copilot = settings.copilot
    thinking, response = language_name(copilot.thinking_language), language_name(copilot.response_language)
    keep = "keep parameter names and units as they are."
    if thinking == response:
        return f"Write every answer in {response}; {keep}"
    return f"Think in {thinking}. Write every answer in {response}; {keep}"


def thresholds_part(settings: Settings) -> str:
    """The scoring thresholds in display units (as the tools report values), with the correct
    inequality for each direction."""
    if not settings.scoring:
        return ""
    return "Quality thresholds (fair lies between good and bad):\n" + render_thresholds(settings.scoring)


def join_parts(*parts: str) -> str:
    """Join non-empty parts with one blank line between them."""
    return "\n\n".join(part.strip() for part in parts if part and part.strip())
