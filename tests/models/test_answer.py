"""The answer types: each serialises to exactly the JSON the dashboards parse, and nobody else writes
a block dict by hand."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from qdash.models.answer import (
    BLOCK,
    Answer,
    ApprovalBlock,
    ApprovalCard,
    ChartBlock,
    ChoicesBlock,
    FigureBlock,
    FigureRef,
    ImagesSent,
    TextBlock,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "qdash"
FIGURE = {"data": [{"type": "scatter", "x": [1], "y": [2]}], "layout": {}}
REFERENCE = {
    "id": "t1",
    "task_name": "CheckT1",
    "qid": "3",
    "chip_id": "64Qv3",
    "execution_id": None,
    "start_at": "2026-01-01",
    "url": "/copilot/figures/t1",
    "path": "/data/t1.png",
}


def wire(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def test_each_block_is_the_dashboards_json_byte_for_byte() -> None:
    approval = ApprovalCard(
        id="apv_1", tool="exclude_task_result", label="Exclude t1", args={"task_id": "t1"}
    )
    shapes = [
        (TextBlock(content="hi"), '{"type":"text","content":"hi","chart":null}'),
        (ChartBlock(chart=FIGURE), '{"type":"chart","content":null,"chart":' + wire(FIGURE) + "}"),
        (
            FigureBlock(content="Run figure", figure=FigureRef(**REFERENCE)),
            '{"type":"figure","content":"Run figure","chart":null,"figure":' + wire(REFERENCE) + "}",
        ),
        (
            ChoicesBlock.of("Which chip?", ["64Qv3", "144Qv2"]),
            '{"type":"choices","content":"Which chip?\\n\\n1. 64Qv3\\n2. 144Qv2","chart":null,'
            '"choices":{"question":"Which chip?","options":["64Qv3","144Qv2"]}}',
        ),
        (
            ApprovalBlock(approval=approval),
            '{"type":"approval","content":null,"chart":null,"approval":{"id":"apv_1",'
            '"tool":"exclude_task_result","label":"Exclude t1","args":{"task_id":"t1"}}}',
        ),
    ]
    for block, expected in shapes:
        assert wire(block.model_dump()) == expected
        assert BLOCK.validate_python(json.loads(expected)) == block  # the discriminator finds the type


def test_answer_leaves_unset_extras_out_and_keeps_the_dashboards_key_order() -> None:
    chat = Answer(blocks=[TextBlock(content="x")], assessment="good")
    assert wire(chat.wire()) == '{"blocks":[{"type":"text","content":"x","chart":null}],"assessment":"good"}'
    images = ImagesSent(
        experiment_figure=False, experiment_figure_paths=[], expected_images=[], task_name="T"
    )
    analysis = chat.model_copy(update={"images_sent": images, "meta": {"stop_reason": "completed"}})
    assert list(analysis.wire()) == ["blocks", "assessment", "images_sent", "meta"]
    assert Answer.text("stopped").wire() == {
        "blocks": [{"type": "text", "content": "stopped", "chart": None}],
        "assessment": None,
    }


@pytest.mark.parametrize(
    "raw",
    [
        {"blocks": []},
        {"blocks": [{"type": "ask", "content": "x", "chart": None}]},
        {"blocks": [{"type": "text", "content": "x", "chart": None}], "assessment": "fine"},
        {"blocks": [{"type": "text", "content": "x", "chart": None, "extra": 1}]},
    ],
)
def test_an_answer_that_no_dashboard_could_render_is_refused(raw: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Answer.model_validate(raw)


BLOCK_TYPES = {"text", "chart", "figure", "choices", "approval"}
BLOCK_KEYS = {"content", "chart", "figure", "choices", "approval"}


def test_no_block_dict_is_built_outside_the_answer_types() -> None:
    """A hand-built ``{"type": "text", "content": ..., "chart": None}`` (or ``dict(type=...)``)
    anywhere in ``src`` fails here: build the block with ``qdash.models.answer``. What is not an
    answer block is not matched: a provider's wire parts (``{"type": "text", "text": ...}``, the
    Responses API's ``{"format": {"type": "text"}}``) carry none of a block's other keys, and
    prompts that show the model the format are strings, not dicts."""
    found = [
        f"{path.relative_to(SRC).as_posix()}:{node.lineno}"
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).as_posix() != "models/answer.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if _is_block_dict(node)
    ]
    assert found == []


def _is_block_dict(node: ast.AST) -> bool:
    if isinstance(node, ast.Dict):
        items = {
            key.value: value
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant)
        }
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        items = {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg}
    else:
        return False
    kind = items.get("type")
    return (
        isinstance(kind, ast.Constant)
        and kind.value in BLOCK_TYPES
        and any(key in BLOCK_KEYS for key in items)
    )


def test_the_block_check_finds_a_hand_built_block() -> None:
    """The check above can fail: each way of writing a block by hand is found."""
    for source in (
        '{"type": "text", "content": text, "chart": None}',
        'dict(type="approval", content=None, chart=None, approval=card)',
    ):
        assert any(_is_block_dict(node) for node in ast.walk(ast.parse(source)))
    for source in ('{"type": "text", "text": part}', '{"format": {"type": "text"}}'):
        assert not any(_is_block_dict(node) for node in ast.walk(ast.parse(source)))
