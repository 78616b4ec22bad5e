"""The two upstream dashboards' stream handling, written in Python from the researched facts
(``docs/upstream-dashboard-stream.md``), to consume our real stream over HTTP in tests.

- ``SSEBuffer``: ``consumeSSEEvents``: complete blocks up to the last blank line, ``event: ``
  sliced at 7 characters, ``data:`` lines joined by ``\\n``, blocks without an event name or data
  (heartbeats) dropped. Fed with whatever chunks the socket delivers, as the UI's reader loop is.
- ``NewDashboardTurn``: the newest dashboard's turn (every event's data parsed as JSON first;
  ``delta``/``thinking`` folded into text and thinking steps, ``tool_start``/``tool_end`` into tool
  steps, ``status`` into the status line, ``result`` saved with the work trace, ``error`` thrown,
  a stream that closes without a ``result`` is an error).
- ``OldDashboardTurn``: the dashboard our contract follows (``status``, ``result``, ``error`` only).
- What the user sees: ``model_menu_default`` (the menu's first entry, both generations),
  ``old_dashboard_renders`` / ``new_dashboard_renders`` (which blocks are drawn), ``shown_text``
  (the text a stored answer puts on screen) and ``trace_summary`` (the newest dashboard's
  collapsed trace line).

Both record every message the UI would store, so a test can see a duplicated answer or a second
terminal handling, which a lenient parser would hide. ``old_dashboard_view`` and
``new_dashboard_view`` say what each draws for a stored message (``docs/upstream-dashboard-stream.md``
§6 and §10): the text, the tables, the charts and the images with the URL each one loads.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

CLOSED_EARLY = "The connection closed before the answer was complete"


@dataclass
class SSEBuffer:
    """Incremental ``consumeSSEEvents`` over raw socket chunks (UTF-8 decoded in stream mode)."""

    buffer: str = ""
    decoder: Any = field(default_factory=codecs.getincrementaldecoder("utf-8"))

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        self.buffer += self.decoder.decode(chunk)
        cut = self.buffer.rfind("\n\n")
        if cut == -1:
            return []
        complete, self.buffer = self.buffer[:cut], self.buffer[cut + 2 :]
        events = []
        for block in complete.split("\n\n"):
            if not block.strip():
                continue
            name, data = "", []
            for line in block.split("\n"):
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif line.startswith("data:"):
                    data.append(line[5:])
            if name and "\n".join(data):
                events.append((name, "\n".join(data)))
        return events


class StreamError(Exception):
    """What the UI throws inside its reader loop."""


def _tool_step(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "tool",
        "id": payload.get("id") or f"{payload['tool']}-local",
        "tool": payload["tool"],
        "label": payload.get("label") or payload["tool"],
        "args": payload.get("args"),
        "status": "running",
    }


@dataclass
class NewDashboardTurn:
    """One turn of the newest dashboard; ``saved`` is every assistant message it stored, in order."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    status_message: str | None = None
    statuses: list[str] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)
    live_answers: list[str] = field(default_factory=list)
    """The streaming answer text after each event (what the live view renders as markdown)."""
    got_result: bool = False
    sse: SSEBuffer = field(default_factory=SSEBuffer)

    def consume(self, chunks: list[bytes]) -> None:
        try:
            for chunk in chunks:
                for name, data in self.sse.feed(chunk):
                    self._handle(name, json.loads(data))
            if not self.got_result:
                raise StreamError(CLOSED_EARLY)
        except (StreamError, ValueError) as exc:
            self.saved.append(f"Error: {exc}")

    def _handle(self, name: str, payload: dict[str, Any]) -> None:
        if name == "delta":
            self._append("text", payload["text"])
        elif name == "thinking":
            self._append("thinking", payload["text"])
        elif name == "tool_start":
            self.steps.append(_tool_step(payload))
        elif name == "tool_end":
            self._end_tool(payload)
        elif name == "status":
            self.status_message = payload.get("message")
            self.statuses.append(str(self.status_message))
        elif name == "result":
            self.got_result = True
            self._finish(payload)
        elif name == "error":
            raise StreamError(payload["detail"])
        self.live_answers.append(self.answer_text())

    def _append(self, kind: str, text: str) -> None:
        if self.steps and self.steps[-1]["kind"] == kind:
            self.steps[-1]["text"] += text
        else:
            self.steps.append({"kind": kind, "text": text})

    def _end_tool(self, payload: dict[str, Any]) -> None:
        running = [s for s in self.steps if s["kind"] == "tool"]
        if payload.get("id") is not None:
            match = [s for s in running if s["id"] == payload["id"]]
        else:
            match = [s for s in running if s["tool"] == payload["tool"] and s["status"] == "running"]
        if match:
            step = match[0]
            step["status"] = "error" if payload.get("is_error") else "done"
            figures = payload.get("figures")
            if isinstance(figures, list) and any(isinstance(f, str) and f for f in figures):
                step["figures"] = [f for f in figures if isinstance(f, str) and f]

    def _answer_start(self) -> int:
        index = len(self.steps)
        while index > 0 and self.steps[index - 1]["kind"] == "text":
            index -= 1
        return index

    def answer_text(self) -> str:
        return "".join(step["text"] for step in self.steps[self._answer_start() :])

    def _finish(self, payload: dict[str, Any]) -> None:
        if not isinstance(payload.get("blocks"), list):
            text = (
                payload["explanation"]
                if isinstance(payload.get("explanation"), str)
                else json.dumps(payload, ensure_ascii=False)
            )
            payload = {"blocks": [{"type": "text", "content": text, "chart": None}], "assessment": None}
        work = self.steps[: self._answer_start()]
        self.saved.append(
            json.dumps({**payload, "trace": {"steps": work}} if work else payload, ensure_ascii=False)
        )


def new_dashboard_renders(block: dict[str, Any]) -> bool:
    """Whether the newest dashboard shows a block at all (text, chart, ask, approval)."""
    kind = block.get("type")
    return bool(
        (kind == "text" and block.get("content"))
        or (kind == "chart" and block.get("chart"))
        or (kind == "ask" and block.get("ask"))
        or (kind == "approval" and block.get("approval"))
    )


@dataclass
class OldDashboardTurn:
    """One turn of the dashboard our contract follows."""

    statuses: list[str] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)
    sse: SSEBuffer = field(default_factory=SSEBuffer)

    def consume(self, chunks: list[bytes]) -> None:
        try:
            for chunk in chunks:
                for name, data in self.sse.feed(chunk):
                    if name == "status":
                        self.statuses.append(json.loads(data)["message"])
                    elif name == "result":
                        result = json.loads(data)
                        blocks = isinstance(result.get("blocks"), list)
                        self.saved.append(
                            json.dumps(result, ensure_ascii=False)
                            if blocks
                            else result.get("explanation", data)
                        )
                    elif name == "error":
                        raise StreamError(json.loads(data)["detail"])
        except StreamError as exc:
            self.saved.append(f"Error: {exc}")


def old_dashboard_renders(block: dict[str, Any]) -> bool:
    """Whether the older dashboard shows a block: only ``text`` (with content) and ``chart``."""
    kind = block.get("type")
    return bool((kind == "text" and block.get("content")) or (kind == "chart" and block.get("chart")))


def shown_text(saved: str, renders: Any) -> str:
    """The text a stored answer puts on screen under a dashboard's block rule (``renders``): text
    blocks' content, an ask card's question and option labels; "" is an empty bubble."""
    shown = []
    for block in json.loads(saved)["blocks"]:
        if not renders(block):
            continue
        if block["type"] == "ask":
            ask = block["ask"]
            shown += [ask["question"], *(option["label"] for option in ask["options"])]
        elif block["type"] == "text":
            shown.append(block["content"])
    return "\n".join(shown)


def trace_summary(saved: str) -> str:
    """The newest dashboard's collapsed trace line (``ChatTraceSummary`` in ``ChatTrace.tsx``,
    without the duration): "Thought, used 2 tools", plus " · some steps failed" when a tool step
    ended with ``is_error``."""
    steps = json.loads(saved).get("trace", {}).get("steps", [])
    tools = sum(1 for step in steps if step["kind"] == "tool")
    parts = ["Thought"] if any(step["kind"] == "thinking" for step in steps) else []
    if tools:
        parts.append(f"used {tools} tool{'' if tools == 1 else 's'}")
    text = ", ".join(parts) or "Worked"
    failed = any(step["kind"] == "tool" and step["status"] == "error" for step in steps)
    return text[0].upper() + text[1:] + (" · some steps failed" if failed else "")


def _menu_model(value: Any) -> dict[str, Any] | None:
    """``readModel``: an entry counts only with a string ``provider`` and ``name``."""
    named = isinstance(value, dict) and all(isinstance(value.get(key), str) for key in ("provider", "name"))
    return value if named else None


def model_menu_default(config: dict[str, Any], *, analysis: bool = False) -> str:
    """The label of the model menu's first entry, the one selected by default, which sends
    ``model_override: null`` (``buildChatModelOptions`` / ``buildAnalysisModelOptions`` in
    ``copilotModels.ts``; the same rule in both stored versions): chat takes ``chat_models[0]``,
    else ``model``; analysis ``analysis_models[0]``, else ``analysis_model``, else ``model``."""
    if analysis:
        listed = config.get("analysis_models") if isinstance(config.get("analysis_models"), list) else []
        candidates = [listed[0] if listed else None, config.get("analysis_model"), config.get("model")]
    else:
        listed = config.get("chat_models") if isinstance(config.get("chat_models"), list) else []
        candidates = [listed[0] if listed else None, config.get("model")]
    model = next((m for m in map(_menu_model, candidates) if m is not None), None)
    return f"Configured: {model['name']}" if model else "Configured model"


FIGURE_ROUTE = "/api/executions/figure?path="
MARKDOWN_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")


def figure_url(path: str) -> str:
    """``ChatFigures.figureUrl`` with the default base: ``encodeURIComponent`` of the path."""
    return FIGURE_ROUTE + quote(path, safe="-_.!~*'()")


def _blocks(saved: str) -> dict[str, Any] | None:
    """``parseBlocksContent``: a stored message that is a JSON blocks result, else ``None``."""
    if not saved.startswith("{"):
        return None
    try:
        data = json.loads(saved)
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("blocks"), list) else None


def _markdown(text: str) -> dict[str, Any]:
    """A markdown text as react-markdown draws it: the text, and an ``<img>`` per image."""
    return {"kind": "markdown", "text": text, "images": [m.group(2) for m in MARKDOWN_IMAGE.finditer(text)]}


def _chart(block: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "chart", "data": block["chart"].get("data"), "layout": block["chart"].get("layout")}


def old_dashboard_view(saved: str) -> list[dict[str, Any]]:
    """What the older dashboard draws for one stored assistant message (``BlocksContent``): each
    ``text`` block with content as markdown (images drawn), each ``chart`` block with a chart as
    Plotly, any other block nothing; a message that is no blocks result as markdown."""
    result = _blocks(saved)
    if result is None:
        return [_markdown(saved)]
    shown = []
    for block in result["blocks"]:
        if block.get("type") == "text" and block.get("content"):
            shown.append(_markdown(block["content"]))
        elif block.get("type") == "chart" and block.get("chart"):
            shown.append(_chart(block))
    return shown


def new_dashboard_view(saved: str) -> list[dict[str, Any]]:
    """What the newest dashboard draws for one stored assistant message: the figure strip of the
    turn's tool steps (``figuresInSteps``, each path once, ``<img src=figureUrl(path)>``), then the
    blocks it renders (text as markdown, charts, ask cards); a figure block is drawn as nothing."""
    result = _blocks(saved)
    if result is None:
        return [_markdown(saved)]
    steps = (result.get("trace") or {}).get("steps") or []
    paths = list(dict.fromkeys(p for s in steps if s.get("kind") == "tool" for p in s.get("figures") or []))
    shown: list[dict[str, Any]] = (
        [{"kind": "figures", "images": [figure_url(p) for p in paths]}] if paths else []
    )
    for block in result["blocks"]:
        if not new_dashboard_renders(block):
            continue
        if block["type"] == "text":
            shown.append(_markdown(block["content"]))
        elif block["type"] == "chart":
            shown.append(_chart(block))
        else:
            shown.append({"kind": block["type"], "card": block[block["type"]]})
    return shown


def visible_text(view: list[dict[str, Any]]) -> str:
    return "\n\n".join(item["text"] for item in view if item["kind"] == "markdown")


def images(view: list[dict[str, Any]]) -> list[str]:
    return [url for item in view for url in item.get("images", [])]
