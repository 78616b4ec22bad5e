"""The same run written in each vocabulary, byte for byte: the contract's stream must not change
when the other dialects grow, and the upstream dialect's frames are exactly what its dashboard
reads (``docs/upstream-dashboard-stream.md`` §3)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from qdash.api.sse import ExtendedVocabulary, Vocabulary, answer_of, event_frames
from qdash.api.stream_dialects import UpstreamVocabulary, choose_vocabulary
from qdash.copilot.requests import ChatRequest
from qdash.copilot.tools.output import ToolData
from qdash.engine import events
from qdash.models.answer import Answer, FigureBlock, FigureRef
from qdash.settings import load_settings

CHOICES = {
    "type": "choices",
    "content": "Which chip?\n\n1. 64Qv3\n2. 144Qv2",
    "chart": None,
    "choices": {"question": "Which chip?", "options": ["64Qv3", "144Qv2"]},
}
REFERENCE = FigureRef(
    id="t1",
    task_name="CheckT1",
    qid="16",
    chip_id="64Qv3",
    execution_id=None,
    start_at=None,
    url="/copilot/figures/t1",
    path="f/t1.png",
)
FIGURE = FigureBlock(content="Run figure: CheckT1", figure=REFERENCE)
"""A run figure as a tool attaches it."""


async def run() -> AsyncIterator[events.Event]:
    yield events.Status("thinking", "AI is thinking...", completed_tools=[], round=0)
    yield events.TextDelta("  Let me ", round=0)
    yield events.TextDelta("check.", round=0)
    yield events.ReasoningSummary("Need the chip.", round=0)
    yield events.Status("tool_call", "Listing chips...", tool="list_chips", call_id="c1", round=0)
    yield events.ToolStarted("c1", "list_chips", "Listing chips", {"limit": 2}, round=0)
    yield events.ToolFinished(
        "c1", "list_chips", "Listing chips", 3.0, False, "2 chips", ToolData(attachments=[FIGURE])
    )
    yield events.Usage(0, 10, 5)
    yield events.TextDelta('{"blocks"', round=1)
    yield events.TextDelta(": []}", round=1)
    yield events.Final(Answer.model_validate({"blocks": [CHOICES]}), stop_reason="awaiting_user")


async def written(vocabulary: Vocabulary) -> str:
    frames = event_frames(run(), mode="chat", vocabulary=vocabulary, heartbeat_s=30, deadline_s=30)
    return "".join([text async for text in frames])


THINKING = (
    'event: status\ndata: {"step":"thinking","message":"AI is thinking...","completed_tools":[],'
    '"round":0}\n\n'
)
TOOL_CALL = (
    'event: status\ndata: {"step":"tool_call","message":"Listing chips...","tool":"list_chips",'
    '"call_id":"c1","round":0}\n\n'
)
COMPLETE = 'event: status\ndata: {"step":"complete","message":"Done"}\n\n'
META = '"meta":{"stop_reason":"awaiting_user"}'


async def test_the_contract_stream_is_status_then_the_result() -> None:
    """The contract's dashboard renders only text and chart blocks: the options come as text."""
    result = (
        'event: result\ndata: {"blocks":[{"type":"text","content":"Which chip?\\n\\n1. 64Qv3\\n2. 144Qv2",'
        f'"chart":null}}],"assessment":null,{META}}}\n\n'
    )
    assert await written(Vocabulary()) == THINKING + TOOL_CALL + COMPLETE + result


async def test_the_upstream_dialect_frames() -> None:
    expected = (
        THINKING
        + 'event: delta\ndata: {"text":"  Let me "}\n\n'
        + 'event: delta\ndata: {"text":"check."}\n\n'
        + 'event: thinking\ndata: {"text":"Need the chip."}\n\n'
        + TOOL_CALL
        + 'event: tool_start\ndata: {"id":"c1","tool":"list_chips","label":"Listing chips",'
        '"args":{"limit":2}}\n\n'
        + 'event: tool_end\ndata: {"id":"c1","tool":"list_chips","is_error":false,"figures":["f/t1.png"]}\n\n'
        + 'event: status\ndata: {"step":"writing_answer","message":"Writing the answer..."}\n\n'
        + COMPLETE
        + 'event: result\ndata: {"blocks":[{"type":"ask","content":"Which chip?\\n\\n1. 64Qv3\\n2. 144Qv2",'
        '"chart":null,"ask":{"question":"Which chip?","options":[{"label":"64Qv3"},{"label":"144Qv2"}]}}],'
        f'"assessment":null,{META}}}\n\n'
    )
    assert await written(UpstreamVocabulary()) == expected


async def test_the_extended_stream_still_announces_choices_before_the_result() -> None:
    text = await written(ExtendedVocabulary())
    assert text.index("event: choices\n") < text.index("event: result\n")
    assert "event: text_delta\n" in text and "event: delta\n" not in text


@pytest.mark.parametrize(
    ("events", "dialect", "request_id", "chosen"),
    [
        (None, "auto", "r-1", UpstreamVocabulary),
        (None, "auto", None, Vocabulary),
        (None, "contract", "r-1", Vocabulary),
        (None, "upstream_latest", None, UpstreamVocabulary),
        ("basic", "upstream_latest", "r-1", Vocabulary),
        ("extended", "auto", "r-1", ExtendedVocabulary),
        ("upstream", "contract", None, UpstreamVocabulary),
    ],
)
def test_the_vocabulary_is_chosen_by_query_then_setting_then_request_id(
    events: str | None, dialect: str, request_id: str | None, chosen: type[Vocabulary]
) -> None:
    settings = load_settings(database={"mongo_uri": None}, api={"stream_dialect": dialect})
    request = ChatRequest(message="hi", request_id=request_id)
    assert type(choose_vocabulary(events, request, settings)) is chosen  # type: ignore[arg-type]


def test_a_run_that_ends_without_an_answer_type_is_a_bug_named_as_such() -> None:
    """Only the API renders the typed answer; a dict in ``Final.result`` (the old loose shape) is a
    programming error, not something a dialect guesses at."""
    with pytest.raises(TypeError, match="ends with an Answer, not dict"):
        answer_of(events.Final({"blocks": [CHOICES]}))
