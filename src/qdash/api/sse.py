"""Assistant events → SSE frames the dashboard parser accepts, byte for byte (docs/api.md, SSE framing).

Why our own response instead of sse-starlette: the dashboard needs LF-only frames, idle-based
heartbeats, exactly one terminal event on every path and cancellation of the run when the client
goes away. Owning the ~150 lines makes each of those rules visible and testable in one place.

Frame: ``event: <name>\\ndata: <one-line JSON>\\n\\n``; heartbeat: ``: ping\\n\\n``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from qdash.actions.approvals import code_of
from qdash.copilot.answer import finite
from qdash.copilot.run_figures import dashboard_figure_text
from qdash.copilot.run_modes import RUN_TEXTS, Mode
from qdash.copilot.tools.output import tool_data
from qdash.engine.events import (
    Event,
    Failed,
    Final,
    ReasoningSummary,
    Status,
    TextDelta,
    ToolFinished,
    ToolStarted,
    Usage,
)
from qdash.models.answer import (
    Answer,
    ApprovalBlock,
    Block,
    ChartBlock,
    ChoicesBlock,
    FigureBlock,
    TextBlock,
)

log = logging.getLogger(__name__)

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
HEARTBEAT = ": ping\n\n"


def dumps(value: Any) -> str:
    """One-line strict JSON, non-ASCII kept as is; unknown objects (datetimes) become strings.

    Lone surrogates (possible in text that came in as JSON escapes) cannot be sent as UTF-8; they
    become U+FFFD instead of breaking the stream.
    """
    text = json.dumps(finite(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def frame(event: str, payload: Any) -> str:
    """One SSE frame; the JSON never contains a raw newline, so one ``data:`` line suffices."""
    return f"event: {event}\ndata: {dumps(payload)}\n\n"


def status_payload(event: Status) -> dict[str, Any]:
    """The ``status`` payload: unset optional fields are left out, as the dashboard expects."""
    return {k: v for k, v in asdict(event).items() if v is not None}


def error_payload(event: Failed) -> dict[str, Any]:
    return {"step": event.step, "detail": event.detail, "code": event.code, "retryable": event.retryable}


def answer_of(event: Final) -> Answer:
    """The run's answer with ``meta`` (ours, optional): the stop reason and usage. Every dialect
    renders this; only the API turns it into a client's JSON."""
    answer = event.result
    if not isinstance(answer, Answer):
        raise TypeError(f"a chat or analysis run ends with an Answer, not {type(answer).__name__}")
    if answer.meta is not None:
        return answer
    return answer.model_copy(update={"meta": {"stop_reason": event.stop_reason, **event.meta}})


def result_payload(event: Final) -> dict[str, Any]:
    """The answer with every block: what the session stores, our page and programs get."""
    return answer_of(event).wire()


def contract_result(answer: Answer) -> dict[str, Any]:
    """The answer in the contract's two block types, for the dashboard that renders only ``text``
    and ``chart`` blocks: every other block (``choices``, ``figure``, ``approval``) is sent as a text
    block of its readable form — the options numbered, the figure as a markdown image (that
    dashboard's markdown draws it) above its caption, the proposal with its code — instead of being
    silently dropped by that dashboard. Our page and the newest upstream dashboard get the full
    blocks."""
    blocks = [shown for block in answer.blocks if (shown := _contract_block(block)) is not None]
    return answer.model_copy(update={"blocks": blocks}).wire() if blocks else answer.wire()


def _contract_block(block: Block) -> TextBlock | ChartBlock | None:
    if isinstance(block, TextBlock | ChartBlock):
        return block
    if isinstance(block, FigureBlock):
        return TextBlock(content=dashboard_figure_text(block))
    if isinstance(block, ApprovalBlock):
        return TextBlock(content=approval_text(block))
    return TextBlock(content=block.content) if block.content.strip() else None


def approval_text(block: ApprovalBlock) -> str:
    """A proposed action as the older dashboard reads it: the label, each argument, and how to answer
    in words: its code typed back, or a bare "yes" or "no" right after this answer."""
    approval = block.approval
    args = approval.args
    code = code_of(approval.id)
    lines = [f"**Approve this action?** {approval.label}"]
    lines += [f"- {name}: {value}" for name, value in args.items() if value is not None]
    lines.append(f"\nReply **yes {code}** to approve or **no {code}** to decline (anything else cancels it).")
    return "\n".join(lines)


STOPPED_DETAIL = "Stopped by the user"


@dataclass
class Progress:
    """What a run has done so far, kept for a stopped turn's record."""

    tools: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def note(self, event: Event) -> None:
        if isinstance(event, ToolFinished) and not event.is_error:
            self.tools.append(event.label or event.tool)
        elif isinstance(event, TextDelta):
            self.text.append(event.delta)

    def summary(self) -> str:
        parts = [f"{STOPPED_DETAIL} before the answer was complete."]
        if self.tools:
            parts.append("Done so far: " + "; ".join(self.tools) + ".")
        partial = "".join(self.text).strip()
        if partial:
            parts.append(f"Partial answer: {partial}")
        return " ".join(parts)


@dataclass(frozen=True)
class StopControl:
    """How a stream learns that its user pressed stop: ``requested`` is polled every ``poll_s``;
    ``on_stopped`` records what was done so far."""

    requested: Callable[[], Awaitable[bool]]
    on_stopped: Callable[[Progress], Awaitable[None]]
    poll_s: float = 1.0


class Vocabulary:
    """Which events a client gets before the terminal one, and how the answer is sent.

    The base class is the contract's default stream (``status`` only, then ``result``/``error``),
    byte for byte what the dashboard our contract follows expects. Subclasses add richer events:
    ``ExtendedVocabulary`` (our page, ``?events=extended``) and the newest upstream dashboard's
    dialect (``qdash.api.stream_dialects``). One instance serves one stream, so a subclass may keep
    state across events.
    """

    client_keeps_session = False
    """True for clients that store every turn in their session themselves (the server then does
    not record the turn as well, which would duplicate it)."""

    def frame(self, event: Event) -> str | None:
        """The frame for a non-terminal event, or None when this client does not get it."""
        return frame("status", status_payload(event)) if isinstance(event, Status) else None

    def result_frames(self, final: Final) -> str:
        """What closes a run that has an answer: the ``result`` frame."""
        return frame("result", self.result(final))

    def result(self, final: Final) -> dict[str, Any]:
        """The answer as this client renders it: the contract's two block types."""
        return contract_result(answer_of(final))


class ExtendedVocabulary(Vocabulary):
    """``?events=extended``: the turn's trace too (the dashboard ignores unknown names, but its
    default stream stays exactly as specified)."""

    def frame(self, event: Event) -> str | None:
        if isinstance(event, ToolStarted):
            return frame("tool_start", asdict(event))
        if isinstance(event, ToolFinished):
            attached = tool_data(event.data).attachments
            figures = [block.figure.model_dump() for block in attached if isinstance(block, FigureBlock)]
            payload = {f.name: getattr(event, f.name) for f in fields(event) if f.name != "data"}
            return frame("tool_result", {**payload, "figures": figures}) + "".join(
                frame("figure", figure) for figure in figures
            )
        if isinstance(event, ReasoningSummary):
            return frame("reasoning", {"text": event.text, "round": event.round})
        if isinstance(event, TextDelta):
            return frame("text_delta", {"delta": event.delta, "round": event.round})
        if isinstance(event, Usage):
            return frame("usage", asdict(event))
        return super().frame(event)

    def result(self, final: Final) -> dict[str, Any]:
        """Every block: our page renders ``choices`` as buttons and ``figure`` as an image."""
        return result_payload(final)

    def result_frames(self, final: Final) -> str:
        """A ``choices`` frame for each set of options the answer offers, then the ``result``."""
        announced = [
            frame("choices", block.choices.model_dump())
            for block in answer_of(final).blocks
            if isinstance(block, ChoicesBlock)
        ]
        return "".join(announced) + super().result_frames(final)


async def event_frames(
    events: AsyncIterator[Event],
    *,
    mode: Mode,
    vocabulary: Vocabulary,
    heartbeat_s: float,
    deadline_s: float,
    on_final: Callable[[Final], Awaitable[None]] | None = None,
    stop: StopControl | None = None,
) -> AsyncIterator[str]:
    """Frames for one run, ending with exactly one ``result`` or ``error`` frame.

    The run's generator is advanced in its own task so a heartbeat can be sent while it is idle
    without interrupting it; when this generator is cancelled or closed (client gone), that task is
    cancelled, which cancels the run inside the assistant.

    The idle clock counts bytes written, not engine events: events that produce no frame (text
    deltas in the default mode, usage) would otherwise keep resetting it while the connection
    stays silent, and proxies or the browser drop a silent stream.

    With ``stop``, the run is also ended when its user asks (an ``error`` frame, code ``stopped``),
    and what it had done is handed to ``stop.on_stopped``.

    The task reads on past the events that make no frame (:func:`_next_shown`): a turn's text deltas
    are most of its events, and a task plus a wait for each cost the loop more than the frames.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + deadline_s
    last_write = loop.time()
    progress = Progress()
    next_poll = loop.time() + (stop.poll_s if stop else math.inf)
    pending: asyncio.Task[Shown] | None = None
    saw_complete = False
    terminal: Event | None = None
    try:
        while terminal is None:
            if pending is None:
                pending = asyncio.ensure_future(_next_shown(events, vocabulary, progress))
            now = loop.time()
            remaining = deadline - now
            if remaining <= 0:
                texts = RUN_TEXTS[mode]
                terminal = Failed(
                    texts.step, texts.failed_detail(f"no answer within {deadline_s:g} s"), "timeout"
                )
                break
            idle_left = last_write + heartbeat_s - now
            if idle_left <= 0:
                yield HEARTBEAT
                last_write = loop.time()
                continue
            if stop is not None and now >= next_poll:
                next_poll = now + stop.poll_s
                if await stop.requested():
                    terminal = Failed(RUN_TEXTS[mode].step, STOPPED_DETAIL, "stopped")
                    await _run_hook(stop.on_stopped, progress)
                    break
                continue
            done, _ = await asyncio.wait({pending}, timeout=min(idle_left, remaining, next_poll - now))
            if not done:
                continue
            task, pending = pending, None
            event, text = _event_or_failure(task, mode)
            if isinstance(event, Final | Failed) or text is None:
                terminal = event
                break
            saw_complete = saw_complete or (isinstance(event, Status) and event.step == "complete")
            yield text
            last_write = loop.time()
        closing = _closing_frames(
            terminal, mode, saw_complete=saw_complete, on_final=on_final, vocabulary=vocabulary
        )
        async for text in closing:
            yield text
    finally:
        await _stop(pending, events)


async def _closing_frames(
    terminal: Event | None,
    mode: Mode,
    *,
    saw_complete: bool,
    on_final: Callable[[Final], Awaitable[None]] | None,
    vocabulary: Vocabulary,
) -> AsyncIterator[str]:
    """The one terminal frame (a ``complete`` status first when the run sent none; whatever the
    vocabulary announces before the ``result``)."""
    if isinstance(terminal, Final):
        if on_final is not None:
            await _run_hook(on_final, terminal)
        if not saw_complete:
            yield frame("status", {"step": "complete", "message": RUN_TEXTS[mode].done})
        yield vocabulary.result_frames(terminal)
    elif isinstance(terminal, Failed):
        yield frame("error", error_payload(terminal))


Shown = tuple[Event, str | None]
"""A run's next event that ends it (no frame) or that makes a frame, with the frame."""


async def _next_shown(events: AsyncIterator[Event], vocabulary: Vocabulary, progress: Progress) -> Shown:
    """Read the run up to its next terminal event or framed event; the rest is only noted."""
    while True:
        event = await anext(events)
        progress.note(event)
        if isinstance(event, Final | Failed):
            return event, None
        text = vocabulary.frame(event)
        if text is not None:
            return event, text


def _event_or_failure(task: asyncio.Task[Shown], mode: Mode) -> Shown:
    """The run's next shown event; its end without an answer or an exception becomes a ``Failed``."""
    try:
        return task.result()
    except StopAsyncIteration:
        texts = RUN_TEXTS[mode]
        return Failed(texts.step, texts.failed_detail("the run ended without an answer")), None
    except Exception:
        log.exception("assistant run raised")
        texts = RUN_TEXTS[mode]
        return Failed(texts.step, texts.failed_detail("internal error")), None


async def _run_hook(hook: Callable[[Any], Awaitable[None]], outcome: Final | Progress) -> None:
    """Side work after an answer or a stop (saving the turn); its failure must not cost the user
    the answer."""
    try:
        await hook(outcome)
    except Exception:
        log.exception("post-answer hook failed")


async def _stop(pending: asyncio.Task[Shown] | None, events: AsyncIterator[Event]) -> None:
    """Cancel the in-flight step and close the run's generator, even while being cancelled."""
    with anyio.CancelScope(shield=True):
        if pending is not None and not pending.done():
            pending.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(pending), timeout=5)
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(aclose(), timeout=5)


class SSEResponse(StreamingResponse):
    """A streaming response that always watches for the client's disconnect.

    Starlette only listens for ``http.disconnect`` on ASGI < 2.4; on 2.4 it notices a gone client
    only at the next write. Listening ourselves cancels the body iterator (and with it the run)
    as soon as the server reports the disconnect.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        content: AsyncIterator[str],
        on_close: Callable[[], Awaitable[None]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(content, headers={**SSE_HEADERS, **(headers or {})}, media_type="text/event-stream")
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def stream() -> None:
                    with contextlib.suppress(OSError):
                        await self.stream_response(send)
                    group.cancel_scope.cancel()

                group.start_soon(stream)
                await self.listen_for_disconnect(receive)
                group.cancel_scope.cancel()
        finally:
            if self._on_close is not None:
                with anyio.CancelScope(shield=True):
                    await self._on_close()
