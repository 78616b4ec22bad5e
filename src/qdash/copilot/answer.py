"""The dashboard's answer: parsing the model's text into an ``Answer``, chart placement, and the
status-line wording. The types themselves (the block union, ``Answer``) are ``qdash.models.answer``.

Why lenient: local models and the prompt-only fallback return fenced JSON, the legacy five-key
object or plain prose; every one of them must still become a valid result, and only an empty answer
is an error.

Charts: tools return ``(chart_id, figure)`` pairs (``ToolData.charts`` in ``ToolOutput.data``, named
one to one by ``ToolData.chart_ids``; the id is the one the model was told, or ``None``). A model
block ``{"type": "chart", "content": "c2", "chart": null}`` is a placeholder: it becomes chart ``c2`` in
place; charts the model did not place are appended after its blocks in collection order; a
placeholder naming no collected chart (or one already placed) is dropped, so an empty chart block
never reaches the user. Every chart — collected or written by the model — is NaN-sanitised
(non-finite numbers → ``null``) and a figure whose JSON exceeds 2 MiB is replaced in place by a
short text block saying it was too large (the user learns a chart is missing and why; the model
cannot fix it any more at this point). Blocks tools attach (``ToolData.attachments``, e.g. run
figures) follow, at most :data:`MAX_ATTACHMENTS`, each once.

:data:`DASHBOARD_ANSWER` is the engine output type (``qdash.engine.output.OutputType``) the
assistant's agents use; the engine itself knows none of this. Blocks are typed from the tool that
returns them (``ToolResult``, ``ToolData``) through ``Final.result`` until the API renders the
answer for one client (``qdash.api.sse``, ``qdash.api.stream_dialects``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from qdash.copilot.tools.output import output_data
from qdash.copilot.tools.wrappers.charts import MAX_CHART_BYTES
from qdash.engine.events import StatusTexts
from qdash.engine.output import strip_code_fence, usable_answer
from qdash.engine.providers.base import OutputFormat
from qdash.engine.tool import ToolOutput
from qdash.logging import get_logger
from qdash.models.answer import Answer, ApprovalBlock, Assessment, Block, ChartBlock, TextBlock

log = get_logger(__name__)

NamedChart = tuple[str | None, dict[str, Any]]
"""A collected chart: the id the model was told (``None`` if none) and the Plotly figure."""

_CHART_ID = re.compile(r"c\d{1,4}", re.IGNORECASE)

OUTPUT_FORMAT_NAME = "analysis_response"

_BLOCK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["text", "chart"]},
        "content": {"type": ["string", "null"]},
        "chart": {"type": ["object", "null"]},
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

_ASSESSMENTS: tuple[Assessment, ...] = ("good", "warning", "bad")
_LEGACY_KEYS = ("summary", "explanation", "potential_issues", "recommendations")


def parse_answer(text: str, charts: Sequence[NamedChart] = ()) -> Answer | None:
    """Turn the model's final text into an answer; ``None`` when there is nothing to show
    (empty text, or blocks that were only placeholders naming no collected chart).

    ``charts`` are the turn's collected charts: placed where the model's placeholders name them,
    the rest appended (module docstring).
    """
    stripped = strip_code_fence(text.strip()).strip()
    if not stripped:
        return None
    data = _load_json(stripped)
    if isinstance(data, dict):
        if isinstance(data.get("blocks"), list):
            result = _validate_blocks(data, charts)
            if result is not None:
                return result
            if any(_placeholder_id(*_fields(b)) for b in data["blocks"] if isinstance(b, dict)):
                return None  # only placeholders naming no chart: nothing to show, not raw JSON
        if any(key in data for key in _LEGACY_KEYS):
            return place_charts(legacy_to_result(data), charts)
    return place_charts(Answer.text(text.strip()), charts)


def _load_json(text: str) -> Any:
    if not text.startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def normalise_assessment(value: Any) -> Assessment | None:
    """Lower-cased good/warning/bad; anything else is ``None``."""
    if isinstance(value, str):
        for assessment in _ASSESSMENTS:
            if value.strip().lower() == assessment:
                return assessment
    return None


def _validate_blocks(data: dict[str, Any], charts: Sequence[NamedChart]) -> Answer | None:
    by_id: dict[str, dict[str, Any]] = {}
    for chart_id, figure in charts:
        if chart_id is not None:
            by_id.setdefault(chart_id.lower(), figure)  # ids are unique per turn; first one wins
    placed: set[str] = set()
    blocks: list[Block] = []
    for raw in data["blocks"]:
        if not isinstance(raw, dict):
            continue
        kind, content, chart = _fields(raw)
        if kind == "chart" and is_figure(chart):
            blocks.append(_safe_chart_block(chart))
            continue
        chart_id = _placeholder_id(kind, content, chart)
        if chart_id is not None:
            if chart_id in by_id and chart_id not in placed:
                placed.add(chart_id)
                blocks.append(_safe_chart_block(by_id[chart_id]))
            else:
                log.info("chart_placeholder_dropped", chart_id=chart_id, known=chart_id in by_id)
        elif isinstance(content, str) and content.strip():
            blocks.append(TextBlock(content=content))
    rest = [(i, f) for i, f in charts if i is None or i.lower() not in placed]
    blocks.extend(_chart_blocks(rest))
    if not blocks:
        return None
    return Answer(blocks=blocks, assessment=normalise_assessment(data.get("assessment")))


def _fields(block: dict[str, Any]) -> tuple[Any, Any, Any]:
    return block.get("type"), block.get("content"), block.get("chart")


def _placeholder_id(kind: Any, content: Any, chart: Any) -> str | None:
    """``"c2"`` for a model chart block ``{"type": "chart", "content": "c2", "chart": null}``.

    Lenient: case and surrounding space are ignored, and the id may sit in ``chart`` instead. A
    chart block whose content is prose (not an id) is not a placeholder; it stays as text.
    """
    if kind != "chart":
        return None
    for candidate in (content, chart):
        if isinstance(candidate, str) and _CHART_ID.fullmatch(candidate.strip()):
            return candidate.strip().lower()
    return None


def is_figure(value: Any) -> bool:
    """A Plotly figure as the UI renders it: a dict with a ``data`` array."""
    return isinstance(value, dict) and isinstance(value.get("data"), list)


def finite(value: Any) -> Any:
    """A copy with NaN/±Infinity replaced by ``None`` (JSON ``null``), tuples as lists and keys as
    strings, so its JSON is strict (a chart block, an SSE frame, a stored review)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(key): finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def chart_title(figure: Any) -> str | None:
    """The figure's layout title, ``None`` when it has none."""
    layout = figure.get("layout") if isinstance(figure, dict) else None
    title = layout.get("title") if isinstance(layout, dict) else None
    if isinstance(title, dict):
        title = title.get("text")
    return title.strip() if isinstance(title, str) and title.strip() else None


def _safe_chart_block(figure: dict[str, Any]) -> TextBlock | ChartBlock:
    """The figure as a chart block, NaN-sanitised; a text note instead when it is over 2 MiB."""
    try:
        clean: dict[str, Any] = finite(figure)
        size = len(json.dumps(clean, ensure_ascii=False, default=str).encode("utf-8"))
    except RecursionError:  # absurdly nested model JSON must not end the turn
        log.warning("chart_too_deep")
        return TextBlock(content="_A chart was not shown: it is nested too deeply to display._")
    if size <= MAX_CHART_BYTES:
        return ChartBlock(chart=clean)
    title = chart_title(clean)
    name = f'The chart "{title}"' if title else "A chart"
    log.warning("chart_too_large", bytes=size, title=title)
    return TextBlock(
        content=f"_{name} was not shown: it is too large to display "
        f"({size / 1024 / 1024:.1f} MiB; the limit is 2 MiB). Ask for fewer points or qubits._"
    )


def _chart_blocks(charts: Sequence[NamedChart]) -> list[Block]:
    """Blocks for collected charts in order; something that is not a figure is skipped."""
    blocks: list[Block] = []
    for chart_id, figure in charts:
        if is_figure(figure):
            blocks.append(_safe_chart_block(figure))
        else:
            log.warning("collected_chart_invalid", chart_id=chart_id)
    return blocks


def place_charts(answer: Answer, charts: Sequence[NamedChart]) -> Answer:
    """Append collected charts after an answer's blocks (a new answer; the input is unchanged).

    For answers without placeholders (legacy, prose, the loop's own messages); model blocks are
    resolved by :func:`parse_answer`.
    """
    return _with_blocks(answer, *_chart_blocks(charts))


def _with_blocks(answer: Answer, *blocks: Block) -> Answer:
    return answer.model_copy(update={"blocks": [*answer.blocks, *blocks]})


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)] if str(value).strip() else []


def legacy_to_text(data: dict[str, Any]) -> str:
    """The legacy five-key object as markdown, empty sections omitted."""
    sections = [text for key in ("summary", "explanation") if (text := str(data.get(key) or "").strip())]
    for key, title in (("potential_issues", "Potential Issues"), ("recommendations", "Recommendations")):
        entries = _as_list(data.get(key))
        if entries:
            sections.append(f"**{title}:**\n" + "\n".join(f"- {entry}" for entry in entries))
    return "\n\n".join(sections)


def legacy_to_result(data: dict[str, Any]) -> Answer:
    """One text block; a null or unknown legacy assessment reads as ``"warning"``."""
    assessment = normalise_assessment(data.get("assessment")) or "warning"
    text = legacy_to_text(data) or json.dumps(data, ensure_ascii=False)
    return Answer(blocks=[TextBlock(content=text)], assessment=assessment)


NO_TOOL_ANSWER = "_The tool that ended this turn returned no answer it could show._"
"""What a turn ended by a tool shows when none of the tool's blocks is valid (a tool bug, logged)."""

MAX_ATTACHMENTS = 6
"""Blocks tools may attach to one answer (run figures); later ones are left out."""


def _charts(outputs: Sequence[ToolOutput]) -> list[NamedChart]:
    return [chart for output in outputs for chart in output_data(output).named_charts]


def _attachments(outputs: Sequence[ToolOutput]) -> list[Block]:
    """The blocks tools attached to the turn's answer (after the model's blocks and charts)."""
    attachments: list[Block] = []
    for output in outputs:
        for block in output_data(output).attachments:
            if block not in attachments and len(attachments) < MAX_ATTACHMENTS:
                attachments.append(block)
    return attachments


class DashboardAnswer:
    """The answer as the engine's output type (``qdash.engine.output.OutputType``): every method
    returns an :class:`~qdash.models.answer.Answer`, which ``Final.result`` carries to the API."""

    format = OutputFormat(OUTPUT_FORMAT_NAME, OUTPUT_SCHEMA, OUTPUT_INSTRUCTION)

    def usable(self, text: str) -> bool:
        return usable_answer(text)

    def parse(self, text: str, outputs: Sequence[ToolOutput]) -> Answer | None:
        answer = parse_answer(text, _charts(outputs))
        return None if answer is None else _with_blocks(answer, *_attachments(outputs))

    def fallback(self, message: str, outputs: Sequence[ToolOutput]) -> Answer:
        return _with_blocks(place_charts(Answer.text(message), _charts(outputs)), *_attachments(outputs))

    def tool_answer(self, answer: ToolOutput, outputs: Sequence[ToolOutput]) -> Answer:
        """The tool's blocks (``ask_user``'s question and options), then what the turn collected;
        an ``approval`` block (a write tool's proposal) comes last, after the text and charts, where
        the newest upstream dashboard expects its card."""
        blocks = output_data(answer).answer or []
        cards = [block for block in blocks if isinstance(block, ApprovalBlock)]
        rest = [block for block in blocks if not isinstance(block, ApprovalBlock)]
        blocks = [*rest, *_chart_blocks(_charts(outputs)), *_attachments(outputs), *cards]
        return Answer(blocks=blocks) if blocks else Answer.text(NO_TOOL_ANSWER)


DASHBOARD_ANSWER = DashboardAnswer()

DASHBOARD_STATUS = StatusTexts(thinking="AI is thinking...", after_tool="Analyzing {label} results...")
"""The dashboard's status line while the model works."""
