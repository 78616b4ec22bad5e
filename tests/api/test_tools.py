"""Direct tool calls: the catalogue as the model sees it, and the caller's project on every query."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
from pymongo.database import Database

from tests.api.api_helpers import auth


def _seed_qubit(db: Database[dict[str, Any]], project: str, t1: float) -> None:
    now = datetime(2026, 2, 27, 1, 42, tzinfo=UTC)
    db["chip"].insert_one(
        {
            "project_id": project,
            "chip_id": "64Qv3",
            "username": "x",
            "size": 64,
            "topology_id": "square-lattice-mux-64",
            "installed_at": now,
        }
    )
    db["qubit"].insert_one(
        {
            "project_id": project,
            "username": "x",
            "chip_id": "64Qv3",
            "qid": "16",
            "status": "completed",
            "data": {
                "t1": {
                    "parameter_name": "t1",
                    "qid_role": "",
                    "value": t1,
                    "value_type": "float",
                    "error": 0.0,
                    "unit": "μs",
                    "description": "T1",
                    "calibrated_at": now,
                    "execution_id": "20260227-001",
                    "task_id": "t-1",
                }
            },
        }
    )


async def test_list_tools(client: httpx.AsyncClient) -> None:
    response = await client.get("/copilot/tools", headers=auth())
    assert response.status_code == 200
    tools = response.json()["tools"]
    assert len(tools) >= 17
    assert tools[0]["name"] == "get_qubit_params" and tools[0]["label"] == "Fetching qubit parameters"
    assert tools[0]["parameters"]["additionalProperties"] is False
    assert (await client.get("/copilot/tools")).status_code == 401


async def test_call_is_scoped_to_the_callers_project(
    client: httpx.AsyncClient, db: Database[dict[str, Any]]
) -> None:
    _seed_qubit(db, "proj-b", 45.21)
    args = {"chip_id": "64Qv3", "qid": "Q16"}
    own = await client.post("/copilot/tools/get_qubit_params", json=args, headers=auth("bob"))
    assert own.status_code == 200
    body = own.json()
    assert body["is_error"] is False
    assert body["output"]["params"]["t1"]["value"] == 45.21
    other = await client.post("/copilot/tools/get_qubit_params", json=args, headers=auth("alice", "proj-a"))
    assert other.status_code == 200
    assert other.json()["is_error"] is True
    assert "45.21" not in other.text
    foreign = await client.post("/copilot/tools/get_qubit_params", json=args, headers=auth("bob", "proj-a"))
    assert foreign.status_code == 403


async def test_unknown_tool_and_bad_arguments(client: httpx.AsyncClient) -> None:
    unknown = await client.post("/copilot/tools/drop_database", json={}, headers=auth())
    assert unknown.status_code == 404
    assert unknown.json()["detail"].startswith(
        "Unknown tool: drop_database. Available tools: get_qubit_params"
    )
    bad = await client.post("/copilot/tools/get_qubit_params", json={"qid": 5.5, "x": 1}, headers=auth())
    assert bad.status_code == 200
    assert bad.json()["is_error"] is True
    assert bad.json()["output"]["error"].startswith("Invalid arguments for get_qubit_params")
