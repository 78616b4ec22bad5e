"""The blocks result (api-contract.md §5): the schema we ask for and the lenient parser.

Why lenient: local models and the prompt-only fallback return fenced JSON, the legacy five-key
object or plain prose; every one of them must still become a valid result, and only an empty answer
is an error.
"""

from __future__ import annotations

import json
import re
from typing import Any

OUTPUT_FORMAT_NAME = "analysis_response"

_BLOCK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["text", "chart"]},
        "content": {"type": ["string", "null"]},
        "chart": {
            "anyOf": [
                {"type": "object", "description": "Plotly figure: {data: [...], layout: {...}}"},
                {"type": "null"},
            ]
        },
    },
    "required": ["type", "content", "chart"],
    "additionalProperties": False,
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "blocks": {"type": "array", "items": _BLOCK_SCHEMA, "minItems": 1},
        "assessment": {"type": ["string", "null"], "enum": ["good", "warning", "bad", None]},
    },
    "required": ["blocks"],
    "additionalProperties": False,
}
"""Sent as ``text.format`` json_schema with ``strict: false`` (``chart`` is free-form)."""

OUTPUT_INSTRUCTION = (
    'Reply with one JSON object only: {"blocks": [{"type": "text", "content": "<markdown>", '
    '"chart": null}], "assessment": "good" | "warning" | "bad" | null}.'
)
"""Appended to the instructions when a server cannot enforce the JSON format (prompt fallback)."""

_ASSESSMENTS = ("good", "warning", "bad")
_LEGACY_KEYS = ("summary", "explanation", "potential_issues", "recommendations")
_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def strip_code_fence(text: str) -> str:
    """The inside of a fenced block that wraps the whole text, else the text itself."""
    match = _FENCE.match(text)
    return match.group(1) if match else text


def parse_answer(text: str) -> dict[str, Any] | None:
    """Turn the model's final text into a blocks result; ``None`` when the text is empty."""
    stripped = strip_code_fence(text.strip()).strip()
    if not stripped:
        return None
    data = _load_json(stripped)
    if isinstance(data, dict):
        if isinstance(data.get("blocks"), list):
            result = _validate_blocks(data)
            if result is not None:
                return result
        if any(key in data for key in _LEGACY_KEYS):
            return legacy_to_result(data)
    return {"blocks": [text_block(text.strip())], "assessment": None}


def _load_json(text: str) -> Any:
    if not text.startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def text_block(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content, "chart": None}


def chart_block(figure: dict[str, Any]) -> dict[str, Any]:
    return {"type": "chart", "content": None, "chart": figure}


def normalise_assessment(value: Any) -> str | None:
    """Lower-cased good/warning/bad; anything else is ``None``."""
    if isinstance(value, str) and value.strip().lower() in _ASSESSMENTS:
        return value.strip().lower()
    return None


def _validate_blocks(data: dict[str, Any]) -> dict[str, Any] | None:
    blocks: list[dict[str, Any]] = []
    for raw in data["blocks"]:
        if not isinstance(raw, dict):
            continue
        kind = raw.get("type")
        content = raw.get("content")
        chart = raw.get("chart")
        if kind == "chart" and isinstance(chart, dict) and isinstance(chart.get("data"), list):
            blocks.append(chart_block(chart))
        elif isinstance(content, str) and content.strip():
            blocks.append(text_block(content))
    if not blocks:
        return None
    return {"blocks": blocks, "assessment": normalise_assessment(data.get("assessment"))}


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)] if str(value).strip() else []


def legacy_to_text(data: dict[str, Any]) -> str:
    """The legacy five-key object as markdown (api-contract.md §5), empty sections omitted."""
    sections: list[str] = []
    for key in ("summary", "explanation"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            sections.append(value.strip())
    for key, title in (("potential_issues", "Potential Issues"), ("recommendations", "Recommendations")):
        entries = _as_list(data.get(key))
        if entries:
            sections.append(f"**{title}:**\n" + "\n".join(f"- {entry}" for entry in entries))
    return "\n\n".join(sections)


def legacy_to_result(data: dict[str, Any]) -> dict[str, Any]:
    """One text block; a null or unknown legacy assessment reads as ``"warning"``."""
    assessment = normalise_assessment(data.get("assessment")) or "warning"
    text = legacy_to_text(data) or json.dumps(data, ensure_ascii=False)
    return {"blocks": [text_block(text)], "assessment": assessment}


def append_charts(result: dict[str, Any], charts: list[dict[str, Any]]) -> dict[str, Any]:
    """Place intercepted charts after the model's blocks (a new dict; the input is unchanged)."""
    return {**result, "blocks": [*result["blocks"], *(chart_block(c) for c in charts)]}
