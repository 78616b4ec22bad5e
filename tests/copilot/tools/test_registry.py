"""The registry: declared tools (listable, serialisable without a database); config-declared query tools."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pymongo.database import Database

from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.registry import RegistryError, ToolRegistry, default_registry
from qdash.copilot.tools.spec import ToolContext, ToolSpec, tool
from qdash.settings import ConfigError, Settings, load_settings
from tests.support.turn_tools import one_turn

from . import fakes
from .test_schema import CUSTOM


def _settings(tmp_path: Path, custom: dict[str, Any]) -> Settings:
    return load_settings(database={"data_dir": str(tmp_path), "mongo_uri": None}, tools={"custom": custom})


def test_specs_list_and_serialise_without_a_database(settings: Settings) -> None:
    registry = default_registry(settings)
    assert registry.names[:5] == [
        "get_qubit_params", "get_latest_task_result", "get_task_history", "get_parameter_timeseries",
        "execute_python_analysis",
    ]  # fmt: skip
    assert len(registry) == 19 and registry.names[-1] == "ask_user"  # the eighteen, then ask_user
    tools = json.loads(registry.to_json())
    assert [t["name"] for t in tools] == registry.names


async def test_one_spec_can_run_with_another_implementation(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    def variant(ctx: ToolContext, args: Any) -> dict[str, Any]:
        return {"variant": "B", "qid": args.qid}

    registry = ToolRegistry([replace(s, impl=variant) if s.name == "echo" else s for s in fakes.SPECS])
    service = CopilotDataService(ToolContext(mongo_db, "p", "u", settings), registry=registry)
    echo = one_turn(service)["echo"]
    assert json.loads((await echo({"qid": "3", "last_n": 1})).model_text) == {"variant": "B", "qid": "3"}
    assert next(t for t in service.tools() if t.name == "echo").parameters == registry.parameters("echo")


def test_names_must_be_unique_and_valid() -> None:
    with pytest.raises(RegistryError, match="declared twice"):
        ToolRegistry([fakes.SPECS[0], fakes.SPECS[0]])
    with pytest.raises(RegistryError, match="must match"):
        ToolRegistry([ToolSpec("bad name", "d", fakes.EchoArgs, "l", fakes.echo)])


def test_declaration_takes_name_description_and_args_model_from_the_function() -> None:
    @tool(label="Greeting", stored=True)
    def greet(ctx: ToolContext, args: fakes.EchoArgs) -> dict[str, Any]:
        """Greets one qubit
        by its id.

        Why: this paragraph is for people, not the model.
        """
        return {"hello": args.qid}

    assert (greet.name, greet.description) == ("greet", "Greets one qubit by its id.")
    assert greet.args_model is fakes.EchoArgs
    assert (greet.label, greet.stored, greet.rate_limited) == ("Greeting", True, False)
    assert greet(None, fakes.EchoArgs(qid="3")) == {"hello": "3"}  # type: ignore[arg-type]


def test_config_tools_join_the_registry(tmp_path: Path) -> None:
    settings = _settings(tmp_path, CUSTOM)
    registry = default_registry(settings)
    assert registry.names[-3:] == ["get_t1_runs", "get_qubit_doc", "ask_user"]  # config tools, then ask_user
    schema = registry.parameters("get_t1_runs")
    assert schema["required"] == ["qid", "last_n"]
    assert schema["properties"]["last_n"]["type"] == ["integer", "null"]


def _seed(db: Database[dict[str, Any]]) -> None:
    import datetime as dt

    base = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    for project in ("proj-a", "proj-b"):
        db.task_result_history.insert_many(
            [
                {"project_id": project, "qid": "16", "name": "CheckT1", "status": "completed",
                 "start_at": base + dt.timedelta(hours=i), "execution_id": f"{project}-{i}"}
                for i in range(8)
            ]
        )  # fmt: skip
        db.qubit.insert_one({"project_id": project, "chip_id": "64Qv3", "qid": "16", "status": project})


async def test_config_query_tool_is_project_scoped(
    mongo_db: Database[dict[str, Any]], tmp_path: Path
) -> None:
    _seed(mongo_db)
    settings = _settings(tmp_path, CUSTOM)
    service = CopilotDataService(ToolContext(mongo_db, "proj-a", "u", settings))
    tools = one_turn(service)
    body = json.loads((await tools["get_t1_runs"]({"qid": "Q16", "last_n": None})).model_text)
    assert body["count"] == 5  # Q16 normalised to "16"; default last_n 5
    cols = body["rows"]["cols"]
    assert sorted(cols) == ["execution_id", "start_at", "status"]
    ids = [row[cols.index("execution_id")] for row in body["rows"]["rows"]]
    assert ids == [f"proj-a-{i}" for i in (7, 6, 5, 4, 3)]
    bad = await tools["get_t1_runs"]({"qid": "banana", "last_n": 1})
    assert bad.is_error and "qid" in json.loads(bad.model_text)["error"]
    doc = json.loads((await tools["get_qubit_doc"]({"qid": "16", "chip_id": None})).model_text)
    assert doc == {"chip_id": "64Qv3", "qid": "16", "status": "proj-a"}
    missing = await tools["get_qubit_doc"]({"qid": "99", "chip_id": "64Qv3"})
    assert missing.is_error
    assert json.loads(missing.model_text)["error"] == "No document found (qid=99, chip_id=64Qv3)"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"signature": "(qid::Txt)==>(::[Object])"}, "tools.custom.t.signature: at column 7 (group 1)"),
        ({"signature": "(qid::Text)==>(::Text)"}, "returns (::Object) or (::[Object])"),
        (
            {"query": {"collection": "qubit", "filter": {"qid": "$qid", "project_id": "x"}}},
            "project_id comes",
        ),
        ({"query": {"collection": "qubit", "filter": {"qid": {"$where": "1"}}}}, "operator $where"),
        ({"query": {"collection": "qubit", "filter": {"qid": "$qidd"}}}, "'$qidd' is not a parameter"),
        ({"query": {"collection": "qubit", "filter": {}}}, "parameter 'qid' is not used"),
        ({"query": {"collection": "qubit", "filter": {"qid": "$qid"}, "limit": 500}}, "must be 1-100"),
        (
            {"query": {"collection": "qubit", "filter": {"qid": "$qid"}, "limit": "$qid"}},
            "'$<Int parameter>'",
        ),
    ],
)
def test_bad_config_tools_are_config_errors(tmp_path: Path, change: dict[str, Any], words: str) -> None:
    entry = {
        "signature": "(qid::Text)==>(::[Object])",
        "description": "d",
        "query": {"collection": "qubit", "filter": {"qid": "$qid"}},
        **change,
    }
    with pytest.raises(ConfigError, match=None) as info:
        default_registry(_settings(tmp_path, {"t": entry}))
    assert words in str(info.value)


def test_config_tool_cannot_shadow_a_builtin(tmp_path: Path) -> None:
    entry = {"signature": "(qid::Text)==>(::Object)", "description": "d",
             "query": {"collection": "qubit", "filter": {"qid": "$qid"}}}  # fmt: skip
    with pytest.raises(RegistryError, match="taken by a built-in"):
        default_registry(_settings(tmp_path, {"get_qubit_params": entry}))


def test_the_default_registry_is_built_once_per_tool_configuration(tmp_path: Path) -> None:
    plain = default_registry(_settings(tmp_path, {}))
    assert default_registry(_settings(tmp_path / "other", {})) is plain  # same tools: shared
    custom = default_registry(_settings(tmp_path, CUSTOM))
    assert custom is not plain and "get_t1_runs" in custom and "get_t1_runs" not in plain
    assert default_registry(_settings(tmp_path, CUSTOM)) is custom


def test_investigation_tools_are_offered_only_when_enabled(settings: Settings) -> None:
    offered = settings.model_copy(update={"tools": settings.tools.model_copy(update={"investigation": True})})
    assert "get_degradation_report" not in default_registry(settings)
    registry = default_registry(offered)
    assert registry.names[-3:] == ["get_degradation_report", "suggest_recalibration", "ask_user"]
    assert len(registry) == 21
