"""History condensation: blocks → text, charts named, legacy converted, errors dropped, bounded."""

from __future__ import annotations

import json

from qdash.copilot.history import condense_assistant, condense_history, legacy_to_text
from qdash.copilot.requests import HistoryEntry


def _blocks(*blocks: dict[str, object], assessment: str | None = "good") -> str:
    return json.dumps({"blocks": list(blocks), "assessment": assessment, "images_sent": {"x": 1}})


def test_blocks_become_text_and_chart_placeholders() -> None:
    content = _blocks(
        {"type": "text", "content": "T1 is stable.", "chart": None},
        {
            "type": "chart",
            "content": None,
            "chart": {"data": [{"y": list(range(1000))}], "layout": {"title": {"text": "T1 of Q16"}}},
        },
        {"type": "chart", "content": None, "chart": {"data": []}},
    )
    assert (
        condense_assistant(content)
        == "T1 is stable.\n\n[chart: T1 of Q16]\n\n[chart: untitled]\n\nAssessment: good"
    )


def test_legacy_answer_is_converted() -> None:
    legacy = {
        "summary": "S",
        "assessment": "WARNING",
        "explanation": "E",
        "potential_issues": "drift",
        "recommendations": [],
    }
    assert legacy_to_text(legacy) == "S\n\nE\n\n**Potential Issues:**\n- drift"
    assert condense_assistant(json.dumps(legacy)).endswith("Assessment: warning")


def test_errors_dropped_and_plain_text_kept() -> None:
    assert condense_assistant("Error: HTTP 500") is None
    assert condense_assistant("{not json") == "{not json"
    assert condense_assistant("plain") == "plain"


def test_turn_and_char_limits_drop_oldest_pairs_first() -> None:
    history = []
    for i in range(6):
        history.append(HistoryEntry(role="user", content=f"q{i}"))
        history.append(
            HistoryEntry(
                role="assistant",
                content=_blocks({"type": "text", "content": "a" * 100, "chart": None}, assessment=None),
            )
        )
    out = condense_history(history, max_turns=3, max_chars=10_000)
    assert [e.content for e in out if e.role == "user"] == ["q3", "q4", "q5"]
    out = condense_history(history, max_turns=10, max_chars=250)
    assert [e.content for e in out if e.role == "user"] == ["q4", "q5"]


def test_condensation_is_deterministic() -> None:
    history = [
        HistoryEntry(role="user", content="hi"),
        HistoryEntry(role="assistant", content="Error: x"),
        HistoryEntry(role="user", content="again"),
    ]
    first = condense_history(history, max_turns=10, max_chars=1000)
    assert first == condense_history(history, max_turns=10, max_chars=1000)
    assert [e.content for e in first] == ["hi", "again"]


def test_figure_and_choices_blocks_keep_what_the_model_needs() -> None:
    """A run figure becomes its caption in brackets (never the reference or URL); ask_user's
    options stay readable, so the model sees what it asked when the click arrives."""
    figure = {
        "type": "figure",
        "content": "Run figure: CheckT1 · 16 · 64Qv3 · 11-20 10:00",
        "chart": None,
        "figure": {"id": "t-1", "url": "/copilot/figures/t-1"},
    }
    choices = {
        "type": "choices",
        "content": "Which chip?\n\n1. 64Qv3\n2. 144Qv2",
        "chart": None,
        "choices": {"question": "Which chip?", "options": ["64Qv3", "144Qv2"]},
    }
    text = {"type": "text", "content": "T1 is 41 μs.", "chart": None}
    condensed = condense_assistant(json.dumps({"blocks": [text, figure, choices], "assessment": None}))
    assert condensed == (
        "T1 is 41 μs.\n\n[Run figure: CheckT1 · 16 · 64Qv3 · 11-20 10:00]"
        "\n\nWhich chip?\n\n1. 64Qv3\n2. 144Qv2"
    )
