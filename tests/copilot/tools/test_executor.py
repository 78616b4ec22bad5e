"""Executors: validation errors, exceptions, timeouts and clamping become structured JSON, never raise."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from typing import Any

import pytest
from pymongo.database import Database

from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.registry import ToolRegistry
from qdash.copilot.tools.spec import ToolContext
from qdash.engine.tool import Tool
from qdash.settings import Settings, load_settings
from tests.support.turn_tools import OneTurn, one_turn

from . import fakes


def make_service(
    db: Database[dict[str, Any]], settings: Settings, session_id: str | None = None, project: str = "proj-a"
) -> CopilotDataService:
    return CopilotDataService(
        ToolContext(db, project, "alice", settings, session_id), registry=ToolRegistry(fakes.SPECS)
    )


def tools_by_name(service: CopilotDataService) -> OneTurn:
    return one_turn(service)


async def test_executors_satisfy_the_engine_protocol(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    tools = make_service(mongo_db, settings).tools()
    assert all(isinstance(tool, Tool) for tool in tools)
    echo = next(t for t in tools if t.name == "echo")
    assert echo.label == "Echoing"
    assert echo.parameters["required"] == ["qid", "last_n"]


async def test_project_comes_from_the_context_not_the_arguments(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    echo = tools_by_name(make_service(mongo_db, settings))["echo"]
    out = await echo({"qid": "16", "last_n": None})
    body = json.loads(out.model_text)
    assert body == {"project_id": "proj-a", "qid": "16", "last_n": 5, "value": 45.23}
    refused = await echo({"qid": "16", "last_n": 5, "project_id": "proj-b"})
    assert refused.is_error
    assert "project_id" in json.loads(refused.model_text)["error"]


async def test_validation_error_names_the_field(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    echo = tools_by_name(make_service(mongo_db, settings))["echo"]
    out = await echo({"last_n": "many"})
    body = json.loads(out.model_text)
    assert out.is_error
    assert body["error"].startswith("Invalid arguments for echo: ")
    assert "qid: Field required" in body["error"]
    assert "last_n:" in body["error"]
    assert body["hint"]


async def test_out_of_range_integers_are_clamped_and_reported(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    echo = tools_by_name(make_service(mongo_db, settings))["echo"]
    body = json.loads((await echo({"qid": "1", "last_n": 500})).model_text)
    assert body["last_n"] == 50
    assert body["_clamped"] == {"last_n": 50}
    body = json.loads((await echo({"qid": "1", "last_n": 0})).model_text)
    assert body["_clamped"] == {"last_n": 1}
    for qid, sent in (("2", "500"), ("3", 500.0)):  # a number as text, a whole float: still numbers
        assert json.loads((await echo({"qid": qid, "last_n": sent})).model_text)["_clamped"] == {"last_n": 50}
    refused = await echo({"qid": "4", "last_n": False})  # pydantic reads it as 0; not a number to clamp
    assert refused.is_error and "last_n:" in json.loads(refused.model_text)["error"]


async def test_exceptions_become_errors_with_hints(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    tools = tools_by_name(make_service(mongo_db, settings))
    out = await tools["broken"]({})
    body = json.loads(out.model_text)
    assert out.is_error
    assert body["error"] == "RuntimeError: boom"
    assert "Traceback" not in out.model_text and body["hint"]
    out = await tools["refusing"]({})
    assert json.loads(out.model_text) == {
        "error": "No results found (qid=99)",
        "hint": "list the qubits first",
    }


async def test_timeout_returns_the_timeout_error(mongo_db: Database[dict[str, Any]], tmp_path: Any) -> None:
    settings = load_settings(
        database={"data_dir": str(tmp_path), "mongo_uri": None}, tools={"timeout_s": 0.2}
    )
    out = await tools_by_name(make_service(mongo_db, settings))["slow"]({})
    body = json.loads(out.model_text)
    assert out.is_error
    assert body["error"] == "Tool slow timed out after 0.2 s"


async def test_sync_tools_run_off_the_event_loop(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    seen: list[str] = []

    def record(ctx: Any, args: Any) -> dict[str, Any]:
        seen.append(threading.current_thread().name)
        return {"qid": args.qid}

    specs = [replace(s, impl=record) if s.name == "echo" else s for s in fakes.SPECS]
    service = CopilotDataService(ToolContext(mongo_db, "p", "u", settings), registry=ToolRegistry(specs))
    await tools_by_name(service)["echo"]({"qid": "3", "last_n": 1})
    assert seen and seen[0].startswith("qdash-tool")


async def test_non_object_arguments_are_an_error(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    out = await tools_by_name(make_service(mongo_db, settings))["echo"](["16"])  # type: ignore[arg-type]
    assert out.is_error
    error = json.loads(out.model_text)["error"]
    assert error == "Invalid arguments for echo: expected a JSON object, got list"  # the engine's check


def test_service_requires_a_project(mongo_db: Database[dict[str, Any]], settings: Settings) -> None:
    with pytest.raises(ValueError, match="project_id"):
        make_service(mongo_db, settings, project="")
