"""Which event vocabulary a chat or analysis stream speaks, and the newest upstream dashboard's.

Why two dashboards: our contract follows the upstream dashboard whose parser knows only ``status``,
``result`` and ``error``; the newest upstream dashboard folds ``delta``, ``thinking``,
``tool_start`` and ``tool_end`` into a live trace and renders ``ask`` blocks
(``docs/upstream-dashboard-stream.md``). Both call the same paths through a proxy that forwards only
the body and three headers, and only the newer one puts ``request_id`` in the body: that is the
signal ``auto`` uses. The contract's stream stays byte-identical for every other request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from qdash.api.sse import ExtendedVocabulary, Vocabulary, answer_of, contract_result, frame
from qdash.copilot.requests import AnalyzeRequest, ChatRequest
from qdash.copilot.tools.output import tool_data
from qdash.engine.events import Event, Final, ReasoningSummary, TextDelta, ToolFinished, ToolStarted
from qdash.models.answer import Answer, ChoicesBlock, FigureBlock
from qdash.settings import Settings

WRITING_STATUS = frame("status", {"step": "writing_answer", "message": "Writing the answer..."})
"""Sent once when a round turns out to be a JSON answer, which is not streamed as text."""

EventsParam = Literal["basic", "extended", "upstream"]
"""``?events=``: basic is the contract's stream, extended our page's trace, upstream the newest
upstream dashboard's dialect; absent, ``api.stream_dialect`` decides."""


def choose_vocabulary(
    events: EventsParam | None, request: ChatRequest | AnalyzeRequest, settings: Settings
) -> Vocabulary:
    """The vocabulary for one request: the query parameter, else the setting, else (``auto``) the
    upstream dialect exactly when the body carries ``request_id``."""
    if events == "extended":
        return ExtendedVocabulary()
    if events == "upstream":
        return UpstreamVocabulary()
    if events == "basic":
        return Vocabulary()
    dialect = settings.api.stream_dialect
    newest = request.request_id is not None
    if dialect == "upstream_latest" or (dialect == "auto" and newest):
        # Forced for every request, the dialect also reaches the older dashboard (no request_id),
        # which draws only text and chart blocks: its answer keeps the contract's block types.
        return UpstreamVocabulary(older_dashboard=not newest)
    return Vocabulary()


@dataclass
class _RoundText:
    """Decides per model round whether its streamed text is prose (sent as ``delta``) or a JSON
    answer (held back: the dashboard would render the raw JSON while it streams; the ``result``
    brings the rendered blocks). Deltas are held until the round's first non-blank characters
    show which it is."""

    round: int | None = None
    pending: str = ""
    kind: Literal["undecided", "prose", "json"] = "undecided"

    def visible(self, event: TextDelta) -> str:
        if event.round != self.round:
            self.round, self.pending, self.kind = event.round, "", "undecided"
        if self.kind == "prose":
            return event.delta
        if self.kind == "json":
            return ""
        self.pending += event.delta
        head = self.pending.lstrip()
        if not head or head in ("`", "``"):
            return ""
        self.kind = "json" if head.startswith(("{", "```")) else "prose"
        held, self.pending = self.pending, ""
        return held if self.kind == "prose" else ""


class UpstreamVocabulary(Vocabulary):
    """The newest upstream dashboard's events (``docs/upstream-dashboard-stream.md`` §3): ``status``
    as in the contract (plus "Writing the answer..." when a JSON answer starts), ``thinking``
    {text}, ``tool_start`` {id, tool, label, args}, ``tool_end`` {id, tool, is_error, figures},
    ``delta`` {text} for prose answer text, and a ``result`` whose ``choices`` blocks are ``ask``
    blocks. Usage is not sent (the dashboard has no use for it).

    ``older_dashboard``: the request came without ``request_id`` (``api.stream_dialect:
    upstream_latest`` sends this dialect to every client). The older dashboard ignores the new
    events by name but draws only ``text`` and ``chart`` blocks, so the ``result`` is the
    contract's (a question as its numbered text, not an ``ask`` block it would leave empty), and
    the server keeps recording the turn, as that dashboard does not PATCH its session."""

    def __init__(self, older_dashboard: bool = False) -> None:
        self._text = _RoundText()
        self._older_dashboard = older_dashboard
        self.client_keeps_session = not older_dashboard
        """The newest dashboard PATCHes the full message list before and after every turn."""

    def frame(self, event: Event) -> str | None:
        if isinstance(event, TextDelta):
            was = self._text.kind
            text = self._text.visible(event)
            if text:
                return frame("delta", {"text": text})
            # The status line is what the dashboard shows while no answer text streams.
            return WRITING_STATUS if self._text.kind == "json" and was != "json" else None
        if isinstance(event, ReasoningSummary):
            return frame("thinking", {"text": event.text})
        if isinstance(event, ToolStarted):
            payload = {"id": event.call_id, "tool": event.tool, "label": event.label, "args": event.arguments}
            return frame("tool_start", payload)
        if isinstance(event, ToolFinished):
            return frame("tool_end", tool_end_payload(event))
        return super().frame(event)

    def result(self, final: Final) -> dict[str, Any]:
        answer = answer_of(final)
        return contract_result(answer) if self._older_dashboard else upstream_result(answer)


def tool_end_payload(event: ToolFinished) -> dict[str, Any]:
    """``figures`` are the stored figure paths of the call's run figures, which the dashboard shows
    through upstream's own ``GET /executions/figure?path=``."""
    attached = tool_data(event.data).attachments
    figures = [block.figure.path for block in attached if isinstance(block, FigureBlock)]
    return {"id": event.call_id, "tool": event.tool, "is_error": event.is_error, "figures": figures}


def upstream_result(answer: Answer) -> dict[str, Any]:
    """The answer with each ``choices`` block as the dashboard's ``ask`` block; ``content`` (the
    question with numbered options) is kept, so the condensed history still reads it. The ``ask``
    block exists only on this dialect's wire, so it is written here and nowhere else."""
    blocks = [
        _ask_block(block) if isinstance(block, ChoicesBlock) else block.model_dump()
        for block in answer.blocks
    ]
    return {**answer.wire(), "blocks": blocks}


def _ask_block(block: ChoicesBlock) -> dict[str, Any]:
    options = [{"label": option} for option in block.choices.options]
    ask = {"question": block.choices.question, "options": options}
    return {"type": "ask", "content": block.content, "chart": None, "ask": ask}
