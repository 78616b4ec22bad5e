"""Parsing the model's final text into the dashboard's blocks result."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from qdash.copilot.answer import DASHBOARD_ANSWER, NO_TOOL_ANSWER, legacy_to_text, parse_answer, place_charts
from qdash.copilot.tools.output import ToolData
from qdash.engine.tool import ToolOutput
from qdash.models.answer import Answer, ChoicesBlock


def parsed(text: str) -> dict[str, Any] | None:
    """The parsed answer as the dashboards get it (its wire JSON)."""
    answer = parse_answer(text)
    return None if answer is None else answer.wire()


def test_blocks_json_inside_a_code_fence() -> None:
    body = '{"blocks": [{"type": "text", "content": "Hi", "chart": null}], "assessment": "WARNING"}'
    text = f"```json\n{body}\n```"
    assert parsed(text) == {"blocks": [{"type": "text", "content": "Hi", "chart": None}],
                                  "assessment": "warning"}  # fmt: skip


def test_unknown_assessment_is_null_and_empty_blocks_are_dropped() -> None:
    data = {"blocks": [{"type": "text", "content": "", "chart": None},
                       {"type": "chart", "content": None, "chart": {"data": [], "layout": {}}},
                       {"type": "text", "content": "ok", "chart": None}], "assessment": "great"}  # fmt: skip
    result = parsed(json.dumps(data))
    assert result is not None
    assert [b["type"] for b in result["blocks"]] == ["chart", "text"]
    assert result["assessment"] is None


def test_legacy_five_keys_become_one_text_block() -> None:
    legacy = {"summary": "T1 is low.", "assessment": None, "explanation": "It dropped.",
              "potential_issues": "TLS", "recommendations": ["Recalibrate", "Check fridge"]}  # fmt: skip
    result = parsed(json.dumps(legacy))
    assert result == {
        "blocks": [{"type": "text", "chart": None, "content": (
            "T1 is low.\n\nIt dropped.\n\n**Potential Issues:**\n- TLS\n\n"
            "**Recommendations:**\n- Recalibrate\n- Check fridge")}],
        "assessment": "warning",
    }  # fmt: skip


def test_legacy_sections_are_omitted_when_empty() -> None:
    assert (
        legacy_to_text({"summary": "S", "explanation": "", "potential_issues": [], "recommendations": []})
        == "S"
    )


def test_plain_text_and_broken_json_become_one_text_block() -> None:
    prose = {"type": "text", "content": "Just prose.", "chart": None}
    assert parsed("Just prose.") == {"blocks": [prose],
                                           "assessment": None}  # fmt: skip
    broken = parsed('{"blocks": [')
    assert broken is not None and broken["blocks"][0]["content"] == '{"blocks": ['


def test_empty_text_is_none() -> None:
    assert parse_answer("  ") is None
    assert parse_answer("```\n\n```") is None


def test_charts_are_appended_after_text() -> None:
    result = Answer.text("x")
    out = place_charts(result, [(None, {"data": [1]})]).wire()
    assert out["blocks"][1] == {"type": "chart", "content": None, "chart": {"data": [1]}}
    assert len(result.blocks) == 1


KEYS = st.sampled_from(["blocks", "summary", "assessment", "explanation", "potential_issues", "x"])
BLOCK = st.dictionaries(st.sampled_from(["type", "content", "chart"]), st.none() | st.text(max_size=5))
VALUES = st.none() | st.text(max_size=20) | st.lists(st.text(max_size=5) | BLOCK, max_size=3)
ANSWERS = st.text(max_size=200) | st.builds(json.dumps, st.dictionaries(KEYS, VALUES))


@settings(max_examples=200, deadline=None)
@given(ANSWERS)
def test_parse_answer_never_raises_and_never_returns_empty_blocks(text: str) -> None:
    result = parsed(text)
    if result is None:  # empty, or only chart placeholders naming no chart
        assert not text.strip() or text.strip().startswith("```") or '"chart"' in text
        return
    assert result["blocks"] and result["assessment"] in ("good", "warning", "bad", None)
    for block in result["blocks"]:
        assert set(block) == {"type", "content", "chart"}
        assert (block["type"] == "text" and block["content"]) or (block["type"] == "chart" and block["chart"])


def test_a_tool_that_ends_the_turn_answers_with_its_typed_blocks_or_says_it_had_none() -> None:
    """A tool's blocks are typed from the tool on (``ToolResult``, ``ToolData``); an engine tool
    that ends the turn without any (not one of ours) still gives the user an answer."""
    good = ChoicesBlock.of("Which chip?", ["64Qv3", "144Qv2"])
    ended = ToolOutput("{}", ends_turn=True, data=ToolData(answer=[good]))
    assert DASHBOARD_ANSWER.tool_answer(ended, [ended]).blocks == [good]
    bare = ToolOutput("{}", ends_turn=True)
    assert DASHBOARD_ANSWER.tool_answer(bare, [bare]) == Answer.text(NO_TOOL_ANSWER)
