"""execute_python_analysis: session data + uploads reach the sandbox as a copy; charts bypass the model."""

from __future__ import annotations

import json
from typing import Any

from pymongo.database import Database

from qdash.copilot.service import ANALYSIS_TOOL, CopilotDataService
from qdash.copilot.tools.catalog import SPECS
from qdash.copilot.tools.output import ToolData, output_data
from qdash.copilot.tools.registry import ToolRegistry
from qdash.copilot.tools.spec import ToolContext
from qdash.copilot.tools.wrappers.charts import PLACEMENT_NOTE
from qdash.settings import Settings
from tests.support.turn_tools import one_turn

from . import fakes


class Reply:
    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    def to_dict(self) -> dict[str, Any]:
        return self.body


class RecordingSandbox:
    """Records what it was sent and answers with a canned reply (the real pool has its own tests)."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.seen: dict[str, Any] = {}

    async def run(self, code: str, data: dict[str, Any] | None = None) -> Reply:
        self.calls.append((code, data or {}))
        self.seen = dict(data or {})
        if data:
            data.clear()  # a sandbox that mutates its input must not reach the store
        return Reply(self.reply)


class Uploads:
    def load_rows(self, project_id: str, username: str, session_id: str) -> dict[str, list[dict[str, Any]]]:
        return {"runs.csv": [{"project": project_id, "user": username, "session": session_id}]}


ANALYSIS_SPEC = next(s for s in SPECS if s.name == ANALYSIS_TOOL)


def _service(
    db: Database[dict[str, Any]], settings: Settings, sandbox: Any, uploads: Any = None
) -> CopilotDataService:
    registry = ToolRegistry([ANALYSIS_SPEC, *[s for s in fakes.SPECS if s.name != ANALYSIS_TOOL]])
    return CopilotDataService(
        ToolContext(db, "proj-a", "alice", settings, "s1", sandbox=sandbox, uploads=uploads),
        registry=registry,
    )


async def test_code_runs_over_stored_data_and_uploads(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    sandbox = RecordingSandbox({"output": "mean 71.5\n", "error": None, "chart": None})
    service = _service(mongo_db, settings, sandbox, Uploads())
    tools = one_turn(service)
    await tools["get_chip_parameter_timeseries"]({"parameter_name": "t1", "qid": None})
    out = await tools[ANALYSIS_TOOL]({"code": "print(pd.DataFrame(data['t1']['qubits']).latest.mean())"})
    assert not out.is_error
    assert json.loads(out.model_text) == {"output": "mean 71.5\n", "error": None, "chart": None}
    code, data = sandbox.calls[0]
    assert code.startswith("print(")
    assert data == {}  # the sandbox cleared its copy ...
    assert len(service.data_store().get("t1")["timeseries"]) == 1280  # ... the store is intact


async def test_sandbox_sees_the_session_keys(mongo_db: Database[dict[str, Any]], settings: Settings) -> None:
    seen: dict[str, Any] = {}

    class Peek(RecordingSandbox):
        async def run(self, code: str, data: dict[str, Any] | None = None) -> Reply:
            seen.update(data or {})
            return Reply(self.reply)

    service = _service(mongo_db, settings, Peek({"output": "", "error": None, "chart": None}), Uploads())
    tools = one_turn(service)
    await tools["get_chip_parameter_timeseries"]({"parameter_name": "t1", "qid": None})
    await tools[ANALYSIS_TOOL]({"code": "x = 1"})
    assert sorted(seen) == ["runs.csv", "t1"]
    assert seen["runs.csv"] == [{"project": "proj-a", "user": "alice", "session": "s1"}]


async def test_sandbox_errors_and_charts(mongo_db: Database[dict[str, Any]], settings: Settings) -> None:
    failing = RecordingSandbox(
        {"output": None, "error": "ImportError: Import of 'os' is not allowed", "chart": None}
    )
    out = await one_turn(_service(mongo_db, settings, failing))[ANALYSIS_TOOL]({"code": "import os"})
    assert out.is_error and json.loads(out.model_text)["error"].startswith("ImportError: Import of 'os'")
    figure = {"data": [{"type": "scatter", "y": [1, 2, 3]}], "layout": {}}
    charting = RecordingSandbox({"output": "done", "error": None, "chart": figure})
    out = await one_turn(_service(mongo_db, settings, charting))[ANALYSIS_TOOL](
        {"code": "result = {'output': 'done', 'chart': fig}"}
    )
    body = json.loads(out.model_text)
    assert body == {
        "output": "done", "error": None, "chart": None, "chart_ids": ["c1"],
        "chart_note": "Chart(s) generated. They will be automatically appended to your response.",
        "chart_placement": PLACEMENT_NOTE.format(chart_id="c1"),
    }  # fmt: skip
    assert output_data(out) == ToolData(shown=body, charts=[figure], chart_ids=["c1"])


async def test_without_a_sandbox_the_model_gets_a_structured_error(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    out = await one_turn(_service(mongo_db, settings, None))[ANALYSIS_TOOL]({"code": "print(1)"})
    body = json.loads(out.model_text)
    assert out.is_error and body["error"].startswith("Sandbox unavailable")
    assert body["hint"]


async def test_real_uploads_reach_the_sandbox(mongo_db: Database[dict[str, Any]], settings: Settings) -> None:
    from qdash.uploads import UploadStore

    uploads = UploadStore(mongo_db, settings.uploads)
    uploads.save("proj-a", "alice", "s1", "runs", b"qid,t1\n16,45.5\n17,\n")
    sandbox = RecordingSandbox({"output": "ok", "error": None, "chart": None})
    registry = ToolRegistry([ANALYSIS_SPEC])
    service = CopilotDataService(
        ToolContext(mongo_db, "proj-a", "alice", settings, "s1", sandbox=sandbox, uploads=uploads),
        registry=registry,
    )
    await service.call(ANALYSIS_SPEC.name, {"code": "print(data['runs.csv'])"})
    table = sandbox.seen["runs"]
    assert table[0]["t1"] == 45.5 and table[1]["t1"] is None
