"""The demo model end to end: the real assistant, tools, sandbox and charts on the small demo lab.

Each answer must be written from what the tools returned in that very turn: the tests read the
tool outputs the model was sent and check the answer's numbers, qubits and charts against them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from qdash.copilot.assistant import Assistant, default_figures
from qdash.copilot.demo_model import DemoModel
from qdash.copilot.demo_model.analysis_code import LOSS_THRESHOLD
from qdash.copilot.demo_model.plans import Answer, Seen, next_step
from qdash.copilot.demo_model.questions import Question, read_question
from qdash.copilot.engine_config import model_registry
from qdash.copilot.requests import ChatRequest
from qdash.copilot.run_figures import load_run_figure
from qdash.copilot.tools.registry import default_specs
from qdash.engine.events import Final, ToolFinished
from qdash.engine.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    ModelResponse,
    UserMessage,
)
from qdash.engine.providers.base import DeltaSink, ModelRequest, ToolDef
from qdash.engine.providers.factory import ModelConfig
from qdash.repositories.scope import ProjectScope
from qdash.settings import Settings, load_settings
from tests.copilot.test_assistant import DEMO, analyze_request, collect, latest_check_t1, terminal

SUGGESTIONS = [
    "Which qubits lost T1 this week?",
    "Show me the T2-echo heatmap",
    "Which calibration tasks failed in the latest execution, and why?",
]


@dataclass
class RecordingDemoModel(DemoModel):
    """The demo model, keeping each request it was sent (to read the tool outputs it saw)."""

    requests: list[ModelRequest] = field(default_factory=list)

    async def request(self, request: ModelRequest, on_text: DeltaSink | None = None) -> ModelResponse:
        self.requests.append(request)
        return await super().request(request, on_text)

    def outputs(self) -> dict[str, Any]:
        """Tool name → parsed output, from the last request."""
        items = self.requests[-1].items
        names = {i.call_id: i.name for i in items if isinstance(i, FunctionCall)}
        return {names[i.call_id]: json.loads(i.output) for i in items if isinstance(i, FunctionCallOutput)}


def demo_settings(tmp_path: Any) -> Settings:
    return load_settings(
        database={"data_dir": str(tmp_path), "mongo_uri": None},
        copilot={
            "default_model": "demo",
            "models": {"demo": {"provider": "demo", "name": "scripted", "api_key_env": None}},
            "suggestions": [{"label": str(n), "prompt": p} for n, p in enumerate(SUGGESTIONS)],
        },
    )


async def ask(demo_lab: Any, tmp_path: Any, question: str) -> tuple[Final, RecordingDemoModel, list[str]]:
    settings = demo_settings(tmp_path)
    models: list[RecordingDemoModel] = []

    def build(alias: str, config: ModelConfig) -> RecordingDemoModel:
        models.append(RecordingDemoModel(alias, config.name, SUGGESTIONS))
        return models[-1]

    registry = model_registry(settings, builders={"demo": build})
    assistant = Assistant(demo_lab.db, settings, models=registry)
    events = await collect(assistant.chat(DEMO, ChatRequest(message=question)))
    final = terminal(events)
    assert isinstance(final, Final), final
    tools = [e.tool for e in events if isinstance(e, ToolFinished)]
    return final, models[0], tools


def texts(final: Final) -> str:
    return "\n".join(b["content"] for b in final.result.wire()["blocks"] if b["type"] == "text")


def charts(final: Final) -> list[dict[str, Any]]:
    return [b["chart"] for b in final.result.wire()["blocks"] if b["type"] == "chart"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Which qubits lost T1 this week?", Question("lost", "t1", window="7d")),
        ("Show me the T2-echo heatmap", Question("heatmap", "t2_echo")),
        ("Show the T2* heatmap", Question("heatmap", "t2_star")),
        (
            "Which calibration tasks failed in the latest execution, and why?",
            Question("failed_tasks", latest=True),
        ),
        ("How is Q16?", Question("qubit", None, "16")),
        ("Show me the latest T1 figure", Question("figure", "t1", None)),
        ("Latest T2 echo figure of Q16", Question("figure", "t2_echo", "16")),
        (
            "Is the readout fidelity of qubit 3 dropping?",
            Question("series", "average_readout_fidelity", "3", metrics=("average_readout_fidelity",)),
        ),
        ("Show T1 trend for Q00", Question("series", "t1", "0", metrics=("t1",))),
        (
            "Compare T2 echo and T2* of Q5",
            Question("series", "t2_echo", "5", metrics=("t2_echo", "t2_star")),
        ),
        ("Compare Q3 and Q7", Question("compare_qubits", qids=("3", "7"))),
        (
            "Why is Q3 worse than last month?",
            Question("unknown", beyond='"why": I show stored values; explaining a cause needs a real model'),
        ),
        (
            "Compare the T1 of Q3, Q7 and Q12",
            Question("compare_qubits", "t1", qids=("3", "7", "12"), metrics=("t1",)),
        ),
        (
            'Context: chip 64Qv3, qubit 5.\nCurrent parameters of qubit 5: {"t1": 1}\n\nhello',
            Question("unknown"),
        ),
    ],
)
def test_questions_are_read_by_keywords(text: str, expected: Question) -> None:
    assert read_question(text) == expected


async def test_lost_t1_runs_the_sandbox_and_answers_from_its_result(demo_lab: Any, tmp_path: Any) -> None:
    final, model, tools = await ask(demo_lab, tmp_path, SUGGESTIONS[0])
    assert tools == ["get_chip_parameter_timeseries", "execute_python_analysis"]
    analysis = model.outputs()["execute_python_analysis"]
    assert analysis["error"] is None and analysis["chart_ids"] == ["c1"]
    summary = json.loads(analysis["output"])
    lost = summary["lost"]
    assert lost, "the small demo lab has qubits whose T1 dropped"
    assert all(row["last"] <= row["first"] * (1 - LOSS_THRESHOLD) + 1e-9 for row in lost)
    text = texts(final)
    assert f"**{len(lost)} of {summary['compared']} qubits lost T1**" in text
    listed = re.findall(r"^\| Q(\d+) \|", text, flags=re.MULTILINE)
    assert listed == [row["qid"] for row in lost[:10]]
    (chart,) = charts(final)
    assert chart["data"][0]["type"] == "bar"
    assert chart["data"][0]["x"] == ["Q" + row["qid"] for row in lost[:20]]
    assert final.result.wire()["assessment"] in ("warning", "bad")


async def test_heatmap_answer_quotes_the_tool_statistics(demo_lab: Any, tmp_path: Any) -> None:
    final, model, tools = await ask(demo_lab, tmp_path, SUGGESTIONS[1])
    assert tools == ["generate_chip_heatmap"]
    stats = model.outputs()["generate_chip_heatmap"]["statistics"]
    text = texts(final)
    assert text.startswith("**T2 echo heatmap**")
    assert (
        f"Median {stats['median']:.4g} μs" in text and f"{stats['count']} of {stats['total_qubits']}" in text
    )
    (low_qid, low), (high_qid, high) = stats["min"], stats["max"]  # the tool names its extremes
    assert f"lowest {low:.4g} μs (Q{low_qid}), highest {high:.4g} μs (Q{high_qid})." in text
    (chart,) = charts(final)
    assert chart["data"][0]["type"] == "heatmap"


async def test_failed_tasks_looks_in_the_latest_execution(demo_lab: Any, tmp_path: Any) -> None:
    final, model, tools = await ask(demo_lab, tmp_path, SUGGESTIONS[2])
    assert tools == ["get_execution_history", "search_task_results"]
    outputs = model.outputs()
    latest = outputs["get_execution_history"]["rows"][0][0]
    searched = [i for i in model.requests[-1].items if isinstance(i, FunctionCall)][-1]
    assert json.loads(searched.arguments) == {"execution_id": latest, "status": "failed", "last_n": 50}
    assert f"**{latest}**" in texts(final)
    failed = outputs["search_task_results"].get("rows", [])
    for row in failed:
        assert str(row[-1]) in texts(final)  # each failure's message is quoted
    assert final.result.wire()["assessment"] == ("warning" if failed else "good")


async def test_other_questions_get_the_list_of_what_the_demo_can_answer(demo_lab: Any, tmp_path: Any) -> None:
    final, _, tools = await ask(demo_lab, tmp_path, "Write me a poem about transmons")
    assert tools == []
    text = texts(final)
    assert "**demo model**" in text and all(f"- {s}" in text for s in SUGGESTIONS)
    assert "OPENAI_API_KEY" in text


async def test_a_turn_cut_short_by_the_round_budget_says_so(demo_lab: Any, tmp_path: Any) -> None:
    settings = demo_settings(tmp_path)
    settings = settings.model_copy(update={"agent": settings.agent.model_copy(update={"max_rounds": 1})})
    assistant = Assistant(demo_lab.db, settings)
    events = await collect(assistant.chat(DEMO, ChatRequest(message=SUGGESTIONS[0])))
    final = terminal(events)
    assert isinstance(final, Final) and final.stop_reason != "completed"
    assert "stop before my plan finished" in texts(final)
    assert [e.tool for e in events if isinstance(e, ToolFinished)] == ["get_chip_parameter_timeseries"]


def chat_tools(**actions: Any) -> list[ToolDef]:
    """The tools array of a chat turn under this ``actions:`` configuration."""
    return [ToolDef(spec.name, "", {}) for spec in default_specs(load_settings(actions=actions))]


EXCLUDE_Q16 = "Exclude Q16's latest CheckT1 result from the statistics"
LATEST_FOUND = [
    FunctionCall("call_demo_0", "get_latest_task_result", '{"task_name": "CheckT1", "qid": "16"}'),
    FunctionCallOutput("call_demo_0", '{"task_id": "t-16", "qid": "16", "name": "CheckT1"}'),
]


@pytest.mark.parametrize(
    ("actions", "question", "seen", "missing", "fix"),
    [
        ({}, EXCLUDE_Q16, LATEST_FOUND, "exclude_task_result",
         "`actions.enabled: true` in config/copilot.local.yaml (or QDASH_ACTIONS__ENABLED=true)"),
        ({}, "Undo that", [], "undo_action",
         "`actions.enabled: true` in config/copilot.local.yaml (or QDASH_ACTIONS__ENABLED=true)"),
        ({"enabled": True, "exclude_task_result": False}, EXCLUDE_Q16, LATEST_FOUND, "exclude_task_result",
         "`actions.exclude_task_result: true` in config/copilot.local.yaml "
         "(or QDASH_ACTIONS__EXCLUDE_TASK_RESULT=true)"),
    ],
)  # fmt: skip
async def test_a_write_tool_not_offered_says_how_to_switch_lab_actions_on(
    actions: dict[str, Any], question: str, seen: list[Item], missing: str, fix: str
) -> None:
    request = ModelRequest("", [UserMessage.text(question), *seen], chat_tools(**actions))
    assert missing not in {tool.name for tool in request.tools}
    response = await DemoModel("demo", "scripted", SUGGESTIONS).request(request)
    (answer,) = response.items
    assert isinstance(answer, AssistantMessage)
    text = answer.text
    assert f"not available here: {missing}." in text
    assert fix in text and "restart" in text and "docs/actions.md" in text


def test_too_few_measurements_is_not_called_good() -> None:
    """A window in which no qubit has two values answers "cannot tell", not "no qubit lost T1"."""
    series = Seen("get_chip_parameter_timeseries", {}, {"data_key": "t1", "unit": "μs"})
    empty = {"compared": 0, "lost": [], "start": "2026-11-17 15:10 UTC", "end": "2026-11-24 15:10 UTC"}
    analysis = Seen("execute_python_analysis", {}, {"output": json.dumps(empty), "error": None})
    answer = next_step(Question("lost", "t1"), [series, analysis], SUGGESTIONS)
    assert isinstance(answer, Answer) and answer.assessment is None
    assert answer.texts == [
        "I cannot tell: no qubit has two T1 measurements in the 7 days up to the latest measurement "
        "(2026-11-17 15:10 UTC → 2026-11-24 15:10 UTC)."
    ]


async def test_task_analysis_quotes_the_recorded_result_and_says_what_it_cannot_do(
    demo_lab: Any, tmp_path: Any
) -> None:
    """The dashboard's analysis sidebar on the demo model: the recorded facts, never a verdict."""
    doc = latest_check_t1(demo_lab)
    assistant = Assistant(demo_lab.db, demo_settings(tmp_path), figures=lambda task_result, max_bytes: [])
    events = await collect(assistant.analyze(DEMO, analyze_request(doc, "Why did this fail?")))
    final = terminal(events)
    assert isinstance(final, Final)
    text = texts(final)
    assert text.startswith(f"**Result**: task CheckT1 on qubit {doc['qid']} of chip {doc['chip_id']}")
    t1 = doc["output_parameters"]["t1"]
    assert f"- t1 = {t1['value']:.4g}" in text
    assert "cannot judge" in text and final.result.wire()["assessment"] is None


async def test_a_figure_question_without_a_qubit_asks_which_and_the_click_shows_the_run_figure(
    demo_lab: Any, tmp_path: Any
) -> None:
    asked, _, tools = await ask(demo_lab, tmp_path, "Show me the latest T1 figure")
    assert tools == ["ask_user"] and asked.stop_reason == "awaiting_user"
    (choices,) = asked.result.wire()["blocks"]
    options = choices["choices"]["options"]
    assert options == ["Latest T1 figure of Q16", "Latest T1 figure of Q0", "Latest T1 figure of Q5"]

    final, model, tools = await ask(demo_lab, tmp_path, options[0])  # the click is the next message
    assert tools == ["get_latest_task_result"]
    run = model.outputs()["get_latest_task_result"]
    assert run["task_name"] == "CheckT1" and run["qid"] == "16"
    assert f"- t1 = {run['output_parameters']['t1']['value']:.4g} μs" in texts(final)
    assert "figure is shown with this answer" in texts(final)
    figure = final.result.wire()["blocks"][-1]
    assert figure["type"] == "figure" and figure["figure"]["id"] == run["task_id"]
    loader = default_figures(demo_lab.db, demo_settings(tmp_path))
    png = load_run_figure(ProjectScope(demo_lab.db, "proj-demo"), run["task_id"], loader, 5_000_000)
    assert png is not None and png.startswith(b"\x89PNG")  # the demo's figure, rendered on request


UPSTREAM_SUGGESTIONS = (
    "Show T1 trend for Q00",
    "What are Q00's current parameters?",
    "Compare T1 and T2 for Q01",
    "Show gate fidelity history for Q00",
)
"""The newest upstream dashboard's own suggestion buttons (``CopilotChatPage.tsx`` in
oqtopus-team/qdash, ``SUGGESTED_QUESTIONS``), verbatim."""


def table_rows(text: str) -> list[list[str]]:
    """The cells of every markdown table row after the header separators."""
    rows = [line.strip("|").split(" | ") for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows]


async def test_one_qubits_trend_is_its_own_history(demo_lab: Any, tmp_path: Any) -> None:
    final, model, tools = await ask(demo_lab, tmp_path, UPSTREAM_SUGGESTIONS[0])
    assert tools == ["get_parameter_timeseries"]
    call = next(i for i in model.requests[-1].items if isinstance(i, FunctionCall))
    assert json.loads(call.arguments) == {"parameter_name": "t1", "qid": "0", "last_n": 10}
    series = model.outputs()["get_parameter_timeseries"]
    text = texts(final)
    assert text.startswith("**T1 of Q0**")
    times = [row[series["cols"].index("t")] for row in series["rows"]]
    values = [row[series["cols"].index("value")] for row in series["rows"]]
    assert len(values) >= 2
    shown = [row for row in table_rows(text) if row[0] in times]
    assert [row[0] for row in shown] == times and [float(row[1]) for row in shown] == [
        float(f"{v:.4g}") for v in values
    ]
    change = 100 * (values[-1] - values[0]) / abs(values[0])
    assert f"First to last: {change:+.1f} %" in text
    assert "lost" not in text.lower(), "not the chip-wide loss table"


async def test_two_parameters_of_one_qubit_are_both_answered(demo_lab: Any, tmp_path: Any) -> None:
    final, model, tools = await ask(demo_lab, tmp_path, UPSTREAM_SUGGESTIONS[2])
    assert tools == ["get_parameter_timeseries", "get_parameter_timeseries"]
    calls = [json.loads(i.arguments) for i in model.requests[-1].items if isinstance(i, FunctionCall)]
    assert [c["parameter_name"] for c in calls] == ["t1", "t2_echo"] and {c["qid"] for c in calls} == {"1"}
    text = texts(final)
    rows = {row[0]: row for row in table_rows(text)}
    assert {"T1", "T2 echo"} <= set(rows) and all(rows[name][-1] == "μs" for name in ("T1", "T2 echo"))
    assert '"T2" is read as T2 echo' in text


async def test_a_gate_fidelity_history_shows_every_gate_fidelity(demo_lab: Any, tmp_path: Any) -> None:
    final, _model, tools = await ask(demo_lab, tmp_path, UPSTREAM_SUGGESTIONS[3])
    assert tools == ["get_parameter_timeseries"] * 3
    text = texts(final)
    names = [row[0] for row in table_rows(text)]
    assert {"X90 gate fidelity", "X180 gate fidelity", "Average gate fidelity"} <= set(names)
    assert "current" not in text.lower(), "a history, not the current parameters table"


async def test_two_qubits_compared_side_by_side(demo_lab: Any, tmp_path: Any) -> None:
    final, model, tools = await ask(demo_lab, tmp_path, "Compare Q3 and Q7")
    assert tools == ["compare_qubits"]
    output = model.outputs()["compare_qubits"]
    text = texts(final)
    header, *rows = table_rows(text)
    assert header[:3] == ["parameter", "Q3", "Q7"]
    by_qid = {row[0]: dict(zip(output["cols"], row, strict=True)) for row in output["rows"]}
    t1 = next(row for row in rows if row[0] == "T1")
    assert [float(t1[1]), float(t1[2])] == [float(f"{by_qid[q]['t1']:.4g}") for q in ("3", "7")]


async def test_a_trend_without_a_parameter_says_so_and_lists_what_it_can(
    demo_lab: Any, tmp_path: Any
) -> None:
    final, _, tools = await ask(demo_lab, tmp_path, "Show the trend for Q3")
    assert tools == []
    text = texts(final)
    assert "names none I know" in text and "`t1`" in text
    assert "Compare Q3 and Q7 (two or more qubits" in text


def test_a_parameter_without_stored_values_is_said_plainly() -> None:
    """The tool's empty result ``{count: 0, filters}`` is "no run recorded one", beside the others."""
    question = read_question("Compare T1 and T2 for Q01")
    t1 = Seen(
        "get_parameter_timeseries",
        {"parameter_name": "t1"},
        {"unit": "μs", "cols": ["t", "value"], "rows": [["11-20 10:00", 41.0], ["11-21 10:00", 40.0]]},
    )
    t2 = Seen(
        "get_parameter_timeseries",
        {"parameter_name": "t2_echo"},
        {"count": 0, "filters": {"qid": "1"}, "excluded": 2},
    )
    answer = next_step(question, [t1, t2], SUGGESTIONS)
    assert isinstance(answer, Answer)
    assert "No T2 echo values (no run recorded one; 2 excluded from metrics)." in answer.texts[0]
    assert "| T1 | 11-20 10:00 |" not in answer.texts[0] and "| 11-21 10:00 | 40 |" in answer.texts[0]
    nothing = next_step(
        question, [Seen("get_parameter_timeseries", {"parameter_name": "t1"}, {"count": 0}), t2], SUGGESTIONS
    )
    assert isinstance(nothing, Answer)
    assert nothing.texts == ["Q1 has no stored T1 and T2 echo values (no run recorded one)."]


# --- scope: a question the script does not cover is refused, never answered as another one ----------


def _refused(question: Question, *words: str) -> bool:
    """``question`` is refused and the reason names ``words`` (what the script does not cover)."""
    return (
        question.kind == "unknown"
        and question.beyond is not None
        and all(w in question.beyond for w in words)
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Why did T1 of Q58 drop yesterday?", ("why",)),
        ("Which qubits lost T1 yesterday?", ("yesterday",)),
        ("Which qubits lost T1 this month?", ("this month",)),
        ("Which qubits lost T1 over the last 30 days?", ("last 30 days",)),
        ("Which tasks failed since Monday?", ("since monday",)),
        ("Show me the T1 heatmap from last week", ("last week",)),
        ("What was Q16's T1 yesterday?", ("yesterday",)),
        ("Did Q16 lose T1 this week?", ("this week",)),
        ("Why is the T2 echo heatmap so uneven?", ("why",)),
        ("Did Q3 and Q7 lose T1?", ("lose",)),
        ("Which tasks failed on Q3 and Q7?", ("Q3", "Q7")),
        ("What is the T1 fit error of Q5?", ("error",)),
        (
            "What is the bell state fidelity of coupling 35-34? The newest value whose fit did not fail.",
            ("coupling",),
        ),
        ("What is the bell state fidelity of Q35-Q34?", ("q35-q34",)),
        ("Which qubit had the most failed task results this week?", ("most",)),
        ("How many task results completed and how many failed in the last 3 days?", ("completed",)),
        ("Did the latest execution fail?", ("latest",)),
        # found by running the question set on the demo model (`qdash eval --mode live --model demo`):
        ("Which qubits are coupled to Q0?", ("coupled",)),
        ("How many versions of Q0's T1 have been recorded?", ("versions",)),
        ("What is the T1 of Q41 in the proj-other project's chip?", ("project",)),
        ("What is the T1 of Q5 on chip 144Qv2?", ("chip 144qv2",)),
        ("Show the X90 gate fidelity heatmap of chip 144Qv2.", ("chip 144qv2",)),
        ("How many task results did the AI review flag as REVIEW or FAIL this week?", ("review",)),
        ("How does a CheckRabi measurement typically fail?", ("how does",)),
        ("On which dates was Q15's T1 in its TLS dip?", ("dates",)),
        ("How many different calibration parameters are recorded for Q0?", ("how many",)),
        ("Which figure did the failed CheckT1 run on Q20 save?", ("failed",)),
        ("Which qubit's T1 has been degrading steadily over the calibration history?", ("history",)),
        (
            "Which qubits are consistently the worst on the chip (low T1, frequent failures)?",
            ("consistently",),
        ),
        ("What did the newest CheckT1 run on Q15 measure?", ("CheckT1",)),
        (
            "Which qubits had a task fail in execution 20261205-001 that had not failed in 20261204-001?",
            ("20261204-001",),
        ),
    ],
)
def test_a_scope_the_script_does_not_cover_is_refused(text: str, words: tuple[str, ...]) -> None:
    assert _refused(read_question(text), *words), read_question(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Which calibration runs failed this week?", Question("failed_tasks", window="7d")),
        ("Which tasks failed on Q16 in the last 3 days?", Question("failed_tasks", qid="16", window="3d")),
        ("Did any task fail in the past 24 hours?", Question("failed_tasks", window="24h")),
        ("Which T1 fits failed this week?", Question("failed_tasks", "t1", window="7d", task="CheckT1")),
        (
            "How many task results failed since 2026-11-29T00:00Z?",
            Question("failed_tasks", window="2026-11-29T00:00Z"),
        ),
        ("Which executions on the chip failed?", Question("failed_executions")),
        ("On which date was Q0's current T1 calibrated?", Question("qubit", "t1", "0")),
        ("What is the T1 of Q15 now, from a fit that did not fail?", Question("qubit", "t1", "15")),
        (
            "List the last three T2 echo results of Q0",
            Question("series", "t2_echo", "0", metrics=("t2_echo",)),
        ),
        (
            "Why did the CheckT1 run 20a8115a-b515-42ee-9ae5-4d09cf035279 on Q20 fail?",
            Question(
                "failed_tasks", qid="20", task="CheckT1", task_id="20a8115a-b515-42ee-9ae5-4d09cf035279"
            ),
        ),
        (
            "Which tasks failed in execution 20261205-003?",
            Question("failed_tasks", execution_id="20261205-003"),
        ),
        ("Which qubits lost T1 over the past week?", Question("lost", "t1", window="7d")),
    ],
)
def test_a_scope_the_script_covers_is_read_with_it(text: str, expected: Question) -> None:
    assert read_question(text) == expected


def default_chip(demo_lab: Any) -> str:
    """The chip the tools use when a question names none: the project's newest installed."""
    chip: str = demo_lab.db["chip"].find_one({"project_id": "proj-demo"}, sort=[("installed_at", -1)])[
        "chip_id"
    ]
    return chip


def raw_failed_since(demo_lab: Any, since: datetime) -> int:
    """Failed, kept task results of the default chip started since ``since``, read straight from the store."""
    query = {
        "project_id": "proj-demo",
        "chip_id": default_chip(demo_lab),
        "status": "failed",
        "start_at": {"$gte": since},
    }
    return sum(1 for run in demo_lab.db["task_result_history"].find(query) if run.get("excluded") is not True)


async def test_failed_this_week_searches_the_weeks_failed_results(demo_lab: Any, tmp_path: Any) -> None:
    """Not "no task failed in the latest execution" (with ``good``) while the week had failures."""
    before = datetime.now(UTC)
    final, model, tools = await ask(demo_lab, tmp_path, "Which calibration runs failed this week?")
    assert tools == ["search_task_results"]
    call = next(i for i in model.requests[-1].items if isinstance(i, FunctionCall))
    assert json.loads(call.arguments) == {"since": "7d", "status": "failed", "last_n": 50}
    output = model.outputs()["search_task_results"]
    failed = raw_failed_since(demo_lab, before - timedelta(days=7))
    assert failed > 0, "the small demo lab has failures every day"
    assert output["total"] == failed
    text = texts(final)
    assert f"**{failed} task results failed**" in text and "latest execution" not in text
    window = output["window"]
    assert window["since"] in text and window["until"] in text
    by_task = {row[0]: row[1] for row in output["failures"]["rows"]}
    listed = {row[0]: int(row[1]) for row in table_rows(text) if row[0] in by_task}
    assert listed == by_task and sum(listed.values()) == failed
    assert final.result.wire()["assessment"] == "warning"


async def test_why_did_a_qubits_t1_drop_yesterday_is_refused(demo_lab: Any, tmp_path: Any) -> None:
    """Not the chip-wide T1 loss table: the script cannot explain a cause, nor read "yesterday"."""
    final, _, tools = await ask(demo_lab, tmp_path, "Why did T1 of Q58 drop yesterday?")
    assert tools == []
    text = texts(final)
    assert text.startswith("I cannot answer that one") and '"why"' in text
    assert "**demo model**" in text and "lost T1" not in text.split("\n\n")[0]
    assert final.result.wire()["assessment"] is None


async def test_a_failure_count_is_the_tools_count_not_the_rows_listed(demo_lab: Any, tmp_path: Any) -> None:
    """The size guard may list fewer runs than the search found: the answer counts what it found."""
    busiest = demo_lab.db["task_result_history"].aggregate(
        [
            {"$match": {"project_id": "proj-demo", "chip_id": default_chip(demo_lab), "status": "failed"}},
            {"$group": {"_id": "$execution_id", "n": {"$sum": 1}}},
            {"$sort": {"n": -1}},
        ]
    )
    top = next(iter(busiest))
    final, model, _ = await ask(
        demo_lab, tmp_path, f"How many task results failed in execution {top['_id']}?"
    )
    output = model.outputs()["search_task_results"]
    listed = len(output["rows"])
    assert f"**{top['n']} task results failed**" in texts(final)
    if listed < top["n"]:
        assert f"Listed: the newest {listed} of them." in texts(final)


async def test_one_failed_run_named_by_its_id_is_answered_with_its_message(
    demo_lab: Any, tmp_path: Any
) -> None:
    run = demo_lab.db["task_result_history"].find_one(
        {"project_id": "proj-demo", "chip_id": default_chip(demo_lab), "status": "failed", "name": "CheckT1"},
        sort=[("start_at", -1)],
    )
    question = f"Why did the CheckT1 run {run['task_id']} on Q{run['qid']} fail?"
    final, model, tools = await ask(demo_lab, tmp_path, question)
    assert tools == ["search_task_results"]
    call = next(i for i in model.requests[-1].items if isinstance(i, FunctionCall))
    assert json.loads(call.arguments) == {
        "task_name": "CheckT1", "qid": run["qid"], "status": "failed", "last_n": 50
    }  # fmt: skip
    assert f"failed: {run['message']}." in texts(final) and "latest execution" not in texts(final)


async def test_failed_executions_are_the_executions_that_failed(demo_lab: Any, tmp_path: Any) -> None:
    """Not "no task failed in the latest execution" (with good) while an execution was aborted."""
    final, model, tools = await ask(demo_lab, tmp_path, "Which executions on the chip failed?")
    assert tools == ["get_execution_history"]
    chip = model.outputs()["get_execution_history"]["chip_id"]
    failed = demo_lab.db["execution_history"].find(
        {"project_id": "proj-demo", "chip_id": chip, "status": "failed"}
    )
    ids = sorted(e["execution_id"] for e in failed)
    assert ids, "the small demo lab aborts a 2Q execution"
    assert sorted(re.findall(r"^\| (\d{8}-\d{3}) \|", texts(final), flags=re.MULTILINE)) == ids
    assert final.result.wire()["assessment"] == "warning"


async def test_failed_tasks_of_a_named_execution_are_searched_there(demo_lab: Any, tmp_path: Any) -> None:
    oldest = demo_lab.db["execution_history"].find_one({"project_id": "proj-demo"}, sort=[("start_at", 1)])
    eid = oldest["execution_id"]
    final, model, tools = await ask(demo_lab, tmp_path, f"Which tasks failed in execution {eid}?")
    assert tools == ["search_task_results"]
    call = next(i for i in model.requests[-1].items if isinstance(i, FunctionCall))
    assert json.loads(call.arguments) == {"execution_id": eid, "status": "failed", "last_n": 50}
    assert f"**{eid}**" in texts(final) and "latest" not in texts(final)


def test_a_current_value_a_failed_run_wrote_is_said_not_valid_with_the_last_good_one() -> None:
    """``get_qubit_params`` marks such a value ``invalid`` with its ``last_good``: the answer says so."""
    stored = {"value": 9.1, "unit": "μs", "calibrated_at": "12-04 05:09"}
    failed = {**stored, "invalid": "failed: R² value too low (0.21 < 0.70)"}
    output = {
        "qid": "15",
        "chip_id": "64Qv3",
        "params": {"t1": {**failed, "last_good": {"value": 41.0, "calibrated_at": "12-03 05:10"}}},
    }
    answer = next_step(
        read_question("What is the T1 of Q15?"), [Seen("get_qubit_params", {}, output)], SUGGESTIONS
    )
    assert isinstance(answer, Answer)
    assert answer.texts[0].endswith(
        "**t1 above is not valid** (failed: R² value too low (0.21 < 0.70)): the last value that passed is "
        "41 μs (12-03 05:10)."
    )
    output["params"]["t1"]["last_good"] = None
    answer = next_step(
        read_question("What is the T1 of Q15?"), [Seen("get_qubit_params", {}, output)], SUGGESTIONS
    )
    assert isinstance(answer, Answer) and answer.texts[0].endswith("no run of it passed.")


def test_a_compared_value_the_tool_replaced_by_its_last_good_one_is_said_so() -> None:
    """``compare_qubits`` shows the last value that passed and lists the stored one in ``flagged``."""
    output = {
        "chip_id": "64Qv3",
        "units": {"t1": "μs"},
        "cols": ["qid", "t1"],
        "rows": [["3", 41.0], ["7", 75.7]],
        "flagged": {
            "cols": ["qid", "parameter", "value", "why", "last_good", "last_good_at"],
            "rows": [["3", "t1", 9.1, "failed: R² value too low (0.21 < 0.70)", 41.0, "12-03 05:10"]],
        },
    }
    answer = next_step(
        read_question("Compare the T1 of Q3 and Q7"), [Seen("compare_qubits", {}, output)], SUGGESTIONS
    )
    assert isinstance(answer, Answer)
    assert "| T1 | 41 | 75.7 | μs |" in answer.texts[0]
    assert (
        "Q3 T1: the stored 9.1 is not valid (failed: R² value too low (0.21 < 0.70)); shown: the last value "
        "that passed (12-03 05:10)."
    ) in answer.texts[0]


def test_a_failure_count_is_the_total_when_the_tool_counted_beyond_the_rows_it_lists() -> None:
    """A search cut at ``last_n`` says ``total`` for one execution, else only the rows' counts."""
    question = read_question("Which tasks failed in execution 20261128-001?")
    rows = {"cols": ["task_name", "qid", "message"], "rows": [["CheckT1", "3", "Fit did not converge"]] * 50}
    cut = {**rows, "status_counts": {"failed": 60}, "total": 60, "shown": "newest 50 of 60"}
    answer = next_step(question, [Seen("search_task_results", {}, cut)], SUGGESTIONS)
    assert isinstance(answer, Answer) and answer.texts[0].startswith("**60 task results failed**")
    uncounted = {**rows, "status_counts": {"failed": 50}}
    answer = next_step(question, [Seen("search_task_results", {}, uncounted)], SUGGESTIONS)
    assert isinstance(answer, Answer) and answer.texts[0].startswith("**at least 50 task results failed**")
