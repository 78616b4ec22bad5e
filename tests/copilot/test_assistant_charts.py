"""Chart placement end to end: the real tools on the demo lab, the model via the fake LLM.

The model is told chart ids by the heatmap tool outputs and places one of them with a placeholder
block; the user's answer must show exactly that figure there, the other one appended, and no
placeholder or empty chart block.
"""

from __future__ import annotations

import json
from typing import Any

from qdash.copilot.requests import ChatRequest
from qdash.copilot.tools.catalog.metrics import QUBIT_METRICS
from qdash.engine.events import Final
from qdash.evaluation.fake_llm import FakeLLMServer, call, turn
from tests.copilot.test_assistant import DEMO, collect, fake_settings, terminal

from .conftest import AssistantFactory


def _title(block: dict[str, Any]) -> str:
    title = block["chart"]["layout"]["title"]
    return str(title["text"] if isinstance(title, dict) else title)


async def test_model_places_c2_before_its_text_and_c1_is_appended(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory
) -> None:
    metrics = ["t1", "t2_echo"]
    answer = {
        "blocks": [
            {"type": "chart", "content": "c2", "chart": None},
            {"type": "text", "content": "T1 and T2 echo maps of the chip.", "chart": None},
        ],
        "assessment": None,
    }
    fake_llm.script(
        turn(
            *(
                call(
                    "generate_chip_heatmap",
                    {"metric_name": m, "chip_id": None, "selection_mode": None, "within_hours": None},
                )
                for m in metrics
            )
        ),
        json.dumps(answer),
    )
    settings = fake_settings(fake_llm, tmp_path)
    events = await collect(
        make_assistant(demo_lab.db, settings).chat(DEMO, ChatRequest(message="T1 and T2 maps"))
    )
    final = terminal(events)
    assert isinstance(final, Final), final

    # What the model was told: one id per call, c1 and c2, and how to place them.
    outputs = [json.loads(o) for o in fake_llm.last_request.tool_outputs().values()]
    assert len(outputs) == 2 and all(o["status"] == "success" for o in outputs)
    metric_of = {o["chart_id"]: metric for o, metric in zip(outputs, metrics, strict=True)}
    assert sorted(metric_of) == ["c1", "c2"]
    assert all('"content": "' + o["chart_id"] + '"' in o["chart_placement"] for o in outputs)
    assert all("chart" not in o and '"heatmap"' not in json.dumps(o) for o in outputs)  # no figure

    result_blocks = final.result.wire()["blocks"]
    assert [b["type"] for b in result_blocks] == ["chart", "text", "chart"]
    assert result_blocks[1]["content"] == "T1 and T2 echo maps of the chip."
    # The placed chart is the one the model was told is c2; c1 follows the text.
    assert QUBIT_METRICS[metric_of["c2"]].title in _title(result_blocks[0])
    assert QUBIT_METRICS[metric_of["c1"]].title in _title(result_blocks[2])
    for block in result_blocks:
        assert set(block) == {"type", "content", "chart"}
        if block["type"] == "chart":
            assert block["content"] is None
            assert isinstance(block["chart"]["data"], list) and block["chart"]["data"]
            assert block["chart"]["data"][0]["type"] == "heatmap"
        else:
            assert block["chart"] is None and block["content"]
    json.dumps(final.result.wire(), allow_nan=False)  # NaN-free
