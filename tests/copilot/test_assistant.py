"""Scenario suite: the assistant on the demo lab, driven through the real openai SDK against the fake LLM.

Each scenario scripts the model's turns; the tools, prompts, history and events are the real ones,
so the assertions check what a lab user would see (values from the demo database, charts, status
sequence) and what the model was sent (tool outputs, instructions, images).
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from qdash.copilot.prompts import load_task_knowledge
from qdash.copilot.references import knowledge_references
from qdash.copilot.requests import AnalyzeRequest, ChatRequest, HistoryEntry, ModelOverride
from qdash.demo.references import REFERENCE_DIR
from qdash.engine.events import Event, Failed, Final, Status, ToolFinished
from qdash.evaluation.fake_llm import FakeLLMServer, call, turn
from qdash.repositories.scope import Doc
from qdash.settings import Settings, load_settings
from tests.support.settings import fake_model, settings_on_fake

from .conftest import AssistantFactory

KEY_ENV = "QDASH_TEST_FAKE_KEY"
PACKAGED_ONLY = Path(__file__).parent / "no-config-dir"  # absent: every file comes from the package
CHECK_T1_ALT = load_task_knowledge(PACKAGED_ONLY)["CheckT1"].expected_images[0].alt_text


class Scope:
    def __init__(self, project_id: str, username: str) -> None:
        self.project_id = project_id
        self.username = username


DEMO = Scope("proj-demo", "alice")
OTHER = Scope("proj-other", "bob")


def blocks(text: str, assessment: str | None = None) -> str:
    return json.dumps(
        {"blocks": [{"type": "text", "content": text, "chart": None}], "assessment": assessment}
    )


def fake_settings(fake: FakeLLMServer, tmp_path: Any, **agent: Any) -> Settings:
    url = fake.openai_base_url
    models = {
        "fake": fake_model(url, key_env=KEY_ENV),
        "local": fake_model(url, "gemma:2b", provider="ollama", api_style="chat_completions"),
    }
    return settings_on_fake(tmp_path, models, agent={"max_retries": 0, **agent})


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")


async def collect(events: Any) -> list[Event]:
    return [event async for event in events]


def terminal(events: list[Event]) -> Final | Failed:
    last = events[-1]
    assert isinstance(last, Final | Failed)
    assert sum(isinstance(e, Final | Failed) for e in events) == 1
    return last


def steps(events: list[Event]) -> list[str]:
    return [e.step for e in events if isinstance(e, Status)]


def qubit_doc(demo_lab: Any, project: str, chip: str, qid: str) -> Doc:
    doc = demo_lab.db["qubit"].find_one({"project_id": project, "chip_id": chip, "qid": qid})
    assert doc is not None
    return doc


def demo_chip(demo_lab: Any, project: str = "proj-demo") -> str:
    chip = demo_lab.db["chip"].find_one({"project_id": project}, sort=[("installed_at", -1)])
    assert chip is not None
    return str(chip["chip_id"])


Chat = Callable[..., Awaitable[list[Event]]]


@pytest.fixture
def chat(demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory) -> Chat:
    """Ask in chat mode on the demo lab and the fake: ``await chat(message or request, scope, **agent)``
    returns the run's events (``agent``: the agent settings, e.g. ``max_rounds``)."""

    async def ask(message: str | ChatRequest, scope: Scope = DEMO, **agent: Any) -> list[Event]:
        request = ChatRequest(message=message) if isinstance(message, str) else message
        settings = fake_settings(fake_llm, tmp_path, **agent)
        return await collect(make_assistant(demo_lab.db, settings).chat(scope, request))

    return ask


async def test_question_without_tools(fake_llm: FakeLLMServer, chat: Chat) -> None:
    fake_llm.script(blocks("A T1 measurement tracks energy relaxation."))
    events = await chat("What is T1?")
    final = terminal(events)
    assert isinstance(final, Final)
    assert final.result.wire()["blocks"][0]["content"] == "A T1 measurement tracks energy relaxation."
    assert steps(events) == ["load_config", "run_chat", "thinking", "complete"]
    request = fake_llm.last_request
    assert request.json["store"] is False
    assert "grades (the lab's thresholds)" in request.json["instructions"]  # tools carry the grades
    assert len(request.json["tools"]) >= 17


async def test_one_tool_returns_the_stored_value(demo_lab: Any, fake_llm: FakeLLMServer, chat: Chat) -> None:
    chip = demo_chip(demo_lab)
    stored_t1 = qubit_doc(demo_lab, "proj-demo", chip, "16")["data"]["t1"]["value"]
    fake_llm.script(call("get_qubit_params", {"chip_id": None, "qid": "Q16"}), blocks("T1 is fine.", "good"))
    events = await chat("T1 of Q16?")
    final = terminal(events)
    assert isinstance(final, Final) and final.result.wire()["assessment"] == "good"
    tool_status = [e for e in events if isinstance(e, Status) and e.step == "tool_call"]
    assert (
        tool_status[0].tool == "get_qubit_params" and tool_status[0].message == "Fetching qubit parameters..."
    )
    assert any(isinstance(e, ToolFinished) and not e.is_error for e in events)
    output = json.loads(next(iter(fake_llm.last_request.tool_outputs().values())))
    assert (output["chip_id"], output["qid"]) == (chip, "16")
    assert output["params"]["t1"]["unit"] == "μs"
    assert output["params"]["t1"]["value"] == pytest.approx(stored_t1, rel=1e-3)


async def test_parallel_tools_keep_model_order(fake_llm: FakeLLMServer, chat: Chat) -> None:
    fake_llm.script(
        turn(
            call("get_qubit_params", {"chip_id": None, "qid": "3"}),
            call("get_chip_topology", {"chip_id": None}),
        ),
        blocks("Both fetched."),
    )
    events = await chat("Q3 and layout")
    assert isinstance(terminal(events), Final)
    outputs = fake_llm.last_request.tool_outputs()
    assert list(outputs) == ["call_fake_0001", "call_fake_0002"]
    completed = [e for e in events if isinstance(e, Status) and e.step == "thinking"][-1].completed_tools
    assert completed is not None and len(completed) == 2


async def test_chain_lineage_then_provenance_graph(fake_llm: FakeLLMServer, chat: Chat) -> None:
    def follow_entity(request: Any) -> Any:
        lineage = json.loads(next(iter(request.tool_outputs().values())))
        entity_id = _first_entity_id(lineage)
        assert entity_id is not None, lineage
        return call("get_provenance_lineage_graph", {"entity_id": entity_id, "chip_id": None, "max_depth": 2})

    fake_llm.script(
        call("get_parameter_lineage", {"parameter_name": "t1", "qid": "16", "chip_id": None, "last_n": 3}),
        follow_entity,
        blocks("T1 of Q16 was derived from the pulse calibration."),
    )
    events = await chat("Where does T1 come from?")
    assert isinstance(terminal(events), Final)
    graph_output = list(fake_llm.last_request.tool_outputs().values())[-1]
    assert "error" not in json.loads(graph_output)


def _first_entity_id(value: Any) -> str | None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "entity_id" and isinstance(item, str):
                return item
            found = _first_entity_id(item)
            if found:
                return found
    if isinstance(value, list):
        if value and isinstance(value[0], str) and value[0].count(":") == 3:
            return value[0]
        for item in value:
            found = _first_entity_id(item)
            if found:
                return found
    if isinstance(value, str) and value.count(":") == 3 and value.startswith("t1:"):
        return value
    return None


async def test_round_budget_forces_a_final_answer(fake_llm: FakeLLMServer, chat: Chat) -> None:
    fake_llm.script(
        call("get_qubit_params", {"chip_id": None, "qid": "1"}),
        call("get_qubit_params", {"chip_id": None, "qid": "2"}),
        blocks("Partial answer from what I have."),
    )
    events = await chat("Check all", max_rounds=2)
    final = terminal(events)
    assert isinstance(final, Final) and final.stop_reason == "max_rounds"
    assert fake_llm.last_request.json["tool_choice"] == "none"


async def test_tool_error_then_recovery(fake_llm: FakeLLMServer, chat: Chat) -> None:
    fake_llm.script(
        call("get_qubit_params", {"chip_id": None, "qid": "999"}),
        call("get_qubit_params", {"chip_id": None, "qid": "9"}),
        blocks("Q999 does not exist; Q9 is fine."),
    )
    events = await chat("Q999?")
    assert isinstance(terminal(events), Final)
    first, second = fake_llm.last_request.tool_outputs().values()
    assert "error" in json.loads(first)
    assert "error" not in json.loads(second)


async def test_missing_detail_gets_a_clarifying_question(fake_llm: FakeLLMServer, chat: Chat) -> None:
    fake_llm.script(blocks("Which qubit do you mean? For example Q16."))
    events = await chat("Why did the fit fail?")
    final = terminal(events)
    assert isinstance(final, Final) and final.result.wire()["blocks"][0]["content"].startswith("Which qubit")
    assert "If a detail you cannot look up is missing, ask." in fake_llm.last_request.json["instructions"]


async def test_preloaded_qubit_params_and_condensed_history(
    demo_lab: Any, fake_llm: FakeLLMServer, chat: Chat
) -> None:
    chip = demo_chip(demo_lab)
    fake_llm.script(blocks("Noted."))
    earlier = json.dumps(
        {
            "blocks": [
                {"type": "chart", "content": None, "chart": {"data": [], "layout": {"title": "T1 map"}}}
            ],
            "assessment": None,
        }
    )
    request = ChatRequest(
        message="And now?",
        chip_id=chip,
        qid="16",
        conversation_history=[
            HistoryEntry(role="user", content="Show T1"),
            HistoryEntry(role="assistant", content=earlier),
            HistoryEntry(role="assistant", content="Error: HTTP 500"),
        ],
    )
    events = await chat(request)
    assert steps(events)[:3] == ["load_config", "load_qubit_params", "run_chat"]
    sent = fake_llm.last_request.json["input"]
    texts = json.dumps(sent, ensure_ascii=False)
    assert "[chart: T1 map]" in texts and "Error: HTTP 500" not in texts
    assert f"Context: chip {chip}, qubit 16." in fake_llm.last_request.last_user_text()


async def test_unknown_model_and_disabled_copilot(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory
) -> None:
    settings = fake_settings(fake_llm, tmp_path)
    request = ChatRequest(message="hi", model_override=ModelOverride(alias="gpt-99"))
    final = terminal(await collect(make_assistant(demo_lab.db, settings).chat(DEMO, request)))
    assert isinstance(final, Failed) and final.detail.startswith("Chat failed: Unknown model 'gpt-99'")
    disabled = settings.model_copy(update={"copilot": settings.copilot.model_copy(update={"enabled": False})})
    final = terminal(
        await collect(make_assistant(demo_lab.db, disabled).chat(DEMO, ChatRequest(message="hi")))
    )
    assert isinstance(final, Failed) and (final.code, final.detail) == ("disabled", "Copilot is not enabled")


async def test_project_isolation_in_tool_results(demo_lab: Any, fake_llm: FakeLLMServer, chat: Chat) -> None:
    other_chip = demo_chip(demo_lab, "proj-other")
    fake_llm.script(call("get_qubit_params", {"chip_id": other_chip, "qid": "0"}), blocks("ok"))
    await chat("Q0?", OTHER)
    output = json.loads(next(iter(fake_llm.last_request.tool_outputs().values())))
    other_value = qubit_doc(demo_lab, "proj-other", other_chip, "0")["data"]["t1"]["value"]
    demo_value = qubit_doc(demo_lab, "proj-demo", other_chip, "0")["data"]["t1"]["value"]
    assert demo_value != pytest.approx(other_value, rel=1e-3)  # the same chip id holds other data
    assert output["params"]["t1"]["value"] == pytest.approx(other_value, rel=1e-3)


async def test_tool_less_local_model_uses_the_text_protocol(fake_llm: FakeLLMServer, chat: Chat) -> None:
    fake_llm.script(
        '<tool_call>{"name": "get_qubit_params", "arguments": {"qid": "5"}}</tool_call>',
        blocks("Q5 looks healthy."),
    )
    events = await chat(ChatRequest(message="Q5?", model_override=ModelOverride(alias="local")))
    final = terminal(events)
    assert isinstance(final, Final) and final.result.wire()["blocks"][0]["content"] == "Q5 looks healthy."
    last = fake_llm.last_request.json
    assert "tools" not in last
    assert "<tool_response" in json.dumps(last["messages"])


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"\x00\xff\x00\x00"
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def input_images(sent: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``input_image`` parts of a recorded Responses request, in order."""
    parts = [p for item in sent["input"] if isinstance(item.get("content"), list) for p in item["content"]]
    return [p for p in parts if p.get("type") == "input_image"]


def latest_check_t1(demo_lab: Any) -> Doc:
    doc = demo_lab.db["task_result_history"].find_one(
        {"project_id": "proj-demo", "name": "CheckT1", "status": "completed"}, sort=[("start_at", -1)]
    )
    assert doc is not None
    return doc


def analyze_request(doc: Doc, message: str = "Compare with a good result.") -> AnalyzeRequest:
    return AnalyzeRequest(
        task_name=doc["name"],
        chip_id=doc["chip_id"],
        qid=doc["qid"],
        execution_id=doc["execution_id"],
        task_id=doc["task_id"],
        message=message,
    )


async def test_analysis_mode_sends_the_figure(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory
) -> None:
    doc = latest_check_t1(demo_lab)
    png = _png()
    fake_llm.script(blocks("The decay is clean; T1 is within the good range.", "good"))
    settings = fake_settings(fake_llm, tmp_path)
    assistant = make_assistant(
        demo_lab.db, settings, figures=lambda task_result, max_bytes: [("fig.png", png)]
    )
    request = analyze_request(doc, "Is this fit trustworthy?")
    events = await collect(assistant.analyze(DEMO, request))
    final = terminal(events)
    assert isinstance(final, Final)
    assert final.result.wire()["images_sent"]["experiment_figure"] is True
    assert steps(events)[:4] == ["build_context", "load_images", "run_analysis", "thinking"]
    sent = fake_llm.last_request.json
    assert "two-level-system" in sent["instructions"]
    images = input_images(sent)
    assert len(images) == 2  # the figure, then the shipped knowledge's rendered CheckT1 reference
    assert images[0]["image_url"] == "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    assert final.result.wire()["images_sent"]["expected_images"] == [{"alt_text": CHECK_T1_ALT, "index": 0}]
    assert f"task_id {doc['task_id']}" in json.dumps(sent["input"])


async def test_analysis_sends_the_references_after_the_figure(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory
) -> None:
    config = tmp_path / "config"
    (config / "knowledge" / "CheckT1").mkdir(parents=True)
    (config / "task_knowledge.yaml").write_text(
        "CheckT1:\n  summary: T1.\n  expected_images:\n    - alt_text: Clean decay.\n"
        "    - alt_text: Operator's own.\n",
        encoding="utf-8",
    )
    own = _png()
    (config / "knowledge" / "CheckT1" / "1.png").write_bytes(own)
    fake_llm.script(blocks("Matches the reference.", "good"))
    settings = fake_settings(fake_llm, tmp_path)
    assistant = make_assistant(
        demo_lab.db,
        settings,
        figures=lambda task_result, max_bytes: [("fig.png", _png())],
        references=knowledge_references(config, tmp_path / "data"),
    )
    events = await collect(assistant.analyze(DEMO, analyze_request(latest_check_t1(demo_lab))))
    final = terminal(events)
    assert isinstance(final, Final)
    assert final.result.wire()["images_sent"]["expected_images"] == [
        {"alt_text": "Clean decay.", "index": 0},
        {"alt_text": "Operator's own.", "index": 1},
    ]
    load = next(e for e in events if isinstance(e, Status) and e.step == "load_images")
    assert load.message == "Sending experiment figure and 2 reference images to AI..."
    sent = fake_llm.last_request.json
    images = input_images(sent)
    assert len(images) == 3
    rendered = (tmp_path / "data" / REFERENCE_DIR / "CheckT1.png").read_bytes()
    assert images[1]["image_url"] == "data:image/png;base64," + base64.b64encode(rendered).decode("ascii")
    assert images[2]["image_url"] == "data:image/png;base64," + base64.b64encode(own).decode("ascii")
    text = json.dumps(sent["input"], ensure_ascii=False)
    assert "2 reference figure(s) of a good CheckT1 result" in text
    assert "image 2: Clean decay." in text and "image 3: Operator's own." in text


async def test_analysis_without_images_sends_no_references(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory
) -> None:
    fake_llm.script(blocks("Numbers only.", "good"))
    settings = fake_settings(fake_llm, tmp_path)
    settings = settings.model_copy(
        update={"analysis": settings.analysis.model_copy(update={"multimodal": False})}
    )
    assistant = make_assistant(demo_lab.db, settings)
    final = terminal(await collect(assistant.analyze(DEMO, analyze_request(latest_check_t1(demo_lab)))))
    assert isinstance(final, Final)
    assert final.result.wire()["images_sent"]["expected_images"] == []
    assert input_images(fake_llm.last_request.json) == []
    assert "reference figure" not in json.dumps(fake_llm.last_request.json["input"])
    assert not (tmp_path / REFERENCE_DIR).exists()


async def test_analysis_of_another_projects_result_is_not_found(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory
) -> None:
    doc = demo_lab.db["task_result_history"].find_one({"project_id": "proj-demo"})
    assert doc is not None
    settings = fake_settings(fake_llm, tmp_path)
    request = analyze_request(doc, "?")
    final = terminal(await collect(make_assistant(demo_lab.db, settings).analyze(OTHER, request)))
    assert isinstance(final, Failed) and "Task result not found" in final.detail


async def test_cancellation_stops_the_run(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory
) -> None:
    fake_llm.script(turn(call("get_qubit_params", {"chip_id": None, "qid": "1"}), delay_s=5.0))
    settings = fake_settings(fake_llm, tmp_path)
    stream = make_assistant(demo_lab.db, settings).chat(DEMO, ChatRequest(message="slow"))
    seen: list[Event] = []

    async def consume() -> None:
        async for event in stream:
            seen.append(event)

    task = asyncio.create_task(consume())
    for _ in range(100):  # wait until the model request is in flight
        if fake_llm.requests:
            break
        await asyncio.sleep(0.05)
    assert fake_llm.requests, "the model request never reached the fake server"
    started = asyncio.get_running_loop().time()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert asyncio.get_running_loop().time() - started < 4.0  # did not wait for the 5 s answer
    assert not any(isinstance(e, Final | Failed) for e in seen)
    fake_llm.reset()  # the delayed turn is never answered: the client went away


async def test_analysis_renders_the_demo_figure_on_first_use(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory
) -> None:
    from qdash.copilot.analysis_context import files_under
    from qdash.demo.figures import ensure_figure

    doc = demo_lab.db["task_result_history"].find_one(
        {"project_id": "proj-demo", "name": "CheckRabi", "status": "completed"}, sort=[("start_at", -1)]
    )
    assert doc is not None and doc["figure_path"]
    fake_llm.script(blocks("Clean oscillation.", "good"))
    settings = fake_settings(fake_llm, tmp_path)
    assistant = make_assistant(demo_lab.db, settings, figures=files_under(tmp_path, ensure_figure))
    request = analyze_request(doc, "ok?")
    final = terminal(await collect(assistant.analyze(DEMO, request)))
    assert isinstance(final, Final)
    assert final.result.wire()["images_sent"]["experiment_figure_paths"] == [doc["figure_path"][0]]
    assert (tmp_path / doc["figure_path"][0]).read_bytes().startswith(b"\x89PNG")
    image = next(
        p
        for item in fake_llm.last_request.json["input"]
        if isinstance(item.get("content"), list)
        for p in item["content"]
        if p.get("type") == "input_image"
    )
    assert image["image_url"].startswith("data:image/png;base64,iVBOR")


async def test_chat_analysis_sees_the_sessions_uploads_and_stored_data(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory
) -> None:
    from qdash.uploads import UploadStore
    from tests.api.api_helpers import EchoSandbox

    settings = fake_settings(fake_llm, tmp_path)
    session = f"upload-test-{id(tmp_path)}"
    uploads = UploadStore(demo_lab.db, settings.uploads)
    uploads.save("proj-demo", "alice", session, "runs", b"qid,t1\n16,45.2\n17,51.0\n")
    sandbox = EchoSandbox()
    fake_llm.script(
        call("get_chip_summary", {"chip_id": None, "param_names": ["t1"]}),
        call("execute_python_analysis", {"code": "print(len(data['runs']))"}),
        blocks("Two uploaded rows."),
    )
    try:
        assistant = make_assistant(demo_lab.db, settings, sandbox=sandbox)
        final = terminal(
            await collect(assistant.chat(DEMO, ChatRequest(message="rows?", session_id=session)))
        )
        assert isinstance(final, Final)
        seen = sandbox.seen[-1]
        assert [row["qid"] for row in seen["runs"]] == [16, 17]
        assert "chip_summary" in seen  # the stored tool result of the earlier round
    finally:
        uploads.delete("proj-demo", "alice", session, "runs")
        demo_lab.db["copilot_data_store"].delete_many({"session_id": session})


async def test_process_sandbox_that_cannot_start_answers_with_its_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    import qdash.sandbox as sandbox_module
    from qdash.copilot.assistant import _ProcessSandbox
    from qdash.sandbox import SandboxPool, SandboxUnavailableError

    class Unavailable(SandboxPool):
        async def run(self, code: str, data: dict[str, Any] | None = None, **_: Any) -> Any:
            return sandbox_module.SandboxResult(
                output=None, chart=None, error="Sandbox unavailable: net (no netns)", ms=0.0
            )

    async def refuse(_settings: Any) -> SandboxPool:
        raise SandboxUnavailableError("Sandbox unavailable: net (no netns)")

    monkeypatch.setattr(sandbox_module, "start_sandbox", refuse)
    monkeypatch.setattr(sandbox_module, "get_sandbox", lambda: Unavailable(load_settings().sandbox))
    reply = await _ProcessSandbox(load_settings()).run("print(1)", {})
    assert reply.to_dict()["error"] == "Sandbox unavailable: net (no netns)"
